"""Stress test: chapter 2's `interact` cell executes twenty times through
scripts/execute_notebooks.py, and no cell hangs.

That cell used to stall some executions for the whole per-cell timeout: the kernel's reply was
already in the client's socket, but its wake-up had been spent by the comm_msg that nbclient's
Output-widget mimic sends (see labkit/kernel_polling.py and tests/test_kernel_polling.py). The race
is run anew at every execution of the cell, so the test executes, in each of a few fresh kernels,
the chapter's install and import cells, the cells that define what the `interact` cell draws, and
then that cell several times; every cell must finish far below its timeout. The chapter's other
cells only add minutes, not chances to stall: none of them uses a widget or a comm.
"""
import copy
import importlib.util
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "02_learning_dynamics.ipynb"
KERNELS = 4                 # fresh kernels, each executing ...
REPEATS = 5                 # ... the interact cell this many times: twenty executions in all
CELL_TIMEOUT = 240          # seconds nbclient allows a cell; a lost wake-up used to last all of it
FAR_BELOW = CELL_TIMEOUT / 4


def _executor():
    spec = importlib.util.spec_from_file_location("execute_notebooks_under_test",
                                                  ROOT / "scripts" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# what the `interact` cell needs, besides the first two code cells (the install and import cells)
NEEDED = ("def logit_qre(", "def run_figure(")


def _up_to_interact(folder):
    """A copy of chapter 2 in `folder`, with only the code cells its `widgets.interact` cell
    needs, then that cell `REPEATS` times; and the indices of those copies."""
    nb = nbformat.read(CHAPTER, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    last = next(i for i, cell in enumerate(code) if "widgets.interact(" in cell.source)
    defining = [next(cell for cell in code if marker in cell.source) for marker in NEEDED]
    keep = code[:2] + [cell for cell in code[2:last] if any(cell is d for d in defining)]
    nb.cells = keep + [copy.deepcopy(code[last]) for _ in range(REPEATS)]
    folder = folder / "chapters"
    folder.mkdir()
    path = folder / CHAPTER.name
    nbformat.write(nb, path)
    return path, list(range(len(keep), len(nb.cells)))


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
    path, interact_cells = _up_to_interact(tmp_path)
    for run in range(KERNELS):
        durations.append({})
        _, seconds, error = executor.execute(path, timeout=CELL_TIMEOUT)
        assert error is None, f"kernel {run + 1}: {error}"
        assert set(interact_cells) <= set(durations[-1])
        slowest = max(durations[-1], key=durations[-1].get)
        assert durations[-1][slowest] < FAR_BELOW, (
            f"kernel {run + 1}: cell {slowest} took {durations[-1][slowest]:.1f} s "
            f"of its {CELL_TIMEOUT} s (the whole run {seconds:.1f} s)")
    executed = nbformat.read(path, as_version=4)
    for index in interact_cells:
        views = [out for out in executed.cells[index].outputs
                 if executor.WIDGET_VIEW in out.get("data", {})]
        assert views, f"the interact cell (copy at {index}) shows no widget"
