r"""Regularized dynamics on a network: neural magnetic mirror descent, the update behind R-NaD.

Perolat et al. (2021), "From Poincare recurrence to convergence in imperfect information games:
finding equilibrium via regularization" (R-NaD, the algorithm of DeepNash), and Sokota et al.
(2023), "A unified approach to reinforcement learning, quantal response equilibria, and
two-player zero-sum games" (MMD as a deep RL algorithm). The tabular version is `labkit.mmd.MMD`
with ``feedback="action values"``; here the policy is a network :math:`\pi_\theta` (logits at
every infoset) and each iteration moves it toward the tabular update:

1. Action values of the current network policy :math:`\pi_t` at every infoset, either exact,
   :math:`q(I, a) = E[\text{return of the acting player} \mid I \text{ reached}, a \text{ played}, \pi_t]`
   (`feedback="exact"`), or estimated from `episodes` sampled hands per iteration
   (`feedback="sampled"`: every player tries each legal action once at each of its infosets on
   the hand's path, the rest of the hand following :math:`\pi_t`; the mean of these returns over
   the iteration's samples estimates q(I, a)).
2. The regularized mirror-descent target at every infoset (the closed form of chapter 2),

   .. math:: \log \pi^*(a \mid I) = \frac{\eta\, q(I, a) + \eta \alpha \log \rho(a \mid I)
             + \log \pi_t(a \mid I)}{1 + \eta \alpha} - \log Z(I),

   with :math:`\rho` the magnet and :math:`\alpha` its weight.
3. `train_steps` Adam steps on the cross-entropy
   :math:`\sum_I \sum_a \pi^*(a \mid I)\, (-\log \pi_\theta(a \mid I))` over the infosets (all
   of them, or those the samples reached), continuing from the current weights.
4. Magnet reset (R-NaD's outer loop): every `magnet_update_every` iterations,
   :math:`\rho \leftarrow \pi_{t+1}`.

With a fixed magnet the tabular dynamics converge in the last iterate to a regularized (quantal
response) equilibrium; moving the magnet moves that point toward a Nash equilibrium. The network
is a current policy, and its last iterate is what `current_policy()` returns and NashConv measures.
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from labkit.deep.common import NetworkSolver, check_hidden, check_positive_int, check_rate, pick, pick_from
from labkit.deep.networks import MLP, masked_log_softmax, policy_from_outputs
from labkit.mmd import expected_action_values
from labkit.policy import TabularPolicy

FEEDBACKS = ("exact", "sampled")


@dataclass(frozen=True)
class NeuralMMDConfig:
    """Hyperparameters of neural MMD / R-NaD's regularized dynamics.

    The defaults are the tabular settings that bring `MMD(feedback="action values")` to about
    0.15 NashConv on Leduc hold'em within a few hundred iterations.

    Attributes
    ----------
    alpha : float
        Magnet weight (regularization temperature), >= 0.
    stepsize : float
        eta, the mirror-descent step.
    magnet_update_every : int or None
        Iterations between magnet resets (None: a fixed uniform magnet).
    feedback : {"exact", "sampled"}
        Exact action values or sampled ones (module docstring).
    episodes : int
        Sampled hands per iteration (feedback="sampled").
    hidden : tuple of int
        Hidden-layer widths of the policy network.
    learning_rate : float
        Adam's step size.
    train_steps : int
        Adam steps per iteration.
    encoding : str
        The infoset features (`labkit.deep.infoset_features`).

    Raises
    ------
    ValueError
        For an unknown feedback or encoding, a negative or non-finite alpha, a step size or
        learning rate that is not a finite positive number, or counts that are not positive.

    References
    ----------
    J. Perolat et al. (2021), "From Poincare recurrence to convergence in imperfect information
    games: finding equilibrium via regularization", ICML. S. Sokota et al. (2023), "A unified
    approach to reinforcement learning, quantal response equilibria, and two-player zero-sum
    games", ICLR.

    Examples
    --------
    >>> NeuralMMDConfig(alpha=0.1, magnet_update_every=None).magnet_update_every is None
    True
    >>> NeuralMMDConfig(feedback="rewards")
    Traceback (most recent call last):
      ...
    ValueError: feedback must be one of ('exact', 'sampled'), got 'rewards'
    """
    alpha: float = 0.5
    stepsize: float = 0.1
    magnet_update_every: int | None = 100
    feedback: str = "exact"
    episodes: int = 200
    hidden: tuple = (64, 64)
    learning_rate: float = 1e-3
    train_steps: int = 50
    encoding: str = "auto"

    def __post_init__(self) -> None:
        if self.feedback not in FEEDBACKS:
            raise ValueError(f"feedback must be one of {FEEDBACKS}, got {self.feedback!r}")
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float, np.integer, np.floating)) \
                or not (np.isfinite(self.alpha) and self.alpha >= 0):
            raise ValueError(f"alpha must be a finite number >= 0, got {self.alpha!r}")
        for name in ("stepsize", "learning_rate"):
            check_rate(name, getattr(self, name))
        object.__setattr__(self, "hidden", check_hidden(self.hidden))
        from labkit.deep.features import ENCODINGS
        if self.encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {ENCODINGS}, got {self.encoding!r}")
        for name in ("episodes", "train_steps"):
            check_positive_int(name, getattr(self, name))
        if self.magnet_update_every is not None:
            check_positive_int("magnet_update_every", self.magnet_update_every)


class NeuralMMD(NetworkSolver):
    """Magnetic mirror descent with a network policy (R-NaD's regularized dynamics).

    Parameters
    ----------
    game : str or GameTree
    config : NeuralMMDConfig, optional
    seed : int
        Seeds the network's initialization and, with sampled feedback, the hands.

    Attributes
    ----------
    params : list of dicts
        The policy network's parameters (`MLP`).
    last_losses : array
        The losses of the last iteration's training steps.

    Raises
    ------
    TypeError, ValueError
        For a configuration that is not a NeuralMMDConfig or a bad seed.

    Notes
    -----
    One network is shared by all players (an infoset's features identify its player).

    References
    ----------
    S. Sokota et al. (2023), "A unified approach to reinforcement learning, quantal response
    equilibria, and two-player zero-sum games", ICLR.

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit import deep
    >>> solver = deep.NeuralMMD("kuhn_poker", deep.NeuralMMDConfig(hidden=(16,), train_steps=20), seed=0)
    >>> start = lk.nash_conv(solver.game, solver.current_policy())
    >>> _ = solver.run(30)
    >>> bool(lk.nash_conv(solver.game, solver.current_policy()) < start)
    True
    """

    config_type = NeuralMMDConfig

    def __init__(self, game: Any, config: NeuralMMDConfig | None = None, seed: int = 0):
        super().__init__(game, config, seed)
        game, config = self.game, self.config
        self.model = MLP(self.features.size, config.hidden, game.num_actions)
        self.params = self.model.init(self.streams.key)
        self.optimizer = optax.adam(config.learning_rate)
        self.opt_state = self.optimizer.init(self.params)
        self._inputs = jnp.asarray(self.features.matrix)
        self._legal = jnp.asarray(game.legal_mask)
        self._train = _training_function(tuple(self.model.sizes), config.learning_rate, config.train_steps)
        self._probs = self._network_probs()
        self._log_magnet = _log(game, TabularPolicy.uniform(game).probs)

    def _network_probs(self) -> np.ndarray:
        logits = np.asarray(jax.jit(self.model.apply)(self.params, self._inputs), dtype=np.float64)
        return policy_from_outputs(self.game, logits, "logits").probs

    # -- one iteration -------------------------------------------------------------
    def _step(self) -> None:
        game, c = self.game, self.config
        if c.feedback == "exact":
            q, seen = expected_action_values(game, self._probs), np.ones(game.num_infosets, dtype=bool)
        else:
            q, seen = self.sampled_action_values(c.episodes)
        scale = 1.0 + c.stepsize * c.alpha
        scores = (c.stepsize * q + c.stepsize * c.alpha * self._log_magnet + _log(game, self._probs)) / scale
        target = policy_from_outputs(game, np.where(game.legal_mask, scores, 0.0), "logits").probs
        weights = seen.astype(np.float32) / max(seen.mean(), 1e-12)
        self.params, self.opt_state, self.last_losses = self._train(
            self.params, self.opt_state, self._inputs, self._legal, target.astype(np.float32), weights)
        self._probs = self._network_probs()
        t = self.iteration + 1
        if c.magnet_update_every is not None and t % c.magnet_update_every == 0:
            self._log_magnet = _log(game, self._probs)

    def sampled_action_values(self, episodes: int) -> tuple[np.ndarray, np.ndarray]:
        r"""Estimates of q(I, a) for the current policy from `episodes` hands.

        Each hand follows :math:`\pi_t`; at every decision on its path the acting player also tries
        each legal action and finishes the hand from there with one sampled continuation under
        :math:`\pi_t`.

        Parameters
        ----------
        episodes : int
            Hands to sample (>= 1).

        Returns
        -------
        q_hat : (num_infosets, num_actions) float array
            The mean of those returns over the times I was on a path (0 where it never was).
        seen : (num_infosets,) bool array
            The infosets with at least one sample.

        Raises
        ------
        ValueError
            For episodes that is not a positive integer.

        Examples
        --------
        >>> from labkit import deep
        >>> solver = deep.NeuralMMD("kuhn_poker", deep.NeuralMMDConfig(hidden=(8,)), seed=0)
        >>> q_hat, seen = solver.sampled_action_values(200)
        >>> q_hat.shape, bool(seen.all())
        ((12, 2), True)
        """
        episodes = check_positive_int("episodes", episodes)
        flat, draw = self.flat, self._draw
        probs = [self._probs[i, a].tolist() for i, a in enumerate(flat.legal_actions)]
        totals = np.zeros(self.game.legal_mask.shape)
        counts = np.zeros(self.game.num_infosets)

        def rollout(h: int) -> list[float]:
            while flat.player[h] != flat.TERMINAL:
                if flat.player[h] == flat.CHANCE:
                    h = flat.first_child[h] + pick(flat.chance_cumulative[h], draw())
                else:
                    h = flat.first_child[h] + pick_from(probs[flat.infoset[h]], draw())
            return flat.returns[h]

        for _ in range(episodes):
            h = 0
            while flat.player[h] != flat.TERMINAL:
                acting = flat.player[h]
                if acting == flat.CHANCE:
                    h = flat.first_child[h] + pick(flat.chance_cumulative[h], draw())
                    continue
                infoset = flat.infoset[h]
                for k, a in enumerate(flat.legal_actions[infoset]):
                    totals[infoset, a] += rollout(flat.first_child[h] + k)[acting]
                counts[infoset] += 1
                h = flat.first_child[h] + pick_from(probs[infoset], draw())
        seen = counts > 0
        return np.where(seen[:, None], totals / np.maximum(counts, 1)[:, None], 0.0), seen

    # -- policies ------------------------------------------------------------------
    def current_policy(self) -> TabularPolicy:
        r"""The network's policy :math:`\pi_t` (the last iterate).

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> from labkit import deep
        >>> policy = deep.NeuralMMD("kuhn_poker", seed=0).current_policy()
        >>> bool(abs(policy.probs - 0.5).max() < 0.1)           # a fresh network plays nearly uniformly
        True
        """
        return TabularPolicy(self.game, self._probs.copy(), check=False)

    def average_policy(self) -> TabularPolicy:
        """R-NaD has no average: the last iterate is the output (same as `current_policy`).

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import numpy as np
        >>> from labkit import deep
        >>> solver = deep.NeuralMMD("kuhn_poker", seed=0)
        >>> np.array_equal(solver.average_policy().probs, solver.current_policy().probs)
        True
        """
        return self.current_policy()

    def magnet(self) -> TabularPolicy:
        r"""The magnet :math:`\rho` (uniform until the first reset).

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> from labkit import deep
        >>> print(deep.NeuralMMD("kuhn_poker", seed=0).magnet().probs[:2])
        [[0.5 0.5]
         [0.5 0.5]]
        """
        return TabularPolicy(self.game, np.where(self.game.legal_mask, np.exp(self._log_magnet), 0.0), check=False)

    def settings(self) -> dict:
        """The configuration and seed, as plain values (for cached results).

        Returns
        -------
        dict

        Examples
        --------
        >>> from labkit import deep
        >>> deep.NeuralMMD("kuhn_poker", seed=1).settings()["alpha"]
        0.5
        """
        return {**asdict(self.config), "seed": self.seed}

    def __repr__(self) -> str:
        return f"NeuralMMD({self.game.name}, iteration={self.iteration})"


def _log(game: Any, probs: np.ndarray) -> np.ndarray:
    """log of a policy on the legal actions, 0 elsewhere (probabilities floored at 1e-30)."""
    return np.where(game.legal_mask, np.log(np.maximum(probs, 1e-30)), 0.0)


@functools.cache
def _training_function(sizes, learning_rate, steps):
    optimizer = optax.adam(learning_rate)

    def loss(params, inputs, legal, target, weights):
        logp = masked_log_softmax(MLP.apply(params, inputs), legal)
        return jnp.mean(weights * -jnp.sum(jnp.where(legal, target * logp, 0.0), axis=1))

    @jax.jit
    def train(params, opt_state, inputs, legal, target, weights):
        def one_step(carry, _):
            params, opt_state = carry
            value, grads = jax.value_and_grad(loss)(params, inputs, legal, target, weights)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), value
        (params, opt_state), losses = jax.lax.scan(one_step, (params, opt_state), None, length=steps)
        return params, opt_state, losses
    return train
