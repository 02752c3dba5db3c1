"""Exercise 27.8: intransitive preferences, Bradley-Terry, and the Nash equilibrium of a preference game.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex27_8.py).
"""
from __future__ import annotations

import math

import numpy as np

from labkit_instructor.checks.base import (computed_once, Grader, as_array, as_number, close_to, part_spec, probe_results,
    reported)
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


# ------------------------------------------------------------------ the hidden checks
def _logit(p):
    return math.log(p / (1 - p))


def bradley_terry_consistent(P):
    """For three responses: the logits around the cycle must add up to zero."""
    P = np.asarray(P, float)
    return abs(_logit(P[0, 1]) + _logit(P[1, 2]) + _logit(P[2, 0])) < 1e-9


def _preference_probes():
    s = np.array([0.3, -1.2, 0.5])
    bt = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
    cyc = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.6], [0.7, 0.4, 0.5]])
    flat = np.full((3, 3), 0.5)
    skew = np.array([[0.5, 0.9, 0.6], [0.1, 0.5, 0.2], [0.4, 0.8, 0.5]])
    return [cyc, bt, flat, skew, 1 - cyc]


PREFERENCE_PROBES = [(P,) for P in _preference_probes()]


@computed_once
def preference_equilibrium():
    import labkit as lk
    policy, _ = lk.zero_sum_equilibrium(lk.games.load("preference_game"))
    return policy.probs[0].copy()


def _grade_27_8_a(value):
    g = Grader(value)
    P = PREFERENCE_PROBES[0][0]
    cycle = _logit(P[0, 1]) + _logit(P[1, 2]) + _logit(P[2, 0])

    def cycle_sum():
        v = as_number(reported(value, "logit_cycle_sum"), "logit_cycle_sum")
        return None if abs(v - cycle) < 1e-6 else \
            "add s(A)-s(B), s(B)-s(C) and s(C)-s(A) as the preferences would require them"

    def test():
        results = probe_results(value, "bradley_terry_consistent", len(PREFERENCE_PROBES))
        want = [bradley_terry_consistent(Q) for (Q,) in PREFERENCE_PROBES]
        return None if list(results) == want else "your test disagrees with the cycle condition on some matrices"

    g.item("logits around the cycle", 1, cycle_sum)
    g.item("Bradley-Terry test", 1, test)
    return g.items


def _grade_27_8_b(value):
    g = Grader(value)
    p = preference_equilibrium()
    from labkit.games import preference_game
    M = preference_game().A

    def equilibrium():
        x = as_array(reported(value, "nash_equilibrium"), "nash_equilibrium", (3,))
        return None if close_to(x, p, 1e-6) else \
            "at an interior equilibrium every response must do equally well against it"

    def worst_case():
        v = as_number(reported(value, "worst_case_payoff"), "worst_case_payoff")
        return None if abs(v - float((p @ M).min())) < 1e-6 else \
            "the worst case is the minimum over the opponent's responses of your expected payoff"

    g.item("Nash equilibrium", 1, equilibrium)
    g.item("worst-case payoff", 1, worst_case)
    return g.items


PARTS = [
    part_spec("27.8(a)", ["logit_cycle_sum", "bradley_terry_consistent"], _grade_27_8_a, 2,
              {"bradley_terry_consistent": PREFERENCE_PROBES}),
    part_spec("27.8(b)", ["nash_equilibrium", "worst_case_payoff"], _grade_27_8_b, 2),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
"""Public checks of exercise 27.8 (intransitive preferences): numbers, the Bradley-Terry test on two
matrices worked out by hand, and the guarantee of the equilibrium (the grader's matrices are other
ones).

Strengths 1, 2, 4 give P(i > j) = s_i / (s_i + s_j): P(A > B) = 1/3, P(B > C) = 1/3, P(C > A) = 4/5,
logits log(1/2) + log(1/2) + log 4 = 0 around the cycle: consistent (True). For
[[0.5, 0.6, 0.45], [0.4, 0.5, 0.7], [0.55, 0.3, 0.5]] the logits of 0.6, 0.7 and 0.55 are all
positive: not consistent (False). The preference game is symmetric, so its value is 0: an
equilibrium earns at least 0 against every response.
"""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import (Wrong, as_array, as_number, distribution, function_results, number,
                                           probe_results, reported)

PROBES = [(np.array([[0.5, 0.6, 0.45], [0.4, 0.5, 0.7], [0.55, 0.3, 0.5]]),),
          (np.array([[0.5, 1 / 3, 0.2], [2 / 3, 0.5, 1 / 3], [0.8, 2 / 3, 0.5]]),)]
CONSISTENT = [False, True]          # worked out in the docstring


def _known(value):
    for (P,), got, want in zip(PROBES, probe_results(value, "bradley_terry_consistent", len(PROBES)),
                                 CONSISTENT, strict=False):
        if got is not want:
            raise Wrong(f"`bradley_terry_consistent({np.round(P, 3).tolist()})` gave {got}, this case gives {want}: "
                        "Bradley-Terry needs logit P(i > j) = s(i) - s(j) for some scores s")


def _guarantee(value):
    import labkit as lk
    M = lk.games.preference_game().A
    e = as_array(reported(value, "nash_equilibrium"), "nash_equilibrium", (3,))
    earned = e @ M
    if earned.min() < -1e-6:
        raise Wrong("the game is symmetric, so its value is 0, and an equilibrium earns at least 0 against every "
                    f"response; yours earns {earned.min():.4f} against one")
    worst = as_number(reported(value, "worst_case_payoff"), "worst_case_payoff")
    if abs(worst - earned.min()) > 1e-6:
        raise Wrong("`worst_case_payoff` should be what your `nash_equilibrium` earns against the response that "
                    "does best against it")


def _boolean(result, label):
    if not isinstance(result, bool):
        raise Wrong(f"`{label}` should return True or False")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("logit_cycle_sum is a number", lambda: number(value, "logit_cycle_sum"))
    f.item("bradley_terry_consistent(P) returns True or False",
           lambda: function_results(value, "bradley_terry_consistent", len(PROBES), _boolean))
    f.item("bradley_terry_consistent on two worked matrices", lambda: _known(value))
    return f


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("nash_equilibrium is a distribution over 3 responses", lambda: distribution(value, "nash_equilibrium", 3))
    f.item("worst_case_payoff is a number", lambda: number(value, "worst_case_payoff"))
    f.item("the equilibrium earns at least the value 0", lambda: _guarantee(value))
    return f


PARTS = [
    public_part("27.8(a)", ["logit_cycle_sum", "bradley_terry_consistent"], 2, _feedback_a,
                {"bradley_terry_consistent": PROBES}),
    public_part("27.8(b)", ["nash_equilibrium", "worst_case_payoff"], 2, _feedback_b),
]
'''
