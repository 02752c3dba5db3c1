"""Public checks: what a student's own kernel can say about an answer without knowing the answer.

A `PublicSpec` names what a part reads (the same names as the hidden check), the probe arguments at
which a function-valued answer is evaluated in the notebook, and a ``feedback`` function. That
function looks only at the form of the answer -- the names exist, numbers are finite, arrays have
the right shape, rows are probability distributions, a function returns the right kind of thing --
and gives hints. It computes no expected value and contains none, so reading it tells a student
nothing the exercise text does not. The points are decided by the grader's hidden checks.
"""
from __future__ import annotations

import textwrap
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
    own_work: object = None          # a labkit.grading.own_work.OwnWork, or None
    timing: dict = field(default_factory=dict)


def public_part(part, names, max_points, feedback, probes=None, own_work=None, timing=None):
    """A `PublicSpec`: the part's id, the names it reads, its points (as the grader awards them),
    the format checks, the probe arguments used in the notebook, the part's `OwnWork` rule (the
    labkit code its functions may not call: the notebook says so too, and the grader gives the
    part 0 when they do) and the timing of its timed probes (``{name: (CPU seconds, repeats)}``)."""
    if own_work is not None:
        feedback = _with_own_work(part, own_work, feedback)
    return PublicSpec(part, tuple(names), float(max_points), feedback, dict(probes or {}), own_work,
                      dict(timing or {}))


def _with_own_work(part, rule, feedback):
    """The format checks, then one more: the functions called none of the code the part asks
    the student to write (read from ``__own_work__``, which the reporter records)."""
    def checks(value):
        f = feedback(value)
        findings = value.get("__own_work__") if isinstance(value, dict) else None
        if isinstance(findings, list):
            def own():
                return rule.summary(part, findings) if findings else None
            f.item("calls no labkit solver or evaluator", own)
        return f
    return checks


@dataclass
class FormatResult:
    """What the notebook's check found: the format checks run and the hints of those that fail.

    `lines` is what the check cell prints, every line at most `WIDTH` characters (the book's page)
    apart from a hint that quotes something long of the student's: first the verdict (`line`),
    then either what was checked or one ``hint:`` line per failing check::

        27.4(a): format ok (3 checks, not the values) -- the grader will score it
            checked: ev_bet_queen is a number; ev_check_queen(call, bluff) returns numbers;
                     call_with_queen is a probability
    """
    part: str
    checked: list
    hints: list

    WIDTH = 88
    CHECKED = "    checked: "

    @property
    def ok(self):
        return not self.hints

    def line(self):
        """The verdict in one line, honest about its reach: it checked the form, not the values."""
        count = f"{len(self.checked)} check{'' if len(self.checked) == 1 else 's'}"
        if self.ok:
            return f"{self.part}: format ok ({count}, not the values) -- the grader will score it"
        return f"{self.part}: not ready -- {len(self.hints)} of {len(self.checked)} format checks fail"

    def details(self):
        """The lines under the verdict: the checks run (when all pass) or a hint per failure."""
        if not self.ok:
            return [f"    hint: {hint}" for hint in self.hints]
        return _packed(self.checked, self.CHECKED, self.WIDTH)

    def lines(self):
        """Everything the check cell prints: `line`, then `details`."""
        return [self.line(), *self.details()]


def _packed(labels, lead, width):
    """The labels joined by "; " after `lead`, broken between labels so that every line is at
    most `width` wide (continuation lines indented under the first label); a label too long for
    a line of its own is broken at its spaces."""
    indent = " " * len(lead)
    pieces = [label + ";" for label in labels[:-1]] + list(labels[-1:])
    lines, prefix, current = [], lead, ""
    for piece in pieces:
        joined = f"{current} {piece}" if current else piece
        if current and len(prefix) + len(joined) > width:
            lines.append(prefix + current)
            prefix, joined = indent, piece
        current = joined
    lines.append(prefix + current)
    return [part for line in lines
            for part in textwrap.wrap(line, width, subsequent_indent=indent)]


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
