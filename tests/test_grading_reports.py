"""Reports for the instructor and the student: the table, the CSV for a gradebook, JSON lines, feedback files."""
import csv
import json

import nbformat
import pytest

from _grading_support import EXERCISES, INSTRUCTOR, MATERIAL
from labkit.grading import report
from labkit.grading.__main__ import main
from labkit.grading.identity import make_id


def _result(**kw):
    base = {"student": "ann", "student_id": "ann", "path": "class/ann.ipynb", "exercise": "27.4", "status": "graded",
            "reason": None, "score": 3.0, "max_score": 5.0, "error": None, "flags": [], "seconds": 1.0,
            "parts": [{"part": "27.4(a)", "verdict": "pass", "points": 3.0, "max_points": 3.0, "hints": [], "items": []},
                      {"part": "27.4(b)", "verdict": "fail", "points": 0.0, "max_points": 2.0,
                       "hints": ["your answer cell raised ValueError: <b>bad</b>\n  total 5/5"], "items": []}],
            "written": []}
    base.update(kw)
    return base


def test_clean_removes_escapes_controls_and_fake_lines():
    assert report.clean("\x1b[31mred\x1b[0m\nnext\rline\t\x07\u202eend") == "red next line end"
    assert report.clean("x" * 2000, limit=10) == "xxxxxxx..."
    assert report.clean(None) == ""


@pytest.mark.parametrize("text", ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\t=x", "\r=x"])
def test_csv_cells_never_start_a_formula(text):
    cell = report.csv_cell(text)
    assert cell.startswith("'") and "\t" not in cell and "\r" not in cell


def test_csv_has_one_row_per_student_and_empty_scores_when_not_gradable(tmp_path):
    broken = _result(student="=bob", student_id="=bob", status="not gradable", error="bob.ipynb is a FIFO", score=None,
                     parts=[])
    path = tmp_path / "grades.csv"
    report.write_csv([_result(), broken], path, exercises=[EXERCISES["27.4"]])
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == report.CSV_HEAD + ["27.4(a)", "27.4(b)", "27.4(a) written", "27.4(b) written",
                                               "written_score", "written_max", "manual_pending", "total",
                                               "total_max", "percent"] + report.CSV_TAIL
    assert (rows[0]["score"], rows[0]["max_score"], rows[0]["27.4(a)"], rows[0]["27.4(b)"]) == ("3", "5", "3", "0")
    assert rows[1]["student"] == "'=bob" and rows[1]["status"] == "not gradable"
    assert rows[1]["score"] == "" and rows[1]["27.4(a)"] == "" and rows[1]["max_score"] == "5"
    assert rows[1]["reason"] == "bob.ipynb is a FIFO"


def test_the_table_shows_one_total_per_student_and_no_score_when_not_gradable():
    text = report.format_table([_result(), _result(student="cy", status="not gradable", error="cy: broken", parts=[],
                                                         score=None)])
    assert text.count("  total  3/5") == 1 and "total  5/5" not in text.replace("total 5/5", "")
    assert "total  -/5 (not gradable: no score)" in text
    assert [line for line in text.splitlines() if line.startswith("  total")] == ["  total  3/5",
                                                                                "  total  -/5 (not gradable: no score)"]


def test_feedback_files_escape_what_students_wrote(tmp_path):
    writer = report.FeedbackWriter(tmp_path)
    first = writer.add(_result(student="../../etc/passwd", submission_id=make_id("../../etc/passwd")))
    second = writer.add(_result(student="../../etc/passwd", submission_id=make_id("../../etc/passwd") + "+x"))
    assert first != second and "/" not in first and not first.startswith(".")
    html = (tmp_path / f"{first}.html").read_text()
    assert "<b>bad</b>" not in html and "&lt;b&gt;bad&lt;/b&gt;" in html
    md = (tmp_path / f"{first}.md").read_text()
    assert "| 27.4(b) | fail | 0 / 2 |" in md and "&lt;b>bad&lt;/b>" in md and "3 / 5 points checked" in md
    assert "\\" not in md                                     # nothing escaped with backslashes
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"{first}.md", f"{first}.html", f"{second}.md",
                                                                f"{second}.html"])


@pytest.mark.sandbox
def test_the_command_line_writes_every_report_as_it_goes(tmp_path, capfd):
    folder = tmp_path / "class"
    folder.mkdir()
    nbformat.write(EXERCISES["27.4"].notebook(solution=True), folder / "ann.ipynb")
    nbformat.write(EXERCISES["27.4"].notebook(), folder / "ben.ipynb")
    (folder / "cy.ipynb").write_text("{not json")
    out = tmp_path / "out"
    out.mkdir()
    status = main([str(folder), "--csv", str(out / "g.csv"), "--jsonl", str(out / "g.jsonl"), "--feedback",
                   str(out / "feedback"), "--workers", "2", "--instructor", str(INSTRUCTOR)])
    stdout, stderr = capfd.readouterr()
    assert status == 0                          # cy could not be graded, and says why: not a grader failure
    # no per-kernel warnings, no progress bar off a terminal: one line per notebook as it finishes
    # (and, where the machine has no control groups for the grader, one line saying so)
    lines = [line for line in stderr.splitlines() if not line.startswith("labkit-grade: note: no control group")]
    assert len(lines) == 3 and all(line.startswith("labkit-grade: [") for line in lines), lines
    assert any("] ann 27.4 5/5" in line for line in lines) and any("cy" in l and "not gradable" in l for l in lines)
    assert "total  5/5" in stdout and "total  0/5" in stdout and "total  -/5" in stdout
    with open(out / "g.csv", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert {k: (v["status"], v["score"]) for k, v in rows.items()} == {
        "ann": ("graded", "5"), "ben": ("graded", "0"), "cy": ("not gradable", "")}
    lines = [json.loads(line) for line in (out / "g.jsonl").read_text().splitlines()]
    assert sorted(r["student"] for r in lines) == ["ann", "ben", "cy"]
    by_student = {r["student"]: r for r in lines}
    assert (by_student["cy"]["score"], by_student["cy"]["max_score"]) == (None, 5)   # null: no score, not 0
    assert (by_student["ben"]["score"], by_student["ann"]["score"]) == (0, 5)
    feedback = sorted(p.name for p in (out / "feedback").iterdir())
    assert feedback == ["ann.html", "ann.md", "ben.html", "ben.md", "cy.html", "cy.md"]
    # the journal holds every row, in the output folder (that of the CSV)
    journal = [json.loads(line) for line in (out / "labkit-grade-journal.jsonl").read_text().splitlines()]
    assert journal[0]["journal"] == 1 and sorted(e["submission_id"] for e in journal[1:]) == ["ann", "ben", "cy"]
    assert "not graded" in (out / "feedback" / "cy.md").read_text()
    assert "hint" not in (out / "feedback" / "ann.md").read_text().lower()
    assert (out / "feedback" / "ben.md").read_text().count("- ") >= 2          # the blank gets hints


@pytest.mark.sandbox
def test_a_not_gradable_notebook_has_a_null_score_in_json_and_python(tmp_path, capsys):
    """No kernel runs: the notebook is refused (another exercise than the one asked for)."""
    from labkit.grading.grader import grade_notebook
    path = tmp_path / "ann.ipynb"
    nbformat.write(EXERCISES["27.3"].notebook(solution=True), path)
    status = main([str(path), "--exercise", "27.2", "--json", "--jsonl", str(tmp_path / "g.jsonl"),
                   "--instructor", str(INSTRUCTOR)])
    assert status == 0
    printed = json.loads(capsys.readouterr().out)
    (line,) = [json.loads(x) for x in (tmp_path / "g.jsonl").read_text().splitlines()]
    seven = sum(MATERIAL.spec_for(p).max_points for p in EXERCISES["27.2"].parts)
    for row in (printed, line):
        assert row["status"] == "not gradable" and row["score"] is None and row["max_score"] == seven == 7
    assert '"score": null' in (tmp_path / "g.jsonl").read_text()
    python = grade_notebook(path, exercise="27.2", instructor=INSTRUCTOR)
    assert python["score"] is None and python["max_score"] == 7
    unknown = tmp_path / "plain.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), unknown)
    r = grade_notebook(unknown, instructor=INSTRUCTOR)
    assert r["score"] is None and r["max_score"] is None          # no exercise, so no maximum either
    assert "total  -/- (not gradable: no score)" in report.format_table([r])


def test_version_and_usage_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and "labkit-grade (labkit " in capsys.readouterr().out
    assert main(["x.ipynb", "--budget", "0", "--instructor", str(INSTRUCTOR)]) == 2
    assert "--budget must be positive" in capsys.readouterr().err
