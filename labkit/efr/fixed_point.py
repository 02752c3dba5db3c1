r"""Exact regret matching over action transformations: the fixed point at one infoset, batched.

Given nonnegative weights :math:`y_\phi` for the transformations :math:`\phi` of an infoset (EFR's
:math:`y_\phi = \sum_s w(s) \max(R[s, \phi], 0)`), regret matching plays a fixed point of

.. math:: L(\sigma) = \frac{1}{z} \sum_\phi y_\phi\, \phi(\sigma), \qquad z = \sum_\phi y_\phi,

and the uniform distribution when :math:`z = 0` (Greenwald, Jafari and Marks, 2003). L is the transition
of a Markov chain on the actions: an external transformation "every action becomes b" moves the
mass of every action to b, an internal one "a becomes b" moves a's mass to b. A fixed point is a
stationary distribution of that chain.

The rule used here (deterministic, documented):

1. Only external transformations carry weight, or the infoset has two actions: the chain has
   a unique stationary distribution, sigma(b) = (mass moved onto b) / z, in closed form.
2. Otherwise the chain's closed classes are found from the pattern of positive weights (exactly,
   no tolerance). Transient actions get probability exactly 0. Each closed class C has a unique
   stationary distribution pi_C, computed by the Grassmann-Taksar-Heyman (GTH) state reduction,
   which never subtracts and so keeps the relative accuracy of every entry.
3. With several closed classes the fixed point is not unique. We return the one of minimum
   Euclidean norm, :math:`\sigma = \sum_C c_C \pi_C` with :math:`c_C \propto 1 / \lVert\pi_C\rVert^2`.
   This is, in exact arithmetic, what the EFR authors' solver returns: the minimum-norm
   least-squares solution of :math:`[L - I; \mathbf{1}^\top] \sigma = [0; 1]` (their supports are
   disjoint, so the norm is :math:`\sum_C c_C^2 \lVert\pi_C\rVert^2`).

Unlike a floating-point least-squares solve, steps 2 and 3 never put a 1e-17 on an action no
closed class contains. That matters: such an entry becomes a tiny positive time-selection weight
at the infosets below and can flip a later strategy from uniform to decided. On Leduc (fixed
regime, column CF, 500 rounds) this rule gives ACT_IN -29.84, CSPS 67.23, TIPS 91.60 and BHV
133.30 mbb, where the authors' published numbers (from their Eigen build's rounding) are -25.35,
68.43, 91.52 and 129.39; the rows whose weights include the constant 1 are unaffected and match
to the printed decimal (the paper's Leduc table, Figure E.5).

A second path for rounding noise is EFR's rule that an infoset is updated only when the others
reach it with positive probability: a 1e-16 on an opponent's action makes an infoset "reached"
that is exactly unreached, and its strategy is recomputed from newer weights. In CFPS_EX+IN
self-play on Leduc this happens in round 5 already (four infosets "Q?|K?|crc|r" move by 6e-3), and
rows played against that self-play sequence change by tens of mbb over 500 rounds (CFPS: 89.8
exact, 33.5 with rule="lstsq", 30.4 published). Rounding sensitivity is therefore a property of
the column (the self-play sequence) as well as of the row. ``rule="lstsq"`` measures it.

``rule="paper"`` removes the question: it is the authors' solver itself (Eigen's JacobiSVD,
`labkit.efr.eigen`), and ``EFR(..., fixed_point="paper")`` also forms every sum of the round in
their order (`labkit.efr.paper_numerics`), so that the solver sees the same bits. With it the
Leduc tables of the paper's Figure E.5 are reproduced to the printed decimal.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


FIXED_POINT_RULES = ("exact", "lstsq", "paper")


def transformation_fixed_point(y: NDArray[np.floating[Any]], legal: NDArray[np.bool_], external_offset: int | None,
                               internal_offset: int | None, rule: str = "exact") -> NDArray[np.float64]:
    r"""Regret-matching strategies for a batch of infosets: a fixed point of
    :math:`L(\sigma) = \frac{1}{z} \sum_\phi y_\phi \phi(\sigma)` per infoset (module docstring).

    Parameters
    ----------
    y : (B, S) array, nonnegative
        Weights of the transformation slots: if `external_offset` is not None, slots
        ``external_offset + b`` are "every action becomes b"; if `internal_offset` is not None,
        slots ``internal_offset + a * A + b`` are "a becomes b". Slots of illegal actions and
        the diagonal a -> a must be 0.
    legal : (B, A) bool array
        The legal actions of each infoset (at least one per row).
    external_offset : int or None
        First slot of the external transformations in `y`, or None when there are none.
    internal_offset : int or None
        First slot of the internal transformations in `y`, or None when there are none.
    rule : {"exact", "lstsq", "paper"}
        "exact" (default): the rule of this module's docstring. "lstsq": the EFR authors' approach
        with numpy, for comparison: wherever an internal transformation carries weight, the
        minimum-norm least-squares solution of [L - I; 1^T] sigma = [0; 1] by SVD, clipped to
        [0, 1]. Its rounding noise (about 1e-16 on actions that should get 0) is not theirs, so it
        shows how far rounding alone moves results. "paper": their procedure exactly, Eigen's
        JacobiSVD included (`labkit.efr.eigen`, which needs a C++ compiler and Eigen's headers).

    Returns
    -------
    (B, A) float array
        One distribution per infoset over its legal actions (uniform where all weights are 0).

    Raises
    ------
    ValueError
        If `rule` is not one of `FIXED_POINT_RULES`.

    Examples
    --------
    Three actions, slots 0-2 external and 3-11 internal. External weights alone give the
    closed form, the mass moved onto each action over the total:

    >>> import numpy as np
    >>> legal = np.ones((1, 3), dtype=bool)
    >>> y = np.zeros((1, 12))
    >>> y[0, [0, 2]] = 1.0, 3.0
    >>> transformation_fixed_point(y, legal, 0, 3)
    array([[0.25, 0.  , 0.75]])

    A cycle of internal transformations 0 -> 1 -> 2 -> 0 (weights 1, 1, 2): the stationary
    distribution of that chain.

    >>> y = np.zeros((1, 12))
    >>> y[0, [3 + 0 * 3 + 1, 3 + 1 * 3 + 2, 3 + 2 * 3 + 0]] = 1.0, 1.0, 2.0
    >>> transformation_fixed_point(y, legal, 0, 3)
    array([[0.4, 0.4, 0.2]])
    >>> transformation_fixed_point(np.zeros((1, 12)), legal, 0, 3)
    array([[0.33333333, 0.33333333, 0.33333333]])
    """
    if rule not in FIXED_POINT_RULES:
        raise ValueError(f"rule must be one of {FIXED_POINT_RULES}, got {rule!r}")
    if rule == "paper":
        from labkit.efr.eigen import eigen_fixed_point
        return eigen_fixed_point(y, legal, external_offset, internal_offset)
    B, A = legal.shape
    external = y[:, external_offset:external_offset + A] if external_offset is not None else np.zeros((B, A))
    internal = (y[:, internal_offset:internal_offset + A * A].reshape(B, A, A)
                if internal_offset is not None else None)
    z = y.sum(axis=1)
    # closed form: the mass that lands on each action b
    inflow = external + internal.sum(axis=1) if internal is not None else external
    positive = z > 0
    uniform = legal / legal.sum(axis=1, keepdims=True)
    sigma = np.where(positive[:, None], inflow / np.where(positive, z, 1.0)[:, None], uniform)
    if internal is not None and rule == "lstsq":
        chain = positive & (internal > 0).any(axis=(1, 2))
        if chain.any():
            sigma[chain] = _least_squares_fixed_point(internal[chain], external[chain], legal[chain], z[chain])
        return sigma
    if internal is not None and A >= 3:
        chain = positive & (legal.sum(axis=1) >= 3) & (internal > 0).any(axis=(1, 2))
        if chain.any():
            # P[l, b]: rate from action l to action b (off the diagonal)
            moves = internal[chain] + external[chain][:, None, :] * legal[chain][:, :, None]
            moves[:, np.arange(A), np.arange(A)] = 0.0
            sigma[chain] = min_norm_stationary(moves, legal[chain])
    return sigma


def min_norm_stationary(moves: NDArray[np.floating[Any]], legal: NDArray[np.bool_]) -> NDArray[np.float64]:
    r"""Minimum-norm stationary distribution of Markov chains given by their off-diagonal rates.

    Transient states get exactly 0; each closed class C has its stationary distribution
    :math:`\pi_C` (GTH state reduction, no subtraction), and with several classes the result is

    .. math:: \sigma = \sum_C c_C \pi_C, \qquad
              c_C = \frac{1 / \lVert\pi_C\rVert^2}{\sum_{C'} 1 / \lVert\pi_{C'}\rVert^2}.

    Parameters
    ----------
    moves : (B, n, n) float array, nonnegative
        ``moves[:, l, b]`` is the rate from state l to state b (the diagonal is ignored; only
        ratios matter).
    legal : (B, n) bool array
        States outside it are ignored (probability 0).

    Returns
    -------
    (B, n) float array
        One distribution per chain.

    Examples
    --------
    States 0 and 1 move to each other (rates 1 and 2), state 2 is absorbing: two closed classes,
    :math:`\pi = (2/3, 1/3)` on {0, 1} and 1 on {2}, weighted 9/14 and 5/14.

    >>> import numpy as np
    >>> moves = np.array([[[0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]])
    >>> min_norm_stationary(moves, np.ones((1, 3), dtype=bool))
    array([[0.42857143, 0.21428571, 0.35714286]])
    """
    B, n = legal.shape
    off_diagonal = ~np.eye(n, dtype=bool)
    edge = (moves > 0) & off_diagonal & legal[:, :, None] & legal[:, None, :]
    # reachability (reflexive, transitive closure) by repeated squaring
    reach = (edge | ~off_diagonal).astype(float)
    for _ in range(max(1, int(np.ceil(np.log2(max(n - 1, 1)))))):
        reach = (reach @ reach > 0).astype(float)
    reach = reach > 0
    back = reach.transpose(0, 2, 1)
    # l is recurrent iff every state it reaches leads back to it
    recurrent = legal & ~np.any(reach & ~back, axis=2)
    rates = np.where(recurrent[:, :, None] & recurrent[:, None, :] & off_diagonal, moves, 0.0)

    # GTH state reduction: censor states n-1, ..., 1 one at a time; no subtraction anywhere
    out_rate = np.zeros((B, n))
    for k in range(n - 1, 0, -1):
        s = rates[:, k, :k].sum(axis=1)
        out_rate[:, k] = s
        ratio = rates[:, :k, k] / np.where(s > 0, s, 1.0)[:, None]
        rates[:, :k, :k] += ratio[:, :, None] * rates[:, k, None, :k]
    x = np.zeros((B, n))
    x[:, 0] = recurrent[:, 0]
    for k in range(1, n):
        s = out_rate[:, k]
        inflow = (x[:, :k] * rates[:, :k, k]).sum(axis=1)
        # s = 0 at a recurrent state: it is the smallest state of its class, the class's anchor
        x[:, k] = np.where(s > 0, inflow / np.where(s > 0, s, 1.0), recurrent[:, k])
    x *= recurrent
    anchors = (recurrent & (out_rate == 0)).sum(axis=1)
    sigma = x / x.sum(axis=1, keepdims=True)            # exact when there is one closed class
    several = anchors > 1
    if several.any():
        sigma[several] = _mix_closed_classes(x[several], recurrent[several], reach[several] & back[several])
    return sigma


def _mix_closed_classes(x, recurrent, same_class):
    """sum_C c_C pi_C with c_C = (1 / ||pi_C||^2) / sum_C' (1 / ||pi_C'||^2), pi_C = x on C, normalized."""
    n = x.shape[1]
    root = np.argmax(same_class, axis=2)                # first (smallest) state of l's class
    members = recurrent[:, :, None] & (root[:, :, None] == np.arange(n))     # (B, state, class root)
    class_mass = np.einsum("bl,blr->br", x, members)
    pi = x / np.where(recurrent, np.take_along_axis(class_mass, root, axis=1), 1.0)
    norm2 = np.einsum("bl,blr->br", pi * pi, members)
    inverse = np.divide(1.0, norm2, out=np.zeros_like(norm2), where=norm2 > 0)
    coefficient = inverse / inverse.sum(axis=1, keepdims=True)
    return pi * np.take_along_axis(coefficient, root, axis=1) * recurrent


def _least_squares_fixed_point(internal, external, legal, z):
    """Minimum-norm least squares for [L - I; 1^T] sigma = [0; 1] over the legal actions, clipped
    to [0, 1] (the "lstsq" rule), batched by number of legal actions.

    L = (1/z) sum_phi y_phi phi, column-stochastic: an internal a -> b moves a's mass to b, an
    external b moves every action's mass to b, and the rest of each column stays in place.
    """
    B, A = legal.shape
    diagonal = np.arange(A)
    L = internal.transpose(0, 2, 1) + external[:, :, None]
    L[:, diagonal, diagonal] += internal.sum(axis=(1, 2))[:, None] - internal.sum(axis=2)
    L /= z[:, None, None]
    sigma = np.zeros((B, A))
    counts = legal.sum(axis=1)
    for n in np.unique(counts):
        rows = np.flatnonzero(counts == n)
        actions = np.argsort(~legal[rows], axis=1, kind="stable")[:, :n]          # the legal actions
        sub = np.take_along_axis(np.take_along_axis(L[rows], actions[:, :, None], axis=1),
                                 actions[:, None, :], axis=2)
        system = np.concatenate([sub - np.eye(n), np.ones((len(rows), 1, n))], axis=1)
        rhs = np.zeros(n + 1)
        rhs[-1] = 1.0
        solution = np.linalg.pinv(system, rtol=np.finfo(float).eps * (n + 1)) @ rhs
        block = np.zeros((len(rows), A))
        np.put_along_axis(block, actions, np.clip(solution, 0.0, 1.0), axis=1)
        sigma[rows] = block
    return sigma
