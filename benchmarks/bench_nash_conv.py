"""Exact NashConv on Leduc poker (or another game): labkit against OpenSpiel's C++ and Python, in one run.

    .venv/bin/python benchmarks/bench_nash_conv.py            # about 30 s
    .venv/bin/python benchmarks/bench_nash_conv.py --quick    # fewer repeats
    .venv/bin/python benchmarks/bench_nash_conv.py --game "goofspiel(num_cards=5,points_order=ascending,imp_info=True)"

For the uniform policy and a seeded random policy, times

* ``labkit.nash_conv(game, policy)``;
* OpenSpiel's C++ ``pyspiel.nash_conv(game, policy)`` with the policy already converted to a
  C++ ``TabularPolicy`` (the conversion is not timed);
* OpenSpiel's Python ``exploitability.nash_conv(game, policy)`` (a python ``TabularPolicy``);

checks that the three agree to 1e-10, and prints the median time of each and the ratio
OpenSpiel time / labkit time (> 1: labkit is faster). The measurements alternate between the
implementations, so a burst of load on this shared machine hits all of them.
The goal of issue 2: labkit >= 100x faster than OpenSpiel's C++.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def seconds_per_call(call, calls):
    """Average seconds per call over `calls` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--game", default="leduc_poker",
                        help="a game string that both labkit.games.load and OpenSpiel read (default leduc_poker)")
    args = parser.parse_args(argv)

    import pyspiel
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import exploitability

    import labkit as lk

    game = lk.games.load(args.game)
    os_game = pyspiel.load_game(args.game)
    if os_game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        os_game = pyspiel.convert_to_turn_based(os_game)          # goofspiel: as labkit's tree
    rng = np.random.default_rng(2024)
    raw = rng.random(game.legal_mask.shape) * game.legal_mask
    policies = {"uniform": lk.uniform_policy(game),
                "random (seed 2024)": lk.TabularPolicy(game, raw / raw.sum(axis=1, keepdims=True))}
    # native games have OpenSpiel's tree: the same histories in the same breadth-first order
    reference = lk.games.from_openspiel(args.game)
    keys = [None] * game.num_infosets
    for h in np.flatnonzero(game.infoset >= 0):
        keys[game.infoset[h]] = reference.infoset_keys[reference.infoset[h]]

    repeats = 5 if args.quick else 15
    print(f"Exact NashConv on {args.game} ({game.num_histories} histories, {game.num_infosets} infosets); "
          f"median of {repeats} alternating blocks\n")
    print(f"{'policy':20s} {'labkit':>10s} {'OpenSpiel C++':>14s} {'OpenSpiel Py':>13s}"
          f" {'C++ / labkit':>13s} {'Py / labkit':>12s}   NashConv")
    for name, policy in policies.items():
        python_policy = os_policy.TabularPolicy(os_game)
        for i, key in enumerate(keys):
            python_policy.policy_for_key(key)[:] = policy.probs[i]
        cpp_policy = os_policy.python_policy_to_pyspiel_policy(python_policy)

        values = {"labkit": lk.nash_conv(game, policy), "cpp": pyspiel.nash_conv(os_game, cpp_policy),
                  "python": exploitability.nash_conv(os_game, python_policy)}
        if max(values.values()) - min(values.values()) > 1e-10:
            raise SystemExit(f"the three NashConv values disagree: {values}")

        calls = {"labkit": (lambda: lk.nash_conv(game, policy), 200),
                 "cpp": (lambda: pyspiel.nash_conv(os_game, cpp_policy), 1),
                 "python": (lambda: exploitability.nash_conv(os_game, python_policy), 1)}
        samples = {k: [] for k in calls}
        for r in range(repeats):
            for k, (call, n) in calls.items():
                if k == "python" and r >= max(3, repeats // 3):
                    continue                                  # ~0.5 s a call: a few samples suffice
                samples[k].append(seconds_per_call(call, n))
        t = {k: statistics.median(v) for k, v in samples.items()}
        print(f"{name:20s} {t['labkit'] * 1e3:8.3f} ms {t['cpp'] * 1e3:11.1f} ms {t['python'] * 1e3:10.0f} ms"
              f" {t['cpp'] / t['labkit']:12.0f}x {t['python'] / t['labkit']:11.0f}x   {values['labkit']:.12f}")


if __name__ == "__main__":
    main()
