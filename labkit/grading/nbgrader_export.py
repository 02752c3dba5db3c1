"""Export the exercises as an nbgrader source folder (optional; nbgrader is not a dependency).

    python -m labkit.grading --export-nbgrader course/
    # writes course/source/<assignment>/<assignment>.ipynb, one assignment per exercise,
    # e.g. course/source/27_4_kuhn_poker_by_hand/27_4_kuhn_poker_by_hand.ipynb

Each exercise becomes one nbgrader assignment (named after its notebook, `assignment_name`), whose
notebook carries nbgrader's cell metadata (schema version 3):

* answer cells: ``solution`` cells holding the worked solution between nbgrader's
  ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers, which ``nbgrader generate_assignment``
  replaces by a stub;
* check cells: locked autograder tests worth the part's points; the cell's last expression is
  the points earned, which nbgrader takes as partial credit;
* written answers: manually graded markdown cells worth the points the exercise states for them
  (`labkit.grading.notebooks.Exercise.written_points`), so that nbgrader's total for an exercise
  is the total `labkit-grade` reports once the hand-graded points are merged in
  (`labkit.grading.manual`);
* everything else: locked, read-only cells.

What students read is the exercise, not the solution page: the title is the exercise's
("# Exercise 27.4 -- ..."), and the links to the book's pages (``../chapters/...ipynb``, which
lead nowhere from an nbgrader release folder) point at the published site when its address is
given (``site_url``, the book's ``html.baseurl``) and are left as plain text otherwise.

nbgrader runs these tests inside the student's kernel, so the weakness described in
`labkit.grading` (an answer cell can redefine what the test calls) applies there; labkit's own
grader does not have it.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import nbformat

from labkit.grading import material

if TYPE_CHECKING:
    from labkit.grading.notebooks import Exercise

SOLUTION_TITLE, EXERCISE_TITLE = "# Solution to exercise ", "# Exercise "
# a Markdown link [text](target): the target is a page of the book when it is relative
LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)\)")
PAGE = re.compile(r"^(?:\.\./|\./)*(?P<page>(?:chapters|book|exercises|solutions)/[^#]+?)\.(?:ipynb|md)"
                  r"(?P<anchor>#.*)?$")


def assignment_name(exercise: Exercise) -> str:
    """The nbgrader assignment of an exercise: its notebook's name, e.g. ``27_4_kuhn_poker_by_hand``.

    Parameters
    ----------
    exercise : labkit.grading.notebooks.Exercise

    Returns
    -------
    str

    Examples
    --------
    >>> from labkit.grading import notebooks as nbk
    >>> assignment_name(nbk.Exercise("1.1", "1_1_sum", "A sum", ()))
    '1_1_sum'
    """
    return Path(exercise.filename).stem


def book_links(markdown: str, site_url: str = "") -> str:
    """`markdown` with its links to the book's pages made to work outside the book: to the page on
    the published site (``site_url/chapters/x.html#anchor``) when `site_url` is given, else the
    link's text alone. Links to other sites are kept.

    Parameters
    ----------
    markdown : str
    site_url : str, default ""
        The published book's address.

    Returns
    -------
    str

    Examples
    --------
    >>> text = "See [regret](../chapters/03_counterfactual_regret.md#rm) and [OpenSpiel](https://openspiel.org)."
    >>> book_links(text, "https://book.example")
    'See [regret](https://book.example/chapters/03_counterfactual_regret.html#rm) and [OpenSpiel](https://openspiel.org).'
    >>> book_links(text)
    'See regret and [OpenSpiel](https://openspiel.org).'
    """
    base = site_url.rstrip("/")

    def fix(match):
        target = match["target"]
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            return match[0]                                   # another site, or this page
        page = PAGE.match(target)
        if page and base:
            return f"[{match['text']}]({base}/{page['page']}.html{page['anchor'] or ''})"
        return match["text"]
    return LINK.sub(fix, markdown)


def _meta(grade_id, *, grade=False, solution=False, locked=False, points=None):
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def _grade_id(text):
    return "".join(ch if ch.isalnum() else "-" for ch in text).strip("-")


def _test_source(part):
    return (f'from labkit_instructor import grade_part, spec_for\n'
            f'from labkit.grading.reporter import collect\n'
            f'result = grade_part("{part}", collect("{part}", globals(), spec_for("{part}")))\n'
            f'print(result.line())\n'
            f'for hint in result.hints:\n'
            f'    print("    hint:", hint)\n'
            f'result.points')


def assignment_notebook(exercise: Exercise, mat: Any, site_url: str = "") -> Any:
    """One exercise as an nbgrader source notebook (see the module's docstring for `site_url`):
    answer cells between nbgrader's solution markers, check cells as locked test cells worth the
    part's points, written cells graded by hand.

    Parameters
    ----------
    exercise : labkit.grading.notebooks.Exercise
    mat : module
        The instructor material (its ``spec_for`` gives a check cell's points).
    site_url : str, default ""

    Returns
    -------
    nbformat.NotebookNode

    Examples
    --------
    >>> import types
    >>> from labkit.grading import notebooks as nbk
    >>> exercise = nbk.Exercise("1.1", "1_1_sum", "A sum", (nbk.md("# Exercise 1.1"),
    ...                                                      nbk.answer("1.1(a)", "total = ...", "total = 3")))
    >>> nb = assignment_notebook(exercise, types.SimpleNamespace())          # no check cell: no points needed
    >>> print(nb.cells[1].source)
    ### BEGIN SOLUTION
    total = 3
    ### END SOLUTION
    >>> nb.cells[1].metadata["nbgrader"]["solution"]
    True
    """
    nb = exercise.notebook(solution=True)
    for k, cell in enumerate(nb.cells):
        meta = cell.metadata.get("labkit", {})
        role, part = meta.get("role", "markdown"), meta.get("part")
        if cell.cell_type == "markdown":
            if cell.source.startswith(SOLUTION_TITLE):               # the student's title, not the solution page's
                cell.source = EXERCISE_TITLE + cell.source[len(SOLUTION_TITLE):]
            cell.source = book_links(cell.source, site_url)
        ident = _grade_id(f"{exercise.number}-{meta.get('slot') or part or 'text'}-{role}-{k}")
        if role == "answer":
            cell.source = f"### BEGIN SOLUTION\n{cell.source}\n### END SOLUTION"
            cell.metadata["nbgrader"] = _meta(ident, solution=True)
        elif role == "written":
            cell.metadata["nbgrader"] = _meta(ident, grade=True, solution=True,
                                              points=exercise.written_points[meta["slot"]])
        elif role == "check":
            cell.source = _test_source(part)
            cell.metadata["nbgrader"] = _meta(ident, grade=True, locked=True,
                                              points=mat.spec_for(part).max_points)
        else:
            cell.metadata["nbgrader"] = _meta(ident, locked=True)
    return nb


SITE_VARIABLE = "LABKIT_SITE_URL"      # the published book's address, when --site-url is not given


def site_url_error(site_url: str | None) -> str | None:
    """Why `site_url` cannot be the published book's address (None if it can, or if not given).

    Parameters
    ----------
    site_url : str or None
        The address given with ``labkit-grade --site-url`` or in ``LABKIT_SITE_URL``.

    Returns
    -------
    str or None
        What is wrong with it, for the error message; None when it is an http(s) address.

    Examples
    --------
    >>> site_url_error("https://org.github.io/book") is None
    True
    >>> site_url_error("org.github.io/book")
    'give the address with its scheme, such as https://ORG.github.io/REPO'
    """
    if site_url is None:
        return None
    parts = urlsplit(site_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return "give the address with its scheme, such as https://ORG.github.io/REPO"
    if parts.query or parts.fragment:
        return "give the book's address without a query or #fragment"
    return None


def export(folder: str | os.PathLike[str], number: str | None = None, instructor: str | os.PathLike[str] | None = None,
           site_url: str | None = None) -> list[Path]:
    """Write ``folder/source/<assignment>/<assignment>.ipynb`` for one exercise or all, one
    assignment per exercise (`assignment_name`).

    The test cells run the hidden checks inside nbgrader's kernel, so nbgrader's autograder needs
    ``labkit_instructor`` installed (on the instructor's machine, never the students'). The
    links to the book's chapters go to `site_url` (``labkit-grade --site-url``); without it, to
    the address in the environment variable ``LABKIT_SITE_URL``, if any, else they are left as
    plain text.

    Parameters
    ----------
    folder : str or path
        nbgrader's course folder.
    number : str, optional
        One exercise (default: all).
    instructor : str or path, optional
        Folder containing ``labkit_instructor`` (default: the installed distribution).
    site_url : str, optional
        Default: the environment variable ``LABKIT_SITE_URL``, if any.

    Returns
    -------
    list of pathlib.Path
        The notebooks written.

    Raises
    ------
    ValueError
        For an unknown exercise, or a site address that is not an http(s) address
        (`site_url_error`).
    labkit.grading.material.MaterialError
        Where the instructor material cannot be found.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     try:
    ...         written = [os.path.relpath(path, folder) for path in export(folder, number="27.4")]
    ...     except material.MaterialError:                 # a student's installation
    ...         written = ["source/27_4_kuhn_poker_by_hand/27_4_kuhn_poker_by_hand.ipynb"]
    >>> written
    ['source/27_4_kuhn_poker_by_hand/27_4_kuhn_poker_by_hand.ipynb']
    """
    if site_url is None:
        site_url = os.environ.get(SITE_VARIABLE, "")
    problem = site_url_error(site_url or None)
    if problem:
        raise ValueError(f"site address {site_url!r}: {problem}")
    mat = material.load(instructor)
    EXERCISES = mat.EXERCISES
    if number is not None and number not in EXERCISES:
        raise ValueError(f"unknown exercise {number!r}; choose from {', '.join(EXERCISES)}")
    paths = []
    for ex in ([EXERCISES[number]] if number else EXERCISES.values()):
        target = Path(folder) / "source" / assignment_name(ex)
        target.mkdir(parents=True, exist_ok=True)
        path = target / ex.filename
        nbformat.write(assignment_notebook(ex, mat, site_url), path)
        paths.append(path)
    return paths
