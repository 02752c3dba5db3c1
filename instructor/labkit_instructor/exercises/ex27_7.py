"""Exercise 27.7: what additive (VDN) and monotonic (QMIX-style) value factorizations can represent.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex27_7.py).
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import Grader, as_array, as_pair, close_to, part_spec, probe_results, reported
from labkit_instructor.exercises.ex27_6 import climbing_payoffs
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, written

VDN_TEMPLATE = '''
A = lk.games.climbing_game().A
actions = ["a", "b", "c"]

q_tot = ...                  # the 3 x 3 fitted values Q1(a) + Q2(b)
greedy_joint_action = ...    # the joint action that maximizes the fit, e.g. ("a", "b")
'''

VDN_SOLUTION = '''
A = lk.games.climbing_game().A
actions = ["a", "b", "c"]

# one row per joint action (a, b): indicator of a among the first three unknowns,
# of b among the last three
design = np.array(
    [np.concatenate([np.eye(3)[a], np.eye(3)[b]]) for a in range(3) for b in range(3)]
)
weights, *_ = np.linalg.lstsq(design, A.ravel(), rcond=None)
q1, q2 = weights[:3], weights[3:]
q_tot = q1[:, None] + q2[None, :]
greedy = np.unravel_index(np.argmax(q_tot), q_tot.shape)
greedy_joint_action = (actions[greedy[0]], actions[greedy[1]])
print("fitted Q_tot:\\n", np.round(q_tot, 3))
print("greedy joint action of the fit:", greedy_joint_action)
print("true payoff there:", A[greedy])
additive = A.mean(axis=1, keepdims=True) + A.mean(axis=0, keepdims=True) - A.mean()
print("same as row mean + column mean - grand mean:", np.allclose(q_tot, additive))
'''

MONOTONIC_TEMPLATE = '''
def monotonic_representable(Q):
    """True when some f, non-decreasing in each argument, and utilities Q1, Q2 give
    Q[a, b] = f(Q1[a], Q2[b]) for every joint action."""
    ...
'''

MONOTONIC_SOLUTION = '''
def rows_consistent(M):
    """No two rows whose order flips: M[i, k] > M[j, k] but M[i, l] < M[j, l]."""
    # above[i, j, k]: row i beats row j in column k
    above = M[:, None, :] > M[None, :, :]
    below = M[:, None, :] < M[None, :, :]
    return not np.any(above.any(axis=2) & below.any(axis=2))


def monotonic_representable(Q):
    Q = np.asarray(Q, dtype=float)
    return rows_consistent(Q) and rows_consistent(Q.T)


print("climbing game:", monotonic_representable(A))
print("its VDN fit:", monotonic_representable(q_tot))
# the witness: rows a and b trade places between columns a and b
print("rows a, b in column a:", A[0, 0], A[1, 0], "  in column b:", A[0, 1], A[1, 1])
'''

ANSWER_A = r'''
With equal weights on the nine joint actions, least squares for $Q_1(a) + Q_2(b)$ is the two-way
additive model: $Q_{\text{tot}}(a, b) = \bar A_{a\cdot} + \bar A_{\cdot b} - \bar A$ (row mean plus column
mean minus grand mean); $Q_1$ and $Q_2$ are unique only up to moving a constant from one to the other.
The row means are $(-19/3, -17/3, 5/3)$ and the column means $(-19/3, -23/3, 11/3)$, so the fit is
largest at $(c, c)$: the greedy joint action of the fit is $(c,c)$, worth 5 in the true game, far from
the optimum $(a,a)$ worth 11. The $-30$ penalties drag the fitted values of $a$ down.
'''

PROOF_B = r'''
Suppose $Q(a', b') = f(Q_1(a'), Q_2(b'))$ for all joint actions, with $f$ non-decreasing in each argument.
Compare rows $a$ and $b$. If $Q_1(a) \ge Q_1(b)$, monotonicity in the first argument gives
$f(Q_1(a), Q_2(b)) \ge f(Q_1(b), Q_2(b))$, i.e. $Q(a,b) = -30 \ge Q(b,b) = 7$, false. So $Q_1(a) < Q_1(b)$,
and then $Q(a,a) = f(Q_1(a), Q_2(a)) \le f(Q_1(b), Q_2(a)) = Q(b,a)$, i.e. $11 \le -30$, false too.
No monotonic mixing reproduces the payoffs, let alone with $(a,a)$ greedy: rows $a$ and $b$ change
order between columns $a$ and $b$, which a mixing monotonic in each agent's utility cannot do. In
general a payoff table is representable exactly when no two rows and no two columns ever change
order -- the test coded above.
'''

ANSWER_C = r'''
TD learning trains $Q_{\text{tot}}$ toward targets $r + \gamma \max_{u'} Q_{\text{tot}}(s', u')$ built from
its own values. A factorization that gets the argmax right but the values wrong feeds wrong values
into every target: the errors propagate to earlier states and change which actions look best there,
and the loss keeps pulling the representation toward a least-squares compromise like the one of
(a), which can move the argmax again. Decentralized greedy action selection needs the argmax;
bootstrapping needs the values. (This is why methods such as QTRAN and weighted QMIX add
corrections to the values, not only to the greedy action.)
'''

EXERCISE = Exercise("27.7", "27_7_value_factorization", "What value factorization can represent", (
    md(r"""
        # Exercise 27.7 — What value factorization can represent

        This exercise goes with the chapter [Cooperation](../chapters/07_cooperation.ipynb).

        Cooperative methods such as VDN and QMIX build a joint value $Q_{\text{tot}}$ from one utility per
        agent, so that each agent can act greedily on its own utility. Here the "game" is one step of
        the climbing game of exercise 27.6 (`lk.games.climbing_game()`).
    """),
    how_to("27.7"),
    SETUP,
    md(r"""
        ## (a) The additive fit
        Fit the payoffs by least squares with $Q_{\text{tot}}(a, b) = Q_1(a) + Q_2(b)$, all nine joint actions
        weighted equally. What is the greedy joint action of the fit? In code: `q_tot` (the fitted
        $3\times3$ table) and `greedy_joint_action`.
    """),
    written("27.7(a)", ANSWER_A, points=1),
    answer("27.7(a)", VDN_TEMPLATE, VDN_SOLUTION),
    check("27.7(a)"),
    md(r"""
        ## (b) Monotonic mixing is not enough
        Prove that a mixing function that is non-decreasing in every agent's utility cannot reproduce
        these payoffs exactly with the optimal joint action as the greedy one. In code, write
        `monotonic_representable(Q)`, which decides for any payoff table whether some
        $Q(a,b) = f(Q_1(a), Q_2(b))$ with $f$ non-decreasing in each argument fits it exactly. The check
        tries it on several tables.
    """),
    written("27.7(b)", PROOF_B, points=2),
    answer("27.7(b)", MONOTONIC_TEMPLATE, MONOTONIC_SOLUTION),
    check("27.7(b)"),
    md(r"""
        ## (c) Why the argmax alone does not do
        Why is it not enough to represent the argmax correctly, without the values, for methods trained
        by temporal-difference learning?
    """),
    written("27.7(c)", ANSWER_C, points=1),
))


# ------------------------------------------------------------------ the hidden checks
def vdn_fit(Q):
    """Least-squares Q1(a) + Q2(b) over all joint actions, equal weights: row mean + column
    mean - grand mean (the two-way additive model)."""
    Q = np.asarray(Q, float)
    return Q.mean(axis=1, keepdims=True) + Q.mean(axis=0, keepdims=True) - Q.mean()


def monotonic_representable(Q):
    """True when Q(a, b) = f(Q1(a), Q2(b)) for some f non-decreasing in each argument: every two
    rows are ordered the same way in every column, and every two columns in every row."""
    Q = np.asarray(Q, float)

    def consistent(M):
        d = M[:, None, :] - M[None, :, :]          # d[i, j, k] = M[i, k] - M[j, k]
        return not np.any((d > 0).any(axis=2) & (d < 0).any(axis=2))
    return bool(consistent(Q) and consistent(Q.T))


def _monotone_probes():
    rng = np.random.default_rng(2707)
    additive = np.add.outer(rng.normal(size=3), rng.normal(size=4))
    return [np.array([[11.0, -30.0, 0.0], [-30.0, 7.0, 6.0], [0.0, 0.0, 5.0]]),
            additive, np.exp(additive), np.maximum(additive, 0.5),
            np.array([[1.0, 2.0], [2.0, 1.0]]),
            np.array([[0.0, 1.0, 1.0], [0.0, 2.0, 1.0]]),
            np.array([[3.0, 1.0], [2.0, 0.0], [4.0, 5.0]]),
            rng.normal(size=(3, 3))]


MONOTONE_PROBES = [(Q,) for Q in _monotone_probes()]


def _grade_27_7_a(value):
    g = Grader(value)
    A = climbing_payoffs()
    fit = vdn_fit(A)

    def q_tot():
        Q = as_array(reported(value, "q_tot"), "q_tot", (3, 3))
        return None if close_to(Q, fit, 1e-6) else \
            "minimize the sum of squared errors over all nine joint actions; the fit is unique up to shifting Q1 and Q2"

    def greedy():
        pair = as_pair(reported(value, "greedy_joint_action"), "greedy_joint_action")
        return None if pair == tuple(int(i) for i in np.unravel_index(np.argmax(fit), fit.shape)) else \
            "the greedy joint action maximizes the fitted Q_tot, not the true payoffs"

    g.item("least-squares VDN fit", 1, q_tot)
    g.item("greedy joint action of the fit", 1, greedy)
    return g.items


def _grade_27_7_b(value):
    g = Grader(value)

    def climbing():
        (r,) = probe_results(value, "monotonic_representable", len(MONOTONE_PROBES))[:1]
        return None if r is False else "look for two rows whose order flips from one column to another"

    def all_probes():
        results = probe_results(value, "monotonic_representable", len(MONOTONE_PROBES))
        want = [monotonic_representable(Q) for (Q,) in MONOTONE_PROBES]
        if any(not isinstance(r, bool) for r in results):
            return "`monotonic_representable(Q)` should return True or False"
        return None if list(results) == want else \
            "your test disagrees on some test matrices; think of ties and of columns as well as rows"

    g.item("the climbing game", 1, climbing)
    g.item("other matrices", 1, all_probes)
    return g.items


PARTS = [
    part_spec("27.7(a)", ["q_tot", "greedy_joint_action"], _grade_27_7_a, 2),
    part_spec("27.7(b)", ["monotonic_representable"], _grade_27_7_b, 2,
              {"monotonic_representable": MONOTONE_PROBES}),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
"""Public checks of exercise 27.7 (value factorization): a 3x3 fit that is a sum of per-agent
values, its greedy joint action, and the representability test on matrices worked out by hand (the
grader's matrices are other ones).

[[1, 2], [3, 4]]: the second row beats the first in both columns, the second column the first in
both rows, so a monotonic mixer represents it (True). [[0, 1, 0.5], [2, -1, 0]]: the first row is
below the second in the first column and above it in the second, so no monotonic mixer of
per-agent values orders them (False). Neither is [[1, 0], [0, 1]] (False), nor [[0, 1], [3, 2]],
whose rows keep their order but whose columns do not (False).
"""
import numpy as np

from labkit.grading.checking import ACTIONS3
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, function_results, pair, probe_results, reported, vector

PROBES = [(np.array([[1.0, 2.0], [3.0, 4.0]]),), (np.array([[0.0, 1.0, 0.5], [2.0, -1.0, 0.0]]),),
          (np.array([[1.0, 0.0], [0.0, 1.0]]),), (np.array([[0.0, 1.0], [3.0, 2.0]]),)]
REPRESENTABLE = [True, False, False, False]          # worked out in the docstring


def _additive(value):
    q = as_array(reported(value, "q_tot"), "q_tot", (3, 3))
    interaction = q - q[:, :1] - q[:1, :] + q[0, 0]
    if np.abs(interaction).max() > 1e-6:
        raise Wrong("a VDN fit is Q1(a) + Q2(b): then Q(a, b) - Q(a, b') - Q(a', b) + Q(a', b') = 0 for all "
                    "actions, and yours is not")


def _greedy(value):
    q = as_array(reported(value, "q_tot"), "q_tot", (3, 3))
    want = {(ACTIONS3[i], ACTIONS3[j]) for i, j in zip(*np.nonzero(q >= q.max() - 1e-9), strict=True)}
    got = tuple(reported(value, "greedy_joint_action"))
    if got not in want:
        raise Wrong(f"`greedy_joint_action` {got} is not where your q_tot is largest")


def _known(value):
    for (Q,), got, want in zip(PROBES, probe_results(value, "monotonic_representable", len(PROBES)),
                                 REPRESENTABLE, strict=False):
        if got is not want:
            raise Wrong(f"`monotonic_representable({Q.tolist()})` gave {got}, this case gives {want}: a monotonic "
                        "mixer keeps the order of each agent's actions the same whatever the other does, in rows and "
                        "in columns")


def _boolean(result, label):
    if not isinstance(result, bool):
        raise Wrong(f"`{label}` should return True or False")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("q_tot is a 3x3 array", lambda: vector(value, "q_tot", (3, 3)))
    f.item("q_tot is a sum of per-agent values", lambda: _additive(value))
    f.item("greedy_joint_action is a joint action", lambda: pair(value, "greedy_joint_action", ACTIONS3))
    f.item("greedy_joint_action maximizes q_tot", lambda: _greedy(value))
    return f


def _feedback_b(value):
    return FormatChecks(value).item(
        "monotonic_representable(Q) returns True or False",
        lambda: function_results(value, "monotonic_representable", len(PROBES), _boolean)).item(
        "monotonic_representable on four small matrices", lambda: _known(value))


PARTS = [
    public_part("27.7(a)", ["q_tot", "greedy_joint_action"], 2, _feedback_a),
    public_part("27.7(b)", ["monotonic_representable"], 2, _feedback_b, {"monotonic_representable": PROBES}),
]
'''
