"""Gradescope: an autograder bundle for one exercise, and the program it runs on each submission.

    labkit-grade gradescope 27.4 kuhn-autograder.zip [--instructor DIR] [--timeout S] [--budget S]

writes a zip in Gradescope's autograder format (upload it under "Configure Autograder", base image
Ubuntu 22.04 or later, Python 3.10 or later):

* ``setup.sh`` -- run once when Gradescope builds the image: installs Python, bubblewrap and
  util-linux with apt, makes a virtual environment in ``/autograder/venv`` with labkit's
  dependencies (``requirements.txt``, the ranges labkit itself declares), and adds an unprivileged
  user ``student``;
* ``run_autograder`` -- run on every submission, in ``/autograder``: grades the notebook found in
  ``/autograder/submission/`` with labkit's grader and writes ``/autograder/results/results.json``.
  Where bubblewrap can run in Gradescope's container, each submission gets the sandbox; where it
  cannot (the usual case: Gradescope's containers do not let it make namespaces), the student's
  code runs as the unprivileged user ``student`` (`labkit.grading.sandbox.Limits.user`), which
  cannot read the hidden checks nor write the results (``run_autograder`` makes both root's
  alone), and only if that user cannot run the grader's Python does it run as root, with a line
  in the log saying so;
* ``python/labkit/`` -- the grader and the library, as installed where the bundle was built (the
  cached EFR results of the book left out), and ``instructor/labkit_instructor/`` -- the hidden
  checks, which the kernel never sees: the grader reads them in its own process.

``results.json`` (Gradescope's documented format): ``score`` (the points the grader checked),
``execution_time``, ``output`` (a summary for the student), ``visibility``, ``stdout_visibility``
(``hidden``: the log is the instructor's), and ``tests``, one per checkable part::

    {"name": "27.4(a)", "number": "1", "score": 3.0, "max_score": 3.0,
     "output": "pass\\n...", "visibility": "visible"}

The written parts are graded by hand: make one Gradescope question per written part with the
points the exercise states (the summary lists them), so that Gradescope's total is the same as
``labkit-grade``'s with the hand-graded points merged in. A notebook that cannot be graded (not a
notebook, another exercise) scores 0 on every part and the output says why. ``results.json`` is
always written, even when the grader itself fails.

For a trial run outside Gradescope, ``AUTOGRADER_ROOT`` replaces ``/autograder`` and
``LABKIT_AUTOGRADER_PYTHON`` the interpreter; the tests run a bundle that way.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import stat
import sys
import time
import traceback
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labkit.grading.notebooks import Exercise

# As in the driver (labkit/grading/driver.py): jsonschema, which nbformat validates with, would
# import rfc3987_syntax, which compiles an IRI grammar as it loads (about 2-3 CPU seconds at every
# start of this command) for a format no notebook schema uses. This command is a process of its own.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: "not importable"

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
SKIP = ("__pycache__",)
SKIP_DATA = ("labkit/data/efr",)         # the book's cached EFR runs: 22 MB the grader never reads

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip bubblewrap util-linux
python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --upgrade pip
"$ROOT/venv/bin/python" -m pip install -r "$ROOT/source/requirements.txt"
# an unprivileged user, as Gradescope recommends for running student code
id -u student >/dev/null 2>&1 || adduser --no-create-home --disabled-password --gecos "" student
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, in /autograder; it writes /autograder/results/results.json.
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{LABKIT_AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}}"
export PYTHONPATH="$ROOT/source/python"
# the student's code (as the user student, without bubblewrap) may read labkit, never the hidden
# checks or the results
chmod o=x "$ROOT/source" 2>/dev/null || true
chmod -R o=rX "$ROOT/source/python" 2>/dev/null || true
chmod o= "$ROOT/source/instructor" "$ROOT/results" 2>/dev/null || true
exec "$PYTHON" -m labkit.grading.gradescope run --root "$ROOT" --exercise {exercise} --timeout {timeout:g} \\
    --budget {budget:g} --memory {memory:d} --visibility {visibility} --user "${{LABKIT_AUTOGRADER_USER:-student}}"
"""


# ------------------------------------------------------------ the bundle


def _files(folder, prefix, skip_data=()):
    """(path inside the zip, file) for every file of a package folder, caches left out."""
    folder = Path(folder)
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder.parent).as_posix()
        if path.is_file() and not any(part in SKIP for part in path.parts) and path.suffix != ".pyc" \
                and not any(rel.startswith(d) for d in skip_data):
            yield f"{prefix}/{rel}", path


def requirements() -> list[str]:
    """labkit's own dependencies and those of its grading extra, as it declares them (the
    bundle's ``requirements.txt``).

    Returns
    -------
    list of str
        Requirement specifiers, e.g. ``numpy>=1.26``; labkit's base ranges where its metadata
        is not installed.

    Examples
    --------
    >>> any(line.startswith("numpy") for line in requirements())
    True
    """
    from importlib import metadata
    try:
        declared = metadata.requires("labkit-marl") or []
    except metadata.PackageNotFoundError:
        declared = []
    wanted = [r for r in declared if "extra ==" not in r or 'extra == "grading"' in r]
    lines = [r.split(";")[0].strip() for r in wanted]
    return lines or ["numpy>=1.26", "scipy>=1.11", "matplotlib>=3.8", "ipywidgets>=8.1,<9", "tqdm>=4.66",
                     "nbclient>=0.10", "nbformat>=5.9", "ipykernel>=6.29"]


def build(exercise: str, out: str | Path, instructor: str | os.PathLike[str] | None = None,
          timeout: float = 60.0, budget: float = 600.0, memory: int = 2048, visibility: str = "visible") -> list[str]:
    """Write the autograder zip of `exercise` to `out` (see the module's docstring for what it holds).

    Parameters
    ----------
    exercise : str
        E.g. ``"27.4"`` or ``"L15"``.
    out : str or path
        The zip to write (replaced if it is there).
    instructor : str or path, optional
        Folder containing ``labkit_instructor`` (default: the installed distribution).
    timeout : float, default 60.0
        Seconds each cell may run.
    budget : float, default 600.0
        Seconds the whole notebook may take.
    memory : int, default 2048
        MiB of memory the notebook may use.
    visibility : str, default "visible"
        When students see the per-part results: one of `VISIBILITIES`.

    Returns
    -------
    list of str
        The names in the zip.

    Raises
    ------
    ValueError
        For an unknown exercise or visibility.
    labkit.grading.material.MaterialError
        Where the instructor material cannot be found.

    Examples
    --------
    >>> import os, tempfile
    >>> from labkit.grading.material import MaterialError
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     try:
    ...         names = build("27.4", os.path.join(folder, "kuhn-autograder.zip"))
    ...     except MaterialError:                               # a student's installation
    ...         names = ["setup.sh", "run_autograder", "requirements.txt", "python/labkit/__init__.py"]
    >>> names[:3], "python/labkit/__init__.py" in names
    (['setup.sh', 'run_autograder', 'requirements.txt'], True)
    """
    import labkit
    from labkit.grading import material
    mat = material.load(instructor)
    if exercise not in mat.EXERCISES:
        raise ValueError(f"unknown exercise {exercise!r}; choose from {', '.join(mat.EXERCISES)}")
    if visibility not in VISIBILITIES:
        raise ValueError(f"unknown visibility {visibility!r}; choose from {', '.join(VISIBILITIES)}")
    entries = [("setup.sh", SETUP_SH.encode()),
               ("run_autograder", RUN_AUTOGRADER.format(exercise=exercise, timeout=timeout, budget=budget,
                                                        memory=memory, visibility=visibility).encode()),
               ("requirements.txt", ("\n".join(requirements()) + "\n").encode())]
    files = list(_files(Path(labkit.__file__).resolve().parent, "python", SKIP_DATA))
    files += list(_files(material.location(mat), "instructor"))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o755) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
        for name, path in files:
            z.write(path, name)
    from labkit.grading.gradebook import write_new
    write_new(out, buffer.getvalue())
    return [name for name, _ in entries] + [name for name, _ in files]


# ------------------------------------------------------------ run_autograder


def find_submission(folder: str | os.PathLike[str], exercise: Exercise) -> tuple[Path | None, str | None]:
    """(the notebook to grade, a note for the student or None) among the files handed in.

    Where several notebooks were handed in, the first whose name holds the exercise's slug is
    graded (else the first), and the note says so.

    Parameters
    ----------
    folder : str or path
        Gradescope's ``submission`` folder.
    exercise : labkit.grading.notebooks.Exercise

    Returns
    -------
    (pathlib.Path or None, str or None)
        None and the note when no notebook was handed in.

    Examples
    --------
    >>> import tempfile
    >>> from labkit.grading import notebooks as nbk
    >>> exercise = nbk.Exercise("1.1", "1_1_sum", "A sum", ())
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     print(find_submission(folder, exercise)[1])
    ...     for name in ("notes.ipynb", "1_1_sum.ipynb"):
    ...         _ = (Path(folder) / name).write_text("{}")
    ...     path, note = find_submission(folder, exercise)
    ...     print(path.name, "|", note)
    no .ipynb file was handed in: upload the exercise notebook itself
    1_1_sum.ipynb | 2 notebooks were handed in; 1_1_sum.ipynb was graded (hand in one notebook)
    """
    from labkit.grading.intake import find_notebooks
    found = [p for p, _ in find_notebooks([folder])] if Path(folder).is_dir() else []
    if not found:
        return None, "no .ipynb file was handed in: upload the exercise notebook itself"
    if len(found) == 1:
        return found[0], None
    named = [p for p in found if exercise.slug in p.name] or found
    return named[0], (f"{len(found)} notebooks were handed in; {named[0].name} was graded (hand in one notebook)")


def results_json(result: Any, exercise: Any, mat: Any, seconds: float, note: str | None = None,
                 visibility: str = "visible") -> dict[str, Any]:
    """The results.json of one graded (or not gradable) submission, in Gradescope's format.

    Its ``score`` is the sum of the tests' scores, one test per checkable part; a part not
    graded scores 0 out of its maximum.

    Parameters
    ----------
    result : dict or None
        The grader's result; None where no notebook was handed in.
    exercise : labkit.grading.notebooks.Exercise
    mat : module
        The instructor material (its ``spec_for`` gives each part's maximum).
    seconds : float
        How long the grading took.
    note : str, optional
        A first line of the output for the student (`find_submission`'s).
    visibility : str, default "visible"
        One of `VISIBILITIES`.

    Returns
    -------
    dict
        Ready for ``json.dumps``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from labkit.grading import notebooks as nbk
    >>> cells = (nbk.check("1.1(a)"), nbk.written("1.1(b)", "Yes.", points=2))
    >>> exercise = nbk.Exercise("1.1", "1_1_sum", "A sum", cells)
    >>> mat = SimpleNamespace(spec_for=lambda part: SimpleNamespace(max_points=3.0))      # a stand-in
    >>> result = {"status": "graded", "score": 3.0, "max_score": 3.0, "flags": [],
    ...           "parts": [{"part": "1.1(a)", "verdict": "pass", "points": 3.0, "hints": []}]}
    >>> data = results_json(result, exercise, mat, 4.25)
    >>> data["score"], data["execution_time"], data["tests"][0]["max_score"]
    (3.0, 4.25, 3.0)
    >>> print(data["output"])
    Exercise 1.1 (A sum): 3 of 3 points checked by the grader.
    The written parts are graded by hand (2 points: 1.1(b) written 2).
    >>> results_json(None, exercise, mat, 0.5)["tests"][0]["output"]
    'not graded (see above)'
    """
    from labkit.grading.report import clean
    graded = result is not None and result.get("status") != "not gradable" and not result.get("error")
    parts = {p["part"]: p for p in result["parts"]} if graded else {}
    tests = []
    for k, part in enumerate(exercise.parts, start=1):
        maximum = mat.spec_for(part).max_points
        p = parts.get(part)
        output = (p["verdict"] + "".join(f"\n- {clean(h)}" for h in p["hints"])) if p else "not graded (see above)"
        tests.append({"name": part, "number": str(k), "score": float(p["points"]) if p else 0.0,
                      "max_score": float(maximum), "output": output, "visibility": visibility})
    written = exercise.written_points
    lines = []
    if note:
        lines.append(note)
    if graded:
        lines.append(f"Exercise {exercise.number} ({exercise.title}): {result['score']:g} of {result['max_score']:g} "
                     "points checked by the grader.")
    else:
        why = "no notebook" if result is None else (result.get("error") or result.get("reason"))
        lines.append(f"Exercise {exercise.number} was not graded: {clean(why, 600)}")
    if written:
        lines.append(f"The written parts are graded by hand ({sum(written.values()):g} points: "
                     + ", ".join(f"{slot} {pts:g}" for slot, pts in written.items()) + ").")
    flags = [] if result is None else [f for f in result.get("flags", []) if "same answers as" not in f]
    lines += [f"Note: {clean(f)}" for f in flags]
    score = sum(t["score"] for t in tests)
    return {"score": score, "execution_time": round(seconds, 2), "output": "\n".join(lines),
            "visibility": visibility, "stdout_visibility": "hidden", "tests": tests}


def run(root: str | os.PathLike[str], exercise_number: str, timeout: float = 60.0, budget: float = 600.0,
        memory: int = 2048, visibility: str = "visible", user: str = "student") -> dict[str, Any]:
    """Grade the submission under ``root/submission`` and write ``root/results/results.json``.
    Without bubblewrap, the student's code runs as `user` (see the module's docstring). Once the
    material is loaded, a results.json is written whatever fails.

    Parameters
    ----------
    root : str or path
        Gradescope's ``/autograder`` (the bundle unpacked in ``root/source``).
    exercise_number : str
    timeout, budget : float
        Seconds a cell, and the whole notebook, may take.
    memory : int, default 2048
        MiB.
    visibility : str, default "visible"
    user : str, default "student"

    Returns
    -------
    dict
        The results written (`results_json`).

    Raises
    ------
    labkit.grading.material.MaterialError
        Where ``root/source/instructor`` holds no instructor material.

    Examples
    --------
    Grading needs the bundle unpacked under `root`; without it nothing is graded:

    >>> import tempfile
    >>> from labkit.grading.material import MaterialError
    >>> with tempfile.TemporaryDirectory() as root:
    ...     try:
    ...         run(root, "27.4")
    ...     except MaterialError:
    ...         print("no instructor material under", "source/instructor")
    no instructor material under source/instructor
    """
    from labkit.grading import material
    from labkit.grading.gradebook import write_new
    root = Path(root)
    start = time.monotonic()
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    mat = material.load(root / "source" / "instructor")
    exercise = mat.EXERCISES[exercise_number]
    try:
        from labkit.grading.grader import grade_notebook
        from labkit.grading.sandbox import MIB, Limits, SandboxUnavailable, check_available, check_user
        as_user: str | None = None
        try:
            check_available()
            sandbox = True
        except SandboxUnavailable as exc:
            sandbox = False
            try:
                check_user(user)
                as_user = user
                print(f"labkit autograder: no bubblewrap sandbox here ({exc}); the student's code runs as the "
                      f"unprivileged user {user!r} in the container")
            except SandboxUnavailable as why:
                print(f"labkit autograder: no bubblewrap sandbox here ({exc}), and the student's code cannot run as "
                      f"{user!r} ({why}): the container alone is the sandbox, and the code runs as "
                      f"uid {os.geteuid()}")
        path, note = find_submission(root / "submission", exercise)
        result = None
        if path is not None:
            result = grade_notebook(path, timeout=timeout, exercise=exercise_number, instructor=root / "source" /
                                    "instructor", sandbox=sandbox, budget=budget,
                                    limits=Limits(memory=memory * MIB, user=as_user))
            print(json.dumps({k: result[k] for k in ("status", "score", "max_score", "reason", "seconds")}))
        data = results_json(result, exercise, mat, time.monotonic() - start, note, visibility)
    except Exception:                       # always leave a results.json (Gradescope's advice)
        print(traceback.format_exc())
        data = results_json({"status": "not gradable", "error": "the autograder failed; your instructor has "
                             "been told (see the autograder log)", "parts": [], "flags": []}, exercise, mat,
                            time.monotonic() - start, None, visibility)
    write_new(results_dir / "results.json", json.dumps(data, indent=2) + "\n")
    return data


# ------------------------------------------------------------ command lines


def main(argv: Sequence[str] | None = None) -> int:
    """``labkit-grade gradescope EXERCISE OUT.zip`` (build), or ``... gradescope run --root DIR
    --exercise N`` (what run_autograder calls).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0, or 2 when the bundle cannot be built (the reason on standard error).

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     main(["99.9", os.path.join(folder, "autograder.zip")])         # no such exercise
    2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"]:
        p = argparse.ArgumentParser(prog="labkit-grade gradescope run")
        p.add_argument("--root", default=os.environ.get("AUTOGRADER_ROOT", "/autograder"))
        p.add_argument("--exercise", required=True)
        _limits(p)
        p.add_argument("--visibility", choices=VISIBILITIES, default="visible")
        p.add_argument("--user", default="student", help="without bubblewrap, run the student's code as this user")
        args = p.parse_args(argv[1:])
        run(args.root, args.exercise, args.timeout, args.budget, args.memory, args.visibility, args.user)
        return 0
    p = argparse.ArgumentParser(prog="labkit-grade gradescope",
                                description="Write a Gradescope autograder bundle (zip) for one exercise.")
    p.add_argument("exercise", metavar="EXERCISE", help="the exercise, e.g. 27.4 or L15")
    p.add_argument("out", metavar="OUT.zip", help="the zip to write")
    p.add_argument("--instructor", metavar="DIR", help="folder containing labkit_instructor")
    _limits(p)
    p.add_argument("--visibility", choices=VISIBILITIES, default="visible",
                   help="when students see the per-part results (Gradescope's visibility; default visible)")
    args = p.parse_args(argv)
    from labkit.grading.material import MaterialError
    try:
        names = build(args.exercise, args.out, args.instructor, args.timeout, args.budget, args.memory,
                      args.visibility)
    except (MaterialError, ValueError, OSError) as exc:
        print(f"labkit-grade gradescope: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {len(names)} files (setup.sh, run_autograder, labkit, the hidden checks of "
          f"{args.exercise})")
    return 0


def _limits(p):
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds each cell may run")
    p.add_argument("--budget", type=float, default=600.0, metavar="S", help="seconds the notebook may take")
    p.add_argument("--memory", type=int, default=2048, metavar="MIB", help="MiB of memory the notebook may use")


if __name__ == "__main__":
    sys.exit(main())
