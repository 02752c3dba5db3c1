#!/usr/bin/env python
"""Regenerate the cached runs of labkit.deep that the book reads from labkit/data/deep/.

    .venv/bin/python scripts/regenerate_deep.py                 # everything (see labkit/data/deep/README.md for times)
    .venv/bin/python scripts/regenerate_deep.py deep_cfr_leduc nfsp_leduc
    .venv/bin/python scripts/regenerate_deep.py --list
    .venv/bin/python scripts/regenerate_deep.py --summary     # the README's table, from the files

Each result is a CSV (one row per measurement) and a JSON (the command, settings, seeds, checkpoints,
the machine, and the wall and CPU time of the run):

deep_cfr_leduc   Deep CFR on Leduc hold'em, several seeds: exact NashConv of the strategy networks'
                 average policy at checkpoints, beside external-sampling MCCFR at the same number
                 of traversals (same seeds) and CFR / CFR+ at the same number of iterations.
deep_cfr_kuhn    the same on Kuhn poker.
nfsp_leduc       NFSP on Leduc hold'em, several seeds: exact NashConv of the average-policy networks
                 on a log schedule of episodes.
nfsp_kuhn        the same on Kuhn poker.
neural_mmd       neural MMD (R-NaD's dynamics) on Kuhn and Leduc, last-iterate NashConv, beside
                 tabular MMD with the same settings.
teams            independent Q-learning, VDN, QMIX, COMA and MAPPO on the climbing and messenger games,
                 many seeds: the exact team value of the greedy policies at checkpoints, and the
                 greedy actions at the end.

JAX runs are bit-identical when repeated on the same machine and library versions (recorded in the
JSON); tests/test_deep_data.py reruns the first checkpoint of every result and compares it.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import time
from pathlib import Path

# one XLA thread: these networks are tiny, and the machine is shared (also set before importing jax)
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import labkit as lk  # noqa: E402
from labkit import deep  # noqa: E402

DATA = ROOT / "labkit" / "data" / "deep"
COMMAND = "python scripts/regenerate_deep.py"

# ----------------------------------------------------------------------------- settings
# advantage networks retrained from scratch every iteration (the paper's rule) by full-batch Adam on
# the memory's loss grouped by infoset (batching="infosets": the same loss, its exact gradient; see
# labkit/data/deep/README.md for why minibatches of 512 left NashConv at 0.44)
DEEP_CFR_LEDUC = dict(traversals=1000, advantage_steps=1000, hidden=(128, 128), advantage_memory=1_000_000,
                      strategy_memory=1_000_000, reinitialize=True, strategy_steps=2000, batching="infosets")
DEEP_CFR_KUHN = dict(traversals=100, hidden=(32, 32), advantage_steps=200, strategy_steps=500, batch_size=256)
NFSP_LEDUC = dict(optimizer="adam", rl_learning_rate=1e-3, sl_learning_rate=1e-3, learn_every=16)
NFSP_KUHN = dict(optimizer="adam", rl_learning_rate=1e-3, sl_learning_rate=1e-3, learn_every=16, hidden=(64,))
# the infosets whose NFSP average policy nfsp_leduc_widget.json records at every checkpoint (the
# widget of chapter 4): player 1 opening with a jack, queen, king; player 2 facing that raise
WIDGET_INFOSETS = ["Js|||", "Qs|||", "Ks|||", "Jh||r|", "Qh||r|", "Kh||r|"]
MMD_SETTINGS = dict(alpha=0.5, stepsize=0.1, magnet_update_every=100)

RUNS = {
    "deep_cfr_leduc": dict(game="leduc_poker", seeds=[0, 1, 2], checkpoints=[1, 2, 5, 10, 20, 40, 60, 80, 100, 125, 150],
                           config=DEEP_CFR_LEDUC),
    "deep_cfr_kuhn": dict(game="kuhn_poker", seeds=[0, 1, 2], checkpoints=[1, 2, 5, 10, 20, 50, 100, 200],
                          config=DEEP_CFR_KUHN),
    "nfsp_leduc": dict(game="leduc_poker", seeds=[0, 1, 2],
                       checkpoints=[1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 600_000, 1_000_000,
                                    1_500_000, 2_000_000, 3_000_000],
                       config=NFSP_LEDUC),
    # seed 0 of nfsp_leduc again (the same numbers where the checkpoints meet), checked more often,
    # with the average policy at WIDGET_INFOSETS: the frames of chapter 4's widget
    "nfsp_leduc_widget": dict(game="leduc_poker", seeds=[0],
                              checkpoints=[1_000, 3_000, 10_000, 30_000, 60_000, 100_000, 200_000, 300_000, 450_000,
                                           600_000],
                              config=NFSP_LEDUC, policies_at=WIDGET_INFOSETS),
    "nfsp_kuhn": dict(game="kuhn_poker", seeds=[0, 1, 2],
                      checkpoints=[1_000, 3_000, 10_000, 30_000, 100_000, 300_000], config=NFSP_KUHN),
    "neural_mmd": dict(games=["kuhn_poker", "leduc_poker"], seeds=[0, 1], checkpoints=[10, 30, 100, 200, 300, 500],
                       config=MMD_SETTINGS),
    "teams": dict(games=["climbing game", "messenger game"], learners=["independent Q", "VDN", "QMIX", "COMA", "MAPPO"],
                  seeds=list(range(10)), checkpoints=[100, 300, 1000, 1500]),
}
TEAM_LEARNERS = {"independent Q": deep.IndependentQ, "VDN": deep.VDN, "QMIX": deep.QMIX, "COMA": deep.COMA,
                 "MAPPO": deep.MAPPO}


# ----------------------------------------------------------------------------- one run each
def deep_cfr_run(game, seed, checkpoints, config):
    solver = deep.DeepCFR(game, deep.DeepCFRConfig(**config), seed=seed)
    rows, cpu = [], 0.0
    for T in checkpoints:
        start = time.process_time()
        solver.run(T - solver.iteration)
        policy = solver.average_policy()
        cpu += time.process_time() - start
        rows.append({"method": "Deep CFR", "seed": seed, "iterations": T, "traversals": solver.traversals_done,
                     "nash_conv": lk.nash_conv(solver.game, policy), "cpu_seconds": round(cpu, 2)})
        print(f"  Deep CFR {game} seed {seed}: {T} iterations, NashConv {rows[-1]['nash_conv']:.4f}, {cpu:.0f} CPU s",
              file=sys.stderr, flush=True)
    return rows


def tabular_rows(game, traversal_counts, seeds):
    """External-sampling MCCFR at the same traversal counts (2 per iteration for 2 players), and CFR,
    CFR+ at the same iteration counts as Deep CFR's checkpoints."""
    game = lk.games.load(game)
    rows = []
    for seed in seeds:
        solver = lk.MCCFR(game, sampling="external", seed=seed)
        for iterations, traversals in traversal_counts:
            solver.run(traversals // game.num_players - solver.iteration)
            rows.append({"method": "MCCFR (external sampling)", "seed": seed, "iterations": iterations,
                         "traversals": traversals, "nash_conv": lk.nash_conv(game, solver.average_policy()),
                         "cpu_seconds": ""})
    for name, solver in (("CFR", lk.CFR(game)), ("CFR+", lk.CFRPlus(game))):
        for iterations, _ in traversal_counts:
            solver.run(iterations - solver.iteration)
            rows.append({"method": name, "seed": "", "iterations": iterations, "traversals": "",
                         "nash_conv": lk.nash_conv(game, solver.average_policy()), "cpu_seconds": ""})
    return rows


def nfsp_run(game, seed, checkpoints, config, policies_at=None):
    """The rows of one seed; with `policies_at` (infoset keys) each row also carries the average
    policy there, under "policy" (written to <name>_policies.json, not to the CSV)."""
    solver = deep.NFSP(game, deep.NFSPConfig(**config), seed=seed)
    rows, cpu = [], 0.0
    for T in checkpoints:
        start = time.process_time()
        solver.run(T - solver.iteration)
        cpu += time.process_time() - start
        average = solver.average_policy()
        row = {"method": "NFSP", "seed": seed, "episodes": T, "nash_conv": lk.nash_conv(solver.game, average),
               "best_response_nash_conv": lk.nash_conv(solver.game, solver.best_response_policy()),
               "cpu_seconds": round(cpu, 2)}
        if policies_at:
            row["policy"] = [average.probs[solver.game.infoset_index(key)].tolist() for key in policies_at]
        # progress, and the row itself: a run stopped early still has its finished checkpoints
        print(f"  NFSP {game} seed {seed}: {T:,} hands, NashConv {row['nash_conv']:.4f}, {cpu:.0f} CPU s",
              json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def neural_mmd_run(game, seed, checkpoints, config):
    solver = deep.NeuralMMD(game, deep.NeuralMMDConfig(**config), seed=seed)
    rows, cpu = [], 0.0
    for T in checkpoints:
        start = time.process_time()
        solver.run(T - solver.iteration)
        cpu += time.process_time() - start
        rows.append({"game": game, "method": "neural MMD", "seed": seed, "iterations": T,
                     "nash_conv": lk.nash_conv(solver.game, solver.current_policy()), "cpu_seconds": round(cpu, 2)})
    return rows


def tabular_mmd_rows(game, checkpoints, config):
    solver = lk.MMD(game, feedback="action values", **config)
    rows = []
    for T in checkpoints:
        solver.run(T - solver.iteration)
        rows.append({"game": game, "method": "MMD (tabular)", "seed": "", "iterations": T,
                     "nash_conv": solver.nash_conv("current"), "cpu_seconds": ""})
    return rows


def team_run(game, learner, seed, checkpoints):
    solver = TEAM_LEARNERS[learner](game, seed=seed)
    rows = []
    for T in checkpoints:
        solver.run(T - solver.iteration)
        rows.append({"game": game, "learner": learner, "seed": seed, "iterations": T,
                     "team_value": solver.team_value(),
                     "greedy_actions": " ".join("".join("abc"[a] for a in g) for g in solver.greedy_actions())})
    return rows


# ----------------------------------------------------------------------------- drivers
def _per_seed(run, args, seeds, jobs):
    """run(*args[:1], seed, *args[1:]) for every seed, in `jobs` processes (each seed's result does
    not depend on which process computes it); the rows in seed order."""
    calls = [(args[0], seed, *args[1:]) for seed in seeds]
    if jobs <= 1 or len(seeds) == 1:
        return [row for call in calls for row in run(*call)]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    # spawn, not fork: a forked child would inherit JAX's threads
    with ProcessPoolExecutor(max_workers=min(jobs, len(seeds)), mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(pool.map(run, *zip(*calls)))
    return [row for rows in results for row in rows]


def make(name, quick=False, jobs=1, checkpoints=None):
    """All rows of one result (quick: the first checkpoint of the first seed, for tests; with
    `checkpoints` = k, the first k checkpoints of the first seed, for scripts/deep_tolerance.py)."""
    spec = RUNS[name]
    seeds = spec["seeds"][:1] if quick or checkpoints else spec["seeds"]
    checkpoints = spec["checkpoints"][:1] if quick else spec["checkpoints"][:checkpoints or None]
    rows = []
    if name.startswith("deep_cfr"):
        rows += _per_seed(deep_cfr_run, (spec["game"], checkpoints, spec["config"]), seeds, jobs)
        counts = sorted({(r["iterations"], r["traversals"]) for r in rows})
        rows += tabular_rows(spec["game"], counts, seeds)
    elif name.startswith("nfsp"):
        rows += _per_seed(nfsp_run, (spec["game"], checkpoints, spec["config"], spec.get("policies_at")), seeds,
                          jobs)
    elif name == "neural_mmd":
        for game in spec["games"]:
            for seed in seeds:
                rows += neural_mmd_run(game, seed, checkpoints, spec["config"])
            rows += tabular_mmd_rows(game, checkpoints, spec["config"])
    elif name == "teams":
        for game in spec["games"]:
            for learner in spec["learners"]:
                for seed in seeds:
                    rows += team_run(game, learner, seed, checkpoints)
    else:
        raise ValueError(f"unknown result {name!r}; known: {', '.join(RUNS)}")
    return rows


def machine():
    import jax
    import optax
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(), "numpy": np.__version__, "jax": jax.__version__,
            "optax": optax.__version__}


def policy_record(name, rows):
    """The recorded average policies of a result, by seed: what `lk.widgets.policy_slider` draws."""
    spec = RUNS[name]
    game = lk.games.load(spec["game"])
    seeds = sorted({r["seed"] for r in rows})
    mine = [[r for r in rows if r["seed"] == s] for s in seeds]
    return {"game": spec["game"], "infosets": spec["policies_at"], "action_names": list(game.action_names),
            "seeds": seeds, "episodes": [r["episodes"] for r in mine[0]],
            "nash_conv": [[r["nash_conv"] for r in rs] for rs in mine],
            "probs": [[r["policy"] for r in rs] for rs in mine]}


def write(name, rows, wall, cpu):
    DATA.mkdir(parents=True, exist_ok=True)
    record = {}
    if "policy" in rows[0]:                      # the policies go to the JSON, the CSV keeps its columns
        record = {"policies": policy_record(name, rows)}
        rows = [{k: v for k, v in r.items() if k != "policy"} for r in rows]
    with open(DATA / f"{name}.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (repr(float(v)) if isinstance(v, float) else v) for k, v in row.items()})
    spec = {k: (list(v) if isinstance(v, tuple) else v) for k, v in RUNS[name].items()}
    meta = {"command": f"{COMMAND} {name}", "rows": len(rows), **spec, "machine": machine(),
            "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), **record}
    (DATA / f"{name}.json").write_text(json.dumps(meta, indent=1, default=list) + "\n", encoding="utf-8")


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def summary():
    """Markdown lines: the last checkpoint of every zero-sum result, median [min, max] over seeds, and
    the CPU time of one seed's run (printed by --summary, pasted into labkit/data/deep/README.md)."""
    lines = ["| result | method | budget | NashConv: median [min, max] over seeds | CPU s per seed |",
             "|---|---|---|---|---|"]
    for name, unit in (("deep_cfr_leduc", "iterations"), ("deep_cfr_kuhn", "iterations"), ("nfsp_leduc", "episodes"),
                       ("nfsp_kuhn", "episodes"), ("neural_mmd", "iterations")):
        path = DATA / f"{name}.csv"
        if not path.exists():
            continue
        rows = read_csv(path)
        last = max(int(r[unit]) for r in rows)
        groups = {}
        for r in rows:
            if int(r[unit]) == last:
                groups.setdefault((r.get("game", ""), r["method"]), []).append(r)
        for (game, method), group in groups.items():
            values = np.array([float(r["nash_conv"]) for r in group])
            cpu = [float(r["cpu_seconds"]) for r in group if r["cpu_seconds"]]
            budget = f"{last:,} {unit}" + (f" ({group[0]['traversals']} traversals)" if group[0].get("traversals") else "")
            label = f"{method}, {game}" if game else method
            cell = f"{np.median(values):.3f} [{values.min():.3f}, {values.max():.3f}]" if len(values) > 1 else \
                f"{values[0]:.4f}"
            lines.append(f"| {name} | {label} | {budget} | {cell} | {np.median(cpu):.0f} |" if cpu else
                         f"| {name} | {label} | {budget} | {cell} | |")
    return lines


def _cpu_with_children():
    """CPU seconds of this process and of its finished worker processes."""
    import resource
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="results to make (default: all)")
    parser.add_argument("--list", action="store_true", help="list the results and exit")
    parser.add_argument("--summary", action="store_true", help="print the table of final values and exit")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes for the seeds of the Deep CFR and NFSP results (same numbers as 1)")
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(RUNS))
        return 0
    if args.summary:
        print("\n".join(summary()))
        return 0
    for name in args.names or list(RUNS):
        if name not in RUNS:
            parser.error(f"unknown result {name!r}; known: {', '.join(RUNS)}")
        wall, cpu = time.time(), _cpu_with_children()
        rows = make(name, jobs=args.jobs)
        wall, cpu = time.time() - wall, _cpu_with_children() - cpu
        write(name, rows, wall, cpu)
        print(f"{name}: {len(rows)} rows in {wall:.0f} s wall, {cpu:.0f} s CPU", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
