"""Regret minimizers at every information set at once, as pure array functions.

All functions work on arrays of shape (num_infosets, num_actions) (or any (..., num_actions))
with a boolean `legal_mask` of the same shape; illegal actions always get probability 0.
They are shared by CFR, CFR+, MCCFR, EFR and PSRO.

* Regret matching (Hart and Mas-Colell, 2000): play in proportion to positive regret.
* Regret matching+ (Tammelin, 2014): the same, on cumulative regrets floored at 0 after
  every update.
* Hedge / multiplicative weights (Freund and Schapire, 1997): play in proportion to
  exp(learning_rate * cumulative value).

Exact ties
----------
Regret matching is discontinuous where no regret is positive: R = [0, 0] plays uniformly,
R = [1e-17, 0] plays the first action with probability 1. Floating point cannot make two
counterfactual values that are equal as rationals come out bit for bit equal (they are sums of
different terms, in different orders), so a tie at 0 leaves a rounding residue of either sign,
and the residue's sign decides the next strategy. labkit therefore treats as zero every regret
whose magnitude is below

    TIE_TOLERANCE * scale,   TIE_TOLERANCE = 1e-10,

where `scale` bounds the magnitude of the terms the regret was summed from: for an
instantaneous regret at infoset I, ``pi_{-i}(I) * max_z |u_i(z)|`` (the others' and chance's
reach of I times the largest payoff of the player; no term of q(I, a) is larger, whatever the
policy below I), and for a cumulative regret the sum of those bounds over the iterations, with
the same weights and discounts as the regrets. Rounding errors are of order 1e-16 of `scale`
per summed term, far below the tolerance; a regret that is exactly positive but below it is
1e-10 of what the infoset could gain or lose, and treating it as 0 moves no value by more than
that. Concretely:

1. `clean_ties` sets instantaneous regrets with |r| <= TIE_TOLERANCE * scale to exactly 0, so
   an exact tie adds exact zeros to the cumulative regrets;
2. `regret_matching` counts a cumulative regret as positive only if R > TIE_TOLERANCE * S
   (S the cumulative scale), so ties that cancel across iterations (r_1 = -r_2) are still ties;
3. `regret_matching_plus_update` floors at 0 everything up to the same threshold, so RM+ keeps
   exact zeros.

EFR (`labkit.efr.learner`) applies the same rule to each (infoset, time-selection) row, and so
to the weights ``y_phi`` of its fixed point; ``fixed_point="paper"`` does not: it replays the
EFR authors' floating point, residues included.
"""
from __future__ import annotations

import numpy as np

TIE_TOLERANCE = 1e-10


def uniform_rows(legal_mask):
    """The uniform distribution over the legal actions of every row."""
    legal = np.asarray(legal_mask, dtype=float)
    return legal / legal.sum(axis=-1, keepdims=True)


def clean_ties(instant_regrets, scale):
    """Set the instantaneous regrets within rounding of 0 to exactly 0, in place.

    Parameters
    ----------
    instant_regrets : (..., A) float array
        r(I, a), modified in place where |r(I, a)| <= TIE_TOLERANCE * scale(I).
    scale : (..., 1) or (...,)-broadcastable array
        A bound on the magnitude of the terms r was computed from (module docstring).

    Returns
    -------
    instant_regrets
    """
    small = np.abs(instant_regrets) <= TIE_TOLERANCE * scale
    instant_regrets[small] = 0.0
    return instant_regrets


def regret_matching(cumulative_regrets, legal_mask, uniform=None, out=None, scale=None):
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
    scale : (..., 1) array, optional
        Cumulative magnitude S(I) of the terms the regrets were summed from; regrets
        R <= TIE_TOLERANCE * S count as 0 (exact ties, module docstring). None: plain R > 0.

    Returns
    -------
    (..., A) array of row-stochastic probabilities, zero on illegal actions.
    """
    if scale is None:
        positive = np.maximum(cumulative_regrets, 0.0)
    else:
        positive = np.where(cumulative_regrets > TIE_TOLERANCE * scale, cumulative_regrets, 0.0)
    positive *= legal_mask
    total = np.add.reduce(positive, axis=-1, keepdims=True)
    if uniform is None:
        uniform = uniform_rows(legal_mask)
    if out is None:
        out = np.empty(positive.shape)
    np.copyto(out, uniform)                   # kept where no regret is positive
    np.divide(positive, total, out=out, where=total > 0.0)
    return out


def regret_matching_plus_update(cumulative_regrets, instant_regrets, scale=None):
    """The RM+ accumulation Q <- max(Q + r, 0), returned as a new array.

    Regret matching on these floored sums is regret matching+. With `scale` (the cumulative
    magnitude S(I) after this update), sums up to TIE_TOLERANCE * S are floored to 0 too.
    """
    total = cumulative_regrets + instant_regrets
    if scale is None:
        return np.maximum(total, 0.0)
    return np.where(total > TIE_TOLERANCE * scale, total, 0.0)


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
