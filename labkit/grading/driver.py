"""The grading driver: runs one submission's cells in a kernel and streams what happened, one JSON line per event.

    python -m labkit.grading.driver < job.json

It runs *inside* the grading sandbox (`labkit.grading.sandbox`), next to the kernel it drives;
the grader, outside, reads its standard output and computes the verdicts. The job, read from
standard input, is ``{"cells": [[role, part, source], ...], "timeout", "setup_timeout", "budget",
"timeouts", "specs", "seals": [{"nonce"}, ...], "sandboxed", "cpu_usage", "font_cache"}``: the master's cells
with the student's answers in place (setup cells first), the charged seconds each cell, the
setup and the whole notebook may use (`labkit.grading.cpuclock`), per-cell budgets that replace
``timeout`` (``{index: seconds}``, for the check cells of timed parts), the part specifications
with the hidden probes (one copy, written into each kernel's seal), one seal per kernel the
driver may start (the nonce that signs the check records), whether it runs in a sandbox (its
PID namespace is then all its own), where the sandbox's control group shows its CPU time and
where the grader's matplotlib font list is (`seed_font_cache`).

Before it starts a kernel, the driver protects itself (`labkit.grading.hardening`): it cannot be
traced or read through /proc by the kernel's code, and nothing it starts can make a user
namespace. It holds the secrets of its own submission only.

Events (one JSON object per line): ``{"event": "cell", "index", "status", "error", "records",
"generation", "retried", "charged", "cpu", "wall"}`` for every non-setup cell (status ok, error,
timeout, busy, flood, dead, skipped or budget; ``records`` are the check records among a check
cell's outputs, signed with the nonce of kernel ``generation``; ``retried`` when a busy machine
stopped the cell's first run), ``{"event": "fatal", "error"}`` when the setup itself fails, and
``{"event": "done", "interrupts", "restarts", "charged"}`` at the end.

Nothing here is trusted by the grader: student code runs as the same user in the same sandbox
and could write lines of its own (if it found a way past the hardening). Such lines can only
claim values for this submission's own names, which writing those values in an answer cell does
anyway (see `labkit.grading`).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

# nbformat validates with jsonschema, whose format checker imports rfc3987_syntax where it is
# installed, and that module compiles an IRI grammar as it loads (3 CPU seconds, most of the
# driver's start). No notebook schema has an "iri" format; without the module, jsonschema skips
# that one check and validates all the rest. The driver is a process of its own, so this touches
# nothing else.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: "not importable"

from labkit.grading.cpuclock import Meter  # noqa: E402
from labkit.grading.hardening import harden  # noqa: E402
from labkit.grading.reporter import NONCE_VARIABLE, RECORD_MIME, SEAL_SOURCE  # noqa: E402

MAX_RECORDS = 20            # check records kept from one check cell
TROUBLE = ("timeout", "dead", "flood", "busy")
RETRY_WALL_FACTOR = 2.0     # a cell retried after a busy machine stopped it gets twice the safety net


def _write_private(path, text):
    """Create a file that nothing planted beforehand can redirect (remove what is there, then
    create it exclusively, without following links)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(text)


class _Events:
    """The event stream: a private duplicate of stdout; fd 1 itself then points at /dev/null,
    so that a library's stray print cannot break a line."""

    def __init__(self):
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)

    def send(self, **event):
        self._out.write(json.dumps(event, ensure_ascii=True) + "\n")
        self._out.flush()


def run_job(job: dict[str, Any], events: Any, workdir: str | os.PathLike[str], meter: Meter | None = None) -> None:
    """Run the job's cells and send one event per cell (see the module's docstring).

    Time is charged, not read off the wall clock (`labkit.grading.cpuclock`): each cell has its
    budget, the whole notebook has ``budget`` charged seconds, setup included. A cell stopped
    by the wall-clock safety net on a busy machine is run once more with a wider net; if that
    one is stopped on a busy machine too, the cell is reported as "busy" (not a grade: the
    grader says to grade it again).

    Parameters
    ----------
    job : dict
        The job as the module's docstring describes it.
    events : object
        Has ``send(**event)``; each event is a dict of JSON values.
    workdir : str or path
        The submission's scratch folder (the kernel's working directory; the seal is written there).
    meter : Meter, optional
        The sandbox's clocks; default: the runner's own.

    Examples
    --------
    With a stand-in for the kernel (`labkit.grading.runner.KernelRun` starts a real one), the
    events of a job with a setup cell and an answer cell:

    >>> import tempfile, types
    >>> from unittest import mock
    >>> class StandIn:                               # runs nothing, reports every cell as ok
    ...     interrupts = restarts = 0
    ...     def __init__(self, *args, **kwargs): pass
    ...     def __enter__(self): return self
    ...     def __exit__(self, *exc): return False
    ...     def run(self, source, timeout, wall_factor=1.0):
    ...         return types.SimpleNamespace(status="ok", error=None, outputs=[], charged=0.5, cpu=0.4, wall=0.6)
    >>> class Collect(list):
    ...     def send(self, **event): self.append(event)
    >>> job = {"cells": [["setup", None, "import labkit"], ["answer", "a", "x = 1"]], "timeout": 10,
    ...        "setup_timeout": 60, "budget": 100, "seals": [{"nonce": "n0"}]}
    >>> events = Collect()
    >>> with tempfile.TemporaryDirectory() as folder, mock.patch("labkit.grading.runner.KernelRun", StandIn):
    ...     run_job(job, events, folder)
    >>> [(e["event"], e.get("status"), e.get("charged")) for e in events]
    [('cell', 'ok', 0.5), ('done', None, 1.5)]
    """
    from labkit.grading.runner import KernelRun
    cells = [tuple(c) for c in job["cells"]]
    timeout, setup_timeout = float(job["timeout"]), float(job["setup_timeout"])
    cell_timeouts = {int(k): float(v) for k, v in (job.get("timeouts") or {}).items()}
    budget = float(job["budget"])
    seals, specs = job["seals"], job.get("specs", {})
    seal_path = Path(workdir) / ".seal"
    setup_sources = [SEAL_SOURCE] + [src for role, _, src in cells if role == "setup"]
    generation, spent = [0], [0.0]

    def run_cell(kernel, source, limit):
        """One cell, retried once if a busy machine stopped it: (run, retried)."""
        restarts = kernel.restarts
        run = kernel.run(source, timeout=limit)
        spent[0] += _clock(run, "charged")
        if run.status != "timeout" or not getattr(run, "busy", False) or kernel.restarts != restarts:
            return run, False
        again = kernel.run(source, timeout=max(1.0, min(limit, budget - spent[0])), wall_factor=RETRY_WALL_FACTOR)
        spent[0] += _clock(again, "charged")
        if again.status == "timeout" and getattr(again, "busy", False):
            again.status = "busy"
            again.error = f"{again.error}; it was stopped on a busy machine twice"
        return again, True

    def run_setup(kernel):
        seal = seals[generation[0]]
        _write_private(seal_path, json.dumps({"nonce": seal["nonce"], "specs": seal.get("specs", specs)}))
        for src in setup_sources:
            run, _ = run_cell(kernel, src, max(timeout, setup_timeout))
            if run.status != "ok":
                raise SetupFailed(f"the exercise's setup cell failed in the grader: {run.error}", run.status == "busy")

    trouble = set()
    options = {"meter": meter} if meter is not None else {}
    with KernelRun(timeout, {NONCE_VARIABLE: str(seal_path)}, str(workdir), **options) as kernel:
        try:
            run_setup(kernel)
        except Exception as exc:
            events.send(event="fatal", error=str(exc)[:500], charged=round(spent[0], 3),
                        busy=getattr(exc, "busy", False))
            return
        for index, (role, part, source) in enumerate(cells):
            if role == "setup":
                continue
            left = budget - spent[0]
            if left <= 1:
                events.send(event="cell", index=index, status="budget", error=None, records=[],
                            generation=generation[0])
                continue
            if role == "check" and part in trouble:
                events.send(event="cell", index=index, status="skipped", error=None, records=[],
                            generation=generation[0])
                continue
            restarts, ran_in = kernel.restarts, generation[0]
            run, retried = run_cell(kernel, source, min(cell_timeouts.get(index, timeout), left))
            if role == "answer" and run.status in TROUBLE:
                trouble.add(part)
            records = []
            if role == "check":
                records = [o["data"][RECORD_MIME] for o in run.outputs
                           if o.get("output_type") == "display_data" and RECORD_MIME in o.get("data", {})]
            events.send(event="cell", index=index, status=run.status, error=(run.error or "")[:2000] or None,
                        records=records[-MAX_RECORDS:], generation=ran_in, retried=retried,
                        **{name: round(_clock(run, name), 3) for name in ("charged", "cpu", "wall")})
            if kernel.restarts != restarts:
                generation[0] += 1
                if generation[0] >= len(seals):
                    events.send(event="fatal", error="the kernel had to be replaced too many times")
                    return
                try:
                    run_setup(kernel)
                except Exception as exc:
                    events.send(event="fatal", error=str(exc)[:500], busy=getattr(exc, "busy", False))
                    return
        events.send(event="done", interrupts=kernel.interrupts, restarts=kernel.restarts, charged=round(spent[0], 3))


class SetupFailed(RuntimeError):
    """The exercise's own setup did not run.

    Parameters
    ----------
    message : str
    busy : bool, default False
        True when a busy machine stopped it twice (not a grade: grade again).

    Examples
    --------
    >>> error = SetupFailed("the exercise's setup cell failed in the grader: NameError", busy=False)
    >>> isinstance(error, RuntimeError), error.busy
    (True, False)
    """

    def __init__(self, message: str, busy: bool = False):
        super().__init__(message)
        self.busy = busy


def _clock(run, name):
    """A cell's clock reading (`labkit.grading.runner.CellRun`); 0 for a stand-in run without one."""
    return float(getattr(run, name, 0.0) or 0.0)


PRIVATE_DIRS = ("HOME", "IPYTHONDIR", "MPLCONFIGDIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR")


def seed_font_cache(source: str | None, config_dir: str | None) -> list[str]:
    """Copy the grader's matplotlib font list (``fontlist-*.json`` in `source`) into the kernel's
    own, still empty, matplotlib folder `config_dir`.

    Without it the kernel's first ``import matplotlib.pyplot`` lists and reads every font of the
    system to build that file (about 4 CPU seconds with TeX's fonts installed, in every sandbox);
    the grader builds it once per run (`labkit.grading.sandbox.matplotlib_font_cache`). The copy
    is the sandbox's own: what the student's code does to it touches no other submission. Any
    failure leaves matplotlib to build its list as before.

    Parameters
    ----------
    source : str or None
        The folder holding the font list (read-only), or None.
    config_dir : str or None
        The kernel's ``MPLCONFIGDIR``.

    Returns
    -------
    list of str
        The files copied.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as grader, tempfile.TemporaryDirectory() as kernel:
    ...     _ = (pathlib.Path(grader) / "fontlist-v390.json").write_text("{}")
    ...     seed_font_cache(grader, kernel + "/mpl"), seed_font_cache(None, kernel + "/mpl")
    (['fontlist-v390.json'], [])
    """
    if not source or not config_dir:
        return []
    copied = []
    try:
        Path(config_dir).mkdir(parents=True, exist_ok=True)
        for file in sorted(Path(source).glob("fontlist-*.json")):
            shutil.copyfile(file, Path(config_dir) / file.name)
            copied.append(file.name)
    except OSError:
        pass
    return copied


def _write_master(job, workdir):
    """The pristine master with the student's answers in place, as a notebook in the scratch
    directory (what the kernel runs, for an instructor who wants to look)."""
    import nbformat
    nb = nbformat.v4.new_notebook()
    for role, part, source in job["cells"]:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["labkit"] = {"role": role, "part": part}
        nb.cells.append(cell)
    nbformat.write(nb, str(Path(workdir) / "master.ipynb"))


def main() -> None:
    """``python -m labkit.grading.driver < job.json``: protect the process (`harden`), write the
    master notebook into the job's folder, run the job, stream the events on standard output and
    exit without waiting for the kernel client's threads. Any failure is a "fatal" event, never a
    traceback.

    Examples
    --------
    A job without its time limit is refused with a "fatal" event:

    >>> import json, subprocess, sys, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     job = json.dumps({"cells": [], "workdir": folder})
    ...     done = subprocess.run([sys.executable, "-m", "labkit.grading.driver"], input=job,
    ...                           capture_output=True, text=True, timeout=120)
    >>> json.loads(done.stdout)
    {'event': 'fatal', 'error': "KeyError: 'timeout'"}
    """
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)      # nbclient and jupyter_client warnings are not the grader's output
    events = _Events()
    job = json.loads(sys.stdin.read())
    try:
        harden()
    except OSError as exc:               # without a sandbox it is a best effort; inside one, required
        if job.get("sandboxed"):
            events.send(event="fatal", error=f"the grading driver could not protect itself: {exc}"[:500])
            sys.stdout.flush()
            os._exit(0)
    workdir = Path(job.get("workdir") or os.getcwd())
    for folder in [workdir] + [os.environ[k] for k in PRIVATE_DIRS if k in os.environ]:
        Path(folder).mkdir(parents=True, exist_ok=True)
    seed_font_cache(job.get("font_cache"), os.environ.get("MPLCONFIGDIR"))
    try:
        _write_master(job, workdir)
        meter = Meter(usage_file=job.get("cpu_usage"), whole_namespace=bool(job.get("sandboxed")))
        run_job(job, events, workdir, meter=meter)
    except Exception as exc:             # report, never a traceback on the grader's terminal
        events.send(event="fatal", error=f"{type(exc).__name__}: {exc}"[:500])
    sys.stdout.flush()
    os._exit(0)                          # do not wait for threads a kernel client may leave behind


if __name__ == "__main__":
    main()
