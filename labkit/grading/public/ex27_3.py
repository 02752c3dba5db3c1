"""Public checks of exercise 27.3 (mirror descent orbits): the dynamics stay on the simplex, series of divergences."""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, distribution, probe_results, reported, series

GAME = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])
POINT = np.array([0.6, 0.3, 0.1, 0.2, 0.2, 0.6])
HEDGE_ROUNDS = 200


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
    f.item("kl_along_trajectory is a series of 20+ divergences", lambda: series(value, "kl_along_trajectory"))
    return f


def _feedback_b(value):
    f = FormatChecks(value)
    f.item(f"hedge_kl has {HEDGE_ROUNDS + 1} divergences >= 0",
           lambda: series(value, "hedge_kl", HEDGE_ROUNDS + 1)
           or _length(value, "hedge_kl", HEDGE_ROUNDS + 1))
    return f


def _feedback_c(value):
    f = FormatChecks(value)
    f.item("x_hat and y_hat are distributions",
           lambda: distribution(value, "x_hat", 3) or distribution(value, "y_hat", 3))
    f.item("kl_regularized is a series of 20+ divergences", lambda: series(value, "kl_regularized"))
    return f


PARTS = [
    public_part("27.3(a)", ["replicator", "kl_along_trajectory"], 2, _feedback_a,
                {"replicator": [(0.0, POINT, GAME)]}),
    public_part("27.3(b)", ["hedge_kl"], 1, _feedback_b),
    public_part("27.3(c)", ["x_hat", "y_hat", "kl_regularized"], 2, _feedback_c),
]
