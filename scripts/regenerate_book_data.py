#!/usr/bin/env python
"""Regenerate the cached results that chapters 4 and 5 of the book read from labkit/data/book/.

    .venv/bin/python scripts/regenerate_book_data.py              # everything (~6 min of CPU, one core)
    .venv/bin/python scripts/regenerate_book_data.py ch04_mccfr_leduc
    .venv/bin/python scripts/regenerate_book_data.py --list

Two results, each a CSV (one row per measurement) and a JSON (how it was made, and the settings):

ch04_mccfr_leduc
    NashConv of the average policy of CFR, CFR+ and Monte Carlo CFR on Leduc hold'em at 25 checkpoints
    from 10 to 100,000 iterations. MCCFR: outcome sampling with exploration 0.1, 0.3, 0.6 and 1.0,
    and external sampling, 5 seeds each. Also the CPU seconds spent in the solver up to each checkpoint
    (evaluations excluded), which depend on the machine.
ch05_psro_leduc
    PSRO on Leduc hold'em with each meta-solver ("nash", "uniform", "last", "prd"), 150 iterations:
    NashConv of the meta-strategy mixture after every iteration, the number of distinct policies in
    each population, the number of members with meta-probability above 1e-4, and CPU seconds.

Everything except the CPU times is deterministic given the seeds: tests/test_book_data.py reruns a small
slice of each result with the functions below and compares it with the files.
"""
from __future__ import annotations

import argparse
import csv
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:                        # run from a checkout without installing labkit
    sys.path.insert(0, str(ROOT))

import labkit as lk                                  # noqa: E402

DATA = ROOT / "labkit" / "data" / "book"

# ----------------------------------------------------------------------------- chapter 4: MCCFR
MCCFR_CHECKPOINTS = [int(t) for t in np.unique(np.round(np.logspace(1, 5, 25)).astype(int))]
MCCFR_SEEDS = [0, 1, 2, 3, 4]
OUTCOME_EXPLORATIONS = [0.1, 0.3, 0.6, 1.0]
DEFAULT_EXPLORATION = 0.6
MCCFR_FIELDS = ["method", "exploration", "seed", "iterations", "nash_conv", "cpu_seconds"]


def mccfr_runs():
    """(method, exploration, seed) of every run in ch04_mccfr_leduc; CFR and CFR+ are deterministic."""
    runs = [("CFR", "", ""), ("CFR+", "", "")]
    runs += [("MCCFR (external sampling)", "", seed) for seed in MCCFR_SEEDS]
    runs += [("MCCFR (outcome sampling)", eps, seed) for eps in OUTCOME_EXPLORATIONS for seed in MCCFR_SEEDS]
    return runs


def make_solver(game, method, exploration, seed):
    if method == "CFR":
        return lk.CFR(game)
    if method == "CFR+":
        return lk.CFRPlus(game)
    if method == "MCCFR (external sampling)":
        return lk.MCCFR(game, sampling="external", seed=seed)
    if method == "MCCFR (outcome sampling)":
        return lk.MCCFR(game, sampling="outcome", seed=seed, exploration=exploration)
    raise ValueError(f"unknown method {method!r}")


def convergence_run(game, method, exploration="", seed="", checkpoints=MCCFR_CHECKPOINTS):
    """Rows of one run: NashConv of the average policy at every checkpoint, and the solver's CPU time."""
    solver = make_solver(game, method, exploration, seed)
    rows, cpu = [], 0.0
    for T in checkpoints:
        start = time.process_time()
        solver.run(T - solver.iteration)
        cpu += time.process_time() - start
        rows.append({"method": method, "exploration": exploration, "seed": seed, "iterations": T,
                     "nash_conv": lk.nash_conv(game, solver.average_policy()), "cpu_seconds": cpu})
    return rows


def regenerate_mccfr(out_dir=DATA):
    game = lk.games.load("leduc_poker")
    rows = []
    for method, exploration, seed in mccfr_runs():
        start = time.perf_counter()
        rows += convergence_run(game, method, exploration, seed)
        print(f"  {method:27s} exploration {exploration!s:4s} seed {seed!s:2s}  {time.perf_counter() - start:6.1f} s",
              flush=True)
    meta = {"description": "NashConv (sum over both players of the best-response gain, chips per hand) of the "
                           "average policy on leduc_poker; cpu_seconds = process time inside solver.run, cumulative",
            "game": "leduc_poker", "checkpoints": MCCFR_CHECKPOINTS, "seeds": MCCFR_SEEDS,
            "outcome_explorations": OUTCOME_EXPLORATIONS, "default_exploration": DEFAULT_EXPLORATION,
            "solvers": {"CFR": "lk.CFR(game)", "CFR+": "lk.CFRPlus(game)",
                        "MCCFR (external sampling)": "lk.MCCFR(game, sampling='external', seed=seed)",
                        "MCCFR (outcome sampling)": "lk.MCCFR(game, sampling='outcome', seed=seed, "
                                                    "exploration=exploration)"}}
    write(out_dir, "ch04_mccfr_leduc", MCCFR_FIELDS, rows, meta)


# ----------------------------------------------------------------------------- chapter 5: PSRO
META_SOLVERS = ["nash", "uniform", "last", "prd"]
PSRO_ITERATIONS = 150
SUPPORT_THRESHOLD = 1e-4
PSRO_FIELDS = ["meta_solver", "iteration", "nash_conv", "population_size", "distinct_1", "distinct_2",
               "support_1", "support_2", "cpu_seconds"]


def distinct_policies(game, psro, player):
    """How many different policies player `player`'s population holds (its own rows compared exactly)."""
    rows = game.infoset_player == player
    return len({member[rows].tobytes() for member in psro.populations[player]})


def psro_record(game, psro, meta_solver, cpu):
    iteration, value = psro.nash_conv_history[-1]
    return {"meta_solver": meta_solver, "iteration": iteration, "nash_conv": value,
            "population_size": psro.population_sizes[0],
            "distinct_1": distinct_policies(game, psro, 0), "distinct_2": distinct_policies(game, psro, 1),
            "support_1": int(np.sum(psro.meta_strategies[0] > SUPPORT_THRESHOLD)),
            "support_2": int(np.sum(psro.meta_strategies[1] > SUPPORT_THRESHOLD)), "cpu_seconds": cpu}


def psro_run(game, meta_solver, iterations=PSRO_ITERATIONS):
    """Rows of one PSRO run: one per iteration, iteration 0 being the initial uniform populations."""
    with warnings.catch_warnings():
        # double oracle warns when a best response is already in the population: expected here
        warnings.simplefilter("ignore", UserWarning)
        start = time.process_time()
        psro = lk.PSRO(game, meta_solver=meta_solver)
        cpu = time.process_time() - start
        rows = [psro_record(game, psro, meta_solver, cpu)]
        for _ in range(iterations):
            start = time.process_time()
            psro.run(1)
            cpu += time.process_time() - start
            rows.append(psro_record(game, psro, meta_solver, cpu))
    return rows


def regenerate_psro(out_dir=DATA):
    game = lk.games.load("leduc_poker")
    rows = []
    for meta_solver in META_SOLVERS:
        start = time.perf_counter()
        rows += psro_run(game, meta_solver)
        print(f"  PSRO meta_solver={meta_solver:8s} {time.perf_counter() - start:6.1f} s", flush=True)
    meta = {"description": "PSRO with exact best responses and an exact meta-game on leduc_poker; nash_conv of "
                           "the meta-strategy mixture after each iteration; distinct_i = different policies "
                           "in player i's population; support_i = members with meta-probability > "
                           f"{SUPPORT_THRESHOLD:g}; cpu_seconds = cumulative process time",
            "game": "leduc_poker", "iterations": PSRO_ITERATIONS, "meta_solvers": META_SOLVERS,
            "support_threshold": SUPPORT_THRESHOLD, "solver": "lk.PSRO(game, meta_solver=meta_solver)"}
    write(out_dir, "ch05_psro_leduc", PSRO_FIELDS, rows, meta)


# ----------------------------------------------------------------------------- files
RESULTS = {"ch04_mccfr_leduc": regenerate_mccfr, "ch05_psro_leduc": regenerate_psro}


def write(out_dir, name, fields, rows, meta):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / f"{name}.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
    meta = dict(meta, command=f".venv/bin/python scripts/regenerate_book_data.py {name}",
                rows=len(rows), python=platform.python_version(), numpy=np.__version__,
                machine=platform.machine(), processor=platform.processor() or "unknown",
                created=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    (out_dir / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out_dir / name}.csv ({len(rows)} rows) and .json", flush=True)


def read_csv(path):
    """The rows of a cached CSV as dicts of strings (the notebooks convert the columns they use)."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"results to regenerate (default all): "
                        f"{', '.join(RESULTS)}")
    parser.add_argument("--out-dir", default=str(DATA))
    parser.add_argument("--list", action="store_true", help="list the results and stop")
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in RESULTS]
    if unknown:
        parser.error(f"unknown result(s) {unknown}; choose from {', '.join(RESULTS)}")
    for name in args.names or list(RESULTS):
        print(name, flush=True)
        if not args.list:
            RESULTS[name](args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
