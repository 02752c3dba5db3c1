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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Item:
    """One graded claim inside a part.

    Attributes
    ----------
    label : str
    points : float
        Earned.
    max_points : float
    hint : str or None
        Why it failed; None when the item passes.

    Examples
    --------
    >>> Item("the value", 0.0, 2.0, "`v` should be a number, got a list").hint
    '`v` should be a number, got a list'
    """
    label: str
    points: float
    max_points: float
    hint: str | None = None        # None when the item passes


@dataclass
class PartResult:
    """The verdict on one part: ``pass``, ``partial`` or ``fail`` from the checks; the grader
    adds ``missing``, ``error``, ``timeout``, ``output-flood``, ``kernel-died``,
    ``out-of-memory``, ``tampered`` and ``budget``.

    Attributes
    ----------
    part : str
    verdict : str
    points, max_points : float
    hints : list of str
    items : list of Item

    Examples
    --------
    >>> result = PartResult("27.4(a)", "partial", 2.0, 3.0, ["the sum is off"], [Item("sum", 0.0, 1.0, "off")])
    >>> result.line()
    '27.4(a): partial 2/3'
    """
    part: str
    verdict: str
    points: float
    max_points: float
    hints: list = field(default_factory=list)
    items: list = field(default_factory=list)

    def line(self) -> str:
        """The fixed one-line format: ``27.4(a): pass 3/3``.

        Returns
        -------
        str

        Examples
        --------
        >>> PartResult("27.4(a)", "pass", 3.0, 3.0).line()
        '27.4(a): pass 3/3'
        """
        return f"{self.part}: {self.verdict} {self.points:g}/{self.max_points:g}"

    def as_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (the items without their hints).

        Returns
        -------
        dict

        Examples
        --------
        >>> PartResult("27.4(a)", "fail", 0.0, 1.0, ["no"], [Item("value", 0.0, 1.0, "no")]).as_dict()
        {'part': '27.4(a)', 'verdict': 'fail', 'points': 0.0, 'max_points': 1.0, 'hints': ['no'], \
'items': [{'label': 'value', 'points': 0.0, 'max_points': 1.0}]}
        """
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
    the budget, so a budget is also how a part with heavy probes asks for time.

    Made by `part_spec`, which checks the timing.

    Attributes
    ----------
    part : str
    names : tuple of str
    grade : callable
        value -> list of `Item`.
    max_points : float
    probes : dict
        {name: [args, ...]}.
    timing : dict
        {name: (budget seconds, repeats)}.

    Examples
    --------
    >>> spec = PartSpec("1.1(a)", ("total",), lambda value: [], 1.0)
    >>> spec.names, spec.probes
    (('total',), {})
    """
    part: str
    names: tuple
    grade: Callable
    max_points: float
    probes: dict = field(default_factory=dict)
    timing: dict = field(default_factory=dict)


def part_spec(part: str, names: Iterable[str], grade: Callable[..., Any], max_points: float,
              probes: dict[str, Any] | None = None, timing: dict[str, Any] | None = None) -> PartSpec:
    """A `PartSpec`, its timing checked.

    Parameters
    ----------
    part : str
        The part's id.
    names : iterable of str
        The names its grade function reads.
    grade : callable
        value -> list of `Item`.
    max_points : float
    probes : dict, optional
        {name: [args, ...]}, the probe arguments of function-valued answers.
    timing : dict, optional
        {name: (budget seconds, repeats)} for the timed ones.

    Returns
    -------
    PartSpec

    Raises
    ------
    ValueError
        If a timed name has no probes, or a budget or repeat count is not positive.

    Examples
    --------
    >>> spec = part_spec("1.1(a)", ["double"], lambda value: [], 2, probes={"double": [(2,)]},
    ...                  timing={"double": (0.5, 3)})
    >>> spec.max_points, spec.timing
    (2.0, {'double': (0.5, 3)})
    >>> part_spec("1.1(a)", ["f"], lambda value: [], 1, timing={"f": (1, 1)})
    Traceback (most recent call last):
    ...
    ValueError: 1.1(a): timing names 'f', which has no probes
    """
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
    """A reported value of the wrong kind; the message is the hint.

    Examples
    --------
    >>> try:
    ...     as_number("3", "total")
    ... except Wrong as hint:
    ...     print(hint)
    `total` should be a number, got a string
    """


def reported(value: Any, name: str) -> Any:
    """The value reported for `name`.

    Parameters
    ----------
    value : object
        The part's reported answer, ``{name: value}``.
    name : str

    Returns
    -------
    object

    Raises
    ------
    Wrong
        If `name` was not reported, or was reported as an error.

    Examples
    --------
    >>> reported({"total": 3}, "total")
    3
    >>> reported({"total": {"__error__": "`total` is not defined"}}, "total")
    Traceback (most recent call last):
    ...
    labkit.grading.checking.Wrong: `total` is not defined
    """
    if not isinstance(value, dict) or name not in value:
        raise Wrong(f"`{name}` was not reported")
    v = value[name]
    if isinstance(v, dict) and "__error__" in v:
        raise Wrong(str(v["__error__"]))
    return v


def as_number(v: Any, name: str) -> float:
    """A finite number (a list of one number counts as that number).

    Parameters
    ----------
    v : object
    name : str
        For the hint.

    Returns
    -------
    float

    Raises
    ------
    Wrong
        If `v` is not a finite number.

    Examples
    --------
    >>> as_number(3, "total"), as_number([0.5], "total")
    (3.0, 0.5)
    """
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, list) and len(v) == 1:
            return as_number(v[0], name)
        raise Wrong(f"`{name}` should be a number, got {kind_of(v)}")
    if not math.isfinite(v):
        raise Wrong(f"`{name}` is not a finite number")
    return float(v)


def as_array(v: Any, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """An array of finite numbers, of the given shape.

    Parameters
    ----------
    v : object
    name : str
        For the hint.
    shape : tuple of int, optional

    Returns
    -------
    numpy.ndarray of float

    Raises
    ------
    Wrong
        If `v` is not an array of numbers, has another shape, or holds a non-finite value.

    Examples
    --------
    >>> as_array([[1, 2], [3, 4]], "m", shape=(2, 2))
    array([[1., 2.],
           [3., 4.]])
    >>> as_array([1, 2], "m", shape=(2, 2))
    Traceback (most recent call last):
    ...
    labkit.grading.checking.Wrong: `m` should have shape (2, 2), got (2,)
    """
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


def as_distribution(v: Any, name: str, size: int | None = None, tol: float = 1e-6) -> np.ndarray:
    r"""A probability vector: :math:`p_i \ge -\text{tol}` and :math:`|\sum_i p_i - 1| \le \text{tol}`.

    Parameters
    ----------
    v : object
    name : str
        For the hint.
    size : int, optional
    tol : float, default 1e-6

    Returns
    -------
    (size,) numpy.ndarray

    Raises
    ------
    Wrong
        If `v` is not such a vector.

    Examples
    --------
    >>> as_distribution([0.25, 0.75], "sigma")
    array([0.25, 0.75])
    >>> as_distribution([0.5, 0.75], "sigma")
    Traceback (most recent call last):
    ...
    labkit.grading.checking.Wrong: `sigma` should be a probability distribution (nonnegative, summing to 1)
    """
    a = as_array(v, name, None if size is None else (size,))
    if a.ndim != 1:
        raise Wrong(f"`{name}` should be a vector of probabilities, got shape {a.shape}")
    if np.any(a < -tol) or abs(a.sum() - 1) > tol:
        raise Wrong(f"`{name}` should be a probability distribution (nonnegative, summing to 1)")
    return a


def kind_of(v: Any) -> str:
    """What a value is, in a hint's words.

    Parameters
    ----------
    v : object

    Returns
    -------
    str

    Examples
    --------
    >>> kind_of([1]), kind_of(None)
    ('a list', 'None (is a `return` missing?)')
    """
    return {dict: "a dict", list: "a list", str: "a string", bool: "a bool",
            type(None): "None (is a `return` missing?)"}.get(
        type(v), type(v).__name__)


ACTIONS3 = ("a", "b", "c")
RPS = ("rock", "paper", "scissors")


def as_action(v: Any, name: str, names: Sequence[str]) -> int:
    """An action given by its index or its name (case-insensitive).

    Parameters
    ----------
    v : object
    name : str
        For the hint.
    names : sequence of str
        The actions' names, lower case.

    Returns
    -------
    int
        The action's index.

    Raises
    ------
    Wrong
        If `v` is neither.

    Examples
    --------
    >>> as_action("Paper", "move", RPS), as_action(2, "move", RPS)
    (1, 2)
    """
    if isinstance(v, str) and v.strip().lower() in names:
        return names.index(v.strip().lower())
    if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() and 0 <= v < len(names):
        return int(v)
    raise Wrong(f"`{name}` should name an action ({', '.join(names)}) or give its index, got {v!r}")


def as_pair(v: Any, name: str, names: Sequence[str] = ACTIONS3) -> tuple[int, int]:
    """A pair (row action, column action), each by index or name (`as_action`).

    Parameters
    ----------
    v : object
    name : str
        For the hint.
    names : sequence of str, default ("a", "b", "c")

    Returns
    -------
    (int, int)

    Raises
    ------
    Wrong
        If `v` is not a list of two actions.

    Examples
    --------
    >>> as_pair(["a", 2], "profile")
    (0, 2)
    """
    if not isinstance(v, list) or len(v) != 2:
        raise Wrong(f"`{name}` should be a pair (row action, column action), got {kind_of(v)}")
    return as_action(v[0], name, names), as_action(v[1], name, names)


def probe_results(value: Any, name: str, count: int) -> list[Any]:
    """The results of a function-valued answer at its `count` probe arguments.

    Parameters
    ----------
    value : object
        The part's reported answer.
    name : str
    count : int
        How many probes the part has.

    Returns
    -------
    list

    Raises
    ------
    Wrong
        If the results are missing, not `count` of them, or a call raised.

    Examples
    --------
    >>> probe_results({"double": [4, 10]}, "double", 2)
    [4, 10]
    >>> probe_results({"double": [4, {"__error__": "ZeroDivisionError"}]}, "double", 2)
    Traceback (most recent call last):
    ...
    labkit.grading.checking.Wrong: `double` raised ZeroDivisionError
    """
    results = reported(value, name)
    if not isinstance(results, list) or len(results) != count:
        raise Wrong(f"`{name}` could not be evaluated")
    for r in results:
        if isinstance(r, dict) and "__error__" in r:
            raise Wrong(f"`{name}` raised {r['__error__']}")
    return results


class Grader:
    """Collects the items of one part: ``g.item(label, points, test)`` where test() returns
    None (pass) or a hint, or raises Wrong (its message is the hint).

    Parameters
    ----------
    value : object
        The part's reported answer.

    Examples
    --------
    >>> g = Grader({"total": 3})
    >>> g.item("the total", 2, lambda: None if as_number(reported(g.value, "total"), "total") == 3 else "not 3")
    >>> g.item("the mean", 1, lambda: reported(g.value, "mean"))
    >>> [(item.points, item.hint) for item in g.items]
    [(2.0, None), (0.0, '`mean` was not reported')]
    """

    def __init__(self, value: Any):
        self.value = value
        self.items: list[Item] = []

    def item(self, label: str, points: float, test: Callable[[], str | None]) -> None:
        """Grade one item: full `points` when ``test()`` returns None, 0 with its hint otherwise
        (a `Wrong` gives its message; any other exception a hint that names it).

        Parameters
        ----------
        label : str
        points : float
        test : callable
            () -> None or a hint.

        Examples
        --------
        >>> g = Grader({"v": [1, 2]})
        >>> g.item("a number", 1, lambda: as_number(g.value["v"], "v"))
        >>> g.items[0].hint
        '`v` should be a number, got a list'
        """
        try:
            hint = test()
        except Wrong as exc:
            hint = str(exc)
        except Exception as exc:        # a malformed value must never crash the grader
            hint = f"could not read your answer ({type(exc).__name__})"
        self.items.append(Item(label, 0.0 if hint else float(points), float(points), hint))


def close_to(a: Any, b: Any, tol: float = 1e-6) -> bool:
    r"""Equal entry by entry within an absolute tolerance: :math:`|a_i - b_i| \le \text{tol}`.

    Parameters
    ----------
    a, b : array-like
    tol : float, default 1e-6

    Returns
    -------
    bool

    Examples
    --------
    >>> close_to([0.5, 0.25], [0.5, 0.2500001]), close_to(1.0, 1.1)
    (True, False)
    """
    return bool(np.allclose(a, b, rtol=0, atol=tol))


# ------------------------------------------------------------------ timing and own work, as recorded
def recorded(value: Any, key: str, name: str | None = None) -> list[Any] | None:
    """A list the reporter recorded beside the values (``__seconds__``, ``__wall__``, ``__fresh__``,
    ``__busy__``; see `labkit.grading.reporter`) for `name`, or None when it did not.

    Parameters
    ----------
    value : object
        The part's reported answer.
    key : str
        E.g. "__seconds__".
    name : str, optional
        None: the entry under `key` itself (``__own_work__``).

    Returns
    -------
    list or None

    Examples
    --------
    >>> recorded({"__wall__": {"f": [0.1, 0.2]}}, "__wall__", "f"), recorded({}, "__wall__", "f")
    ([0.1, 0.2], None)
    """
    table = value.get(key) if isinstance(value, dict) else None
    entry = table.get(name) if isinstance(table, dict) and name is not None else table
    return entry if isinstance(entry, list) else None


def cpu_seconds(value: Any, name: str) -> list[float | None] | None:
    """CPU seconds of each probe call of `name` (None for a call that raised), or None.

    Parameters
    ----------
    value : object
        The part's reported answer.
    name : str

    Returns
    -------
    list of float or None, or None
        None when nothing was recorded.

    Examples
    --------
    >>> cpu_seconds({"__seconds__": {"f": [0.01, None, "x"]}}, "f")
    [0.01, None, None]
    """
    times = recorded(value, "__seconds__", name)
    if times is None:
        return None
    return [float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None for t in times]


def own_work_findings(value: Any) -> list[dict[str, Any]] | None:
    """The calls into code the part asks the student to write, as recorded.

    Parameters
    ----------
    value : object
        The part's reported answer.

    Returns
    -------
    list of dict or None
        ``{"name", "called", "thread"[, "tampered"]}`` per call, [] when there were none, and
        None when the record has no such entry (a part without an own-work rule).

    Examples
    --------
    >>> own_work_findings({"__own_work__": [{"name": "labkit.CFR", "called": "run", "thread": "main"}]})
    [{'name': 'labkit.CFR', 'called': 'run', 'thread': 'main'}]
    >>> own_work_findings({"total": 3}) is None
    True
    """
    findings = recorded(value, "__own_work__")
    return None if findings is None else [f for f in findings if isinstance(f, dict)]


def own_work_gate(part: str, rule: Any, grade: Callable[[Any], list[Item]]) -> Callable[[Any], list[Item]]:
    """`grade` for a part with an `OwnWork` rule: when the record shows calls into the code the
    part asks for, every item earns 0 and the first one's hint names the call.

    Parameters
    ----------
    part : str
    rule : labkit.grading.own_work.OwnWork
        Its ``summary(part, findings)`` words the hint.
    grade : callable
        The part's grade function, value -> list of `Item`.

    Returns
    -------
    callable
        value -> list of `Item`.

    Examples
    --------
    >>> import types
    >>> rule = types.SimpleNamespace(summary=lambda part, findings: f"{part}: calls {findings[0]['name']}")
    >>> graded = own_work_gate("1.1(a)", rule, lambda value: [Item("value", 1.0, 1.0), Item("shape", 1.0, 1.0)])
    >>> [(item.points, item.hint) for item in graded({"__own_work__": [{"name": "labkit.CFR"}]})]
    [(0.0, '1.1(a): calls labkit.CFR'), (0.0, 'not graded: see the hint above')]
    >>> [item.points for item in graded({"__own_work__": []})]
    [1.0, 1.0]
    """
    def graded(value):
        items = grade(value)
        findings = own_work_findings(value)
        if not findings:
            return items
        hint = rule.summary(part, findings)
        return [Item(item.label, 0.0, item.max_points, hint if k == 0 else "not graded: see the hint above")
                for k, item in enumerate(items)]
    return graded
