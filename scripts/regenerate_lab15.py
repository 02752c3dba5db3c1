"""Regenerate the cached results of Lab 15 (chapters/09_lab15_leduc.ipynb) in labkit/data/lab15/.

    .venv/bin/python scripts/regenerate_lab15.py                  # every run, one after the other
    .venv/bin/python scripts/regenerate_lab15.py --jobs 2         # two at a time (8 minutes on 2 busy cores)
    .venv/bin/python scripts/regenerate_lab15.py mmd psro         # only some groups: mccfr, mmd, psro
    .venv/bin/python scripts/regenerate_lab15.py --quick --out-dir /tmp/lab15   # a short prefix of every run

Three groups of runs on Leduc hold'em, each written to one CSV file:

- ``mccfr.csv``: Monte Carlo CFR with outcome and external sampling, several seeds; NashConv of the
  average policy on a logarithmic grid of iterations, with the number of histories the sampler has
  visited so far ("nodes touched", counted while it runs);
- ``mmd.csv``: magnetic mirror descent from exact values: unregularized, with a fixed magnet (two
  strengths; the weaker one with a smaller step) and with a moving magnet; NashConv of the current
  (last-iterate) and the average policy;
- ``psro.csv``: PSRO with exact best responses and the Nash (double oracle) or uniform (fictitious
  play) meta-solver; NashConv of the meta-strategy mixture after every PSRO iteration.

``settings.json`` records the parameters of every run and a few end-of-run facts the chapter quotes.
Floats are written with Python's shortest round-trip repr, so a regenerated file can be compared
digit for digit. ``--quick`` runs the same settings for a few iterations only (the prefix that
tests/test_lab15_data.py compares with the cached files).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:                  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import labkit as lk                            # noqa: E402
from labkit.mmd import sequence_form_payoff_max   # noqa: E402

DATA = ROOT / "labkit" / "data" / "lab15"
GAME = "leduc_poker"
GROUPS = ("mccfr", "mmd", "psro")

# ---------------------------------------------------------------------------- the runs
SEEDS = (0, 1, 2, 3, 4)
MCCFR_ITERATIONS = {"outcome": 1_000_000, "external": 100_000}
MMD_ITERATIONS = 10_000
MMD_ALPHA = 0.02
PSRO_ITERATIONS = 100
QUICK = {"mccfr": 2_000, "mmd": 200, "psro": 12}     # iterations of each run with --quick


def mmd_stepsize(game, alpha=MMD_ALPHA):
    """eta = 4 alpha / max|M|^2, four times OpenSpiel's default, with M the sequence-form payoff
    matrix. A weaker magnet needs a smaller step for its last iterate to converge."""
    return 4 * alpha / sequence_form_payoff_max(game) ** 2


def mmd_variants(game):
    """name -> keyword arguments of lk.MMD (every run starts from the uniform policy)."""
    eta = mmd_stepsize(game)
    return {
        "unregularized": dict(alpha=0.0, stepsize=eta),
        "fixed magnet, alpha=0.02": dict(alpha=MMD_ALPHA, stepsize=eta),
        "fixed magnet, alpha=0.005": dict(alpha=0.005, stepsize=mmd_stepsize(game, 0.005)),
        "moving magnet, alpha=0.02": dict(alpha=MMD_ALPHA, stepsize=eta, magnet_stepsize=0.05),
    }


def log_grid(last, per_decade):
    """Iterations 1..last, about `per_decade` per factor of ten, always including `last`."""
    points = np.round(np.logspace(0, np.log10(last), int(per_decade * np.log10(last)) + 1)).astype(int)
    return sorted(set(points.tolist()) | {last})


def _cut(grid, stop):
    return grid if stop is None else [t for t in grid if t <= stop]


# ---------------------------------------------------------------------------- MCCFR
def run_mccfr(sampling, seed, stop=None):
    """Rows (sampling, seed, iteration, nodes_touched, nash_conv) on a log grid of iterations
    (the grid of the full run, cut at `stop` for a quick prefix)."""
    game = lk.games.load(GAME)
    solver = lk.MCCFR(game, sampling=sampling, seed=seed)
    rows = []
    for T in _cut(log_grid(MCCFR_ITERATIONS[sampling], per_decade=10), stop):
        solver.run(T - solver.iteration)
        rows.append((sampling, seed, T, solver.nodes_touched, lk.nash_conv(game, solver.average_policy())))
    return "mccfr", rows, {}


# ---------------------------------------------------------------------------- MMD
def run_mmd(variant, stop=None):
    """Rows (variant, iteration, nash_conv_current, nash_conv_average), iteration 0 included."""
    game = lk.games.load(GAME)
    solver = lk.MMD(game, **mmd_variants(game)[variant])
    rows = []
    for T in _cut([0] + log_grid(MMD_ITERATIONS, per_decade=30), stop):
        solver.run(T - solver.iteration)
        rows.append((variant, T, lk.nash_conv(game, solver.current_policy()),
                     lk.nash_conv(game, solver.average_policy())))
    facts = {"stepsize": solver.stepsize}
    if solver.alpha > 0 and solver.magnet_stepsize is None:
        # how far the last iterate is from the fixed point of the regularized game (0 = there)
        facts["regularized_equilibrium_residual"] = solver.qre_residual()
    return "mmd", rows, {variant: facts}


# ---------------------------------------------------------------------------- PSRO
def run_psro(meta_solver, stop=None):
    """Rows (meta_solver, iteration, population_size, nash_conv), iteration 0 = the uniform policy."""
    game = lk.games.load(GAME)
    solver = lk.PSRO(game, meta_solver=meta_solver)
    iterations = PSRO_ITERATIONS if stop is None else min(stop, PSRO_ITERATIONS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # duplicates in the population are expected
        solver.run(iterations)
    sizes = [1] + [1 + k for k in range(1, iterations + 1)]   # one best response per player per iteration
    assert solver.population_sizes == [sizes[-1]] * game.num_players
    rows = [(meta_solver, T, sizes[T], value) for T, value in solver.nash_conv_history]
    distinct = []                                       # different policies in each population
    for player, population in enumerate(solver.populations):
        own = game.infoset_player == player
        distinct.append(len({policy[own].tobytes() for policy in population}))
    return "psro", rows, {meta_solver: {"distinct_policies_per_player": distinct}}


# ---------------------------------------------------------------------------- files
COLUMNS = {
    "mccfr": ("sampling", "seed", "iteration", "nodes_touched", "nash_conv"),
    "mmd": ("variant", "iteration", "nash_conv_current", "nash_conv_average"),
    "psro": ("meta_solver", "iteration", "population_size", "nash_conv"),
}


def tasks(groups, quick=False):
    """(function, arguments) of every run of the chosen groups."""
    game = lk.games.load(GAME)
    out = []
    if "mccfr" in groups:
        for sampling in MCCFR_ITERATIONS:
            for seed in SEEDS:
                out.append((run_mccfr, (sampling, seed, QUICK["mccfr"] if quick else None)))
    if "mmd" in groups:
        for variant in mmd_variants(game):
            out.append((run_mmd, (variant, QUICK["mmd"] if quick else None)))
    if "psro" in groups:
        for meta_solver in ("nash", "uniform"):
            out.append((run_psro, (meta_solver, QUICK["psro"] if quick else None)))
    return out


def settings(quick=False):
    game = lk.games.load(GAME)
    return {
        "game": GAME,
        "command": "python scripts/regenerate_lab15.py" + (" --quick" if quick else ""),
        "mccfr": {"seeds": list(SEEDS), "iterations": {s: QUICK["mccfr"] if quick else n
                                                        for s, n in MCCFR_ITERATIONS.items()},
                  "exploration": 0.6, "nodes_touched": "histories visited by the sampled episodes"},
        "mmd": {"iterations": QUICK["mmd"] if quick else MMD_ITERATIONS, "feedback": "sequence form",
                "magnet": "uniform", "variants": mmd_variants(game)},
        "psro": {"iterations": QUICK["psro"] if quick else PSRO_ITERATIONS, "oracle": "exact best response"},
    }


def _format(value):
    return repr(float(value)) if isinstance(value, (float, np.floating)) else str(value)


def write_csv(path, columns, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_format(v) for v in row] for row in rows])


def read_csv(path):
    """A cached CSV as a list of dicts with numbers parsed (ints stay ints)."""
    def parse(text):
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text
    with open(path, newline="") as f:
        return [{k: parse(v) for k, v in row.items()} for row in csv.DictReader(f)]


def regenerate(groups=GROUPS, out_dir=DATA, quick=False, jobs=1, log=print):
    """Run the chosen groups and write their CSV files and settings.json into `out_dir`.

    Returns {group: rows} (rows sorted as in the files).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    todo = tasks(groups, quick)
    results = {g: [] for g in groups}
    facts = {g: {} for g in groups}
    start = time.perf_counter()

    def collect(task, result):
        group, rows, extra = result
        results[group].extend(rows)
        facts[group].update(extra)
        log(f"  {task[0].__name__}{task[1]}: {len(rows)} rows, {time.perf_counter() - start:.0f} s so far")

    if jobs > 1:
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(f, *args): (f, args) for f, args in todo}
            for future in concurrent.futures.as_completed(futures):
                collect(futures[future], future.result())
    else:
        for f, args in todo:
            collect((f, args), f(*args))
    variants = list(mmd_variants(lk.games.load(GAME)))
    order = {"mccfr": lambda r: r[:3], "mmd": lambda r: (variants.index(r[0]), r[1]), "psro": lambda r: r[:2]}
    for group in groups:
        results[group].sort(key=order[group])
        write_csv(out_dir / f"{group}.csv", COLUMNS[group], results[group])
    info_path = out_dir / "settings.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    new = settings(quick)
    info.update({k: v for k, v in new.items() if k not in GROUPS or k in groups})
    for group in groups:
        info[group]["end_of_run"] = dict(sorted(facts[group].items()))
    info_path.write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    log(f"wrote {', '.join(f'{g}.csv' for g in groups)} and settings.json to {out_dir} "
        f"in {time.perf_counter() - start:.0f} s")
    return results


def main(argv=None):
    from labkit._cli import add_version, at_least
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", metavar="GROUP", help=f"groups to run (default all): {', '.join(GROUPS)}")
    parser.add_argument("--quick", "--slice", action="store_true",
                        help=f"only the first iterations of every run ({QUICK})")
    parser.add_argument("--out-dir", default=str(DATA), help="where to write (default labkit/data/lab15)")
    parser.add_argument("--jobs", type=at_least(1), default=1, help="runs at a time (processes)")
    add_version(parser)
    args = parser.parse_args(argv)
    unknown = [g for g in args.groups if g not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {unknown}; choose from {', '.join(GROUPS)}")
    if args.quick and Path(args.out_dir).resolve() == DATA.resolve():
        parser.error("--quick would overwrite the cached results; give another --out-dir")
    regenerate(tuple(args.groups) or GROUPS, args.out_dir, args.quick, args.jobs)


if __name__ == "__main__":
    main()
