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
install labkit instead of running a command that cannot work. When ``%pip`` fails, the cell
raises an error saying so (instead of letting the next cell fail on a missing module); when the
install upgraded a package the kernel had already imported (ipywidgets in Colab), it stops and
asks for a restart.

The site's downloads (``--site``) install from the repository when there is one, else from the
wheels the site itself hosts in lite/pypi/ when ``html.baseurl`` (the site's address) is set,
else stop with a message naming the wheel and the page that links it.

``--write`` only inserts or replaces that one cell: it never executes a notebook nor touches any
other cell, so it merges cleanly with edits to the rest of the notebook. ``--site DIR`` rewrites
the cell in the built site's copies (``DIR/_sources/**.ipynb``, what "download .ipynb" serves),
so a one-build ``--repository`` override reaches the downloads too.
"""
from __future__ import annotations

import argparse
import re
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
        %pip install -q {browser}
    else:
'''
# the committed notebooks of a book without a repository setting: labkit comes from the reader's copy
_NO_REPOSITORY = '''\
        raise ModuleNotFoundError(
            "this notebook needs labkit: install it from a copy of the book's "
            "repository (pip install ./ in its folder, or pip install "
            "labkit_marl-*.whl), then restart the kernel")'''
# a download from a site that knows no address for itself: say where the site keeps the wheel
_FROM_THE_SITE = '''\
        raise ModuleNotFoundError(
            "this notebook needs labkit. The book's website hosts it: download "
{wheels}
            "from its page 'Running the notebooks' (book/running.html), "
            "pip install {them}, then restart the kernel")'''
# installs from the repository or the site's wheels; stops with a clear error when that fails, and
# asks for a restart when the install replaced a package the kernel had already imported (a Colab
# kernel may hold its own older ipywidgets, which labkit's widgets cannot use)
_INSTALL = '''\
        from importlib.metadata import version

        before = {{name: version(name) for name in ("ipywidgets", "numpy", "scipy",
                                                   "matplotlib") if name in sys.modules}}
        %pip install -q {requirements}
        importlib.invalidate_caches()
        if importlib.util.find_spec("labkit") is None:
            raise ModuleNotFoundError(
                "installing labkit failed (pip's messages above say why; it needs "
                "the network). Otherwise: {otherwise}")
        replaced = [name for name, old in before.items() if version(name) != old]
        if replaced:  # this kernel still runs the versions it imported first
            raise RuntimeError(
                "labkit is installed; it also upgraded " + ", ".join(replaced)
                + ", which this kernel had already loaded. Restart the kernel "
                "(Colab: Runtime > Restart session), then run the notebook again.")'''
_OTHERWISE_REPOSITORY = "pip install ./ in a copy of the repository"
_OTHERWISE_WHEEL = "download the wheels above, pip install them"


def wheel_name(distribution: str = DISTRIBUTION, version: str | None = None) -> str:
    """The file name of a pure-Python wheel of one of labkit's distributions, e.g.
    labkit_marl-0.2.0-py3-none-any.whl (the version of pyproject.toml by default)."""
    if version is None:
        project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
        version = re.search(r'^version\s*=\s*"([^"]+)"', project, re.M).group(1)
    return f"{distribution.replace('-', '_')}-{version}-py3-none-any.whl"


def repository_setting(config_path: Path = ROOT / "_config.yml") -> tuple[str, str]:
    """(repository.url, repository.branch) of a Jupyter Book config; "" when unset."""
    config = yaml.safe_load(Path(config_path).read_text(encoding="utf-8")) or {}
    repo = config.get("repository") or {}
    return str(repo.get("url") or "").strip().rstrip("/"), str(repo.get("branch") or "").strip()


def site_address(config_path: Path = ROOT / "_config.yml") -> str:
    """html.baseurl of a Jupyter Book config, the published site's address ("" when unset)."""
    config = yaml.safe_load(Path(config_path).read_text(encoding="utf-8")) or {}
    url = str((config.get("html") or {}).get("baseurl") or "").strip()
    return url.rstrip("/") + "/" if url else ""


# pages that read the EFR tournaments' per-round values (labkit.data's efr/ folder): outside a
# checkout, these also need the separate distribution that carries those values
_READS_EFR_ROUNDS = re.compile(r"""lk\.data\.path\(\s*["']efr["']|load_cached|TournamentResult""")
ROUNDS_DISTRIBUTION = "labkit-marl-efr-rounds"


def reads_efr_rounds(nb) -> bool:
    return any(c.cell_type == "code" and _READS_EFR_ROUNDS.search(c.source) for c in nb.cells)


def download_options(nb, url: str, site_url: str) -> dict:
    """How the site's downloadable copy of `nb` installs labkit: from the repository when the book
    has one, else from the wheels the site hosts (lite/pypi/) when it knows its own address, else
    with a message that says where the wheel is."""
    extras = [ROUNDS_DISTRIBUTION] if reads_efr_rounds(nb) else []
    if url:
        return {}
    if site_url:
        return {"wheels": [f"{site_url}lite/pypi/{wheel_name(name)}" for name in [DISTRIBUTION, *extras]]}
    return {"site_hint": True, "extras": extras}


def cell_source(url: str = "", branch: str = "", *, wheels=(), extras=(), site_hint: bool = False) -> str:
    """The install cell's code.

    Parameters
    ----------
    url, branch : str
        The book's repository (repository.url and .branch of _config.yml); "" when it has none.
    wheels : sequence of str
        Without a repository, URLs of the wheels to install (the site's own, for its downloads).
    extras : sequence of str
        More distributions the notebook needs in the browser, besides labkit (the EFR per-round
        values for the pages that read them).
    site_hint : bool
        Without a repository or wheel URLs: point at the wheel on the book's website (a
        download) instead of the reader's copy of the repository (a committed notebook).
    """
    head = _HEAD.format(browser=" ".join([DISTRIBUTION, *extras]))
    if url:
        if not url.startswith("https://") or any(ch in url for ch in " \"'"):
            raise ValueError(f"repository URL {url!r} should look like https://github.com/ORG/REPO")
        requirement = f'"{DISTRIBUTION} @ git+{url.rstrip("/")}{f"@{branch}" if branch else ""}"'
        return head + _INSTALL.format(requirements=requirement, otherwise=_OTHERWISE_REPOSITORY)
    if wheels:
        for wheel in wheels:
            if not wheel.startswith("https://") or any(ch in wheel for ch in " \"'"):
                raise ValueError(f"wheel URL {wheel!r} should look like https://SITE/lite/pypi/NAME.whl")
        return head + _INSTALL.format(requirements=" ".join(wheels), otherwise=_OTHERWISE_WHEEL)
    if site_hint:
        names = [wheel_name(name) for name in [DISTRIBUTION, *extras]]
        lines = [f'            "{name}{" and" if k + 1 < len(names) else ""} "' for k, name in enumerate(names)]
        return head + _FROM_THE_SITE.format(wheels="\n".join(lines), them="them" if extras else "it")
    return head + _NO_REPOSITORY


def install_cell(url: str = "", branch: str = "", **options):
    """The install cell as a notebook cell (no outputs, never executed); `options` as for
    `cell_source`."""
    cell = nbformat.v4.new_code_cell(cell_source(url, branch, **options))
    cell.id = CELL_ID
    cell.metadata = {"tags": list(TAGS), "editable": False, "deletable": False}
    return cell


def is_install_cell(cell) -> bool:
    return cell.get("id") == CELL_ID or CELL_ID in cell.get("metadata", {}).get("tags", [])


def with_install_cell(nb, url: str = "", branch: str = "", **options):
    """`nb` with exactly one install cell, first; every other cell is left as it was."""
    others = [c for c in nb.cells if not is_install_cell(c)]
    nb.cells = [install_cell(url, branch, **options)] + others
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


def write(paths, url="", branch="", **options) -> list[Path]:
    """Insert or refresh the install cell in each notebook; returns the files that changed."""
    changed = []
    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
        new = nbformat.writes(with_install_cell(nb, url, branch, **options)) + "\n"
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
        site_url = site_address(args.config)
        changed = [p for p in paths if write([p], url, branch, **download_options(_read(p), url, site_url))]
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
