"""Exercise 27.1: a no-regret learner in self-play finds the value of a zero-sum game."""
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
