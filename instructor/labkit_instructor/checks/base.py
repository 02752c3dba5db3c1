"""Everything a hidden check imports, from one place.

The generic readers and results live in the student package (`labkit.grading.checking`, which
holds no expected value); the game data the reference computations share (the biased
rock-paper-scissors game of exercises 27.2 and 27.3 and its equilibrium) live here.
"""
from __future__ import annotations

import numpy as np

from labkit.grading.checking import (ACTIONS3, RPS, Grader, Item, PartResult, PartSpec, Wrong, as_action,  # noqa: F401
                                     as_array, as_distribution, as_number, as_pair, close_to, kind_of, part_spec,
                                     probe_results, reported)


def kl_divergence(p, q):
    """KL(p || q) = sum_i p_i log(p_i / q_i) over the support of p."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


BIASED_RPS = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-2.0, 1.0, 0.0]])
RPS_EQUILIBRIUM = np.array([0.25, 0.5, 0.25])
