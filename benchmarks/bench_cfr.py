"""Speed of labkit's CFR family, side by side with OpenSpiel in the same run.

    .venv/bin/python benchmarks/bench_cfr.py            # about a minute
    .venv/bin/python benchmarks/bench_cfr.py --quick    # fewer repeats, no OpenSpiel Kuhn table
    .venv/bin/python benchmarks/bench_cfr.py --chapter ../shared/seeds/001_fc91a3b766b90c45.txt
                                                         # also time the chapter's own code

1. Per-iteration time on Kuhn and Leduc of labkit's CFR (simultaneous and alternating), CFR+ and
   DCFR, with the numpy backend and (if numba is installed) the compiled one, both one `step()`
   at a time and in `run(100)` batches, against OpenSpiel's C++ `CFRSolver` / `CFRPlusSolver` and Python `_CFRSolver`
   (simultaneous: the only OpenSpiel version of the chapter's CFR). Each timing is the median of
   several blocks of CPU time (`time.process_time`), alternating between the solvers, so a burst
   of load on this shared machine hits both sides; ratios > 1 mean labkit is faster.
2. The chapter's Kuhn table: 10,000 CFR and 10,000 CFR+ iterations with the NashConv of the
   average and the current policy at T = 10, 100, 1000, 10000 (16 evaluations), with labkit, and
   the same table with OpenSpiel (Python simultaneous CFR, C++ CFR+, `pyspiel.nash_conv`).
3. Optionally, the chapter's own recursive code (executed from the reference document).
"""
from __future__ import annotations

import argparse
import re
import statistics
import time

import labkit as lk
from labkit.cfr import CFR, DCFR, CFRPlus

CHECKPOINTS = (10, 100, 1000, 10000)


def interleaved(steppers, iterations, repeats):
    """Per-iteration medians of several solvers, measured in alternating blocks."""
    samples = {name: [] for name in steppers}
    for _ in range(repeats):
        for name, (step, n) in steppers.items():
            count = max(1, int(iterations * n))
            start = time.process_time()         # CPU time of this process: less sensitive to other jobs
            for _ in range(count):
                step()
            samples[name].append((time.process_time() - start) / count)
    return {name: statistics.median(v) for name, v in samples.items()}


def batched(solver, count):
    """A stepper running `count` iterations in one `run` call (the numba backend compiles the batch
    into one kernel call); its per-iteration time is the block time divided by `count`."""
    return lambda: solver.run(count)


def iteration_speed(game_name, quick):
    import pyspiel
    from open_spiel.python.algorithms import cfr as os_cfr

    game = lk.games.load(game_name)
    os_game = pyspiel.load_game(game_name)
    big = game_name.startswith("leduc")
    makers = {"CFR (simultaneous)": CFR, "CFR (alternating)": lambda g: CFR(g, alternating_updates=True),
              "CFR+": CFRPlus, "DCFR": DCFR}
    backends = ["numpy"] + (["numba"] if lk.kernels.available() else [])
    ours, batch = {}, 100
    for backend in backends:
        with lk.kernels.using(backend):
            for name, make in makers.items():
                ours[f"{name} [{backend}]"] = (make(game), 1)
                if backend == "numba":
                    ours[f"{name} [numba, run({batch})]"] = (make(game), batch)
    theirs = {"C++ CFRSolver": pyspiel.CFRSolver(os_game), "C++ CFRPlusSolver": pyspiel.CFRPlusSolver(os_game),
              "Py _CFRSolver (simultaneous)": os_cfr._CFRSolver(os_game, regret_matching_plus=False,
                                                                alternating_updates=False, linear_averaging=False)}
    for solver, _ in ours.values():
        solver.run(3)                                   # warm-up: index arrays, compiled kernels
    steppers = {}
    for name, (solver, count) in ours.items():
        numpy_side = name.endswith("[numpy]")
        steppers[name] = ((solver.step, (0.3 if numpy_side else 1.0)) if count == 1
                          else (batched(solver, count), 1.0 / count))
    # OpenSpiel's Python solver is ~100x slower: time fewer of its iterations per block
    steppers.update({name: (s.evaluate_and_update_policy, 0.05 if name.startswith("Py") and big else
                            (0.2 if big else 1.0)) for name, s in theirs.items()})
    iterations = (40 if big else 400) if quick else (100 if big else 2000)
    times = interleaved(steppers, iterations, 3 if quick else 5)
    for name, (_, count) in ours.items():
        times[name] /= count                            # per iteration
    print(f"\n{game_name}: CPU time per iteration (median of blocks)")
    for name, t in times.items():
        print(f"  {name:40s} {t * 1e6:10.2f} us")
    print("  speed-up (OpenSpiel time / labkit time):")
    for backend in [f"[{b}]" for b in backends] + ([f"[numba, run({batch})]"] if "numba" in backends else []):
        for a, b in [("CFR (simultaneous)", "Py _CFRSolver (simultaneous)"), ("CFR (alternating)", "C++ CFRSolver"),
                     ("CFR+", "C++ CFRPlusSolver"), ("CFR (simultaneous)", "C++ CFRSolver")]:
            name = f"{a} {backend}"
            print(f"    {name:40s} vs {b:30s} {times[b] / times[name]:8.2f}x")
    return times


def labkit_table():
    game = lk.games.load("kuhn_poker")
    rows = []
    for cls in (lk.CFR, lk.CFRPlus):
        solver, row = cls(game), []
        for T in CHECKPOINTS:
            solver.run(T - solver.iteration)
            row.append((lk.nash_conv(game, solver.average_policy()), lk.nash_conv(game, solver.current_policy())))
        rows.append(row)
    return rows


def openspiel_table():
    import pyspiel
    from open_spiel.python.algorithms import cfr as os_cfr
    from open_spiel.python.algorithms import exploitability

    os_game = pyspiel.load_game("kuhn_poker")
    rows = []
    simultaneous = os_cfr._CFRSolver(os_game, regret_matching_plus=False, alternating_updates=False,
                                     linear_averaging=False)
    plus = pyspiel.CFRPlusSolver(os_game)
    row, done = [], 0
    for T in CHECKPOINTS:
        for _ in range(T - done):
            simultaneous.evaluate_and_update_policy()
        done = T
        row.append((exploitability.nash_conv(os_game, simultaneous.average_policy()),
                    exploitability.nash_conv(os_game, simultaneous.current_policy())))
    rows.append(row)
    row, done = [], 0
    for T in CHECKPOINTS:
        for _ in range(T - done):
            plus.evaluate_and_update_policy()
        done = T
        row.append((pyspiel.nash_conv(os_game, plus.average_policy()), None))   # the C++ solver has no current policy
    rows.append(row)
    return rows


def show_table(rows):
    for name, row in zip(("CFR", "CFR+"), rows):
        print(f"    {name:6s}" + "    ".join(f"{a:.4f} ({'  -  ' if c is None else format(c, '.3f')})"
                                           for a, c in row))


def chapter_code(path):
    """Run the chapter's own code block (the Kuhn CFR example) from the reference document."""
    text = open(path, encoding="utf-8").read()
    start = text.index("import itertools\n\nimport numpy as np\n\n# Counterfactual regret minimization on Kuhn")
    stop = text.index("\n# exploitability of the average strategy", start)
    code = re.sub(r"^(\s*)print\(.*$", r"\1pass", text[start:stop], flags=re.M)   # silence its output
    return _timed(lambda: exec(compile(code, path, "exec"), {"__name__": "chapter"}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--chapter", metavar="PATH", help="time the chapter's code from this document too")
    args = parser.parse_args()

    for name in ("kuhn_poker", "leduc_poker"):
        iteration_speed(name, args.quick)

    print("\nThe chapter's Kuhn table (10,000 CFR + 10,000 CFR+ iterations, 16 NashConvs)")
    for backend in ["numpy"] + (["numba"] if lk.kernels.available() else []):
        with lk.kernels.using(backend):
            labkit_table()                                # warm-up
            timings = [_timed(labkit_table) for _ in range(3)]
        seconds = statistics.median(t for t, _ in timings)
        cpu = statistics.median(c for _, c in timings)     # the last backend's is compared below
        print(f"  labkit ({backend}): {seconds:6.3f} s wall, {cpu:6.3f} s CPU (median of 3; wall > CPU means "
              "other load)")
    show_table(labkit_table())
    if not args.quick:
        os_seconds, os_cpu = _timed(openspiel_table)
        print(f"  OpenSpiel (Python simultaneous CFR, C++ CFR+): {os_seconds:6.3f} s wall, {os_cpu:6.3f} s CPU "
              f"= {os_cpu / cpu:.1f}x labkit's CPU time")
        show_table(openspiel_table())
    if args.chapter:
        chapter_seconds, chapter_cpu = chapter_code(args.chapter)
        print(f"  the chapter's recursive code: {chapter_seconds:6.2f} s wall, {chapter_cpu:6.2f} s CPU "
              f"= {chapter_cpu / cpu:.0f}x labkit's CPU time")


def _timed(function):
    """(wall seconds, CPU seconds of this process) of one call."""
    start, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - start, time.process_time() - cpu


if __name__ == "__main__":
    main()
