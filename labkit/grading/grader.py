"""Grade submissions: put the student's answer cells into the pristine master, run it in a
sandboxed kernel, read each check cell's record, and compute the verdicts here.

One submission (`grade_intake`, or `grade_notebook` for a path):

1. read the file's bytes once, safely (`labkit.grading.intake`: regular files under a size cap,
   no symlink followed), find the exercise and the student's answer cells;
2. build the job: the master's cells with the answers in place (at most `MAX_ANSWER_CELLS`
   cells per slot; extra cells are joined into the last one) and one seal per kernel the driver
   may start (a fresh random nonce and the part specifications with the hidden probes);
3. run it with `labkit.grading.sandbox.run_driver`: the kernel and its driver in a fresh
   bubblewrap sandbox (or, with ``sandbox=False``, as a plain child process). Time is *charged*
   (`labkit.grading.cpuclock`: CPU seconds, or seconds asleep, never seconds spent waiting for a
   CPU the machine gave to others), so a notebook earns the same grade at any load: each cell has
   ``timeout`` charged seconds, the notebook ``budget``; the wall clock is a safety net of
   `WALL_FACTOR` times that, and a cell it stops on a busy machine is run once more;
4. from the driver's events, take for each part the last record among its check cell's outputs
   whose HMAC (keyed by that kernel's nonce) is valid, and grade its value with the hidden
   checks (``labkit_instructor.grade_part``) in this process. A timeout, a dead kernel, an
   output flood or the end of the budget costs the parts it touches; nothing a submission does
   can stop the grading of the others. A part the machine was too busy to time fairly, even
   on the second try, gets the verdict "busy": the row is not final (``"final": False``), and
   ``labkit-grade --resume`` grades it again.

Many submissions (`grade_paths`) are listed first (each gets its ids from its path:
`labkit.grading.identity`), then read, parsed and graded by the workers -- threads, each
waiting on its own sandbox, or any ``concurrent.futures``-style executor -- so that one huge
file does not hold up the others; ``on_result`` sees every result as soon as it is ready, and a
`labkit.grading.journal.Journal` keeps it and lets a later run skip it. Copies (the same
answers in two notebooks) are found once every notebook is read and reported to the instructor
only (``similar_to``). Ctrl-C stops every sandbox at once and raises `GradingInterrupted`
with the results finished so far.
"""
from __future__ import annotations

import concurrent.futures as cf
import functools
import secrets
import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from labkit.grading import material as _material
from labkit.grading.checking import PartResult
from labkit.grading.feedback import code_by_part
from labkit.grading.identity import display_name, ids_for, make_id
from labkit.grading.intake import Intake, find_notebooks, read_bytes, similar_groups, take_in, take_in_bytes
from labkit.grading.manual import written_entries
from labkit.grading.notebooks import NotebookError, Submission, graded_cells
from labkit.grading.reporter import verify_record
from labkit.grading.report import format_table, json_ready, write_csv  # noqa: F401  (public names)

if TYPE_CHECKING:
    from labkit.grading.sandbox import Limits

DEFAULT_TIMEOUT = 60.0        # charged seconds (see labkit.grading.cpuclock) each cell may use
DEFAULT_BUDGET = 600.0        # charged seconds one notebook may use in all
SETUP_TIMEOUT = 120.0         # the master's own setup cells (imports)
MAX_ANSWER_CELLS = 10         # cells of one answer slot run one by one; more are joined into the last
TIMED_CHECK_FACTOR = 2.0      # a timed probe call may take twice its budget before its check cell times out
MAX_KERNELS = 8               # kernels one notebook may use (a kernel is replaced when it dies or hangs)
WALL_FACTOR = 10.0            # the whole run's safety net: this many times the budget on the wall clock ...
STARTUP_ALLOWANCE = 60.0      # ... plus this many seconds

VERDICT_OF = {"timeout": "timeout", "dead": "kernel-died", "flood": "output-flood", "budget": "budget",
              "busy": "busy"}
OUT_OF_MEMORY = "out-of-memory"
BUSY = "busy"
NOT_GRADABLE, GRADED, FLAGGED = "not gradable", "graded", "flagged"
TAMPERED = object()


class GradingInterrupted(KeyboardInterrupt):
    """Grading was stopped (Ctrl-C, SIGTERM).

    Parameters
    ----------
    results : list
        One entry per notebook, None for those not finished.

    Examples
    --------
    >>> stopped = GradingInterrupted([{"student": "ann"}, None])
    >>> isinstance(stopped, KeyboardInterrupt), stopped.results[1]
    (True, None)
    """

    def __init__(self, results: list[Any]):
        super().__init__("grading interrupted")
        self.results = results


def _printable(path):
    """A path as text that can be written anywhere (a name that is not UTF-8 escaped)."""
    text = str(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return display_name(text)


def _blank_result(intake, mat):
    """A not-gradable row: no score at all (None, never 0: a 0 in a gradebook is a failing
    grade), and the exercise's maximum when the exercise is known (None otherwise)."""
    ex = mat.EXERCISES.get(intake.exercise) if intake.exercise else None
    return {"student": intake.student, "student_id": intake.student_id, "submission_id": intake.submission_id,
            "path": _printable(intake.path), "exercise": intake.exercise, "status": NOT_GRADABLE, "reason": None,
            "score": None, "max_score": sum(mat.spec_for(p).max_points for p in ex.parts) if ex else None,
            "parts": [], "written": written_entries(ex, {}) if ex else [], "error": None,
            "flags": list(intake.flags), "seconds": 0.0,
            "sha256": intake.sha256, "fingerprint": intake.fingerprint, "similar_to": [], "final": True,
            "cpu_seconds": None, "retried": 0}


def is_final(result: dict[str, Any]) -> bool:
    """Whether a result is a grade: not a part the machine was too busy to time, not a failure
    of the grader itself (both are graded again by ``--resume``).

    Parameters
    ----------
    result : dict
        A notebook's result (`grade_notebook`).

    Returns
    -------
    bool

    Examples
    --------
    >>> is_final({"score": 3}), is_final({"score": 2, "final": False})
    (True, False)
    """
    return bool(result.get("final", True))


def grade_notebook(path: str | os.PathLike[str], timeout: float = DEFAULT_TIMEOUT, exercise: str | None = None,
                   student: str | None = None, instructor: str | os.PathLike[str] | None = None,
                   sandbox: bool = True, budget: float = DEFAULT_BUDGET,
                   limits: Limits | None = None) -> dict[str, Any]:
    """Grade one submission.

    Parameters
    ----------
    path : str or Path
        The submitted .ipynb (read only, never followed if it is a link).
    timeout : float
        Charged seconds each cell may use: CPU time, or time asleep, never time spent waiting
        for a CPU (`labkit.grading.cpuclock`).
    exercise : str, optional
        The exercise expected (e.g. "27.4"); a notebook of another exercise is refused.
    student : str, optional
        The student's name (default: the file's stem); the ids are made from it.
    instructor : str or Path, optional
        Folder containing ``labkit_instructor`` (default: the installed distribution).
    sandbox : bool
        Run the kernel in a bubblewrap sandbox (default); False runs it as a plain process.
    budget : float
        Charged seconds the whole notebook may use.
    limits : labkit.grading.sandbox.Limits, optional
        Memory, process, CPU and file limits of the sandbox (default `sandbox.DEFAULT_LIMITS`).

    Returns
    -------
    dict
        ``{"student", "student_id", "submission_id", "path", "exercise", "status", "reason",
        "score", "max_score", "parts": [...], "written": [...], "code", "error", "flags",
        "seconds", "sha256", "fingerprint", "similar_to", "final", "cpu_seconds", "retried"}``.
        ``status`` is "graded", "flagged" (graded, but see ``flags``) or "not gradable" (then
        ``error`` says why, for the student, ``score`` is None and ``max_score`` the exercise's
        maximum, or None when the notebook does not say which exercise it is). ``written`` lists
        the hand-graded parts (``part``, ``answered``, ``max_points``, ``text``; see
        `labkit.grading.manual`), ``code`` the student's answer cells per part. ``final`` is
        False when a part could not be timed fairly on a busy machine (verdict "busy") or the
        grader failed (then also ``"grader_failed": True``: the grader's fault, not the
        notebook's); ``similar_to`` (filled by `grade_paths`) names the submissions with the same
        answers; ``cpu_seconds`` is the sandbox's CPU time (with a control group), ``retried``
        the number of cells run again after a busy machine stopped them.

    Raises
    ------
    labkit.grading.material.MaterialError
        Where the instructor material cannot be found.
    labkit.grading.sandbox.SandboxUnavailable
        With ``sandbox=True``, where no sandbox can run (not a grade: nothing is graded).

    Examples
    --------
    A file that is not a notebook is not gradable, with a message for the student (nothing is run):

    >>> import os, tempfile
    >>> from labkit.grading import material
    >>> try:                                       # the instructor material, where it is installed
    ...     _ = material.load()
    ...     have_material = True
    ... except material.MaterialError:
    ...     have_material = False
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "27_4.ipynb")
    ...     _ = open(path, "w").write("not json")
    ...     result = grade_notebook(path, sandbox=False, student="ann") if have_material else None
    >>> print(result["status"], "|", result["error"]) if have_material else print(
    ...     "not gradable | 27_4.ipynb is not a Jupyter notebook: its JSON is broken at line 1, column 1 "
    ...     "(Expecting value)")
    not gradable | 27_4.ipynb is not a Jupyter notebook: its JSON is broken at line 1, column 1 (Expecting value)
    """
    mat = _material.load(instructor)
    path = Path(path)
    ids = ids_for([(path, None)])[path]
    name = student or ids[0]
    intake = take_in(path, name, mat.EXERCISES, expected=exercise, student_id=make_id(name) if student else ids[1],
                     submission_id=make_id(name) if student else ids[2])
    return grade_intake(intake, mat, timeout=timeout, sandbox=sandbox, budget=budget, limits=limits)


def grade_intake(intake: Intake, mat: Any, timeout: float = DEFAULT_TIMEOUT, sandbox: bool = True,
                 budget: float = DEFAULT_BUDGET, limits: Limits | None = None) -> dict[str, Any]:
    """Grade a submission already read (`labkit.grading.intake.take_in`).

    Parameters
    ----------
    intake : labkit.grading.intake.Intake
    mat : module
        The instructor material (`labkit.grading.material.load`).
    timeout, sandbox, budget, limits
        As for `grade_notebook`.

    Returns
    -------
    dict
        The result (`grade_notebook`). A failure of the grader itself is reported in it
        (``"grader_failed": True``, not final), never raised.

    Raises
    ------
    labkit.grading.sandbox.SandboxUnavailable
        With ``sandbox=True``, where no sandbox can run.

    Examples
    --------
    An unreadable submission is not gradable, and scores None (never 0):

    >>> import types
    >>> no_exercises = types.SimpleNamespace(EXERCISES={})            # a stand-in for the material
    >>> intake = Intake("bob.ipynb", "bob", error="bob.ipynb is a FIFO, not a notebook file")
    >>> result = grade_intake(intake, no_exercises)
    >>> result["status"], result["score"], result["error"]
    ('not gradable', None, 'bob.ipynb is a FIFO, not a notebook file')
    """
    from labkit.grading.sandbox import SandboxUnavailable
    start = time.monotonic()
    result = _blank_result(intake, mat)
    if intake.error:
        result["error"] = result["reason"] = intake.error
        return result
    ex = mat.EXERCISES[intake.exercise]
    submission = Submission(cast(str, intake.exercise), intake.answers, intake.written)
    try:
        parts, notes, run = _run_and_grade(ex, submission, timeout, mat, sandbox, budget, limits)
    except SandboxUnavailable:         # not this notebook's fault, nor a grade: the caller must know
        raise
    except Exception as exc:       # the sandbox would not start, say: report it, grade the others
        result["error"] = result["reason"] = f"the grader could not run this notebook ({type(exc).__name__}: {exc})"
        result["grader_failed"] = True
        result["seconds"] = round(time.monotonic() - start, 2)
        result["final"] = False
        return result
    result["flags"] += notes
    result["cpu_seconds"] = None if run.cpu_seconds is None else round(run.cpu_seconds, 2)
    result["retried"] = sum(1 for e in run.events if e.get("event") == "cell" and e.get("retried") is True)
    busy = [p.part for p in parts if p.verdict == BUSY]
    if busy:
        result["final"] = False
        result["flags"].append(f"{', '.join(busy)} could not be timed fairly: the machine was too busy; "
                               "these parts will be graded again")
    result["parts"] = [p.as_dict() for p in parts]
    result["score"] = sum(p.points for p in parts)
    result["max_score"] = sum(p.max_points for p in parts)
    result["written"] = written_entries(ex, submission.written)      # text, answered, max_points
    result["code"] = code_by_part(ex, submission.answers)             # for the feedback file
    result["status"] = FLAGGED if result["flags"] else GRADED
    result["reason"] = "; ".join(result["flags"]) or None
    result["seconds"] = round(time.monotonic() - start, 2)
    return result


def _capped(submission, notes):
    """The answers with at most `MAX_ANSWER_CELLS` cells per slot (the extra ones joined)."""
    answers = {}
    for slot, sources in submission.answers.items():
        if len(sources) > MAX_ANSWER_CELLS:
            notes.append(f"{slot} has {len(sources)} answer cells; cells {MAX_ANSWER_CELLS} to {len(sources)} "
                         "ran as one cell")
            sources = sources[:MAX_ANSWER_CELLS - 1] + ["\n\n".join(sources[MAX_ANSWER_CELLS - 1:])]
        answers[slot] = sources
    return Submission(submission.exercise, answers, submission.written)


def _run_and_grade(exercise, submission, timeout, mat, sandbox, budget, limits):
    from labkit.grading.sandbox import DEFAULT_LIMITS, run_driver
    notes = []
    plan = graded_cells(exercise, _capped(submission, notes))
    specs = {p: mat.spec_for(p) for p in exercise.parts}
    job, nonces = build_job(plan, specs, timeout, budget, _encoded_specs(exercise, specs))
    run = run_driver(job, sandbox=sandbox, limits=limits or DEFAULT_LIMITS, hidden=[_material.location(mat)],
                     wall=WALL_FACTOR * (budget + job["setup_timeout"]) + STARTUP_ALLOWANCE)
    if run.note == "stopped":
        raise GradingInterrupted([])
    return _verdicts(plan, run, nonces, specs, mat), notes, run


_encoded: dict = {}


def _encoded_specs(exercise, specs):
    """The part specifications with their probes encoded for the kernel, once per exercise in
    this process (shared by every submission and worker thread: ~1.3 MB for Lab 15)."""
    key = (exercise.number, tuple(map(id, specs.values())))
    if key not in _encoded:
        from labkit.grading.wire import encode_specs
        _encoded[key] = (tuple(specs.values()), encode_specs(specs))     # the specs kept alive: ids stay theirs
    return _encoded[key][1]


def build_job(plan: list[tuple[str, str | None, str]], specs: dict[str, Any], timeout: float, budget: float,
              sealed_specs: Any) -> tuple[dict[str, Any], list[str]]:
    """(the driver's job, the nonces): the cells, the timeouts, one copy of the encoded part
    specifications and one fresh nonce per kernel the driver may start (`MAX_KERNELS`); the
    driver pairs the specifications with each kernel's nonce when it writes that kernel's seal.

    Parameters
    ----------
    plan : list of (role, part, source)
        The master's cells with the answers in place.
    specs : dict
        {part: `labkit.grading.checking.PartSpec`}; timed parts' check cells get more time.
    timeout, budget : float
        Charged seconds per cell and for the notebook.
    sealed_specs : object
        The specifications encoded for the kernel (`labkit.grading.wire.encode_specs`).

    Returns
    -------
    (dict, list of str)

    Examples
    --------
    >>> job, nonces = build_job([("setup", None, "import labkit"), ("answer", "a", "x = 1")], {}, 10, 100, "specs")
    >>> sorted(job), len(nonces), job["setup_timeout"]
    (['budget', 'cells', 'seals', 'setup_timeout', 'specs', 'timeout', 'timeouts'], 8, 120.0)
    """
    nonces = [secrets.token_hex(16) for _ in range(MAX_KERNELS)]
    job = {"cells": [list(c) for c in plan], "timeout": timeout, "setup_timeout": max(timeout, SETUP_TIMEOUT),
           "budget": budget, "timeouts": _check_timeouts(plan, specs, timeout), "specs": sealed_specs,
           "seals": [{"nonce": n} for n in nonces]}
    return job, nonces


def _check_timeouts(plan, specs, timeout):
    """{index: seconds} for the check cells of parts whose probe calls are timed: long enough
    for every timed call to run its repeats at `TIMED_CHECK_FACTOR` times its budget, so that a
    slow answer is told it is slow (and by how much) rather than that its check timed out."""
    out = {}
    for index, (role, part, _source) in enumerate(plan):
        timing = getattr(specs.get(part), "timing", None) if role == "check" else None
        if timing:
            needed = sum(TIMED_CHECK_FACTOR * budget * repeats * len(specs[part].probes[name])
                         for name, (budget, repeats) in timing.items())
            if needed > timeout:
                out[str(index)] = needed
    return out


def _cell_events(events, count):
    """The first event the driver sent for each cell index (later ones, which student code
    could write, are ignored), and the first fatal error. Each kept event gains ``oom`` and
    ``forks_refused``: how many processes the OOM killer ended, and how many forks the process
    limit refused, since the event before it (from the sandbox's stamps; 0 without them)."""
    from labkit.grading.sandbox import SANDBOX_KEY
    cells, fatal, seen = {}, None, (0, 0)
    for e in events:
        stamp = e.get(SANDBOX_KEY) or {}
        now = (stamp.get("oom_kills", seen[0]), stamp.get("process_limit_hits", seen[1]))
        delta, seen = (now[0] - seen[0], now[1] - seen[1]), now
        kind, index = e.get("event"), e.get("index")
        if kind == "cell" and isinstance(index, int) and 0 <= index < count and index not in cells \
                and isinstance(e.get("status"), str):
            cells[index] = {**e, "oom": delta[0], "forks_refused": delta[1]}
        elif kind == "fatal" and fatal is None:
            fatal = _Fatal(str(e.get("error"))[:500], e.get("busy") is True)
            if delta[0]:                 # the setup ran out of memory: no part ran
                seen = (seen[0] - delta[0], seen[1])
    return cells, fatal, seen


def _memory_limit(run):
    return f"memory limit of {run.memory // 2 ** 20} MiB reached" if run.memory else "memory limit reached"


def _process_note(run, event):
    """A note when forks were refused at the sandbox's process limit during a cell that failed."""
    if event.get("forks_refused") and event["status"] != "ok":
        return f" (process limit of {run.processes} tasks reached)"
    return ""


class _Fatal(str):
    """The driver's fatal error; ``busy`` when a busy machine, not the notebook, stopped the setup."""

    def __new__(cls, text, busy=False):
        self = super().__new__(cls, text)
        self.busy = busy
        return self


def _stopped_reason(run, fatal, unexplained_oom=0):
    if unexplained_oom:
        return OUT_OF_MEMORY, f"the notebook stopped before this part: {_memory_limit(run)}"
    if fatal and getattr(fatal, "busy", False):
        return BUSY, f"the machine was too busy to run the exercise's setup ({fatal})"
    if fatal:
        return "kernel-died", f"the notebook could not go on: {fatal}"
    if run.note == "wall" and run.busy:
        return BUSY, "the machine was too busy to run the notebook to this part in time"
    if run.note == "wall":
        return "budget", "the notebook took too long on the clock before this part (sleeping or waiting?)"
    if run.note == "stream":
        return "output-flood", "the notebook sent more output than the grader reads"
    if not run.events and run.stderr.strip():        # it never started: say why, for the instructor
        return "kernel-died", f"the sandbox stopped at once ({run.stderr.strip().splitlines()[-1][:300]})"
    if run.process_limit_hits:
        return "kernel-died", f"the sandbox ended before this part (process limit of {run.processes} tasks reached)"
    return "kernel-died", "the sandbox ended before this part (out of memory, or a process limit?)"


def _verdicts(plan, run, nonces, specs, mat):
    cells, fatal, (counted_oom, _) = _cell_events(run.events, len(plan))
    # after the last cell (or in the setup): it ended the run
    unexplained = max(run.oom_kills - counted_oom, 0)
    trouble, results = {}, {}
    for index, (role, part, _source) in enumerate(plan):
        if role == "setup":
            continue
        event = cells.get(index)
        if role == "answer":
            if part in trouble:
                continue
            if event is None:
                trouble[part] = _stopped_reason(run, fatal, unexplained)
            elif event["oom"]:
                trouble[part] = (OUT_OF_MEMORY, f"your answer cell: {_memory_limit(run)} (by all the notebook's "
                                                "processes together; the grader ended one of them)")
            elif event["status"] in VERDICT_OF:
                message = event.get("error") or "the time budget of the notebook was used up before this cell"
                trouble[part] = (VERDICT_OF[event["status"]],
                                 f"your answer cell: {message}{_process_note(run, event)}")
            elif event["status"] == "error":
                trouble[part] = ("error", f"your answer cell raised {event.get('error')}{_process_note(run, event)}")
            continue
        results[part] = _grade_check(part, event, trouble.get(part), nonces, specs, mat, run, fatal, unexplained)
    return [results[p] for p in specs]


def _failed(part, verdict, message, specs):
    return PartResult(part, verdict, 0.0, specs[part].max_points, [message])


def _record(records, nonce, part):
    """The value of the last genuine record of `part`: None if there is none, `TAMPERED` if
    there are records but none carries a valid HMAC."""
    found, seen = None, False
    for data in records if isinstance(records, list) else []:
        seen = True
        value = verify_record(data, nonce, part)
        if value is not None:
            found = value
    return TAMPERED if seen and found is None else found


def _grade_check(part, event, trouble, nonces, specs, mat, run, fatal, unexplained_oom=0):
    if trouble and trouble[0] != "error":
        return _failed(part, trouble[0], trouble[1], specs)
    if event is None:
        return _failed(part, *_stopped_reason(run, fatal, unexplained_oom), specs)
    if event["oom"]:
        return _failed(part, OUT_OF_MEMORY, f"the check: {_memory_limit(run)} while it evaluated your answer "
                                            "-- do your functions build very large arrays?", specs)
    status = event["status"]
    if status == "busy":
        return _failed(part, BUSY, f"the check: {event.get('error')}", specs)
    if status in VERDICT_OF:
        message = event.get("error") or "the time budget of the notebook was used up before the check"
        return _failed(part, VERDICT_OF[status], f"the check ({message}) -- is one of your functions slow or "
                                                 "printing a lot?", specs)
    generation = event.get("generation")
    nonce = nonces[generation] if isinstance(generation, int) and 0 <= generation < len(nonces) else None
    value = _record(event.get("records"), nonce, part) if nonce else None
    if value is TAMPERED:
        return _failed(part, "tampered", "the record of your answer was altered inside the kernel "
                                         "(an answer cell patches json, the display system or the reporter)", specs)
    if value is None:
        why = f"the check cell raised {event.get('error')}" if event.get("error") else "the check cell reported nothing"
        return _failed(part, "missing", f"no answer was recorded: {why}", specs)
    graded = mat.grade_part(part, value)
    if trouble:
        graded.hints.insert(0, trouble[1])
    return graded


# -------------------------------------------------------------------- many


def listing(paths: Iterable[str | os.PathLike[str]], exercises: Mapping[str, Any] | None = None) -> list[Intake]:
    """Every notebook under `paths`, not yet read: `Intake` s with the path and the ids
    (`labkit.grading.identity.ids_for`), in path order.

    Parameters
    ----------
    paths : iterable of str or path
        Notebooks and folders.
    exercises : mapping, optional
        {number: Exercise}: tells assignment folders from students' folders.

    Returns
    -------
    list of labkit.grading.intake.Intake

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     os.makedirs(os.path.join(folder, "ann"))
    ...     _ = open(os.path.join(folder, "ann", "27_4.ipynb"), "w").write("{}")
    ...     print([(entry.student, os.path.basename(entry.path)) for entry in listing([folder])])
    [('ann', '27_4.ipynb')]
    """
    found = find_notebooks(paths)
    ids = ids_for(found, exercises)
    entries = []
    for path, _root in found:
        student, student_id, submission_id = ids[Path(path)]
        entries.append(Intake(str(path), student, student_id=student_id, submission_id=submission_id))
    return entries


def take_in_all(paths: Iterable[str | os.PathLike[str]], mat: Any, exercise: str | None = None) -> list[Intake]:
    """Read every notebook under `paths` at once (`labkit.grading.intake.take_in`); `grade_paths`
    reads them in its workers instead.

    Parameters
    ----------
    paths : iterable of str or path
    mat : module
        The instructor material (its ``EXERCISES``).
    exercise : str, optional
        The exercise expected.

    Returns
    -------
    list of labkit.grading.intake.Intake

    Examples
    --------
    >>> import os, tempfile, types
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     os.makedirs(os.path.join(folder, "ann"))
    ...     _ = open(os.path.join(folder, "ann", "27_4.ipynb"), "w").write("not json")
    ...     intakes = take_in_all([folder], types.SimpleNamespace(EXERCISES={}))
    >>> [(intake.student, intake.error[:35]) for intake in intakes]
    [('ann', '27_4.ipynb is not a Jupyter noteboo')]
    """
    return [take_in(i.path, i.student, mat.EXERCISES, expected=exercise, student_id=i.student_id,
                    submission_id=i.submission_id) for i in listing(paths, mat.EXERCISES)]


def _grade_unit(unit):
    """Read, parse and grade one listed notebook (in a worker); a notebook the journal already
    holds with the same content is not graded again. A notebook already read (``read`` True:
    `grade_paths` with ``on_read``) is graded as it is."""
    entry, options, read = unit
    options = dict(options)
    mat = _material.load(options.pop("instructor"))
    journal, expected = options.pop("journal"), options.pop("exercise")
    if read:
        kept = journal.cached(entry.submission_id, entry.sha256) if journal is not None and not entry.error else None
        if kept is not None:
            kept["resumed"] = True
            return kept
        return grade_intake(entry, mat, **options)
    intake = Intake(entry.path, entry.student, student_id=entry.student_id, submission_id=entry.submission_id)
    try:
        data = read_bytes(entry.path)
    except NotebookError as exc:
        intake.error = str(exc)
        intake.exercise = expected if expected in mat.EXERCISES else None
        return grade_intake(intake, mat, **options)
    kept = journal.cached(entry.submission_id, _sha256(data)) if journal is not None else None
    if kept is not None:
        kept["resumed"] = True
        return kept
    return grade_intake(take_in_bytes(data, intake, mat.EXERCISES, expected), mat, **options)


def _read_unit(unit):
    """Read and parse one listed notebook (in a worker): its `Intake`, with ``error`` set when it
    cannot be read."""
    entry, options = unit
    mat = _material.load(options["instructor"])
    expected = options["exercise"]
    intake = Intake(entry.path, entry.student, student_id=entry.student_id, submission_id=entry.submission_id)
    try:
        data = read_bytes(entry.path)
    except NotebookError as exc:
        intake.error = str(exc)
        intake.exercise = expected if expected in mat.EXERCISES else None
        return intake
    return take_in_bytes(data, intake, mat.EXERCISES, expected)


def _sha256(data):
    import hashlib
    return hashlib.sha256(data).hexdigest()


def finish(results: list[Any], mat: Any) -> list[Any]:
    """What can only be said once every notebook is read, added to the results in place:
    copies of one another (``similar_to``: the other submissions' ids, and status "flagged";
    for the instructor only), and, in a class of one exercise, that exercise's maximum for the
    notebooks that could not be read.

    Parameters
    ----------
    results : list of dict or None
        None for a notebook not finished.
    mat : module
        The instructor material.

    Returns
    -------
    list
        `results`.

    Examples
    --------
    >>> import types
    >>> results = [{"submission_id": s, "status": "graded", "exercise": "27.4", "fingerprint": "f"} for s in "ab"]
    >>> [(r["status"], r["similar_to"]) for r in finish(results, types.SimpleNamespace(EXERCISES={}))]
    [('flagged', ['b']), ('flagged', ['a'])]
    """
    done = [r for r in results if r is not None]
    for r in done:
        r["similar_to"] = []
    for group in similar_groups([r for r in done if r.get("status") != NOT_GRADABLE]):
        for r in group:
            r["similar_to"] = sorted(o["submission_id"] for o in group if o is not r)
            r["status"] = FLAGGED
    numbers = {r["exercise"] for r in done if r.get("exercise")}
    if len(numbers) == 1:
        number = next(iter(numbers))
        ex = mat.EXERCISES.get(number)
        for r in done:
            if r.get("status") == NOT_GRADABLE and not r.get("exercise") and ex is not None:
                r["exercise"] = number
                r["max_score"] = sum(mat.spec_for(p).max_points for p in ex.parts)
                r["written"] = written_entries(ex, {})
    return results


def grade_paths(paths: Iterable[str | os.PathLike[str]], timeout: float = DEFAULT_TIMEOUT, exercise: str | None = None,
                executor: Any = None, progress: bool = False, instructor: str | os.PathLike[str] | None = None,
                sandbox: bool = True, budget: float = DEFAULT_BUDGET, limits: Limits | None = None,
                on_start: Callable[[list[Intake]], Any] | None = None,
                on_result: Callable[[dict[str, Any]], Any] | None = None, journal: Any = None,
                on_read: Callable[[list[Intake]], Any] | None = None) -> list[Any]:
    """Grade every notebook under `paths`, in parallel.

    Parameters
    ----------
    paths : iterable of str or path
        Notebooks and folders (`labkit.grading.intake.find_notebooks`).
    timeout, exercise, instructor, sandbox, budget, limits
        As for `grade_notebook`.
    executor : None, "serial", int or an executor
        None: one thread per core; "serial" or 1: one at a time in this thread; an int: that
        many threads (each waits on its own sandboxed process, so threads are enough); or any
        object with ``submit`` (``concurrent.futures``, a Dask cluster's
        ``client.get_executor()``).
    progress : bool
        A progress bar over the class (tqdm, on stderr).
    on_start : callable, optional
        Called with the list of notebooks found (`Intake` s with their path and ids, not yet
        read) before grading starts.
    on_read : callable, optional
        Given, every notebook is read first (by the workers, side by side), then this is called
        with the list of `Intake` s as read (their exercise known) before any is graded; it may
        make some not gradable in place (`labkit.grading.lms.refuse_wrong_exercise`: a notebook
        handed in for another exercise). Without it, each worker reads its notebook just before
        grading it, so that one huge file does not hold up the others.
    on_result : callable, optional
        Called with each result as soon as it is ready, in the order they finish (write a
        feedback file, say); an exception it raises stops the run (and is raised, with the
        results finished so far as its ``results``).
    journal : labkit.grading.journal.Journal, optional
        Records each result as it is ready; notebooks it already holds, unchanged and final,
        are not graded again (their kept result is used, with ``"resumed": True``).

    Returns
    -------
    list of dict, one per notebook (see `grade_notebook`), in path order, with the findings of
    `finish`.

    Raises
    ------
    GradingInterrupted
        On Ctrl-C (KeyboardInterrupt in this thread): every sandbox is stopped, and the
        exception's ``results`` hold the finished results (None for the others).
    labkit.grading.material.MaterialError, labkit.grading.sandbox.SandboxUnavailable
        As for `grade_notebook`.

    Examples
    --------
    >>> import os, tempfile
    >>> from labkit.grading import material
    >>> try:                                       # the instructor material, where it is installed
    ...     _ = material.load()
    ...     have_material = True
    ... except material.MaterialError:
    ...     have_material = False
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     for student in ("ann", "bob"):
    ...         os.makedirs(os.path.join(folder, student))
    ...         _ = open(os.path.join(folder, student, "27_4.ipynb"), "w").write("not json")
    ...     results = (grade_paths([folder], sandbox=False, executor="serial") if have_material else
    ...                [{"student": s, "status": "not gradable"} for s in ("ann", "bob")])
    >>> [(r["student"], r["status"]) for r in results]
    [('ann', 'not gradable'), ('bob', 'not gradable')]
    """
    mat = _material.load(instructor)
    if sandbox:
        from labkit.grading.sandbox import check_available
        check_available([_material.location(mat)])
    entries = listing(paths, mat.EXERCISES)
    if on_start is not None:
        on_start(entries)
    if not entries:
        return []
    options = {"timeout": timeout, "sandbox": sandbox, "budget": budget, "limits": limits,
               "instructor": str(instructor) if instructor is not None else None, "journal": journal,
               "exercise": exercise}
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(entries), desc="grading", unit="notebook")
    results = [None] * len(entries)

    def done(k, result):
        results[k] = result
        if journal is not None and not result.get("resumed"):
            journal.record(result, final=is_final(result))
        if on_result is not None:
            on_result(result)
        if bar is not None:
            bar.update(1)

    pool, owned = _executor(executor, len(entries))
    try:
        read = on_read is not None
        if on_read is not None:
            entries = _map(pool, _read_unit, [(entry, options) for entry in entries])
            on_read(entries)
        units = [(entry, options, read) for entry in entries]
        if pool is None:
            for k, unit in enumerate(units):
                done(k, _grade_unit(unit))
        else:
            futures = {pool.submit(_grade_unit, unit): k for k, unit in enumerate(units)}
            pending = cf.as_completed(futures) if all(isinstance(f, cf.Future) for f in futures) else iter(futures)
            for future in pending:
                k = futures[future]
                try:
                    result = future.result()
                except GradingInterrupted:
                    continue
                except Exception as exc:       # a worker that died: that row's message, not the run's end
                    from labkit.grading.sandbox import SandboxUnavailable
                    if isinstance(exc, SandboxUnavailable):
                        raise
                    result = _blank_result(entries[k], mat)
                    result["error"] = result["reason"] = f"the grader's worker failed on this notebook ({exc})"
                    result["final"] = False
                    result["grader_failed"] = True
                done(k, result)
    except KeyboardInterrupt:
        _stop(pool, owned)
        raise GradingInterrupted(results) from None
    except BaseException as exc:
        _stop(pool, owned)
        exc.results = results  # type: ignore[attr-defined]  # the finished results travel with it
        raise
    finally:
        if bar is not None:
            bar.close()
        if owned:
            pool.shutdown(wait=True, cancel_futures=True)
    return finish(results, mat)


def _map(pool, function, units):
    """[function(unit) for unit in units], on the pool's workers when there is a pool."""
    if pool is None:
        return [function(unit) for unit in units]
    return [future.result() for future in [pool.submit(function, unit) for unit in units]]


def _stop(pool, owned):
    """End every running sandbox now and wait for the workers (their notebooks are not finished)."""
    from labkit.grading import sandbox
    sandbox.stopping.set()
    try:
        if owned:
            pool.shutdown(wait=True, cancel_futures=True)
    finally:
        sandbox.stopping.clear()


def _executor(executor, count):
    """(pool or None for serial, whether we own it): `resolve_executor` with threads, since every
    submission runs in a sandboxed child process of its own."""
    from labkit.experiments.executors import resolve_executor
    threads = functools.partial(cf.ThreadPoolExecutor, thread_name_prefix="labkit-grade")
    return resolve_executor(executor, count, pool=threads)


__all__ = ["grade_notebook", "grade_intake", "grade_paths", "take_in_all", "listing", "finish", "is_final",
           "find_notebooks", "format_table", "write_csv", "json_ready", "Intake", "GradingInterrupted"]
