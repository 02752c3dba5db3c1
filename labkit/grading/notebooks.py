"""Exercise notebooks: built from one Python definition per exercise, and read back.

An `Exercise` is a list of `Cell` s. The same list gives

* the exercise notebook (answer cells hold a template), ``Exercise.notebook()``;
* the solution notebook (answer cells hold the worked solution), ``Exercise.notebook(solution=True)``;
* the pristine master the grader executes, with the student's answer cells put in place.

Cell roles, stored in each cell's metadata as ``{"labkit": {"role": ..., "part": ..., "slot": ...}}``
and mirrored in the cell tags:

=========  ======================================================================
markdown   text of the exercise
setup      imports; run before everything, never edited by the student
answer     a code cell the student fills in; ``slot`` names it (e.g. ``27.4(a)``)
written    a markdown cell for a written answer (proof, explanation), graded by hand;
           ``points`` states what it is worth (`Exercise.written_points`)
check      ``check("27.4(a)")``: reports the part's answer (the grader decides)
=========  ======================================================================
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FORMAT = 1
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
ROLES = ("markdown", "setup", "answer", "written", "check")
WRITTEN_PLACEHOLDER = "*Write your answer here.*"


class NotebookError(ValueError):
    """A submission that cannot be graded; the message says why, for the student.

    Examples
    --------
    >>> try:
    ...     read_notebook(b"[1, 2]", "hw.ipynb")
    ... except NotebookError as exc:
    ...     print(exc)
    hw.ipynb is not a Jupyter notebook: it holds a JSON list, not an object
    """


@dataclass(frozen=True)
class Cell:
    """One cell of an exercise's definition (made with `md`, `setup`, `answer`, `written`, `check`).

    Attributes
    ----------
    role : str
        One of `ROLES` (see the module's docstring).
    source : str
        What the exercise notebook holds: text, code, or an answer's template.
    part : str, optional
        The part the cell belongs to, e.g. ``"27.4(a)"``.
    solution : str, optional
        Answer and written cells: the worked solution, shown in the solution notebook.
    slot : str, optional
        Answer and written cells: the name under which the student's cell is read back.
    points : float, optional
        Written cells: what the part is worth, awarded by hand.

    Examples
    --------
    >>> cell = Cell("answer", "total = ...", "1.1(a)", "total = 3", "1.1(a)")
    >>> cell.role, cell.slot
    ('answer', '1.1(a)')
    """
    role: str
    source: str
    part: str | None = None
    solution: str | None = None      # answer and written cells: the worked solution
    slot: str | None = None
    points: float | None = None      # written cells: the points an instructor awards by hand


def md(text: str) -> Cell:
    """A markdown cell of the exercise's text (indentation and surrounding blank lines removed).

    Parameters
    ----------
    text : str

    Returns
    -------
    Cell

    Examples
    --------
    >>> print(md("\\n    # Exercise 1.1\\n    Add the numbers.\\n").source)
    # Exercise 1.1
    Add the numbers.
    """
    return Cell("markdown", _dedent(text))


def setup(code: str) -> Cell:
    """A setup cell: imports run before everything, which the student does not edit.

    Parameters
    ----------
    code : str

    Returns
    -------
    Cell

    Examples
    --------
    >>> setup("import numpy as np").role
    'setup'
    """
    return Cell("setup", _dedent(code))


def answer(part: str, template: str, solution: str, slot: str | None = None) -> Cell:
    """A code cell the student fills in: `template` in the exercise, `solution` in the solution.

    Parameters
    ----------
    part : str
        The part it answers, e.g. ``"27.4(a)"``.
    template : str
        What the exercise notebook shows.
    solution : str
        The worked solution.
    slot : str, optional
        The name the student's cell is read back under (default: `part`).

    Returns
    -------
    Cell

    Examples
    --------
    >>> cell = answer("1.1(a)", "total = ...", "total = 1 + 2")
    >>> cell.slot, cell.solution
    ('1.1(a)', 'total = 1 + 2')
    """
    return Cell("answer", _dedent(template), part, _dedent(solution), slot or part)


WRITTEN_POINTS = 1          # what a written part is worth unless its exercise says otherwise


def written(part: str, solution: str, slot: str | None = None, points: float = WRITTEN_POINTS) -> Cell:
    """A markdown cell for a written answer, worth `points` (graded by hand, see
    `labkit.grading.manual`).

    Parameters
    ----------
    part : str
        The part it answers, e.g. ``"27.4(c)"``.
    solution : str
        The model answer, shown in the solution notebook.
    slot : str, optional
        Default: ``"<part> written"``.
    points : float, default `WRITTEN_POINTS`
        A positive number.

    Returns
    -------
    Cell
        Its source is `WRITTEN_PLACEHOLDER`.

    Raises
    ------
    ValueError
        If `points` is not a positive number.

    Examples
    --------
    >>> cell = written("1.1(b)", "Because addition is associative.", points=2)
    >>> cell.slot, cell.points
    ('1.1(b) written', 2.0)
    >>> written("1.1(b)", "...", points=0)
    Traceback (most recent call last):
    ...
    ValueError: 1.1(b): the points of a written part must be a positive number, got 0
    """
    if not (isinstance(points, (int, float)) and not isinstance(points, bool) and points > 0):
        raise ValueError(f"{part}: the points of a written part must be a positive number, got {points!r}")
    return Cell("written", WRITTEN_PLACEHOLDER, part, _dedent(solution), slot or f"{part} written", float(points))


def check(part: str) -> Cell:
    """The check cell of a part: it reports the part's answer, and the grader decides.

    Parameters
    ----------
    part : str

    Returns
    -------
    Cell

    Examples
    --------
    >>> print(check("1.1(a)").source)
    from labkit.grading import check
    check("1.1(a)")
    """
    return Cell("check", f'from labkit.grading import check\ncheck("{part}")', part)


def _dedent(text):
    import textwrap
    return textwrap.dedent(text).strip("\n")


@dataclass(frozen=True)
class Exercise:
    """One exercise: its number, file name, title and cells, from which its notebooks are made.

    Attributes
    ----------
    number : str
        E.g. ``"27.4"``.
    slug : str
        The notebook's file name without ``.ipynb``, e.g. ``"27_4_kuhn_poker_by_hand"``.
    title : str
    cells : tuple of Cell

    Examples
    --------
    >>> ex = Exercise("1.1", "1_1_sum", "A sum", (md("# Exercise 1.1"), answer("1.1(a)", "total = ...", "total = 3"),
    ...                                            check("1.1(a)"), written("1.1(b)", "Yes.", points=2)))
    >>> ex.parts, ex.answer_slots
    (['1.1(a)'], ['1.1(a)'])
    """
    number: str          # "27.4"
    slug: str            # "27_4_kuhn_poker_by_hand": the file name without .ipynb
    title: str
    cells: tuple

    @property
    def filename(self) -> str:
        """The notebook's file name.

        Examples
        --------
        >>> Exercise("1.1", "1_1_sum", "A sum", ()).filename
        '1_1_sum.ipynb'
        """
        return f"{self.slug}.ipynb"

    @property
    def parts(self) -> list[str | None]:
        """The checkable parts, in order (each has exactly one check cell).

        Examples
        --------
        >>> Exercise("1.1", "1_1_sum", "A sum", (check("1.1(a)"), check("1.1(b)"))).parts
        ['1.1(a)', '1.1(b)']
        """
        return [c.part for c in self.cells if c.role == "check"]

    @property
    def written_slots(self) -> list[str | None]:
        """The slots of the written (hand-graded) parts, in notebook order.

        Examples
        --------
        >>> Exercise("1.1", "1_1_sum", "A sum", (written("1.1(b)", "Yes."),)).written_slots
        ['1.1(b) written']
        """
        return [c.slot for c in self.cells if c.role == "written"]

    @property
    def written_points(self) -> dict[str | None, float | None]:
        """{slot: points} of the written parts, in notebook order.

        Examples
        --------
        >>> Exercise("1.1", "1_1_sum", "A sum", (written("1.1(b)", "Yes.", points=2),)).written_points
        {'1.1(b) written': 2.0}
        """
        return {c.slot: c.points for c in self.cells if c.role == "written"}

    @property
    def answer_slots(self) -> list[str | None]:
        """The slots of the answer (code) cells, in notebook order.

        Examples
        --------
        >>> Exercise("1.1", "1_1_sum", "A sum", (answer("1.1(a)", "x = ...", "x = 1"),)).answer_slots
        ['1.1(a)']
        """
        return [c.slot for c in self.cells if c.role == "answer"]

    def notebook(self, solution: bool = False) -> Any:
        """The exercise (or, with solution=True, the solution) as an unexecuted notebook.

        Every cell but the markdown ones carries its role, part and slot in its metadata
        (``{"labkit": {...}}``) and tags; setup and check cells are locked.

        Parameters
        ----------
        solution : bool, default False
            Answer and written cells hold the worked solution, and the title says "Solution".

        Returns
        -------
        nbformat.NotebookNode

        Examples
        --------
        >>> cells = (md("# Exercise 1.1"), answer("1.1(a)", "total = ...", "total = 3"), check("1.1(a)"))
        >>> ex = Exercise("1.1", "1_1_sum", "A sum", cells)
        >>> nb = ex.notebook()
        >>> nb.cells[1].source, nb.cells[1].metadata["labkit"]
        ('total = ...', {'role': 'answer', 'part': '1.1(a)', 'slot': '1.1(a)'})
        >>> [cell.source for cell in ex.notebook(solution=True).cells[:2]]
        ['# Solution to exercise 1.1', 'total = 3']
        """
        import nbformat          # imported here: `import labkit.grading` must not need the grading extra
        nb = nbformat.v4.new_notebook()
        nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"},
                       "labkit": {"exercise": self.number, "format": FORMAT}}
        counts: dict[str, int] = {}
        for cell in self.cells:
            key = f"{self.slug[:5]}-{cell.role}-{_id_part(cell.slot or cell.part or '')}"
            counts[key] = counts.get(key, 0) + 1
            cell_id = f"{key}-{counts[key]}"
            text = cell.solution if solution and cell.solution is not None else cell.source
            if solution and cell.role == "markdown" and text.startswith("# Exercise "):
                text = "# Solution to exercise " + text[len("# Exercise "):]     # a title of its own in the book
            if cell.role in ("markdown", "written"):
                nbcell = nbformat.v4.new_markdown_cell(text)
            else:
                nbcell = nbformat.v4.new_code_cell(text)
            nbcell.id = cell_id
            if cell.role != "markdown":
                meta = {"role": cell.role}
                if cell.part:
                    meta["part"] = cell.part
                if cell.slot:
                    meta["slot"] = cell.slot
                nbcell.metadata["labkit"] = meta
                nbcell.metadata["tags"] = {"setup": ["setup"], "answer": ["answer"], "written": ["answer", "written"],
                                           "check": ["check"]}[cell.role]
                if cell.role in ("setup", "check"):
                    nbcell.metadata["editable"] = False
                    nbcell.metadata["deletable"] = False
            nb.cells.append(nbcell)
        return nb


def _id_part(text):
    return "".join(ch for ch in text.replace("(", "").replace(")", "").replace(".", "-") if ch.isalnum() or ch == "-")


# ------------------------------------------------------------ reading submissions


@dataclass
class Submission:
    """What a student handed in for one exercise, as `extract` reads it.

    Attributes
    ----------
    exercise : str
        The exercise's number.
    answers : dict of str to list of str
        Answer slot -> the code of the student's cells in that slot, in notebook order.
    written : dict of str to str
        Written slot -> the student's markdown text.

    Examples
    --------
    >>> Submission("1.1", {"1.1(a)": ["total = 3"]}, {}).answers["1.1(a)"]
    ['total = 3']
    """
    exercise: str
    answers: dict          # slot -> list of code sources, in notebook order
    written: dict          # slot -> markdown text


def read_notebook(data: bytes, name: str = "notebook") -> Any:
    """Parse a submission's bytes into a notebook (NotebookError with a clear message if not).

    Parameters
    ----------
    data : bytes
        The file as handed in.
    name : str, default "notebook"
        How the messages name the file.

    Returns
    -------
    nbformat.NotebookNode

    Raises
    ------
    NotebookError
        For bytes that are not UTF-8, not JSON, not a version-4 notebook, or with a malformed cell.

    Examples
    --------
    >>> nb = read_notebook(b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}')
    >>> nb.nbformat, len(nb.cells)
    (4, 0)
    >>> try:
    ...     read_notebook(b'{"cells": [', "hw.ipynb")
    ... except NotebookError as exc:
    ...     print(exc)
    hw.ipynb is not a Jupyter notebook: its JSON is broken at line 1, column 12 (Expecting value)
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotebookError(f"{name} is not a text file (not UTF-8); submit the .ipynb file saved by Jupyter") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"{name} is not a Jupyter notebook: its JSON is broken at line {exc.lineno}, "
                            f"column {exc.colno} ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise NotebookError(f"{name} is not a Jupyter notebook: it holds a JSON {type(raw).__name__}, not an object")
    if raw.get("nbformat") != 4:
        raise NotebookError(f"{name} has notebook format {str(raw.get('nbformat'))[:20]}; expected 4 (save it with "
                            "JupyterLab or Jupyter Notebook 5 or later)")
    if not isinstance(raw.get("cells"), list):
        raise NotebookError(f"{name} is not a Jupyter notebook: it has no list of cells")
    import nbformat
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:
        raise NotebookError(f"{name} is not a valid Jupyter notebook ({type(exc).__name__}: {exc})") from None
    for k, cell in enumerate(nb.cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw") \
                or not isinstance(cell.get("source", ""), str):
            raise NotebookError(f"{name}: cell {k} is malformed")
    return nb


def _cell_meta(cell):
    """A cell's labkit metadata with only string values kept: a submission's metadata is
    student-controlled (``"slot": []``, ``"role": {...}``) and must not reach a set or a dict key."""
    meta = cell.get("metadata", {})
    meta = meta.get("labkit", {}) if isinstance(meta, dict) else {}
    if not isinstance(meta, dict):
        return {}
    return {k: v for k, v in meta.items() if k in ("role", "part", "slot") and isinstance(v, str)}


def _declared_exercise(nb):
    meta = nb.get("metadata", {})
    meta = meta.get("labkit") if isinstance(meta, dict) else None
    value = meta.get("exercise") if isinstance(meta, dict) else None
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise NotebookError(f"its labkit metadata names the exercise as a {type(value).__name__} ({str(value)[:40]!r}), "
                        "not as a number such as \"27.4\"")


def extract(nb: Any, exercises: Mapping[str, Exercise], expected: str | None = None,
            name: str = "notebook") -> Submission:
    """The student's answers, after checking that the notebook is a labkit exercise.

    The exercise is the one the notebook's metadata names or, without it, the one its answer
    cells belong to. Only cells whose role and slot are the exercise's are read.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The submission (`read_notebook`).
    exercises : dict {number: Exercise}
    expected : str, optional
        The exercise the grader was told to expect (e.g. "27.4"); another one is an error.
    name : str, default "notebook"
        How the messages name the file.

    Returns
    -------
    Submission

    Raises
    ------
    NotebookError
        For a notebook of no labkit exercise, of an unknown one, of another one than `expected`,
        or mixing the answer cells of several.

    Examples
    --------
    >>> ex = Exercise("1.1", "1_1_sum", "A sum", (answer("1.1(a)", "total = ...", "total = 3"), check("1.1(a)")))
    >>> nb = ex.notebook()
    >>> nb.cells[0].source = "total = 1 + 2"                       # the student's answer
    >>> extract(nb, {"1.1": ex}).answers
    {'1.1(a)': ['total = 1 + 2']}
    >>> extract(nb, {"1.1": ex}, expected="2.3", name="hw.ipynb")
    Traceback (most recent call last):
    ...
    labkit.grading.notebooks.NotebookError: hw.ipynb is exercise 1.1 (A sum), but exercise 2.3 (?) was expected
    """
    try:
        declared = _declared_exercise(nb)
    except NotebookError as exc:
        raise NotebookError(f"{name}: {exc}") from None
    parts = {_cell_meta(c).get("part", "") for c in nb.cells if _cell_meta(c).get("role") in ("answer", "written")}
    from_cells = {p.split("(")[0] for p in parts if p}
    if declared is None:
        if len(from_cells) == 1:
            declared = next(iter(from_cells))
        elif not from_cells:
            raise NotebookError(f"{name} is not a labkit exercise notebook: it has no exercise metadata and no "
                                "answer cells. Start from the notebook in exercises/ and keep its answer cells.")
        else:
            raise NotebookError(f"{name} mixes answer cells of exercises {', '.join(sorted(from_cells))}")
    if declared not in exercises:
        raise NotebookError(f"{name} says it is exercise {declared[:40]!r}, which labkit does not know; "
                            f"the exercises are {', '.join(exercises)}")
    if from_cells and from_cells != {declared}:
        others = ", ".join(sorted(from_cells - {declared}))
        raise NotebookError(f"{name} is exercise {declared}, but its answer cells belong to exercise {others}")
    if expected is not None and declared != str(expected):
        raise NotebookError(f"{name} is exercise {declared} ({exercises[declared].title}), but exercise "
                            f"{expected} ({exercises[str(expected)].title if str(expected) in exercises else '?'}) "
                            "was expected")
    exercise = exercises[declared]
    slots, written_slots = set(exercise.answer_slots), set(exercise.written_slots)
    answers: dict = {}
    written_text: dict = {}
    for cell in nb.cells:
        meta = _cell_meta(cell)
        slot = meta.get("slot")
        if meta.get("role") == "answer" and slot in slots and cell.cell_type == "code":
            answers.setdefault(slot, []).append(cell.source)
        elif meta.get("role") == "written" and slot in written_slots:
            written_text[slot] = (written_text.get(slot, "") + "\n\n" + cell.source).strip()
    return Submission(declared, answers, written_text)


def graded_cells(exercise: Exercise, submission: Submission) -> list[tuple[str, str | None, str]]:
    """The master's cells with the student's answers in place: a list of (role, part, source)
    to execute in order. Answer slots the student deleted run as empty cells.

    Parameters
    ----------
    exercise : Exercise
    submission : Submission

    Returns
    -------
    list of (str, str or None, str)
        Setup, answer and check cells; the exercise's markdown and written cells are left out.

    Examples
    --------
    >>> ex = Exercise("1.1", "1_1_sum", "A sum", (setup("import math"), answer("1.1(a)", "total = ...", "total = 3"),
    ...                                            check("1.1(a)")))
    >>> for role, part, source in graded_cells(ex, Submission("1.1", {}, {})):
    ...     print(role, part, repr(source.splitlines()[-1] if source else source))
    setup None 'import math'
    answer 1.1(a) ''
    check 1.1(a) 'check("1.1(a)")'
    """
    plan: list[tuple[str, str | None, str]] = []
    for cell in exercise.cells:
        if cell.role == "setup":
            plan.append(("setup", None, cell.source))
        elif cell.role == "answer":
            sources = submission.answers.get(cell.slot, [""])
            plan.extend(("answer", cell.part, src) for src in sources)
        elif cell.role == "check":
            plan.append(("check", cell.part, cell.source))
    return plan
