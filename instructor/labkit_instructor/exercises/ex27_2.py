"""Exercise 27.2: the biased rock-paper-scissors of chapter 1, Many learners.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex27_2.py).
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import (BIASED_RPS, Grader, RPS, RPS_EQUILIBRIUM, as_action, as_array,
    as_number, close_to, part_spec, reported)
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, written

VALUE_SOLUTION = '''
game = lk.games.biased_rock_paper_scissors()
A = game.A
print("A is antisymmetric:", np.array_equal(A.T, -A))
policy, value = lk.zero_sum_equilibrium(lk.games.load(game))
value = round(value, 12) + 0.0          # + 0.0 turns a -0.0 from the LP into 0.0
print("value from the LP:", value)
'''

EQUILIBRIUM_SOLUTION = '''
A = lk.games.biased_rock_paper_scissors().A
# the opponent's strategy y must make the three rows earn the same (here 0),
# and sum to 1
system = np.vstack([A, np.ones(3)])
equilibrium, *_ = np.linalg.lstsq(system, np.array([0.0, 0.0, 0.0, 1.0]), rcond=None)
payoffs_against_equilibrium = A @ equilibrium
print("equilibrium:", np.round(equilibrium, 6))
print(
    "payoff of rock, paper, scissors against it:",
    np.round(payoffs_against_equilibrium, 12) + 0.0,
)
print("rank of A:", np.linalg.matrix_rank(A))
'''

CYCLE_SOLUTION = '''
A = lk.games.biased_rock_paper_scissors().A
actions = ["rock", "paper", "scissors"]
cycle_average = np.full(3, 1 / 3)  # equal time on each pure strategy
payoffs = A @ cycle_average  # each pure reply's payoff against the average
best_response_to_average = actions[int(np.argmax(payoffs))]
gain = payoffs.max() - cycle_average @ A @ cycle_average
print("payoffs against the average:", np.round(payoffs, 4))
print("best response:", best_response_to_average, " gain:", round(gain, 6))

# NashConv from labkit's exact best responses on the same game as a tree
tree = lk.games.load(lk.games.biased_rock_paper_scissors())
average = lk.TabularPolicy.from_dict(
    tree, {"row": list(cycle_average), "column": list(cycle_average)}
)
nash_conv_of_average = lk.nash_conv(tree, average)
print("NashConv of the average:", round(nash_conv_of_average, 6))
'''

WHY_ZERO = r'''
The matrix is antisymmetric, $A^\top = -A$: swapping the two players' roles gives the same game.
Then $x^\top A x = 0$ for every $x$ (a number equals its own negative). Whatever $x$ player 1 picks,
player 2 can copy it and hold player 1 to 0, so $\max_x \min_y x^\top A y \le 0$; whatever $y$ player 2
picks, player 1 can copy it and get 0, so $\min_y \max_x x^\top A y \ge 0$. By the minimax theorem the
two are equal, and the value is 0.
'''

UNIQUE = r'''
Let $w = (1/4, 1/2, 1/4)$. A direct computation gives $A w = 0$, and then $w^\top A = -(A w)^\top = 0$:
against $w$ every pure strategy earns exactly the value 0, so $(w, w)$ is an equilibrium.

Uniqueness: let $y$ be any equilibrium strategy of player 2. It must hold player 1 to the value, so
$(A y)_i \le 0$ for every row $i$. But $\sum_i w_i (A y)_i = (w^\top A) y = 0$ and every $w_i > 0$, so
all three entries are 0: $A y = 0$. The $3\times3$ antisymmetric $A \ne 0$ has rank 2, so its kernel
is the line through $w$, and the only strategy on it is $y = w$. The same argument applies to
player 1 (the game is symmetric).
'''

GAIN = r'''
Spending equal time on rock, paper and scissors averages to $(1/3, 1/3, 1/3)$. Against it the pure
strategies earn $A\,(1/3,1/3,1/3)^\top = (1/3, 0, -1/3)$: rock is the best response and gains $1/3$
over the 0 that the average earns against itself. The same holds for the other player, so the
average is far from the equilibrium $(1/4, 1/2, 1/4)$ -- it overplays rock and scissors -- and its
NashConv, the sum of both players' gains, is $2/3$.
'''

EXERCISE = Exercise("27.2", "27_2_biased_rock_paper_scissors", "The biased rock-paper-scissors", (
    md(r"""
        # Exercise 27.2 — The biased rock–paper–scissors

        [Many learners](../chapters/01_many_learners.ipynb), the first chapter, plays
        rock–paper–scissors with a bonus for winning with rock: such a win pays 2 instead of 1.
        With the actions in the order rock, paper, scissors, the row player's payoff matrix is

        $$A = \begin{pmatrix} 0 & -1 & 2 \\ 1 & 0 & -1 \\ -2 & 1 & 0 \end{pmatrix},$$

        and `lk.games.biased_rock_paper_scissors()` builds it.
    """),
    how_to("27.2"),
    SETUP,
    md(r"""
        ## (a) The value
        Explain why the value of this game is 0. Then compute it (an LP, e.g.
        `lk.zero_sum_equilibrium`, or `scipy.optimize.linprog`) and store it in `value`.
    """),
    written("27.2(a)", WHY_ZERO, points=1),
    answer("27.2(a)", "value = ...", VALUE_SOLUTION),
    check("27.2(a)"),
    md(r"""
        ## (b) The equilibrium
        Show that $(1/4, 1/2, 1/4)$ is the only equilibrium strategy. In code, find it as the solution
        of a linear system (`equilibrium`) and compute `payoffs_against_equilibrium`, the payoff of
        each pure strategy of the row player against it.
    """),
    written("27.2(b)", UNIQUE, points=2),
    answer("27.2(b)", "equilibrium = ...\npayoffs_against_equilibrium = ...", EQUILIBRIUM_SOLUTION),
    check("27.2(b)"),
    md(r"""
        ## (c) What the cycle's average gives away
        Naive self-play keeps switching to the best response of the moment and so cycles through the
        three pure strategies, spending equal time on each. Set `cycle_average` to the average
        strategy, `best_response_to_average` to the best pure reply (its name), `gain` to what that
        reply wins over the average's own payoff, and `nash_conv_of_average` to the NashConv of both
        players using the average.
    """),
    written("27.2(c)", GAIN, points=1),
    answer("27.2(c)", "cycle_average = ...\nbest_response_to_average = ...\ngain = ...\nnash_conv_of_average = ...",
           CYCLE_SOLUTION),
    check("27.2(c)"),
))


# ------------------------------------------------------------------ the hidden checks
def _grade_27_2_a(value):
    g = Grader(value)
    g.item("value", 1, lambda: None if abs(as_number(reported(value, "value"), "value")) < 1e-6 else
           "compare the game with the one where the players swap roles: A^T = -A")
    return g.items


def _grade_27_2_b(value):
    g = Grader(value)

    def equilibrium():
        x = as_array(reported(value, "equilibrium"), "equilibrium", (3,))
        if not close_to(x, RPS_EQUILIBRIUM, 1e-6):
            return ("at an interior equilibrium the opponent must be indifferent between its "
                    "three actions: solve the linear system that says so")
        return None

    def indifference():
        u = as_array(reported(value, "payoffs_against_equilibrium"), "payoffs_against_equilibrium", (3,))
        if not close_to(u, BIASED_RPS @ RPS_EQUILIBRIUM, 1e-6):
            return "compute A @ y for the equilibrium y: the payoff of each pure strategy against it"
        return None

    g.item("equilibrium", 1, equilibrium)
    g.item("indifference", 1, indifference)
    return g.items


def _grade_27_2_c(value):
    g = Grader(value)
    average = np.full(3, 1 / 3)
    payoffs = BIASED_RPS @ average

    def cycle():
        a = as_array(reported(value, "cycle_average"), "cycle_average", (3,))
        return None if close_to(a, average, 1e-6) else "equal time on each pure strategy: what mixed strategy is that?"

    def response():
        a = as_action(reported(value, "best_response_to_average"), "best_response_to_average", RPS)
        return None if a == int(np.argmax(payoffs)) else "compare A @ (cycle average) entry by entry"

    def gain():
        v = as_number(reported(value, "gain"), "gain")
        return None if abs(v - payoffs.max()) < 1e-6 else \
            "the gain is the best response's payoff minus the average's payoff against itself (0)"

    def nash_conv():
        v = as_number(reported(value, "nash_conv_of_average"), "nash_conv_of_average")
        return None if abs(v - 2 * payoffs.max()) < 1e-6 else "NashConv adds up both players' gains"

    g.item("cycle average", 1, cycle)
    g.item("best response", 1, response)
    g.item("gain", 1, gain)
    g.item("NashConv", 1, nash_conv)
    return g.items


PARTS = [
    part_spec("27.2(a)", ["value"], _grade_27_2_a, 1),
    part_spec("27.2(b)", ["equilibrium", "payoffs_against_equilibrium"], _grade_27_2_b, 2),
    part_spec("27.2(c)", ["cycle_average", "best_response_to_average", "gain", "nash_conv_of_average"],
              _grade_27_2_c, 4),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
"""Public checks of exercise 27.2 (biased rock-paper-scissors): numbers, distributions, actions,
and what must hold between them, read off the game's matrix (public in labkit).

The value of a matrix game lies between the best pure guarantee of each player: max_i min_j A_ij
<= value <= min_j max_i A_ij. A fully mixed equilibrium strategy leaves the other player no
better reply: every action earns the same against it. A best response earns at least as much as
every other action, and NashConv adds up two gains that are each at least 0.
"""
import numpy as np

from labkit.grading.checking import RPS
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, action, as_array, as_number, distribution, number, reported, vector


def _matrix():
    import labkit as lk
    return lk.games.biased_rock_paper_scissors().A


def _between_pure_guarantees(value):
    A = _matrix()
    low, high = A.min(axis=1).max(), A.max(axis=0).min()
    v = as_number(reported(value, "value"), "value")
    if not low - 1e-9 <= v <= high + 1e-9:
        raise Wrong(f"`value` is {v:g}, outside [{low:g}, {high:g}]: player 1 can guarantee {low:g} with a pure "
                    f"action and player 2 can hold it to {high:g}, so the value lies in between")


def _consistent(value):
    A = _matrix()
    e = as_array(reported(value, "equilibrium"), "equilibrium", (3,))
    p = as_array(reported(value, "payoffs_against_equilibrium"), "payoffs_against_equilibrium", (3,))
    if not np.allclose(p, A @ e, atol=1e-6):
        raise Wrong("`payoffs_against_equilibrium` should hold what rock, paper and scissors earn against your "
                    "`equilibrium` (entry i is row i of A times the strategy)")
    if np.ptp(p) > 1e-6:
        raise Wrong("against an equilibrium that plays every action, no action does better than another: the "
                    "three payoffs should be equal, and they are not (is `equilibrium` an equilibrium?)")


def _best_reply(value):
    A = _matrix()
    average = as_array(reported(value, "cycle_average"), "cycle_average", (3,))
    earned = A @ average
    chosen = RPS.index(reported(value, "best_response_to_average"))
    if earned[chosen] < earned.max() - 1e-9:
        raise Wrong("`best_response_to_average` is not the action that earns the most against `cycle_average`")
    gain = as_number(reported(value, "gain"), "gain")
    nash_conv = as_number(reported(value, "nash_conv_of_average"), "nash_conv_of_average")
    if gain < -1e-9 or nash_conv < gain - 1e-9:
        raise Wrong("a best response gains at least 0, and NashConv adds both players' gains (each >= 0): "
                    "0 <= gain <= nash_conv_of_average should hold")


def _feedback_a(value):
    return FormatChecks(value).item("value is a number", lambda: number(value, "value")).item(
        "value lies between the pure guarantees", lambda: _between_pure_guarantees(value))


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("equilibrium is a distribution over 3 actions", lambda: distribution(value, "equilibrium", 3))
    f.item("payoffs_against_equilibrium has 3 entries",
           lambda: vector(value, "payoffs_against_equilibrium", (3,)))
    f.item("the payoffs are A times the equilibrium, all equal", lambda: _consistent(value))
    return f


def _feedback_c(value):
    f = FormatChecks(value)
    f.item("cycle_average is a distribution", lambda: distribution(value, "cycle_average", 3))
    f.item("best_response_to_average names an action", lambda: action(value, "best_response_to_average", RPS))
    f.item("gain is a number", lambda: number(value, "gain"))
    f.item("nash_conv_of_average is a number >= 0", lambda: number(value, "nash_conv_of_average", low=0))
    f.item("the best response and the gains agree with the average", lambda: _best_reply(value))
    return f


PARTS = [
    public_part("27.2(a)", ["value"], 1, _feedback_a),
    public_part("27.2(b)", ["equilibrium", "payoffs_against_equilibrium"], 2, _feedback_b),
    public_part("27.2(c)", ["cycle_average", "best_response_to_average", "gain", "nash_conv_of_average"], 4,
                _feedback_c),
]
'''
