"""Speed of labkit's MMD and PSRO, side by side with OpenSpiel in the same run.

    .venv/bin/python benchmarks/bench_mmd_psro.py            # about a minute
    .venv/bin/python benchmarks/bench_mmd_psro.py --quick    # fewer iterations

1. MMD (dilated entropy, alpha = 0.05, OpenSpiel's default stepsize) on Kuhn and Leduc: seconds
   per iteration of labkit's `MMD(magnet="entropy")` and of OpenSpiel's `MMDDilatedEnt`, their
   ratio, and the last-iterate NashConv of both after the same number of iterations (they must
   agree: it is the same algorithm).
2. PSRO on Kuhn and Leduc: seconds per PSRO iteration of labkit's exact PSRO. OpenSpiel's
   psro_v2 needs cvxpy/ecos, which the environment does not install, so no same-run ratio is
   printed; reference/openspiel.md measured 0.2 to 1.5 s per iteration on Kuhn (1000
   simulations per meta-game entry).

The machine is shared: look at `uptime` and rerun when the load is low; ratios measured in one
run are more reliable than absolute times.
"""
from __future__ import annotations

import argparse
import time
import warnings

import labkit as lk
from labkit.mmd import MMD
from labkit.psro import PSRO


def per_iteration(step, iterations):
    start = time.perf_counter()
    for _ in range(iterations):
        step()
    return (time.perf_counter() - start) / iterations


def bench_mmd(spec, ours_iterations, theirs_iterations):
    import pyspiel
    from open_spiel.python.algorithms.exploitability import nash_conv as openspiel_nash_conv
    from open_spiel.python.algorithms.mmd_dilated import MMDDilatedEnt
    game, os_game = lk.games.load(spec), pyspiel.load_game(spec)
    ours, theirs = MMD(game, alpha=0.05, magnet="entropy"), MMDDilatedEnt(os_game, alpha=0.05)
    t_theirs = per_iteration(theirs.update_sequences, theirs_iterations)
    t_ours_same = per_iteration(ours.step, theirs_iterations)      # the same iterations, to compare NashConv
    ours_nash_conv = lk.nash_conv(game, ours.current_policy())
    theirs_nash_conv = openspiel_nash_conv(os_game, theirs.get_policies())
    t_ours = per_iteration(ours.step, ours_iterations)
    print(f"MMD {spec:12s} labkit {1e3 * t_ours:8.3f} ms/iter   OpenSpiel {1e3 * t_theirs:8.1f} ms/iter   "
          f"ratio {t_theirs / t_ours:7.0f}x   NashConv after {theirs_iterations}: "
          f"{ours_nash_conv:.10f} vs {theirs_nash_conv:.10f}  (labkit's first {theirs_iterations}: "
          f"{1e3 * t_ours_same:.3f} ms/iter)")


def bench_psro(spec, iterations, meta_solver="nash"):
    game = lk.games.load(spec)
    psro = PSRO(game, meta_solver=meta_solver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = per_iteration(psro.step, iterations)
    print(f"PSRO {spec:12s} meta_solver={meta_solver!r}: {1e3 * t:8.1f} ms per PSRO iteration "
          f"(mean over {iterations}; population {psro.population_sizes[0]}), "
          f"NashConv {psro.nash_conv_history[-1][1]:.4g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    quick = args.quick
    bench_mmd("kuhn_poker", 500 if quick else 3000, 20 if quick else 200)
    bench_mmd("leduc_poker", 50 if quick else 300, 2 if quick else 10)
    bench_psro("kuhn_poker", 10)
    bench_psro("leduc_poker", 10 if quick else 40)
    bench_psro("leduc_poker", 10 if quick else 40, meta_solver="uniform")


if __name__ == "__main__":
    main()
