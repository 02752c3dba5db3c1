"""Speed of labkit.deep's learners, beside OpenSpiel's NFSP and Deep CFR where they run here.

    .venv/bin/python benchmarks/bench_deep.py            # a few minutes on a quiet machine
    .venv/bin/python benchmarks/bench_deep.py --quick

Units of work, measured in CPU seconds (`time.process_time`) after one warm-up block (JAX compiles
on first use):

* Deep CFR: external-sampling traversals per second, including the network training of each
  iteration (the settings of labkit/data/deep's Leduc run and of its minibatch predecessor, fewer
  iterations);
* NFSP: episodes (hands) per second, learning included;
* neural MMD: iterations per second (exact action values + 50 Adam steps);
* IndependentQ, VDN, QMIX, COMA: iterations (32 episodes + one Adam step) per second; MAPPO the
  same with 4 Adam steps per batch.

OpenSpiel's JAX NFSP and Deep CFR (`open_spiel.python.jax.nfsp`, `.deep_cfr`) import flax.nnx, chex
and orbax, and its PyTorch / TensorFlow versions import torch / tensorflow; the script tries each and
reports the ones that run, on the same game and in the same run. With none of those libraries
installed (the book's environment installs only jax and optax), it reports labkit alone.
"""
from __future__ import annotations

import argparse
import importlib
import os
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import labkit as lk  # noqa: E402
from labkit import deep  # noqa: E402

OPENSPIEL_MODULES = ["open_spiel.python.jax.nfsp", "open_spiel.python.jax.deep_cfr",
                     "open_spiel.python.pytorch.nfsp", "open_spiel.python.pytorch.deep_cfr",
                     "open_spiel.python.algorithms.nfsp", "open_spiel.python.algorithms.deep_cfr"]


def timed(work, *args):
    start = time.process_time()
    work(*args)
    return time.process_time() - start


def ours(quick):
    scale = 0.2 if quick else 1.0
    rows = []
    # the cached run's settings (full-batch fits on the memory grouped by infoset), beside the
    # minibatch fits of the earlier cached run, in the same process
    settings = {"infosets": dict(traversals=1000, advantage_steps=1000, strategy_steps=2000, hidden=(128, 128),
                                 advantage_memory=1_000_000, strategy_memory=1_000_000, batching="infosets"),
                "minibatch": dict(traversals=1000, advantage_steps=500, batch_size=512, hidden=(128, 128),
                                  advantage_memory=1_000_000, strategy_memory=1_000_000, reinitialize=False)}
    for batching, config in settings.items():
        solver = deep.DeepCFR("leduc_poker", deep.DeepCFRConfig(**config), seed=0)
        solver.run(1)
        before = solver.traversals_done
        seconds = timed(solver.run, max(1, int(5 * scale)))
        rows.append((f"Deep CFR, Leduc, {batching}", "traversals", (solver.traversals_done - before) / seconds))
    nfsp = deep.NFSP("leduc_poker", deep.NFSPConfig(optimizer="adam", rl_learning_rate=1e-3, sl_learning_rate=1e-3,
                                                    learn_every=16), seed=0)
    nfsp.run(5000)
    episodes = int(50_000 * scale)
    rows.append(("NFSP, Leduc", "episodes", episodes / timed(nfsp.run, episodes)))
    for game in ("kuhn_poker", "leduc_poker"):
        mmd = deep.NeuralMMD(game, seed=0)
        mmd.run(2)
        iterations = int(100 * scale)
        rows.append((f"neural MMD, {game}", "iterations", iterations / timed(mmd.run, iterations)))
    for learner in (deep.IndependentQ, deep.VDN, deep.QMIX, deep.COMA, deep.MAPPO):
        team = learner("messenger game", seed=0)
        team.run(5)
        iterations = int(500 * scale)
        rows.append((f"{learner.__name__}, messenger game", "iterations", iterations / timed(team.run, iterations)))
    return rows


def openspiel_status():
    status = []
    for name in OPENSPIEL_MODULES:
        try:
            importlib.import_module(name)
            status.append((name, "imports"))
        except Exception as error:                       # missing flax / torch / tensorflow
            status.append((name, f"does not import here: {type(error).__name__}: {error}"))
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print("OpenSpiel's neural learners in this environment:")
    status = openspiel_status()
    for name, text in status:
        print(f"  {name}: {text}")
    if not any(text == "imports" for _, text in status):
        print("  -> none runs here; labkit's numbers alone (CPU seconds, one XLA thread):")
    print(f"{'learner':34s} {'unit':>10s} {'per CPU second':>15s}")
    for name, unit, rate in ours(args.quick):
        print(f"{name:34s} {unit:>10s} {rate:15.1f}")
    print("(exact NashConv of a Leduc policy costs about", end=" ")
    game = lk.games.load("leduc_poker")
    policy = lk.uniform_policy(game)
    n = 200
    print(f"{timed(lambda: [lk.nash_conv(game, policy) for _ in range(n)]) / n * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()
