"""The grader of the exercises (27.1-27.8, 4.1, 5.1, 6.1, Lab 15): full marks for the solutions, nothing
for blanks or tricks.

Two bulk runs (module fixtures, two worker processes each) keep the file fast: a class of two
students per exercise (its solution and its blank notebook) graded through the command line,
and five adversarial submissions graded with a short cell timeout.
"""
import contextlib
import copy
import csv
import hashlib
import io
import json
import math
import shutil
import subprocess
import sys

import nbformat
import numpy as np
import pytest

from labkit.grading.__main__ import main as _main
from labkit.grading.grader import grade_notebook as _grade_notebook, grade_paths as _grade_paths
from labkit.grading.notebooks import NotebookError, read_notebook
from labkit.grading.reporter import RECORD_MIME, to_plain

from _grading_support import EXERCISES, INSTRUCTOR, ROOT, MATERIAL as checks  # noqa: E402  (hidden checks)
from _grading_support import solution_source as _solution_source, with_answers as _with_answers  # noqa: E402
from labkit_instructor.checks import base  # noqa: E402
from labkit_instructor.exercises import ex27_3, ex27_4, ex27_6, ex27_7, ex27_8  # noqa: E402  (each exercise in one file)

sys.path.insert(0, str(ROOT / "scripts"))
from install_cell import for_the_book  # noqa: E402  (the first cell every notebook of the book has)


def main(argv):
    return _main([*argv, "--instructor", str(INSTRUCTOR)])


def grade_notebook(path, **kwargs):
    return _grade_notebook(path, instructor=INSTRUCTOR, **kwargs)


def grade_paths(paths, **kwargs):
    return _grade_paths(paths, instructor=INSTRUCTOR, **kwargs)

MAX_SCORES = {"27.1": 6, "27.2": 7, "27.3": 5, "27.4": 5, "27.5": 4, "27.6": 5, "27.7": 4, "27.8": 4,
              "4.1": 3, "5.1": 4, "6.1": 4, "L15": 19}


def _hashes(folder):
    return {p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file()}


# ------------------------------------------------------------------ the class


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """Sixteen students, one folder each: a solution or a blank exercise, graded by the CLI."""
    folder = tmp_path_factory.mktemp("class")
    for ex in EXERCISES.values():
        for kind, source in (("solution", "solutions"), ("blank", "exercises")):
            student = folder / f"{kind}-{ex.number.replace('.', '_')}"
            student.mkdir()
            shutil.copy(ROOT / source / ex.filename, student / ex.filename)
    before = _hashes(folder)
    csv_path = tmp_path_factory.mktemp("out") / "grades.csv"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main([str(folder), "--json", "--csv", str(csv_path), "--workers", "2", "--timeout", "120"])
    results = json.loads(out.getvalue())
    return {"folder": folder, "before": before, "status": status, "results": results, "csv": csv_path}


def _by_student(classroom):
    return {r["student"]: r for r in classroom["results"]}


@pytest.mark.sandbox
@pytest.mark.parametrize("number", list(EXERCISES))
def test_every_solution_scores_full_marks(classroom, number):
    r = _by_student(classroom)[f"solution-{number.replace('.', '_')}"]
    assert r["error"] is None
    assert r["exercise"] == number
    assert r["max_score"] == MAX_SCORES[number]
    assert r["score"] == r["max_score"], [(p["part"], p["hints"]) for p in r["parts"]]
    assert all(p["verdict"] == "pass" for p in r["parts"])
    assert [p["part"] for p in r["parts"]] == EXERCISES[number].parts
    assert all(w["answered"] for w in r["written"])


@pytest.mark.sandbox
@pytest.mark.parametrize("number", list(EXERCISES))
def test_every_blank_exercise_scores_zero_with_hints(classroom, number):
    r = _by_student(classroom)[f"blank-{number.replace('.', '_')}"]
    assert r["error"] is None
    assert r["score"] == 0 and r["max_score"] == MAX_SCORES[number]
    assert all(p["verdict"] == "fail" and p["hints"] for p in r["parts"])
    assert not any(w["answered"] for w in r["written"])


@pytest.mark.sandbox
def test_bulk_grading_writes_one_csv_row_per_student(classroom):
    with open(classroom["csv"], newline="") as f:
        rows = list(csv.DictReader(f))
    assert classroom["status"] == 0
    assert len(rows) == 2 * len(EXERCISES) == len({row["student"] for row in rows})
    solution = next(row for row in rows if row["student"] == "solution-27_4")
    assert (solution["exercise"], solution["score"], solution["max_score"]) == ("27.4", "5", "5")
    assert (solution["27.4(a)"], solution["27.4(b)"]) == ("3", "2")
    blank = next(row for row in rows if row["student"] == "blank-27_4")
    assert blank["score"] == "0" and blank["27.4(a)"] == "0"


@pytest.mark.sandbox
def test_grading_leaves_the_submissions_untouched(classroom):
    assert _hashes(classroom["folder"]) == classroom["before"]


# ------------------------------------------------------------------ adversaries


def _forged():
    """A blank 27.2 whose check cells were edited to print "pass" and whose stored outputs
    claim full marks, including a record of the grader's own kind."""
    nb = EXERCISES["27.2"].notebook()
    for cell in nb.cells:
        meta = cell.metadata.get("labkit", {})
        if meta.get("role") == "check":
            part = meta["part"]
            cell.source = f'print("{part}: pass 4/4")'
            cell.execution_count = 1
            cell.outputs = [
                nbformat.v4.new_output("stream", name="stdout", text=f"{part}: pass 4/4\n"),
                nbformat.v4.new_output("display_data", data={
                    RECORD_MIME: {"part": part, "payload": json.dumps({"part": part, "value": {"value": 0.0}}),
                                  "mac": "0" * 64},
                    "text/plain": "recorded"}),
            ]
    return nb


WRONG_C = 'cycle_average = [0.5, 0.25, 0.25]\nbest_response_to_average = "paper"\ngain = 5.0\nnash_conv_of_average = 1.0\n'

REDEFINE_CHECK = WRONG_C + '''
import labkit.grading, labkit.grading.reporter

def check(part):
    print(f"{part}: pass 4/4")

labkit.grading.check = check
labkit.grading.reporter.check = check
'''

PATCH_INTERNALS = WRONG_C + '''
import builtins, json, sys
import labkit.grading.public as checks
import labkit.grading.reporter as reporter
from IPython.display import publish_display_data

right = {"cycle_average": [1/3, 1/3, 1/3], "best_response_to_average": "rock", "gain": 1/3,
         "nash_conv_of_average": 2/3}
reporter.collect = lambda part, namespace: dict(right)
reporter.to_plain = lambda value, *a, **k: right.get("gain")
checks.SPECS["27.2(c)"] = checks.SPECS["27.2(a)"]
checks.feedback = lambda part, value: None
_dumps = json.dumps
# rewrite the record on its way out of the kernel (its payload travels as an escaped JSON string)
json.dumps = lambda obj, *a, **k: _dumps(obj, *a, **k).replace('\\\\"gain\\\\": 5.0', '\\\\"gain\\\\": 0.3333333333333333')
_print = builtins.print
builtins.print = lambda *a, **k: _print("27.2(c): pass 4/4")
publish_display_data({"application/vnd.labkit.check+json": {"nonce": "0" * 32, "part": "27.2(c)", "value": right}})
'''

STUBBORN_LOOP = '''
import time
while True:          # ignores the grader's interrupt: the kernel must be replaced
    try:
        time.sleep(0.05)
    except KeyboardInterrupt:
        pass
'''


PLANT_SYMLINK = """
value = 0.0
import os
environ = open("/proc/self/environ", "rb").read().split(b"\\0")
path = next(e.split(b"=", 1)[1].decode() for e in environ if e.startswith(b"LABKIT_GRADING_NONCE="))
os.symlink(os.path.abspath("leak"), path)      # the next kernel's nonce would be written here ...
os._exit(1)                                    # ... once this one dies
"""

FORGE_WITH_LEAK = """
equilibrium = [1 / 3, 1 / 3, 1 / 3]
payoffs_against_equilibrium = [1.0, 0.0, -1.0]
import hashlib, hmac, json
from IPython.display import publish_display_data
try:
    leaked = open("leak").read().strip()
except OSError:
    leaked = "unknown"
payload = json.dumps({"part": "27.2(b)", "value": {"equilibrium": [0.25, 0.5, 0.25],
                                                   "payoffs_against_equilibrium": [0.0, 0.0, 0.0]}})
record = {"part": "27.2(b)", "payload": payload,
          "mac": hmac.new(leaked.encode(), payload.encode(), hashlib.sha256).hexdigest()}

def forge(result):            # runs after every cell, so its record comes last in the check cell
    publish_display_data({"application/vnd.labkit.check+json": record})

get_ipython().events.register("post_run_cell", forge)
"""


@pytest.fixture(scope="module")
def adversaries(tmp_path_factory):
    folder = tmp_path_factory.mktemp("adversaries")
    notebooks = {
        "forged": _forged(),
        "redefine_check": _with_answers("27.2", {"27.2(c)": REDEFINE_CHECK}),
        "patch_internals": _with_answers("27.2", {"27.2(c)": PATCH_INTERNALS}),
        "loops": _with_answers("27.2", {
            "27.2(a)": "value = 0.0\nwhile True:\n    pass\n",
            "27.2(b)": _solution_source("27.2", "27.2(b)") + "\n" + STUBBORN_LOOP}),
        "crash_flood": _with_answers("27.2", {
            "27.2(a)": "value = 0.0\nimport os\nos._exit(3)\n",
            "27.2(b)": _solution_source("27.2", "27.2(b)") + '\nprint("spam " * 100_000)\n',
            "27.2(c)": _solution_source("27.2", "27.2(c)") + '\nraise RuntimeError("after the answers")\n'}),
        "nonce_leak": _with_answers("27.2", {"27.2(a)": PLANT_SYMLINK, "27.2(b)": FORGE_WITH_LEAK}),
    }
    for name, nb in notebooks.items():
        nbformat.write(nb, folder / f"{name}.ipynb")
    before = _hashes(folder)
    results = grade_paths([folder], timeout=8, executor=2)
    return {"results": {r["student"]: r for r in results}, "before": before, "folder": folder}


def _parts(result):
    # a notebook-level error leaves no parts at all: say which error, not just "KeyError"
    assert result["error"] is None, f"{result['student']}: {result['error']}"
    return {p["part"]: p for p in result["parts"]}


@pytest.mark.sandbox
def test_forged_outputs_and_edited_check_cells_score_zero(adversaries):
    r = adversaries["results"]["forged"]
    assert r["error"] is None and r["score"] == 0
    assert all(p["verdict"] == "fail" for p in r["parts"])


@pytest.mark.sandbox
@pytest.mark.parametrize("name", ["redefine_check", "patch_internals"])
def test_redefining_the_check_helpers_earns_nothing(adversaries, name):
    parts = _parts(adversaries["results"][name])
    # the honest parts still score ...
    assert parts["27.2(a)"]["verdict"] == "pass" and parts["27.2(b)"]["verdict"] == "pass"
    # ... the part whose answer cell attacks the checks gets what its wrong values deserve
    assert parts["27.2(c)"]["points"] == 0
    assert parts["27.2(c)"]["verdict"] == ("missing" if name == "redefine_check" else "tampered")


@pytest.mark.sandbox
def test_endless_loops_cost_only_their_own_parts(adversaries):
    parts = _parts(adversaries["results"]["loops"])
    assert parts["27.2(a)"]["verdict"] == "timeout" and parts["27.2(a)"]["points"] == 0
    assert parts["27.2(b)"]["verdict"] == "timeout" and parts["27.2(b)"]["points"] == 0
    assert parts["27.2(c)"]["verdict"] == "pass" and parts["27.2(c)"]["points"] == 4


@pytest.mark.sandbox
def test_a_dead_kernel_a_flood_and_an_exception_cost_only_their_parts(adversaries):
    parts = _parts(adversaries["results"]["crash_flood"])
    assert parts["27.2(a)"]["verdict"] == "kernel-died"
    assert parts["27.2(b)"]["verdict"] == "output-flood" and parts["27.2(b)"]["points"] == 0
    # the values were defined before the exception: they count, and the hint names the error
    assert parts["27.2(c)"]["verdict"] == "pass"
    assert any("RuntimeError" in h for h in parts["27.2(c)"]["hints"])


@pytest.mark.sandbox
def test_a_nonce_cannot_be_stolen_through_a_planted_symlink(adversaries):
    parts = _parts(adversaries["results"]["nonce_leak"])
    assert parts["27.2(a)"]["verdict"] == "kernel-died"
    assert parts["27.2(b)"]["points"] == 0          # the forged record was signed with a wrong key
    assert parts["27.2(c)"]["verdict"] == "pass"


@pytest.mark.sandbox
def test_adversarial_submissions_are_left_untouched(adversaries):
    assert _hashes(adversaries["folder"]) == adversaries["before"]


# ------------------------------------------------------------------ bad notebooks


@pytest.mark.sandbox
def test_malformed_notebooks_get_clear_messages(tmp_path):
    cases = {
        "broken.ipynb": (b'{"cells": [', "JSON is broken at line 1"),
        "binary.ipynb": (b"\xff\xfe\x00", "not a text file"),
        "old.ipynb": (json.dumps({"nbformat": 3, "worksheets": []}).encode(), "notebook format 3"),
        "list.ipynb": (b"[1, 2]", "not a Jupyter notebook"),
        "plain.ipynb": (nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])).encode(),
                        "not a labkit exercise notebook"),
    }
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        r = grade_notebook(tmp_path / name)
        assert message in r["error"], (name, r["error"])
        assert r["score"] is None and r["parts"] == []
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main([str(tmp_path / "broken.ipynb")])
    assert status == 0 and "not graded" in out.getvalue()      # reported as not gradable: no grader failure


def test_a_notebook_of_another_exercise_is_refused(tmp_path):
    path = tmp_path / "sub.ipynb"
    shutil.copy(ROOT / "solutions" / EXERCISES["27.3"].filename, path)
    r = grade_notebook(path, exercise="27.2")
    assert "exercise 27.3" in r["error"] and "27.2" in r["error"] and "was expected" in r["error"]
    assert r["max_score"] == MAX_SCORES["27.2"]
    # answer cells copied from 27.3 into a notebook that says 27.2
    nb = nbformat.read(path, as_version=4)
    nb.metadata["labkit"]["exercise"] = "27.2"
    nbformat.write(nb, path)
    r = grade_notebook(path)
    assert "answer cells belong to exercise 27.3" in r["error"]


def test_command_line_usage_errors(tmp_path, capsys):
    assert main([str(tmp_path / "missing")]) == 2
    assert main([str(tmp_path), "--exercise", "27.9"]) == 2
    assert main([str(tmp_path)]) == 2            # an empty folder
    assert main([]) == 2
    assert "no .ipynb files" in capsys.readouterr().err


# ------------------------------------------------------------------ sources agree


def _cells(nb):
    return [(c.cell_type, c.source, c.get("id"), {k: v for k, v in c.metadata.items() if k != "execution"})
            for c in nb.cells]


@pytest.mark.parametrize("number", list(EXERCISES))
def test_committed_notebooks_match_their_definition(number):
    ex = EXERCISES[number]
    exercise = nbformat.read(ROOT / "exercises" / ex.filename, as_version=4)
    assert _cells(exercise) == _cells(for_the_book(ex.notebook()))
    assert all(not c.get("outputs") for c in exercise.cells if c.cell_type == "code")
    solution = nbformat.read(ROOT / "solutions" / ex.filename, as_version=4)
    assert _cells(solution) == _cells(for_the_book(ex.notebook(solution=True))), \
        "solutions/ is stale: run python scripts/build_exercises.py"
    # executed, so that nbval has outputs to compare
    assert all(c.get("outputs") for c in solution.cells if c.cell_type == "code" and "check" in c.metadata.get("tags", []))


# ------------------------------------------------------------------ the checks themselves


def test_expected_values_agree_with_closed_forms():
    # 27.2: the chapter's equilibrium; 27.8: the null vector (m_BC, m_CA, m_AB) = (0.1, 0.2, 0.3)
    assert np.allclose(base.RPS_EQUILIBRIUM, [0.25, 0.5, 0.25])
    assert np.allclose(ex27_8.preference_equilibrium(), [1 / 6, 1 / 3, 1 / 2], atol=1e-8)
    # 27.6: pure equilibria of the climbing game by hand: (a, a) and (b, b), not (c, c)
    A = ex27_6.climbing_payoffs()
    assert ex27_6.pure_equilibria(A, A) == {(0, 0), (1, 1)}
    # 27.7: the additive fit's greedy joint action is (c, c); monotonic mixing cannot fit the game
    fit = ex27_7.vdn_fit(A)
    assert np.unravel_index(np.argmax(fit), fit.shape) == (2, 2)
    assert math.isclose(fit[2, 2], 5 / 3 + 11 / 3 + 31 / 9)
    assert not ex27_7.monotonic_representable(A) and ex27_7.monotonic_representable(fit)
    # 27.4: the exercise's numbers
    assert math.isclose(ex27_4._ev_check_queen(2 / 3, 0.0), -1 / 3) and math.isclose(ex27_4._ev_check_queen(2 / 3, 1.0), -1 / 3)
    assert math.isclose(ex27_4._ev_bet_jack(1 / 3), -1.0)
    # 27.8(a): logits around the cycle add up to log 14
    P = ex27_8.PREFERENCE_PROBES[0][0]
    assert math.isclose(ex27_8._logit(P[0, 1]) + ex27_8._logit(P[1, 2]) + ex27_8._logit(P[2, 0]), math.log(14))
    # 27.3(c): the regularized equilibrium is a rest point: regularized payoffs constant over actions
    x, y = ex27_3.regularized_equilibrium()
    u = base.BIASED_RPS @ y - ex27_3.ALPHA * np.log(3 * x)
    w = -base.BIASED_RPS.T @ x - ex27_3.ALPHA * np.log(3 * y)
    assert np.ptp(u) < 1e-9 and np.ptp(w) < 1e-9


GARBAGE = [None, 7, -1.5, "rock", [], [1, 2, 3], {"x": 1}, {"__error__": "boom"}, float("nan"), [[1, 2], [3]],
           True, "a" * 50]


@pytest.mark.parametrize("part", list(checks.SPECS))
def test_checks_survive_garbage_and_never_give_points_for_it(part):
    spec = checks.spec_for(part)
    for junk in GARBAGE:
        value = {name: copy.deepcopy(junk) for name in spec.names}
        result = checks.grade_part(part, value)
        assert result.max_points == spec.max_points
        assert result.points < spec.max_points, (part, junk)
        assert result.line().startswith(f"{part}: ")
    assert checks.grade_part(part, "not even a dict").points == 0


def test_check_lines_have_a_fixed_format():
    r = checks.grade_part("27.2(a)", {"value": 0.0})
    assert r.line() == "27.2(a): pass 1/1" and r.hints == []
    r = checks.grade_part("27.2(a)", {"value": 0.5})
    assert r.line() == "27.2(a): fail 0/1"
    assert r.hints and "0.0" not in r.hints[0]           # a hint, not the answer
    with pytest.raises(ValueError, match="unknown part"):
        checks.spec_for("27.9(a)")


def test_reported_values_are_plain_json():
    assert to_plain((np.float64(0.5), np.arange(2), {1: np.bool_(False)})) == [0.5, [0, 1], {"1": False}]
    with pytest.raises(Exception, match="placeholder"):
        to_plain(...)
    with pytest.raises(Exception, match="too large"):
        to_plain(np.zeros(10 ** 6))
    with pytest.raises(Exception, match="cannot report"):
        to_plain(object())


def test_read_notebook_rejects_a_cell_without_a_type():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    raw = json.loads(nbformat.writes(nb))
    raw["cells"][0]["cell_type"] = "widget"
    with pytest.raises(NotebookError):
        read_notebook(json.dumps(raw).encode(), "x.ipynb")


def test_nbgrader_export_links_to_the_published_pages(tmp_path):
    from labkit.grading.nbgrader_export import book_links, export
    (path,) = export(tmp_path, "27.1", site_url="https://example.org/book/")
    first = nbformat.read(path, as_version=4).cells[0].source
    assert first.startswith("# Exercise 27.1")
    assert "[Many learners](https://example.org/book/chapters/01_many_learners.html)" in first
    assert book_links("see [the lab](../exercises/lab15_leduc_solvers.ipynb#part-b) and [OpenSpiel]"
                      "(https://github.com/google-deepmind/open_spiel)") == (
        "see the lab and [OpenSpiel](https://github.com/google-deepmind/open_spiel)")
    assert book_links("[b](../book/intro.md#x)", "https://s.org") == "[b](https://s.org/book/intro.html#x)"


def _exported_first_cell(tmp_path, *options):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["--export-nbgrader", str(tmp_path), "--exercise", "27.1", *options])
    paths = sorted(tmp_path.glob("source/*/*.ipynb"))
    return status, err.getvalue(), (nbformat.read(paths[0], as_version=4).cells[0].source if paths else None)


def test_nbgrader_export_takes_the_site_address_from_the_command_line(tmp_path, monkeypatch):
    link = "[Many learners]({}/chapters/01_many_learners.html)"
    monkeypatch.setenv("LABKIT_SITE_URL", "https://env.example.org/course")
    # the flag wins over the environment variable
    status, _, first = _exported_first_cell(tmp_path / "flag", "--site-url", "https://example.org/book/")
    assert status == 0 and link.format("https://example.org/book") in first and "env.example.org" not in first
    # without the flag, the environment variable
    status, _, first = _exported_first_cell(tmp_path / "env")
    assert status == 0 and link.format("https://env.example.org/course") in first
    # with neither, the chapter's title as plain text
    monkeypatch.delenv("LABKIT_SITE_URL")
    status, _, first = _exported_first_cell(tmp_path / "none")
    assert status == 0 and "01_many_learners" not in first and "https://" not in first
    assert "the chapters Many learners (the value" in first
    # an address without its scheme is refused with the reason, and nothing is written
    status, err, first = _exported_first_cell(tmp_path / "bad", "--site-url", "example.org/book")
    assert status == 2 and "--site-url 'example.org/book'" in err and "https://ORG.github.io/REPO" in err
    assert first is None
    monkeypatch.setenv("LABKIT_SITE_URL", "ftp://example.org")
    status, err, first = _exported_first_cell(tmp_path / "bad-env")
    assert status == 2 and "LABKIT_SITE_URL 'ftp://example.org'" in err and first is None
    # the flag means nothing without the export
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main([str(tmp_path), "--site-url", "https://example.org"]) == 2
    assert "--site-url is for --export-nbgrader" in err.getvalue()


def test_nbgrader_export_marks_every_cell(tmp_path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--export-nbgrader", str(tmp_path)]) == 0
    main_paths = sorted(tmp_path.glob("source/*/*.ipynb"))
    # one assignment per exercise, named after its notebook
    assert [(p.parent.name, p.name) for p in main_paths] == sorted(
        (ex.filename.removesuffix(".ipynb"), ex.filename) for ex in EXERCISES.values())
    for path in main_paths:
        nb = nbformat.read(path, as_version=4)
        number = nb.metadata["labkit"]["exercise"]
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        # the student's title, and no link into the book's folders (they lead nowhere from nbgrader's)
        assert nb.cells[0].source.startswith("# Exercise ") or nb.cells[0].source.startswith("# Lab ")
        assert "Solution to exercise" not in text and "](../" not in text and ".ipynb)" not in text
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells]
        assert len(ids) == len(set(ids))
        tests = [c for c in nb.cells if "check" in c.metadata.get("tags", [])]
        assert sum(c.metadata["nbgrader"]["points"] for c in tests) == MAX_SCORES[number]
        assert all(c.metadata["nbgrader"]["locked"] for c in tests)
        answers = [c for c in nb.cells if c.metadata.get("labkit", {}).get("role") == "answer"]
        assert all(c.source.startswith("### BEGIN SOLUTION") and c.metadata["nbgrader"]["solution"] for c in answers)


DASK_GRADING = """
import json, sys
import distributed
from labkit.grading.grader import grade_paths
with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                              dashboard_address=None) as cluster, distributed.Client(cluster) as client:
    results = grade_paths([sys.argv[1]], executor=client.get_executor(), timeout=120, instructor=sys.argv[2])
print(json.dumps([(r["student"], r["score"], r["error"]) for r in results]))
"""


@pytest.mark.sandbox
def test_bulk_grading_runs_on_a_dask_cluster(tmp_path):
    """The grader on a Dask LocalCluster, in a fresh interpreter: Dask's event loop and the kernels
    earlier tests of the same pytest worker started must not meet in one process."""
    pytest.importorskip("distributed")
    for student in ("ann", "ben"):
        (tmp_path / student).mkdir()
        shutil.copy(ROOT / "solutions" / EXERCISES["27.2"].filename, tmp_path / student / "answers.ipynb")
    done = subprocess.run([sys.executable, "-c", DASK_GRADING, str(tmp_path), str(INSTRUCTOR)],
                          capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert [tuple(r) for r in results] == [("ann", 7, None), ("ben", 7, None)]
