#!/usr/bin/env python
"""Build the JupyterLite site of the chapters and exercises into the book's site (SITE/lite/).

    python scripts/build_lite.py --site _build/html        # after jupyter-book; `make book` calls it
    python scripts/build_lite.py --site _build/html --config _build/config/_config.yml

JupyterLite (``jupyterlite-core`` and ``jupyterlite-pyodide-kernel``) runs Python in the reader's
browser, in Pyodide, with no server. The build runs offline: it copies the JupyterLite app (with
the prebuilt extensions installed here: the widgets, jupyterlab-myst), the notebooks of chapters/
and exercises/ (with their stored outputs, their Markdown in plain Jupyter Markdown by
scripts/plain_markdown.py, and the install cell of scripts/install_cell.py first) and two wheels,
which the Pyodide kernel installs with piplite from the site itself (``lite/pypi/``):

- labkit's, without the EFR tournaments' per-round values and heatmaps (at most 2 MB: every
  reader downloads it);
- ``labkit-marl-efr-rounds``, those per-round values (``labkit/data/efr/*.npz``), installed only
  by the pages that read them (chapter 6 and the appendix).

The reader's browser fetches the Pyodide runtime and its numpy, scipy and matplotlib from
Pyodide's CDN on first use. When it cannot (offline, or the CDN is blocked), a message on the page
says what failed and how to run the notebook otherwise (``labkit-runtime-check.js``).

Each chapter and exercise page of the book links to its live copy (book/_ext/lite_links.py):
``lite/notebooks/index.html?path=chapters/NAME.ipynb``.
"""
from __future__ import annotations

import argparse
import json
import re
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
from install_cell import (ROUNDS_DISTRIBUTION, reads_efr_rounds, repository_setting,  # noqa: E402
                          wheel_name, with_install_cell)
from plain_markdown import docname_of, load_book, plain_notebook  # noqa: E402

LITE_FOLDERS = ("chapters", "exercises")      # the solutions stay on the book's pages only
LITE_DIR = "lite"
# what the browser's labkit wheel leaves out: the per-round values (their own wheel, for the pages
# that read them) and the heatmap pictures (the book draws its own)
BROWSER_LEAVES_OUT = ("labkit/data/efr/*.npz", "labkit/data/efr/*.png")
ROUNDS_FILES = "labkit/data/efr/*.npz"
# the app pages that start a kernel get the runtime check
KERNEL_PAGES = ("lab", "notebooks", "repl", "consoles")
RUNTIME_CHECK = "labkit-runtime-check.js"
PYODIDE_URL = re.compile(r"https://[\w.-]+/pyodide/[\w.-]+/full/pyodide\.m?js")


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


def stage_contents(dest: Path, url: str = "", branch: str = "", root: Path = ROOT, book=None) -> list:
    """Copy the lite notebooks into `dest` (same relative paths), each with its install cell (which
    also installs the EFR per-round values where the page reads them) and plain Markdown."""
    book = book or load_book(root)
    staged = []
    for rel in lite_notebooks(root):
        nb = nbformat.read(root / rel, as_version=4)
        extras = [ROUNDS_DISTRIBUTION] if reads_efr_rounds(nb) else []
        nb = plain_notebook(with_install_cell(nb, url, branch, extras=extras), book, docname_of(rel), "keep")
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        staged.append(rel)
    return staged


def rounds_wheel(out: Path, version: str, root: Path = ROOT) -> Path:
    """A wheel of the EFR per-round files alone (labkit/data/efr/*.npz, installed beside labkit's
    own files), written directly: a zip with the files, METADATA, WHEEL and RECORD."""
    import base64
    import hashlib
    import zipfile
    name = ROUNDS_DISTRIBUTION.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.glob(ROUNDS_FILES))}
    files[f"{info}/METADATA"] = (f"Metadata-Version: 2.1\nName: {ROUNDS_DISTRIBUTION}\nVersion: {version}\n"
                                 "Summary: The per-round values of labkit's cached EFR tournaments\n"
                                 f"Requires-Dist: labkit-marl\n").encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: labkit build_lite\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
              f"{len(data)}" for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = Path(out) / wheel_name(ROUNDS_DISTRIBUTION, version)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in files.items():       # .npz is compressed already: stored as it is
            archive.writestr(zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0)), data,
                             compress_type=zipfile.ZIP_STORED if member.endswith(".npz") else zipfile.ZIP_DEFLATED)
    return path


def browser_wheels(out: Path) -> list:
    """[labkit's wheel for the browser, the EFR per-round wheel], built into `out`."""
    labkit = build_wheels(Path(out) / "labkit", leave_out=BROWSER_LEAVES_OUT)["labkit"]
    version = labkit.name.split("-")[1]
    return [labkit, rounds_wheel(Path(out) / "rounds", version)]


def pyodide_url(lite: Path) -> str:
    """The address the kernel loads Pyodide from: the lite config's setting, else the default
    compiled into the Pyodide kernel extension."""
    config = json.loads((lite / "jupyter-lite.json").read_text(encoding="utf-8"))["jupyter-config-data"]
    settings = config.get("litePluginSettings", {}).get("@jupyterlite/pyodide-kernel-extension:kernel", {})
    if settings.get("pyodideUrl"):
        return settings["pyodideUrl"]
    for script in sorted((lite / "extensions" / "@jupyterlite" / "pyodide-kernel-extension").rglob("*.js")):
        found = PYODIDE_URL.search(script.read_text(encoding="utf-8", errors="replace"))
        if found:
            return found.group(0)
    return ""


def add_runtime_check(lite: Path) -> list:
    """Add the script that explains a failed Pyodide download to every app page that starts a
    kernel; returns the pages changed."""
    shutil.copy(ROOT / "scripts" / "lite" / RUNTIME_CHECK, lite / RUNTIME_CHECK)
    url = pyodide_url(lite)
    tag = (f'<script src="../{RUNTIME_CHECK}" data-pyodide-url="{url}" '
           f'data-running-page="../../book/running.html"></script>')
    changed = []
    for page in KERNEL_PAGES:
        index = lite / page / "index.html"
        if index.is_file():
            html = index.read_text(encoding="utf-8")
            if RUNTIME_CHECK not in html:
                index.write_text(html.replace("</body>", tag + "\n</body>", 1), encoding="utf-8")
                changed.append(index)
    return changed


def build(site: Path, config: Path = ROOT / "_config.yml", wheels=None) -> Path:
    """Build SITE/lite; returns its folder."""
    out = Path(site).resolve() / LITE_DIR
    url, branch = repository_setting(config)
    book = load_book(ROOT, config)
    with tempfile.TemporaryDirectory(prefix="labkit-lite-") as tmp:
        tmp = Path(tmp)
        if wheels is None:
            wheels = browser_wheels(tmp / "dist")
        stage_contents(tmp / "contents", url, branch, book=book)
        if out.exists():
            shutil.rmtree(out)
        # --lite-dir: JupyterLite keeps its build database there, never in the repository
        command = [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(tmp),
                   "--contents", str(tmp / "contents"), "--output-dir", str(out)]
        for wheel in wheels:
            command += ["--piplite-wheels", str(wheel)]
        done = subprocess.run(command, capture_output=True, text=True, cwd=tmp)
        if done.returncode != 0:
            raise RuntimeError(f"jupyter lite build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    add_runtime_check(out)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html",
                        help="the built book (default _build/html); the lite site goes to SITE/lite")
    parser.add_argument("--config", type=Path, default=ROOT / "_config.yml",
                        help="the book config whose repository.url the install cells use")
    parser.add_argument("--wheel", type=Path, action="append", default=None,
                        help="a wheel to serve (repeat it; default: build labkit's browser wheel "
                             "and the EFR per-round wheel)")
    sys.path.insert(0, str(ROOT))
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    if not args.site.is_dir():
        parser.error(f"--site: {args.site} does not exist (build the book first)")
    if not args.config.is_file():
        parser.error(f"--config: no such file {args.config}")
    missing = [str(w) for w in args.wheel or [] if not w.is_file()]
    if missing:
        parser.error(f"--wheel: no such file {', '.join(missing)}")
    start = time.perf_counter()
    out = build(args.site, args.config, args.wheel)
    print(f"JupyterLite site: {out} ({len(lite_notebooks())} notebooks, {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
