"""Public checks of exercise 27.3 (mirror descent orbits): the dynamics stay on the simplex, their
value at a point of plain rock-paper-scissors worked out by hand (the grader probes the biased
game), and the shape of the three series of divergences the exercise is about.

Plain rock-paper-scissors A = [[0, 1, -1], [-1, 0, 1], [1, -1, 0]] at x = (0.6, 0.3, 0.1),
y = (0.2, 0.2, 0.6): u = A y = (-0.4, 0.4, 0), x.u = -0.12, dx = x (u - x.u) = (-0.168, 0.156, 0.012);
w = -A^T x = (0.2, -0.5, 0.3), y.w = 0.12, dy = y (w - y.w) = (0.016, -0.124, 0.108).
"""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, distribution, expect, probe_results, reported, series

GAME = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])
POINT = np.array([0.6, 0.3, 0.1, 0.2, 0.2, 0.6])
HEDGE_ROUNDS = 200
VELOCITY = [-0.168, 0.156, 0.012, 0.016, -0.124, 0.108]        # worked out in the docstring


def _velocity(value):
    dz = as_array(probe_results(value, "replicator", 1)[0], "replicator(t, z, A)", (6,))
    expect(dz, VELOCITY, "replicator(0, (0.6, 0.3, 0.1, 0.2, 0.2, 0.6), rock-paper-scissors)",
           "dx_i = x_i ((A y)_i - x.A y) for player 1 and dy_j = y_j ((-A^T x)_j - y.(-A^T x)) for player 2, whose "
           "payoffs are the negatives of player 1's")


def _conserved(value):
    d = as_array(reported(value, "kl_along_trajectory"), "kl_along_trajectory")
    if np.ptp(d) > 1e-3 * max(abs(d.mean()), 1e-12):
        raise Wrong("along an exact orbit of the replicator dynamics in a zero-sum game with an interior "
                    "equilibrium, the divergence from the equilibrium stays constant; yours varies by "
                    f"{np.ptp(d):.2g}: integrate with tight tolerances, from the equilibrium to the trajectory")


def _grows(value):
    d = as_array(reported(value, "hedge_kl"), "hedge_kl")
    if not d[-1] > d[0]:
        raise Wrong("simultaneous Hedge steps in a zero-sum game move away from the interior equilibrium: the "
                    "divergence should end above where it started")


def _settles(value):
    d = as_array(reported(value, "kl_regularized"), "kl_regularized")
    if not d[-1] < d[0]:
        raise Wrong("the regularized dynamics converge to their rest point: the divergence from it should end "
                    "below where it started")


def _tangent(value):
    dz = as_array(probe_results(value, "replicator", 1)[0], "replicator(t, z, A)", (6,))
    if abs(dz[:3].sum()) > 1e-8 or abs(dz[3:].sum()) > 1e-8:
        raise Wrong("the replicator dynamics keep each player on the simplex: the entries of dx (and of dy) "
                    "must add up to 0")


def _length(value, name, n):
    if len(as_array(reported(value, name), name)) != n:
        raise Wrong(f"`{name}` should hold {n} divergences: the start and one after each of the rounds")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("replicator(t, z, A) returns 6 numbers that keep z on the simplex", lambda: _tangent(value))
    f.item("replicator at a point of rock-paper-scissors", lambda: _velocity(value))
    f.item("kl_along_trajectory is a series of 20+ divergences", lambda: series(value, "kl_along_trajectory"))
    f.item("kl_along_trajectory stays constant", lambda: _conserved(value))
    return f


def _feedback_b(value):
    f = FormatChecks(value)
    f.item(f"hedge_kl has {HEDGE_ROUNDS + 1} divergences >= 0",
           lambda: series(value, "hedge_kl", HEDGE_ROUNDS + 1)
           or _length(value, "hedge_kl", HEDGE_ROUNDS + 1))
    f.item("hedge_kl ends above its start", lambda: _grows(value))
    return f


def _feedback_c(value):
    f = FormatChecks(value)
    f.item("x_hat and y_hat are distributions",
           lambda: distribution(value, "x_hat", 3) or distribution(value, "y_hat", 3))
    f.item("kl_regularized is a series of 20+ divergences", lambda: series(value, "kl_regularized"))
    f.item("kl_regularized ends below its start", lambda: _settles(value))
    return f


PARTS = [
    public_part("27.3(a)", ["replicator", "kl_along_trajectory"], 2, _feedback_a,
                {"replicator": [(0.0, POINT, GAME)]}),
    public_part("27.3(b)", ["hedge_kl"], 1, _feedback_b),
    public_part("27.3(c)", ["x_hat", "y_hat", "kl_regularized"], 2, _feedback_c),
]
