"""Magnetic mirror descent (MMD) on extensive-form games, with dilated entropy.

Sokota, D'Orazio, Kolter, Loizou, Lanctot, Mitliagkas, Brown and Kroer (2023), "A unified
approach to reinforcement learning, quantal response equilibria, and two-player zero-sum
games" (ICLR 2023).

Every player i updates its realization plan x_i (its sequence-form strategy) by

    x_i^{t+1} = argmax_x  eta <g_i^t, x> - eta alpha D(x || rho_i) - D(x || x_i^t),

where g_i^t(I, a) = sum of pi_{-i}(z) u_i(z) over the terminals z whose last own sequence is
(I, a) (the sequence-form gradient at the current policy), rho_i is the magnet and D the
Bregman divergence of the dilated entropy, which in behavioral form is a reach-weighted sum
of KL divergences: D(x || y) = sum_I x(parent of I) KL(pi_x(. | I) || pi_y(. | I)).

One iteration (all players simultaneously, vectorized over the tree):

1. one forward pass for the reach probabilities and the gradient g^t of every player;
2. one backward pass over each player's own infosets, deepest first. At infoset J, with
   c(J, a) = eta g(J, a) + (sum of W over the infosets right after (J, a)),

       z(J, a)    = (c(J, a) + eta alpha log rho(a | J) + log pi_t(a | J)) / (1 + eta alpha),
       pi_{t+1}(a | J) = softmax_a z(J, a),
       W(J)      = (1 + eta alpha) log sum_a exp z(J, a)     (the value of the subproblem at J),

   and W(J) is added to c of J's parent sequence;
3. if the magnet moves: every `magnet_update_every` iterations rho <- pi_{t+1}, or each
   iteration rho <- rho^(1 - beta) pi_{t+1}^beta (renormalized), beta = `magnet_stepsize`.

With a fixed magnet the last iterate converges (linearly) to the regularized equilibrium, the
quantal response equilibrium of the dilated-entropy-regularized game, whose fixed-point
equations are pi(a | J) ∝ rho(a | J) exp(q_alpha(J, a) / alpha) with soft values q_alpha built
bottom-up (see `regularized_response`). Moving the magnet removes the bias toward it, and
the last iterate moves toward a Nash equilibrium.

``feedback="action values"`` is the behavioral, reinforcement-learning form of the paper
(its section on MMD as an RL algorithm): every infoset updates on its own from the expected
action values q(I, a) = (counterfactual value of (I, a)) / (probability the others and chance
reach I), with no bottom-up pass,

    pi_{t+1}(. | I) ∝ exp((eta q(I, .) + eta alpha log rho(. | I) + log pi_t(. | I)) / (1 + eta alpha)).

Its fixed point is the agent QRE (McKelvey and Palfrey, 1998), pi(a | I) ∝ rho(a | I) exp(q(I, a) / alpha);
on a matrix game (one infoset per player) both forms are the same algorithm.

``magnet="entropy"`` regularizes with the dilated entropy psi(x) itself, as OpenSpiel's
`MMDDilatedEnt` does: that is the uniform magnet plus a bonus alpha log|A(J)| for every reached
infoset J (because psi(x) = D(x || uniform) - sum_J x(parent of J) log|A(J)|). With it and the
same stepsize this class reproduces OpenSpiel's iterates (tests/test_mmd.py).
"""
from __future__ import annotations

import numpy as np

from labkit._messages import show
from labkit.evaluate import _cf_values, _reach, edge_probabilities, expected_payoffs, policy_array
from labkit.policy import TabularPolicy, infoset_own_reach
from labkit.solver import Solver

MAGNETS = ("uniform", "entropy")
FEEDBACK = ("sequence form", "action values")


class MMD(Solver):
    """Magnetic mirror descent with dilated entropy, from exact sequence-form gradients.

    Parameters
    ----------
    game : str or GameTree
    alpha : float
        Weight of the magnet (regularization temperature), >= 0.
    stepsize : float, optional
        eta. Default alpha / max|M|^2 with M the chance-weighted sequence-form payoff matrix of a
        two-player game (OpenSpiel's default); required when alpha = 0 or the game has more players.
    magnet : "uniform", "entropy", TabularPolicy or (I, A) array
        The magnet rho: uniform at every infoset, OpenSpiel's plain dilated entropy (see the
        module docstring), or any policy with full support on the legal actions.
    magnet_update_every : int, optional
        Move the magnet to the current policy every this many iterations (None: fixed magnet).
    magnet_stepsize : float, optional
        Move the magnet a geometric step toward the current policy every iteration,
        rho <- rho^(1 - beta) pi^beta, beta in (0, 1].
    initial_policy : TabularPolicy or array, optional
        pi_0, uniform by default; needs full support on the legal actions.
    feedback : {"sequence form", "action values"}
        Sequence-form gradients with the bottom-up dilated update (converges to the
        dilated-entropy QRE), or per-infoset expected action values (converges to the agent QRE;
        give a `stepsize`, since the default scale is the sequence form's).
    """

    def __init__(self, game, alpha, stepsize=None, magnet="uniform", magnet_update_every=None,
                 magnet_stepsize=None, initial_policy=None, feedback="sequence form"):
        super().__init__(game)
        game = self.game
        if feedback not in FEEDBACK:
            raise ValueError(f"feedback must be one of {FEEDBACK}, got {feedback!r}")
        if feedback == "action values" and (stepsize is None or _is_named(magnet, "entropy")):
            raise ValueError("feedback='action values' needs an explicit stepsize and a uniform or policy magnet")
        self.feedback = feedback
        alpha = _number("alpha", alpha)
        stepsize = _number("stepsize", stepsize, allow_none=True)
        magnet_stepsize = _number("magnet_stepsize", magnet_stepsize, allow_none=True)
        if not (np.isfinite(alpha) and alpha >= 0):
            raise ValueError(f"alpha must be a number >= 0, got {show(alpha)}")
        self.alpha = float(alpha)
        if stepsize is None:
            if self.alpha == 0 or game.num_players != 2:
                raise ValueError("give a stepsize: the default alpha / max|M|^2 needs alpha > 0 and two players")
            stepsize = self.alpha / sequence_form_payoff_max(game) ** 2
        if not (np.isfinite(stepsize) and stepsize > 0):
            raise ValueError(f"stepsize must be positive, got {show(stepsize)}")
        self.stepsize = float(stepsize)
        if magnet_update_every is not None and magnet_stepsize is not None:
            raise ValueError("give magnet_update_every or magnet_stepsize, not both")
        if magnet_update_every is not None and (not isinstance(magnet_update_every, (int, np.integer))
                                                or magnet_update_every < 1):
            raise ValueError(f"magnet_update_every must be a positive integer, got {show(magnet_update_every)}")
        if magnet_stepsize is not None and not 0 < magnet_stepsize <= 1:
            raise ValueError(f"magnet_stepsize must be in (0, 1], got {show(magnet_stepsize)}")
        self.magnet_update_every = magnet_update_every
        self.magnet_stepsize = magnet_stepsize

        uniform = TabularPolicy.uniform(game).probs
        self.entropy_bonus = np.zeros(game.num_infosets)
        if isinstance(magnet, str):
            if magnet not in MAGNETS:
                raise ValueError(f"magnet must be one of {MAGNETS} or a policy, got {magnet!r}")
            if magnet == "entropy":
                self.entropy_bonus = np.log(game.num_legal.astype(float))
            magnet_probs = uniform
        else:
            magnet_probs = self._full_support(magnet, "magnet")
        self.magnet_kind = magnet if isinstance(magnet, str) else "policy"
        self._log_magnet = _masked_log(game, magnet_probs)
        self._probs = uniform.copy() if initial_policy is None else self._full_support(initial_policy, "initial_policy")
        self._log_probs = _masked_log(game, self._probs)
        # the average: sum of realization plans x_t(I, a) = own reach of I * pi_t(a | I), t = 0..T
        self._realization_sum = infoset_own_reach(game, self._probs)[:, None] * self._probs
        self._levels = _own_levels(game)

    # ------------------------------------------------------------------ one iteration
    def _step(self):
        game, eta, alpha = self.game, self.stepsize, self.alpha
        scale = 1.0 + eta * alpha
        bias = eta * alpha * self._log_magnet + self._log_probs
        if self.feedback == "action values":
            log_probs = _row_log_softmax(game, (eta * expected_action_values(game, self._probs) + bias) / scale)
        else:
            gradient = sequence_form_gradient(game, self._probs)
            log_probs, _ = _dilated_softmax(game, self._levels, eta * gradient, bias, scale,
                                            eta * alpha * self.entropy_bonus)
        self._log_probs = log_probs
        self._probs = np.where(game.legal_mask, np.exp(log_probs), 0.0)
        self._realization_sum += infoset_own_reach(game, self._probs)[:, None] * self._probs
        t = self.iteration + 1
        if self.magnet_update_every is not None and t % self.magnet_update_every == 0:
            self._log_magnet = log_probs.copy()
        elif self.magnet_stepsize is not None:
            beta = self.magnet_stepsize
            mixed = np.where(game.legal_mask, (1 - beta) * self._log_magnet + beta * log_probs, -np.inf)
            self._log_magnet = np.where(game.legal_mask, mixed - _logsumexp(mixed)[:, None], 0.0)

    # ------------------------------------------------------------------ policies
    def current_policy(self) -> TabularPolicy:
        """The last iterate pi_t."""
        return TabularPolicy(self.game, self._probs.copy(), check=False)

    def average_policy(self) -> TabularPolicy:
        """The sequence-form average of pi_0, ..., pi_T (reach-weighted, the initial policy included,
        as in OpenSpiel): pi_bar(a | I) = sum_t x_t(I, a) / sum_t x_t(I)."""
        total = self._realization_sum.sum(axis=1, keepdims=True)
        uniform = TabularPolicy.uniform(self.game).probs
        probs = np.where(total > 0, self._realization_sum / np.where(total > 0, total, 1.0), uniform)
        return TabularPolicy(self.game, probs, check=False)

    def magnet(self) -> TabularPolicy:
        """The current magnet rho."""
        return TabularPolicy(self.game, np.where(self.game.legal_mask, np.exp(self._log_magnet), 0.0), check=False)

    # ------------------------------------------------------------------ the regularized game
    def regularized_response(self, policy=None) -> TabularPolicy:
        """The best response in the regularized game to `policy` (default: the current one), for
        every player at once:

            q_alpha(J, a) = g(J, a) + sum over the infosets K right after (J, a) of
                            alpha log sum_b rho(b | K) exp(q_alpha(K, b) / alpha),
            response(a | J) ∝ rho(a | J) exp(q_alpha(J, a) / alpha),

        with g the sequence-form gradient at `policy` (plus alpha log|A(K)| per next infoset K with
        magnet="entropy"). The regularized equilibrium (QRE) is its fixed point. With
        feedback="action values" it is the logit response pi(a | J) ∝ rho(a | J) exp(q(J, a) / alpha)
        to the expected action values, whose fixed point is the agent QRE.
        """
        probs = self._probs if policy is None else _policy_probs(self.game, policy)
        return TabularPolicy(self.game, self._response(probs)[0], check=False)

    def qre_residual(self, policy=None) -> float:
        """max |regularized_response(pi) - pi| over (infoset, action): 0 exactly at the regularized equilibrium."""
        probs = self._probs if policy is None else _policy_probs(self.game, policy)
        return float(np.abs(self._response(probs)[0] - probs).max())

    def regularized_gap(self, policy=None) -> float:
        """Saddle-point gap of the regularized game (OpenSpiel's `get_gap`):

            sum_i [ max_x' (<g_i, x'> - alpha D_i(x')) - (<g_i, x_i> - alpha D_i(x_i)) ] >= 0,

        with D_i(x) = sum_J x(parent of J) KL(pi_x(. | J) || rho(. | J)) (minus the bonus
        sum_J x(parent of J) log|A(J)| with magnet="entropy"). Zero exactly at the QRE.
        Sequence-form feedback only (the agent QRE is not the saddle point of one objective).
        """
        if self.feedback != "sequence form":
            raise ValueError("regularized_gap is defined for feedback='sequence form'; use qre_residual")
        game = self.game
        probs = self._probs if policy is None else _policy_probs(self.game, policy)
        _, root_values = self._response(probs)
        reach = infoset_own_reach(game, probs)
        logs = _masked_log(game, probs)
        kl = np.where(game.legal_mask & (probs > 0), probs * (logs - self._log_magnet), 0.0).sum(axis=1)
        penalty = np.bincount(game.infoset_player, weights=reach * (kl - self.entropy_bonus),
                              minlength=game.num_players)
        values = expected_payoffs(game, probs)
        return float((root_values - (values - self.alpha * penalty)).sum())

    def _response(self, probs):
        if self.alpha <= 0:
            raise ValueError("the regularized game needs alpha > 0")
        game, alpha = self.game, self.alpha
        if self.feedback == "action values":
            log_probs = _row_log_softmax(game, expected_action_values(game, probs) / alpha + self._log_magnet)
            return np.where(game.legal_mask, np.exp(log_probs), 0.0), None
        gradient = sequence_form_gradient(game, probs)
        log_probs, root_values = _dilated_softmax(game, self._levels, gradient, alpha * self._log_magnet, alpha,
                                                  alpha * self.entropy_bonus)
        return np.where(game.legal_mask, np.exp(log_probs), 0.0), root_values

    def _full_support(self, policy, name):
        probs = _policy_probs(self.game, policy, name)
        if np.any(self.game.legal_mask & (probs <= 0)):
            raise ValueError(f"{name} must give every legal action a positive probability (MMD takes its log)")
        return probs

    def __repr__(self):
        moving = (f", magnet moved every {self.magnet_update_every}" if self.magnet_update_every
                  else f", magnet step {self.magnet_stepsize}" if self.magnet_stepsize else "")
        return (f"MMD({self.game.name}, alpha={self.alpha:g}, stepsize={self.stepsize:g}, "
                f"magnet={self.magnet_kind}{moving}, iteration={self.iteration})")


# ---------------------------------------------------------------------- building blocks
def sequence_form_gradient(game, probs):
    """(I, A) g(I, a) for the player acting at I: sum over terminals z whose last own sequence
    is (I, a) of pi_{-i}(z) u_i(z), the derivative of player i's expected payoff with respect
    to its realization weight x_i(I, a).

    pi_{-i}(z) = chance(z) * prod_{j != i} x_j(z), where x_j(z) is player j's realization weight of
    its last sequence before z, so no pass over the histories is needed: one gather per player.
    """
    last, weighted_returns = _terminal_structure(game)
    # realization weights of every sequence, with a leading 1 for the empty sequence
    plans = np.concatenate(([1.0], (infoset_own_reach(game, probs)[:, None] * probs).reshape(-1)))
    own = plans[last + 1]                                     # (n, Z): x_j(z)
    size = game.num_infosets * game.num_actions
    g = np.zeros(size)
    for p in range(game.num_players):
        others = np.prod(np.delete(own, p, axis=0), axis=0) if game.num_players > 2 else own[1 - p]
        mine = last[p] >= 0                    # terminals reached without any own move add to no sequence
        g += np.bincount(last[p, mine], weights=others[mine] * weighted_returns[p, mine], minlength=size)
    return g.reshape(game.legal_mask.shape)


def _terminal_structure(game):
    """(last own sequence of every player at every terminal (n, Z), chance(z) u_i(z) (n, Z)), cached."""
    cache = game.__dict__.setdefault("_mmd_cache", {})
    if "terminals" not in cache:
        z = game.terminals
        ones = np.where(game.legal_mask, 1.0, 0.0)
        chance = _reach(game, edge_probabilities(game, ones))[game.num_players, z]
        cache["terminals"] = (game.own_last_seq[z].T.copy(), (chance[:, None] * game.returns[z]).T.copy())
    return cache["terminals"]


def expected_action_values(game, probs):
    """(I, A) q(I, a) = sum_{h in I} pi_{-i}(h) v_i(h a) / sum_{h in I} pi_{-i}(h): the acting
    player's expected return after a at I, given that I is reached (0 where nobody reaches I)."""
    cf, F, _ = _cf_values(game, probs, edge_probabilities(game, probs))
    decisions = np.flatnonzero(game.infoset >= 0)
    owner = game.player[decisions]
    others = _others_reach_at(F, decisions, owner, game.num_players)
    reach = np.bincount(game.infoset[decisions], weights=others, minlength=game.num_infosets)
    return np.where(reach[:, None] > 0, cf / np.where(reach > 0, reach, 1.0)[:, None], 0.0)


def _others_reach_at(F, histories, owner, num_players):
    """pi_{-i}(h) for each history h, i = owner[h]: the product of every reach row but i's."""
    total = np.ones(len(histories))
    for row in range(num_players + 1):
        total *= np.where(owner == row, 1.0, F[row, histories])
    return total


def sequence_form_payoff_max(game):
    """max |M| over the chance-weighted sequence-form payoff matrix of player 0 in a two-player
    game: M(s0, s1) = sum of chance(z) u_0(z) over terminals z ending in the sequences (s0, s1)."""
    if game.num_players != 2:
        raise ValueError("the sequence-form payoff matrix is defined here for two-player games")
    z = game.terminals
    ones = np.where(game.legal_mask, 1.0, 0.0)
    chance = _reach(game, edge_probabilities(game, ones))[game.num_players, z]
    s0, s1 = game.own_last_seq[z, 0] + 1, game.own_last_seq[z, 1] + 1
    keys, where = np.unique(s0 * (game.num_infosets * game.num_actions + 1) + s1, return_inverse=True)
    entries = np.bincount(where, weights=chance * game.returns[z, 0], minlength=len(keys))
    return float(np.abs(entries).max())


def _own_levels(game):
    """Infosets grouped by their depth in the acting player's own sequence tree, deepest first."""
    depth = game.infoset_own_depth
    return [(idx, game.infoset_parent_seq[idx])
            for d in range(int(depth.max(initial=0)), -1, -1)
            if len(idx := np.flatnonzero(depth == d))]


def _dilated_softmax(game, levels, payoff, bias, temperature, bonus):
    """The bottom-up softmax of a dilated-entropy problem, for every player at once.

    At each infoset J (deepest first): z(J, a) = (c(J, a) + bias(J, a)) / temperature with c the
    payoff plus the values W of the infosets after (J, a); log pi(a | J) = z - logsumexp(z);
    W(J) = temperature * logsumexp(z) + bonus(J) is added to c at J's parent sequence.

    Returns
    -------
    log_probs : (I, A) array (0 on illegal actions)
    root_values : (n,) sum of W over each player's first infosets
    """
    c = payoff.copy()
    c_flat = c.reshape(-1)
    log_probs = np.zeros(c.shape)
    root_values = np.zeros(game.num_players)
    for idx, parent_seq in levels:
        z = np.where(game.legal_mask[idx], (c[idx] + bias[idx]) / temperature, -np.inf)
        lse = _logsumexp(z)
        log_probs[idx] = np.where(game.legal_mask[idx], z - lse[:, None], 0.0)
        value = temperature * lse + bonus[idx]
        inner = parent_seq >= 0
        np.add.at(c_flat, parent_seq[inner], value[inner])
        np.add.at(root_values, game.infoset_player[idx[~inner]], value[~inner])
    return log_probs, root_values


def _is_named(value, name):
    return isinstance(value, str) and value == name


def _row_log_softmax(game, scores):
    z = np.where(game.legal_mask, scores, -np.inf)
    return np.where(game.legal_mask, z - _logsumexp(z)[:, None], 0.0)


def _logsumexp(z):
    top = z.max(axis=1)
    return top + np.log(np.exp(z - top[:, None]).sum(axis=1))


def _masked_log(game, probs):
    """log probs on the legal actions, 0 on the illegal ones (which every formula masks out)."""
    with np.errstate(divide="ignore"):
        return np.log(np.where(game.legal_mask, probs, 1.0))


def _policy_probs(game, policy, name="policy"):
    """The probability array of a TabularPolicy or a (validated) plain array."""
    return policy_array(game, policy, name)


def _number(name, value, allow_none=False):
    """`value` as a float, or TypeError naming the argument (None passes if allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {show(value)}")
    return float(value)
