"""Export the exercises as an nbgrader source folder (optional; nbgrader is not a dependency).

    python -m labkit.grading --export-nbgrader course/        # writes course/source/ch27/*.ipynb

Each exercise becomes one notebook with nbgrader's cell metadata (schema version 3):

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

nbgrader runs these tests inside the student's kernel, so the weakness described in
`labkit.grading` (an answer cell can redefine what the test calls) applies there; labkit's own
grader does not have it.
"""
from __future__ import annotations

from pathlib import Path

import nbformat

from labkit.grading import material

ASSIGNMENT = "ch27"


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


def assignment_notebook(exercise, mat):
    """One exercise as an nbgrader source notebook."""
    nb = exercise.notebook(solution=True)
    for k, cell in enumerate(nb.cells):
        meta = cell.metadata.get("labkit", {})
        role, part = meta.get("role", "markdown"), meta.get("part")
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


def export(folder, number=None, instructor=None):
    """Write ``folder/source/ch27/<exercise>.ipynb`` for one exercise or all; returns the paths.

    The test cells run the hidden checks inside nbgrader's kernel, so nbgrader's autograder needs
    ``labkit_instructor`` installed (on the instructor's machine, never the students')."""
    mat = material.load(instructor)
    EXERCISES = mat.EXERCISES
    if number is not None and number not in EXERCISES:
        raise ValueError(f"unknown exercise {number!r}; choose from {', '.join(EXERCISES)}")
    target = Path(folder) / "source" / ASSIGNMENT
    target.mkdir(parents=True, exist_ok=True)
    paths = []
    for ex in ([EXERCISES[number]] if number else EXERCISES.values()):
        path = target / ex.filename
        nbformat.write(assignment_notebook(ex, mat), path)
        paths.append(path)
    return paths
