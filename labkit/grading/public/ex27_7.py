"""Public checks of exercise 27.7 (value factorization): a 3x3 fit that is a sum of per-agent
values, its greedy joint action, and the representability test on matrices worked out by hand (the
grader's matrices are other ones).

[[1, 2], [3, 4]]: the second row beats the first in both columns, the second column the first in
both rows, so a monotonic mixer represents it (True). [[0, 1, 0.5], [2, -1, 0]]: the first row is
below the second in the first column and above it in the second, so no monotonic mixer of
per-agent values orders them (False). Neither is [[1, 0], [0, 1]] (False), nor [[0, 1], [3, 2]],
whose rows keep their order but whose columns do not (False).
"""
import numpy as np

from labkit.grading.checking import ACTIONS3
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, function_results, pair, probe_results, reported, vector

PROBES = [(np.array([[1.0, 2.0], [3.0, 4.0]]),), (np.array([[0.0, 1.0, 0.5], [2.0, -1.0, 0.0]]),),
          (np.array([[1.0, 0.0], [0.0, 1.0]]),), (np.array([[0.0, 1.0], [3.0, 2.0]]),)]
REPRESENTABLE = [True, False, False, False]          # worked out in the docstring


def _additive(value):
    q = as_array(reported(value, "q_tot"), "q_tot", (3, 3))
    interaction = q - q[:, :1] - q[:1, :] + q[0, 0]
    if np.abs(interaction).max() > 1e-6:
        raise Wrong("a VDN fit is Q1(a) + Q2(b): then Q(a, b) - Q(a, b') - Q(a', b) + Q(a', b') = 0 for all "
                    "actions, and yours is not")


def _greedy(value):
    q = as_array(reported(value, "q_tot"), "q_tot", (3, 3))
    want = {(ACTIONS3[i], ACTIONS3[j]) for i, j in zip(*np.nonzero(q >= q.max() - 1e-9), strict=True)}
    got = tuple(reported(value, "greedy_joint_action"))
    if got not in want:
        raise Wrong(f"`greedy_joint_action` {got} is not where your q_tot is largest")


def _known(value):
    for (Q,), got, want in zip(PROBES, probe_results(value, "monotonic_representable", len(PROBES)),
                                 REPRESENTABLE, strict=False):
        if got is not want:
            raise Wrong(f"`monotonic_representable({Q.tolist()})` gave {got}, this case gives {want}: a monotonic "
                        "mixer keeps the order of each agent's actions the same whatever the other does, in rows and "
                        "in columns")


def _boolean(result, label):
    if not isinstance(result, bool):
        raise Wrong(f"`{label}` should return True or False")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("q_tot is a 3x3 array", lambda: vector(value, "q_tot", (3, 3)))
    f.item("q_tot is a sum of per-agent values", lambda: _additive(value))
    f.item("greedy_joint_action is a joint action", lambda: pair(value, "greedy_joint_action", ACTIONS3))
    f.item("greedy_joint_action maximizes q_tot", lambda: _greedy(value))
    return f


def _feedback_b(value):
    return FormatChecks(value).item(
        "monotonic_representable(Q) returns True or False",
        lambda: function_results(value, "monotonic_representable", len(PROBES), _boolean)).item(
        "monotonic_representable on four small matrices", lambda: _known(value))


PARTS = [
    public_part("27.7(a)", ["q_tot", "greedy_joint_action"], 2, _feedback_a),
    public_part("27.7(b)", ["monotonic_representable"], 2, _feedback_b, {"monotonic_representable": PROBES}),
]
