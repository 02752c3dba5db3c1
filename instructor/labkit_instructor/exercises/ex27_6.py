"""Exercise 27.6: the climbing game, and independent learners that settle on the wrong peak."""
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, written

NASH_TEMPLATE = '''
A = lk.games.climbing_game().A     # both agents receive A[row, column]
actions = ["a", "b", "c"]

pure_equilibria = ...              # a list of pairs such as ("a", "c")
'''

NASH_SOLUTION = '''
A = lk.games.climbing_game().A  # both agents receive A[row, column]
actions = ["a", "b", "c"]

# (r, c) is an equilibrium when r is a best row against column c and c a best
# column against row r
pure_equilibria = [
    (actions[r], actions[c])
    for r in range(3)
    for c in range(3)
    if A[r, c] == A[:, c].max() and A[r, c] == A[r, :].max()
]
print(
    "pure equilibria:",
    pure_equilibria,
    " payoffs:",
    [float(A[actions.index(r), actions.index(c)]) for r, c in pure_equilibria],
)
'''

UNIFORM_TEMPLATE = '''
# the row agent's expected payoff for a, b, c against a uniform partner
values_uniform_partner = ...
favoured_row = ...  # the action the row agent's estimates favour
favoured_column = ...  # the same for the column agent
'''

UNIFORM_SOLUTION = '''
values_uniform_partner = A.mean(axis=1)  # average over the partner's three actions
favoured_row = actions[int(np.argmax(values_uniform_partner))]
favoured_column = actions[int(np.argmax(A.mean(axis=0)))]
print(
    "row agent's values:",
    np.round(values_uniform_partner, 3),
    "-> favours",
    favoured_row,
)
print(
    "column agent's values:", np.round(A.mean(axis=0), 3), "-> favours", favoured_column
)
'''

LEARNERS_TEMPLATE = '''
def independent_learners(seed):
    """Two independent learners on the climbing game; returns the joint action they
    end up with greedily, e.g. ("b", "b")."""
    ...


pathology = ...  # its name
'''

LEARNERS_SOLUTION = '''
def independent_learners(seed, rounds=1000, step=0.1, explore=1.0, decay=0.995):
    """Each agent keeps its own action values and ignores the other agent:
    epsilon-greedy play with exploration decaying from `explore`, values moved
    toward the shared payoff by `step`.
    """
    rng = np.random.default_rng(seed)
    q = np.zeros((2, 3))  # q[agent, action]
    for _ in range(rounds):
        random_moves = rng.random(2) < explore
        joint = np.where(random_moves, rng.integers(3, size=2), q.argmax(axis=1))
        payoff = A[joint[0], joint[1]]
        q[[0, 1], joint] += step * (payoff - q[[0, 1], joint])
        explore *= decay
    return actions[int(q[0].argmax())], actions[int(q[1].argmax())]


from collections import Counter

print(Counter(independent_learners(seed) for seed in range(20)))
pathology = "relative overgeneralization"
'''

ANSWER_A = r'''
A joint action is an equilibrium when neither agent gains by changing only its own action: its payoff
must be the largest in its column (for the row agent) and in its row (for the column agent).
$(a,a)$ with 11 is the best in its row and column; $(b,b)$ with 7 is too (7 beats $-30$ and 6 in its row,
$-30$ and 0 in its column). $(c,c)$ with 5 is not: the row agent would move to $b$ and get 6. Every
other cell has a better entry in its row or column. The pure equilibria are $(a,a)$, the optimum, and
$(b,b)$, a worse one.
'''

ANSWER_B = r'''
Against a partner that picks each action with probability 1/3, an agent's action is worth the average
of its payoffs over the partner's actions. For the row agent these are the row averages,
$a$: $(11 - 30 + 0)/3 = -19/3$, $b$: $(-30 + 7 + 6)/3 = -17/3$, $c$: $(0 + 0 + 5)/3 = 5/3$; for the
column agent the column averages, $a$: $-19/3$, $b$: $(-30 + 7 + 0)/3 = -23/3$, $c$: $(0 + 6 + 5)/3 = 11/3$.
Both favour $c$, the action without a $-30$: the miscoordination penalties weigh heavily in an average.
'''

ANSWER_C = r'''
Both agents drift to $c$: the greedy joint action becomes $(c,c)$, worth 5. The improving moves from
there lead away from the optimum. Against a partner that mostly plays $c$, the row agent compares
$A[\cdot, c] = (0, 6, 5)$ and would switch to $b$; the column agent, then mostly facing $b$, compares
$A[b, \cdot] = (-30, 7, 6)$ and switches to $b$ as well: a learner that keeps exploring climbs to the
equilibrium $(b,b)$, a local summit worth 7. To reach $(a,a)$, one agent would have to try $a$ while
the other still plays $b$ or $c$, where $a$ earns $-30$ or 0, so its estimate of $a$ stays low: each
agent values an action by its average over the partner's current (exploring) behaviour, not by the
best outcome it could have with a coordinated partner. This pathology is called
**relative overgeneralization**. In the simulation above most runs stop at $(c,c)$; in the others
the row agent has taken the first step, to $b$ (worth 6 against a partner still playing $c$), while
the column agent still favours $c$: exploration dies out before the climb to $(b,b)$ is finished.
No run finds $(a,a)$.
'''

EXERCISE = Exercise("27.6", "27_6_climbing_game", "Climbing to the wrong summit", (
    md(r"""
        # Exercise 27.6 — Climbing to the wrong summit

        This exercise goes with the chapters [Many learners](../chapters/01_many_learners.ipynb) and
        [Cooperation](../chapters/07_cooperation.ipynb).

        Two cooperating agents both receive the payoff of the climbing game of Claus and Boutilier; the
        row agent picks the row and the column agent the column:

        $$A = \begin{pmatrix} 11 & -30 & 0 \\ -30 & 7 & 6 \\ 0 & 0 & 5 \end{pmatrix}
        \qquad\text{(actions } a, b, c\text{)}.$$
    """),
    how_to("27.6"),
    SETUP,
    md(r"""
        ## (a) Equilibria
        Which joint actions are Nash equilibria? Compute them: `pure_equilibria`.
    """),
    written("27.6(a)", ANSWER_A),
    answer("27.6(a)", NASH_TEMPLATE, NASH_SOLUTION),
    check("27.6(a)"),
    md(r"""
        ## (b) Early in learning
        At first each agent's partner plays almost uniformly at random. Which action does each agent's
        value estimate favour? Compute `values_uniform_partner` (the row agent's), `favoured_row` and
        `favoured_column`.
    """),
    written("27.6(b)", ANSWER_B),
    answer("27.6(b)", UNIFORM_TEMPLATE, UNIFORM_SOLUTION),
    check("27.6(b)"),
    md(r"""
        ## (c) The climb
        Describe how two independent learners go on from there to a suboptimal equilibrium, and name
        this pathology (`pathology`). Simulate it: `independent_learners(seed)` runs two learners that
        each keep action values of their own, and returns the joint action they would play greedily at
        the end. Draw the random numbers from `np.random.default_rng(seed)`: a seed then gives the
        same run every time, while runs with different seeds can end differently, as learners that
        explore at random do. The check runs it for 30 seeds of its own; an answer that ends the same
        whatever the seed is not a simulation and earns at most half of this part.
    """),
    written("27.6(c)", ANSWER_C),
    answer("27.6(c)", LEARNERS_TEMPLATE, LEARNERS_SOLUTION),
    check("27.6(c)"),
))
