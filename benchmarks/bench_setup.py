"""Set-up cost: labkit's compile and first CFR+ step against OpenSpiel's CFRPlusSolver construction.

    .venv/bin/python benchmarks/bench_setup.py                       # goofspiel 4, 5, 6 and 3-player Leduc
    .venv/bin/python benchmarks/bench_setup.py --games "goofspiel(num_cards=4,imp_info=True,points_order=descending)"
    .venv/bin/python benchmarks/bench_setup.py --adapter --games leduc_poker "liars_dice(numdice=1)"
    .venv/bin/python benchmarks/bench_setup.py --adapter --python-peer --games kuhn_poker leduc_poker
    .venv/bin/python benchmarks/bench_setup.py --cold --repeats 31 \
        --games "goofspiel(num_cards=4,imp_info=True,points_order=descending)"

For each game, in one process, alternating (CPU time, `time.process_time`, median over --repeats):

* labkit: compile the game from its definition (`labkit.games.compile_game`, what `load` does on
  a string it has not seen) and make a `CFRPlus` and run its first `step()` (the sequence-form
  index arrays and the compiled kernel's plan are built there);
  With ``--adapter`` the game is compiled from OpenSpiel's own implementation instead
  (`labkit.games.openspiel_adapter.OpenSpielDefinition`, what ``labkit.games.from_openspiel``
  does: every state is asked of pyspiel);
  labkit keeps the points-order-free part of a small goofspiel tree (its skeleton,
  `labkit.games.goofspiel_levels`), so from the second repeat on a goofspiel compile starts from
  it; ``--cold`` forgets it before each repeat (what the first compile of a size costs);
* OpenSpiel: ``pyspiel.CFRPlusSolver(game)`` (its constructor walks the whole tree and builds its
  information-state table), for goofspiel on ``pyspiel.convert_to_turn_based`` of the same game;
  with ``--python-peer`` also OpenSpiel's Python ``CFRPlusSolver`` (its construction asks pyspiel
  for every state through the same Python API as the adapter: the fair peer of ``--adapter``).

Printed per history; ratio = OpenSpiel time / labkit time (issue 25's goal: >= 1). Goofspiel 6
has about 10^6 histories: its repeats take minutes and ~1 GB.
"""
from __future__ import annotations

import argparse
import statistics
import time

GAMES = ["goofspiel(num_cards=4,imp_info=True,points_order=descending)",
         "goofspiel(num_cards=5,imp_info=True,points_order=descending)",
         "goofspiel(num_cards=6,imp_info=True,points_order=descending)",
         "leduc_poker(players=3)"]


def cpu(function):
    start = time.process_time()
    result = function()
    return time.process_time() - start, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", default=GAMES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--adapter", action="store_true",
                        help="compile through labkit's OpenSpiel adapter instead of labkit's own game")
    parser.add_argument("--python-peer", action="store_true",
                        help="also time OpenSpiel's Python CFRPlusSolver (open_spiel.python.algorithms.cfr), "
                             "whose construction walks the game through pyspiel's Python API as the adapter does")
    parser.add_argument("--cold", action="store_true",
                        help="forget the goofspiel skeletons labkit keeps before each repeat: the cost of "
                             "the first compile of a size in a process")
    args = parser.parse_args(argv)

    import pyspiel

    import labkit as lk
    from labkit.games import NATIVE_GAMES, parse_spec
    from labkit.games import goofspiel_levels
    from labkit.games.base import compile_game

    print(f"labkit backend: {lk.kernels.backend()}; CPU seconds, median of the repeats\n")
    print(f"{'game':62s} {'histories':>10s} {'labkit load':>12s} {'+ 1st step':>11s} {'OpenSpiel':>10s} "
          f"{'us/history labkit / OpenSpiel':>31s} {'ratio':>6s}")
    for spec in args.games:
        name, params = parse_spec(spec)
        os_game = pyspiel.load_game(spec)
        if os_game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
            os_game = pyspiel.convert_to_turn_based(os_game)
        repeats = 1 if "num_cards=6" in spec else args.repeats
        loads, steps, theirs, python_peer = [], [], [], []
        for _ in range(repeats):
            if args.cold:
                goofspiel_levels._kept_skeleton.cache_clear()
            if args.adapter:
                from labkit.games.openspiel_adapter import OpenSpielDefinition
                seconds, tree = cpu(lambda: compile_game(OpenSpielDefinition(pyspiel.load_game(spec))))
            else:
                seconds, tree = cpu(lambda: compile_game(NATIVE_GAMES[name](**params)))
            loads.append(seconds)
            H = tree.num_histories
            seconds, _ = cpu(lambda: lk.CFRPlus(tree).step())
            steps.append(seconds)
            del tree
            seconds, solver = cpu(lambda: pyspiel.CFRPlusSolver(os_game))
            theirs.append(seconds)
            del solver
            if args.python_peer:
                from open_spiel.python.algorithms import cfr as openspiel_python_cfr
                seconds, solver = cpu(lambda: openspiel_python_cfr.CFRPlusSolver(os_game))
                python_peer.append(seconds)
                del solver
        load, step, other = statistics.median(loads), statistics.median(steps), statistics.median(theirs)
        ours = load + step
        label = f"{spec} (adapter)" if args.adapter else f"{spec} (cold)" if args.cold else spec
        print(f"{label:62s} {H:10,d} {load:10.3f} s {step:9.3f} s {other:8.3f} s "
              f"{ours / H * 1e6:14.2f} / {other / H * 1e6:<14.2f} {other / ours:6.2f}")
        if python_peer:
            peer = statistics.median(python_peer)
            print(f"{'':62s} OpenSpiel's Python CFRPlusSolver: {peer / H * 1e6:.2f} us/history, "
                  f"ratio {peer / ours:.2f}")


if __name__ == "__main__":
    main()
