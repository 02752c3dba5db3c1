"""General-sum learning: opponent shaping in the iterated prisoner's dilemma, and Nash-MD.

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

import numpy as np

from labkit.games.matrix import MatrixGame, prisoners_dilemma

OUTCOMES = ("CC", "CD", "DC", "DD")
POLICY_ENTRIES = ("start", "CC", "CD", "DC", "DD")
# player 2 writes its own move first: the joint outcome CD (player 1 C, player 2 D) is its "DC"
_SECOND_VIEW = np.array([1, 3, 2, 4])


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _pd_rewards(game):
    game = prisoners_dilemma() if game is None else game
    if not isinstance(game, MatrixGame) or game.shape != (2, 2):
        raise ValueError("the iterated game needs a 2x2 MatrixGame with actions (cooperate, defect)")
    return np.stack([game.A.ravel(), game.B.ravel()], axis=1)    # (4, 2): outcomes CC, CD, DC, DD


def _check_theta(theta, name):
    theta = np.asarray(theta, dtype=float)
    if theta.ndim == 0 or theta.shape[-1] != 5 or not np.all(np.isfinite(theta)):
        raise ValueError(f"{name} must hold 5 finite logits (start, CC, CD, DC, DD) in its last axis, "
                         f"got shape {theta.shape}")
    return theta


def _check_discount(discount):
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


def ipd_values(theta1, theta2, game=None, discount=0.96):
    """Normalized discounted values (V1, V2) of two memory-one policies given as logits.

    V_i = (1 - gamma) p0^T (I - gamma P)^{-1} r_i, the average payoff per round under discounting.
    theta1 and theta2 have shape (..., 5) (broadcast together); the result has shape (..., 2).
    """
    _check_discount(discount)
    values, _ = _values_and_parts(_check_theta(theta1, "theta1"), _check_theta(theta2, "theta2"),
                                  _pd_rewards(game), discount)
    return values


def ipd_gradients(theta1, theta2, game=None, discount=0.96):
    """Values and exact gradients of both players' values with respect to both policies.

    Returns
    -------
    values : (..., 2) array, (V1, V2)
    gradients : (..., 2, 2, 5) array, gradients[..., i, j, :] = dV_i / dtheta_j
        (theta_j in player j's own order: start, CC, CD, DC, DD with its own move first).

    Uses dV = (1 - gamma) [dp0^T v + gamma visits^T dP v], with v = (I - gamma P)^{-1} r and
    visits = (I - gamma P)^{-T} p0, and the chain rule through the outcome probabilities and sigmoids.
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


def lola_step(theta1, theta2, lr=1.0, lookahead=1.0, game=None, discount=0.96, lola=(True, True)):
    """One simultaneous update of both players; a player with lola=False takes a naive gradient step.

    Parameters
    ----------
    theta1, theta2 : (..., 5) arrays of logits (a leading axis runs several pairs at once)
    lr : float, the step size of each player's own update (delta in Foerster et al.)
    lookahead : float, the opponent's anticipated step size (eta); 0 makes LOLA naive
    lola : (bool, bool), which players shape their opponent

    Returns
    -------
    new_theta1, new_theta2 : (..., 5) arrays, values : (..., 2) array at the old policies
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


def train_ipd(theta1, theta2, steps=200, lr=1.0, lookahead=1.0, lola=(True, True), game=None, discount=0.96):
    """Run `steps` updates from (theta1, theta2), each of shape (..., 5) (several runs at once).

    Returns
    -------
    cooperation : (steps + 1, ..., 2, 5) array, each player's probabilities of cooperating (own order)
    values : (steps + 1, ..., 2) array, the players' normalized values along the way
    """
    theta1, theta2 = np.broadcast_arrays(_check_theta(theta1, "theta1"), _check_theta(theta2, "theta2"))
    cooperation, values = [], []
    for t in range(steps + 1):
        cooperation.append(_sigmoid(np.stack([theta1, theta2], axis=-2)))
        if t == steps:
            values.append(ipd_values(theta1, theta2, game, discount))
            break
        theta1, theta2, value = lola_step(theta1, theta2, lr, lookahead, game, discount, lola)
        values.append(value)
    return np.array(cooperation), np.array(values)


# --------------------------------------------------------------------------------------------- Nash-MD
def _check_preference_game(game):
    if not isinstance(game, MatrixGame):
        raise TypeError(f"game must be a MatrixGame (e.g. labkit.games.preference_game()), got {type(game).__name__}")
    A = game.A
    if A.shape[0] != A.shape[1] or not np.allclose(A, -A.T):
        raise ValueError("Nash-MD needs a symmetric zero-sum game: A must be square with A = -A^T")
    return A


def _probability(p, n, name):
    p = np.full(n, 1.0 / n) if p is None else np.asarray(p, dtype=float)
    if p.shape != (n,) or np.any(p <= 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"{name} must be a strictly positive probability vector of length {n}, got {p}")
    return p


def nash_md(game, steps=2000, eta=0.1, beta=0.1, reference=None, start=None):
    """Nash-MD self-play on a preference game; beta = 0 gives plain mirror descent (Hedge).

    Parameters
    ----------
    game : MatrixGame, symmetric zero-sum (A = -A^T), e.g. `labkit.games.preference_game`
    eta : float, step size; beta : float, weight of the KL regularization toward `reference`
    reference, start : probability vectors (uniform by default)

    Returns
    -------
    (steps + 1, n) array of the policies pi_0 .. pi_T
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


def regularized_equilibrium(game, beta, reference=None):
    """The symmetric equilibrium of the preference game regularized by beta KL(pi || reference).

    It is the solution of pi = softmax(log reference + A pi / beta) (each player's regularized best
    response to the other), found with `scipy.optimize.fsolve` on the logits relative to the first
    response; a ValueError is raised if the solver does not reach a residual below 1e-10.
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
