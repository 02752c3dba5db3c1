"""The cached results of labkit's long runs, shipped inside the package.

Some of the book's computations take minutes to hours (the EFR tournaments of chapter 6, the PSRO
and Monte Carlo CFR runs of chapters 4 and 5, the trained networks of labkit.deep, the Lab 15
companion runs). Their results are stored here, beside the code that makes them, so that a notebook
reads them the same way in a repository checkout, from an installed wheel, in Colab, Binder or a
browser kernel: through `importlib.resources`, never through a path relative to the notebook.

Folders (each has a README or a regeneration script that says how it was made):

- ``book/``: chapters 4 and 5 (``scripts/regenerate_book_data.py``);
- ``deep/``: labkit.deep's training curves (``scripts/regenerate_deep.py``);
- ``efr/``: the EFR tournaments of the paper's nine games (``scripts/regenerate_efr_results.py``),
  each as ``<run>.json`` (description and means) beside ``<run>.npz`` (the per-round values,
  compressed), read together by ``labkit.experiments.load_cached(run)``;
- ``lab15/``: the Lab 15 companion runs (``scripts/regenerate_lab15.py``).

Examples
--------
>>> import labkit as lk
>>> sorted(p.name for p in lk.data.path("lab15").iterdir())[:2]
['README.md', 'mccfr.csv']
>>> rows = lk.data.read_csv("book", "ch05_psro_leduc.csv")
"""
import csv
import io
import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

FOLDERS = ("book", "deep", "efr", "lab15")


def path(*parts: str) -> Traversable:
    """The stored file or folder ``labkit/data/<parts...>``, as an `importlib.resources` Traversable.

    For an installed package on disk this is a `pathlib.Path`; it supports ``/``, ``read_text`` and
    ``open`` in every case.

    Parameters
    ----------
    *parts : str
        The folder (one of `FOLDERS`), then the names below it.

    Returns
    -------
    importlib.resources.abc.Traversable

    Raises
    ------
    ValueError
        If the first part is not one of `FOLDERS`.
    FileNotFoundError
        For a missing file, naming what the folder holds.

    Examples
    --------
    >>> path("deep", "teams.csv").name
    'teams.csv'
    >>> path("deep", "team.csv")                   # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    FileNotFoundError: labkit.data has no deep/team.csv; deep/ holds [...'teams.csv', 'teams.json']
    """
    if not parts or parts[0] not in FOLDERS:
        raise ValueError(f"labkit.data.path: the first part must be one of {FOLDERS}, got {parts[:1]}")
    target = resources.files(__name__).joinpath(*parts)
    if not target.is_file() and not target.is_dir():
        folder = resources.files(__name__).joinpath(parts[0])
        names = sorted(p.name for p in folder.iterdir())
        raise FileNotFoundError(f"labkit.data has no {'/'.join(parts)}; {parts[0]}/ holds {names}")
    return target


def read_text(*parts: str) -> str:
    """The text of a stored file (UTF-8).

    Parameters
    ----------
    *parts : str
        As `path`.

    Returns
    -------
    str

    Raises
    ------
    ValueError, FileNotFoundError
        As `path`.

    Examples
    --------
    >>> read_text("deep", "README.md").splitlines()[0]
    '# Cached runs of labkit.deep'
    """
    return path(*parts).read_text(encoding="utf-8")


def read_json(*parts: str) -> Any:
    """A stored JSON file, parsed.

    Parameters
    ----------
    *parts : str
        As `path`.

    Returns
    -------
    dict or list

    Raises
    ------
    ValueError, FileNotFoundError
        As `path` (a ValueError also for a file that is not JSON).

    Examples
    --------
    >>> read_json("deep", "deep_cfr_kuhn.json")["seeds"]
    [0, 1, 2]
    """
    return json.loads(read_text(*parts))


def read_csv(*parts: str) -> list[dict[str, str]]:
    """A stored CSV file as a list of dicts, one per row (the values as strings, as `csv` reads them).

    Parameters
    ----------
    *parts : str
        As `path`.

    Returns
    -------
    list of dict of str to str

    Raises
    ------
    ValueError, FileNotFoundError
        As `path`.

    Examples
    --------
    >>> read_csv("deep", "deep_cfr_kuhn.csv")[0]["method"]
    'Deep CFR'
    """
    return list(csv.DictReader(io.StringIO(read_text(*parts), newline="")))
