"""Regenerate the cached EFR tournament results in labkit/data/efr/ (see labkit/data/efr/README.md).

    .venv/bin/python scripts/regenerate_efr_results.py               # all 19 runs
    .venv/bin/python scripts/regenerate_efr_results.py leduc_fixed   # one of them
    .venv/bin/python scripts/regenerate_efr_results.py --missing     # those not cached yet
    .venv/bin/python scripts/regenerate_efr_results.py --replot      # redraw the heatmaps only
    .venv/bin/python scripts/regenerate_efr_results.py --estimate 5  # measure, estimate the cost
    .venv/bin/python scripts/regenerate_efr_results.py --workers 1 --list
    .venv/bin/python scripts/regenerate_efr_results.py --convert labkit/data/efr/*.json

Each run is one call of the command line ``python -m labkit.experiments efr ...`` (printed before
it starts), writing <name>.json (the run's description and means), <name>.npz (the per-round
values, compressed), <name>.csv (means) and <name>.png (heatmap). ``--convert`` rewrites result
files of the older single-JSON layout (per-round values inline) in this layout, checking that
every value reads back bit for bit; files already converted are left as they are.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from labkit._cli import add_version, at_least
from labkit.experiments.__main__ import main as experiments_main
from labkit.experiments.games import PAPER_GAMES, paper_variants
from labkit.experiments.results import TournamentResult
from labkit.experiments.tournament import FIGURE_E5_VARIANTS, REGIMES

DATA = Path(__file__).resolve().parents[1] / "labkit" / "data" / "efr"

# name -> (game, regime, variants, fixed point): the nine games of the paper's Appendix E in both
# regimes with the rows the paper shows (Figures E.1-E.6; Table 2 is a subset of the goofspiel
# ones) and the authors' numerics, and Figure E.5's fixed regime once more with labkit's exact
# fixed point, to show how far rounding alone moves the table
RUNS = {game.stem(regime): (game.spec, regime, game.variants, "paper")
        for game in PAPER_GAMES for regime in REGIMES}
RUNS["leduc_fixed_exact"] = ("leduc_poker", "fixed", FIGURE_E5_VARIANTS, "exact")
ROUNDS = 500


def command_line(name, rounds=ROUNDS, workers=None, out_dir=DATA):
    """The arguments of ``python -m labkit.experiments`` that produce run `name`."""
    game, regime, variants, fixed_point = RUNS[name]
    # OpenSpiel's games by their own names ("sheriff"), which the command line resolves
    args = ["efr", "--game", game.removeprefix("openspiel:"), "--regime", regime, "--rounds", str(rounds)]
    if tuple(variants) != tuple(paper_variants(game)):     # the command line's default rows
        args += ["--rows", *variants]
    if fixed_point != "paper":                      # the command line's default numerics
        args += ["--fixed-point", fixed_point]
    args += ["--out", str(Path(out_dir) / f"{name}.json"), "--heatmap", str(Path(out_dir) / f"{name}.png")]
    if workers is not None:
        args += ["--workers", str(workers)]
    return args


def is_cached(name, rounds=ROUNDS, out_dir=DATA):
    """Whether <out_dir>/<name>.json holds run `name` as `RUNS` defines it (rows, regime, rounds)."""
    path = Path(out_dir) / f"{name}.json"
    if not path.exists():
        return False
    import json
    cached = json.loads(path.read_text())       # the description is enough: no per-round values
    game, regime, variants, fixed_point = RUNS[name]
    return (cached["rows"] == list(variants) and cached["regime"] == regime and cached["rounds"] == rounds
            and cached.get("metadata", {}).get("fixed_point", "paper") == fixed_point)


def convert(paths):
    """Rewrite each result JSON that holds its per-round values inline as <stem>.json + <stem>.npz;
    returns the paths rewritten. Every value must read back bit for bit, or nothing is kept."""
    import json

    import numpy as np
    rewritten = []
    for path in map(Path, paths):
        if "per_round" not in json.loads(path.read_text()):
            continue
        old = TournamentResult.from_json(path)
        text = path.read_text()
        old.to_json(path)
        new = TournamentResult.from_json(path)
        same = (new.rows == old.rows and new.columns == old.columns and new.metadata == old.metadata
                and np.array_equal(new.per_round_array().view(np.uint64), old.per_round_array().view(np.uint64)))
        if not same:
            path.write_text(text)
            path.with_suffix(".npz").unlink()
            raise RuntimeError(f"{path}: the converted values differ from the original; left unchanged")
        rewritten.append(path)
    return rewritten


def estimate(names, slice_rounds, workers, rounds=ROUNDS):
    """Print, per run, the measured cost of one row-round and the full run's estimated wall time.

    A slice plays every row against the self-play of one column for `slice_rounds` rounds
    (rows x rounds row updates plus rounds self-play updates, serial), after an untimed one-round
    slice that builds the learners' deviation structures. A full run of either
    regime is about rows^2 x rounds + rows x rounds learner-rounds, spread over the workers.
    The slice's CPU time is measured beside its wall time: on a machine that other jobs share,
    the estimate from CPU time is what the run takes once it has the cores to itself.
    """
    import time

    from labkit.experiments import efr_tournament, load_game
    print(f"{'run':40s} {'slice s':>8s} {'CPU s':>7s} {'ms/row-round':>13s} "
          f"{f'estimate s ({workers} workers)':>24s} {'from CPU':>9s}")
    for name in names:
        game, regime, variants, fixed_point = RUNS[name]
        load_game(game)
        column = [variants[min(1, len(variants) - 1)]]
        # untimed first: one round builds the deviation structures, which a real run builds once
        # per worker and the scaling below would otherwise multiply about a thousand times
        efr_tournament(game, variants, column, regime="fixed", rounds=1, executor="serial",
                       progress=False, fixed_point=fixed_point)
        start, cpu = time.perf_counter(), time.process_time()
        efr_tournament(game, variants, column, regime="fixed",
                       rounds=slice_rounds, executor="serial", progress=False, fixed_point=fixed_point)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        row_rounds = (len(variants) + 1) * slice_rounds
        scale = (len(variants) ** 2 + len(variants)) * rounds / workers / row_rounds
        print(f"{name:40s} {seconds:8.2f} {cpu:7.2f} {1000 * seconds / row_rounds:13.1f} "
              f"{seconds * scale:24.0f} {cpu * scale:9.0f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"runs to regenerate (default all): {', '.join(RUNS)}")
    parser.add_argument("--workers", type=at_least(1), default=None, help="worker processes (default: all cores)")
    parser.add_argument("--rounds", type=at_least(1), default=ROUNDS)
    parser.add_argument("--out-dir", default=os.path.relpath(DATA))
    parser.add_argument("--list", action="store_true", help="print the commands and stop")
    parser.add_argument("--estimate", type=at_least(1), default=None, metavar="ROUNDS",
                        help="measure a slice of each run (every row against one column's self-play "
                             "for ROUNDS rounds, serial) and print the estimated wall time of the full "
                             "run with --workers (default 2); computes no table")
    parser.add_argument("--replot", action="store_true",
                        help="only redraw the heatmaps (<name>.png) of the cached runs, computing nothing")
    parser.add_argument("--convert", nargs="+", metavar="FILE.json", default=None,
                        help="rewrite result files that hold their per-round values inline as "
                             "FILE.json + FILE.npz (checked bit for bit), computing nothing")
    parser.add_argument("--missing", action="store_true",
                        help="only the runs whose cached file is absent or has other rows or rounds")
    add_version(parser)
    args = parser.parse_args(argv)
    if args.convert is not None:
        missing = [p for p in args.convert if not Path(p).is_file()]
        if missing:
            parser.error(f"--convert: no such file {', '.join(missing)}")
        done = convert(args.convert)
        for path in done:
            print(f"converted {path} -> {path.name} + {path.with_suffix('.npz').name}")
        print(f"{len(done)} of {len(args.convert)} files converted (the others were already)")
        return 0
    unknown = [n for n in args.names if n not in RUNS]
    if unknown:
        parser.error(f"unknown run(s) {unknown}; choose from {', '.join(RUNS)}")
    names = args.names or list(RUNS)
    if args.missing:
        names = [n for n in names if not is_cached(n, args.rounds, args.out_dir)]
    if args.estimate is not None:
        estimate(names, args.estimate, args.workers or 2, args.rounds)
        return 0
    if args.replot:
        from labkit.experiments.plot import save_heatmap
        for name in names:
            path = Path(args.out_dir) / f"{name}.json"
            if path.exists():
                save_heatmap(TournamentResult.from_json(path), path.with_suffix(".png"))
                print(f"redrew {path.with_suffix('.png')}")
        return 0
    for name in names:
        cli = command_line(name, args.rounds, args.workers, args.out_dir)
        print("python -m labkit.experiments " + " ".join(f"'{a}'" if "(" in a else a for a in cli), flush=True)
        if not args.list:
            Path(args.out_dir).mkdir(parents=True, exist_ok=True)
            experiments_main(cli)
    return 0


if __name__ == "__main__":
    sys.exit(main())
