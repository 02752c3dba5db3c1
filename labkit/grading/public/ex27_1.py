"""Public checks of exercise 27.1 (no-regret learning): shapes and strategies on the simplex on a
small game, and values on matching pennies and a 2x2 game worked out by hand (the grader's games
are other ones).

Matching pennies, A = [[1, -1], [-1, 1]]. Two rounds, player 1 plays the first row both times,
player 2 the first column and then the second: player 1 earns 1 - 1 = 0, and either fixed row
earns 0 against one column of each, so R1 = 0; player 2 earned 0, and the second column would
have earned 1 in each round against the first row, so R2 = 2 - 0 = 2 (totals, not averages). At
x_bar = y_bar = first action: max_x x^T A y_bar = 1, min_y x_bar^T A y = -1, gap 2; at the uniform
strategies (the equilibrium) the gap is 0.

The game [[3, -1], [-2, 1]] has no saddle point. Its equilibrium makes the other player indifferent:
3 x1 - 2 x2 = -x1 + x2 gives x = (3/7, 4/7), and 3 y1 - y2 = -2 y1 + y2 gives y = (2/7, 5/7); the value
is 3 (2/7) - 5/7 = 1/7. Self-play of two no-regret learners has averages near (x, y), and a bracket
of the averages must hold the value.
"""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, as_number, expect, probe_results

GAME = np.array([[1.0, -1.0, 0.5], [-0.5, 0.5, 0.0]])      # a small game for the shapes
ROUNDS = 50
_rng = np.random.default_rng(11)
XS, YS = _rng.dirichlet(np.ones(2), size=ROUNDS), _rng.dirichlet(np.ones(3), size=ROUNDS)

PENNIES = np.array([[1.0, -1.0], [-1.0, 1.0]])
TWO_ROUNDS = (np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]))
TWO_ROUND_REGRETS = (0.0, 2.0)
FIRST, HALF = np.array([1.0, 0.0]), np.array([0.5, 0.5])
GAPS = [2.0, 0.0]                        # at (FIRST, FIRST) and at (HALF, HALF)
NO_SADDLE = np.array([[3.0, -1.0], [-2.0, 1.0]])
NO_SADDLE_VALUE = 1 / 7
NO_SADDLE_EQUILIBRIUM = [3 / 7, 4 / 7, 2 / 7, 5 / 7]        # x, then y
LEARN_ROUNDS = 400
BRACKET_ROUNDS = 1000


def _strategies(run):
    if not isinstance(run, list) or len(run) != 2:
        raise Wrong("`learn(A, T)` should return a pair (xs, ys)")
    for block, cols, label in ((run[0], 2, "xs"), (run[1], 3, "ys")):
        a = as_array(block, label, (ROUNDS, cols))
        if np.any(a < -1e-9) or not np.allclose(a.sum(axis=1), 1, atol=1e-6):
            raise Wrong(f"every row of {label} must be a mixed strategy (nonnegative, summing to 1)")


def _averages(value):
    run = probe_results(value, "learn", 2)[1]
    if not isinstance(run, list) or len(run) != 2:
        raise Wrong("`learn(A, T)` should return a pair (xs, ys)")
    xs = as_array(run[0], "xs", (LEARN_ROUNDS, 2))
    ys = as_array(run[1], "ys", (LEARN_ROUNDS, 2))
    expect(np.concatenate([xs.mean(axis=0), ys.mean(axis=0)]), NO_SADDLE_EQUILIBRIUM,
           f"learn([[3, -1], [-2, 1]], {LEARN_ROUNDS}) averaged over the rounds",
           "the equilibrium of this game is x = (3/7, 4/7), y = (2/7, 5/7), and the averages of two no-regret "
           "learners approach it; check the signs (player 2's payoff is -x^T A y)", tol=0.1)


def _regret_case(value):
    got = as_array(probe_results(value, "regrets", 2)[1], "regrets(A, xs, ys)", (2,))
    expect(got, TWO_ROUND_REGRETS, "regrets(pennies, two rounds)",
           "each regret is a total over the rounds (not an average): the best fixed strategy's total payoff "
           "minus the player's own, player 2's payoffs being -x^T A y")


def _gap_cases(value):
    for (label, got, want) in zip(("first actions", "uniform"), probe_results(value, "duality_gap", 3)[1:], GAPS,
                                    strict=False):
        expect(as_number(got, "duality_gap(A, x_bar, y_bar)"), want, f"duality_gap(pennies, {label})",
               "max over x of x^T A y_bar, minus min over y of x_bar^T A y")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("learn returns (T, m) and (T, k) strategies", lambda: _strategies(probe_results(value, "learn", 2)[0]))
    f.item("learn's averages near the equilibrium of a 2x2 game", lambda: _averages(value))
    f.item("regrets returns two numbers",
           lambda: as_array(probe_results(value, "regrets", 2)[0], "regrets(A, xs, ys)", (2,)) is None)
    f.item("regrets (0, 2) for two hand-played rounds", lambda: _regret_case(value))

    def gap():
        d = as_number(probe_results(value, "duality_gap", 3)[0], "duality_gap(A, x_bar, y_bar)")
        if d < -1e-9:
            raise Wrong("a duality gap is never negative: max_x x^T A y_bar >= x_bar^T A y_bar >= min_y x_bar^T A y")
    f.item("duality_gap returns a number >= 0", gap)
    f.item("duality_gap 2 and 0 in matching pennies", lambda: _gap_cases(value))
    return f


def _feedback_b(value):
    f = FormatChecks(value)

    def bracket():
        lower, upper = as_array(probe_results(value, "value_bracket", 1)[0], "value_bracket(A, T)", (2,))
        if lower > upper + 1e-9:
            raise Wrong("the lower end of the bracket is above the upper end")
        if not lower - 1e-9 <= NO_SADDLE_VALUE <= upper + 1e-9:
            raise Wrong(f"the game [[3, -1], [-2, 1]] has the value 1/7, and your bracket ({lower:.4f}, "
                        f"{upper:.4f}) does not hold it: the lower end is min over y of x_bar^T A y, the upper end "
                        "max over x of x^T A y_bar")
        if upper - lower > 0.25:
            raise Wrong(f"after {BRACKET_ROUNDS} rounds your bracket on [[3, -1], [-2, 1]] is {upper - lower:.3f} "
                        "wide: the width is the average regret (R1 + R2) / T, which a no-regret learner drives to 0")
    f.item("value_bracket holds the value 1/7 of a 2x2 game", bracket)
    return f


PARTS = [
    public_part("27.1(a)", ["learn", "regrets", "duality_gap"], 4, _feedback_a,
                {"learn": [(GAME, ROUNDS), (NO_SADDLE, LEARN_ROUNDS)],
                 "regrets": [(GAME, XS, YS), (PENNIES, *TWO_ROUNDS)],
                 "duality_gap": [(GAME, XS.mean(axis=0), YS.mean(axis=0)), (PENNIES, FIRST, FIRST),
                                 (PENNIES, HALF, HALF)]}),
    public_part("27.1(b)", ["value_bracket"], 2, _feedback_b, {"value_bracket": [(NO_SADDLE, BRACKET_ROUNDS)]}),
]
