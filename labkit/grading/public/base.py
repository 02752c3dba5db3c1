"""Public checks: what a student's own kernel can say about an answer without knowing the answer.

A `PublicSpec` names what a part reads (the same names as the hidden check), the probe arguments at
which a function-valued answer is evaluated in the notebook, and a ``feedback`` function. That
function looks only at the form of the answer -- the names exist, numbers are finite, arrays have
the right shape, rows are probability distributions, a function returns the right kind of thing --
and gives hints. It computes no expected value and contains none, so reading it tells a student
nothing the exercise text does not. The points are decided by the grader's hidden checks.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from labkit.grading.checking import Wrong


@dataclass(frozen=True)
class PublicSpec:
    part: str
    names: tuple
    max_points: float
    feedback: Callable
    probes: dict = field(default_factory=dict)


def public_part(part, names, max_points, feedback, probes=None):
    """A `PublicSpec`: the part's id, the names it reads, its points (as the grader awards them),
    the format checks, and the probe arguments used in the notebook."""
    return PublicSpec(part, tuple(names), float(max_points), feedback, dict(probes or {}))


@dataclass
class FormatResult:
    """What the notebook's check found: the format checks run and the hints of those that fail."""
    part: str
    checked: list
    hints: list

    @property
    def ok(self):
        return not self.hints

    def line(self):
        """One line, honest about its reach: it checked the form, not the values."""
        if self.ok:
            return (f"{self.part}: format ok -- the grader will score it "
                    f"(checked here: {', '.join(self.checked)}; not the values)")
        return f"{self.part}: not ready -- {len(self.hints)} of {len(self.checked)} format checks fail"


class FormatChecks:
    """Collects the format checks of one part: ``f.item(label, test)``, where test() returns None
    (fine) or a hint, or raises `Wrong` (its message is the hint)."""

    def __init__(self, value):
        self.value, self.checked, self.hints = value, [], []

    def item(self, label, test):
        try:
            hint = test()
        except Wrong as exc:
            hint = str(exc)
        except Exception as exc:      # a malformed value must never crash the feedback
            hint = f"could not read your answer ({type(exc).__name__})"
        self.checked.append(label)
        if hint:
            self.hints.append(f"{label}: {hint}")
        return self
