"""Checks of exercise 27.8, preferences and Nash learning.

The exercise itself (text, answer and check cells) is labkit_instructor/exercises/ex27_8.py.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from labkit_instructor.checks.base import (Grader, as_array, as_number, close_to, part_spec, probe_results,
    reported)


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


@functools.lru_cache(maxsize=1)
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
