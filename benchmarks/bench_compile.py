"""CPU time to compile Leduc poker: by deals (labkit.games.deals) against the history walk.

    .venv/bin/python benchmarks/bench_compile.py                 # 2-player and 3-player Leduc
    .venv/bin/python benchmarks/bench_compile.py --players 3 --no-walk

For each game, the compile by deals (the default of `labkit.games.load`) and the history-by-
history walk (`compile_game(..., by_deals=False)`), alternating, each the median CPU time
(`time.process_time`) of its repeats; ratio = walk / by deals. The two trees are compared array
for array (tests/test_games.py does the same). Goal (issue 14): 3-player Leduc under 5 s of CPU.
The walk of 3-player Leduc takes ~20 s and ~1.3 GB; `--no-walk` skips it.
"""
import argparse
import statistics
import time

import numpy as np

from labkit.games.base import compile_game
from labkit.games.leduc import LeducPoker


def cpu(function):
    start = time.process_time()
    result = function()
    return time.process_time() - start, result


def same(a, b):
    names = ("parent", "action", "player", "depth", "infoset", "chance_prob", "returns", "infoset_player",
             "legal_mask", "infoset_parent_seq", "own_last_seq")
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in names) and a.infoset_keys == b.infoset_keys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, nargs="*", default=[2, 3])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-walk", action="store_true")
    args = parser.parse_args()
    for n in args.players:
        fast, slow, trees = [], [], {}
        walk_repeats = 0 if args.no_walk else (args.repeats if n == 2 else 1)
        for k in range(args.repeats):
            seconds, trees["deals"] = cpu(lambda: compile_game(LeducPoker(n), by_deals=True))
            fast.append(seconds)
            if k < walk_repeats:
                seconds, trees["walk"] = cpu(lambda: compile_game(LeducPoker(n), by_deals=False))
                slow.append(seconds)
        tree = trees["deals"]
        line = (f"{tree.name}: {tree.num_histories:,} histories; by deals {statistics.median(fast):.3f} s CPU "
                f"(repeats {', '.join(f'{s:.2f}' for s in fast)})")
        if slow:
            line += (f", walk {statistics.median(slow):.2f} s CPU, ratio {statistics.median(slow) / statistics.median(fast):.1f}x, "
                     f"same tree: {same(tree, trees['walk'])}")
        print(line)


if __name__ == "__main__":
    main()
