"""Checks of exercise 27.7, value decomposition.

The exercise itself (text, answer and check cells) is labkit_instructor/exercises/ex27_7.py.
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import Grader, as_array, as_pair, close_to, part_spec, probe_results, reported
from labkit_instructor.checks.ex27_6 import climbing_payoffs


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
