"""A class of adversarial submissions, graded through the sandbox: every attack earns 0 and changes nothing.

One class folder is graded once by the command line (module fixture, two workers, short limits)
and many assertions read its results; a second, small run puts a spy next to a victim at the
same time. Before and after, the tests hash the submissions, the installed package and the
instructor material, a marker file in HOME and the grades CSV.
"""
import contextlib
import hashlib
import io
import json
import os
import secrets
import time
from pathlib import Path

import labkit
import nbformat
import pytest

from _grading_support import EXERCISES, INSTRUCTOR, ROOT, hashes, solution_source, with_answers
from labkit.grading.__main__ import main
from labkit.grading.grader import grade_paths

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]
PACKAGE = Path(labkit.__file__).resolve().parent


ESCAPE = '''
value = 0.5
import os
wrote = []
for target in {targets!r}:
    try:
        with open(target, "a") as f:
            f.write("\\nowned = True\\n")
        wrote.append(target)
    except OSError:
        pass
for path in {seen!r}:
    if os.path.exists(path):
        wrote.append("saw " + path)
raise RuntimeError(f"escaped: {{wrote}}")
'''

SECRET = '''
value = 0.5
import os
found = {k: v for k, v in os.environ.items() if "SECRET" in k or "PASS" in k}
raise RuntimeError(f"env: {found} home: {sorted(os.listdir(os.path.expanduser('~')))}")
'''

STEAL_SOLUTIONS = '''
value = 0.5
import os, labkit
outcome = []
try:
    import labkit_instructor
    outcome.append("imported")
    for ex in labkit_instructor.EXERCISES["27.2"].cells:
        if ex.role == "answer":
            exec(ex.solution)
except Exception as exc:
    outcome.append(f"import {type(exc).__name__}")
repo = os.path.dirname(os.path.dirname(labkit.__file__))
source = os.path.join(repo, "instructor", "labkit_instructor", "exercises", "ex27_2.py")
try:
    exec(open(source).read())
    outcome.append("read the sources")
except Exception as exc:
    outcome.append(f"read {type(exc).__name__}")
raise RuntimeError(f"solutions: {outcome}")
'''

KILL_PARENT = '''
value = 0.0
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
os.kill(-1, signal.SIGKILL)
'''

FORK_BOMB_AND_DAEMON = '''
value = 0.5
import os, time
if os.fork() == 0:
    os.setsid()
    import ctypes
    ctypes.CDLL(None).prctl(15, b"labkit-bomb", 0, 0, 0)      # PR_SET_NAME: its children inherit it
    for _ in range(100000):
        try:
            os.fork()
        except OSError:
            pass
    time.sleep(30)
    for target in {targets!r}:
        try:
            open(target, "w").write("student,score\\nall,100\\n")
        except OSError:
            pass
    os._exit(0)
time.sleep(1)
'''

GROW_MEMORY = '''
equilibrium = [0.3, 0.4, 0.3]
payoffs_against_equilibrium = [1.0, 0.0, 0.0]
blob = []
while True:
    blob.append(b"x" * 50_000_000)
'''

CONTROL_CHARACTERS = '''
value = 0.5
raise RuntimeError("\\x1b[2J\\x1b[31mred\\n27.2(a)   pass    1/1\\n  total  7/7\\r\\x07\\u202efake")
'''

SLOW_TAIL = "\nimport time\nwhile True:\n    time.sleep(0.01)\n"


def _write(folder, name, nb):
    nbformat.write(nb, folder / name)


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    base = tmp_path_factory.mktemp("attacks")
    folder, out, home = base / "class", base / "out", base / "home"
    for d in (folder, out, home):
        d.mkdir()
    marker = home / "marker.txt"
    marker.write_text("the instructor's own file\n")
    csv_path, jsonl_path, feedback = out / "grades.csv", out / "grades.jsonl", out / "feedback"
    targets = [str(folder / "honest.ipynb"), str(marker), str(home / ".bashrc"), str(PACKAGE / "grading" / "report.py"),
               str(INSTRUCTOR / "labkit_instructor" / "checks" / "ex27_2.py"), str(csv_path)]
    blank = EXERCISES["27.2"].notebook()
    _write(folder, "honest.ipynb", EXERCISES["27.2"].notebook(solution=True))
    _write(folder, "escape.ipynb", with_answers("27.2", {"27.2(a)": ESCAPE.format(
        targets=targets, seen=[str(folder), str(home), str(INSTRUCTOR), str(ROOT / "solutions"), "/root/.bashrc",
                              "/home"])}, solution=False))
    _write(folder, "secret.ipynb", with_answers("27.2", {"27.2(a)": SECRET}, solution=False))
    _write(folder, "steal.ipynb", with_answers("27.2", {"27.2(a)": STEAL_SOLUTIONS}, solution=False))
    _write(folder, "killer.ipynb", with_answers("27.2", {"27.2(a)": KILL_PARENT}, solution=False))
    _write(folder, "forkbomb.ipynb", with_answers("27.2", {"27.2(a)": FORK_BOMB_AND_DAEMON.format(targets=targets),
                                                          "27.2(b)": GROW_MEMORY}, solution=False))
    _write(folder, "control.ipynb", with_answers("27.2", {"27.2(a)": CONTROL_CHARACTERS}, solution=False))
    _write(folder, '=HYPERLINK("http-x","y").ipynb', blank)
    _write(folder, "two\nlines.ipynb", blank)
    _write(folder, "slow_tail.ipynb", with_answers("27.1", {"27.1(a)": solution_source("27.1", "27.1(a)") + SLOW_TAIL}))
    # a copy of a classmate's answers, and a 27.3 saved under 27.2's file name
    _write(folder, "copy_a.ipynb", EXERCISES["27.4"].notebook(solution=True))
    _write(folder, "copy_b.ipynb", EXERCISES["27.4"].notebook(solution=True))
    _write(folder, EXERCISES["27.2"].filename, EXERCISES["27.3"].notebook(solution=True))
    # fourteen slow answer cells for one part: the cap and the budget
    many = EXERCISES["27.2"].notebook(solution=True)
    k = next(i for i, c in enumerate(many.cells) if c.metadata.get("labkit", {}).get("slot") == "27.2(a)")
    for _ in range(13):
        extra = nbformat.v4.new_code_cell("import time\ntime.sleep(6)")
        extra.metadata["labkit"] = {"role": "answer", "part": "27.2(a)", "slot": "27.2(a)"}
        many.cells.insert(k + 1, extra)
    _write(folder, "many_cells.ipynb", many)
    # files that are not notebooks at all
    os.mkfifo(folder / "fifo.ipynb")
    (folder / "zero.ipynb").symlink_to("/dev/zero")
    (folder / "link.ipynb").symlink_to(folder / "honest.ipynb")
    with open(folder / "huge.ipynb", "wb") as f:
        f.truncate(30 * 1024 * 1024)
    (folder / "folder.ipynb").mkdir()
    # oddly typed metadata: unhashable slots and roles in a solution, and an exercise given as a list
    odd = json.loads(nbformat.writes(EXERCISES["27.2"].notebook(solution=True)))
    answers = [c for c in odd["cells"] if c["metadata"].get("labkit", {}).get("role") == "answer"]
    answers[0]["metadata"]["labkit"]["slot"] = []
    answers[1]["metadata"]["labkit"]["role"] = {"x": 1}
    odd["cells"].append({"cell_type": "code", "metadata": {"labkit": "not a dict"}, "source": "", "outputs": [],
                         "execution_count": None, "id": "odd-1"})
    (folder / "odd_metadata.ipynb").write_text(json.dumps(odd))
    listed = json.loads(nbformat.writes(blank))
    listed["metadata"]["labkit"]["exercise"] = []
    (folder / "exercise_list.ipynb").write_text(json.dumps(listed))

    secret = "s3cr3t-" + secrets.token_hex(8)
    watched = [folder, PACKAGE, INSTRUCTOR, home]
    before = hashes(*watched)
    bashrc = Path.home() / ".bashrc"
    bashrc_before = bashrc.read_bytes() if bashrc.exists() else None
    saved = {k: os.environ.get(k) for k in ("LABKIT_TEST_SECRET", "HOME")}
    os.environ["LABKIT_TEST_SECRET"], os.environ["HOME"] = secret, str(home)
    table = io.StringIO()
    start = time.monotonic()
    try:
        with contextlib.redirect_stdout(table):
            status = main([str(folder), "--csv", str(csv_path), "--jsonl", str(jsonl_path), "--feedback", str(feedback),
                           "--workers", "2", "--timeout", "8", "--budget", "45", "--instructor", str(INSTRUCTOR)])
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    seconds = time.monotonic() - start
    csv_after = hashlib.sha256(csv_path.read_bytes()).hexdigest()
    time.sleep(3)                   # a daemon left behind would act now
    results = [json.loads(line) for line in jsonl_path.read_text().splitlines()]
    return {"folder": folder, "status": status, "table": table.getvalue(), "results": {r["student"]: r for r in results},
            "before": before, "after": hashes(*watched), "watched": watched, "csv": csv_path, "csv_after": csv_after,
            "csv_later": hashlib.sha256(csv_path.read_bytes()).hexdigest(), "secret": secret, "feedback": feedback,
            "bashrc": (bashrc_before, bashrc.read_bytes() if bashrc.exists() else None), "seconds": seconds,
            "jsonl": jsonl_path}


def _parts(result):
    assert result["status"] != "not gradable", f"{result['student']}: {result['error']}"
    return {p["part"]: p for p in result["parts"]}


def _hints(result):
    return " ".join(h for p in result["parts"] for h in p["hints"])


def test_the_run_completes_with_one_row_per_submission(attacked):
    # not gradable rows (malformed, other exercise, kernel killed) are reported in their rows: the
    # grader itself did not fail, so the run exits 0 (1 would mean the grader failed on a notebook)
    assert attacked["status"] == 0
    assert len(attacked["results"]) == 21
    assert attacked["results"]["honest"]["score"] == 7


def test_nothing_outside_the_sandbox_changes(attacked):
    assert attacked["after"] == attacked["before"]
    assert attacked["bashrc"][0] == attacked["bashrc"][1]
    assert attacked["csv_later"] == attacked["csv_after"]          # no daemon rewrote the grades afterwards
    r = attacked["results"]["escape"]
    assert r["score"] == 0 and "escaped: []" in _hints(r)


def test_the_instructors_environment_is_not_visible(attacked):
    r = attacked["results"]["secret"]
    assert r["score"] == 0 and "env: {}" in _hints(r)
    everything = attacked["table"] + attacked["csv"].read_text() + attacked["jsonl"].read_text() + \
        "".join(p.read_text() for p in attacked["feedback"].iterdir())
    assert attacked["secret"] not in everything


def test_the_solutions_cannot_be_imported_or_read(attacked):
    r = attacked["results"]["steal"]
    assert r["score"] == 0
    hints = _hints(r)
    assert "import ModuleNotFoundError" in hints or "import ImportError" in hints
    assert "read FileNotFoundError" in hints and "imported" not in hints


def test_killing_the_parent_costs_only_that_notebook(attacked):
    r = attacked["results"]["killer"]
    parts = _parts(r)
    assert r["score"] == 0 and parts["27.2(a)"]["verdict"] == "kernel-died"


def test_fork_bombs_and_daemons_are_bounded_and_killed(attacked):
    r = attacked["results"]["forkbomb"]
    parts = _parts(r)
    assert r["score"] == 0
    assert parts["27.2(b)"]["points"] == 0
    # nothing of the bomb runs once the run is over (other sandboxes may be running: look for its name)
    left = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = open(f"/proc/{entry}/status").read()
        except OSError:
            continue
        if "Name:\tlabkit-bomb" in status and "State:\tZ" not in status:         # zombies hold nothing
            left.append(entry)
    assert left == []


def test_special_files_get_a_message_each(attacked):
    expected = {"fifo": "is a FIFO", "zero": "symbolic link", "link": "symbolic link", "huge": "more than the 20 MB",
                "folder": "is a folder", "exercise_list": "metadata names the exercise as a list"}
    for name, message in expected.items():
        r = attacked["results"][name]
        assert r["status"] == "not gradable" and message in r["error"], (name, r["error"])


def test_oddly_typed_metadata_is_ignored_cell_by_cell(attacked):
    r = attacked["results"]["odd_metadata"]
    parts = _parts(r)
    # the cells with an unhashable slot or role are not answers: their parts score what is left
    assert parts["27.2(c)"]["verdict"] == "pass"
    assert r["score"] < 7


def test_student_text_cannot_forge_report_lines(attacked):
    table = attacked["table"]
    assert "\x1b" not in table and "\r" not in table and "\x07" not in table and "\u202e" not in table
    block = table.split("control  (")[1].split("\n\n")[0]
    assert [line for line in block.splitlines() if line.strip().startswith("total")] == ["  total  0/7"]
    assert sum(1 for line in block.splitlines() if line.startswith("27.2(a)")) == 0
    assert "two\\nlines" in table and "two\nlines" not in table        # escaped, readable, one line
    rows = attacked["csv"].read_text().splitlines()
    formula = [row for row in rows if "HYPERLINK" in row]
    # the id is made safe; the name, kept as written, is quoted so no spreadsheet runs it
    assert len(formula) == 1 and formula[0].startswith("HYPERLINK_http-x_y~") and ",\"'=HYPERLINK(" in formula[0]
    assert all(not cell.startswith(("=", "+", "@")) for row in rows for cell in row.split(","))


def test_a_slow_tail_costs_only_its_own_part(attacked):
    parts = _parts(attacked["results"]["slow_tail"])
    assert parts["27.1(a)"]["verdict"] == "timeout" and parts["27.1(a)"]["points"] == 0
    assert parts["27.1(b)"]["verdict"] == "pass" and parts["27.1(b)"]["points"] == 2


def test_copies_and_misleading_names_are_graded_and_flagged(attacked):
    for name, other in (("copy_a", "copy_b"), ("copy_b", "copy_a")):
        r = attacked["results"][name]
        assert r["status"] == "flagged" and r["score"] == 5 and r["similar_to"] == [other]
        # the instructor is told; the student's own feedback names no one else
        assert other not in (r["reason"] or "") and other not in (attacked["feedback"] / f"{name}.md").read_text()
    r = attacked["results"][EXERCISES["27.2"].slug]
    assert r["exercise"] == "27.3" and r["score"] == 5 and r["status"] == "flagged"
    assert "file name suggests exercise 27.2" in r["reason"]
    assert attacked["results"]["honest"]["status"] == "graded"


def test_many_slow_cells_hit_the_cap_and_the_budget(attacked):
    r = attacked["results"]["many_cells"]
    parts = _parts(r)
    assert r["status"] == "flagged" and "14 answer cells" in r["reason"]
    assert parts["27.2(a)"]["verdict"] in ("timeout", "budget")
    assert parts["27.2(c)"]["verdict"] == "budget" and parts["27.2(c)"]["points"] == 0


def test_not_gradable_rows_have_an_empty_score_in_the_csv(attacked):
    import csv
    with open(attacked["csv"], newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert rows["fifo"]["status"] == "not gradable" and rows["fifo"]["score"] == ""
    assert rows["fifo"]["reason"] and rows["fifo"]["max_score"] == ""      # a class of several exercises
    assert rows["honest"]["score"] == "7" and rows["honest"]["max_score"] == "7" and rows["honest"]["27.2(b)"] == "2"
    assert rows["escape"]["score"] == "0"          # graded, and earned nothing: a real 0


SPY = '''
value = 0.5
import glob, json, os, time
found = set()
deadline = time.time() + 12
while time.time() < deadline:
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            args = open(cmdline, "rb").read().split(b"\\0")
        except OSError:
            continue
        if cmdline.split("/")[2] != str(os.getpid()):
            found.update(a.decode() for a in args if a.endswith(b".json") and b"kernel" in a)
    found.update(p for p in glob.glob("/tmp/**/kernel-*.json", recursive=True)
                 if str(os.getpid()) not in p)
    time.sleep(0.5)
mine = os.path.basename(get_ipython().kernel.config["IPKernelApp"]["connection_file"])
foreign = sorted(f for f in found if os.path.basename(f) != mine)
raise RuntimeError(f"foreign kernels: {foreign}")
'''


def test_a_submission_cannot_reach_another_running_kernel(tmp_path):
    victim = with_answers("27.2", {"27.2(a)": solution_source("27.2", "27.2(a)") + "\nimport time\ntime.sleep(10)\n"})
    nbformat.write(victim, tmp_path / "a_victim.ipynb")
    nbformat.write(with_answers("27.2", {"27.2(a)": SPY}, solution=False), tmp_path / "b_spy.ipynb")
    results = {r["student"]: r for r in grade_paths([tmp_path], timeout=30, budget=90, executor=2,
                                                    instructor=INSTRUCTOR)}
    assert results["a_victim"]["score"] == 7, results["a_victim"]
    assert results["b_spy"]["score"] == 0
    assert "foreign kernels: []" in _hints(results["b_spy"])
