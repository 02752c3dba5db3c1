r"""Magnetic mirror descent (MMD) on extensive-form games, with dilated entropy.

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

from typing import TYPE_CHECKING, Any

import numpy as np

from labkit._messages import show
from labkit.evaluate import PolicyLike, _cf_values, _reach, edge_probabilities, expected_payoffs, policy_array
from labkit.policy import TabularPolicy, infoset_own_reach
from labkit.solver import Solver
from labkit.tree import GameTree

if TYPE_CHECKING:
    from labkit.games import GameLike

MAGNETS = ("uniform", "entropy")
FEEDBACK = ("sequence form", "action values")


class MMD(Solver):
    r"""Magnetic mirror descent with dilated entropy, from exact sequence-form gradients.

    Every player's realization plan moves by

    .. math:: x_i^{t+1} = \arg\max_x\ \eta \langle g_i^t, x \rangle - \eta \alpha\, D(x \| \rho_i)
              - D(x \| x_i^t),

    with :math:`g_i^t` the sequence-form gradient, :math:`\rho_i` the magnet and D the dilated
    entropy's Bregman divergence (module docstring); one bottom-up softmax per iteration.

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

    Raises
    ------
    TypeError
        For a non-numeric alpha, stepsize or magnet stepsize.
    ValueError
        For values out of range, an unknown magnet or feedback, or a magnet or initial policy that
        is invalid or lacks full support.

    References
    ----------
    S. Sokota, R. D'Orazio, J. Z. Kolter, N. Loizou, M. Lanctot, I. Mitliagkas, N. Brown and
    C. Kroer (2023), "A unified approach to reinforcement learning, quantal response equilibria,
    and two-player zero-sum games", ICLR.

    Examples
    --------
    With a magnet moved every 20 iterations the last iterate approaches a Nash equilibrium; with a
    fixed magnet it stops at the regularized equilibrium:

    >>> import labkit as lk
    >>> moving = lk.MMD("kuhn_poker", alpha=0.1, stepsize=1.0, magnet_update_every=20)
    >>> fixed = lk.MMD("kuhn_poker", alpha=0.1, stepsize=1.0)
    >>> _ = moving.run(500), fixed.run(500)
    >>> round(moving.nash_conv("current"), 4), round(fixed.nash_conv("current"), 4)
    (0.0011, 0.2198)
    """

    def __init__(self, game: GameLike, alpha: float, stepsize: float | None = None,
                 magnet: str | PolicyLike = "uniform", magnet_update_every: int | None = None,
                 magnet_stepsize: float | None = None, initial_policy: PolicyLike | None = None,
                 feedback: str = "sequence form"):
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
    def _step(self) -> None:
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
        r"""The last iterate :math:`\pi_t`.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MMD("kuhn_poker", alpha=1.0)
        >>> solver.current_policy()["K|b"]                    # uniform before the first step
        {'pass': 0.5, 'bet': 0.5}
        """
        return TabularPolicy(self.game, self._probs.copy(), check=False)

    def average_policy(self) -> TabularPolicy:
        r"""The sequence-form average of :math:`\pi_0, \dots, \pi_T` (reach-weighted, the initial
        policy included, as in OpenSpiel):
        :math:`\bar\pi(a \mid I) = \sum_t x_t(I, a) / \sum_t x_t(I)`.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MMD("kuhn_poker", alpha=0.05, stepsize=1.0)
        >>> _ = solver.run(200)
        >>> solver.nash_conv("average") < solver.nash_conv("current") + 0.1
        True
        """
        total = self._realization_sum.sum(axis=1, keepdims=True)
        uniform = TabularPolicy.uniform(self.game).probs
        probs = np.where(total > 0, self._realization_sum / np.where(total > 0, total, 1.0), uniform)
        return TabularPolicy(self.game, probs, check=False)

    def magnet(self) -> TabularPolicy:
        r"""The current magnet :math:`\rho`.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MMD("kuhn_poker", alpha=1.0, magnet_update_every=1)
        >>> solver.magnet()["K|b"], solver.step().magnet()["K|b"]["bet"] > 0.5
        ({'pass': 0.5, 'bet': 0.5}, True)
        """
        return TabularPolicy(self.game, np.where(self.game.legal_mask, np.exp(self._log_magnet), 0.0), check=False)

    # ------------------------------------------------------------------ the regularized game
    def regularized_response(self, policy: PolicyLike | None = None) -> TabularPolicy:
        r"""The best response in the regularized game to `policy` (default: the current one), for
        every player at once:

        .. math:: q_\alpha(J, a) = g(J, a) + \sum_{K \text{ right after } (J, a)}
                  \alpha \log \sum_b \rho(b \mid K)\, e^{q_\alpha(K, b) / \alpha}, \qquad
                  \text{response}(a \mid J) \propto \rho(a \mid J)\, e^{q_\alpha(J, a) / \alpha},

        with g the sequence-form gradient at `policy` (plus :math:`\alpha \log |A(K)|` per next
        infoset K with magnet="entropy"). The regularized equilibrium (QRE) is its fixed point. With
        feedback="action values" it is the logit response
        :math:`\pi(a \mid J) \propto \rho(a \mid J)\, e^{q(J, a) / \alpha}` to the expected action
        values, whose fixed point is the agent QRE.

        Parameters
        ----------
        policy : TabularPolicy or (I, A) array, optional
            The policy responded to (the current iterate by default).

        Returns
        -------
        TabularPolicy

        Raises
        ------
        ValueError
            With alpha = 0, or an invalid policy.

        Examples
        --------
        At the regularized equilibrium the response is the policy itself:

        >>> import labkit as lk
        >>> solver = lk.MMD("kuhn_poker", alpha=1.0)
        >>> _ = solver.run(300)
        >>> response = solver.regularized_response()
        >>> float(abs(response.probs - solver.current_policy().probs).max()) < 1e-6
        True
        """
        probs = self._probs if policy is None else _policy_probs(self.game, policy)
        return TabularPolicy(self.game, self._response(probs)[0], check=False)

    def qre_residual(self, policy: PolicyLike | None = None) -> float:
        r"""The largest change a regularized response makes, 0 exactly at the regularized equilibrium:
        :math:`\max_{I, a} |\text{regularized\_response}(\pi)(a \mid I) - \pi(a \mid I)|`.

        Parameters
        ----------
        policy : TabularPolicy or (I, A) array, optional
            The current iterate by default.

        Returns
        -------
        float

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MMD("kuhn_poker", alpha=1.0)
        >>> before = solver.qre_residual()
        >>> _ = solver.run(100)
        >>> solver.qre_residual() < before
        True
        """
        probs = self._probs if policy is None else _policy_probs(self.game, policy)
        return float(np.abs(self._response(probs)[0] - probs).max())

    def regularized_gap(self, policy: PolicyLike | None = None) -> float:
        r"""Saddle-point gap of the regularized game (OpenSpiel's ``get_gap``):

        .. math:: \sum_i \Big[ \max_{x'} \big(\langle g_i, x' \rangle - \alpha D_i(x')\big)
                  - \big(\langle g_i, x_i \rangle - \alpha D_i(x_i)\big) \Big] \ \ge\ 0,

        with :math:`D_i(x) = \sum_J x(\text{parent of } J)\, \mathrm{KL}(\pi_x(\cdot \mid J) \,\|\,
        \rho(\cdot \mid J))` (minus the bonus :math:`\sum_J x(\text{parent of } J) \log |A(J)|` with
        magnet="entropy"). Zero exactly at the QRE.
        Sequence-form feedback only (the agent QRE is not the saddle point of one objective).

        Parameters
        ----------
        policy : TabularPolicy or (I, A) array, optional
            The current iterate by default.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            With feedback="action values" or alpha = 0.

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MMD("kuhn_poker", alpha=1.0)
        >>> round(solver.regularized_gap(), 4)                 # at the uniform start
        0.0805
        >>> _ = solver.run(200)
        >>> abs(solver.regularized_gap()) < 1e-8
        True
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

    def _response(self, probs: np.ndarray) -> tuple[np.ndarray, Any]:
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

    def _full_support(self, policy: PolicyLike, name: str) -> np.ndarray:
        probs = _policy_probs(self.game, policy, name)
        if np.any(self.game.legal_mask & (probs <= 0)):
            raise ValueError(f"{name} must give every legal action a positive probability (MMD takes its log)")
        return probs

    def __repr__(self) -> str:
        moving = (f", magnet moved every {self.magnet_update_every}" if self.magnet_update_every
                  else f", magnet step {self.magnet_stepsize}" if self.magnet_stepsize else "")
        return (f"MMD({self.game.name}, alpha={self.alpha:g}, stepsize={self.stepsize:g}, "
                f"magnet={self.magnet_kind}{moving}, iteration={self.iteration})")


# ---------------------------------------------------------------------- building blocks
def sequence_form_gradient(game: GameTree, probs: np.ndarray) -> np.ndarray:
    r"""The sequence-form gradient of every player's expected payoff.

    .. math:: g(I, a) = \frac{\partial v_i}{\partial x_i(I, a)}
              = \sum_{z:\ \sigma_i(z) = (I, a)} \pi_{-i}(z)\, u_i(z)

    for the player i acting at I. :math:`\pi_{-i}(z) = \pi_c(z) \prod_{j \ne i} x_j(z)`, where
    :math:`x_j(z)` is player j's realization weight of its last sequence before z, so no pass over
    the histories is needed: one gather per player.

    Parameters
    ----------
    game : GameTree
    probs : (I, A) float array
        A valid policy array.

    Returns
    -------
    (I, A) float array

    Examples
    --------
    Holding the jack against the uniform opponent, opening with a pass and with a bet are worth
    the same, -1/6 (chance deals the jack with probability 1/3):

    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> g = sequence_form_gradient(kuhn, lk.uniform_policy(kuhn).probs)
    >>> g[kuhn.infoset_index("J|")].round(4).tolist()
    [-0.1667, -0.1667]
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


def _terminal_structure(game: GameTree) -> tuple[np.ndarray, np.ndarray]:
    """(last own sequence of every player at every terminal (n, Z), chance(z) u_i(z) (n, Z)), cached."""
    cache = game.__dict__.setdefault("_mmd_cache", {})
    if "terminals" not in cache:
        z = game.terminals
        ones = np.where(game.legal_mask, 1.0, 0.0)
        chance = _reach(game, edge_probabilities(game, ones))[game.num_players, z]
        cache["terminals"] = (game.own_last_seq[z].T.copy(), (chance[:, None] * game.returns[z]).T.copy())
    return cache["terminals"]


def expected_action_values(game: GameTree, probs: np.ndarray) -> np.ndarray:
    r"""The acting player's expected return after each action, given that its infoset is reached.

    .. math:: q(I, a) = \frac{\sum_{h \in I} \pi_{-i}(h)\, v_i(h a)}{\sum_{h \in I} \pi_{-i}(h)}

    (0 where nobody reaches I): the counterfactual value divided by the others' reach.

    Parameters
    ----------
    game : GameTree
    probs : (I, A) float array

    Returns
    -------
    (I, A) float array

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> q = expected_action_values(kuhn, lk.uniform_policy(kuhn).probs)
    >>> q[kuhn.infoset_index("K|b")].tolist()                    # fold -1, call +2
    [-1.0, 2.0]
    """
    cf, F, _ = _cf_values(game, probs, edge_probabilities(game, probs))
    decisions = np.flatnonzero(game.infoset >= 0)
    owner = game.player[decisions]
    others = _others_reach_at(F, decisions, owner, game.num_players)
    reach = np.bincount(game.infoset[decisions], weights=others, minlength=game.num_infosets)
    return np.where(reach[:, None] > 0, cf / np.where(reach > 0, reach, 1.0)[:, None], 0.0)


def _others_reach_at(F: np.ndarray, histories: np.ndarray, owner: np.ndarray, num_players: int) -> np.ndarray:
    """pi_{-i}(h) for each history h, i = owner[h]: the product of every reach row but i's."""
    total = np.ones(len(histories))
    for row in range(num_players + 1):
        total *= np.where(owner == row, 1.0, F[row, histories])
    return total


def sequence_form_payoff_max(game: GameTree) -> float:
    r"""The largest entry, in magnitude, of player 0's chance-weighted sequence-form payoff matrix
    in a two-player game: :math:`\max |M|` with
    :math:`M(s_0, s_1) = \sum_{z \text{ ending in } (s_0, s_1)} \pi_c(z)\, u_0(z)`.

    MMD's default stepsize is alpha / max|M|^2 (OpenSpiel's).

    Parameters
    ----------
    game : GameTree

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the game does not have two players.

    Examples
    --------
    >>> import labkit as lk
    >>> round(sequence_form_payoff_max(lk.games.load("kuhn_poker")), 4)       # 2 x 1/6
    0.3333
    """
    if game.num_players != 2:
        raise ValueError("the sequence-form payoff matrix is defined here for two-player games")
    z = game.terminals
    ones = np.where(game.legal_mask, 1.0, 0.0)
    chance = _reach(game, edge_probabilities(game, ones))[game.num_players, z]
    s0, s1 = game.own_last_seq[z, 0] + 1, game.own_last_seq[z, 1] + 1
    keys, where = np.unique(s0 * (game.num_infosets * game.num_actions + 1) + s1, return_inverse=True)
    entries = np.bincount(where, weights=chance * game.returns[z, 0], minlength=len(keys))
    return float(np.abs(entries).max())


def _own_levels(game: GameTree) -> list[tuple[np.ndarray, np.ndarray]]:
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


def _is_named(value: Any, name: str) -> bool:
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


def _policy_probs(game: GameTree, policy: PolicyLike, name: str = "policy") -> np.ndarray:
    """The probability array of a TabularPolicy or a (validated) plain array."""
    return policy_array(game, policy, name)


def _number(name: str, value: Any, allow_none: bool = False) -> Any:
    """`value` as a float, or TypeError naming the argument (None passes if allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {show(value)}")
    return float(value)
