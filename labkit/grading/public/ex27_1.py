"""Public checks of exercise 27.1 (no-regret learning): shapes, strategies on the simplex, finite numbers."""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, as_number, probe_results

GAME = np.array([[1.0, -1.0, 0.5], [-0.5, 0.5, 0.0]])      # any small game does: only shapes are checked
ROUNDS = 50
_rng = np.random.default_rng(11)
XS, YS = _rng.dirichlet(np.ones(2), size=ROUNDS), _rng.dirichlet(np.ones(3), size=ROUNDS)


def _strategies(run):
    if not isinstance(run, list) or len(run) != 2:
        raise Wrong("`learn(A, T)` should return a pair (xs, ys)")
    for block, cols, label in ((run[0], 2, "xs"), (run[1], 3, "ys")):
        a = as_array(block, label, (ROUNDS, cols))
        if np.any(a < -1e-9) or not np.allclose(a.sum(axis=1), 1, atol=1e-6):
            raise Wrong(f"every row of {label} must be a mixed strategy (nonnegative, summing to 1)")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("learn returns (T, m) and (T, k) strategies", lambda: _strategies(probe_results(value, "learn", 1)[0]))
    f.item("regrets returns two numbers",
           lambda: as_array(probe_results(value, "regrets", 1)[0], "regrets(A, xs, ys)", (2,)) is None)

    def gap():
        d = as_number(probe_results(value, "duality_gap", 1)[0], "duality_gap(A, x_bar, y_bar)")
        if d < -1e-9:
            raise Wrong("a duality gap is never negative: max_x x^T A y_bar >= x_bar^T A y_bar >= min_y x_bar^T A y")
    f.item("duality_gap returns a number >= 0", gap)
    return f


def _feedback_b(value):
    f = FormatChecks(value)

    def bracket():
        lower, upper = as_array(probe_results(value, "value_bracket", 1)[0], "value_bracket(A, T)", (2,))
        if lower > upper + 1e-9:
            raise Wrong("the lower end of the bracket is above the upper end")
    f.item("value_bracket returns (lower, upper) with lower <= upper", bracket)
    return f


PARTS = [
    public_part("27.1(a)", ["learn", "regrets", "duality_gap"], 4, _feedback_a,
                {"learn": [(GAME, ROUNDS)], "regrets": [(GAME, XS, YS)],
                 "duality_gap": [(GAME, XS.mean(axis=0), YS.mean(axis=0))]}),
    public_part("27.1(b)", ["value_bracket"], 2, _feedback_b, {"value_bracket": [(GAME, 300)]}),
]
