"""The public checks of the exercises, one module per exercise (same part ids as the hidden checks).

Each module but ``base`` and ``helpers`` is generated: scripts/build_exercises.py writes it from
the ``PUBLIC_CHECKS`` of the exercise's one source in the instructor package (edit it there).

``check("27.4(a)")`` in a student's notebook collects the part's names (`labkit.grading.reporter`),
evaluates function-valued answers at the public probe arguments, and prints the line of
`feedback`: the form of the answer and its values on public cases worked out by hand, never its
score (see `labkit.grading.public.base`).
"""
from __future__ import annotations

import importlib
import pkgutil

from labkit.grading.public.base import FormatResult, PublicSpec

# one module per exercise, found by name (every module here but the shared `base` and `helpers`), in
# the order of the names: the same names, in the same order, as labkit_instructor's exercises
SHARED = ("base", "helpers")
MODULES = sorted(info.name for info in pkgutil.iter_modules(__path__) if info.name not in SHARED)

SPECS = {spec.part: spec for name in MODULES
         for spec in importlib.import_module(f"labkit.grading.public.{name}").PARTS}

__all__ = ["FormatResult", "MODULES", "PublicSpec", "SPECS", "feedback", "spec_for"]


def spec_for(part_id):
    """The `PublicSpec` of a part (ValueError listing the parts if unknown)."""
    try:
        return SPECS[part_id]
    except (KeyError, TypeError):
        raise ValueError(f"unknown part {part_id!r}; the checkable parts are {', '.join(SPECS)}") from None


def feedback(part_id, value) -> FormatResult:
    """The public checks of one part on its serialized answer ``{name: value}``; never raises
    on a malformed value."""
    spec = spec_for(part_id)
    try:
        checks = spec.feedback(value)
        return FormatResult(part_id, list(checks.checked), list(checks.hints))
    except Exception as exc:
        return FormatResult(part_id, ["the answer"], [f"could not read your answer ({type(exc).__name__})"])
