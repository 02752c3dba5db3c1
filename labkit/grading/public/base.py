"""Public checks: what a student's own kernel can say about an answer without the grader's cases.

A `PublicSpec` names what a part reads (the same names as the hidden check), the probe arguments at
which a function-valued answer is evaluated in the notebook, and a ``feedback`` function. That
function checks the form of the answer -- the names exist, numbers are finite, arrays have the
right shape, rows are probability distributions -- and its values on *public cases*: a function is
called on a small or special input whose answer is worked out by hand in the module's docstring
(matching pennies, a 2x2 game, a pure policy of Leduc), and a value is checked against what must
hold of it (an equilibrium earns the game's value, a best response earns the most). So a wrong
answer fails in the notebook, with a hint. The public cases differ from the grader's hidden probes,
no public value is computed by the labkit function that answers the part, and no hint names it;
the points are decided by the grader's hidden checks.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from collections.abc import Callable

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

        27.4(b): public checks pass (3 checks) -- the grader scores it on its own cases
            checked: ev_bet_jack(q) returns a number; ev_bet_jack at a public point;
                     call_queen_p2 is a probability
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
        """The verdict in one line, honest about its reach: the public cases pass, the grader's
        own cases decide the points."""
        count = f"{len(self.checked)} check{'' if len(self.checked) == 1 else 's'}"
        if self.ok:
            return f"{self.part}: public checks pass ({count}) -- the grader scores it on its own cases"
        return f"{self.part}: not ready -- {len(self.hints)} of {len(self.checked)} public checks fail"

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
    """Collects the public checks (of form and of value) of one part: ``f.item(label, test)``, where test() returns None
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
