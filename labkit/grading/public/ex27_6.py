"""Public checks of exercise 27.6 (the climbing game): lists of joint actions, values, a name, and
what must hold of them, read off the game's matrix (public in labkit): each listed pair is an
equilibrium (neither agent gains by changing its action alone), each action's value against a
uniform partner lies between the worst and the best payoff of its row, the favoured actions are the
ones with the largest values, and independent learners miss the optimum (a, a) on some public
seeds (the grader runs its own seeds).
"""
import numpy as np

from labkit.grading.checking import ACTIONS3
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import (Wrong, action, as_array, as_pair, function_results, probe_results,
                                           reported, text, vector)

SEEDS = [(100,), (101,), (102,), (103,)]


def _matrix():
    import labkit as lk
    return lk.games.climbing_game().A


def _equilibria(value):
    A = _matrix()
    for pair in reported(value, "pure_equilibria"):
        r, c = ACTIONS3.index(pair[0]), ACTIONS3.index(pair[1])
        if A[r, c] < A[:, c].max() or A[r, c] < A[r, :].max():
            raise Wrong(f"{tuple(pair)} is not an equilibrium: one agent gains by changing its action alone")


def _uniform_values(value):
    A = _matrix()
    values = as_array(reported(value, "values_uniform_partner"), "values_uniform_partner", (3,))
    if np.any(values < A.min(axis=1) - 1e-9) or np.any(values > A.max(axis=1) + 1e-9):
        raise Wrong("against a uniform partner an action earns an average of its row's payoffs, which lies between "
                    "the row's smallest and largest payoff")
    if values[ACTIONS3.index(reported(value, "favoured_row"))] < values.max() - 1e-9:
        raise Wrong("`favoured_row` should be the action with the largest value in `values_uniform_partner`")


def _misses(value):
    ends = [tuple(r) for r in probe_results(value, "independent_learners", len(SEEDS))]
    if all(end == ("a", "a") for end in ends):
        raise Wrong(f"your learners found the optimum (a, a) on all {len(SEEDS)} public seeds: independent learners "
                    "that each treat the other as part of the environment, exploring at random early on, are "
                    "expected to miss it")


def _pairs(value):
    pairs = reported(value, "pure_equilibria")
    if not isinstance(pairs, list) or not pairs:
        raise Wrong("`pure_equilibria` should be a non-empty list of pairs such as ('a', 'c')")
    for p in pairs:
        as_pair(p, "pure_equilibria", ACTIONS3)


def _feedback_a(value):
    return FormatChecks(value).item("pure_equilibria is a list of joint actions", lambda: _pairs(value)).item(
        "each listed pair is an equilibrium", lambda: _equilibria(value))


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("values_uniform_partner has 3 entries", lambda: vector(value, "values_uniform_partner", (3,)))
    f.item("favoured_row and favoured_column name actions",
           lambda: action(value, "favoured_row", ACTIONS3) or action(value, "favoured_column", ACTIONS3))
    f.item("the values are row averages, the favoured row the best", lambda: _uniform_values(value))
    return f


def _feedback_c(value):
    f = FormatChecks(value)
    f.item("independent_learners(seed) returns a joint action",
           lambda: function_results(value, "independent_learners", len(SEEDS),
                                    lambda r, label: as_pair(r, label, ACTIONS3)))
    f.item("the learners miss (a, a) on some public seed", lambda: _misses(value))
    f.item("pathology is a name", lambda: text(value, "pathology"))
    return f


PARTS = [
    public_part("27.6(a)", ["pure_equilibria"], 1, _feedback_a),
    public_part("27.6(b)", ["values_uniform_partner", "favoured_row", "favoured_column"], 2, _feedback_b),
    public_part("27.6(c)", ["independent_learners", "pathology"], 2, _feedback_c, {"independent_learners": SEEDS}),
]
