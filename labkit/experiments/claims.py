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


# (stronger, weaker): the landscape's arrows among the implemented types
STRONGER_THAN = (("bhv", "tips"), ("tips", "csps"), ("tips", "cfps"), ("csps", "act_in"), ("csps", "bps"),
                 ("cfps", "act_in"), ("cfps", "bps"), ("cfps", "cf_in"), ("bps", "cf"), ("cf_in", "cf"))
SAME_PLACE = {"cf_ex+in": "cf_in", "cfps_ex+in": "cfps", "tips_ex+in": "tips"}


def _closure(pairs):
    stronger = {}
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


def is_stronger(a, b):
    """Whether type `a` contains type `b` (strictly), through the landscape's arrows."""
    a, b = SAME_PLACE.get(a, a), SAME_PLACE.get(b, b)
    return (a, b) in COMPARABLE


def averages(result, units=None):
    """{variant: mean over all partners and rounds} in `units` (the paper's avg column)."""
    return dict(zip(result.rows, result.with_averages(units or result.units)[:-1, -1]))


def ordering_agreement(result, units=None):
    """(agreeing, comparable pairs, the disagreeing pairs with their gaps): over every pair of
    the result's rows where one type contains the other, how often the stronger learner's avg is
    at least the weaker one's. Disagreements come as (stronger, weaker, avg gap), largest first."""
    avg = averages(result, units)
    pairs = [(a, b) for a, b in itertools.permutations(result.rows, 2) if is_stronger(a, b)]
    wrong = sorted(((a, b, float(avg[a] - avg[b])) for a, b in pairs if avg[a] < avg[b]), key=lambda x: x[2])
    return len(pairs) - len(wrong), len(pairs), wrong


def best_variant(result, units=None):
    """The row with the highest avg."""
    avg = averages(result, units)
    return max(avg, key=avg.get)


def rank_of(result, name, units=None):
    """1 for the best avg, len(rows) for the worst."""
    avg = averages(result, units)
    return 1 + sum(v > avg[name] for v in avg.values())


def early_and_late(result, early=range(1, 6), late_rounds=100, units=None):
    """({variant: partner-averaged payoff over rounds `early`}, spread of the partner-averaged
    payoff over the last `late_rounds` rounds: max over variants minus min)."""
    from labkit.experiments.plot import partner_average
    per_round = partner_average(result, units, running=False)
    first = {name: float(per_round[k, list(early)].mean()) for k, name in enumerate(result.rows)}
    last = per_round[:, -late_rounds:].mean(axis=1)
    return first, float(last.max() - last.min())


__all__ = ["STRONGER_THAN", "COMPARABLE", "is_stronger", "averages", "ordering_agreement", "best_variant",
           "rank_of", "early_and_late"]
