"""Exact NashConv: labkit against LiteEFG (C++), side by side in one process.

    .venv/bin/python benchmarks/bench_nash_conv_liteefg.py            # Kuhn, goofspiel 4, Leduc, goofspiel 5
    .venv/bin/python benchmarks/bench_nash_conv_liteefg.py --games kuhn_poker --repeats 21

LiteEFG is not a dependency of labkit (``pip install LiteEFG`` builds it from source, and its import
needs pandas); without it this script says so and stops. For each game, LiteEFG's CFR+ runs 20
iterations; its current strategy is read back as an OpenSpiel policy and converted to labkit's
(`labkit.games.from_openspiel_policy`), and the two NashConvs must agree to 1e-9. Then, in
alternating blocks (so a burst of load on this shared machine hits both):

* labkit: ``lk.nash_conv(game, policy)`` (the default backend: compiled where numba is installed);
* LiteEFG: ``sum(env.exploitability(strategy, "last-iterate"))``, its NashConv of the same strategy
  (one call into its C++ environment, one thread: ``LiteEFG.set_threads(1)``).

Each time is the median over blocks of CPU time per call (`time.process_time`); ratio = LiteEFG time
/ labkit time (> 1: labkit is faster).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import time

GAMES = ["kuhn_poker", "goofspiel(num_cards=4,imp_info=True,points_order=descending)", "leduc_poker",
         "goofspiel(num_cards=5,imp_info=True,points_order=descending)"]


def per_call(call, calls):
    start = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - start) / calls


def compare(name, repeats):
    import LiteEFG
    import pyspiel
    from LiteEFG.baselines import CFRplus

    import labkit as lk
    from labkit.games.openspiel_adapter import from_openspiel_policy

    game = lk.games.load(name)
    os_game = pyspiel.load_game(name)
    with contextlib.redirect_stdout(io.StringIO()):             # LiteEFG prints banners
        env = LiteEFG.OpenSpielEnv(os_game, traverse_type="Enumerate")
        graph = CFRplus.graph()
        env.set_graph(graph)
    for _ in range(20):
        graph.update_graph(env)
        env.update_strategy(graph.current_strategy())
    strategy = graph.current_strategy()
    os_policy, _ = env.get_strategy(strategy, "last-iterate")
    policy = from_openspiel_policy(game, os_policy, os_game)
    ours = lk.nash_conv(game, policy)
    theirs = sum(env.exploitability(strategy, "last-iterate"))
    if abs(ours - theirs) > 1e-9:
        raise SystemExit(f"{name}: NashConv differs: labkit {ours!r}, LiteEFG {theirs!r}")
    calls = max(10, int(200_000 / game.num_histories))
    samples = {"labkit": [], "LiteEFG": []}
    for _ in range(repeats):
        samples["labkit"].append(per_call(lambda: lk.nash_conv(game, policy), calls))
        samples["LiteEFG"].append(per_call(lambda: sum(env.exploitability(strategy, "last-iterate")), calls))
    t = {k: statistics.median(v) for k, v in samples.items()}
    print(f"{name:62s} {game.num_histories:8,d} {t['labkit'] * 1e6:10.2f} us {t['LiteEFG'] * 1e6:10.2f} us "
          f"{t['LiteEFG'] / t['labkit']:8.2f}x   {ours:.12f}")
    return t


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", default=GAMES)
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args(argv)
    try:
        import LiteEFG
    except ImportError as err:
        raise SystemExit(f"LiteEFG is not installed ({err}); pip install LiteEFG pandas to compare with it")
    LiteEFG.set_threads(1)
    import labkit as lk
    print(f"labkit backend: {lk.kernels.backend()}; CPU time per NashConv, median of {args.repeats} "
          "alternating blocks\n")
    print(f"{'game':62s} {'histories':>8s} {'labkit':>13s} {'LiteEFG':>13s} {'LiteEFG / labkit':>9s}   NashConv")
    for name in args.games:
        compare(name, args.repeats)


if __name__ == "__main__":
    main()
