"""The paper mode's fused round and compiled evaluation against the code of the cached runs,
side by side in one run, on a tournament slice.

    .venv/bin/python benchmarks/bench_efr_round.py                      # goofspiel(5, asc), tiny bridge
    .venv/bin/python benchmarks/bench_efr_round.py --games leduc sheriff --rounds 5
    .venv/bin/python benchmarks/bench_efr_round.py --games all

A slice is what ``scripts/regenerate_efr_results.py --estimate`` plays: every row of the game's
table against the replayed self-play of CF, fixed regime, serial, with the authors' numerics
(``fixed_point="paper"``), for --rounds rounds, after one untimed slice that builds the
structures (so only the per-round cost is timed). "old" is the code path that produced
labkit/data/efr/ (the learner's numpy block loop, ``EFR._fused_paper_round = False``, one solver
call per block, and numpy's terminal reaches); "new" is the default. The two alternate --repeats
times (the smaller CPU time of each is kept, so both see the same machine load), and the per-round
values of every row must agree bit for bit. CPU time of this process; --wall for wall-clock.

The last two columns scale each slice to both regimes of the game's full table (500 rounds) on
--workers processes, as ``--estimate`` does, but from a slice whose structures were already
built: a full run builds them once per worker, so they do not scale with the table (the
script's first slice of a game includes them, about a second of CPU that it multiplies by
about a thousand). Early rounds cost more than late ones under the new code (later rounds reuse
more of the solver's results), so the slice overestimates it a little.
"""
from __future__ import annotations

import argparse
import time
from contextlib import ExitStack
from unittest import mock

import numpy as np

from labkit.efr import EFR
from labkit.experiments import tournament
from labkit.experiments.games import PAPER_GAMES, paper_game

DEFAULT_GAMES = ("goofspiel5_2p", "tiny_bridge_2p")


def play(game, rounds, old):
    with ExitStack() as stack:
        if old:
            stack.enter_context(mock.patch.object(EFR, "_fused_paper_round", False))
            stack.enter_context(mock.patch.object(tournament, "_reach_scratch", lambda unit, g: None))
        result = tournament.efr_tournament(game.spec, game.variants, [game.variants[min(1, len(game.variants) - 1)]],
                                           regime="fixed", rounds=rounds, executor="serial",
                                           progress=False, fixed_point="paper")
    column = result.columns[0]
    return np.array([result.per_round[r][column] for r in result.rows])


def compare(game, rounds, repeats, clock):
    """(old seconds, new seconds, bitwise equal) of one slice."""
    tournament.load_game(game.spec)
    play(game, 2, old=False)                           # builds the structures and the library
    seconds = {True: [], False: []}
    values = {}
    for _ in range(repeats):
        for old in (True, False):
            start = clock()
            values[old] = play(game, rounds, old)
            seconds[old].append(clock() - start)
    equal = np.array_equal(values[True].view(np.int64), values[False].view(np.int64))
    return min(seconds[True]), min(seconds[False]), equal


def main(argv=None):
    names = [g.key for g in PAPER_GAMES]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", default=list(DEFAULT_GAMES), choices=names + ["all"])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2,
                        help="workers the estimate of the full runs assumes (default 2)")
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.wall else time.process_time
    chosen = names if "all" in args.games else args.games
    print(f"slice: every row against CF's self-play, {args.rounds} rounds, serial; "
          f"{'wall' if args.wall else 'CPU'} seconds, best of {args.repeats}")
    print(f"{'game':28s} {'rows':>4s} {'old s':>8s} {'new s':>8s} {'old/new':>8s} "
          f"{'both regimes, old':>18s} {'new':>6s}  bitwise equal")
    totals = [0.0, 0.0]
    for name in chosen:
        game = paper_game(name)
        old, new, equal = compare(game, args.rounds, args.repeats, clock)
        # both regimes of the full table, as scripts/regenerate_efr_results.py --estimate scales a
        # slice (a regime is about (n^2 + n) x 500 learner-rounds), on --workers processes
        n = len(game.variants)
        scale = 2 * (n * n + n) * 500 / args.workers / ((n + 1) * args.rounds)
        totals[0] += old * scale
        totals[1] += new * scale
        print(f"{name:28s} {n:4d} {old:8.3f} {new:8.3f} {old / new:8.2f} {old * scale:18.0f} "
              f"{new * scale:6.0f}  {equal}", flush=True)
    print(f"{'total':28s} {'':4s} {'':8s} {'':8s} {'':8s} {totals[0]:18.0f} {totals[1]:6.0f}")


if __name__ == "__main__":
    main()
