"""What validating a raw policy array costs, next to the evaluation it guards.

    .venv/bin/python benchmarks/bench_validation.py [--game leduc_poker] [--quick]

Times, in alternating blocks (median CPU time per call): `labkit.policy.check_probs` alone,
`nash_conv` of a TabularPolicy (validated when it was made, so not again) and `nash_conv` of the
same raw array (validated on every call). Goal (issue 14): validation under 5% of a Leduc NashConv.
"""
import argparse
import time

import numpy as np

import labkit as lk
from labkit.policy import check_probs


def per_call(function, calls):
    start = time.process_time()
    for _ in range(calls):
        function()
    return (time.process_time() - start) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    game = lk.games.load(args.game)
    rng = np.random.default_rng(0)
    raw = rng.exponential(size=game.legal_mask.shape) * game.legal_mask
    raw /= raw.sum(axis=1, keepdims=True)
    policy = lk.TabularPolicy(game, raw)
    calls, blocks = (200, 5) if args.quick else (1000, 15)
    cases = {"check_probs": lambda: check_probs(game, raw),
             "nash_conv(TabularPolicy)": lambda: lk.nash_conv(game, policy),
             "nash_conv(raw array)": lambda: lk.nash_conv(game, raw)}
    times = {name: [] for name in cases}
    for _ in range(blocks):
        for name, function in cases.items():
            times[name].append(per_call(function, calls))
    median = {name: float(np.median(t)) for name, t in times.items()}
    for name, t in median.items():
        print(f"{args.game:14s} {name:26s} {t * 1e6:8.1f} us")
    print(f"validation / NashConv: {median['check_probs'] / median['nash_conv(TabularPolicy)']:.1%} "
          f"(raw-array NashConv costs {median['nash_conv(raw array)'] / median['nash_conv(TabularPolicy)'] - 1:+.1%})")


if __name__ == "__main__":
    main()
