"""What every check shares, public or hidden: results, reading a reported answer, the item collector.

A reported answer is plain JSON, ``{name: value}`` as `labkit.grading.reporter.collect` builds it
(a function-valued name holds the list of its results at the probe arguments). The readers here
turn such a value into a number, an array, an action or a pair, raising `Wrong` with a hint when
it is of the wrong kind; `Grader` collects one part's graded items.

The hidden checks (``labkit_instructor.checks``, not shipped with labkit) import these names
through ``labkit_instructor.checks.base``; the public checks (`labkit.grading.public`) use them to
check the format of an answer without knowing its value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Callable

import numpy as np


@dataclass
class Item:
    """One graded claim inside a part."""
    label: str
    points: float
    max_points: float
    hint: str | None = None        # None when the item passes


@dataclass
class PartResult:
    """The verdict on one part: ``pass``, ``partial`` or ``fail`` from the checks; the grader
    adds ``missing``, ``error``, ``timeout``, ``output-flood``, ``kernel-died``,
    ``out-of-memory``, ``tampered`` and ``budget``."""
    part: str
    verdict: str
    points: float
    max_points: float
    hints: list = field(default_factory=list)
    items: list = field(default_factory=list)

    def line(self):
        """The fixed one-line format: ``27.4(a): pass 3/3``."""
        return f"{self.part}: {self.verdict} {self.points:g}/{self.max_points:g}"

    def as_dict(self):
        return {"part": self.part, "verdict": self.verdict, "points": self.points,
                "max_points": self.max_points, "hints": list(self.hints),
                "items": [{"label": i.label, "points": i.points, "max_points": i.max_points} for i in self.items]}


@dataclass(frozen=True)
class PartSpec:
    """A hidden check: the names the part reads, its grade function, its points, the probe
    arguments at which function-valued answers are evaluated (the grader passes these into the
    kernel, so they may differ from the public ones), and the timing of probe calls:
    ``{name: (budget, repeats)}``, the budget in CPU seconds per call. Every probe call is
    measured; a timed name also has the threads that were busy with notebook code recorded, a
    call with a fresh input (`labkit.grading.fresh`) slower than the budget runs again with
    another input, up to ``repeats`` runs, and the fastest is reported (see
    `labkit.grading.reporter`). The grader gives a timed part's check cell time for its calls at
    the budget, so a budget is also how a part with heavy probes asks for time."""
    part: str
    names: tuple
    grade: Callable
    max_points: float
    probes: dict = field(default_factory=dict)
    timing: dict = field(default_factory=dict)


def part_spec(part, names, grade, max_points, probes=None, timing=None):
    """A `PartSpec`: the part's id, the names its grade function reads, the function, the
    points, the probe arguments of function-valued answers and the timing of the timed ones
    (``{name: (budget_seconds, repeats)}``)."""
    probes, timing = dict(probes or {}), dict(timing or {})
    for name, entry in timing.items():
        if name not in probes:
            raise ValueError(f"{part}: timing names {name!r}, which has no probes")
        budget, repeats = entry
        if not (isinstance(budget, (int, float)) and budget > 0 and isinstance(repeats, int) and repeats >= 1):
            raise ValueError(f"{part}: timing of {name!r} must be (budget > 0 seconds, repeats >= 1), got {entry!r}")
        timing[name] = (float(budget), repeats)
    return PartSpec(part, tuple(names), grade, float(max_points), probes, timing)


class Wrong(Exception):
    """A reported value of the wrong kind; the message is the hint."""


def reported(value, name):
    if not isinstance(value, dict) or name not in value:
        raise Wrong(f"`{name}` was not reported")
    v = value[name]
    if isinstance(v, dict) and "__error__" in v:
        raise Wrong(str(v["__error__"]))
    return v


def as_number(v, name):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, list) and len(v) == 1:
            return as_number(v[0], name)
        raise Wrong(f"`{name}` should be a number, got {kind_of(v)}")
    if not math.isfinite(v):
        raise Wrong(f"`{name}` is not a finite number")
    return float(v)


def as_array(v, name, shape=None):
    if isinstance(v, dict) and "__error__" in v:
        raise Wrong(str(v["__error__"]))
    try:
        a = np.array(v, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(f"`{name}` should be an array of numbers, got {kind_of(v)}") from None
    if shape is not None and a.shape != tuple(shape):
        raise Wrong(f"`{name}` should have shape {tuple(shape)}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise Wrong(f"`{name}` contains a value that is not a finite number")
    return a


def as_distribution(v, name, size=None, tol=1e-6):
    """A probability vector (nonnegative entries summing to 1)."""
    a = as_array(v, name, None if size is None else (size,))
    if a.ndim != 1:
        raise Wrong(f"`{name}` should be a vector of probabilities, got shape {a.shape}")
    if np.any(a < -tol) or abs(a.sum() - 1) > tol:
        raise Wrong(f"`{name}` should be a probability distribution (nonnegative, summing to 1)")
    return a


def kind_of(v):
    return {dict: "a dict", list: "a list", str: "a string", bool: "a bool",
            type(None): "None (is a `return` missing?)"}.get(
        type(v), type(v).__name__)


ACTIONS3 = ("a", "b", "c")
RPS = ("rock", "paper", "scissors")


def as_action(v, name, names):
    """An action given by its index or its name (case-insensitive)."""
    if isinstance(v, str) and v.strip().lower() in names:
        return names.index(v.strip().lower())
    if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() and 0 <= v < len(names):
        return int(v)
    raise Wrong(f"`{name}` should name an action ({', '.join(names)}) or give its index, got {v!r}")


def as_pair(v, name, names=ACTIONS3):
    if not isinstance(v, list) or len(v) != 2:
        raise Wrong(f"`{name}` should be a pair (row action, column action), got {kind_of(v)}")
    return as_action(v[0], name, names), as_action(v[1], name, names)


def probe_results(value, name, count):
    results = reported(value, name)
    if not isinstance(results, list) or len(results) != count:
        raise Wrong(f"`{name}` could not be evaluated")
    for r in results:
        if isinstance(r, dict) and "__error__" in r:
            raise Wrong(f"`{name}` raised {r['__error__']}")
    return results


class Grader:
    """Collects the items of one part: ``g.item(label, points, test)`` where test() returns
    None (pass) or a hint, or raises Wrong (its message is the hint)."""

    def __init__(self, value):
        self.value, self.items = value, []

    def item(self, label, points, test):
        try:
            hint = test()
        except Wrong as exc:
            hint = str(exc)
        except Exception as exc:        # a malformed value must never crash the grader
            hint = f"could not read your answer ({type(exc).__name__})"
        self.items.append(Item(label, 0.0 if hint else float(points), float(points), hint))


def close_to(a, b, tol=1e-6):
    """Equal entry by entry within an absolute tolerance."""
    return bool(np.allclose(a, b, rtol=0, atol=tol))


# ------------------------------------------------------------------ timing and own work, as recorded
def recorded(value, key, name=None):
    """A list the reporter recorded beside the values (``__seconds__``, ``__wall__``, ``__fresh__``,
    ``__busy__``; see `labkit.grading.reporter`) for `name`, or None when it did not."""
    table = value.get(key) if isinstance(value, dict) else None
    entry = table.get(name) if isinstance(table, dict) and name is not None else table
    return entry if isinstance(entry, list) else None


def cpu_seconds(value, name):
    """CPU seconds of each probe call of `name` (None for a call that raised), or None."""
    times = recorded(value, "__seconds__", name)
    if times is None:
        return None
    return [float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None for t in times]


def own_work_findings(value):
    """The calls into code the part asks the student to write, as recorded (a list of
    ``{"name", "called", "thread"[, "tampered"]}``), [] when there were none, and None when the
    record has no such entry (a part without an own-work rule)."""
    findings = recorded(value, "__own_work__")
    return None if findings is None else [f for f in findings if isinstance(f, dict)]


def own_work_gate(part, rule, grade):
    """`grade` for a part with an `OwnWork` rule: when the record shows calls into the code the
    part asks for, every item earns 0 and the first one's hint names the call."""
    def graded(value):
        items = grade(value)
        findings = own_work_findings(value)
        if not findings:
            return items
        hint = rule.summary(part, findings)
        return [Item(item.label, 0.0, item.max_points, hint if k == 0 else "not graded: see the hint above")
                for k, item in enumerate(items)]
    return graded
