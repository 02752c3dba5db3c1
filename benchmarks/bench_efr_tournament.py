"""How fast is the EFR tournament runner, and where does the time go?

    .venv/bin/python benchmarks/bench_efr_tournament.py                  # 20 rounds, a few minutes
    .venv/bin/python benchmarks/bench_efr_tournament.py --rounds 10 --columns cf bhv
    .venv/bin/python benchmarks/bench_efr_tournament.py --full --workers 2  # the whole Leduc table

Everything is measured in the same run, against references measured in the same run:

1. bare learning: the EFR updates the table needs (each column's self-play plus every row's
   updates), stepped in a plain loop without the runner and without evaluation;
2. the runner, serial: the same work plus the per-round evaluation of every entry; the ratio to
   (1) is the runner's overhead;
3. the runner with ``rows_per_unit=1``: the column's self-play recomputed for every row, i.e. what
   a runner without shared column units costs; the ratio to (2) is what sharing saves;
4. the runner with ``--workers`` processes; the ratio to (2) is the parallel speed-up.

The full table (11 x 11 variants, 500 rounds) is extrapolated from the per-round cost, or timed
with ``--full``. The machine is shared: rerun when the load is low (``uptime``) for clean numbers.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from labkit.efr import EFR
from labkit.experiments import FIGURE_E5_VARIANTS, efr_tournament
from labkit.experiments.tournament import load_game


def bare_learning(game, rows, columns, rounds):
    """Seconds for the updates alone: every column's self-play and every row's updates on it."""
    tree = load_game(game)
    start = time.perf_counter()
    for c in columns:
        column = EFR(tree, deviations=c)
        learners = [EFR(tree, deviations=r) for r in rows]
        for _ in range(rounds - 1):
            y = column.current_policy().probs.copy()
            column.update(y)
            for learner in learners:
                learner.update(y)
    return time.perf_counter() - start


def timed(**kwargs):
    start = time.perf_counter()
    result = efr_tournament(progress=False, **kwargs)
    return time.perf_counter() - start, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--rows", nargs="+", default=list(FIGURE_E5_VARIANTS))
    parser.add_argument("--columns", nargs="+", default=["cf", "tips", "bhv"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--full", action="store_true", help="time the whole 11 x 11 x 500 table instead")
    args = parser.parse_args()
    print(f"{args.game}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")

    if args.full:
        seconds, _ = timed(game=args.game, rows=FIGURE_E5_VARIANTS, columns=FIGURE_E5_VARIANTS, rounds=500,
                           executor=args.workers)
        print(f"full fixed-regime table, 11 x 11 x 500 rounds, {args.workers} workers: {seconds:.1f} s")
        return

    rows, columns, rounds = args.rows, args.columns, args.rounds
    common = dict(game=args.game, rows=rows, columns=columns, rounds=rounds)
    efr_tournament(game=args.game, rows=rows, columns=columns[:1], rounds=2, executor="serial",
                   progress=False)    # build the deviation structures once (cached per game)
    bare = bare_learning(args.game, rows, columns, rounds)
    serial, reference = timed(executor="serial", **common)
    unshared, unshared_result = timed(executor="serial", rows_per_unit=1, **common)
    parallel, parallel_result = timed(executor=args.workers, **common)
    assert unshared_result.mean == reference.mean == parallel_result.mean

    entries = len(rows) * len(columns)
    print(f"{len(rows)} rows x {len(columns)} columns ({', '.join(columns)}) x {rounds} rounds")
    print(f"  bare EFR updates                      {bare:7.2f} s")
    print(f"  runner, serial                        {serial:7.2f} s   overhead x{serial / bare:.2f} over bare")
    print(f"  runner, self-play redone for each row {unshared:7.2f} s   x{unshared / serial:.2f} of shared")
    print(f"  runner, {args.workers} workers                      {parallel:7.2f} s   "
          f"speed-up x{serial / parallel:.2f}")
    per_entry_round = serial / (entries * rounds)
    full = per_entry_round * 121 * 500
    print(f"  {1e3 * per_entry_round:.2f} ms per entry and round (serial); full 11 x 11 x 500 table "
          f"~{full / 60:.1f} min serial, ~{full / 60 / (serial / parallel):.1f} min with {args.workers} workers "
          "(extrapolated from these columns)")
    np.testing.assert_array_equal(reference.matrix(), parallel_result.matrix())


if __name__ == "__main__":
    main()
