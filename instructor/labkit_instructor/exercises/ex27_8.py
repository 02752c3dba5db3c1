"""Exercise 27.8: intransitive preferences, Bradley-Terry, and the Nash equilibrium of a preference game."""
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, written

BT_TEMPLATE = '''
# P[i, j] = probability that response i is preferred to response j (order A, B, C)
P = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.6], [0.7, 0.4, 0.5]])

logit_cycle_sum = ...  # logit P(A > B) + logit P(B > C) + logit P(C > A)


def bradley_terry_consistent(P):
    """True when scores s exist with P[i, j] = sigmoid(s[i] - s[j]) for the three
    responses."""
    ...
'''

BT_SOLUTION = '''
# P[i, j] = probability that response i is preferred to response j (order A, B, C)
P = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.6], [0.7, 0.4, 0.5]])


def logit(p):
    return np.log(p / (1 - p))


# Bradley-Terry needs logit P(i > j) = s(i) - s(j); around a cycle the differences
# add up to 0
logit_cycle_sum = logit(P[0, 1]) + logit(P[1, 2]) + logit(P[2, 0])
print(
    f"sum of logits around A > B > C > A: {logit_cycle_sum:.6f}",
    f" (log 14 = {np.log(14):.6f})",
)


def bradley_terry_consistent(P):
    P = np.asarray(P, dtype=float)
    # with s(A) = 0, two comparisons fix s(B) and s(C); the third must agree
    return bool(abs(logit(P[0, 1]) + logit(P[1, 2]) + logit(P[2, 0])) < 1e-9)


print("Bradley-Terry consistent:", bradley_terry_consistent(P))
'''

NASH_TEMPLATE = '''
game = lk.games.preference_game()    # row payoff P(row > column) - 1/2
nash_equilibrium = ...               # a distribution over A, B, C
worst_case_payoff = ...              # its payoff against the opponent's best reply
'''

NASH_SOLUTION = '''
game = lk.games.preference_game()    # row payoff P(row > column) - 1/2
M = game.A
policy, value = lk.zero_sum_equilibrium(lk.games.load(game))
nash_equilibrium = policy.probs[0]
worst_case_payoff = (nash_equilibrium @ M).min()
print("equilibrium over A, B, C:", np.round(nash_equilibrium, 6))
print("its payoff against A, B, C:", np.round(nash_equilibrium @ M, 12) + 0.0)

# the same by hand: an interior equilibrium p of the antisymmetric M solves M p = 0
null = np.linalg.svd(M)[2][-1]
print("null vector of M, normalized:", np.round(null / null.sum(), 6))
'''

ANSWER_A = r'''
A Bradley–Terry model needs $\sigma(s_A - s_B) = 0.8$, $\sigma(s_B - s_C) = 0.6$ and $\sigma(s_C - s_A) = 0.7$,
that is $s_A - s_B = \operatorname{logit} 0.8 = \ln 4$, $s_B - s_C = \ln 1.5$ and $s_C - s_A = \ln(7/3)$.
The three left-hand sides add up to 0, the right-hand sides to $\ln(4 \cdot 1.5 \cdot 7/3) = \ln 14 > 0$.
No scores can satisfy all three: each preference is above 1/2, so a score would have to exceed
itself around the cycle $A \succ B \succ C \succ A$.
'''

ANSWER_C = r'''
The equilibrium mixes all three responses, with weights $(1/6, 1/3, 1/2)$ on $A, B, C$. Against it
every response -- hence every mixture -- is preferred exactly half of the time: no policy is preferred
to it more often than not, and that is the most any policy can guarantee when every response loses
to another one ($A$ to $C$, $B$ to $A$, $C$ to $B$).

The weights are not a ranking. For an antisymmetric $3\times3$ game, each response's weight is
proportional to the margin of the duel between the *other two*: $A$ gets $0.6 - 0.5 = 0.1$ (the margin
of $B$ over $C$), $B$ gets $0.2$ ($C$ over $A$) and $C$ gets $0.3$ ($A$ over $B$). $C$ has the largest weight
because it is the answer to $A$, whose win over $B$ is the most lopsided, although $C$ itself loses to
$B$. A Bradley–Terry reward model would rank the three responses and a policy maximizing it would put
all its weight on the top one, which some other response beats more often than not; the
equilibrium of the preference game is the policy that cannot be exploited that way.
'''

EXERCISE = Exercise("27.8", "27_8_intransitive_preferences", "Intransitive preferences", (
    md(r"""
        # Exercise 27.8 — Intransitive preferences

        This exercise goes with the chapter [General-sum games, language and learning-aware
        agents](../chapters/08_general_sum_and_language.ipynb).

        People compare three responses $A$, $B$, $C$ to the same prompt. $A$ is preferred to $B$ with
        probability $0.8$, $B$ to $C$ with probability $0.6$, and $C$ to $A$ with probability $0.7$.
    """),
    how_to("27.8"),
    SETUP,
    md(r"""
        ## (a) No scores explain them
        Prove that these preferences cannot come from a Bradley–Terry model, in which
        $\mathcal P(y \succ y') = \sigma(s(y) - s(y'))$ for some score $s$. In code: `logit_cycle_sum`, and a test `bradley_terry_consistent(P)` for any
        $3\times3$ preference matrix.
    """),
    written("27.8(a)", ANSWER_A, points=2),
    answer("27.8(a)", BT_TEMPLATE, BT_SOLUTION),
    check("27.8(a)"),
    md(r"""
        ## (b) The preference game
        Two players each choose a distribution over the responses; a player receives the probability
        that its response is preferred to the other's, minus $1/2$ (`lk.games.preference_game()`). Find
        the Nash equilibrium of this symmetric zero-sum game (`nash_equilibrium`) and its payoff against
        the opponent's best reply (`worst_case_payoff`).
    """),
    answer("27.8(b)", NASH_TEMPLATE, NASH_SOLUTION),
    check("27.8(b)"),
    md(r"""
        ## (c) What the equilibrium means
        Interpret the equilibrium.
    """),
    written("27.8(c)", ANSWER_C, points=1),
))
