"""Speed of labkit's Monte Carlo CFR, side by side with OpenSpiel's Python and C++ MCCFR.

    .venv/bin/python benchmarks/bench_mccfr.py            # about a minute
    .venv/bin/python benchmarks/bench_mccfr.py --quick

Per-iteration time (one sampled episode per player, the convention of all three) of outcome
sampling (exploration 0.6) and external sampling (simple averaging) on Kuhn and Leduc, for

* labkit's `MCCFR(sampling=...)`,
* OpenSpiel's Python `OutcomeSamplingSolver` / `ExternalSamplingSolver` (the issue's goal:
  labkit at least 10x faster), and
* OpenSpiel's C++ `OutcomeSamplingMCCFRSolver` / `ExternalSamplingMCCFRSolver`,
* and, where numba is installed, labkit's compiled episodes (`labkit.kernels`), one `step()` at
  a time and in `run(1000)` batches (one kernel call per batch; same numbers as numpy's).

Blocks of iterations alternate between the three, and each time is the median over blocks of
CPU time (`time.process_time`), so a burst of load on this shared machine hits all of them. Ratios > 1 mean labkit is faster. The
NashConv reached after the timed iterations is printed as a sanity check (the three use
different random streams, so they agree only statistically).
"""
from __future__ import annotations

import argparse

import numpy as np

import labkit as lk
from labkit.mccfr import MCCFR

from bench_cfr import interleaved   # the same alternating-block timing (run from benchmarks/ or by path)


BATCH = 1000       # iterations per run() call of the batched numba stepper


def compare(game_name, sampling, quick):
    import pyspiel
    from open_spiel.python.algorithms import exploitability
    from open_spiel.python.algorithms.external_sampling_mccfr import ExternalSamplingSolver
    from open_spiel.python.algorithms.outcome_sampling_mccfr import OutcomeSamplingSolver

    game = lk.games.load(game_name)
    os_game = pyspiel.load_game(game_name)
    with lk.kernels.using("numpy"):
        ours = MCCFR(game, sampling=sampling, seed=0)
    compiled = {}
    if lk.kernels.available():
        with lk.kernels.using("numba"):
            compiled = {"labkit numba": MCCFR(game, sampling=sampling, seed=0),
                        f"labkit numba run({BATCH})": MCCFR(game, sampling=sampling, seed=0)}
    np.random.seed(0)                                  # OpenSpiel's Python MCCFR uses the global state
    if sampling == "outcome":
        python = OutcomeSamplingSolver(os_game)
        cpp = pyspiel.OutcomeSamplingMCCFRSolver(os_game, epsilon=0.6, seed=0)
    else:
        python = ExternalSamplingSolver(os_game)
        cpp = pyspiel.ExternalSamplingMCCFRSolver(os_game, seed=0)
    steppers = {"labkit": (ours.step, 1.0), "OpenSpiel Python": (python.iteration, 0.1),
                "OpenSpiel C++": (cpp.run_iteration, 1.0)}
    if compiled:
        steppers["labkit numba"] = (compiled["labkit numba"].step, 1.0)
        batch_solver = compiled[f"labkit numba run({BATCH})"]
        steppers[f"labkit numba run({BATCH})"] = (lambda: batch_solver.run(BATCH), 1.0 / BATCH)
    for step, _ in steppers.values():                 # warm-up (table lookups, caches)
        for _ in range(20):
            step()
    iterations = 500 if quick else 2000
    times = interleaved(steppers, iterations, 3 if quick else 7)
    if compiled:
        times[f"labkit numba run({BATCH})"] /= BATCH
    print(f"\n{game_name}, {sampling} sampling: CPU time per iteration (median of blocks)")
    print(f"  {'':24s} {'':12s} {'speed-up of labkit (numpy)':>28s} {'of labkit numba, step / run':>30s}")
    for name, t in times.items():
        line = f"  {name:24s} {t * 1e6:9.2f} us {t / times['labkit']:22.2f}x"
        if compiled:
            line += (f" {t / times['labkit numba']:18.2f}x / "
                     f"{t / times[f'labkit numba run({BATCH})']:.2f}x")
        print(line)
    nash = {"labkit": lk.nash_conv(game, ours.average_policy()),
            "OpenSpiel Python": exploitability.nash_conv(os_game, python.average_policy()),
            "OpenSpiel C++": pyspiel.nash_conv(os_game, cpp.average_policy(), True)}
    done = {"labkit": ours.iteration}
    print("  NashConv after the timed iterations: " +
          ", ".join(f"{name} {value:.3f}" for name, value in nash.items()) +
          f"  (labkit: {done['labkit']} iterations; OpenSpiel Python ran 10x fewer)")
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for game_name in ("kuhn_poker", "leduc_poker"):
        for sampling in ("outcome", "external"):
            compare(game_name, sampling, args.quick)


if __name__ == "__main__":
    main()
