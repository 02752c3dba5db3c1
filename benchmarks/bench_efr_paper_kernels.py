"""The paper mode's compiled loops against the numpy code they replace, side by side in one run.

    .venv/bin/python benchmarks/bench_efr_paper_kernels.py              # Sheriff, goofspiel(5, desc), Leduc
    .venv/bin/python benchmarks/bench_efr_paper_kernels.py --games leduc --updates 5

For each game and deviation type: CPU seconds per `update` of one learner (both seats) against
the CF self-play profile, with fixed_point="paper", once with numpy's loops (the code that made
the cached tables, in the learner's block loop) and once with ``paper_kernels.cpp`` (the default
fused round, labkit.efr.paper_numerics), alternating
block by block so that both see the same machine load; then the ratio, and whether the two
learners' regrets and profiles stayed bitwise equal. CPU time of this process, robust to other
jobs; --wall for wall-clock time.
"""
from __future__ import annotations

import argparse
import statistics
import time
from unittest import mock

import numpy as np

from labkit.efr import paper_numerics
from labkit.experiments.games import resolve_game
from labkit.experiments.tournament import efr_learner, load_game

NUMPY_LOOPS = {"block_update": paper_numerics.block_update_numpy,
               "immediate_regrets_compiled": paper_numerics.immediate_regrets,
               "counterfactual_values_compiled": paper_numerics.counterfactual_values}
GAMES = {"sheriff": ("bhv", "tips_ex+in"), "goofspiel5_2p_descending": ("bhv", "tips"),
         "leduc": ("bhv", "tips")}


def bitwise_equal(a, b):
    return np.array_equal(np.asarray(a).view(np.int64), np.asarray(b).view(np.int64))


def compare(game_name, kind, updates, clock):
    """(numpy s/update, compiled s/update, bitwise equal) over `updates` updates of each."""
    game = load_game(resolve_game(game_name))
    column = efr_learner(game, "cf", "paper")
    learners = {"numpy": efr_learner(game, kind, "paper"), "compiled": efr_learner(game, kind, "paper")}
    learners["numpy"]._fused_paper_round = False       # the block loop, where the numpy loops sit
    seconds = {name: [] for name in learners}
    for _ in range(updates):
        y = column._probs.copy()
        column._update_unchecked(y)
        for name, learner in learners.items():
            start = clock()
            if name == "numpy":
                with mock.patch.multiple(paper_numerics, **NUMPY_LOOPS):
                    learner._update_unchecked(y)
            else:
                learner._update_unchecked(y)
            seconds[name].append(clock() - start)
    equal = (bitwise_equal(learners["numpy"].regrets, learners["compiled"].regrets)
             and bitwise_equal(learners["numpy"]._probs, learners["compiled"]._probs))
    # the first update also builds caches: the median of the rest
    pick = (lambda s: statistics.median(s[1:])) if updates > 1 else (lambda s: s[0])
    return pick(seconds["numpy"]), pick(seconds["compiled"]), equal, learners["compiled"].structure


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", default=list(GAMES), choices=list(GAMES))
    parser.add_argument("--updates", type=int, default=4)
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.wall else time.process_time
    print(f"{'game':26s} {'type':11s} {'rows x slots':>16s} {'numpy s':>9s} {'compiled s':>11s} "
          f"{'ratio':>6s}  bitwise equal")
    for game_name in args.games:
        for kind in GAMES[game_name]:
            slow, fast, equal, structure = compare(game_name, kind, args.updates, clock)
            size = f"{structure.num_rows} x {structure.num_slots}"
            print(f"{game_name:26s} {kind:11s} {size:>16s} {slow:9.3f} {fast:11.3f} {slow / fast:6.1f}  {equal}",
                  flush=True)


if __name__ == "__main__":
    main()
