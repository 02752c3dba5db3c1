"""Code in the exercise and solution notebooks fits in 88 columns.

The notebooks are built from the instructor sources (scripts/build_exercises.py), so both are
checked: the committed notebooks, and what the sources would write now (a source edited without
a rebuild is caught here too).
"""
from pathlib import Path

import nbformat
import pytest

from _grading_support import EXERCISES

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 88
NOTEBOOKS = sorted((ROOT / "exercises").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb"))


def wide_lines(nb):
    """(cell number, width, line) of every code line wider than `WIDTH`."""
    return [(k, len(line), line) for k, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for line in cell.source.splitlines() if len(line) > WIDTH]


def test_the_width_check_sees_a_wide_line():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1\n" + "y" * 89),
                                         nbformat.v4.new_markdown_cell("z" * 200)])
    assert wide_lines(nb) == [(0, 89, "y" * 89)]


def test_every_exercise_and_solution_notebook_is_there():
    names = {p.name for p in NOTEBOOKS}
    for ex in EXERCISES.values():
        assert {ex.filename} <= names and (ROOT / "exercises" / ex.filename).exists()
        assert (ROOT / "solutions" / ex.filename).exists()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_code_lines_fit_in_88_columns(path):
    assert wide_lines(nbformat.read(path, as_version=4)) == []


@pytest.mark.parametrize("number", list(EXERCISES))
def test_the_sources_write_code_that_fits(number):
    for solution in (False, True):
        assert wide_lines(EXERCISES[number].notebook(solution=solution)) == [], (number, solution)
