"""How long a tournament will take, predicted from a few timed updates of each learner.

`efr_tournament` spends nearly all of its time in the learners' updates and in the per-round
evaluation, and both cost the same in every round (EFR's arrays have a fixed size). So a
probe times, for each variant, the construction of one learner and a few updates; the
prediction multiplies those costs by the work each regime does:

* fixed regime, for each column c: R rounds of c's self-play update, of every other row's
  update, and of one evaluation per row;
* simultaneous regime, for each unordered pair {r, c}: R rounds of both updates and both
  evaluations (one of each when r = c: a learner in self-play);

and spreads the total over the workers, never below the longest single work unit; each worker
also pays once for the first construction of each variant (what later constructions reuse).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from labkit._messages import show


@dataclass(frozen=True)
class Costs:
    """Seconds measured for one game: per learner variant, and per evaluation.

    Attributes
    ----------
    build : dict of str to float
        Seconds to construct one learner of each variant (its structures already cached).
    update : dict of str to float
        Seconds of one update of each variant.
    evaluate : float
        Seconds of one seat-averaged value (two terminal reaches).
    first_build : dict of str to float, optional
        Seconds of the first construction of each variant in a process (default: `build`).

    Examples
    --------
    >>> costs = Costs(build={"cf": 0.01}, update={"cf": 0.002}, evaluate=0.001)
    >>> round(predict_seconds(costs, ["cf"], ["cf"], "fixed", rounds=101), 6)      # 0.01 + 100 * 0.002 + 101 * 0.001
    0.311
    """
    build: dict
    update: dict
    evaluate: float
    first_build: dict | None = None


def measure_costs(game: Any, variants: Sequence[str], learner: Callable[..., Any] | None = None,
                  updates: int = 2) -> Costs:
    """Time the construction and the updates of each variant on `game`.

    Each variant is built twice (the first also builds what later ones reuse) and updated
    `updates` times after one untimed warm-up; one seat-averaged evaluation is timed `updates`
    times.

    Parameters
    ----------
    game : str or GameTree
        As `labkit.experiments.load_game` reads it.
    variants : sequence of str
        Deviation type names (repeats are timed once).
    learner : callable (game, name) -> learner, optional
        Default `labkit.experiments.efr_learner`.
    updates : int
        Timed updates per variant (at least 1).

    Returns
    -------
    Costs

    Raises
    ------
    ValueError
        For updates < 1, no variants, or an unknown game or variant.

    Examples
    --------
    >>> costs = measure_costs("kuhn_poker", ["cf", "bps"], updates=1)
    >>> sorted(costs.update), costs.evaluate > 0
    (['bps', 'cf'], True)
    """
    from labkit.experiments.tournament import _profile, _seat_values, efr_learner, load_game, terminal_reach
    if isinstance(updates, (bool, np.bool_)) or not isinstance(updates, (int, np.integer)) or updates < 1:
        raise ValueError(f"updates must be a positive integer, got {show(updates)}")
    if isinstance(variants, str) or not list(variants):
        raise ValueError(f"variants must be a non-empty sequence of deviation type names, got {show(variants)}")
    learner = learner or efr_learner
    tree = load_game(game)
    build, update = {}, {}
    first = {}
    for name in dict.fromkeys(variants):
        start = time.perf_counter()
        learner(tree, name)           # the first one also builds what later ones reuse
        first[name] = time.perf_counter() - start
        start = time.perf_counter()
        one = learner(tree, name)
        build[name] = time.perf_counter() - start
        profile = _profile(one)
        one.update(profile)                      # warm-up: first-use caches
        start = time.perf_counter()
        for _ in range(updates):
            one.update(profile)
        update[name] = (time.perf_counter() - start) / updates
    start = time.perf_counter()
    for _ in range(updates):
        reach = terminal_reach(tree, profile)
        _seat_values(tree, reach, reach)
    return Costs(build, update, (time.perf_counter() - start) / updates, first)


def predict_seconds(costs: Costs, rows: Sequence[str], columns: Sequence[str], regime: str, rounds: int,
                    workers: int = 1) -> float:
    """Predicted wall-clock seconds of `efr_tournament` with these costs (module docstring).

    Parameters
    ----------
    costs : Costs
        From `measure_costs` (or any numbers, for a what-if).
    rows, columns : sequences of variant names
    regime : "fixed" or "simultaneous"
    rounds : int
        R, the recorded rounds; R - 1 updates follow them.
    workers : int
        Processes sharing the work units.

    Returns
    -------
    float
        max(total / workers, longest unit) + the first constructions' extra: units are
        scheduled onto workers as they free up, and each worker builds each variant's
        structures once.

    Raises
    ------
    TypeError, ValueError
        For costs that are not a `Costs`, a variant without a measured cost, an unknown regime,
        rounds < 1 or workers < 1.

    Examples
    --------
    >>> costs = Costs(build={"cf": 0.01, "bhv": 0.05}, update={"cf": 0.002, "bhv": 0.01}, evaluate=0.001)
    >>> round(predict_seconds(costs, ["cf", "bhv"], ["cf", "bhv"], "simultaneous", rounds=100, workers=2), 6)
    1.448
    """
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a labkit.experiments.estimate.Costs, got {type(costs).__name__}")
    for name, value in (("rounds", rounds), ("workers", workers)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {show(value)}")
    unmeasured = sorted({*rows, *columns} - (set(costs.build) & set(costs.update)))
    if unmeasured:
        raise ValueError(f"no measured cost for the variants {unmeasured}; measure_costs must time them")
    steps = max(int(rounds) - 1, 0)
    units = []
    if regime == "fixed":
        for c in columns:
            others = [r for r in rows if r != c]
            units.append(costs.build[c] + sum(costs.build[r] for r in others)
                         + steps * (costs.update[c] + sum(costs.update[r] for r in others))
                         + rounds * len(rows) * costs.evaluate)
    elif regime == "simultaneous":
        pairs = []
        for r in rows:
            for c in columns:
                if (r, c) not in pairs and (c, r) not in pairs:
                    pairs.append((r, c))
        for r, c in pairs:
            learners = {r, c}       # a variant against itself is one learner in self-play
            units.append(sum(costs.build[v] + steps * costs.update[v] for v in learners)
                         + len(learners) * rounds * costs.evaluate)
    else:
        raise ValueError(f"regime must be 'fixed' or 'simultaneous', got {regime!r}")
    if not units:
        return 0.0
    # every worker process builds each variant's structures once, in its first unit
    first = costs.first_build or costs.build
    once = sum(max(first[v] - costs.build[v], 0.0) for v in {*rows, *columns})
    return float(max(sum(units) / max(int(workers), 1), max(units)) + once)


def format_seconds(seconds: float) -> str:
    """A duration as a reader wants it: '40 s', '3.5 min', '2.1 h'.

    Parameters
    ----------
    seconds : float

    Returns
    -------
    str
        Whole seconds below 90 s (at least "1 s"), minutes below 90 min, hours above.

    Examples
    --------
    >>> format_seconds(0.2), format_seconds(40), format_seconds(210), format_seconds(7560)
    ('1 s', '40 s', '3.5 min', '2.1 h')
    """
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


__all__ = ["Costs", "measure_costs", "predict_seconds", "format_seconds"]
