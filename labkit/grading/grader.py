"""Grade submissions: put the student's answer cells into the pristine master, run it in a
fresh kernel, read each check cell's record, and compute the verdicts here.

One submission (`grade_notebook`):

1. read the file's bytes once (the file itself is never opened for writing) and find the
   exercise and the student's answer cells (`labkit.grading.notebooks.extract`);
2. start a kernel in a scratch directory; its environment names a private file that holds a
   fresh random nonce;
3. run the grader's sealing cell (`labkit.grading.reporter.seal` reads and deletes the nonce),
   then the master's setup cells, then for each part the student's answer cells and the
   master's check cell, one cell at a time with a timeout;
4. take the last record of the part among that check cell's outputs whose HMAC (keyed by the
   nonce) is valid, and grade its value with `labkit.grading.checks.grade_part`. A timeout, a
   dead kernel or an output flood in one of a part's cells costs that part; the kernel is
   replaced if needed (with a new nonce, and the setup replayed) and grading goes on.

Many submissions (`grade_paths`) run in parallel through `labkit.experiments.executors`.
"""
from __future__ import annotations

import csv
import os
import secrets
import tempfile
import time
from pathlib import Path

import json

from labkit.grading import material
from labkit.grading.notebooks import NotebookError, extract, graded_cells, read_notebook
from labkit.grading.reporter import NONCE_VARIABLE, RECORD_MIME, SEAL_SOURCE, verify_record

DEFAULT_TIMEOUT = 60.0
SETUP_TIMEOUT = 120.0     # the master's own setup cells (imports) may be slow on a loaded machine


def _record(outputs, nonce, part):
    """The value of the last genuine record of `part` among a check cell's outputs: None if
    there is none, `TAMPERED` if there are records but none carries a valid HMAC."""
    found, seen = None, False
    for out in outputs:
        if out.get("output_type") != "display_data" or RECORD_MIME not in out.get("data", {}):
            continue
        seen = True
        value = verify_record(out["data"][RECORD_MIME], nonce, part)
        if value is not None:
            found = value
    return TAMPERED if seen and found is None else found


TAMPERED = object()


def _failed(part, verdict, message, specs):
    from labkit.grading.checking import PartResult
    return PartResult(part, verdict, 0.0, specs[part].max_points, [message])


def _student_name(path, root):
    """The first folder below the folder given on the command line, else the file's stem."""
    path, root = Path(path), Path(root) if root else None
    if root is not None and root.is_dir():
        rel = path.relative_to(root)
        if len(rel.parts) > 1:
            return rel.parts[0]
    return path.stem


def grade_notebook(path, timeout=DEFAULT_TIMEOUT, exercise=None, student=None, instructor=None):
    """Grade one submission.

    Parameters
    ----------
    path : str or Path
        The submitted .ipynb (read only).
    timeout : float
        Seconds each cell may run.
    exercise : str, optional
        The exercise expected (e.g. "27.4"); a notebook of another exercise is refused.

    Returns
    -------
    dict
        ``{"student", "path", "exercise", "score", "max_score", "parts": [...], "written": [...],
        "error", "seconds"}``; ``error`` is a message for the student when the notebook could
        not be graded (then ``score`` is 0).
    """
    start = time.monotonic()
    mat = material.load(instructor)
    EXERCISES, checks = mat.EXERCISES, mat
    path = Path(path)
    result = {"student": student or path.stem, "path": str(path), "exercise": exercise, "score": 0.0,
              "max_score": 0.0, "parts": [], "written": [], "error": None, "seconds": 0.0}
    try:
        data = path.read_bytes()
        nb = read_notebook(data, path.name)
        submission = extract(nb, EXERCISES, expected=exercise, name=path.name)
    except (OSError, NotebookError) as exc:
        result["error"] = str(exc) if isinstance(exc, NotebookError) else f"cannot read {path}: {exc}"
        if exercise in EXERCISES:
            result["max_score"] = sum(checks.spec_for(p).max_points for p in EXERCISES[exercise].parts)
        result["seconds"] = round(time.monotonic() - start, 2)
        return result
    ex = EXERCISES[submission.exercise]
    result["exercise"] = ex.number
    result["max_score"] = sum(checks.spec_for(p).max_points for p in ex.parts)
    try:
        parts = _run_and_grade(ex, submission, timeout, mat)
    except Exception as exc:     # the kernel would not start, say: report it, grade the others
        result["error"] = f"the grader could not run this notebook ({type(exc).__name__}: {exc})"
        result["seconds"] = round(time.monotonic() - start, 2)
        return result
    result["parts"] = [p.as_dict() for p in parts]
    result["score"] = sum(p.points for p in parts)
    result["max_score"] = sum(p.max_points for p in parts)
    result["written"] = [{"part": slot, "answered": bool(submission.written.get(slot, "").strip())
                          and submission.written.get(slot, "").strip() != "*Write your answer here.*"}
                         for slot in ex.written_slots]
    result["seconds"] = round(time.monotonic() - start, 2)
    return result


def _run_and_grade(exercise, submission, timeout, mat):
    from labkit.grading.runner import KernelRun
    plan = graded_cells(exercise, submission)
    setup_sources = [SEAL_SOURCE] + [src for role, _, src in plan if role == "setup"]
    from labkit.grading.wire import encode_specs
    specs = {p: mat.spec_for(p) for p in exercise.parts}
    sealed_specs = encode_specs(specs)
    nonce = [None]      # a new nonce for every kernel, written where only its sealing cell reads it
    trouble = {}        # part -> (verdict, message) from its answer cells
    results = {}
    with tempfile.TemporaryDirectory(prefix="labkit-grade-") as scratch, \
            tempfile.TemporaryDirectory(prefix="labkit-seal-") as private, \
            KernelRun(timeout, {NONCE_VARIABLE: str(Path(private) / "nonce")}, scratch) as kernel:

        def run_setup():
            nonce[0] = secrets.token_hex(16)
            _write_private(Path(private) / "nonce", json.dumps({"nonce": nonce[0], "specs": sealed_specs}))
            for src in setup_sources:
                run = kernel.run(src, timeout=max(timeout, SETUP_TIMEOUT))
                if run.status != "ok":
                    raise RuntimeError(f"the exercise's setup cell failed in the grader: {run.error}")

        run_setup()
        for role, part, source in plan:
            if role == "setup":
                continue
            if role == "check" and part in trouble and trouble[part][0] != "error":
                results[part] = _failed(part, *trouble[part], specs)      # not worth running
                continue
            restarts = kernel.restarts
            run = kernel.run(source)
            if role == "answer":
                if run.status in ("timeout", "dead", "flood") and part not in trouble:
                    verdict = {"timeout": "timeout", "dead": "kernel-died", "flood": "output-flood"}[run.status]
                    trouble[part] = (verdict, f"your answer cell: {run.error}")
                elif run.status == "error" and part not in trouble:
                    trouble[part] = ("error", f"your answer cell raised {run.error}")
            else:
                results[part] = _grade_check(part, run, nonce[0], trouble.get(part), mat)
            if kernel.restarts != restarts:
                run_setup()
    return [results[p] for p in exercise.parts]


def _write_private(path, text):
    """Write a file that nothing planted beforehand can redirect: remove whatever is at the path
    (a symlink left by a student's code, say), then create it exclusively, without following links."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(text)


def _grade_check(part, run, nonce, trouble, mat):
    specs = mat.SPECS
    if trouble and trouble[0] != "error":
        return _failed(part, trouble[0], trouble[1], specs)
    if run.status in ("timeout", "dead", "flood"):
        verdict = {"timeout": "timeout", "dead": "kernel-died", "flood": "output-flood"}[run.status]
        return _failed(part, verdict, f"the check ({run.error}) -- is one of your functions slow or printing a lot?",
                       specs)
    value = _record(run.outputs, nonce, part)
    if value is TAMPERED:
        return _failed(part, "tampered", "the record of your answer was altered inside the kernel "
                                         "(an answer cell patches json, the display system or the reporter)", specs)
    if value is None:
        why = f"the check cell raised {run.error}" if run.error else "the check cell reported nothing"
        return _failed(part, "missing", f"no answer was recorded: {why}", specs)
    graded = mat.grade_part(part, value)
    if trouble:
        graded.hints.insert(0, trouble[1])
    return graded


# -------------------------------------------------------------------- many


def find_notebooks(paths):
    """(notebook path, root given) for every .ipynb under the given files and folders, sorted;
    checkpoint copies are skipped."""
    found = []
    for p in map(Path, paths):
        if p.is_dir():
            found += [(f, p) for f in sorted(p.rglob("*.ipynb")) if ".ipynb_checkpoints" not in f.parts]
        else:
            found.append((p, None))
    return found


def _grade_unit(unit):
    path, root, timeout, exercise, instructor = unit
    return grade_notebook(path, timeout=timeout, exercise=exercise, student=_student_name(path, root),
                          instructor=instructor)


def grade_paths(paths, timeout=DEFAULT_TIMEOUT, exercise=None, executor=None, progress=False, instructor=None):
    """Grade every notebook under `paths`, in parallel.

    Parameters
    ----------
    executor : None, "serial", int or an executor
        As in `labkit.experiments.executors.resolve_executor`: None for a process pool with
        one worker per core, an int for that many processes, or any object with
        ``submit`` (``concurrent.futures``, or a Dask cluster's ``client.get_executor()``).

    Returns
    -------
    list of dict, one per notebook (see `grade_notebook`), in path order.
    """
    from labkit.experiments.executors import run_units
    instructor = str(instructor) if instructor is not None else None
    units = [(str(p), str(root) if root else None, timeout, exercise, instructor)
             for p, root in find_notebooks(paths)]
    if not units:
        return []
    return run_units(_grade_unit, units, executor=executor, progress=progress, desc="grading")


# -------------------------------------------------------------------- reports


def format_table(results):
    """A text table: one block per submission, one line per part, then the total."""
    lines = []
    for r in results:
        head = f"{r['student']}  ({r['path']})"
        lines.append(head)
        if r["error"]:
            lines.append(f"  not graded: {r['error']}")
            lines.append(f"  total  0/{r['max_score']:g}")
            lines.append("")
            continue
        lines.append(f"  exercise {r['exercise']}")
        for p in r["parts"]:
            lines.append(f"  {p['part']:<9} {p['verdict']:<12} {p['points']:>4g}/{p['max_points']:<4g}")
            for hint in p["hints"]:
                lines.append(f"      {hint}")
        for w in r["written"]:
            lines.append(f"  {w['part']:<18} {'answered' if w['answered'] else 'blank':<12} (graded by hand)")
        lines.append(f"  total  {r['score']:g}/{r['max_score']:g}")
        lines.append("")
    if len(results) > 1:
        graded = [r for r in results if not r["error"]]
        share = sum(r["score"] / r["max_score"] for r in graded if r["max_score"]) / max(len(graded), 1)
        lines.append(f"{len(results)} notebooks: {len(graded)} graded (mean {100 * share:.0f}% of the points), "
                     f"{len(results) - len(graded)} not graded")
    return "\n".join(lines).rstrip() + "\n"


def write_csv(results, path):
    """One row per submission: student, path, exercise, score, max_score, one column per part, error."""
    part_names = []
    for r in results:
        for p in r["parts"]:
            if p["part"] not in part_names:
                part_names.append(p["part"])
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "path", "exercise", "score", "max_score", *part_names, "error"])
        for r in results:
            points = {p["part"]: p["points"] for p in r["parts"]}
            writer.writerow([r["student"], r["path"], r["exercise"] or "", f"{r['score']:g}", f"{r['max_score']:g}",
                             *(f"{points[n]:g}" if n in points else "" for n in part_names), r["error"] or ""])


def json_ready(results):
    """The machine-readable form: one dict for one submission, a list for several."""
    return results[0] if len(results) == 1 else results
