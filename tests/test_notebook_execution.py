"""Stress test: chapter 2 executes through scripts/execute_notebooks.py twenty times, no cell hangs.

Chapter 2's `interact` cell used to stall some executions for the whole per-cell timeout: the
kernel's reply was already in the client's socket, but its wake-up had been spent by the comm_msg
that nbclient's Output-widget mimic sends (see labkit/kernel_polling.py and
tests/test_kernel_polling.py). Each run here executes the chapter's cells up to and including
that cell (the later cells only add minutes, not chances to stall: none uses an Output widget) in
a fresh kernel, and every cell must finish far below its timeout.
"""
import importlib.util
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "02_learning_dynamics.ipynb"
RUNS = 20
CELL_TIMEOUT = 240          # seconds nbclient allows a cell; a lost wake-up used to last all of it
FAR_BELOW = CELL_TIMEOUT / 4


def _executor():
    spec = importlib.util.spec_from_file_location("execute_notebooks_under_test",
                                                  ROOT / "scripts" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _up_to_interact(folder):
    """A copy of chapter 2 that ends with its `widgets.interact` cell, in `folder`."""
    nb = nbformat.read(CHAPTER, as_version=4)
    last = next(i for i, cell in enumerate(nb.cells)
                if cell.cell_type == "code" and "widgets.interact(" in cell.source)
    nb.cells = nb.cells[:last + 1]
    folder = folder / "chapters"
    folder.mkdir()
    path = folder / CHAPTER.name
    nbformat.write(nb, path)
    return path, last


@pytest.mark.slow
def test_chapter_2_executes_twenty_times_without_a_stall(tmp_path, monkeypatch):
    executor = _executor()
    durations = []

    class TimedClient(executor.BookClient):
        async def async_execute_cell(self, cell, cell_index, *args, **kwargs):
            start = time.monotonic()
            try:
                return await super().async_execute_cell(cell, cell_index, *args, **kwargs)
            finally:
                durations[-1][cell_index] = time.monotonic() - start

    monkeypatch.setattr(executor, "BookClient", TimedClient)
    path, interact_cell = _up_to_interact(tmp_path)
    for run in range(RUNS):
        durations.append({})
        _, seconds, error = executor.execute(path, timeout=CELL_TIMEOUT)
        assert error is None, f"run {run + 1}: {error}"
        assert interact_cell in durations[-1]
        slowest = max(durations[-1], key=durations[-1].get)
        assert durations[-1][slowest] < FAR_BELOW, (
            f"run {run + 1}: cell {slowest} took {durations[-1][slowest]:.1f} s "
            f"of its {CELL_TIMEOUT} s (the whole run {seconds:.1f} s)")
    executed = nbformat.read(path, as_version=4)
    views = [out for out in executed.cells[interact_cell].outputs
             if executor.WIDGET_VIEW in out.get("data", {})]
    assert views, "the interact cell shows no widget"
