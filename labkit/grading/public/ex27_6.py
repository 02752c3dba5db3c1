"""Public checks of exercise 27.6 (the climbing game): lists of joint actions, values, a name."""
from labkit.grading.checking import ACTIONS3
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import (Wrong, action, as_pair, function_results, reported, text,
                                           vector)

SEEDS = [(100,), (101,)]


def _pairs(value):
    pairs = reported(value, "pure_equilibria")
    if not isinstance(pairs, list) or not pairs:
        raise Wrong("`pure_equilibria` should be a non-empty list of pairs such as ('a', 'c')")
    for p in pairs:
        as_pair(p, "pure_equilibria", ACTIONS3)


def _feedback_a(value):
    return FormatChecks(value).item("pure_equilibria is a list of joint actions", lambda: _pairs(value))


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("values_uniform_partner has 3 entries", lambda: vector(value, "values_uniform_partner", (3,)))
    f.item("favoured_row and favoured_column name actions",
           lambda: action(value, "favoured_row", ACTIONS3) or action(value, "favoured_column", ACTIONS3))
    return f


def _feedback_c(value):
    f = FormatChecks(value)
    f.item("independent_learners(seed) returns a joint action",
           lambda: function_results(value, "independent_learners", len(SEEDS),
                                    lambda r, label: as_pair(r, label, ACTIONS3)))
    f.item("pathology is a name", lambda: text(value, "pathology"))
    return f


PARTS = [
    public_part("27.6(a)", ["pure_equilibria"], 1, _feedback_a),
    public_part("27.6(b)", ["values_uniform_partner", "favoured_row", "favoured_column"], 2, _feedback_b),
    public_part("27.6(c)", ["independent_learners", "pathology"], 2, _feedback_c, {"independent_learners": SEEDS}),
]
