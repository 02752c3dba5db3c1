"""Exercise 27.6: the climbing game, and independent learners that settle on the wrong peak.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex27_6.py).
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import (ACTIONS3, Grader, Wrong, as_action, as_array, as_pair, close_to,
    part_spec, probe_results, reported)
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


# ------------------------------------------------------------------ the hidden checks
LEARNER_SEEDS = [(s,) for s in range(2700, 2730)]   # the grader's own; the public check uses 100 to 103
MISSING_THE_OPTIMUM = 0.6        # share of the runs that must end away from the optimum


def climbing_payoffs():
    """The climbing game's common payoff matrix (from labkit.games, imported when first needed)."""
    from labkit.games import climbing_game
    return climbing_game().A


def pure_equilibria(A, B):
    """Joint actions (a, b) where neither player gains by deviating alone."""
    return {(a, b) for a in range(A.shape[0]) for b in range(A.shape[1])
            if A[a, b] >= A[:, b].max() and B[a, b] >= B[a, :].max()}


def _grade_27_6_a(value):
    g = Grader(value)
    A = climbing_payoffs()

    def equilibria():
        pairs = reported(value, "pure_equilibria")
        if not isinstance(pairs, list):
            raise Wrong("`pure_equilibria` should be a list of pairs such as ('a', 'c')")
        got = {as_pair(p, "pure_equilibria") for p in pairs}
        want = pure_equilibria(A, A)
        if got == want:
            return None
        if got - want:
            return "one of your joint actions has a player who gains by deviating alone"
        return "you are missing an equilibrium: check every joint action, including the unattractive ones"

    g.item("pure equilibria", 1, equilibria)
    return g.items


def _grade_27_6_b(value):
    g = Grader(value)
    A = climbing_payoffs()
    row_values, col_values = A.mean(axis=1), A.mean(axis=0)

    def values():
        v = as_array(reported(value, "values_uniform_partner"), "values_uniform_partner", (3,))
        return None if close_to(v, row_values, 1e-6) else "average each row of the payoffs over the partner's actions"

    def favoured():
        r = as_action(reported(value, "favoured_row"), "favoured_row", ACTIONS3)
        c = as_action(reported(value, "favoured_column"), "favoured_column", ACTIONS3)
        return None if (r, c) == (int(np.argmax(row_values)), int(np.argmax(col_values))) else \
            "each agent favours the action with the highest value against a uniform partner"

    g.item("values against a uniform partner", 1, values)
    g.item("favoured actions", 1, favoured)
    return g.items


def _grade_27_6_c(value):
    g = Grader(value)
    A = climbing_payoffs()
    best = tuple(int(i) for i in np.unravel_index(np.argmax(A), A.shape))

    def simulation():
        # a simulation of learners that explore at random ends differently for some seeds; an answer
        # that is the same for all of them states an outcome instead of simulating it
        results = probe_results(value, "independent_learners", len(LEARNER_SEEDS))
        pairs = [as_pair(r, "independent_learners(seed)") for r in results]
        if len(set(pairs)) == 1:
            return (f"all {len(pairs)} seeds end at the same joint action: simulate the two learners with the "
                    "seed's random numbers (np.random.default_rng(seed)), exploring long enough that the runs "
                    "can end differently")
        wrong = sum(p != best for p in pairs)
        if wrong < MISSING_THE_OPTIMUM * len(pairs):
            return ("most of your runs reach the optimum; the pathology shows with value estimates "
                    "averaged over an exploring partner")
        return None

    def name():
        text = str(reported(value, "pathology")).lower().replace("-", "").replace(" ", "")
        return None if "overgeneraliz" in text or "overgeneralis" in text else \
            "the pathology has a name in the cooperative MARL literature (two words)"

    g.item("simulated learners, runs that differ with the seed, missing the optimum", 1, simulation)
    g.item("name of the pathology", 1, name)
    return g.items


PARTS = [
    part_spec("27.6(a)", ["pure_equilibria"], _grade_27_6_a, 1),
    part_spec("27.6(b)", ["values_uniform_partner", "favoured_row", "favoured_column"], _grade_27_6_b, 2),
    part_spec("27.6(c)", ["independent_learners", "pathology"], _grade_27_6_c, 2,
              {"independent_learners": LEARNER_SEEDS}),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
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
'''
