"""Regret minimizers at every information set at once, as pure array functions.

All functions work on arrays of shape (num_infosets, num_actions) (or any (..., num_actions))
with a boolean `legal_mask` of the same shape; illegal actions always get probability 0.
They are shared by CFR, CFR+, MCCFR, EFR and PSRO.

* Regret matching (Hart and Mas-Colell, 2000): play in proportion to positive regret.
* Regret matching+ (Tammelin, 2014): the same, on cumulative regrets floored at 0 after
  every update.
* Hedge / multiplicative weights (Freund and Schapire, 1997): play in proportion to
  exp(learning_rate * cumulative value).
"""
from __future__ import annotations

import numpy as np


def uniform_rows(legal_mask):
    """The uniform distribution over the legal actions of every row."""
    legal = np.asarray(legal_mask, dtype=float)
    return legal / legal.sum(axis=-1, keepdims=True)


def regret_matching(cumulative_regrets, legal_mask, uniform=None, out=None):
    """sigma(I, a) = R+(I, a) / sum_b R+(I, b) with R+ = max(R, 0); uniform over the legal
    actions where no regret is positive.

    Parameters
    ----------
    cumulative_regrets : (..., A) array
    legal_mask : (..., A) bool or 0/1 float array
        (a float mask saves a type conversion per call in tight loops)
    uniform : (..., A) array, optional
        `uniform_rows(legal_mask)`, if the caller has it already (saves work in tight loops).
    out : (..., A) float array, optional
        Where to write the result (a solver reuses one buffer every iteration).

    Returns
    -------
    (..., A) array of row-stochastic probabilities, zero on illegal actions.
    """
    positive = np.maximum(cumulative_regrets, 0.0)
    positive *= legal_mask
    total = np.add.reduce(positive, axis=-1, keepdims=True)
    if uniform is None:
        uniform = uniform_rows(legal_mask)
    if out is None:
        out = np.empty(positive.shape)
    np.copyto(out, uniform)                   # kept where no regret is positive
    np.divide(positive, total, out=out, where=total > 0.0)
    return out


def regret_matching_plus_update(cumulative_regrets, instant_regrets):
    """The RM+ accumulation Q <- max(Q + r, 0), returned as a new array.

    Regret matching on these floored sums is regret matching+.
    """
    return np.maximum(cumulative_regrets + instant_regrets, 0.0)


def hedge(cumulative_values, legal_mask, learning_rate):
    """sigma(I, a) proportional to exp(learning_rate * V(I, a)) over the legal actions.

    `cumulative_values` may be cumulative regrets or cumulative action values: the two differ by
    a constant per row, which the normalization removes. The row maximum is subtracted first so
    the exponentials cannot overflow.
    """
    if not learning_rate > 0:
        raise ValueError(f"learning_rate must be positive, got {learning_rate!r}")
    legal = np.asarray(legal_mask, dtype=bool)
    scores = np.where(legal, learning_rate * np.asarray(cumulative_values, dtype=float), -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    return weights / weights.sum(axis=-1, keepdims=True)
