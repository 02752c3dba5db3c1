#!/usr/bin/env python
"""Give every notebook of the book a first cell that installs labkit where it is missing.

    python scripts/install_cell.py --check            # exit 1 and list the notebooks to fix
    python scripts/install_cell.py --write            # insert or refresh the cell (idempotent)
    python scripts/install_cell.py --write PATH.ipynb ...
    python scripts/install_cell.py --site _build/html --repository URL   # the site's downloads

The cell (id ``install-labkit``, tagged ``remove-cell`` so the website never shows it) does
nothing where ``import labkit`` works, and prints nothing then, so nbval's stored outputs stay
as they are. In a fresh Colab or Binder session it runs ``%pip install`` of the distribution
``labkit-marl`` from the book's repository, the one setting ``repository.url`` of _config.yml
(see scripts/book_config.py); in JupyterLite (Pyodide) it installs the wheel the lite site serves
(scripts/build_lite.py). While the setting is empty the cell raises an error that says how to
install labkit instead of running a command that cannot work.

``--write`` only inserts or replaces that one cell: it never executes a notebook nor touches any
other cell, so it merges cleanly with edits to the rest of the notebook. ``--site DIR`` rewrites
the cell in the built site's copies (``DIR/_sources/**.ipynb``, what "download .ipynb" serves),
so a one-build ``--repository`` override reaches the downloads too.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_FOLDERS = ("chapters", "exercises", "solutions")
CELL_ID = "install-labkit"
TAGS = ["remove-cell", CELL_ID]
DISTRIBUTION = "labkit-marl"

_HEAD = '''\
# Installs labkit where it is missing (Colab, Binder, JupyterLite), else does nothing.
import importlib.util
import sys

if importlib.util.find_spec("labkit") is None:
    if sys.platform == "emscripten":  # JupyterLite: the wheel served beside the book
        %pip install -q {distribution}
    else:
'''
_FROM_REPOSITORY = '''\
        %pip install -q "{distribution} @ git+{url}{branch}"
    importlib.invalidate_caches()  # importable without a restart'''
_NO_REPOSITORY = '''\
        raise ModuleNotFoundError(
            "this notebook needs labkit: install it from a copy of the book's "
            "repository (pip install ./ in its folder, or pip install "
            "labkit_marl-*.whl), then restart the kernel")'''


def repository_setting(config_path: Path = ROOT / "_config.yml") -> tuple[str, str]:
    """(repository.url, repository.branch) of a Jupyter Book config; "" when unset."""
    config = yaml.safe_load(Path(config_path).read_text(encoding="utf-8")) or {}
    repo = config.get("repository") or {}
    return str(repo.get("url") or "").strip().rstrip("/"), str(repo.get("branch") or "").strip()


def cell_source(url: str = "", branch: str = "") -> str:
    """The install cell's code for a repository URL ("" when the book has none)."""
    head = _HEAD.format(distribution=DISTRIBUTION)
    if not url:
        return head + _NO_REPOSITORY
    if not url.startswith("https://") or any(ch in url for ch in " \"'"):
        raise ValueError(f"repository URL {url!r} should look like https://github.com/ORG/REPO")
    return head + _FROM_REPOSITORY.format(distribution=DISTRIBUTION, url=url.rstrip("/"),
                                          branch=f"@{branch}" if branch else "")


def install_cell(url: str = "", branch: str = ""):
    """The install cell as a notebook cell (no outputs, never executed)."""
    cell = nbformat.v4.new_code_cell(cell_source(url, branch))
    cell.id = CELL_ID
    cell.metadata = {"tags": list(TAGS), "editable": False, "deletable": False}
    return cell


def is_install_cell(cell) -> bool:
    return cell.get("id") == CELL_ID or CELL_ID in cell.get("metadata", {}).get("tags", [])


def with_install_cell(nb, url: str = "", branch: str = ""):
    """`nb` with exactly one install cell, first; every other cell is left as it was."""
    others = [c for c in nb.cells if not is_install_cell(c)]
    nb.cells = [install_cell(url, branch)] + others
    return nb


def for_the_book(nb):
    """`nb` with the install cell for the committed repository setting (scripts/build_exercises.py)."""
    return with_install_cell(nb, *repository_setting())


def problem(nb, url: str = "", branch: str = "") -> str | None:
    """Why `nb` lacks the right install cell, or None when it has it."""
    count = sum(is_install_cell(c) for c in nb.cells)
    if count != 1:
        return f"{count} install cells (expected exactly 1)"
    first = nb.cells[0]
    if not is_install_cell(first):
        return "the install cell is not the first cell"
    expected = install_cell(url, branch)
    if first.cell_type != "code" or first.source != expected.source:
        return "the install cell's code is stale (the repository setting changed?)"
    if first.metadata.get("tags") != TAGS:
        return f"the install cell's tags are {first.metadata.get('tags')}, expected {TAGS}"
    if first.get("outputs"):
        return "the install cell has stored outputs (it must print nothing where labkit is installed)"
    return None


def book_notebooks(root: Path = ROOT) -> list[Path]:
    """Every notebook of the book: chapters/, exercises/ and solutions/."""
    return sorted(p for folder in NOTEBOOK_FOLDERS for p in (root / folder).glob("*.ipynb"))


def _read(path):
    return nbformat.read(path, as_version=nbformat.NO_CONVERT)


def write(paths, url="", branch="") -> list[Path]:
    """Insert or refresh the install cell in each notebook; returns the files that changed."""
    changed = []
    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
        new = nbformat.writes(with_install_cell(nb, url, branch)) + "\n"
        if new != text:
            Path(path).write_text(new, encoding="utf-8")
            changed.append(Path(path))
    return changed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="report notebooks without the right cell")
    action.add_argument("--write", action="store_true", help="insert or refresh the cell")
    action.add_argument("--site", metavar="DIR", type=Path,
                        help="rewrite the cell in a built site's downloadable notebooks")
    parser.add_argument("--repository", metavar="URL",
                        help="use this URL instead of repository.url of _config.yml")
    parser.add_argument("--config", metavar="FILE", type=Path, default=ROOT / "_config.yml",
                        help="the Jupyter Book config to read repository.url from")
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all of the book's)")
    sys.path.insert(0, str(ROOT))
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    if not args.config.is_file():
        parser.error(f"--config: no such file {args.config}")
    url, branch = repository_setting(args.config)
    if args.repository is not None:
        url = args.repository.strip().rstrip("/")
    try:
        cell_source(url, branch)
    except ValueError as err:
        parser.error(f"--repository: {err}")
    if args.site is not None:
        if not (args.site / "_sources").is_dir():
            parser.error(f"--site: {args.site} has no _sources folder (build the book first)")
        paths = sorted(args.site.glob("_sources/**/*.ipynb"))
        paths = [p for p in paths if any(is_install_cell(c) for c in _read(p).cells)]
        changed = write(paths, url, branch)
        print(f"{len(changed)} of {len(paths)} downloadable notebooks updated")
        return 0
    paths = args.paths or book_notebooks()
    missing = [p for p in paths if not p.is_file()]
    if missing:
        parser.error("no such notebook: " + ", ".join(map(str, missing)))
    if args.write:
        changed = write(paths, url, branch)
        print(f"{len(changed)} of {len(paths)} notebooks updated")
        return 0
    problems = [(p, problem(_read(p), url, branch)) for p in paths]
    problems = [(p, why) for p, why in problems if why]
    for path, why in problems:
        print(f"{path}: {why}")
    if problems:
        print("fix with: python scripts/install_cell.py --write", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
