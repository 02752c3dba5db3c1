"""Exercise 27.1: a no-regret learner in self-play finds the value of a zero-sum game.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex27_1.py).
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import Grader, Wrong, as_array, as_number, close_to, part_spec, probe_results
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, written

LEARN_TEMPLATE = '''
def learn(A, T):
    """Self-play of your no-regret learner on the zero-sum game A (payoffs to player 1).

    Returns (xs, ys): arrays of shape (T, m) and (T, k), the two players' mixed
    strategies in rounds 1, ..., T."""
    ...


def regrets(A, xs, ys):
    """(R1, R2): the two players' external regrets after the rounds in xs and ys."""
    ...


def duality_gap(A, x_bar, y_bar):
    """max_x x^T A y_bar - min_y x_bar^T A y."""
    ...
'''

LEARN_SOLUTION = '''
def learn(A, T):
    """Hedge against Hedge: each player weights its actions by
    exp(step * cumulative payoff)."""
    m, k = A.shape
    spread = A.max() - A.min() or 1.0
    step = np.sqrt(8 * np.log(max(m, k)) / T) / spread  # Hedge's regret-bound step
    cum_x, cum_y = np.zeros(m), np.zeros(k)  # cumulative payoff of every action
    xs, ys = np.empty((T, m)), np.empty((T, k))
    for t in range(T):
        x = np.exp(step * (cum_x - cum_x.max()))
        y = np.exp(step * (cum_y - cum_y.max()))
        xs[t], ys[t] = x / x.sum(), y / y.sum()
        cum_x += A @ ys[t]
        cum_y -= A.T @ xs[t]
    return xs, ys


def regrets(A, xs, ys):
    realized = np.einsum("ti,ij,tj->", xs, A, ys)  # sum_t x_t^T A y_t
    r1 = np.max(A @ ys.sum(axis=0)) - realized
    r2 = np.max(-(xs.sum(axis=0) @ A)) + realized
    return r1, r2


def duality_gap(A, x_bar, y_bar):
    return np.max(A @ y_bar) - np.min(x_bar @ A)


A = lk.games.biased_rock_paper_scissors().A
T = 500
xs, ys = learn(A, T)
r1, r2 = regrets(A, xs, ys)
print(f"gap of the averages: {duality_gap(A, xs.mean(axis=0), ys.mean(axis=0)):.10f}")
print(f"(R1 + R2) / T:       {(r1 + r2) / T:.10f}")
'''

BRACKET_TEMPLATE = '''
def value_bracket(A, T):
    """(lower, upper) = (min_y x_bar^T A y, max_x x^T A y_bar) after T rounds of
    your learner."""
    ...
'''

BRACKET_SOLUTION = '''
def value_bracket(A, T):
    xs, ys = learn(A, T)
    x_bar, y_bar = xs.mean(axis=0), ys.mean(axis=0)
    return np.min(x_bar @ A), np.max(A @ y_bar)


A = np.array([[3.0, -1.0, 0.5], [-2.0, 1.0, 0.0]])
exact = lk.zero_sum_equilibrium(lk.games.load(lk.games.MatrixGame(A)))[1]
for T in (100, 1000, 10000):
    lower, upper = value_bracket(A, T)
    print(f"T = {T:>5}:  {lower:.4f} <= value <= {upper:.4f}")
print(f"the value from the LP: {exact:.4f}")
'''

PROOF_A = r'''
Add the two regrets. The realized payoffs $\sum_t x_t^\top A y_t$ enter $R_1$ with a minus sign and
$R_2$ with a plus sign, so they cancel:

$$R_1 + R_2 = \max_x \sum_t x^\top A y_t + \max_y \Bigl(-\sum_t x_t^\top A y\Bigr)
= T \max_x x^\top A \bar y - T \min_y \bar x^\top A y ,$$

because both sums are linear in the round's strategy, $\sum_t x^\top A y_t = T\,x^\top A \bar y$ and
$\sum_t x_t^\top A y = T\,\bar x^\top A y$. Dividing by $T$ gives the identity. Nothing about the
learners was used: the identity holds for any two sequences of strategies.
'''

PROOF_B = r'''
One inequality holds in every game: for all $x, y'$, $\min_y x^\top A y \le x^\top A y' \le \max_{x'} x'^\top A y'$,
so $\max_x \min_y x^\top A y \le \min_y \max_x x^\top A y$.

For the other one, let both players use algorithms with $R_i/T \to 0$ against any sequence. After
$T$ rounds, by (a),

$$\min_y \max_x x^\top A y \le \max_x x^\top A \bar y
= \min_y \bar x^\top A y + \frac{R_1 + R_2}{T} \le \max_x \min_y x^\top A y + \frac{R_1 + R_2}{T}.$$

The last term goes to 0 as $T$ grows, so $\min_y \max_x \le \max_x \min_y$, and the two are equal.
The bracket computed above is this argument in numbers: $\min_y \bar x^\top A y$ and
$\max_x x^\top A \bar y$ enclose the value and close in on it.
'''

EXERCISE = Exercise("27.1", "27_1_no_regret_minimax", "No-regret learning solves zero-sum games", (
    md(r"""
        # Exercise 27.1 — No-regret learning solves zero-sum games

        This exercise goes with the chapters [Many learners](../chapters/01_many_learners.ipynb) (the value of a zero-sum game)
        and [The dynamics of learning in games](../chapters/02_learning_dynamics.ipynb) (no-regret
        learners in self-play).

        A zero-sum matrix game with payoff matrix $A$ (to player 1) is played over and over. In round
        $t$ player 1 uses the mixed strategy $x_t$ and player 2 the mixed strategy $y_t$. After $T$
        rounds, player 1's external regret compares the best fixed strategy in hindsight with what it
        actually earned,
        $R_1 = \max_x \sum_t x^\top A y_t - \sum_t x_t^\top A y_t$, and player 2, whose payoff is
        $-x^\top A y$, has $R_2 = \max_y \sum_t (-x_t^\top A y) - \sum_t (-x_t^\top A y_t)$.
    """),
    how_to("27.1"),
    SETUP,
    md(r"""
        ## (a) The gap of the averages is the average regret

        Prove that the time averages $\bar x = \frac1T \sum_t x_t$ and $\bar y = \frac1T \sum_t y_t$ satisfy

        $$\max_x x^\top A \bar y - \min_y \bar x^\top A y = \frac{R_1 + R_2}{T}.$$
    """),
    written("27.1(a)", PROOF_A, points=2),
    md(r"""
        **Check it in numbers.** Write `learn(A, T)`, self-play of a no-regret learner of your choice
        (Hedge is the natural one), `regrets(A, xs, ys)` from the definitions above, and
        `duality_gap(A, x_bar, y_bar)`, the left-hand side. Then print both sides for your own run.
        The check calls your functions on a game of its own.
    """),
    answer("27.1(a)", LEARN_TEMPLATE, LEARN_SOLUTION),
    check("27.1(a)"),
    md(r"""
        ## (b) The minimax theorem

        Suppose there are learning algorithms whose regret grows sublinearly, $R/T \to 0$, whatever
        sequence of payoffs they face. Deduce from (a) that
        $\max_x \min_y x^\top A y = \min_y \max_x x^\top A y$.
    """),
    written("27.1(b)", PROOF_B, points=2),
    md(r"""
        **In numbers.** Write `value_bracket(A, T)` returning $(\min_y \bar x^\top A y,\ \max_x x^\top A \bar y)$
        after $T$ rounds of your learner. Your proof says the value of the game lies in between; watch
        the bracket narrow as $T$ grows.
    """),
    answer("27.1(b)", BRACKET_TEMPLATE, BRACKET_SOLUTION),
    check("27.1(b)"),
))


# ------------------------------------------------------------------ the hidden checks
def _probe_game(seed, shape):
    return np.round(np.random.default_rng(seed).uniform(-1, 1, size=shape), 2)


def _probe_sequence(seed, T, n):
    return np.random.default_rng(seed).dirichlet(np.ones(n), size=T)


PROBE_A = _probe_game(2701, (3, 4))
PROBE_XS, PROBE_YS = _probe_sequence(1, 40, 3), _probe_sequence(2, 40, 4)
PROBE_XBAR, PROBE_YBAR = PROBE_XS.mean(axis=0), PROBE_YS.mean(axis=0)
BRACKET_A = _probe_game(2702, (4, 3))


def _game_value(A):
    import labkit as lk
    from labkit.games import MatrixGame
    return lk.zero_sum_equilibrium(lk.games.load(MatrixGame(A)))[1]


def _regrets(A, xs, ys):
    realized = np.einsum("ti,ij,tj->", xs, A, ys)
    r1 = float(np.max(A @ ys.sum(axis=0)) - realized)
    r2 = float(np.max(-(xs.sum(axis=0) @ A)) + realized)
    return r1, r2


def _gap(A, xbar, ybar):
    return float(np.max(A @ ybar) - np.min(xbar @ A))


def _grade_27_1_a(value):
    g = Grader(value)

    def learner():
        (run,) = probe_results(value, "learn", 1)
        if not isinstance(run, list) or len(run) != 2:
            raise Wrong("`learn(A, T)` should return a pair (xs, ys)")
        xs, ys = as_array(run[0], "xs", (200, 3)), as_array(run[1], "ys", (200, 4))
        if np.any(xs < -1e-9) or np.any(ys < -1e-9) or not close_to(xs.sum(axis=1), 1, 1e-6) \
                or not close_to(ys.sum(axis=1), 1, 1e-6):
            return "every row of xs and ys must be a mixed strategy (nonnegative, summing to 1)"
        r1, r2 = _regrets(PROBE_A, xs, ys)
        if (r1 + r2) / 200 > 0.1:
            return ("your learner's average regret after 200 rounds is large; is it a no-regret "
                    "algorithm (e.g. Hedge with a step size of order 1/sqrt(T))?")
        return None

    def regrets():
        (r,) = probe_results(value, "regrets", 1)
        r = as_array(r, "regrets(A, xs, ys)", (2,))
        if not close_to(r, _regrets(PROBE_A, PROBE_XS, PROBE_YS), 1e-6):
            return ("`regrets` disagrees with the definition on a test sequence; the best fixed "
                    "strategy in hindsight is compared with the strategies actually played")
        return None

    def gap():
        (d,) = probe_results(value, "duality_gap", 1)
        if not close_to(as_number(d, "duality_gap"), _gap(PROBE_A, PROBE_XBAR, PROBE_YBAR), 1e-6):
            return "`duality_gap` is not max_x x^T A ybar - min_y xbar^T A y on a test pair"
        return None

    g.item("no-regret learner", 2, learner)
    g.item("regrets", 1, regrets)
    g.item("duality gap", 1, gap)
    return g.items


def _grade_27_1_b(value):
    g = Grader(value)
    v = _game_value(BRACKET_A)

    def bracket():
        (b,) = probe_results(value, "value_bracket", 1)
        lower, upper = as_array(b, "value_bracket(A, T)", (2,))
        if not lower - 1e-7 <= v <= upper + 1e-7:
            return "the game's value must lie between your lower and upper bounds"
        return None

    def tight():
        (b,) = probe_results(value, "value_bracket", 1)
        lower, upper = as_array(b, "value_bracket(A, T)", (2,))
        if upper - lower > 0.05:
            return "after 2000 rounds the bracket should be narrower than 0.05"
        return None

    g.item("bracket holds the value", 1, bracket)
    g.item("bracket is narrow", 1, tight)
    return g.items


PARTS = [
    part_spec("27.1(a)", ["learn", "regrets", "duality_gap"], _grade_27_1_a, 4,
              {"learn": [(PROBE_A, 200)], "regrets": [(PROBE_A, PROBE_XS, PROBE_YS)],
               "duality_gap": [(PROBE_A, PROBE_XBAR, PROBE_YBAR)]}),
    part_spec("27.1(b)", ["value_bracket"], _grade_27_1_b, 2, {"value_bracket": [(BRACKET_A, 2000)]}),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
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
'''
