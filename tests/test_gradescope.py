"""The Gradescope autograder bundle, run the way Gradescope runs it: a temporary root stands for
/autograder, with source/ (the unzipped bundle), submission/ and results/; run_autograder is called
for a worked solution (full marks) and for a blank exercise (0), and results.json is checked against
the format Gradescope documents (the schema below is written from its "Autograder Specifications":
top-level score, execution_time, output, visibility, stdout_visibility, extra_data, tests, leaderboard;
per test score, max_score, name, number, output, tags, visibility, extra_data; visibility one of
hidden, after_due_date, after_published, visible).
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest

from _grading_support import EXERCISES, INSTRUCTOR, MATERIAL, ROOT
from labkit.grading.__main__ import main

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
RESULTS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "leaderboard": {"type": "array"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"score": {"type": "number"}, "max_score": {"type": "number"}, "name": {"type": "string"},
                           "number": {"type": "string"}, "output": {"type": "string"},
                           "tags": {"type": "array", "items": {"type": "string"}}, "visibility": VISIBILITY,
                           "extra_data": {"type": "object"}}}},
    },
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],
}
EXERCISE = "27.4"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    assert main(["gradescope", EXERCISE, str(out), "--instructor", str(INSTRUCTOR), "--timeout", "120"]) == 0
    return out


def _autograder_root(bundle, base, notebook=None):
    """A stand-in for /autograder: source/ unzipped, run_autograder copied beside it (as Gradescope's
    image build does), the submission, an empty results/."""
    root = base / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "results").mkdir()
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
        for info in z.infolist():                  # extractall drops the modes; Gradescope keeps them
            mode = info.external_attr >> 16
            if mode:
                os.chmod(root / "source" / info.filename, mode & 0o777)
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    if notebook is not None:
        shutil.copy(notebook, root / "submission" / notebook.name)
    return root


def _run(root):
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "LABKIT_AUTOGRADER_PYTHON": sys.executable}
    done = subprocess.run(["bash", str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads((root / "results" / "results.json").read_text())


@pytest.fixture(scope="module")
def graded(bundle, tmp_path_factory):
    """run_autograder on the worked solution, the blank exercise and an empty submission, side by side."""
    cases = {"solution": ROOT / "solutions" / EXERCISES[EXERCISE].filename,
             "blank": ROOT / "exercises" / EXERCISES[EXERCISE].filename, "nothing": None}
    roots = {k: _autograder_root(bundle, tmp_path_factory.mktemp(k), nb) for k, nb in cases.items()}
    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(roots, pool.map(_run, roots.values())))
    return results


def test_the_bundle_has_gradescope_layout_and_no_secret_in_the_kernel_path(bundle):
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
        setup = z.read("setup.sh").decode()
        run = z.read("run_autograder").decode()
    assert "setup.sh" in names and "run_autograder" in names            # at the root of the zip
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    assert run.startswith("#!") and setup.startswith("#!") and "results.json" in run
    assert "python/labkit/grading/gradescope.py" in names and "instructor/labkit_instructor/__init__.py" in names
    assert not any(n.startswith("python/labkit_instructor") for n in names)    # the kernel's path has no checks
    assert not any("__pycache__" in n or n.startswith("python/labkit/data/efr") for n in names)
    assert subprocess.run(["bash", "-n", "-c", setup]).returncode == 0      # it parses
    assert f"--exercise {EXERCISE}" in run


def test_results_follow_gradescope_schema(graded):
    for results in graded.values():
        jsonschema.validate(results, RESULTS_SCHEMA)


def test_a_worked_solution_gets_full_marks(graded):
    results = graded["solution"]
    maximum = sum(MATERIAL.spec_for(p).max_points for p in EXERCISES[EXERCISE].parts)
    assert results["score"] == maximum == 5
    assert [t["name"] for t in results["tests"]] == EXERCISES[EXERCISE].parts
    assert all(t["score"] == t["max_score"] for t in results["tests"])
    assert "graded by hand (4 points" in results["output"]


def test_a_blank_exercise_gets_zero_with_hints(graded):
    results = graded["blank"]
    assert results["score"] == 0 and all(t["score"] == 0 and "\n- " in t["output"] for t in results["tests"])


def test_no_notebook_still_writes_results(graded):
    results = graded["nothing"]
    assert results["score"] == 0 and "no .ipynb file was handed in" in results["output"]


def test_unknown_exercise_is_a_usage_error(tmp_path, capsys):
    assert main(["gradescope", "27.9", str(tmp_path / "x.zip"), "--instructor", str(INSTRUCTOR)]) == 2
    assert "unknown exercise" in capsys.readouterr().err


# ------------------------------------------------------------ without bubblewrap

PROBE = """
import json as _json, os as _os
def _tries(action):
    try:
        action()
        return "allowed"
    except OSError as exc:
        return type(exc).__name__
_root = {root!r}
with open(_os.path.join(_root, "shared", "probe.json"), "w") as _f:
    _json.dump({{"uid": _os.getuid(), "euid": _os.geteuid(),
                "hidden checks": _tries(lambda: _os.listdir(_os.path.join(_root, "source", "instructor"))),
                "results": _tries(lambda: open(_os.path.join(_root, "results", "results.json"), "w").close())}}, _f)
"""


def test_without_bubblewrap_the_students_code_runs_as_an_unprivileged_user(bundle):
    """Where bubblewrap cannot run (Gradescope's containers, as a rule), run_autograder, as root,
    runs the student's code as an unprivileged user, who can neither read the hidden checks nor
    write the results; the worked solution still gets full marks."""
    import pwd
    import tempfile

    import nbformat

    from labkit.grading.sandbox import SandboxUnavailable, check_user
    if os.geteuid() != 0:
        pytest.skip("run_autograder switches to an unprivileged user only as root, as Gradescope runs it")
    try:
        user = pwd.getpwnam("nobody")
        check_user("nobody")
    except (KeyError, SandboxUnavailable) as exc:
        pytest.skip(f"no unprivileged user can run the grader's Python here: {exc}")
    base = tempfile.mkdtemp(prefix="labkit-gradescope-")      # a place the user can reach (not pytest's 0700 tmp)
    try:
        os.chmod(base, 0o755)
        root = base + "/autograder"                            # made by _autograder_root
        nb = nbformat.read(ROOT / "solutions" / EXERCISES[EXERCISE].filename, as_version=4)
        first = next(c for c in nb.cells if c.metadata.get("labkit", {}).get("role") == "answer")
        first.source += "\n" + PROBE.format(root=root)
        notebook = os.path.join(base, EXERCISES[EXERCISE].filename)
        nbformat.write(nb, notebook)
        _autograder_root(bundle, Path(base), Path(notebook))
        os.chmod(root, 0o755)
        os.mkdir(os.path.join(root, "shared"))
        os.chmod(os.path.join(root, "shared"), 0o1777)
        env = {**os.environ, "AUTOGRADER_ROOT": root, "LABKIT_AUTOGRADER_PYTHON": sys.executable,
               "LABKIT_GRADE_BWRAP": "none", "LABKIT_AUTOGRADER_USER": "nobody"}
        done = subprocess.run(["bash", os.path.join(root, "run_autograder")], cwd=root, env=env, capture_output=True,
                              text=True, timeout=1200)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        assert "runs as the unprivileged user 'nobody'" in done.stdout, done.stdout[-2000:]
        results = json.loads(open(os.path.join(root, "results", "results.json")).read())
        jsonschema.validate(results, RESULTS_SCHEMA)
        assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0, (done.stdout[-3000:], results)
        probe = json.loads(open(os.path.join(root, "shared", "probe.json")).read())
        assert probe["uid"] == probe["euid"] == user.pw_uid != 0
        assert probe["hidden checks"] == "PermissionError" and probe["results"] == "PermissionError", probe
    finally:
        shutil.rmtree(base, ignore_errors=True)
