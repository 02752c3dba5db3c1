"""Where the time of grading one notebook goes, phase by phase.

    .venv/bin/python benchmarks/bench_grading_phases.py                      # 27.4, 5.1 and Lab 15, 3 rounds
    .venv/bin/python benchmarks/bench_grading_phases.py --exercises all --rounds 1

For each worked solution it measures, in one process and repeated (the median is printed):

* ``material``: importing the instructor material (``labkit_instructor``: every exercise's definition
  and hidden checks, whose probes are computed at import), in a fresh interpreter, once per round;
* ``sandbox``: what a bubblewrap sandbox adds to running the driver (slot, control group, mount
  tree, teardown): ``run_driver`` of a job without cells, sandboxed minus unsandboxed;
* ``driver``: starting the driver's interpreter and importing it (nbclient, nbformat, labkit) in
  the sandbox's environment, once per notebook; printed beside it, the same with the optional
  ``rfc3987_syntax`` module loaded first, as jsonschema (which nbformat imports) did before the
  driver kept it out: it builds a grammar at import time, for an IRI format check no notebook
  schema has (`benchmarks/bench_driver_start.py` measures that in CPU seconds);
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

PHASES = ("material", "sandbox", "driver", "kernel", "setup", "student", "probes", "report", "checks", "graded")


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


def driver_seconds(as_before=False):
    """Seconds to start the driver's interpreter and import what it runs, in the sandbox's
    environment; `as_before`: with rfc3987_syntax loaded, as jsonschema loaded it."""
    from labkit.grading.sandbox import environment
    code = ("import sys, time; t = time.perf_counter(); "
            + ("import rfc3987_syntax; " if as_before else "")
            + "import labkit.grading.driver, labkit.grading.runner; print(time.perf_counter() - t)")
    with tempfile.TemporaryDirectory() as home:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-s", "-c", code], env=environment(home), cwd=home, check=True,
                       capture_output=True, text=True)
        return time.perf_counter() - start


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
    points = 0.0
    for part, value in values.items():
        t = time.perf_counter()
        points += mat.grade_part(part, value).points
        phases["checks"] += time.perf_counter() - t
    maximum = sum(specs[p].max_points for p in ex.parts)
    if points != maximum:
        sys.exit(f"{number}: the worked solution scored {points:g}/{maximum:g} through the driver's loop")
    return phases, values


def graded_seconds(number, mat):
    from labkit.grading.grader import grade_notebook
    t = time.perf_counter()
    r = grade_notebook(ROOT / "solutions" / mat.EXERCISES[number].filename, instructor=INSTRUCTOR, timeout=600,
                       budget=3600)
    seconds = time.perf_counter() - t
    if r["score"] != r["max_score"]:       # e.g. another grader on the machine took its sandbox slot
        hints = "; ".join(f"{p['part']} {p['verdict']}" for p in r["parts"] if p["points"] < p["max_points"])
        print(f"{number}: sandboxed, the worked solution scored {r['score']}/{r['max_score']} ({hints})",
              file=sys.stderr)
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
    blocked = []
    for k in range(args.rounds):
        material = material_seconds()
        sandbox = sandbox_seconds()
        driver, before = driver_seconds(), driver_seconds(as_before=True)
        blocked.append(before)
        for n in numbers:
            phases, values = driver_phases(n, mat)
            phases["material"], phases["sandbox"], phases["driver"] = material, sandbox, driver
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
    print(f"\ndriver start with rfc3987_syntax loaded (as before the driver kept it out): "
          f"{statistics.median(blocked):.2f} s (median), against {statistics.median(samples[numbers[0]]['driver']):.2f} s")
    print("largest check records (characters of JSON):",
          {n: max(s.values()) if s else 0 for n, s in sizes.items()})
    print("labkit_instructor's slowest modules to import (s):", [(m, round(s, 2)) for s, m in material_modules()])


if __name__ == "__main__":
    main()
