"""How long a class of Lab 15 notebooks takes to grade: CPU seconds per notebook, and the hour.

    .venv/bin/python benchmarks/bench_lab15_class.py                  # 1 and 5 copies of the worked solution
    .venv/bin/python benchmarks/bench_lab15_class.py --copies 9 --workers 2
    .venv/bin/python benchmarks/bench_lab15_class.py --baseline OLD.ipynb    # against another notebook, same run
    .venv/bin/python benchmarks/bench_lab15_class.py --cells                 # where the time goes, cell by cell

Issue 22 asks that 300 Lab 15 notebooks be graded on two idle cores within an hour: at most
2 x 3,600 / 300 = 24 CPU seconds per notebook, everything included. This script grades one copy
of the worked solution, then ``--copies`` copies, each through the command line's own entry point
called in this process (``labkit-grade --exercise L15 --workers W --json``), and counts every CPU
second of the run: the grader's own (this process, its threads included) plus the CPU time of
each sandbox, which ``labkit-grade`` reports per notebook (``cpu_seconds``, read from the
sandbox's control group). The sandboxes are not counted through this process's children, whose
resource usage would hold part of them a second time.

The cost of one more notebook is the difference between the two runs divided by the number of
extra copies; what the first run costs beyond it (importing the instructor material, labkit's
reference runs behind the hidden checks) is paid once per run. The projection for a class of
300 is ``fixed + 300 x per notebook``, spread over two cores. CPU seconds hardly depend on the
machine's load, so the projection holds for an idle machine; the wall-clock seconds of the runs
are printed beside it, with the load average, for reference only.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "lab15_leduc_solvers.ipynb"
CLASS_SIZE = 300
CORES = 2
HOUR = 3600.0


def grade_copies(copies: int, workers: int, baseline: str | None = None) -> dict:
    """Grade `copies` copies of the worked solution (and as many of `baseline`, interleaved);
    CPU and wall seconds of the whole run."""
    from labkit.grading.__main__ import main as labkit_grade
    with tempfile.TemporaryDirectory() as folder:
        for k in range(copies):
            shutil.copy(SOLUTION, Path(folder) / f"student{k + 1:03d}a.ipynb")
            if baseline:
                shutil.copy(baseline, Path(folder) / f"student{k + 1:03d}b.ipynb")
        out, err = io.StringIO(), io.StringIO()
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = labkit_grade(["--exercise", "L15", "--workers", str(workers), "--json", folder])
            except SystemExit as exit_:
                status = exit_.code
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
    if status not in (0, None):
        sys.exit(f"labkit-grade exited with {status}:\n{err.getvalue()[-2000:]}")
    rows = json.loads(out.getvalue())
    rows = [rows] if isinstance(rows, dict) else rows          # one notebook: one object, not a list
    missing = [r["student_id"] for r in rows if r.get("score") != r.get("max_score")]
    if missing:
        sys.exit(f"the worked solution did not get full marks for {missing}: not a valid measurement")
    sandboxes = [r.get("cpu_seconds") for r in rows]
    if any(s is None for s in sandboxes):
        sys.exit("labkit-grade reported no CPU time for a sandbox (no control group here?)")
    grader = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    ours = [r["cpu_seconds"] for r in rows if r["student_id"].endswith("a")]
    theirs = [r["cpu_seconds"] for r in rows if r["student_id"].endswith("b")]
    return {"copies": copies, "grader": grader, "sandboxes": sum(sandboxes), "wall": wall,
            "per_sandbox": [round(s, 1) for s in ours], "baseline": [round(s, 1) for s in theirs]}


def cell_by_cell() -> None:
    """Each cell's CPU seconds (`CellRun.cpu`) when the worked solution's grading job runs through
    the driver's own loop in this process, unsandboxed: where a notebook's time goes."""
    from labkit.grading import grader, runner
    from labkit.grading.driver import run_job
    from labkit.grading.intake import take_in
    from labkit.grading.material import load
    from labkit.grading.notebooks import Submission, graded_cells
    material = load(ROOT / "instructor")
    exercise = material.EXERCISES["L15"]
    intake = take_in(SOLUTION, "bench", material.EXERCISES)
    plan = graded_cells(exercise, Submission("L15", intake.answers, intake.written))
    specs = {p: material.spec_for(p) for p in exercise.parts}
    job, _ = grader.build_job(plan, specs, 600.0, 3600.0, grader._encoded_specs(exercise, specs))
    seconds, original = [], runner.KernelRun.run

    def timed(self, source, timeout=None, wall_factor=1.0):
        result = original(self, source, timeout, wall_factor)
        seconds.append(result.cpu)
        return result

    class Events:
        def send(self, **event):
            pass

    runner.KernelRun.run = timed
    try:
        with tempfile.TemporaryDirectory() as work:
            run_job(job, Events(), work)
    finally:
        runner.KernelRun.run = original
    roles = ["seal"] + [role if part is None else f"{role} {part}" for role, part, _ in plan]
    for role, cpu in zip(roles, seconds, strict=False):
        print(f"{cpu:7.2f} CPU-s  {role}")
    print(f"{sum(seconds):7.2f} CPU-s  in all")


def fresh_run(copies: int, workers: int, baseline: str | None = None) -> dict:
    """`grade_copies` in a fresh interpreter: each run imports the material and computes labkit's
    references itself, as a real run does."""
    extra = ["--baseline", baseline] if baseline else []
    done = subprocess.run([sys.executable, __file__, "--one-run", str(copies), "--workers", str(workers), *extra],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(done.stderr[-2000:] or f"the run of {copies} exited with {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=5, help="copies in the second run (default 5)")
    parser.add_argument("--workers", type=int, default=2, help="sandboxes at a time (default 2)")
    parser.add_argument("--baseline", metavar="NOTEBOOK",
                        help="another Lab 15 notebook (an earlier worked solution, say) graded in the same "
                             "runs, one copy beside each copy of the solution: prints the ratio of their sandboxes' "
                             "CPU seconds, which the machine's speed of the moment cancels out of")
    parser.add_argument("--cells", action="store_true",
                        help="instead: each cell's CPU seconds, the worked solution run through the driver's loop")
    parser.add_argument("--one-run", type=int, metavar="N", help=argparse.SUPPRESS)   # internal: one run, as JSON
    args = parser.parse_args(argv)
    if args.cells:
        cell_by_cell()
        return
    if args.one_run:
        print(json.dumps(grade_copies(args.one_run, args.workers, args.baseline)))
        return
    if args.copies < 2:
        parser.error("--copies must be at least 2")
    if args.baseline:
        run = fresh_run(args.copies, args.workers, args.baseline)
        ours, theirs = statistics.median(run["per_sandbox"]), statistics.median(run["baseline"])
        print(f"sandbox CPU-s per notebook, medians of {args.copies}: worked solution {ours:.1f} "
              f"{run['per_sandbox']}, baseline {theirs:.1f} {run['baseline']}; ratio {ours / theirs:.2f}")
        return
    runs = [fresh_run(1, args.workers), fresh_run(args.copies, args.workers)]
    for r in runs:
        print(f"{r['copies']:3d} notebooks: grader process {r['grader']:7.1f} CPU-s, sandboxes {r['sandboxes']:7.1f} "
              f"CPU-s {r['per_sandbox']}, {r['wall']:6.1f} s wall")
    total = [r["grader"] + r["sandboxes"] for r in runs]
    per_notebook = (total[1] - total[0]) / (args.copies - 1)
    fixed = total[0] - per_notebook
    projected = fixed + CLASS_SIZE * per_notebook
    print(f"per notebook: {per_notebook:.1f} CPU-s (goal: at most {CORES * HOUR / CLASS_SIZE:.0f}); "
          f"once per run: {fixed:.1f} CPU-s")
    print(f"a class of {CLASS_SIZE}: {projected:,.0f} CPU-s, {projected / CORES / HOUR:.2f} h on {CORES} idle cores "
          f"(load average now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
