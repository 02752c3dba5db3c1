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
from dataclasses import dataclass


@dataclass(frozen=True)
class Costs:
    """Seconds measured for one game: per learner variant, and per evaluation."""
    build: dict         # variant -> seconds to construct one learner (its structures already cached)
    update: dict        # variant -> seconds of one update
    evaluate: float     # seconds of one seat-averaged value (two terminal reaches)
    first_build: dict | None = None   # variant -> seconds of the first construction in a process


def measure_costs(game, variants, learner=None, updates: int = 2) -> Costs:
    """Time `updates` updates (after one untimed warm-up) of each variant on `game`."""
    from labkit.experiments.tournament import _profile, _seat_values, efr_learner, load_game, terminal_reach
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


def predict_seconds(costs: Costs, rows, columns, regime: str, rounds: int, workers: int = 1) -> float:
    """Predicted wall-clock seconds of `efr_tournament` with these costs.

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
    """
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
    """'40 s', '3.5 min', '2.1 h'."""
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


__all__ = ["Costs", "measure_costs", "predict_seconds", "format_seconds"]
