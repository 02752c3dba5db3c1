"""Speed of labkit's EFR for every deviation type, beside OpenSpiel's efr.py in the same run.

    .venv/bin/python benchmarks/bench_efr.py            # a few minutes (OpenSpiel takes seconds per Leduc step)
    .venv/bin/python benchmarks/bench_efr.py --quick    # fewer repeats, OpenSpiel on three types only
    .venv/bin/python benchmarks/bench_efr.py --goofspiel  # also goofspiel(5, ascending), incl. BHV

Times are CPU seconds of this process by default (robust to other jobs on a shared machine);
--wall measures wall-clock time instead.

1. Leduc: seconds per self-play iteration (`step`, both players) of each type, median of blocks,
   with labkit's default numerics and with fixed_point="paper" (the authors' floating-point
   order and Eigen solver); OpenSpiel's `EFRSolver` on the same types (1-2 iterations: it is pure
   Python), and the ratio to the default.
   OpenSpiel's non-"cf" types compute different (wrong on Leduc) deviations, see
   shared/reference/openspiel.md section 3.3: the comparison is of cost, not of results.
2. The cost of one seat's update against a fixed profile (`update(profile, players=[p])`), the unit
   of the paper's fixed regime, and the projected time of the full Leduc fixed-regime table
   (11 self-play columns, then 11 rows x 11 columns x 2 seats x 500 rounds of seat updates plus the
   evaluation of one expected payoff per seat update), on one core.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import labkit as lk
from labkit.efr import DEVIATION_NAMES, EFR

# labkit name -> OpenSpiel's EFRSolver name
OPENSPIEL_NAMES = {"act": "blind action", "act_in": "informed action", "cf": "blind cf", "cf_in": "informed cf",
                   "bps": "bps", "cfps": "cfps", "csps": "csps", "tips": "tips", "bhv": "bhv"}
PAPER_VARIANTS = [name for name in DEVIATION_NAMES if name != "act"]


def median_time(step, iterations, repeats, clock=None):
    """Median over `repeats` blocks of the seconds per call of `step`, on `clock` (default CLOCK)."""
    clock = clock or CLOCK
    samples = []
    for _ in range(repeats):
        start = clock()
        for _ in range(iterations):
            step()
        samples.append((clock() - start) / iterations)
    return statistics.median(samples)


# CPU time of this process: on a machine shared with other jobs, wall-clock time mostly measures
# the others' load (--wall switches to it)
CLOCK = time.process_time


def self_play_table(game, quick, openspiel_game=None, openspiel_types=()):
    print(f"\n{game.name}: seconds per self-play iteration (both players update)")
    from labkit.efr.eigen import available
    paper_ok = available()[0]
    print(f"  {'type':11s} {'labkit':>10s} {'paper':>10s} {'build':>8s} {'regrets':>8s} "
          f"{'OpenSpiel efr.py':>17s} {'ratio':>8s}")
    results = {}
    for kind in DEVIATION_NAMES:
        start = time.perf_counter()
        efr = EFR(game, kind)
        build = time.perf_counter() - start
        efr.run(3)                                    # warm-up
        ours = median_time(efr.step, 10 if quick else 30, 3 if quick else 5)
        paper = None
        if paper_ok:
            replica = EFR(game, kind, fixed_point="paper", record_profiles=False)
            replica.run(3)
            paper = median_time(replica.step, 10 if quick else 30, 3 if quick else 5)
        theirs = None
        if openspiel_game is not None and kind in openspiel_types:
            from open_spiel.python.algorithms import efr as os_efr
            solver = os_efr.EFRSolver(openspiel_game, OPENSPIEL_NAMES[kind])
            solver.evaluate_and_update_policy()       # warm-up (and its first, cheap, round)
            theirs = median_time(solver.evaluate_and_update_policy, 1, 2 if quick else 3)
        results[kind] = ours
        other = f"{theirs * 1e3:14.0f} ms" if theirs else f"{'-':>17s}"
        ratio = f"{theirs / ours:7.0f}x" if theirs else f"{'-':>8s}"
        paper_text = f"{paper * 1e3:7.2f} ms" if paper else f"{'-':>10s}"
        print(f"  {kind:11s} {ours * 1e3:7.2f} ms {paper_text} {build:7.2f}s {efr.structure.num_regrets():8d} "
              f"{other} {ratio}")
    return results


def fixed_regime_projection(game, rounds=500, quick=False):
    """Time one seat update and one seat evaluation per type; project the full fixed-regime table."""
    column = EFR(game, "cf")
    column.run(20)
    profile = column.profiles[-1]
    seat_update = {}
    for kind in PAPER_VARIANTS:
        learner = EFR(game, kind)
        learner.update(profile, players=[0])
        seat_update[kind] = median_time(lambda: [learner.update(profile, players=[p]) for p in range(2)],
                                        5 if quick else 15, 3) / 2
    mine = game.infoset_player == 0
    evaluate = median_time(lambda: lk.expected_payoffs(game, np.where(mine[:, None], profile, profile))[0],
                           20, 3)
    self_play = sum(median_time(EFR(game, k).step, 3, 1) for k in PAPER_VARIANTS) * rounds
    columns = len(PAPER_VARIANTS)
    table = columns * 2 * rounds * (sum(seat_update.values()) + len(PAPER_VARIANTS) * evaluate)
    print(f"\n{game.name}: one seat update against a fixed profile (fixed regime's unit of work)")
    for kind, t in seat_update.items():
        print(f"  {kind:11s} {t * 1e3:7.2f} ms")
    print(f"  expected payoff of one seat: {evaluate * 1e3:.2f} ms")
    total = self_play + table
    print(f"  projected fixed-regime table ({columns} x {columns} x 2 seats x {rounds} rounds): "
          f"{total:.0f} s on one core, {total / 2:.0f} s on two")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--goofspiel", action="store_true", help="also time goofspiel(5, ascending)")
    parser.add_argument("--no-openspiel", action="store_true")
    parser.add_argument("--wall", action="store_true", help="time with the wall clock, not CPU time")
    args = parser.parse_args()
    global CLOCK
    if args.wall:
        CLOCK = time.perf_counter
    print("clock:", "wall" if args.wall else "CPU time of this process")
    leduc = lk.games.load("leduc_poker")
    os_game = None
    if not args.no_openspiel:
        import pyspiel
        os_game = pyspiel.load_game("leduc_poker")
    os_types = ("cf", "tips", "bhv") if args.quick else tuple(OPENSPIEL_NAMES)
    self_play_table(leduc, args.quick, os_game, os_types)
    fixed_regime_projection(leduc, quick=args.quick)
    if args.goofspiel:
        spec = "goofspiel(num_cards=5,points_order=ascending,imp_info=True)"
        try:
            goofspiel = lk.games.load(spec)
        except Exception:                              # the native goofspiel may not exist yet
            goofspiel = lk.games.from_openspiel(spec)
        self_play_table(goofspiel, args.quick)


if __name__ == "__main__":
    main()
