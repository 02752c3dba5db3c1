"""Checks of exercise 27.3, mirror descent orbits and regularization.

The exercise itself (text, answer and check cells) is labkit_instructor/exercises/ex27_3.py.
"""
from __future__ import annotations

import functools

import numpy as np

from labkit_instructor.checks.base import (BIASED_RPS, Grader, RPS_EQUILIBRIUM, as_array, close_to,
    kl_divergence, part_spec, probe_results, reported)

X0, Y0 = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
HEDGE_STEP, HEDGE_ROUNDS = 0.1, 200


ALPHA = 0.2


def _replicator(z, A):
    m = A.shape[0]
    x, y = z[:m], z[m:]
    u, w = A @ y, -A.T @ x
    return np.concatenate([x * (u - x @ u), y * (w - y @ w)])


def _simplex_points(seed, count):
    rng = np.random.default_rng(seed)
    return [np.concatenate([rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))]) for _ in range(count)]


REPLICATOR_PROBES = [(0.0, z, BIASED_RPS) for z in _simplex_points(2703, 3)]


def _hedge_kl():
    x, y = X0.copy(), Y0.copy()
    out = [kl_divergence(RPS_EQUILIBRIUM, x) + kl_divergence(RPS_EQUILIBRIUM, y)]
    for _ in range(HEDGE_ROUNDS):
        x, y = x * np.exp(HEDGE_STEP * BIASED_RPS @ y), y * np.exp(-HEDGE_STEP * BIASED_RPS.T @ x)
        x, y = x / x.sum(), y / y.sum()
        out.append(kl_divergence(RPS_EQUILIBRIUM, x) + kl_divergence(RPS_EQUILIBRIUM, y))
    return np.array(out)


@functools.lru_cache(maxsize=1)
def regularized_equilibrium(alpha=ALPHA):
    """(x_hat, y_hat) of the biased RPS with entropy regularization toward uniform magnets,
    found as the rest point of the regularized replicator dynamics in logit coordinates."""
    from scipy.integrate import solve_ivp
    A, m = BIASED_RPS, 3

    def rhs(_, s):
        x, y = np.exp(s[:m] - s[:m].max()), np.exp(s[m:] - s[m:].max())
        x, y = x / x.sum(), y / y.sum()
        return np.concatenate([A @ y - alpha * np.log(x * m), -A.T @ x - alpha * np.log(y * m)])

    sol = solve_ivp(rhs, (0, 400), np.zeros(2 * m), rtol=1e-11, atol=1e-12, method="LSODA")
    s = sol.y[:, -1]
    x, y = np.exp(s[:m] - s[:m].max()), np.exp(s[m:] - s[m:].max())
    return x / x.sum(), y / y.sum()


def _grade_27_3_a(value):
    g = Grader(value)

    def rhs():
        results = probe_results(value, "replicator", len(REPLICATOR_PROBES))
        for r, (_, z, A) in zip(results, REPLICATOR_PROBES):
            if not close_to(as_array(r, "replicator(t, z, A)", (6,)), _replicator(z, A), 1e-8):
                return ("`replicator(t, z, A)` differs from the dynamics at a test point; z stacks "
                        "x then y, and player 2's payoff vector is -A^T x")
        return None

    def constant():
        d = as_array(reported(value, "kl_along_trajectory"), "kl_along_trajectory")
        if d.ndim != 1 or len(d) < 20:
            return "report D at 20 or more times along the trajectory"
        if d.min() < 1e-3:
            return "start the trajectory away from the equilibrium"
        if (d.max() - d.min()) / d.mean() > 1e-5:
            return ("D varies along your trajectory: tighten the integrator's tolerances "
                    "(rtol, atol) or check the dynamics")
        return None

    g.item("replicator dynamics", 1, rhs)
    g.item("D constant along a trajectory", 1, constant)
    return g.items


def _grade_27_3_b(value):
    g = Grader(value)

    def hedge():
        d = as_array(reported(value, "hedge_kl"), "hedge_kl", (HEDGE_ROUNDS + 1,))
        if not np.allclose(d, _hedge_kl(), rtol=1e-6, atol=1e-9):
            return ("your D after the Hedge steps differs from the expected one: both players update "
                    "simultaneously from the previous round's strategies, with step 0.1")
        return None

    g.item("D under discrete Hedge", 1, hedge)
    return g.items


def _grade_27_3_c(value):
    g = Grader(value)
    x_hat, y_hat = regularized_equilibrium()

    def equilibrium():
        x = as_array(reported(value, "x_hat"), "x_hat", (3,))
        y = as_array(reported(value, "y_hat"), "y_hat", (3,))
        if not (close_to(x, x_hat, 1e-5) and close_to(y, y_hat, 1e-5)):
            return ("at the regularized equilibrium each player's regularized payoff vector is constant "
                    "over its actions: x_hat is proportional to rho * exp(A y_hat / alpha)")
        return None

    def decreasing():
        d = as_array(reported(value, "kl_regularized"), "kl_regularized")
        if d.ndim != 1 or len(d) < 20:
            return "report the divergence at 20 or more times along the trajectory"
        if np.any(np.diff(d) > 1e-9):
            return "the divergence to (x_hat, y_hat) must never increase along the regularized trajectory"
        if not d[-1] < 0.1 * d[0]:
            return "integrate longer: the divergence should fall below a tenth of its start"
        return None

    g.item("regularized equilibrium", 1, equilibrium)
    g.item("divergence decreases", 1, decreasing)
    return g.items


PARTS = [
    part_spec("27.3(a)", ["replicator", "kl_along_trajectory"], _grade_27_3_a, 2,
              {"replicator": REPLICATOR_PROBES}),
    part_spec("27.3(b)", ["hedge_kl"], _grade_27_3_b, 1),
    part_spec("27.3(c)", ["x_hat", "y_hat", "kl_regularized"], _grade_27_3_c, 2),
]
