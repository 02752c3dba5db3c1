"""The EFR authors' per-round data files, read and compared with labkit's runs.

Morrill et al. (2021) published the per-round values behind their figures in the repository
github.com/dmorrill10/hr_edl_experiments (folder ``data/``, files such as
``efr.tiny_bridge.null.fixed.gen.ssv``; labkit does not ship them). Each file holds, for every
round ``t = 0, 1, ...``, one line per learner (row) with one ``(value, milliseconds)`` pair per
column variant: the row's seat-averaged expected payoff against the column in round t, printed
with six significant digits, in the game's own units. The first line names the columns::

    learner/env  CFR  CFR_EX+IN  CFR_IN  A-EFR_IN  BPS-EFR  ...
    t = 0
    CFR  (-12.3294, 467)  (-12.3294, 242)  ...

`read_authors_file` turns one into ``{(row, column): (rounds,) array}`` under labkit's variant
names, and `disagreements` counts the values of a `TournamentResult` that do not print as theirs.

    python -m labkit.experiments.authors labkit/data/efr/tiny_bridge_2p_fixed.json \\
        path/to/hr_edl_experiments/data/efr.tiny_bridge.null.fixed.gen.ssv
"""
from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from labkit.experiments.results import TournamentResult

# one run's values per (row, column) pair, rounds 0, 1, ... in order
AuthorsTable = dict[tuple[str, str], np.ndarray]

# the authors' names of the variants -> labkit's ("BR" is their best-response row)
AUTHORS_NAMES = {"A-EFR_IN": "act_in", "CFR": "cf", "CFR_IN": "cf_in", "CFR_EX+IN": "cf_ex+in",
                 "BPS-EFR": "bps", "CFPS-EFR": "cfps", "CFPS-EFR_EX+IN": "cfps_ex+in", "CSPS-EFR": "csps",
                 "TIPS-EFR": "tips", "TIPS-EFR_EX+IN": "tips_ex+in", "BEHAV-EFR": "bhv", "BR": "br"}
# labkit's name of each game of the paper (`labkit.experiments.PAPER_GAMES`) -> the authors' file stem
# (their "goofspiel" has descending prizes)
AUTHORS_GAMES = {"leduc": "leduc", "goofspiel5_2p_descending": "goofspiel", "goofspiel5_2p": "goofspiel_ascending",
                 "goofspiel4_2p_random": "random_goofspiel", "goofspiel4_3p_descending": "goofspiel_3p",
                 "goofspiel4_3p": "goofspiel_ascending_3p", "sheriff": "sheriff", "tiny_bridge_2p": "tiny_bridge",
                 "tiny_hanabi": "tiny_hanabi"}
_ROUND = re.compile(r"^t = (\d+)$")
_VALUE = re.compile(r"\(\s*([^,()]+?)\s*,\s*[^()]*\)")


def _name(text: str, path: Path) -> str:
    try:
        return AUTHORS_NAMES[text]
    except KeyError:
        raise ValueError(f"{path}: unknown variant {text!r}; known: {', '.join(AUTHORS_NAMES)}") from None


def read_authors_file(path: str | Path) -> AuthorsTable:
    """The values of one of the authors' ``.ssv`` files, by pair of variants.

    Parameters
    ----------
    path : str or Path
        A file in their format (module docstring): a header line ``learner/env`` with the columns,
        then per round a line ``t = <round>`` and one line per row.

    Returns
    -------
    dict
        ``{(row, column): array of the values of rounds 0, 1, ...}``, under labkit's variant names
        (`AUTHORS_NAMES`; their best-response row is ``"br"``).

    Raises
    ------
    ValueError
        Naming the file and line where the text is not in their format: a value line before the
        header or the first round, a row with the wrong number of pairs, an unknown variant, a
        round missing for some pair.

    Examples
    --------
    >>> import tempfile
    >>> text = ("learner/env  CFR  A-EFR_IN\\n"
    ...         "t = 0\\nCFR  (-12.3294, 467)  (-12.3294, 242)\\nA-EFR_IN  (-12.3294, 102)  (0, 105)\\n"
    ...         "t = 1\\nCFR  (11.1822, 33)  (13.394, 59)\\nA-EFR_IN  (13.394, 43)  (15.6667, 42)\\n")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "efr.example.null.fixed.gen.ssv"
    ...     _ = path.write_text(text)
    ...     table = read_authors_file(path)
    >>> sorted(table)
    [('act_in', 'act_in'), ('act_in', 'cf'), ('cf', 'act_in'), ('cf', 'cf')]
    >>> table["act_in", "act_in"].tolist()
    [0.0, 15.6667]
    """
    path = Path(path)
    columns: list[str] | None = None
    t: int | None = None
    values: dict[tuple[str, str], dict[int, float]] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("learner/env"):
            columns = [_name(word, path) for word in line.split()[1:]]
            continue
        found = _ROUND.match(line)
        if found:
            t = int(found.group(1))
            continue
        if columns is None or t is None:
            raise ValueError(f"{path}:{number}: a value line before the header and the first 't = ' line")
        row, _, rest = line.partition(" ")
        cells = [float(v) for v in _VALUE.findall(rest)]
        if len(cells) != len(columns):
            raise ValueError(f"{path}:{number}: {len(cells)} values for {len(columns)} columns")
        for column, value in zip(columns, cells, strict=True):
            values.setdefault((_name(row, path), column), {})[t] = value
    if not values:
        raise ValueError(f"{path}: no values found")
    rounds = max(max(v) for v in values.values()) + 1
    table = {}
    for pair, by_round in values.items():
        if len(by_round) != rounds:
            raise ValueError(f"{path}: {pair} has {len(by_round)} of {rounds} rounds")
        table[pair] = np.array([by_round[t] for t in range(rounds)])
    return table


def authors_file_name(key: str, regime: str) -> str:
    """The name of the authors' data file for a game of the paper and a regime.

    Parameters
    ----------
    key : str
        labkit's key of one of the paper's nine games (`labkit.experiments.PAPER_GAMES`).
    regime : {"fixed", "simultaneous"}

    Returns
    -------
    str
        The file's name in the ``data/`` folder of their repository.

    Raises
    ------
    ValueError
        For a game that is not the paper's or an unknown regime.

    Examples
    --------
    >>> authors_file_name("tiny_bridge_2p", "fixed")
    'efr.tiny_bridge.null.fixed.gen.ssv'
    >>> authors_file_name("goofspiel5_2p_descending", "simultaneous")     # their "goofspiel"
    'efr.goofspiel.null.sim.gen.ssv'
    """
    if key not in AUTHORS_GAMES:
        raise ValueError(f"unknown game {key!r}; the paper's are {', '.join(AUTHORS_GAMES)}")
    if regime not in ("fixed", "simultaneous"):
        raise ValueError(f"regime must be 'fixed' or 'simultaneous', got {regime!r}")
    return f"efr.{AUTHORS_GAMES[key]}.null.{'fixed' if regime == 'fixed' else 'sim'}.gen.ssv"


def six_digits(values: float | Sequence[float] | np.ndarray) -> np.ndarray:
    """The values as the authors printed them: rounded to six significant digits (C's ``%g``).

    Parameters
    ----------
    values : float or array_like

    Returns
    -------
    numpy.ndarray
        Of the same shape, each value replaced by the nearest number of six significant digits.

    Examples
    --------
    >>> six_digits([20.18513538, 18.775076, -1.2e-17]).tolist()
    [20.1851, 18.7751, -1.2e-17]
    """
    return np.vectorize(lambda v: float(f"{v:.6g}"), otypes=[float])(values)


def disagreements(result: TournamentResult, authors: Mapping[tuple[str, str], np.ndarray],
                  rounds: int | None = None, atol: float = 1e-9) -> dict[tuple[str, str], list[int]]:
    """Where a run does not print as the authors' values.

    A value of round t disagrees when, rounded to six significant digits, it is not the authors'
    printed value and it is farther than `atol` from it. The tolerance is for zeros: the two
    programs add a profile's payoff in different orders, so a payoff that is 0 in exact arithmetic
    (a zero-sum diagonal, say) prints as 1e-17 in one and -5e-17 in the other.

    Parameters
    ----------
    result : TournamentResult
        A run in the game's own units (as labkit stores them).
    authors : dict
        ``{(row, column): per-round values}``, as `read_authors_file` returns; it must hold every
        pair of `result`.
    rounds : int, optional
        Compare rounds ``0 .. rounds - 1`` only (default: all the rounds both have).
    atol : float
        Values this close count as equal whatever they print as.

    Returns
    -------
    dict
        ``{(row, column): [the rounds t that disagree]}`` for the pairs with any; empty when the
        run prints as theirs everywhere.

    Raises
    ------
    ValueError
        Naming a pair of `result` that `authors` lacks.

    Examples
    --------
    >>> from labkit.experiments import TournamentResult
    >>> ours = {"act_in": {"act_in": np.array([0.0, 15.66672, 18.763004])}}
    >>> run = TournamentResult("tiny_bridge_2p", "fixed", 3, ["act_in"], ["act_in"], ours)
    >>> theirs = {("act_in", "act_in"): np.array([5.55112e-17, 15.6667, 18.7751])}
    >>> disagreements(run, theirs)
    {('act_in', 'act_in'): [2]}
    >>> disagreements(run, theirs, rounds=2)
    {}
    """
    missing = [(r, c) for r in result.rows for c in result.columns if (r, c) not in authors]
    if missing:
        raise ValueError(f"the authors' data has no {missing[0]} (and {len(missing) - 1} more pairs)")
    found: dict[tuple[str, str], list[int]] = {}
    for row in result.rows:
        for column in result.columns:
            theirs = authors[row, column]
            length = min(result.rounds, len(theirs), rounds or result.rounds)
            values = np.asarray(result.per_round[row][column][:length])
            differ = (six_digits(values) != theirs[:length]) & (np.abs(values - theirs[:length]) > atol)
            if differ.any():
                found[row, column] = np.flatnonzero(differ).tolist()
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: how many values of a run differ from the authors' file, and where first.

    Parameters
    ----------
    argv : list of str, optional
        ``[RUN.json, AUTHORS_FILE.ssv]`` (default: the process's arguments).

    Returns
    -------
    int
        The exit status: 0, or 2 with a usage line for other arguments.

    Examples
    --------
    >>> main([])
    usage: python -m labkit.experiments.authors RUN.json AUTHORS_FILE.ssv
    2
    """
    from labkit.experiments.results import TournamentResult
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m labkit.experiments.authors RUN.json AUTHORS_FILE.ssv")
        return 2
    result = TournamentResult.from_json(argv[0])
    found = disagreements(result, read_authors_file(argv[1]))
    values = sum(len(v) for v in found.values())
    pairs = len(result.rows) * len(result.columns)
    print(f"{values} values in {len(found)} of {pairs} pairs differ at six significant digits")
    for (row, column), rounds in sorted(found.items(), key=lambda item: item[1][0])[:10]:
        print(f"  {row} against {column}: first in round {rounds[0]}, {len(rounds)} rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
