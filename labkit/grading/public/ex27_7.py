"""Public checks of exercise 27.7 (value factorization): a 3x3 fit, a joint action, a test returning booleans."""
import numpy as np

from labkit.grading.checking import ACTIONS3
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, function_results, pair, vector

PROBES = [(np.array([[1.0, 2.0], [3.0, 4.0]]),), (np.array([[0.0, 1.0, 0.5], [2.0, -1.0, 0.0]]),)]


def _boolean(result, label):
    if not isinstance(result, bool):
        raise Wrong(f"`{label}` should return True or False")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("q_tot is a 3x3 array", lambda: vector(value, "q_tot", (3, 3)))
    f.item("greedy_joint_action is a joint action", lambda: pair(value, "greedy_joint_action", ACTIONS3))
    return f


def _feedback_b(value):
    return FormatChecks(value).item(
        "monotonic_representable(Q) returns True or False",
        lambda: function_results(value, "monotonic_representable", len(PROBES), _boolean))


PARTS = [
    public_part("27.7(a)", ["q_tot", "greedy_joint_action"], 2, _feedback_a),
    public_part("27.7(b)", ["monotonic_representable"], 2, _feedback_b, {"monotonic_representable": PROBES}),
]
