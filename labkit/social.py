r"""General-sum learning: opponent shaping in the iterated prisoner's dilemma, and Nash-MD.

Iterated prisoner's dilemma with memory-one policies (as in Foerster et al., 2018, "Learning with
Opponent-Learning Awareness"). A player's policy is five logits theta: its probability of cooperating
in the first round and after each joint outcome (CC, CD, DC, DD, its own move written first). The two
policies make the joint outcome a Markov chain with first-round distribution p0 and transition matrix
P, so the normalized discounted value has the closed form

    V_i = (1 - gamma) p0^T (I - gamma P)^{-1} r_i .

`ipd_gradients` differentiates it analytically; `lola_step` performs one simultaneous update of
both players. One iteration of LOLA for player 1 (player 2 is symmetric):

1. the naive gradient g1 = dV1/dtheta1;
2. the shaping term: how theta1 moves the opponent's next naive step, eta d^2V2/(dtheta1 dtheta2),
   applied to what that step does to V1, dV1/dtheta2 (mixed derivative by central differences);
3. theta1 <- theta1 + lr * (g1 + eta * (d^2V2/dtheta1 dtheta2) dV1/dtheta2).

With eta = 0 this is naive (simultaneous) gradient ascent.

Nash-MD (Munos et al., 2024, "Nash Learning from Human Feedback") on a preference game
(a symmetric zero-sum matrix game with payoff P(y > y') - 1/2). One iteration:

1. the geometric mixture of the policy and the reference mu, pi_mix ∝ pi^(1 - eta beta) mu^(eta beta);
2. the preference of each response over the mixture, g = A pi_mix;
3. pi <- pi_mix * exp(eta g), normalized.

Its last iterate converges to the equilibrium of the game regularized by beta KL(pi || mu); with
beta = 0 it is plain mirror descent (Hedge) in self-play, whose iterates circle the equilibrium.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labkit.games.matrix import MatrixGame, prisoners_dilemma

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

OUTCOMES = ("CC", "CD", "DC", "DD")
POLICY_ENTRIES = ("start", "CC", "CD", "DC", "DD")
# player 2 writes its own move first: the joint outcome CD (player 1 C, player 2 D) is its "DC"
_SECOND_VIEW = np.array([1, 3, 2, 4])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _pd_rewards(game: MatrixGame | None) -> np.ndarray:
    game = prisoners_dilemma() if game is None else game
    if not isinstance(game, MatrixGame) or game.shape != (2, 2):
        raise ValueError("the iterated game needs a 2x2 MatrixGame with actions (cooperate, defect)")
    return np.stack([game.A.ravel(), game.B.ravel()], axis=1)    # (4, 2): outcomes CC, CD, DC, DD


def _check_theta(theta: ArrayLike, name: str) -> np.ndarray:
    theta = np.asarray(theta, dtype=float)
    if theta.ndim == 0 or theta.shape[-1] != 5 or not np.all(np.isfinite(theta)):
        raise ValueError(f"{name} must hold 5 finite logits (start, CC, CD, DC, DD) in its last axis, "
                         f"got shape {theta.shape}")
    return theta


def _check_discount(discount: float) -> None:
    if not 0 <= discount < 1:
        raise ValueError(f"discount must be in [0, 1), got {discount!r}")


def _outcome_distribution(p, q):
    """Joint outcome probabilities (CC, CD, DC, DD) when player 1 cooperates w.p. p and player 2 w.p. q."""
    return np.stack([p * q, p * (1 - q), (1 - p) * q, (1 - p) * (1 - q)], axis=-1)


def _values_and_parts(theta1, theta2, rewards, discount):
    """Everything the values and gradients need; theta1, theta2 of shape (..., 5) broadcast together."""
    p, q = np.broadcast_arrays(_sigmoid(theta1), _sigmoid(theta2))
    q_joint = q[..., np.r_[0, _SECOND_VIEW]]               # player 2's probabilities in joint order
    p0 = _outcome_distribution(p[..., 0], q_joint[..., 0])                   # (..., 4)
    P = _outcome_distribution(p[..., 1:], q_joint[..., 1:])                 # (..., 4, 4), row = outcome now
    M = np.eye(4) - discount * P
    visits = np.linalg.solve(np.swapaxes(M, -1, -2), p0[..., None])[..., 0]  # sum_t gamma^t Pr(outcome at t)
    future = np.linalg.solve(M, np.broadcast_to(rewards, M.shape[:-2] + (4, 2)))  # (..., 4, 2)
    values = (1 - discount) * np.einsum("...s,...si->...i", p0, future)
    return values, (p, q_joint, visits, future)


def ipd_values(theta1: ArrayLike, theta2: ArrayLike, game: MatrixGame | None = None,
               discount: float = 0.96) -> np.ndarray:
    r"""Normalized discounted values (V1, V2) of two memory-one policies given as logits.

    .. math:: V_i = (1 - \gamma)\, p_0^\top (I - \gamma P)^{-1} r_i,

    the average payoff per round under discounting.

    Parameters
    ----------
    theta1, theta2 : (..., 5) array_like
        Logits of cooperating at the start and after CC, CD, DC, DD (own move first); broadcast
        together.
    game : MatrixGame, optional
        A 2x2 game with actions (cooperate, defect); the prisoner's dilemma by default.
    discount : float
        :math:`\gamma` in [0, 1).

    Returns
    -------
    (..., 2) float array

    Raises
    ------
    ValueError
        For logits of the wrong shape or not finite, a discount outside [0, 1), or a game that is
        not 2x2.

    References
    ----------
    J. Foerster, R. Y. Chen, M. Al-Shedivat, S. Whiteson, P. Abbeel and I. Mordatch (2018),
    "Learning with opponent-learning awareness", AAMAS.

    Examples
    --------
    Two players who always cooperate get the reward 3 per round, two defectors the punishment 1:

    >>> ipd_values([10.0] * 5, [10.0] * 5).round(3).tolist(), ipd_values([-10.0] * 5, [-10.0] * 5).round(3).tolist()
    ([3.0, 3.0], [1.0, 1.0])
    """
    _check_discount(discount)
    values, _ = _values_and_parts(_check_theta(theta1, "theta1"), _check_theta(theta2, "theta2"),
                                  _pd_rewards(game), discount)
    return values


def ipd_gradients(theta1: ArrayLike, theta2: ArrayLike, game: MatrixGame | None = None,
                  discount: float = 0.96) -> tuple[np.ndarray, np.ndarray]:
    r"""Values and exact gradients of both players' values with respect to both policies.

    .. math:: dV = (1 - \gamma) \big[ dp_0^\top v + \gamma\, \mathrm{visits}^\top dP\, v \big],

    with :math:`v = (I - \gamma P)^{-1} r` and :math:`\mathrm{visits} = (I - \gamma P)^{-\top} p_0`,
    and the chain rule through the outcome probabilities and the sigmoids.

    Parameters
    ----------
    theta1, theta2 : (..., 5) array_like
    game : MatrixGame, optional
    discount : float

    Returns
    -------
    values : (..., 2) float array
        (V1, V2).
    gradients : (..., 2, 2, 5) float array
        ``gradients[..., i, j, :]`` = dV_i / dtheta_j (theta_j in player j's own order: start,
        CC, CD, DC, DD with its own move first).

    Examples
    --------
    Against an unconditional cooperator, raising one's own logit of cooperating lowers one's
    value (defecting pays 5):

    >>> values, gradients = ipd_gradients([0.0] * 5, [10.0] * 5)
    >>> bool((gradients[0, 0] < 0).all())
    True
    """
    _check_discount(discount)
    theta1, theta2 = _check_theta(theta1, "theta1"), _check_theta(theta2, "theta2")
    values, (p, q_joint, visits, future) = _values_and_parts(theta1, theta2, _pd_rewards(game), discount)
    # derivatives of the (CC, CD, DC, DD) probabilities by player 1's and by player 2's cooperation
    d_by_p = np.stack([q_joint, 1 - q_joint, -q_joint, -(1 - q_joint)], axis=-1)        # (..., 5, 4)
    d_by_q = np.stack([p, -p, 1 - p, -(1 - p)], axis=-1)
    # the first round counts once; a later round through P, weighted by the discounted visits
    weight = np.concatenate([np.ones(visits.shape[:-1] + (1,)), discount * visits], axis=-1)    # (..., 5)
    scale = (1 - discount) * weight
    by_p = np.einsum("...ks,...si->...ik", d_by_p, future) * (scale * p * (1 - p))[..., None, :]
    by_q = np.einsum("...ks,...si->...ik", d_by_q, future) * (scale * q_joint * (1 - q_joint))[..., None, :]
    gradients = np.zeros(values.shape[:-1] + (2, 2, 5))
    gradients[..., 0, :] = by_p
    gradients[..., 1, 0] = by_q[..., 0]
    gradients[..., 1, _SECOND_VIEW] = by_q[..., 1:]
    return values, gradients


def _mixed_second_derivatives(theta1, theta2, game, discount, step=1e-5):
    """H1[..., k, j] = d^2 V2 / (dtheta1_k dtheta2_j) and H2[..., k, j] = d^2 V1 / (dtheta2_k dtheta1_j).

    Central differences of the exact gradients, all 20 shifted policies in one batched call.
    """
    shifts = np.concatenate([np.eye(5), -np.eye(5)]) * step                      # (10, 5)
    zero = np.zeros_like(shifts)
    t1, t2 = theta1[..., None, :], theta2[..., None, :]
    _, g = ipd_gradients(t1 + np.concatenate([shifts, zero]), t2 + np.concatenate([zero, shifts]),
                         game, discount)                                             # (..., 20, 2, 2, 5)
    H1 = (g[..., :5, 1, 1, :] - g[..., 5:10, 1, 1, :]) / (2 * step)
    H2 = (g[..., 10:15, 0, 0, :] - g[..., 15:, 0, 0, :]) / (2 * step)
    return H1, H2


def lola_step(theta1: ArrayLike, theta2: ArrayLike, lr: float = 1.0, lookahead: float = 1.0,
              game: MatrixGame | None = None, discount: float = 0.96,
              lola: tuple[bool, bool] = (True, True)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""One simultaneous update of both players; a player with lola=False takes a naive gradient step.

    .. math:: \theta_1 \leftarrow \theta_1 + \delta \Big( \nabla_1 V_1 + \eta\,
              \frac{\partial^2 V_2}{\partial \theta_1 \partial \theta_2} \nabla_2 V_1 \Big)

    (and symmetrically for player 2).

    Parameters
    ----------
    theta1, theta2 : (..., 5) array_like
        Logits (a leading axis runs several pairs at once).
    lr : float
        :math:`\delta`, the step size of each player's own update.
    lookahead : float
        :math:`\eta`, the opponent's anticipated step size; 0 makes LOLA naive.
    game : MatrixGame, optional
    discount : float
    lola : (bool, bool)
        Which players shape their opponent.

    Returns
    -------
    new_theta1, new_theta2 : (..., 5) float arrays
    values : (..., 2) float array
        The values at the old policies.

    Examples
    --------
    >>> new1, new2, values = lola_step([0.0] * 5, [0.0] * 5)
    >>> values.round(3).tolist(), bool((new1 < 0).all())               # both start by defecting more
    ([2.25, 2.25], True)
    """
    theta1, theta2 = np.broadcast_arrays(_check_theta(theta1, "theta1"), _check_theta(theta2, "theta2"))
    values, g = ipd_gradients(theta1, theta2, game, discount)
    step1, step2 = g[..., 0, 0, :].copy(), g[..., 1, 1, :].copy()
    if (lola[0] or lola[1]) and lookahead != 0:
        H1, H2 = _mixed_second_derivatives(theta1, theta2, game, discount)
        if lola[0]:
            step1 += lookahead * np.einsum("...kj,...j->...k", H1, g[..., 0, 1, :])
        if lola[1]:
            step2 += lookahead * np.einsum("...kj,...j->...k", H2, g[..., 1, 0, :])
    return theta1 + lr * step1, theta2 + lr * step2, values


def train_ipd(theta1: ArrayLike, theta2: ArrayLike, steps: int = 200, lr: float = 1.0, lookahead: float = 1.0,
              lola: tuple[bool, bool] = (True, True), game: MatrixGame | None = None,
              discount: float = 0.96) -> tuple[np.ndarray, np.ndarray]:
    """Run `steps` updates (`lola_step`) from (theta1, theta2), each of shape (..., 5) (several runs at once).

    Parameters
    ----------
    theta1, theta2 : (..., 5) array_like
    steps : int
    lr, lookahead, lola, game, discount
        As in `lola_step`.

    Returns
    -------
    cooperation : (steps + 1, ..., 2, 5) float array
        Each player's probabilities of cooperating (own order).
    values : (steps + 1, ..., 2) float array
        The players' normalized values along the way.

    Examples
    --------
    Naive learners drift toward mutual defection (value 1 per round):

    >>> cooperation, values = train_ipd([0.0] * 5, [0.0] * 5, steps=100, lookahead=0.0)
    >>> values.shape, round(float(values[-1, 0]), 1)
    ((101, 2), 1.1)
    """
    theta1, theta2 = np.broadcast_arrays(_check_theta(theta1, "theta1"), _check_theta(theta2, "theta2"))
    cooperation: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for t in range(steps + 1):
        cooperation.append(_sigmoid(np.stack([theta1, theta2], axis=-2)))
        if t == steps:
            values.append(ipd_values(theta1, theta2, game, discount))
            break
        theta1, theta2, value = lola_step(theta1, theta2, lr, lookahead, game, discount, lola)
        values.append(value)
    return np.array(cooperation), np.array(values)


# --------------------------------------------------------------------------------------------- Nash-MD
def _check_preference_game(game: MatrixGame) -> np.ndarray:
    if not isinstance(game, MatrixGame):
        raise TypeError(f"game must be a MatrixGame (e.g. labkit.games.preference_game()), got {type(game).__name__}")
    A = game.A
    if A.shape[0] != A.shape[1] or not np.allclose(A, -A.T):
        raise ValueError("Nash-MD needs a symmetric zero-sum game: A must be square with A = -A^T")
    return A


def _probability(p: ArrayLike | None, n: int, name: str) -> np.ndarray:
    p = np.full(n, 1.0 / n) if p is None else np.asarray(p, dtype=float)
    if p.shape != (n,) or np.any(p <= 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"{name} must be a strictly positive probability vector of length {n}, got {p}")
    return p


def nash_md(game: MatrixGame, steps: int = 2000, eta: float = 0.1, beta: float = 0.1,
            reference: ArrayLike | None = None, start: ArrayLike | None = None) -> np.ndarray:
    r"""Nash-MD self-play on a preference game; beta = 0 gives plain mirror descent (Hedge).

    .. math:: \pi_{\text{mix}} \propto \pi_t^{1 - \eta\beta} \mu^{\eta\beta}, \qquad
              \pi_{t+1} \propto \pi_{\text{mix}}\, \exp(\eta A \pi_{\text{mix}})

    Parameters
    ----------
    game : MatrixGame
        Symmetric zero-sum (A = -A^T), e.g. `labkit.games.preference_game`.
    steps : int
    eta : float
        The step size.
    beta : float
        The weight of the KL regularization toward `reference` (eta * beta < 1).
    reference, start : array_like, optional
        Strictly positive probability vectors (uniform by default).

    Returns
    -------
    (steps + 1, n) float array
        The policies pi_0 .. pi_T.

    Raises
    ------
    TypeError
        If `game` is not a MatrixGame.
    ValueError
        If it is not symmetric zero-sum, or for settings out of range.

    References
    ----------
    R. Munos et al. (2024), "Nash learning from human feedback", ICML.

    Examples
    --------
    The last iterate settles next to the regularized equilibrium (within 1e-3 here: a finite step
    size moves the fixed point a little):

    >>> import labkit as lk
    >>> game = lk.games.preference_game()
    >>> policies = nash_md(game, steps=3000, beta=0.1)
    >>> policies[-1].round(2).tolist(), regularized_equilibrium(game, beta=0.1).round(2).tolist()
    ([0.28, 0.24, 0.48], [0.28, 0.24, 0.48])
    """
    A = _check_preference_game(game)
    n = A.shape[0]
    mu, pi = _probability(reference, n, "reference"), _probability(start, n, "start")
    if not (eta > 0 and beta >= 0 and eta * beta < 1):
        raise ValueError(f"need eta > 0, beta >= 0 and eta * beta < 1, got eta={eta}, beta={beta}")
    policies = np.zeros((steps + 1, n))
    policies[0] = pi
    log_mu = np.log(mu)
    for t in range(1, steps + 1):
        log_mix = (1 - eta * beta) * np.log(policies[t - 1]) + eta * beta * log_mu
        mix = np.exp(log_mix - log_mix.max())
        mix /= mix.sum()
        logits = np.log(mix) + eta * (A @ mix)
        new = np.exp(logits - logits.max())
        policies[t] = new / new.sum()
    return policies


def regularized_equilibrium(game: MatrixGame, beta: float, reference: ArrayLike | None = None) -> np.ndarray:
    r"""The symmetric equilibrium of the preference game regularized by
    :math:`\beta\, \mathrm{KL}(\pi \| \mu)`.

    It is the solution of :math:`\pi = \mathrm{softmax}(\log \mu + A \pi / \beta)` (each
    player's regularized best response to the other), found with `scipy.optimize.fsolve` on the
    logits relative to the first response.

    Parameters
    ----------
    game : MatrixGame
        Symmetric zero-sum.
    beta : float
        > 0.
    reference : array_like, optional
        :math:`\mu`, uniform by default.

    Returns
    -------
    (n,) float array

    Raises
    ------
    ValueError
        For beta <= 0, or if the solver does not reach a residual below 1e-10.

    Examples
    --------
    >>> import labkit as lk
    >>> regularized_equilibrium(lk.games.preference_game(), beta=0.1).round(3).tolist()
    [0.279, 0.244, 0.478]
    """
    from scipy.optimize import fsolve

    A = _check_preference_game(game)
    n = A.shape[0]
    mu = _probability(reference, n, "reference")
    if not beta > 0:
        raise ValueError(f"beta must be positive, got {beta!r}")

    def policy(z):
        logits = np.r_[0.0, z]
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    def residual(z):
        logits = np.log(mu) + A @ policy(z) / beta
        return z - (logits[1:] - logits[0])

    z = fsolve(residual, np.log(mu[1:] / mu[0]), xtol=1e-13)
    if np.abs(residual(z)).max() > 1e-10:
        raise ValueError(f"no regularized equilibrium found for beta={beta}; try a larger beta")
    return policy(z)
