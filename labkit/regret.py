r"""Regret minimizers at every information set at once, as pure array functions.

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

The tolerance is a parameter of every function here (``tolerance``, default TIE_TOLERANCE) and
of the CFR solvers (``tie_tolerance``); 0 turns the rule off (a regret counts as positive as soon
as it is > 0). A decision whose stakes are 1e-10 of the game's largest payoff or less is a tie
under the default: in a game with payoffs of +-1e4, regrets below 1e-6 at an infoset reached with
probability 1.

EFR (`labkit.efr.learner`) applies the same rule to each (infoset, time-selection) row, and so
to the weights ``y_phi`` of its fixed point; ``fixed_point="paper"`` does not: it replays the
EFR authors' floating point, residues included.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

TIE_TOLERANCE = 1e-10


def _check_tolerance(tolerance: float) -> float:
    """`tolerance` as a float >= 0, or ValueError."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float, np.integer, np.floating)) \
            or not 0 <= tolerance < 1:
        raise ValueError(f"the tie tolerance must be a number in [0, 1), got {tolerance!r}")
    return float(tolerance)


def uniform_rows(legal_mask: ArrayLike) -> np.ndarray:
    """The uniform distribution over the legal actions of every row.

    Parameters
    ----------
    legal_mask : (..., A) bool or 0/1 array_like

    Returns
    -------
    (..., A) float array

    Examples
    --------
    >>> print(uniform_rows([[True, True, False], [True, True, True]]))
    [[0.5        0.5        0.        ]
     [0.33333333 0.33333333 0.33333333]]
    """
    legal = np.asarray(legal_mask, dtype=float)
    return legal / legal.sum(axis=-1, keepdims=True)


def clean_ties(instant_regrets: np.ndarray, scale: ArrayLike, tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    r"""Set the instantaneous regrets within rounding of 0 to exactly 0, in place:
    :math:`r(I, a) \leftarrow 0` where :math:`|r(I, a)| \le \tau\, s(I)`.

    Parameters
    ----------
    instant_regrets : (..., A) float array
        r(I, a), modified in place.
    scale : (..., 1) or (...,)-broadcastable array
        s(I), a bound on the magnitude of the terms r was computed from (module docstring).
    tolerance : float
        :math:`\tau`, TIE_TOLERANCE (1e-10) by default; 0 cleans only exact zeros.

    Returns
    -------
    (..., A) float array
        `instant_regrets` itself.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.array([[3e-17, -3e-17], [1e-3, -1e-3]])
    >>> print(clean_ties(r, scale=np.array([[1.0], [1.0]])))
    [[ 0.     0.   ]
     [ 0.001 -0.001]]
    """
    small = np.abs(instant_regrets) <= tolerance * np.asarray(scale)
    instant_regrets[small] = 0.0
    return instant_regrets


def regret_matching(cumulative_regrets: np.ndarray, legal_mask: ArrayLike, uniform: np.ndarray | None = None,
                    out: np.ndarray | None = None, scale: np.ndarray | None = None,
                    tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    r"""Regret matching: play in proportion to positive regret.

    .. math:: \sigma(I, a) = \frac{R^+(I, a)}{\sum_b R^+(I, b)}, \qquad R^+ = \max(R, 0),

    and uniform over the legal actions where no regret is positive.

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
        R <= tolerance * S count as 0 (exact ties, module docstring). None: plain R > 0.
    tolerance : float
        The tie tolerance (with `scale`); TIE_TOLERANCE by default.

    Returns
    -------
    (..., A) float array
        Row-stochastic probabilities, zero on illegal actions.

    References
    ----------
    S. Hart and A. Mas-Colell (2000), "A simple adaptive procedure leading to correlated
    equilibrium", Econometrica 68(5).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[3.0, 1.0, -2.0], [-1.0, -1.0, 0.0]])
    >>> print(regret_matching(R, np.ones((2, 3), dtype=bool)))
    [[0.75       0.25       0.        ]
     [0.33333333 0.33333333 0.33333333]]
    """
    if scale is None:
        positive = np.maximum(cumulative_regrets, 0.0)
    else:
        positive = np.where(cumulative_regrets > tolerance * scale, cumulative_regrets, 0.0)
    positive *= legal_mask
    total = np.add.reduce(positive, axis=-1, keepdims=True)
    if uniform is None:
        uniform = uniform_rows(legal_mask)
    if out is None:
        out = np.empty(positive.shape)
    np.copyto(out, np.asarray(uniform))                   # kept where no regret is positive
    np.divide(positive, total, out=out, where=total > 0.0)
    return out


def regret_matching_plus_update(cumulative_regrets: np.ndarray, instant_regrets: np.ndarray,
                                scale: np.ndarray | None = None, tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    r"""The RM+ accumulation :math:`Q \leftarrow \max(Q + r, 0)`, returned as a new array.

    Regret matching on these floored sums is regret matching+.

    Parameters
    ----------
    cumulative_regrets : (..., A) float array
        Q before the update.
    instant_regrets : (..., A) float array
        r.
    scale : (..., 1) array, optional
        The cumulative magnitude S(I) after this update: sums up to tolerance * S are floored
        to 0 too.
    tolerance : float
        The tie tolerance; TIE_TOLERANCE by default.

    Returns
    -------
    (..., A) float array

    References
    ----------
    O. Tammelin (2014), "Solving large imperfect information games using CFR+", arXiv:1407.5042.

    Examples
    --------
    >>> import numpy as np
    >>> print(regret_matching_plus_update(np.array([[1.0, 0.0]]), np.array([[-2.0, 0.5]])))
    [[0.  0.5]]
    """
    total = cumulative_regrets + instant_regrets
    if scale is None:
        return np.maximum(total, 0.0)
    return np.where(total > tolerance * scale, total, 0.0)


def hedge(cumulative_values: ArrayLike, legal_mask: ArrayLike, learning_rate: float) -> np.ndarray:
    r"""Hedge (multiplicative weights): play in proportion to the exponentiated cumulative values.

    .. math:: \sigma(I, a) = \frac{\exp(\eta V(I, a))}{\sum_{b \in A(I)} \exp(\eta V(I, b))}

    `cumulative_values` may be cumulative regrets or cumulative action values: the two differ by
    a constant per row, which the normalization removes. The row maximum is subtracted first so
    the exponentials cannot overflow.

    Parameters
    ----------
    cumulative_values : (..., A) array_like
        V.
    legal_mask : (..., A) bool array_like
    learning_rate : float
        :math:`\eta > 0`.

    Returns
    -------
    (..., A) float array
        Zero on illegal actions.

    Raises
    ------
    ValueError
        If the learning rate is not positive.

    References
    ----------
    Y. Freund and R. E. Schapire (1997), "A decision-theoretic generalization of on-line learning
    and an application to boosting", Journal of Computer and System Sciences 55(1).

    Examples
    --------
    >>> import numpy as np
    >>> print(hedge(np.array([[0.0, np.log(3.0)]]), [[True, True]], learning_rate=1.0))
    [[0.25 0.75]]
    """
    if not learning_rate > 0:
        raise ValueError(f"learning_rate must be positive, got {learning_rate!r}")
    legal = np.asarray(legal_mask, dtype=bool)
    scores = np.where(legal, learning_rate * np.asarray(cumulative_values, dtype=float), -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    return weights / weights.sum(axis=-1, keepdims=True)
