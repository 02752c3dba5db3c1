"""Exercise 27.7: what additive (VDN) and monotonic (QMIX-style) value factorizations can represent."""
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
