"""The course around the grader, checked as an instructor uses it: class folders laid out as Canvas and
Moodle download them, class lists as they export them, gradebooks they import, hand grading with
manual.csv, feedback a student reads, messages for the common type mistakes.

Two command-line runs (module fixtures) grade the class folders: a Canvas course of two assignments
(27.4 and 27.2, each downloaded into a folder of its own: worked solutions, a late one, a blank, a
notebook of the wrong exercise, a broken file) and a Moodle download of one assignment (27.4). The
import formats' columns are written out here, from the LMSs' documentation and importers:

* Canvas gradebook import: ``Student, ID, SIS User ID, SIS Login ID, Section``, then assignment columns
  ``Title (assignment id)``; a second row starting ``Points Possible``; students found by ID.
* Moodle gradebook import: one identifier column mapped to username, ID number or email, grade and
  feedback columns.
* Moodle grading worksheet: ``Identifier`` ("Participant N"), ``Grade``, ``Last modified (grade)``
  (the three its importer requires), ``Feedback comments``.
"""
import contextlib
import csv
import io
import json
import re
import shutil

import numpy as np
import pytest

from _grading_support import EXERCISES, INSTRUCTOR, MATERIAL, ROOT
from labkit.grading import feedback, lms, manual, nbgrader_export, render, roster
from labkit.grading.__main__ import main as _main
from labkit.grading.checking import as_number, probe_results
from labkit.grading.reporter import collect

CANVAS_IMPORT = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_IMPORT = ["Full name", "Email address", "ID number", "Username"]
MOODLE_WORKSHEET = ["Identifier", "Full name", "Email address", "Grade", "Maximum Grade", "Last modified (grade)",
                    "Feedback comments"]


def main(argv):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = _main([*argv, "--instructor", str(INSTRUCTOR)])
    return status, out.getvalue(), err.getvalue()


def _copy(kind, number, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / kind / EXERCISES[number].filename, target)


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def canvas_import(path):
    """Read a gradebook the way Canvas's importer does: the header must start Student, ID, (SIS User
    ID, SIS Login ID,) and its last student column must be Section; an assignment column is
    ``Title (id)``; a row starting "Points Possible" gives the maxima; students are keyed by ID."""
    rows = _read_csv(path)
    header = rows[0]
    assert re.match("Student", header[0]) and re.match("ID", header[1])
    columns = 5 if re.match(r"SIS\s+User\s+ID", header[2]) and re.match(r"SIS\s+Login\s+ID", header[3]) else 3
    assert re.search("Section", header[columns - 1])
    assignments = [re.match(r"^(.*)\s\((\d+)\)$", h) for h in header[columns:]]
    titles = [(m.group(1), m.group(2)) if m else (h, None) for m, h in zip(assignments, header[columns:])]
    maxima, students = {}, {}
    for row in rows[1:]:
        if re.search("Points Possible", row[0]):
            maxima = dict(zip(titles, row[columns:]))
            continue
        students[row[1]] = dict(zip(titles, row[columns:]))
    return titles, maxima, students


# ------------------------------------------------------------ the class folders


CANVAS_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,Exercise 27.4: Kuhn poker by hand (27004),\
Exercise 27.2 (27002),Current Score,Final Score
    Points Possible,,,,,9,11,(read only),(read only)
"Smith, Jane",12346,S001,jsmith,Section A,,,,
"Doe, John",12347,S002,jdoe,Section A,,,,
"Roe, Ann",12348,S003,aroe,Section B,,,,
"Lee, Ken",12349,S004,klee,Section B,,,,
"Nobody, Nemo",12350,S005,nnobody,Section B,,,,
"Student, Test",99999,,,Section A,,,,
"""

MOODLE_WORKSHEET_ROSTER = """Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,\
Last modified (submission),Last modified (grade),Feedback comments
Participant 101,Jane Smith,jane@uni.example,Submitted for grading,,9.00,Yes,"Monday, 1 December 2026, 9:00 AM",-,
Participant 102,John Doe,john@uni.example,Submitted for grading,,9.00,Yes,"Monday, 1 December 2026, 9:00 AM",-,
Participant 103,Ken Lee,ken@uni.example,Submitted for grading,,9.00,Yes,"Monday, 1 December 2026, 9:00 AM",-,
"""


@pytest.fixture(scope="module")
def canvas(tmp_path_factory):
    """Two Canvas assignments, each downloaded into a folder of its own, graded in one run."""
    base = tmp_path_factory.mktemp("canvas")
    kuhn, rps = base / "course" / "27.4 Kuhn poker", base / "course" / "27.2 biased RPS"
    _copy("solutions", "27.4", kuhn / "smithjane_late_12346_700001_27_4_kuhn_poker_by_hand.ipynb")
    _copy("exercises", "27.4", kuhn / "doejohn_12347_700002_27_4_kuhn_poker_by_hand.ipynb")
    _copy("solutions", "27.3", kuhn / "roeann_12348_700003_27_3_mirror_descent_orbits.ipynb")     # wrong one
    (kuhn / "leeken_12349_700004_27_4_kuhn_poker_by_hand.ipynb").write_text('{"cells": [')        # broken
    _copy("solutions", "27.2", rps / "smithjane_12346_700011_27_2_biased_rock_paper_scissors.ipynb")
    (base / "roster.csv").write_text(CANVAS_ROSTER)
    out = base / "out"
    out.mkdir()
    status, stdout, stderr = main([str(base / "course"), "--roster", str(base / "roster.csv"), "--csv",
                                   str(out / "grades.csv"), "--gradebook", "canvas", str(out / "canvas.csv"),
                                   "--gradebook", "generic", str(out / "generic.csv"), "--review",
                                   str(out / "review"), "--feedback", str(out / "feedback"), "--jsonl",
                                   str(out / "grades.jsonl"), "--workers", "2", "--timeout", "120"])
    results = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    return {"base": base, "out": out, "status": status, "stdout": stdout, "stderr": stderr, "results": results}


@pytest.fixture(scope="module")
def moodle(tmp_path_factory):
    """One Moodle assignment (27.4) as "Download all submissions" gives it: a folder per student."""
    base = tmp_path_factory.mktemp("moodle")
    download = base / "download"
    _copy("solutions", "27.4", download / "Jane Smith_101_assignsubmission_file_" / "27_4_kuhn_poker_by_hand.ipynb")
    _copy("exercises", "27.4", download / "John Doe_102_assignsubmission_file_" / "my notebook.ipynb")
    folder = download / "Ken Lee_103_assignsubmission_file_"
    folder.mkdir(parents=True)
    (folder / "27_4_kuhn_poker_by_hand.ipynb").write_bytes(b"\xff\xfe not a notebook")
    (base / "worksheet.csv").write_text(MOODLE_WORKSHEET_ROSTER)
    jane = "Jane Smith_101_assignsubmission_file_"          # hand-graded already: a re-run with --manual
    (base / "manual.csv").write_text(f"student_id,part,points,comment\n{jane},27.4(a) written,2,clear\n"
                                     f"{jane},27.4(b) written,1.5,the last step needs a line\n")
    out = base / "out"
    out.mkdir()
    status, stdout, stderr = main([str(download), "--roster", str(base / "worksheet.csv"), "--csv",
                                   str(out / "grades.csv"), "--gradebook", "moodle", str(out / "moodle.csv"),
                                   "--gradebook", "moodle-worksheet", str(out / "worksheet.csv"), "--workers", "2",
                                   "--manual", str(base / "manual.csv"), "--feedback", str(out / "feedback"),
                                   "--timeout", "120"])
    return {"base": base, "out": out, "status": status, "stdout": stdout, "stderr": stderr}


def test_the_canvas_course_grades_with_exit_status_zero_and_a_line_per_notebook(canvas):
    assert canvas["status"] == 0, canvas["stderr"]
    lines = [line for line in canvas["stderr"].splitlines() if re.match(r"labkit-grade: \[\d+/5\]", line)]
    assert len(lines) == 5
    assert any("smithjane_late_12346" in line and "27.4 5/5" in line for line in lines)
    assert any("leeken" in line and "not gradable" in line for line in lines)


def test_canvas_gradebook_imports_with_the_existing_assignments(canvas):
    rows = _read_csv(canvas["out"] / "canvas.csv")
    assert rows[0] == CANVAS_IMPORT + ["Exercise 27.2 (27002)", "Exercise 27.4: Kuhn poker by hand (27004)"]
    titles, maxima, students = canvas_import(canvas["out"] / "canvas.csv")
    assert [t[1] for t in titles] == ["27002", "27004"]        # Canvas fills these, it creates nothing new
    rps, kuhn = titles
    assert (maxima[kuhn], maxima[rps]) == ("9", "11")           # checked points and written points
    assert set(students) == {"12346", "12347", "12348", "12349", "12350"}   # the test student is not a student
    assert students["12346"] == {kuhn: "5", rps: "7"}           # solutions: all checked points, written to come
    assert students["12347"][kuhn] == "0"                        # the blank
    assert students["12348"][kuhn] == ""                         # 27.3 handed in for 27.4: nothing there
    assert students["12349"][kuhn] == ""                         # broken: no grade, not a 0
    assert students["12350"] == {kuhn: "", rps: ""}              # handed in nothing
    smith = next(r for r in rows if r[1] == "12346")
    assert smith[:5] == ["Smith, Jane", "12346", "S001", "jsmith", "Section A"]


def test_a_notebook_of_the_wrong_exercise_earns_nothing_for_the_assignment(canvas):
    wrong = next(r for r in canvas["results"] if "roeann" in r["path"])
    assert wrong["exercise"] == "27.4" and wrong["score"] is None and wrong["status"] == "not gradable"
    assert "exercise 27.3" in wrong["error"] and "handed in for exercise 27.4" in wrong["error"]
    with open(canvas["out"] / "grades.csv", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert rows["roeann_12348_700003_27_3_mirror_descent_orbits"]["score"] == ""


def test_generic_gradebook_has_one_column_per_exercise_and_percents(canvas):
    with open(canvas["out"] / "generic.csv", newline="") as f:
        rows = {row["id"]: row for row in csv.DictReader(f)}
    jane = rows["12346"]
    assert (jane["27.4 points"], jane["27.4 max"], jane["27.2 points"], jane["27.2 max"]) == ("5", "9", "7", "11")
    assert jane["27.4 percent"] == f"{100 * 5 / 9:.1f}" and jane["percent"] == f"{100 * 12 / 20:.1f}"
    assert rows["12348"]["27.4 points"] == "" and rows["12348"]["27.4 max"] == "9"


def test_review_pages_show_the_written_answers_side_by_side(canvas):
    review = canvas["out"] / "review"
    assert sorted(p.name for p in review.iterdir()) == ["27_2_biased_rock_paper_scissors.html",
                                                      "27_4_kuhn_poker_by_hand.html", "manual.csv"]
    page = (review / "27_4_kuhn_poker_by_hand.html").read_text()
    assert page.count("<style>") == 1 and "<script" not in page
    assert page.count('class="card') == 4                       # 2 graded notebooks x 2 written parts
    assert "<math" in page and "Left blank." in page             # the solution's math rendered, the blank shown
    with open(review / "manual.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:4] == manual.COLUMNS
    kuhn = [r for r in rows if r["exercise"] == "27.4"]
    assert {(r["student_id"].split("_")[0], r["part"], r["points"]) for r in kuhn} == {
        ("smithjane", "27.4(a) written", ""), ("smithjane", "27.4(b) written", ""),
        ("doejohn", "27.4(a) written", "0"), ("doejohn", "27.4(b) written", "0")}


def test_merge_adds_hand_graded_points_and_totals_agree_with_nbgrader(canvas, tmp_path):
    review = canvas["out"] / "review"
    with open(review / "manual.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if row["answered"] == "yes":
            row["points"], row["comment"] = row["max_points"], "complete argument"
    filled = tmp_path / "manual.csv"
    with open(filled, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    status = _main(["merge", str(canvas["out"] / "grades.csv"), str(filled), "-o", str(tmp_path / "merged.csv"),
                    "--instructor", str(INSTRUCTOR), "--roster", str(canvas["base"] / "roster.csv"),
                    "--gradebook", "canvas", str(tmp_path / "canvas.csv")])
    assert status == 0
    with open(tmp_path / "merged.csv", newline="") as f:
        merged = {row["student_id"]: row for row in csv.DictReader(f)}
    jane = merged["smithjane_late_12346_700001_27_4_kuhn_poker_by_hand"]
    for number, row in (("27.4", jane), ("27.2", merged["smithjane_12346_700011_27_2_biased_rock_paper_scissors"])):
        nb = nbgrader_export.assignment_notebook(EXERCISES[number], MATERIAL)
        nbgrader_max = sum(c.metadata["nbgrader"].get("points", 0) for c in nb.cells
                           if c.metadata.get("nbgrader", {}).get("grade"))
        assert float(row["total_max"]) == nbgrader_max
        assert float(row["total"]) == nbgrader_max and row["manual_pending"] == "0"
    assert (jane["27.4(a) written"], jane["written_score"], jane["total"], jane["percent"]) == ("2", "4", "9", "100.0")
    john = merged["doejohn_12347_700002_27_4_kuhn_poker_by_hand"]
    assert (john["total"], john["total_max"]) == ("0", "9")
    _, _, students = canvas_import(tmp_path / "canvas.csv")
    assert list(students["12346"].values()) == ["11", "9"]
    assert _main(["merge", str(canvas["out"] / "grades.csv"), str(filled), "-o", str(tmp_path / "merged.csv"),
                  "--instructor", str(INSTRUCTOR)]) == 2              # never overwritten


def test_moodle_download_gives_both_moodle_imports(moodle):
    assert moodle["status"] == 0, moodle["stderr"]
    rows = _read_csv(moodle["out"] / "moodle.csv")
    item = "Exercise 27.4: Kuhn poker by hand"
    assert rows[0] == MOODLE_IMPORT + [item, f"{item} (feedback)"]
    by_email = {r[1]: r for r in rows[1:]}
    assert by_email["jane@uni.example"][:1] + by_email["jane@uni.example"][4:5] == ["Jane Smith", "8.5"]
    assert "3.5/4 for the written parts" in by_email["jane@uni.example"][5]
    assert by_email["john@uni.example"][4] == "0" and by_email["ken@uni.example"][4] == ""
    assert "Not graded" in by_email["ken@uni.example"][5] and "UTF-8" in by_email["ken@uni.example"][5]
    sheet = _read_csv(moodle["out"] / "worksheet.csv")
    assert sheet[0] == MOODLE_WORKSHEET
    assert {r[0]: r[3] for r in sheet[1:]} == {"Participant 101": "8.5", "Participant 102": "0", "Participant 103": ""}
    assert all(r[4] == "9" and re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", r[5]) for r in sheet[1:])


def test_a_rerun_with_manual_puts_the_hand_graded_points_everywhere(moodle):
    with open(moodle["out"] / "grades.csv", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    jane = rows["Jane Smith_101_assignsubmission_file_"]
    assert (jane["score"], jane["27.4(b) written"], jane["total"], jane["total_max"]) == ("5", "1.5", "8.5", "9")
    assert rows["John Doe_102_assignsubmission_file_"]["manual_pending"] == "2"
    # the feedback file is named by the submission: the student's folder and the notebook
    assert jane["submission_id"].startswith("Jane Smith_101_assignsubmission_file_+")
    page = (moodle["out"] / "feedback" / f"{jane['submission_id']}.html").read_text()
    assert "the last step needs a line" in page and "1.5 / 2" in page


# ------------------------------------------------------------ names, class lists, manual.csv (no kernel)


@pytest.mark.parametrize("name, expected", [
    ("smithjane_12346_678901_lab15_leduc_solvers.ipynb", ("smithjane", "12346", False, "lab15_leduc_solvers.ipynb")),
    ("smithjane_late_12346_678901_lab15-1.ipynb", ("smithjane", "12346", True, "lab15-1.ipynb")),
    ("oneil_mary_ann_5001_6001_27_4_kuhn_poker_by_hand.ipynb", ("oneil_mary_ann", "5001", False,
                                                              "27_4_kuhn_poker_by_hand.ipynb")),
])
def test_canvas_download_names(name, expected):
    ident = lms.canvas_name(name)
    assert (ident.login, ident.user_id, ident.late, ident.filename) == expected


def test_names_that_are_not_downloads_are_left_alone(tmp_path):
    for name in ("27_4_kuhn_poker_by_hand.ipynb", "lab15_leduc_solvers.ipynb", "jane.ipynb"):
        assert lms.canvas_name(name) is None and lms.identity(tmp_path / name, tmp_path).lms is None
    ident = lms.identity(tmp_path / "Ann_Marie Roe_77_assignsubmission_file_" / "x.ipynb", tmp_path)
    assert (ident.lms, ident.participant, ident.filename) == ("moodle", "77", "x.ipynb")
    flat = lms.identity(tmp_path / "Ann Roe_77_assignsubmission_file_x.ipynb", tmp_path)
    assert (flat.name, flat.participant, flat.filename) == ("Ann Roe", "77", "x.ipynb")


def test_lms_detection_needs_most_names_to_fit(tmp_path):
    canvas = [(tmp_path / f"a{k}_{k}00_{k}01_x.ipynb", tmp_path) for k in range(3)]
    assert lms.detect(canvas) == "canvas"
    assert lms.detect(canvas[:1] + [(tmp_path / "x.ipynb", tmp_path)] * 3) is None


def test_rosters_as_the_lms_exports_them(tmp_path):
    (tmp_path / "canvas.csv").write_text(CANVAS_ROSTER)
    r = roster.read(tmp_path / "canvas.csv")
    assert r.kind == "canvas" and len(r.people) == 5
    assert r.columns == ["Exercise 27.4: Kuhn poker by hand (27004)", "Exercise 27.2 (27002)"]
    assert r.column_for("27.4", EXERCISES) == "Exercise 27.4: Kuhn poker by hand (27004)"
    jane = r.match(lms.canvas_name("smithjane_12346_1_x.ipynb"))
    assert (jane.name, jane.sis_login_id, jane.section) == ("Jane Smith", "jsmith", "Section A")
    assert r.match(lms.Identity(), "jsmith").id == "12346"              # by login, from a plain folder name
    (tmp_path / "moodle.csv").write_text("First name;Surname;ID number;Email address;Assignment: Lab 15 (Real)\n"
                                         "Jane;Smith;S1;jane@uni.example;\n")
    m = roster.read(tmp_path / "moodle.csv")
    assert m.kind == "moodle" and m.people[0].name == "Jane Smith" and m.column_for("L15", EXERCISES)
    (tmp_path / "generic.csv").write_text("\ufeffName,Email\nJane Smith,jane@uni.example\n")
    assert roster.read(tmp_path / "generic.csv").match(lms.Identity(), "jane").name == "Jane Smith"
    (tmp_path / "bad.csv").write_text("foo,bar\n1,2\n")
    with pytest.raises(roster.RosterError, match="expected a Canvas or Moodle export"):
        roster.read(tmp_path / "bad.csv")


def test_a_bad_roster_stops_the_run_before_grading(tmp_path):
    (tmp_path / "bad.csv").write_text("foo,bar\n1,2\n")
    _copy("exercises", "27.4", tmp_path / "class" / "a.ipynb")
    status, _, err = main([str(tmp_path / "class"), "--roster", str(tmp_path / "bad.csv")])
    assert status == 2 and "name column" in err


@pytest.mark.parametrize("row, message", [
    ("a,27.4(c) written,1,", "unknown written part"),
    ("a,27.4(a) written,three,", "not a number"),
    ("a,27.4(a) written,2.5,", "between 0 and 2"),
    ("a,27.4(a) written,-1,", "between 0 and 2"),
    ("a,27.4(a) written,1,\na,27.4(a) written,2,", "already given on line 2"),
])
def test_manual_csv_errors_name_the_line(tmp_path, row, message):
    path = tmp_path / "manual.csv"
    path.write_text("student_id,part,points,comment\n" + row + "\n")
    with pytest.raises(manual.ManualError, match=re.escape(message)):
        manual.read_marks(path, manual.maxima_of([EXERCISES["27.4"]]))


def test_manual_points_change_the_totals_not_the_checked_score():
    result = {"student": "a", "student_id": "a", "status": "graded", "error": None, "score": 3.0, "max_score": 5.0,
              "exercise": "27.4", "parts": [], "flags": [],
              "written": manual.written_entries(EXERCISES["27.4"], {"27.4(a) written": "proof"})}
    assert [(w["part"], w["answered"], w["max_points"]) for w in result["written"]] == [
        ("27.4(a) written", True, 2.0), ("27.4(b) written", False, 2.0)]
    assert manual.totals(result) == (3.0, 9.0)
    manual.apply(result, {("a", "27.4(a) written"): manual.Mark(1.5, "gap in the last step", 2)})
    assert (result["score"], result["total"], result["total_max"], result["manual_pending"]) == (3.0, 4.5, 9.0, 1)
    assert "gap in the last step" in feedback.feedback_html(result)


def test_the_manual_template_never_overwrites_a_filled_one(tmp_path):
    result = {"student": "a", "student_id": "a", "status": "graded", "error": None, "score": 0.0, "max_score": 5.0,
              "exercise": "27.4", "written": manual.written_entries(EXERCISES["27.4"], {})}
    (tmp_path / "manual.csv").write_text("mine")
    assert manual.write_template([result], tmp_path / "manual.csv").name == "manual-2.csv"
    assert (tmp_path / "manual.csv").read_text() == "mine"


def test_written_points_are_stated_in_every_exercise():
    for ex in EXERCISES.values():
        assert all(points > 0 for points in ex.written_points.values())
    assert EXERCISES["27.4"].written_points == {"27.4(a) written": 2.0, "27.4(b) written": 2.0}


# ------------------------------------------------------------ feedback


def _feedback_result():
    return {"student": "ann", "student_id": "ann", "path": "class/ann.ipynb", "exercise": "27.4", "status": "flagged",
            "reason": "same answers as bob", "score": 3.0, "max_score": 5.0, "error": None, "seconds": 1.0,
            "flags": ["same answers as bob", "the file name suggests exercise 27.3"],
            "parts": [{"part": "27.4(a)", "verdict": "pass", "points": 3.0, "max_points": 3.0, "hints": [], "items": []},
                      {"part": "27.4(b)", "verdict": "fail", "points": 0.0, "max_points": 2.0, "items": [],
                       "hints": ["betting the J, as a function: `ev_bet_jack(q)` is off in the Q branch <b>x</b>"]}],
            "code": {"27.4(b)": ["def ev_bet_jack(q):\n    return q * 2  # ```tricky``` <script>"]},
            "written": [{"part": "27.4(a) written", "answered": True, "max_points": 2.0,
                         "text": r"Betting: $\tfrac12(-2) + \tfrac12(1) = -\tfrac12$ <script>alert(1)</script>"},
                        {"part": "27.4(b) written", "answered": False, "max_points": 2.0, "text": ""}]}


def test_feedback_html_is_one_styled_page_with_code_verdicts_points_and_hints():
    page = feedback.feedback_html(_feedback_result())
    assert page.count("<style>") == 1 and "<script" not in page and "<link" not in page and "src=" not in page
    assert "<pre><code>def ev_bet_jack(q):" in page and "&lt;script&gt;" in page
    assert "monospace" in page and "<math" in page                 # code in monospace, math rendered
    assert "<code>ev_bet_jack(q)</code> is off in the Q branch &lt;b&gt;x&lt;/b&gt;" in page
    assert 'class="verdict fail">fail</span>' in page and "0 / 2 points" in page
    assert "bob" not in page                                       # no other student is named


def test_feedback_markdown_reads_as_written():
    md = feedback.feedback_markdown(_feedback_result())
    assert "\\" not in md.replace(r"\tfrac12", "")                  # no backslash escapes, TeX kept as TeX
    assert "`ev_bet_jack(q)` is off in the Q branch &lt;b>x&lt;/b>" in md
    assert "````python\ndef ev_bet_jack(q):" in md                 # a fence longer than the code's backticks
    assert "bob" not in md and "$\\tfrac12(-2)" in md


def test_student_math_and_markdown_never_run():
    html = render.markdown(r"$\text{<script>alert(1)</script>}$ $\href{javascript:alert(1)}{x}$ "
                           "<img src=x onerror=alert(1)> [a](javascript:alert(1)) ![i](http://host/p.png)")
    assert "<script" not in html and "javascript:" not in html.replace("[a](javascript:alert(1))", "")
    assert "href=" not in html and "<img" not in html and "http://host" not in html
    assert render.tex("\\frac{1}{2").startswith(("<math", '<span class="tex">'))


# ------------------------------------------------------------ type mistakes, hints


def _spec(names, probes):
    return type("Spec", (), {"names": tuple(names), "probes": probes, "timing": {}})


def test_return_type_mistakes_say_what_came_back_and_what_to_return():
    import labkit as lk
    leduc = lk.uniform_policy(lk.games.load("leduc_poker"))
    namespace = {"policy_object": lambda T: leduc, "method": lambda T: leduc.table, "printout": lambda T: leduc.table(),
                 "nothing": lambda T: None, "value": leduc.table}
    value = collect("x", namespace, _spec(namespace, {n: [(1,)] for n in namespace if n != "value"}))
    messages = {}
    for name in ("policy_object", "method", "printout"):
        with pytest.raises(Exception) as exc:
            probe_results(value, name, 1)
        messages[name] = str(exc.value)
    assert "returned a TabularPolicy" in messages["policy_object"] and "`policy.probs`" in messages["policy_object"]
    assert "returned the method `TabularPolicy.table` itself" in messages["method"] and "call it" in messages["method"]
    assert re.search(r"returned a string of \d+ characters", messages["printout"])
    assert "numbers themselves" in messages["printout"]
    assert all("output-flood" not in m and "cannot report a value of type method" not in m for m in messages.values())
    with pytest.raises(Exception, match=r"should be a number, got None \(is a `return` missing\?\)"):
        as_number(probe_results(value, "nothing", 1)[0], "nothing(T)")
    assert "`value` is the method `TabularPolicy.table` itself" in value["value"]["__error__"]
    small = lk.uniform_policy(lk.games.load("kuhn_poker"))
    assert collect("y", {"p": small}, _spec(["p"], {}))["p"]["Q|pb"] == {"pass": 0.5, "bet": 0.5}


def _ev_bet_jack(q, king=-2.0, queen_call=-2.0, queen_fold=1.0, weight=0.5):
    return weight * king + weight * (q * queen_call + (1 - q) * queen_fold)


@pytest.mark.parametrize("wrong, branch", [
    ({"king": -1.0}, "K branch"), ({"queen_call": 2.0}, "Q branch"), ({"queen_fold": 0.0}, "Q branch"),
    ({"weight": 1.0}, "probability 1/2")])
def test_27_4_b_hint_names_the_branch_that_is_wrong(wrong, branch):
    from labkit_instructor.exercises.ex27_4 import QUEEN_CALL_GRID
    value = {"ev_bet_jack": [_ev_bet_jack(q, **wrong) for (q,) in QUEEN_CALL_GRID], "call_queen_p2": 1 / 3}
    result = MATERIAL.grade_part("27.4(b)", value)
    assert result.points == 1 and len(result.hints) == 1 and branch in result.hints[0]
    other = {"K branch": "Q branch", "Q branch": "K branch", "probability 1/2": "branch"}[branch]
    assert other not in result.hints[0]


def test_5_1_hint_does_not_name_the_function_that_answers():
    from labkit_instructor.exercises import ex5_1
    import labkit as lk
    pops = [ex5_1.pure_policy(s) for s in (1, 2, 3)]
    rows = lk.games.load("kuhn_poker").infoset_player == 0
    plain = np.where(rows[:, None], sum(pops) / 3, sum(pops) / 3)
    run = {"policy": plain.tolist(), "population_1": [p.tolist() for p in pops],
           "population_2": [p.tolist() for p in pops], "meta_strategies": [[1 / 3] * 3, [1 / 3] * 3]}
    result = MATERIAL.grade_part("5.1(b)", {"double_oracle": [run, run]})
    hints = " ".join(result.hints)
    assert "averages the population's tables" in hints
    assert "mixture" not in hints.replace("a mixture of policies", "") and "TabularPolicy" not in hints


def test_a_grader_failure_is_the_only_non_zero_exit(tmp_path, monkeypatch):
    from labkit.grading import grader
    _copy("exercises", "27.4", tmp_path / "class" / "a.ipynb")

    def broken(*args, **kwargs):
        raise RuntimeError("no sandbox slot")
    monkeypatch.setattr(grader, "_run_and_grade", broken)
    status, out, err = main([str(tmp_path / "class")])
    assert status == 1 and "grader failed" in err


def test_progress_lines_say_the_score():
    from labkit.grading.course import progress_line
    r = {"student": "ann", "student_id": "ann", "exercise": "27.4", "status": "graded", "error": None, "score": 3.0,
         "max_score": 5.0, "seconds": 12.3, "written": manual.written_entries(EXERCISES["27.4"], {})}
    assert progress_line(r, 3, 12) == "[03/12] ann 27.4 3/5 (+ written 0/4, by hand) (12 s)"


def test_an_lms_download_is_one_assignment_of_one_or_several_exercises():
    from labkit.grading.intake import Intake

    def intakes(spec):
        return [Intake(f"/c/{name}", name, number) for name, number in spec]
    single = intakes([(f"s{k}_{k}00_{k}01_x.ipynb", "27.4") for k in range(1, 6)] + [("w_900_901_y.ipynb", "27.3")])
    handed = lms.assignments(single, {i.path: "/c" for i in single}, EXERCISES, "canvas")
    assert set(handed.values()) == {"27.4"}                      # the 27.3 notebook was handed in for 27.4
    assert lms.refuse_wrong_exercise(single, handed, EXERCISES) == single[-1:]
    assert single[-1].exercise == "27.4" and "earns no points there" in single[-1].error
    # an assignment that asks for two notebooks: nobody is refused for handing in both
    pair = intakes([(f"s{k}_{k}00_{k}01_a.ipynb", "27.4") for k in range(1, 5)]
                   + [(f"s{k}_{k}00_{k}02_b.ipynb", "27.5") for k in range(1, 4)] + [("s4_400_403_c.ipynb", "27.3")])
    handed = lms.assignments(pair, {i.path: "/c" for i in pair}, EXERCISES, "canvas")
    assert [handed[i.path] for i in pair] == ["27.4"] * 4 + ["27.5"] * 4      # s4's 27.3 was for the 27.5 it lacks
    assert lms.refuse_wrong_exercise(pair, handed, EXERCISES) == pair[-1:]


@pytest.mark.parametrize("extra, message", [
    (["--gradebook", "blackboard", "g.csv"], "--gradebook blackboard: unknown format; choose from canvas"),
    (["--gradebook", "canvas", "."], "is a folder; give a file name"),
    (["--gradebook", "generic", "/nonexistent-folder/g.csv"], "the folder /nonexistent-folder does not exist"),
    (["--review", str(ROOT / "README.md")], "is a file; give a folder"),
    (["--manual", "/nonexistent.csv"], "--manual /nonexistent.csv: no such file"),
    (["--roster", "/nonexistent.csv"], "--roster /nonexistent.csv: no such file"),
])
def test_course_options_refuse_bad_arguments(extra, message):
    status, _, err = main([str(ROOT / "solutions" / EXERCISES["27.4"].filename), "--no-sandbox", *extra])
    assert status == 2 and message in err and "Traceback" not in err


def test_merge_refuses_a_file_that_is_not_a_grades_csv(tmp_path):
    (tmp_path / "grades.csv").write_text("a,b\n1,2\n")
    (tmp_path / "manual.csv").write_text("student_id,part,points,comment\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = _main(["merge", str(tmp_path / "grades.csv"), str(tmp_path / "manual.csv"), "--instructor",
                        str(INSTRUCTOR)])
    assert status == 2 and "is not a grades CSV written by labkit-grade --csv" in err.getvalue()
