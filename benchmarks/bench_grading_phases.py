"""Where the time of grading one notebook goes, phase by phase.

    .venv/bin/python benchmarks/bench_grading_phases.py                      # 27.4, 5.1 and Lab 15, 3 rounds
    .venv/bin/python benchmarks/bench_grading_phases.py --exercises all --rounds 1

For each worked solution it measures, in one process and repeated (the median is printed):

* ``material``: importing the instructor material (``labkit_instructor``: every exercise's definition
  and hidden checks, whose probes are computed at import), in a fresh interpreter, once per round;
* ``sandbox``: what a bubblewrap sandbox adds to running the driver (slot, control group, mount
  tree, teardown): ``run_driver`` of a job without cells, sandboxed minus unsandboxed;
* ``kernel``: starting the Jupyter kernel (nbclient's ``setup_kernel``), in the driver;
* ``setup``: the seal and the exercise's setup cells (imports of numpy and labkit);
* ``student``: the answer cells (the worked solution's own computations);
* ``probes``: inside the check cells, the calls of the student's functions at the hidden probes (the
  seconds the reporter records for each call);
* ``report``: the rest of the check cells (serializing and signing the values);
* ``checks``: the hidden checks' verdicts, in the grader's process (``grade_part``);
* ``graded``: the whole of ``grade_notebook`` in a sandbox, for reference.

The phases from ``kernel`` to ``report`` come from running the driver's own loop
(``labkit.grading.driver.run_job``) in this process, unsandboxed, with the kernel's start and every
cell timed. Wall-clock seconds: on a shared machine, compare phases within one run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
INSTRUCTOR = ROOT / "instructor"

PHASES = ("material", "sandbox", "kernel", "setup", "student", "probes", "report", "checks", "graded")


def material_seconds():
    code = ("import sys, time; sys.path.insert(0, %r); t = time.perf_counter(); import labkit_instructor; "
            "print(time.perf_counter() - t)" % str(INSTRUCTOR))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def material_modules():
    """Seconds of each labkit_instructor module's own import (python -X importtime), largest first."""
    code = "import sys; sys.path.insert(0, %r); import labkit_instructor" % str(INSTRUCTOR)
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True)
    rows = []
    for line in done.stderr.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2].startswith("labkit_instructor"):
            rows.append((int(parts[0].split()[-1]) / 1e6, parts[2]))
    return sorted(rows, reverse=True)[:6]


def sandbox_seconds():
    from labkit.grading.sandbox import DEFAULT_LIMITS, run_driver
    job = {"cells": [], "timeout": 60, "setup_timeout": 120, "budget": 600, "timeouts": {}, "specs": {},
           "seals": [{"nonce": "0" * 32}]}
    out = {}
    for sandbox in (True, False):
        start = time.perf_counter()
        run_driver(job, sandbox=sandbox, limits=DEFAULT_LIMITS, wall=600)
        out[sandbox] = time.perf_counter() - start
    return out[True] - out[False]


class _Events:
    def __init__(self):
        self.events = []

    def send(self, **event):
        self.events.append(event)


def driver_phases(number, mat):
    """(phase seconds, {part: value}) of one worked solution run through the driver's loop."""
    from labkit.grading import grader, runner
    from labkit.grading.driver import run_job
    from labkit.grading.intake import take_in
    from labkit.grading.notebooks import Submission, graded_cells
    from labkit.grading.reporter import verify_record
    ex = mat.EXERCISES[number]
    intake = take_in(ROOT / "solutions" / ex.filename, "bench", mat.EXERCISES)
    plan = graded_cells(ex, Submission(number, intake.answers, intake.written))
    specs = {p: mat.spec_for(p) for p in ex.parts}
    job, nonces = grader.build_job(plan, specs, 600.0, 3600.0, grader._encoded_specs(ex, specs))
    timings, starts = [], []
    original_run, original_start = runner.KernelRun.run, runner.KernelRun._start

    def timed_run(self, source, timeout=None):
        t = time.perf_counter()
        result = original_run(self, source, timeout)
        timings.append((source, time.perf_counter() - t))
        return result

    def timed_start(self):
        t = time.perf_counter()
        original_start(self)
        starts.append(time.perf_counter() - t)

    runner.KernelRun.run, runner.KernelRun._start = timed_run, timed_start
    events = _Events()
    try:
        with tempfile.TemporaryDirectory() as work:
            run_job(job, events, work)
    finally:
        runner.KernelRun.run, runner.KernelRun._start = original_run, original_start
    setup_count = 1 + sum(1 for role, _, _ in plan if role == "setup")      # the seal, then the setup cells
    phases = dict.fromkeys(PHASES, 0.0)
    phases["kernel"] = sum(starts)
    phases["setup"] = sum(seconds for _, seconds in timings[:setup_count])
    values = {}
    by_index = {e["index"]: e for e in events.events if e.get("event") == "cell"}
    non_setup = [k for k, (role, _, _) in enumerate(plan) if role != "setup"]
    for (_, seconds), index in zip(timings[setup_count:], non_setup):     # no kernel was replaced
        role, part, _ = plan[index]
        if role == "answer":
            phases["student"] += seconds
            continue
        records = by_index.get(index, {}).get("records") or []
        value = next((v for v in (verify_record(r, nonces[0], part) for r in records) if v is not None), None)
        probe = sum(sum(t for t in ts if t) for ts in (value or {}).get("__seconds__", {}).values())
        phases["probes"] += probe
        phases["report"] += max(seconds - probe, 0.0)
        values[part] = value
    for part, value in values.items():
        t = time.perf_counter()
        mat.grade_part(part, value)
        phases["checks"] += time.perf_counter() - t
    return phases, values


def graded_seconds(number, mat):
    from labkit.grading.grader import grade_notebook
    t = time.perf_counter()
    r = grade_notebook(ROOT / "solutions" / mat.EXERCISES[number].filename, instructor=INSTRUCTOR, timeout=600,
                       budget=3600)
    seconds = time.perf_counter() - t
    if r["score"] != r["max_score"]:
        sys.exit(f"{number}: the worked solution scored {r['score']}/{r['max_score']}: {r['reason']}")
    return seconds


def record_sizes(values):
    return {part: len(json.dumps(v)) for part, v in values.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--exercises", default="27.4,5.1,L15", help="comma-separated, or 'all'")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    from labkit.grading.material import load
    mat = load(INSTRUCTOR)
    numbers = list(mat.EXERCISES) if args.exercises == "all" else args.exercises.split(",")
    samples = {n: {ph: [] for ph in PHASES} for n in numbers}
    sizes = {}
    for k in range(args.rounds):
        material = material_seconds()
        sandbox = sandbox_seconds()
        for n in numbers:
            phases, values = driver_phases(n, mat)
            phases["material"], phases["sandbox"] = material, sandbox
            phases["graded"] = graded_seconds(n, mat)
            for ph in PHASES:
                samples[n][ph].append(phases[ph])
            sizes[n] = record_sizes(values)
            print(f"round {k + 1}: {n} " + " ".join(f"{ph}={phases[ph]:.2f}" for ph in PHASES), file=sys.stderr)
    print(f"| exercise | {' | '.join(PHASES)} |")
    print("|---" * (len(PHASES) + 1) + "|")
    for n in numbers:
        med = {ph: statistics.median(samples[n][ph]) for ph in PHASES}
        print(f"| {n} | " + " | ".join(f"{med[ph]:.2f}" for ph in PHASES) + " |")
    print("\nlargest check records (characters of JSON):",
          {n: max(s.values()) if s else 0 for n, s in sizes.items()})
    print("labkit_instructor's slowest modules to import (s):", [(m, round(s, 2)) for s, m in material_modules()])


if __name__ == "__main__":
    main()
