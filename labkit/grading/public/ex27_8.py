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
