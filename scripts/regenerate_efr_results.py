"""Regenerate the cached EFR tournament results in data/efr/ (see data/efr/README.md).

    .venv/bin/python scripts/regenerate_efr_results.py               # all seven runs
    .venv/bin/python scripts/regenerate_efr_results.py leduc_fixed   # one of them
    .venv/bin/python scripts/regenerate_efr_results.py --workers 1 --list

Each run is one call of the command line ``python -m labkit.experiments efr ...`` (printed before
it starts), writing <name>.json (per-round values), <name>.csv (means) and <name>.png (heatmap).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from labkit.experiments.__main__ import main as experiments_main
from labkit.experiments.tournament import FIGURE_E5_VARIANTS, TABLE_2_VARIANTS

DATA = Path(__file__).resolve().parents[1] / "data" / "efr"
GOOFSPIEL_5_2P = "goofspiel(num_cards=5,players=2,points_order=ascending,imp_info=True)"
GOOFSPIEL_4_3P = "goofspiel(num_cards=4,players=3,points_order=ascending,imp_info=True)"

# name -> (game, regime, variants, fixed point): the paper's Figure E.5 (Leduc) and Table 2
# (goofspiel) with the authors' numerics, and Figure E.5's fixed regime once more with labkit's
# exact fixed point, to show how far rounding alone moves the table
RUNS = {
    "leduc_fixed": ("leduc_poker", "fixed", FIGURE_E5_VARIANTS, "paper"),
    "leduc_simultaneous": ("leduc_poker", "simultaneous", FIGURE_E5_VARIANTS, "paper"),
    "leduc_fixed_exact": ("leduc_poker", "fixed", FIGURE_E5_VARIANTS, "exact"),
    "goofspiel5_2p_fixed": (GOOFSPIEL_5_2P, "fixed", TABLE_2_VARIANTS, "paper"),
    "goofspiel5_2p_simultaneous": (GOOFSPIEL_5_2P, "simultaneous", TABLE_2_VARIANTS, "paper"),
    "goofspiel4_3p_fixed": (GOOFSPIEL_4_3P, "fixed", TABLE_2_VARIANTS, "paper"),
    "goofspiel4_3p_simultaneous": (GOOFSPIEL_4_3P, "simultaneous", TABLE_2_VARIANTS, "paper"),
}
ROUNDS = 500


def command_line(name, rounds=ROUNDS, workers=None, out_dir=DATA):
    """The arguments of ``python -m labkit.experiments`` that produce run `name`."""
    game, regime, variants, fixed_point = RUNS[name]
    args = ["efr", "--game", game, "--regime", regime, "--rounds", str(rounds)]
    if tuple(variants) != FIGURE_E5_VARIANTS:       # the command line's default rows
        args += ["--rows", *variants]
    if fixed_point != "paper":                      # the command line's default numerics
        args += ["--fixed-point", fixed_point]
    args += ["--out", str(Path(out_dir) / f"{name}.json"), "--heatmap", str(Path(out_dir) / f"{name}.png")]
    if workers is not None:
        args += ["--workers", str(workers)]
    return args


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"runs to regenerate (default all): {', '.join(RUNS)}")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--out-dir", default=os.path.relpath(DATA))
    parser.add_argument("--list", action="store_true", help="print the commands and stop")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in RUNS]
    if unknown:
        parser.error(f"unknown run(s) {unknown}; choose from {', '.join(RUNS)}")
    for name in args.names or list(RUNS):
        cli = command_line(name, args.rounds, args.workers, args.out_dir)
        print("python -m labkit.experiments " + " ".join(f"'{a}'" if "(" in a else a for a in cli), flush=True)
        if not args.list:
            Path(args.out_dir).mkdir(parents=True, exist_ok=True)
            experiments_main(cli)
    return 0


if __name__ == "__main__":
    sys.exit(main())
