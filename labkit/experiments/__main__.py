"""Command line: ``python -m labkit.experiments efr --game leduc_poker --regime fixed --rounds 500``.

Prints the table in the paper's units (Leduc in milli-big-blinds, goofspiel in win %) with the
avg column and avg row, and optionally writes JSON (the description) with NPZ (per-round values), CSV
(means) and a heatmap.
``--workers N`` sets the number of processes (1 = serial); ``--scheduler ADDRESS`` sends the work
to a running Dask cluster instead (``dask scheduler`` / ``dask worker ADDRESS`` on the machines).

Before a run starts it prints (on stderr) how long it should take, predicted from a few timed
updates of each variant (`labkit.experiments.estimate`); ``--estimate`` prints only that. Bad
arguments (an unknown game or variant, a game too large to compile, rounds < 1) are usage errors
(exit status 2) that name the argument.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from labkit._cli import add_version, at_least as _at_least
from labkit.experiments.games import PAPER_GAMES, paper_variants, resolve_game
from labkit.experiments.results import UNITS
from labkit.experiments.tournament import REGIMES, efr_tournament


def _variant(text: str) -> str:
    """An argparse type: an EFR deviation type's name ("tips", "CF_EX+IN", ...)."""
    from labkit.efr.deviations import DEVIATION_NAMES, parse_deviation_type
    try:
        return parse_deviation_type(text).value
    except (ValueError, TypeError):
        raise argparse.ArgumentTypeError(f"unknown variant {text!r}; choose from "
                                         + ", ".join(DEVIATION_NAMES)) from None


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (``python -m labkit.experiments --help``).

    Returns
    -------
    argparse.ArgumentParser

    Examples
    --------
    >>> args = build_parser().parse_args(["efr", "--game", "kuhn_poker", "--rows", "CF", "tips", "--rounds", "3"])
    >>> args.game, args.rows, args.rounds, args.regime
    ('kuhn_poker', ['cf', 'tips'], 3, 'fixed')
    """
    parser = argparse.ArgumentParser(prog="python -m labkit.experiments",
                                     description="The EFR paper's experiments (Morrill et al., 2021).")
    add_version(parser, "labkit.experiments")
    commands = parser.add_subparsers(dest="command", required=True)
    efr = commands.add_parser("efr", help="every EFR variant against every EFR variant",
                              description="Rows learn against columns for R rounds; prints the mean table.")
    efr.add_argument("--game", default="leduc_poker",
                     help="one of the paper's nine games by name (" + ", ".join(g.key for g in PAPER_GAMES)
                          + "; also sheriff, tiny_bridge_2p, tiny_hanabi, leduc_poker), any labkit game "
                          "string, e.g. 'goofspiel(num_cards=5,players=2,points_order=ascending,"
                          "imp_info=True)', or openspiel:<game string>")
    efr.add_argument("--regime", choices=REGIMES, default="fixed")
    efr.add_argument("--rounds", type=_at_least(1), default=500, help="rounds per table entry (default 500)")
    efr.add_argument("--rows", nargs="+", type=_variant, default=None, metavar="NAME",
                     help="row variants (default: the paper's rows for the game: the 11 of Figure E.5, "
                          "tiny Hanabi's 3)")
    efr.add_argument("--columns", nargs="+", type=_variant, default=None, metavar="NAME",
                     help="column variants (default: the rows)")
    efr.add_argument("--workers", type=_at_least(1), default=None,
                     help=f"worker processes (default os.cpu_count() = {os.cpu_count()}; 1 = serial)")
    efr.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="run on a Dask cluster, e.g. tcp://10.0.0.1:8786 (needs dask[distributed])")
    efr.add_argument("--rows-per-unit", type=_at_least(1), default=None,
                     help="fixed regime: rows per work unit (default all: one self-play per column)")
    efr.add_argument("--fixed-point", choices=["paper", "exact", "lstsq"], default="paper",
                     help="EFR's numerics: 'paper' (default) is the authors' computation bit for bit "
                          "(Eigen's JacobiSVD, compiled on first use; reproduces Figure E.5 to the "
                          "printed decimal), 'exact' labkit's exact fixed point, 'lstsq' numpy's "
                          "least squares")
    efr.add_argument("--out", default=None, metavar="PATH.json",
                     help="write the result as JSON, its per-round values as PATH.npz and the means "
                          "as PATH.csv beside it")
    efr.add_argument("--heatmap", default=None, metavar="PATH.png", help="save a heatmap of the table")
    efr.add_argument("--units", choices=list(UNITS), default=None,
                     help="table units (default: mbb for Leduc, win%% for goofspiel, else raw)")
    efr.add_argument("--digits", type=_at_least(0), default=None, help="decimals in the table")
    efr.add_argument("--quiet", action="store_true", help="no progress bar and no time estimate")
    efr.add_argument("--estimate", action="store_true",
                     help="print the predicted run time and exit without running")
    return parser


def check_efr_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """Load the game and the numerics before anything runs.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        From `build_parser`; its ``error`` reports a problem as a usage error (exit status 2).
    args : argparse.Namespace
        The parsed "efr" arguments.

    Returns
    -------
    str
        The game spec to run.

    Raises
    ------
    SystemExit
        With status 2 and a message naming the argument, for a game that cannot be loaded,
        repeated rows or columns, or paper numerics that cannot be built.

    Examples
    --------
    >>> parser = build_parser()
    >>> check_efr_arguments(parser, parser.parse_args(["efr", "--game", "goofspiel5_2p", "--fixed-point", "exact"]))
    'goofspiel(num_cards=5,players=2,points_order=ascending,imp_info=True)'
    """
    from labkit.experiments.tournament import load_game
    spec = resolve_game(args.game)
    try:
        load_game(spec)            # refused before compiling when its tree is too large
    except (ValueError, TypeError, ImportError) as err:
        parser.error(f"argument --game: {err}")
    for name in ("rows", "columns"):
        chosen = getattr(args, name) or []
        repeated = sorted({v for v in chosen if chosen.count(v) > 1})
        if repeated:
            parser.error(f"argument --{name}: {', '.join(repeated)} given more than once")
    if args.fixed_point == "paper":
        from labkit.efr.eigen import EigenUnavailable, require
        try:
            require()              # compiled once, before any timing or worker
        except EigenUnavailable as err:
            parser.error(f"argument --fixed-point: {err} (or use --fixed-point exact)")
    return spec


def estimate(args: argparse.Namespace, spec: str) -> tuple[float, int]:
    """Predicted seconds of the run described by `args` (a few timed updates per variant).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed "efr" arguments.
    spec : str
        The game spec (`check_efr_arguments`).

    Returns
    -------
    seconds : float
    workers : int
        The number of processes the prediction assumes.

    Examples
    --------
    >>> args = build_parser().parse_args(["efr", "--game", "kuhn_poker", "--rows", "cf", "--rounds", "10",
    ...                                   "--workers", "1", "--fixed-point", "exact"])
    >>> seconds, workers = estimate(args, "kuhn_poker")
    >>> seconds > 0, workers
    (True, 1)
    """
    import functools
    from labkit.experiments.estimate import measure_costs, predict_seconds
    from labkit.experiments.tournament import efr_learner
    rows = list(args.rows) if args.rows else list(paper_variants(spec))
    columns = list(args.columns) if args.columns else rows
    learner = functools.partial(efr_learner, fixed_point=args.fixed_point)
    costs = measure_costs(spec, rows + columns, learner)
    workers = args.workers or os.cpu_count() or 1
    if args.regime == "fixed" and args.rows_per_unit:
        # chunks recompute the column's self-play once per chunk
        chunks = -(-len(rows) // args.rows_per_unit)
        extra = (chunks - 1) * sum(costs.update[c] for c in columns) * max(args.rounds - 1, 0)
    else:
        extra = 0.0
    return predict_seconds(costs, rows, columns, args.regime, args.rounds, workers) + extra / workers, workers


def run_efr(args: Any) -> Any:
    """Run one tournament as described by parsed `args`, writing the files it asks for.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed "efr" arguments, with ``argv`` (the command line, for the result's metadata).

    Returns
    -------
    TournamentResult

    Examples
    --------
    >>> argv = ["efr", "--game", "kuhn_poker", "--rows", "cf", "bps", "--rounds", "3", "--workers", "1",
    ...         "--fixed-point", "exact", "--quiet"]
    >>> args = build_parser().parse_args(argv)
    >>> args.argv = argv
    >>> run_efr(args).metadata["command"].split(" --")
    ['python -m labkit.experiments efr', 'game kuhn_poker', 'rows cf bps', 'rounds 3', 'workers 1', 'fixed-point exact',
     'quiet']
    """
    executor, client = args.workers, None
    if args.scheduler:
        from distributed import Client
        client = Client(args.scheduler)
        executor = client.get_executor()
    game = resolve_game(args.game)
    rows = list(args.rows) if args.rows else list(paper_variants(game))
    try:
        result = efr_tournament(game, rows, args.columns or rows, regime=args.regime,
                                rounds=args.rounds, executor=executor, progress=not args.quiet,
                                rows_per_unit=args.rows_per_unit, fixed_point=args.fixed_point)
    finally:
        if client is not None:
            client.close()
    result.metadata["fixed_point"] = args.fixed_point
    result.metadata["command"] = "python -m labkit.experiments " + " ".join(_quote(a) for a in args.argv)
    if args.out:
        stem = args.out[:-5] if args.out.endswith(".json") else args.out
        os.makedirs(os.path.dirname(stem) or ".", exist_ok=True)
        result.to_json(stem + ".json")
        result.to_csv(stem + ".csv")
    if args.heatmap:
        from labkit.experiments.plot import save_heatmap
        save_heatmap(result, args.heatmap, units=args.units)
    return result


def _quote(arg: str) -> str:
    return f"'{arg}'" if any(ch in arg for ch in " ()=,") else arg


def main(argv: list[str] | None = None) -> int:
    """The command line: parse `argv`, check it, estimate the time, run, print the table.

    Parameters
    ----------
    argv : list of str, optional
        Default: ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status (0); usage errors exit with status 2 through argparse.

    Examples
    --------
    >>> main(["efr", "--game", "kuhn_poker", "--rows", "cf", "bps", "--rounds", "3", "--workers", "1",
    ...       "--fixed-point", "exact", "--quiet", "--digits", "3"])       # doctest: +ELLIPSIS
    kuhn_poker, fixed regime, mean over rounds 0..2, payoff
    ...
    0
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    if args.command == "efr":
        spec = check_efr_arguments(parser, args)
        if args.estimate or not args.quiet:
            from labkit.experiments.estimate import format_seconds
            seconds, workers = estimate(args, spec)
            print(f"estimated time: {format_seconds(seconds)} on {workers} worker"
                  f"{'s' if workers > 1 else ''} ({args.regime} regime, {args.rounds} rounds)",
                  file=sys.stderr, flush=True)
            if args.estimate:
                return 0
        result = run_efr(args)
        print(result.table(units=args.units, digits=args.digits))
        print(f"({result.metadata['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
