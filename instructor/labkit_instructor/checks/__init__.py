"""The hidden checks: pure functions from a reported answer to a verdict.

Each exercise's checkable parts are the ``PARTS`` of its module in
``labkit_instructor.exercises``: a `PartSpec` (``labkit_instructor.checks.base.part_spec``) per
part, with the names it reads from the student's notebook, the probe arguments at which a
function-valued answer is evaluated, and a `grade` function. This package holds what they share
(``base``, ``sampling``, ``own_work``) and ``grade_part(part_id, value)``, which takes the
serialized answer -- ``{name: value}`` as produced by `labkit.grading.reporter.collect` -- and
returns a `PartResult` (verdict, points, hints).

These functions run in the grader's process on plain JSON data, never in a student's kernel.
Expected values are computed from labkit's games and solvers (an LP, exact evaluation, a
stiff ODE integration), not typed in, except where the exercise itself states the number. Hints
say where to look, never what the answer is.
"""
from __future__ import annotations

from labkit_instructor.checks.base import Item, PartResult


def spec_for(part_id):
    """The `PartSpec` of a part such as ``"27.4(a)"`` (ValueError listing the parts if unknown)."""
    from labkit_instructor import SPECS
    try:
        return SPECS[part_id]
    except (KeyError, TypeError):
        raise ValueError(f"unknown part {part_id!r}; the checkable parts are {', '.join(SPECS)}") from None


def grade_part(part_id, value, answers=None) -> PartResult:
    """The verdict on one part from its serialized answer ``{name: value}``.

    `answers`, the submission's answer cells (``{slot: [sources]}``), adds the static reading of
    the part's functions to what the kernel recorded of their calls (parts with an own-work rule;
    `labkit_instructor.checks.own_work`). Never raises on a malformed value: every item that
    cannot be read fails with a hint.
    """
    spec = spec_for(part_id)
    if answers is not None:
        from labkit_instructor import EXERCISES
        from labkit_instructor.checks.own_work import with_static_findings
        exercise = next((ex for ex in EXERCISES.values() if part_id in ex.parts), None)
        if exercise is not None:
            value = with_static_findings(part_id, value, answers, exercise)
    try:
        items = spec.grade(value)
    except Exception as exc:      # a value so malformed that the grade function itself failed
        items = [Item("answer", 0.0, spec.max_points, f"could not read your answer ({type(exc).__name__})")]
    points = sum(i.points for i in items)
    max_points = sum(i.max_points for i in items)
    if max_points != spec.max_points:        # keeps the table's totals honest
        raise AssertionError(f"{part_id}: items add up to {max_points}, spec says {spec.max_points}")
    verdict = "pass" if points == max_points else ("partial" if points > 0 else "fail")
    hints = [f"{i.label}: {i.hint}" for i in items if i.hint]
    return PartResult(part_id, verdict, points, max_points, hints, items)
