r"""The result of a tournament: per-round values, means, tables in the paper's units, files.

Entry [R][C] is what the row variant R earns against the column variant C, averaged over the
seats R can take. The paper's summaries (Morrill et al., 2021, Figure E.5 and Table 2):

* entry      = mean over rounds t = 0..T-1 of the per-round seat-averaged payoff,
  :math:`\bar v_{RC} = \frac{1}{T} \sum_{t=0}^{T-1} \frac{1}{n} \sum_p u_p(x_p^t, y_{-p}^t)`;
* avg column = mean of a row over all columns, the diagonal included;
* avg row    = mean of a column over all rows;
* corner     = mean of the column means (the mean of the whole table).

Units: Leduc poker in milli-big-blinds (payoff x 1000; the 1-chip ante counts as the big blind),
goofspiel in win % (:math:`50 (v + 1)`, v the win/loss payoff in [-1, 1]), anything else raw.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# units name -> (function of the raw payoff, label for tables and axes)
UNITS = {
    "raw": (lambda v: v, "payoff"),
    "chips": (lambda v: v, "chips"),
    "mbb": (lambda v: 1000.0 * v, "milli-big-blinds"),
    "win%": (lambda v: 50.0 * (v + 1.0), "win %"),
}
DEFAULT_DIGITS = {"raw": 4, "chips": 4, "mbb": 1, "win%": 2}


def default_units(game: Any) -> str:
    """The paper's units for a game spec: "mbb" for Leduc, "win%" for goofspiel, else "raw".

    Parameters
    ----------
    game : str or GameTree
        A game string (or anything whose str() is one), with or without "openspiel:".

    Returns
    -------
    str
        A key of `UNITS`.

    Examples
    --------
    >>> default_units("leduc_poker"), default_units("goofspiel(num_cards=4)"), default_units("openspiel:sheriff")
    ('mbb', 'win%', 'raw')
    """
    name = str(game).split("(")[0].strip().removeprefix("openspiel:")
    return {"leduc_poker": "mbb", "goofspiel": "win%"}.get(name, "raw")


def convert(values: Any, units: str) -> np.ndarray:
    """Raw payoffs in the named units (see `UNITS`).

    Parameters
    ----------
    values : array_like
        Raw payoffs.
    units : {"raw", "chips", "mbb", "win%"}

    Returns
    -------
    float array of the same shape

    Raises
    ------
    ValueError
        For unknown units.

    Examples
    --------
    >>> convert([-1.0, 0.0, 0.5], "win%").tolist(), float(convert(0.0125, "mbb"))
    ([0.0, 50.0, 75.0], 12.5)
    """
    if units not in UNITS:
        raise ValueError(f"unknown units {units!r}; choose one of {', '.join(UNITS)}")
    return UNITS[units][0](np.asarray(values, dtype=float))


@dataclass
class TournamentResult:
    r"""Payoffs of every row variant against every column variant.

    Attributes
    ----------
    game : str
        The game spec the learners played.
    regime : {"fixed", "simultaneous"}
    rounds : int
    rows, columns : list of str
    per_round : dict row -> dict column -> (rounds,) array
        Seat-averaged expected payoff of round t (t = 0 is the uniform start), raw units.
    mean : dict row -> dict column -> float
        ``per_round[row][col].mean()``, raw units.
    metadata : dict
        How it was produced (labkit version, wall time, workers, ...).

    Raises
    ------
    ValueError
        For an unknown regime, rounds < 1, rows or columns that repeat, a missing entry, or
        per-round values of another length or not finite.

    Examples
    --------
    >>> from labkit.experiments import TournamentResult
    >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
    ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
    ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
    >>> result.mean["bhv"]["cf"]
    0.2
    >>> print(result.table(digits=2))
    kuhn_poker, fixed regime, mean over rounds 0..1, payoff
    row \ column     CF    BHV    avg
    CF             0.00  -0.20  -0.10
    BHV            0.20   0.00   0.10
    avg            0.10  -0.10   0.00
    """

    game: str
    regime: str
    rounds: int
    rows: list
    columns: list
    per_round: dict
    metadata: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.regime not in ("fixed", "simultaneous"):
            raise ValueError(f"regime must be 'fixed' or 'simultaneous', got {self.regime!r}")
        if isinstance(self.rounds, (bool, np.bool_)) or not isinstance(self.rounds, (int, np.integer)) \
                or self.rounds < 1:
            raise ValueError(f"rounds must be a positive integer, got {self.rounds!r}")
        self.rows, self.columns = list(self.rows), list(self.columns)
        for kind, names in (("rows", self.rows), ("columns", self.columns)):
            if not names or len(set(names)) != len(names):
                raise ValueError(f"{kind} must be a non-empty list of distinct variant names, got {names}")
        missing = [(r, c) for r in self.rows for c in self.columns
                   if not isinstance(self.per_round.get(r), dict) or c not in self.per_round[r]]
        if missing:
            raise ValueError(f"per_round has no entry for (row, column) {missing[0]}")
        self.per_round = {r: {c: np.asarray(self.per_round[r][c], dtype=float) for c in self.columns}
                          for r in self.rows}
        for r in self.rows:
            for c in self.columns:
                if self.per_round[r][c].shape != (self.rounds,):
                    raise ValueError(f"per_round[{r!r}][{c!r}] has shape {self.per_round[r][c].shape}, "
                                     f"expected ({self.rounds},)")
                if not np.all(np.isfinite(self.per_round[r][c])):
                    raise ValueError(f"per_round[{r!r}][{c!r}] holds a value that is not finite")
        self.mean = {r: {c: float(self.per_round[r][c].mean()) for c in self.columns} for r in self.rows}

    # ------------------------------------------------------------------ arrays
    @property
    def units(self) -> str:
        """The paper's units for this game (see `default_units`).

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> result.units
        'raw'
        """
        return default_units(self.game)

    def matrix(self, units: str = "raw") -> np.ndarray:
        """The table of means.

        Parameters
        ----------
        units : str
            One of `UNITS`.

        Returns
        -------
        (rows, columns) float array

        Raises
        ------
        ValueError
            For unknown units.

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> result.matrix().tolist()
        [[0.0, -0.2], [0.2, 0.0]]
        """
        return convert([[self.mean[r][c] for c in self.columns] for r in self.rows], units)

    def with_averages(self, units: str = "raw") -> np.ndarray:
        """The table of means with the paper's averages.

        Parameters
        ----------
        units : str
            One of `UNITS`.

        Returns
        -------
        (rows + 1, columns + 1) float array
            The means, the avg column (row means, last column), the avg row (column means, last
            row) and in the corner the mean of the column means.

        Raises
        ------
        ValueError
            For unknown units.

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> print(result.with_averages("win%").round(2))
        [[50. 40. 45.]
         [60. 50. 55.]
         [55. 45. 50.]]
        """
        m = self.matrix(units)
        out = np.empty((m.shape[0] + 1, m.shape[1] + 1))
        out[:-1, :-1] = m
        out[:-1, -1] = m.mean(axis=1)
        out[-1, :-1] = m.mean(axis=0)
        out[-1, -1] = out[-1, :-1].mean()
        return out

    def per_round_array(self, units: str = "raw") -> np.ndarray:
        """The per-round values of every entry.

        Parameters
        ----------
        units : str
            One of `UNITS`.

        Returns
        -------
        (rows, columns, rounds) float array

        Raises
        ------
        ValueError
            For unknown units.

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> result.per_round_array()[1].tolist()
        [[0.1, 0.3], [0.0, 0.0]]
        """
        return convert([[self.per_round[r][c] for c in self.columns] for r in self.rows], units)

    def subset(self, rows: list[str] | None = None, columns: list[str] | None = None,
               rounds: int | None = None) -> TournamentResult:
        """The same result restricted to some rows, columns and the first `rounds` rounds.

        Parameters
        ----------
        rows, columns : list of str, optional
            Default: all.
        rounds : int, optional
            In 1..self.rounds (default: all).

        Returns
        -------
        TournamentResult

        Raises
        ------
        ValueError
            For names that are not in the result or a number of rounds out of range.

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> result.subset(rows=["bhv"], rounds=1).mean
        {'bhv': {'cf': 0.1, 'bhv': 0.0}}
        """
        rows = self.rows if rows is None else list(rows)
        columns = self.columns if columns is None else list(columns)
        rounds = self.rounds if rounds is None else int(rounds)
        missing = [n for n in rows if n not in self.rows] + [n for n in columns if n not in self.columns]
        if missing or not 0 < rounds <= self.rounds:
            raise ValueError(f"cannot take rows/columns {missing} or {rounds} rounds from a result with rows "
                             f"{self.rows}, columns {self.columns} and {self.rounds} rounds")
        per_round = {r: {c: self.per_round[r][c][:rounds] for c in columns} for r in rows}
        return TournamentResult(self.game, self.regime, rounds, rows, columns, per_round, dict(self.metadata))

    # ------------------------------------------------------------------ text
    def table(self, units: str | None = None, digits: int | None = None) -> str:
        """The table as text, with the avg column and avg row.

        Parameters
        ----------
        units : str, optional
            One of `UNITS` (default: the paper's for the game).
        digits : int, optional
            Decimals (default: 1 for mbb, 2 for win %, 4 otherwise).

        Returns
        -------
        str

        Raises
        ------
        ValueError
            For unknown units.

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> print(result.table(units="win%"))
        kuhn_poker, fixed regime, mean over rounds 0..1, win %
        row \\ column     CF    BHV    avg
        CF            50.00  40.00  45.00
        BHV           60.00  50.00  55.00
        avg           55.00  45.00  50.00
        """
        units = units or self.units
        digits = DEFAULT_DIGITS.get(units, 4) if digits is None else digits
        m = self.with_averages(units)
        labels = [_label(r) for r in self.rows] + ["avg"]
        heads = [_label(c) for c in self.columns] + ["avg"]
        cells = [[f"{v:.{digits}f}" for v in row] for row in m]
        width = max(len(s) for s in heads + [c for row in cells for c in row])
        first = max(len(s) for s in labels + ["row \\ column"])
        title = (f"{self.game}, {self.regime} regime, mean over rounds 0..{self.rounds - 1}, "
                 f"{UNITS[units][1]}")
        lines = [title, "row \\ column".ljust(first) + "".join(h.rjust(width + 2) for h in heads)]
        for label, row in zip(labels, cells, strict=True):
            lines.append(label.ljust(first) + "".join(c.rjust(width + 2) for c in row))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    # ------------------------------------------------------------------ files
    def to_csv(self, path: str | Path, units: str | None = None) -> None:
        """Write the table of means with its avg column and row, full precision.

        Parameters
        ----------
        path : str or Path
        units : str, optional
            One of `UNITS` (default: the paper's for the game).

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "table.csv"
        >>> result.to_csv(path)
        >>> print(path.read_text().splitlines()[1])
        CF,0.0,-0.2,-0.1
        """
        units = units or self.units
        m = self.with_averages(units)
        with open(path, "w", newline="") as fh:
            out = csv.writer(fh)
            out.writerow([f"row \\ column ({units})"] + [_label(c) for c in self.columns] + ["avg"])
            for label, row in zip([_label(r) for r in self.rows] + ["avg"], m):  # noqa: B905
                out.writerow([label] + [repr(float(v)) for v in row])

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain Python types (lists for the per-round values), as `to_json` writes it.

        Returns
        -------
        dict

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> result.to_dict()["per_round"]["bhv"]
        {'cf': [0.1, 0.3], 'bhv': [0.0, 0.0]}
        """
        return {"game": self.game, "regime": self.regime, "rounds": self.rounds, "rows": self.rows,
                "columns": self.columns, "units_of_values": "raw payoff (game units)",
                "mean": self.mean,
                "per_round": {r: {c: self.per_round[r][c].tolist() for c in self.columns} for r in self.rows},
                "metadata": self.metadata}

    def to_json(self, path: str | Path) -> None:
        """Write the result as two files: ``<stem>.json``, everything but the per-round values
        (readable, one line per field), and ``<stem>.npz``, the per-round values at full precision
        as one compressed (rows, columns, rounds) float64 array. `from_json` reads both back.

        The JSON names the array file (``per_round_file``) and its SHA-256 (``per_round_sha256``,
        of the array's little-endian float64 bytes), which `from_json` checks.

        Parameters
        ----------
        path : str or Path
            The JSON file to write; the ``.npz`` goes beside it.

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "result.json"
        >>> result.to_json(path)
        >>> sorted(p.name for p in path.parent.iterdir())
        ['result.json', 'result.npz']
        >>> TournamentResult.from_json(path).mean == result.mean
        True
        """
        path = Path(path)
        rounds_path = path.with_name(path.stem + ROUNDS_SUFFIX)
        array = np.ascontiguousarray(self.per_round_array("raw"), dtype="<f8")
        data = self.to_dict()
        data.pop("per_round")
        data["per_round_file"] = rounds_path.name
        data["per_round_sha256"] = _sha256(array)
        lines = [f" {json.dumps(key)}: {json.dumps(value)}" for key, value in data.items()]
        with open(path, "w") as fh:
            fh.write("{\n" + ",\n".join(lines) + "\n}\n")
        write_rounds(rounds_path, array)

    @classmethod
    def from_json(cls, path: str | Path) -> TournamentResult:
        """Read a result written by `to_json` (the JSON and the ``.npz`` beside it), or one of the
        older single JSON files that hold the per-round values inline.

        Parameters
        ----------
        path : str or Path

        Returns
        -------
        TournamentResult

        Raises
        ------
        OSError, ValueError, KeyError
            For a missing file, a file that is not JSON, JSON that is not a result, or per-round
            values that do not match the SHA-256 the JSON records.

        Examples
        --------
        >>> leduc = TournamentResult.from_json(CACHE_DIRECTORY / "leduc_fixed.json")
        >>> leduc.rounds, leduc.rows[:3]
        (500, ['act_in', 'cf', 'cf_in'])
        """
        path = Path(path)
        with open(path) as fh:
            data = json.load(fh)
        per_round = data.get("per_round")
        if per_round is None:                       # the per-round values live beside the JSON
            array = read_rounds(path.with_name(data.get("per_round_file") or path.stem + ROUNDS_SUFFIX))
            expected = data.get("per_round_sha256")
            if expected and _sha256(array) != expected:
                raise ValueError(f"{path}: the per-round values do not match the SHA-256 the JSON "
                                 f"records; regenerate the run")
            per_round = {r: dict(zip(data["columns"], array[i])) for i, r in enumerate(data["rows"])}
        return cls(data["game"], data["regime"], data["rounds"], data["rows"], data["columns"],
                   per_round, data.get("metadata", {}))

    # ------------------------------------------------------------------ plot
    def heatmap(self, ax: Any = None, units: str | None = None, **kwargs: Any) -> Any:
        """Draw the table as a heatmap (see `labkit.experiments.heatmap`).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Default: a new figure's.
        units : str, optional
            One of `UNITS` (default: the paper's).
        **kwargs
            Passed to `labkit.experiments.heatmap`.

        Returns
        -------
        matplotlib Axes
            What `labkit.experiments.heatmap` returns.

        Examples
        --------
        >>> from labkit.experiments import TournamentResult
        >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
        ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
        ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> _ = result.heatmap()
        """
        from labkit.experiments.plot import heatmap
        return heatmap(self, ax=ax, units=units, **kwargs)


def _label(name: Any) -> str:
    """Variant names in the paper's spelling: "cf_ex+in" -> "CF_EX+IN"."""
    return name.upper() if isinstance(name, str) else str(name)


# the per-round values of <stem>.json live in <stem>.npz: numpy's own format, compressed (about a
# third of the JSON text they replace), readable with numpy alone, in Pyodide as well
ROUNDS_SUFFIX = ".npz"
ROUNDS_KEY = "per_round"
# browser copies of the book install them separately (scripts/build_lite.py)
ROUNDS_DISTRIBUTION = "labkit-marl-efr-rounds"


def _sha256(array):
    import hashlib
    return hashlib.sha256(np.ascontiguousarray(array, dtype="<f8").tobytes()).hexdigest()


def write_rounds(path, array):
    """Write a (rows, columns, rounds) array as ``path`` (.npz, deflated), byte for byte the same
    for the same values (no timestamps), so that regenerating a run changes no file needlessly."""
    import io
    import zipfile
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(array, dtype="<f8"), allow_pickle=False)
    info = zipfile.ZipInfo(ROUNDS_KEY + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(info, buffer.getvalue(), compresslevel=9)


def read_rounds(path):
    """The (rows, columns, rounds) array of a ``.npz`` file written by `write_rounds`."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"the per-round values {path.name} are not installed beside {path.stem}.json. In a "
            f"checkout of the book they are part of labkit/data/efr/; in the browser copy of the "
            f"book install them with %pip install {ROUNDS_DISTRIBUTION}")
    with np.load(path, allow_pickle=False) as archive:
        return archive[ROUNDS_KEY]


# inside the package (labkit.data), so that an installed wheel or a browser kernel has the runs too
CACHE_DIRECTORY = Path(__file__).resolve().parents[1] / "data" / "efr"


def load_cached(name: str, directory: str | Path | None = None) -> TournamentResult:
    """A cached tournament of labkit.data's efr/ folder, e.g. ``load_cached("leduc_fixed")``.

    Parameters
    ----------
    name : str
        ``<game key>_<regime>`` for the nine games of `labkit.experiments.PAPER_GAMES`
        (leduc_fixed, goofspiel4_3p_descending_simultaneous, sheriff_fixed, ...) or
        leduc_fixed_exact; the README.md of labkit/data/efr lists which are cached.
    directory : str or Path, optional
        Another folder of results (default: the package's).

    Returns
    -------
    TournamentResult

    Raises
    ------
    FileNotFoundError
        For a name that is not cached, listing the names that are.

    Examples
    --------
    >>> leduc = load_cached("leduc_fixed")
    >>> round(float(leduc.with_averages("mbb")[-1, -1]), 1)      # Figure E.5's corner: 190.9
    190.9
    """
    directory = Path(directory) if directory is not None else CACHE_DIRECTORY
    path = directory / f"{name}.json"
    if not path.exists():
        known = sorted(p.stem for p in directory.glob("*.json")) if directory.is_dir() else []
        raise FileNotFoundError(f"no cached result {name!r} in {directory}; available: {known or 'none'} "
                                f"(scripts/regenerate_efr_results.py {name} makes it)")
    return TournamentResult.from_json(path)
