"""The grading driver: runs one submission's cells in a kernel and streams what happened, one JSON line per event.

    python -m labkit.grading.driver < job.json

It runs *inside* the grading sandbox (`labkit.grading.sandbox`), next to the kernel it drives;
the grader, outside, reads its standard output and computes the verdicts. The job, read from
standard input, is ``{"cells": [[role, part, source], ...], "timeout", "setup_timeout", "budget",
"timeouts", "specs", "seals": [{"nonce"}, ...]}``: the master's cells with the student's answers
in place (setup cells first), per-cell timeouts that replace ``timeout`` (``{index: seconds}``,
for the check cells of timed parts), the part specifications with the hidden probes (one copy,
written into each kernel's seal) and one seal per kernel the driver may start (the nonce that
signs the check records).

Events (one JSON object per line): ``{"event": "cell", "index", "status", "error", "records",
"generation"}`` for every non-setup cell (status ok, error, timeout, flood, dead, skipped or
budget; ``records`` are the check records among a check cell's outputs, signed with the nonce
of kernel ``generation``), ``{"event": "fatal", "error"}`` when the setup itself fails, and
``{"event": "done", "interrupts", "restarts"}`` at the end.

Nothing here is trusted by the grader: student code runs as the same user in the same sandbox
and could write lines of its own. Such lines can only claim values for this submission's own
names, which writing those values in an answer cell does anyway (see `labkit.grading`).
"""
from __future__ import annotations

import json
import logging
import os
import sys
import time
import warnings
from pathlib import Path

from labkit.grading.reporter import NONCE_VARIABLE, RECORD_MIME, SEAL_SOURCE

MAX_RECORDS = 20            # check records kept from one check cell
TROUBLE = ("timeout", "dead", "flood")


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


def run_job(job, events, workdir):
    from labkit.grading.runner import KernelRun
    cells = [tuple(c) for c in job["cells"]]
    timeout, setup_timeout = float(job["timeout"]), float(job["setup_timeout"])
    cell_timeouts = {int(k): float(v) for k, v in (job.get("timeouts") or {}).items()}
    deadline = time.monotonic() + float(job["budget"])
    seals, specs = job["seals"], job.get("specs", {})
    seal_path = Path(workdir) / ".seal"
    setup_sources = [SEAL_SOURCE] + [src for role, _, src in cells if role == "setup"]
    generation = [0]

    def run_setup(kernel):
        seal = seals[generation[0]]
        _write_private(seal_path, json.dumps({"nonce": seal["nonce"], "specs": seal.get("specs", specs)}))
        for src in setup_sources:
            run = kernel.run(src, timeout=max(timeout, setup_timeout))
            if run.status != "ok":
                raise RuntimeError(f"the exercise's setup cell failed in the grader: {run.error}")

    trouble = set()
    with KernelRun(timeout, {NONCE_VARIABLE: str(seal_path)}, str(workdir)) as kernel:
        try:
            run_setup(kernel)
        except Exception as exc:
            events.send(event="fatal", error=str(exc)[:500])
            return
        for index, (role, part, source) in enumerate(cells):
            if role == "setup":
                continue
            left = deadline - time.monotonic()
            if left <= 1:
                events.send(event="cell", index=index, status="budget", error=None, records=[],
                            generation=generation[0])
                continue
            if role == "check" and part in trouble:
                events.send(event="cell", index=index, status="skipped", error=None, records=[],
                            generation=generation[0])
                continue
            restarts, ran_in = kernel.restarts, generation[0]
            run = kernel.run(source, timeout=min(cell_timeouts.get(index, timeout), left))
            if role == "answer" and run.status in TROUBLE:
                trouble.add(part)
            records = []
            if role == "check":
                records = [o["data"][RECORD_MIME] for o in run.outputs
                           if o.get("output_type") == "display_data" and RECORD_MIME in o.get("data", {})]
            events.send(event="cell", index=index, status=run.status, error=(run.error or "")[:2000] or None,
                        records=records[-MAX_RECORDS:], generation=ran_in)
            if kernel.restarts != restarts:
                generation[0] += 1
                if generation[0] >= len(seals):
                    events.send(event="fatal", error="the kernel had to be replaced too many times")
                    return
                try:
                    run_setup(kernel)
                except Exception as exc:
                    events.send(event="fatal", error=str(exc)[:500])
                    return
        events.send(event="done", interrupts=kernel.interrupts, restarts=kernel.restarts)


PRIVATE_DIRS = ("HOME", "IPYTHONDIR", "MPLCONFIGDIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR")


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


def main():
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)      # nbclient and jupyter_client warnings are not the grader's output
    events = _Events()
    job = json.loads(sys.stdin.read())
    workdir = Path(job.get("workdir") or os.getcwd())
    for folder in [workdir] + [os.environ[k] for k in PRIVATE_DIRS if k in os.environ]:
        Path(folder).mkdir(parents=True, exist_ok=True)
    try:
        _write_master(job, workdir)
        run_job(job, events, workdir)
    except Exception as exc:             # report, never a traceback on the grader's terminal
        events.send(event="fatal", error=f"{type(exc).__name__}: {exc}"[:500])
    sys.stdout.flush()
    os._exit(0)                          # do not wait for threads a kernel client may leave behind


if __name__ == "__main__":
    main()
