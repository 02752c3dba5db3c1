"""The paper's qualitative claims about its tables, as measurements on a TournamentResult.

Section 7 and Appendix E of Morrill et al. (2021) summarise the nine games in words:

1. stronger deviation types tend to beat weaker ones (`ordering_agreement`);
2. behavioral deviations (BHV) often perform best (`best_variant`);
3. the informed action learner (ACT_IN) does poorly, particularly in two-player zero-sum games
   (`rank_of`);
4. three-player goofspiel with a descending deck is an outlier: counterfactual and blind
   partial sequence learners win early, and all variants soon reach about the same payoff
   (`early_and_late`).

"Stronger" is the partial order of the deviation landscape (paper, Figure 1; chapter 6):
a type that contains another gives its learner every deviation of the weaker one. The
"EX+IN" variants use the same deviations as their internal versions with the external
transformations added, so they inherit their places.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np

from labkit._messages import show
from labkit.experiments.results import TournamentResult

# (stronger, weaker): the landscape's arrows among the implemented types
STRONGER_THAN = (("bhv", "tips"), ("tips", "csps"), ("tips", "cfps"), ("csps", "act_in"), ("csps", "bps"),
                 ("cfps", "act_in"), ("cfps", "bps"), ("cfps", "cf_in"), ("bps", "cf"), ("cf_in", "cf"))
SAME_PLACE = {"cf_ex+in": "cf_in", "cfps_ex+in": "cfps", "tips_ex+in": "tips"}


def _closure(pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    stronger: dict[str, set[str]] = {}
    for a, b in pairs:
        stronger.setdefault(a, set()).add(b)
    changed = True
    while changed:
        changed = False
        for a in list(stronger):
            for b in list(stronger[a]):
                extra = stronger.get(b, set()) - stronger[a]
                if extra:
                    stronger[a] |= extra
                    changed = True
    return {(a, b) for a, weaker in stronger.items() for b in weaker}


COMPARABLE = frozenset(_closure(STRONGER_THAN))


def is_stronger(a: str, b: str) -> bool:
    """Whether deviation type `a` contains type `b` (strictly), through the landscape's arrows.

    Parameters
    ----------
    a, b : str
        Deviation type names (`labkit.efr.DEVIATION_NAMES`).

    Returns
    -------
    bool
        False also when the two are not comparable.

    Examples
    --------
    >>> is_stronger("bhv", "cf"), is_stronger("cf", "bhv"), is_stronger("bps", "cf_in")
    (True, False, False)
    """
    a, b = SAME_PLACE.get(a, a), SAME_PLACE.get(b, b)
    return (a, b) in COMPARABLE


def _result(result: Any) -> TournamentResult:
    if not isinstance(result, TournamentResult):
        raise TypeError(f"result must be a labkit.experiments.TournamentResult, got {type(result).__name__}")
    return result


def averages(result: TournamentResult, units: str | None = None) -> dict[str, float]:
    """The paper's avg column: every row's mean over all partners and rounds.

    Parameters
    ----------
    result : TournamentResult
    units : str, optional
        One of `labkit.experiments.UNITS` (default: the game's own, `TournamentResult.units`).

    Returns
    -------
    dict of str to float
        {row variant: average}.

    Raises
    ------
    TypeError, ValueError
        For something other than a TournamentResult, or unknown units.

    Examples
    --------
    >>> from labkit.experiments import TournamentResult
    >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
    ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
    ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
    >>> averages(result)
    {'cf': -0.1, 'bhv': 0.1}
    """
    result = _result(result)
    return {row: float(value) for row, value in
            zip(result.rows, result.with_averages(units or result.units)[:-1, -1], strict=True)}


def ordering_agreement(result: TournamentResult,
                       units: str | None = None) -> tuple[int, int, list[tuple[str, str, float]]]:
    """How often a stronger deviation type's learner has at least the weaker one's average.

    Over every ordered pair of the result's rows where one type contains the other
    (`is_stronger`).

    Parameters
    ----------
    result : TournamentResult
    units : str, optional
        As `averages`.

    Returns
    -------
    agreeing : int
        Pairs where the stronger type's average is at least the weaker one's.
    comparable : int
        Pairs where one type contains the other.
    disagreements : list of (str, str, float)
        (stronger, weaker, average gap), the largest gap first.

    Raises
    ------
    TypeError, ValueError
        As `averages`.

    Examples
    --------
    >>> from labkit.experiments import TournamentResult
    >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
    ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
    ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
    >>> ordering_agreement(result)
    (1, 1, [])
    """
    avg = averages(result, units)
    pairs = [(a, b) for a, b in itertools.permutations(result.rows, 2) if is_stronger(a, b)]
    wrong = sorted(((a, b, float(avg[a] - avg[b])) for a, b in pairs if avg[a] < avg[b]), key=lambda x: x[2])
    return len(pairs) - len(wrong), len(pairs), wrong


def best_variant(result: TournamentResult, units: str | None = None) -> str:
    """The row with the highest average (the paper's avg column).

    Parameters
    ----------
    result : TournamentResult
    units : str, optional
        As `averages`.

    Returns
    -------
    str

    Raises
    ------
    TypeError, ValueError
        As `averages`.

    Examples
    --------
    >>> from labkit.experiments import TournamentResult
    >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
    ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
    ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
    >>> best_variant(result)
    'bhv'
    """
    avg = averages(result, units)
    return max(avg, key=lambda name: avg[name])


def rank_of(result: TournamentResult, name: str, units: str | None = None) -> int:
    """The rank of one row by its average: 1 for the best, len(rows) for the worst.

    Parameters
    ----------
    result : TournamentResult
    name : str
        One of the result's rows.
    units : str, optional
        As `averages`.

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        As `averages`, and for a name that is not a row of the result.

    Examples
    --------
    >>> from labkit.experiments import TournamentResult
    >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
    ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
    ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
    >>> rank_of(result, "cf")
    2
    """
    avg = averages(result, units)
    if name not in avg:
        raise ValueError(f"{show(name)} is not a row of this result; its rows are {list(avg)}")
    return 1 + sum(v > avg[name] for v in avg.values())


def early_and_late(result: TournamentResult, early: Iterable[int] = range(1, 6), late_rounds: int = 100,
                   units: str | None = None) -> tuple[dict[str, float], float]:
    """What each learner earns early, and how far apart the learners end up.

    Parameters
    ----------
    result : TournamentResult
    early : iterable of int
        Rounds (0-based, each below result.rounds) averaged for the first return value.
    late_rounds : int
        The last rounds averaged for the spread (at least 1; all rounds if there are fewer).
    units : str, optional
        As `averages`.

    Returns
    -------
    early : dict of str to float
        {row: its partner-averaged payoff over the rounds `early`}.
    spread : float
        max minus min over the rows of the partner-averaged payoff over the last `late_rounds`.

    Raises
    ------
    TypeError, ValueError
        As `averages`, for early rounds outside 0..rounds-1 (or none), or late_rounds < 1.

    Examples
    --------
    >>> from labkit.experiments import TournamentResult
    >>> result = TournamentResult("kuhn_poker", "fixed", 2, ["cf", "bhv"], ["cf", "bhv"],
    ...                           {"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]},
    ...                            "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})
    >>> early_and_late(result, early=[0], late_rounds=1)
    ({'cf': -0.05, 'bhv': 0.05}, 0.3)
    """
    from labkit.experiments.plot import partner_average
    result = _result(result)
    rounds = list(early) if isinstance(early, Iterable) else None
    if not rounds or any(isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer))
                         or not 0 <= t < result.rounds for t in rounds):
        raise ValueError(f"early must be a non-empty sequence of rounds in 0..{result.rounds - 1}, got {show(early)}")
    if isinstance(late_rounds, (bool, np.bool_)) or not isinstance(late_rounds, (int, np.integer)) or late_rounds < 1:
        raise ValueError(f"late_rounds must be a positive integer, got {show(late_rounds)}")
    per_round = partner_average(result, units, running=False)
    first = {name: float(per_round[k, rounds].mean()) for k, name in enumerate(result.rows)}
    last = per_round[:, -int(late_rounds):].mean(axis=1)
    return first, float(last.max() - last.min())


__all__ = ["STRONGER_THAN", "COMPARABLE", "is_stronger", "averages", "ordering_agreement", "best_variant",
           "rank_of", "early_and_late"]
