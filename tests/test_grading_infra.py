"""The grader as an instructor runs it on a shared machine, end to end and sandboxed.

* two graders started at once by users with different temporary folders both give full marks;
* a grader whose Python is a venv reached through a link, with its packages reached through a
  ``.pth`` file, grades (and refuses to start, saying why, when the sandbox could not read them);
* a class whose output folder holds planted links, whose students' names differ only in
  spaces, control characters or bytes that are not UTF-8, and two of whom handed in the same
  answers: nothing is written through a link, every notebook keeps its own feedback file, the
  copy is reported to the instructor alone; ``--resume`` grades only what changed;
* Ctrl-C writes the finished rows and says how to resume, and the resumed run completes them;
* a disk that fills up ends the run with a message naming the file, the journal left whole;
* one huge notebook is read by a worker while the others are graded.
"""
import contextlib
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from _grading_support import EXERCISES, INSTRUCTOR, ROOT
from labkit.grading import grader
from labkit.grading.__main__ import main as _main
from labkit.grading.identity import make_id

pytestmark = pytest.mark.slow
SOLUTION = {n: ROOT / "solutions" / EXERCISES[n].filename for n in ("27.1", "27.2", "27.4")}
BLANK = ROOT / "exercises" / EXERCISES["27.2"].filename
JOURNAL = "labkit-grade-journal.jsonl"


def main(argv):
    return _main([*argv, "--instructor", str(INSTRUCTOR)])


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **extra}


def _grader(args, **kw):
    return subprocess.Popen([sys.executable, "-m", "labkit.grading", *args, "--instructor", str(INSTRUCTOR)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, **kw)


def _journal(folder):
    lines = (Path(folder) / JOURNAL).read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.sandbox
def test_two_graders_started_together_with_different_temporary_folders_both_give_full_marks(tmp_path):
    runs = []
    for number in ("27.4", "27.1"):
        folder, tmp = tmp_path / f"class-{number}", tmp_path / f"tmp-{number}"
        folder.mkdir()
        tmp.mkdir()
        for student in ("ann", "ben"):
            shutil.copy(SOLUTION[number], folder / f"{student}.ipynb")
        runs.append(_grader([str(folder), "--json", "--workers", "2"], env=_clean_env(TMPDIR=str(tmp))))
    outputs = [proc.communicate(timeout=3600) for proc in runs]
    for (out, err), proc, full in zip(outputs, runs, (5, 6)):
        assert proc.returncode == 0, err[-3000:]
        results = json.loads(out)
        assert [(r["student"], r["score"], r["max_score"]) for r in results] == [("ann", full, full),
                                                                                ("ben", full, full)], \
            ([(r["student"], [(p["part"], p["verdict"], p["hints"]) for p in r["parts"]]) for r in results], err[-2000:])


def _venv_behind_a_link(base):
    """A venv reached through a link, whose labkit and dependencies come through a .pth file."""
    real, link, src = base / "real-venv", base / "venv", base / "src"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(real)], check=True, env=_clean_env())
    link.symlink_to(real)
    src.mkdir()
    (src / "labkit").symlink_to(ROOT / "labkit")
    import numpy
    deps = Path(numpy.__file__).resolve().parent.parent               # the test venv's site-packages
    (site,) = real.glob("lib/python*/site-packages")
    (site / "labkit_deps.pth").write_text(f"{src}\n{deps}\n")
    return link, src


@pytest.mark.sandbox
def test_a_venv_behind_a_link_with_packages_from_a_pth_file_grades(tmp_path):
    base = Path(os.path.realpath(tmp_path))
    link, src = _venv_behind_a_link(base)
    python = link / "bin" / "python"
    where = subprocess.run([str(python), "-c", "import labkit, nbclient, sys; print(labkit.__file__, sys.prefix)"],
                           capture_output=True, text=True, cwd=base, env=_clean_env(), check=True).stdout.split()
    assert where == [str(src / "labkit" / "__init__.py"), str(link)]          # the paths as the grader sees them
    shutil.copy(SOLUTION["27.2"], base / "sub.ipynb")
    done = subprocess.run([str(python), "-m", "labkit.grading", "sub.ipynb", "--instructor", str(INSTRUCTOR)],
                          capture_output=True, text=True, cwd=base, env=_clean_env(), timeout=3600)
    assert done.returncode == 0 and "total  7/7" in done.stdout, (done.stdout[-2000:], done.stderr[-2000:])
    # the same Python, with its labkit in a folder the sandbox's user may not enter: refused, and why
    if os.geteuid() == 0:
        src.chmod(0o700)
        refused = subprocess.run([str(python), "-m", "labkit.grading", "sub.ipynb", "--instructor", str(INSTRUCTOR)],
                                 capture_output=True, text=True, cwd=base, env=_clean_env(), timeout=3600)
        src.chmod(0o755)
        assert refused.returncode == 2 and "refusing to grade" in refused.stderr
        assert str(src) in refused.stderr and "cannot read" in refused.stderr and "mode 700" in refused.stderr


ODD = {"a b": "blank", "a\nb": "blank", os.fsdecode(b"caf\xe9"): "blank"}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Five notebooks (two with the same answers, three whose names only a careful reader tells
    apart), graded into an output folder with links planted where the outputs go."""
    base = tmp_path_factory.mktemp("shared")
    folder, out, victims = base / "class", base / "out", base / "victims"
    for d in (folder / "ann", folder / "bob", out / "feedback", victims):
        d.mkdir(parents=True)
    shutil.copy(SOLUTION["27.2"], folder / "ann" / "lab.ipynb")
    shutil.copy(SOLUTION["27.2"], folder / "bob" / "lab.ipynb")
    for name in ODD:
        shutil.copy(BLANK, folder / f"{name}.ipynb")
    planted = {out / "feedback" / "ann+lab.md": victims / "feedback.txt", out / "grades.csv": victims / "grades.txt",
               out / "feedback" / f"{make_id('a b')}.html": victims / "html.txt"}
    for link, victim in planted.items():
        victim.write_text("the instructor's own file\n")
        link.symlink_to(victim)
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        status = main([str(folder), "--out", str(out), "--workers", "2"])
    return {"folder": folder, "out": out, "status": status, "table": table.getvalue(), "planted": planted,
            "rows": {r["submission_id"]: r for r in csv.DictReader(open(out / "grades.csv", newline=""))},
            "journal": _journal(out)}


@pytest.mark.sandbox
def test_nothing_is_written_through_a_planted_link(graded_class):
    for link, victim in graded_class["planted"].items():
        assert victim.read_text() == "the instructor's own file\n"
        assert link.is_file() and not link.is_symlink()
    assert "Feedback: ann" in (graded_class["out"] / "feedback" / "ann+lab.md").read_text()


@pytest.mark.sandbox
def test_every_notebook_keeps_its_own_id_and_feedback_file(graded_class):
    rows, feedback = graded_class["rows"], graded_class["out"] / "feedback"
    ids = sorted(rows)
    assert ids == sorted(["ann+lab", "bob+lab", *(make_id(n) for n in ODD)])
    for i in ids:
        assert (feedback / f"{i}.md").is_file() and (feedback / f"{i}.html").is_file()
    assert sorted(p.name for p in feedback.iterdir()) == sorted(f"{i}.{ext}" for i in ids for ext in ("md", "html"))
    students = {rows[make_id(n)]["student"] for n in ODD}
    assert students == {"a b", "a\\nb", "caf\\xe9"}                  # readable, and all different
    assert "Feedback: caf\\xe9" in (feedback / f"{make_id(os.fsdecode(b'caf' + bytes([0xe9])))}.html").read_text()


@pytest.mark.sandbox
def test_copies_are_reported_to_the_instructor_only(graded_class):
    rows, out = graded_class["rows"], graded_class["out"]
    assert rows["ann+lab"]["similar_to"] == "bob+lab" and rows["bob+lab"]["similar_to"] == "ann+lab"
    assert rows["ann+lab"]["score"] == rows["bob+lab"]["score"] == "7"
    assert rows["ann+lab"]["status"] == "flagged" and "bob" not in rows["ann+lab"]["reason"]
    for mine, other in (("ann+lab", "bob"), ("bob+lab", "ann")):
        for ext in ("md", "html"):
            assert other not in (out / "feedback" / f"{mine}.{ext}").read_text()
    report = list(csv.DictReader(open(out / "labkit-grade-similarity.csv", newline="")))
    assert sorted(r["submission_id"] for r in report) == ["ann+lab", "bob+lab"]
    assert "same answers as bob+lab (instructor only)" in graded_class["table"]


@pytest.mark.sandbox
def test_resume_grades_only_what_changed(graded_class):
    folder, out = graded_class["folder"], graded_class["out"]
    before = len(graded_class["journal"])
    shutil.copy(SOLUTION["27.2"], folder / "a b.ipynb")        # a b hands in again
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        status = main([str(folder), "--out", str(out), "--workers", "2", "--resume"])
    journal = _journal(out)
    added = [e for e in journal[before:] if "submission_id" in e]
    assert status == 0 and [e["submission_id"] for e in added] == [make_id("a b")]
    rows = {r["submission_id"]: r for r in csv.DictReader(open(out / "grades.csv", newline=""))}
    assert rows[make_id("a b")]["score"] == "7" and rows["ann+lab"]["score"] == "7"
    assert len(rows) == 5 and rows[make_id("a\nb")]["score"] == "0"


@pytest.mark.sandbox
def test_ctrl_c_writes_the_finished_rows_and_says_how_to_resume(tmp_path):
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    for student in ("ann", "ben", "cy", "dee"):
        shutil.copy(SOLUTION["27.2"], folder / f"{student}.ipynb")
    proc = _grader([str(folder), "--out", str(out), "--workers", "1"])
    deadline = time.monotonic() + 3600
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / JOURNAL).exists() and sum(1 for e in _journal(out) if "submission_id" in e) >= 1:
            break
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=600)
    finished = [e["submission_id"] for e in _journal(out) if "submission_id" in e]
    assert proc.returncode == 130, stderr[-2000:]
    assert "interrupted" in stderr and "--resume" in stderr and "Traceback" not in stderr
    rows = list(csv.DictReader(open(out / "grades.csv", newline="")))
    assert 1 <= len(finished) < 4 and sorted(r["submission_id"] for r in rows) == sorted(finished)
    assert all(r["score"] == "7" for r in rows)
    resumed = _grader([str(folder), "--out", str(out), "--workers", "2", "--resume"])
    stdout, stderr = resumed.communicate(timeout=3600)
    assert resumed.returncode == 0, stderr[-2000:]
    graded = [e["submission_id"] for e in _journal(out) if "submission_id" in e]
    assert sorted(graded) == ["ann", "ben", "cy", "dee"]             # each graded once, over both runs
    assert stdout.count("total  7/7") == 4


FILL_AND_GRADE = """
set -e
mount -t tmpfs -o size=256k tmpfs "$OUT"
dd if=/dev/zero of="$OUT/filler" bs=4k count=58 2>/dev/null
set +e
"$PYTHON" -m labkit.grading "$CLASS" --out "$OUT" --workers 1 --instructor "$INSTRUCTOR" > "$SAVE/stdout" 2> "$SAVE/stderr"
echo $? > "$SAVE/status"
cp "$OUT/labkit-grade-journal.jsonl" "$SAVE/journal.jsonl" 2>/dev/null
ls -la "$OUT" "$OUT/feedback" > "$SAVE/listing" 2>&1
"""


@pytest.mark.sandbox
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="mounts a small tmpfs: needs root")
def test_a_full_disk_ends_the_run_with_a_message_naming_the_file(tmp_path):
    folder, out, save = tmp_path / "class", tmp_path / "out", tmp_path / "save"
    for d in (folder, out, save):
        d.mkdir()
    for student in ("ann", "ben", "cy"):
        shutil.copy(SOLUTION["27.2"], folder / f"{student}.ipynb")
    env = _clean_env(OUT=str(out), SAVE=str(save), CLASS=str(folder), PYTHON=sys.executable, INSTRUCTOR=str(INSTRUCTOR))
    subprocess.run(["unshare", "-m", "sh", "-c", FILL_AND_GRADE], env=env, cwd=ROOT, check=True, timeout=3600)
    status, stderr = int((save / "status").read_text()), (save / "stderr").read_text()
    assert status == 3, (stderr[-2000:], (save / "listing").read_text())
    assert "the disk is full" in stderr and f"could not write {out}" in stderr and "Traceback" not in stderr
    assert "--resume" in stderr
    entries = [json.loads(line) for line in (save / "journal.jsonl").read_text().splitlines()]   # whole lines
    assert entries[0]["journal"] == 1


def test_one_huge_notebook_does_not_hold_up_the_others(tmp_path, monkeypatch):
    """The huge file's read waits until another notebook's result is in: if notebooks were read
    before grading started, that result could never come and the read would give up."""
    huge = EXERCISES["27.2"].notebook(solution=True)
    # 16 MB in 2,000 long cells: the size of the file that held a class up, read in a fraction of
    # the time 100,000 short cells take (the read is held back below; its length is not the test)
    huge.cells += [nbformat.v4.new_markdown_cell("x" * 8_000) for _ in range(2_000)]
    nbformat.write(huge, tmp_path / "a_huge.ipynb")
    assert (tmp_path / "a_huge.ipynb").stat().st_size > 15e6
    shutil.copy(SOLUTION["27.2"], tmp_path / "b_small.ipynb")
    small_done = threading.Event()
    real_read = grader.read_bytes

    def read(path, *args, **kwargs):
        if Path(path).name == "a_huge.ipynb":
            assert threading.current_thread() is not threading.main_thread()
            assert small_done.wait(timeout=1800), "the small notebook was never graded while the huge one waited"
        return real_read(path, *args, **kwargs)
    monkeypatch.setattr(grader, "read_bytes", read)
    finished = []

    def on_result(result):
        finished.append(result["submission_id"])
        if result["submission_id"] == "b_small":
            small_done.set()
    results = grader.grade_paths([tmp_path], instructor=INSTRUCTOR, executor=2, sandbox=False, on_result=on_result)
    assert finished == ["b_small", "a_huge"]
    assert [(r["submission_id"], r["score"]) for r in results] == [("a_huge", 7), ("b_small", 7)]
