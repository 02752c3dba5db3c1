#!/usr/bin/env python
"""Build the JupyterLite site of the chapters and exercises into the book's site (SITE/lite/).

    python scripts/build_lite.py --site _build/html        # after jupyter-book; `make book` calls it
    python scripts/build_lite.py --site _build/html --config _build/config/_config.yml

JupyterLite (``jupyterlite-core`` and ``jupyterlite-pyodide-kernel``) runs Python in the reader's
browser, in Pyodide, with no server. The build runs offline: it copies the JupyterLite app, the
notebooks of chapters/ and exercises/ (with their stored outputs, and the install cell of
scripts/install_cell.py first) and labkit's wheel, which the Pyodide kernel installs with piplite
from the site itself (``lite/pypi/``). The reader's browser fetches the Pyodide runtime and its
numpy, scipy and matplotlib from Pyodide's CDN on first use.

Each chapter and exercise page of the book links to its live copy (book/_ext/lite_links.py):
``lite/notebooks/index.html?path=chapters/NAME.ipynb``.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from build_wheel import build_wheels  # noqa: E402
from install_cell import repository_setting, with_install_cell  # noqa: E402

LITE_FOLDERS = ("chapters", "exercises")      # the solutions stay on the book's pages only
LITE_DIR = "lite"


# what a notebook may import in the browser: Python's standard library, labkit and what it installs
# there (its core dependencies), and the packages the Pyodide kernel provides itself
BROWSER_PACKAGES = {"labkit", "numpy", "scipy", "matplotlib", "ipywidgets", "tqdm", "IPython", "PIL"}
# what WebAssembly cannot do: compile C++, start processes
BROWSER_LIMITS = {
    r"fixed_point\s*=\s*[\"']paper": "compiles the EFR authors' C++ numerics (fixed_point=\"paper\")",
    r"ProcessPool|multiprocessing|subprocess": "starts worker processes",
}


def browser_blockers(nb) -> list:
    """Why a notebook cannot run in the Pyodide kernel (an empty list when it can): imports that
    the browser lacks, C++ compilation, worker processes."""
    import re
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code" and "install-labkit" not in
                     c.get("metadata", {}).get("tags", []))
    reasons = []
    for name in sorted(set(re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", code, re.M))):
        if name not in BROWSER_PACKAGES and name not in sys.stdlib_module_names:
            reasons.append(f"imports {name}, which the browser kernel lacks")
    reasons += [why for pattern, why in BROWSER_LIMITS.items() if re.search(pattern, code)]
    return reasons


def lite_notebooks(root: Path = ROOT) -> list:
    """The notebooks the lite site serves, as paths relative to the repository."""
    return sorted(p.relative_to(root) for folder in LITE_FOLDERS for p in (root / folder).glob("*.ipynb"))


def stage_contents(dest: Path, url: str = "", branch: str = "", root: Path = ROOT) -> list:
    """Copy the lite notebooks into `dest` (same relative paths), each with its install cell."""
    staged = []
    for rel in lite_notebooks(root):
        nb = nbformat.read(root / rel, as_version=4)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(with_install_cell(nb, url, branch), target)
        staged.append(rel)
    return staged


def build(site: Path, config: Path = ROOT / "_config.yml", wheel: Path | None = None) -> Path:
    """Build SITE/lite; returns its folder."""
    out = Path(site).resolve() / LITE_DIR
    url, branch = repository_setting(config)
    with tempfile.TemporaryDirectory(prefix="labkit-lite-") as tmp:
        tmp = Path(tmp)
        if wheel is None:
            wheel = build_wheels(tmp / "dist")["labkit"]
        stage_contents(tmp / "contents", url, branch)
        if out.exists():
            shutil.rmtree(out)
        # --lite-dir: JupyterLite keeps its build database there, never in the repository
        done = subprocess.run([sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(tmp),
                               "--contents", str(tmp / "contents"), "--output-dir", str(out),
                               "--piplite-wheels", str(wheel)],
                              capture_output=True, text=True, cwd=tmp)
        if done.returncode != 0:
            raise RuntimeError(f"jupyter lite build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html",
                        help="the built book (default _build/html); the lite site goes to SITE/lite")
    parser.add_argument("--config", type=Path, default=ROOT / "_config.yml",
                        help="the book config whose repository.url the install cells use")
    parser.add_argument("--wheel", type=Path, default=None, help="labkit's wheel (default: build it)")
    sys.path.insert(0, str(ROOT))
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    if not args.site.is_dir():
        parser.error(f"--site: {args.site} does not exist (build the book first)")
    if not args.config.is_file():
        parser.error(f"--config: no such file {args.config}")
    if args.wheel is not None and not args.wheel.is_file():
        parser.error(f"--wheel: no such file {args.wheel}")
    start = time.perf_counter()
    out = build(args.site, args.config, args.wheel)
    print(f"JupyterLite site: {out} ({len(lite_notebooks())} notebooks, {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
