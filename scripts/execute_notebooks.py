#!/usr/bin/env python
"""Re-execute the book's notebooks in place: the only way their stored outputs are made.

    .venv/bin/python scripts/execute_notebooks.py                 # chapters/*.ipynb and solutions/*.ipynb
    .venv/bin/python scripts/execute_notebooks.py chapters/01_many_learners.ipynb exercises/
    .venv/bin/python scripts/execute_notebooks.py --jobs 2        # two notebooks at a time

Each notebook runs top to bottom in a fresh kernel of *this* Python (the project's .venv), with its
own folder as the working directory, so it sees the same files as in JupyterLab. The run is made
deterministic where the notebook cannot do it itself: PYTHONHASHSEED=0, a fixed matplotlib backend
and no timing metadata, stream outputs merged, and widget model ids derived from the notebook's name
instead of random ones (see KERNEL_STARTUP). The widget state is stored in the notebook's metadata (nbclient does this),
which is what lets the published site show the widgets; the script checks that every widget view in
an output has its state stored. A cell tagged ``raises-exception`` may raise; any other error stops
that notebook, leaves the file untouched, and makes the script exit with status 1.

The kernel's replies are awaited in slices of a quarter second (labkit.kernel_polling): a reply
whose ZeroMQ wake-up was lost is then picked up at the next slice instead of at the end of the
cell's timeout, which made chapter 2 appear to hang after its `interact` cell.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from labkit.kernel_polling import SlicedPollingMixin

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FOLDERS = ("chapters", "solutions")
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class BookClient(SlicedPollingMixin, NotebookClient):
    """nbclient's NotebookClient, waiting for kernel messages in slices (see labkit.kernel_polling)."""


def notebook_paths(args):
    """Expand files and folders into a sorted list of .ipynb paths (folders: their *.ipynb, not recursive)."""
    if not args:
        args = [ROOT / folder for folder in DEFAULT_FOLDERS if (ROOT / folder).is_dir()]
    paths = []
    for arg in map(Path, args):
        if arg.is_dir():
            paths.extend(sorted(p for p in arg.glob("*.ipynb") if not p.name.startswith(".")))
        elif arg.suffix == ".ipynb" and arg.is_file():
            paths.append(arg)
        else:
            raise SystemExit(f"not a notebook or folder: {arg}")
    return paths


def missing_widget_state(nb):
    """Model ids shown in an output whose state is not stored in the notebook's metadata."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    missing = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if view and view.get("model_id") not in state:
                missing.append(view.get("model_id"))
    return missing


def execute(path, timeout=600):
    """Execute one notebook and write it back. Returns (path, seconds, error message or None)."""
    path = Path(path).resolve()
    start = time.perf_counter()
    nb = nbformat.read(path, as_version=4)
    # a fixed kernelspec: nbval runs with --nbval-current-env anyway, and the file should not
    # change because someone else's machine names its kernel differently
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    client = BookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
        record_timing=False, store_widget_state=True, allow_errors=False)
    with tempfile.TemporaryDirectory(prefix="labkit-ipython-") as ipython_dir:
        try:
            client.execute(env=kernel_environment(path.name, Path(ipython_dir)))
        except Exception as err:                  # CellExecutionError, timeouts, dead kernels
            return path, time.perf_counter() - start, f"{type(err).__name__}: {err}"
    missing = missing_widget_state(nb)
    if missing:
        return path, time.perf_counter() - start, f"widget views without stored state: {missing}"
    # language_info carries the local Python patch version; keep the major.minor only
    info = nb.metadata.get("language_info", {})
    if "version" in info:
        info["version"] = ".".join(info["version"].split(".")[:2])
    merge_streams(nb)
    nbformat.write(nb, path)
    return path, time.perf_counter() - start, None


# Runs in every kernel before the first cell (an IPython startup file): widgets get model ids derived
# from the notebook's name and their creation order instead of random ones, so re-executing an
# unchanged notebook rewrites the same bytes and a diff shows only what really changed.
KERNEL_STARTUP = """
def _labkit_stable_widget_ids():
    import itertools, os, uuid
    try:
        import ipywidgets
    except ImportError:
        return
    name = os.environ.get("LABKIT_NOTEBOOK", "notebook")
    counter = itertools.count()
    original_open = ipywidgets.Widget.open

    def open(self):
        if self.comm is None and self._model_id is None:
            self._model_id = uuid.uuid5(uuid.NAMESPACE_URL, f"labkit-book/{name}/{next(counter)}").hex
        original_open(self)

    ipywidgets.Widget.open = open

_labkit_stable_widget_ids()
del _labkit_stable_widget_ids
"""


def kernel_environment(notebook_name, ipython_dir):
    """The kernel's environment: ours, plus fixed hashes, a fixed backend, one thread per BLAS (two
    notebooks may run side by side on two cores), and an IPython profile whose startup file makes
    widget ids reproducible."""
    startup = ipython_dir / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-stable-widget-ids.py").write_text(KERNEL_STARTUP)
    return dict(os.environ, IPYTHONDIR=str(ipython_dir), LABKIT_NOTEBOOK=notebook_name, PYTHONHASHSEED="0",
                MPLBACKEND="module://matplotlib_inline.backend_inline", OMP_NUM_THREADS="1",
                OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYDEVD_DISABLE_FILE_VALIDATION="1")


def merge_streams(nb):
    """Join consecutive stdout (or stderr) outputs of a cell: how a print is split depends on timing."""
    for cell in nb.cells:
        merged = []
        for out in cell.get("outputs", []):
            if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == out.name):
                merged[-1].text += out.text
            else:
                merged.append(out)
        if cell.cell_type == "code":
            cell.outputs = merged


def main(argv=None):
    from labkit._cli import add_version, at_least
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="notebooks or folders (default: chapters/ and solutions/)")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="notebooks executed at the same time")
    parser.add_argument("--timeout", type=at_least(1), default=600, help="seconds allowed per cell")
    add_version(parser)
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")

    paths = notebook_paths(args.paths)
    if not paths:
        print("no notebooks found")
        return 0
    total = time.perf_counter()
    failed = 0
    timeouts = [args.timeout] * len(paths)
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) if args.jobs > 1 else None
    with pool or contextlib.nullcontext():
        for path, seconds, error in (pool.map if pool else map)(execute, paths, timeouts):
            name = os.path.relpath(path, ROOT)
            if error:
                failed += 1
                print(f"FAILED  {name}  ({seconds:.1f} s)\n{error}", file=sys.stderr)
            else:
                print(f"ok      {name}  ({seconds:.1f} s)")
    print(f"{len(paths) - failed} of {len(paths)} notebooks executed in {time.perf_counter() - total:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
