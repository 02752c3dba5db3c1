"""Exercise 27.2: the biased rock-paper-scissors of chapter 1, Many learners."""
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
