"""How close is the EFR command line's time estimate to the time a run really takes?

    .venv/bin/python benchmarks/bench_estimate.py            # three slices, serial, about a minute
    .venv/bin/python benchmarks/bench_estimate.py --rounds 40

For each slice, in the same run: the estimate `python -m labkit.experiments` prints (a few timed
updates of each variant, `labkit.experiments.estimate`), then the tournament itself, timed; the
ratio estimate / measured is what to read (1.0 is exact). The machine is shared: rerun when the
load is low (``uptime``) for clean numbers; both sides see the same load.
"""
from __future__ import annotations

import argparse
import functools
import os
import time

from labkit.experiments import efr_tournament
from labkit.experiments.estimate import measure_costs, predict_seconds
from labkit.experiments.tournament import efr_learner

SLICES = [
    ("kuhn_poker", ["cf", "cf_in", "tips", "bhv"], "fixed"),
    ("leduc_poker", ["cf", "tips", "bhv"], "fixed"),
    ("leduc_poker", ["cf", "tips", "bhv"], "simultaneous"),
]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}; serial runs of {args.rounds} rounds, exact fixed point")
    print(f"{'game':12s} {'regime':13s} {'variants':22s} {'estimate s':>10s} {'measured s':>10s} {'ratio':>6s}")
    learner = functools.partial(efr_learner, fixed_point="exact")
    for game, variants, regime in SLICES:
        start = time.perf_counter()
        costs = measure_costs(game, variants, learner)
        probe = time.perf_counter() - start
        predicted = predict_seconds(costs, variants, variants, regime, args.rounds, workers=1)
        start = time.perf_counter()
        efr_tournament(game, variants, variants, regime=regime, rounds=args.rounds, executor="serial",
                       progress=False, fixed_point="exact")
        measured = time.perf_counter() - start
        print(f"{game:12s} {regime:13s} {' '.join(variants):22s} {predicted:10.2f} {measured:10.2f} "
              f"{predicted / measured:6.2f}   (probe {probe:.2f} s)")


if __name__ == "__main__":
    main()
