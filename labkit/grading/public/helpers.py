"""Small format tests the public checks share (each returns None or raises `Wrong`)."""
from __future__ import annotations

import numpy as np

from labkit.grading.checking import (Wrong, as_action, as_array, as_distribution, as_number, as_pair, kind_of,
                                     probe_results, reported)

__all__ = ["number", "vector", "distribution", "series", "action", "pair", "text", "function_results", "close",
           "shown", "expect",
           "policy_table", "Wrong", "as_array", "as_number", "as_pair", "reported", "probe_results"]


def number(value, name, low=None, high=None):
    v = as_number(reported(value, name), name)
    if (low is not None and v < low - 1e-9) or (high is not None and v > high + 1e-9):
        raise Wrong(f"`{name}` should lie in [{low if low is not None else '-inf'}, "
                    f"{high if high is not None else 'inf'}]")


def vector(value, name, shape):
    as_array(reported(value, name), name, shape)


def distribution(value, name, size):
    as_distribution(reported(value, name), name, size)


def series(value, name, min_length=20, nonnegative=True):
    d = as_array(reported(value, name), name)
    if d.ndim != 1 or len(d) < min_length:
        raise Wrong(f"`{name}` should be a 1-D sequence of {min_length} or more numbers, got shape {d.shape}")
    if nonnegative and np.any(d < -1e-12):
        raise Wrong(f"`{name}` holds divergences, which are never negative")


def action(value, name, names):
    as_action(reported(value, name), name, names)


def pair(value, name, names):
    as_pair(reported(value, name), name, names)


def text(value, name):
    t = reported(value, name)
    if not isinstance(t, str) or not t.strip():
        raise Wrong(f"`{name}` should be a non-empty string, got {kind_of(t)}")


def function_results(value, name, count, each):
    """Call ``each(result, label)`` on every result of a function-valued answer."""
    for result in probe_results(value, name, count):
        each(result, f"{name}(...)")


def policy_table(table, name, keys, actions=("pass", "bet"), complete=True):
    """A {infoset key: distribution over actions} table, as lists or as {action: probability}."""
    if not isinstance(table, dict):
        raise Wrong(f"`{name}` should be a dict {{infoset key: probabilities}}, got {kind_of(table)}")
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise Wrong(f"`{name}` has keys that are not infosets of the game: {unknown[:3]}")
    if complete and set(table) != set(keys):
        raise Wrong(f"`{name}` should give a distribution at all {len(keys)} infosets")
    for key, row in table.items():
        if isinstance(row, dict):
            row = [row.get(a, 0.0) for a in actions]
        as_distribution(row, f"{name}[{key!r}]", len(actions))


def close(got, want, tol=1e-6):
    """True when two numbers or arrays agree to `tol` (absolute, per entry)."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return got.shape == want.shape and bool(np.all(np.abs(got - want) <= tol))


def shown(x, digits=4):
    """A number or an array as the hint prints it (rounded, no numpy noise)."""
    a = np.round(np.asarray(x, dtype=float), digits) + 0.0
    return f"{a.item():g}" if a.ndim == 0 else str(a.tolist())


def expect(got, want, call, why, tol=1e-6):
    """A value test on a public case: `got` (the student's result of `call`) must equal `want`, a
    closed form stated in the public check; otherwise `Wrong` says what came back, what this case
    gives, and `why` (where to look)."""
    if not close(got, want, tol):
        raise Wrong(f"`{call}` gave {shown(got)}, this case gives {shown(want)}: {why}")
