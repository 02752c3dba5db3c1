r"""Neural fictitious self-play (Heinrich and Silver, 2016, "Deep reinforcement learning from
self-play in imperfect-information games", arXiv:1603.01121).

Fictitious play with both of its halves learned from sampled play. Each player p has

* a Q-network :math:`Q_p(I, a)`, trained by DQN on a circular replay memory :math:`M_{RL}` of its
  own transitions, which learns a best response to the other players' behaviour;
* an average-policy network :math:`\Pi_p(a \mid I)`, trained by supervised learning
  (cross-entropy) on a reservoir memory :math:`M_{SL}` of the actions p took *while
  best-responding*: it imitates p's past best responses, so it approximates their average, which
  is what fictitious play converges with.

One episode (the unit `run` counts):

1. Each player picks its mode for the episode: with probability eta (the anticipatory parameter)
   it plays its epsilon-greedy best response to Q_p, otherwise its average policy Pi_p.
2. Play the hand on the game tree. At each of p's decisions, p's previous transition
   (I, a, r = 0, I') goes to M_RL; in best-response mode, (I, a) also goes to M_SL. At the end every
   player's last transition (I, a, r = u_p, terminal) goes to M_RL.
3. Every `learn_every` of p's decisions (once M_RL holds `min_buffer` transitions): one gradient
   step of the Q-network on a minibatch, with target
   :math:`r + \max_{a' \text{ legal}} Q_{\text{target}}(I', a')`, and one
   of the average network on a minibatch of M_SL; every `target_update_every` of these steps the
   target network copies the Q-network.

Networks are evaluated in one batch at every infoset after each learning step (`network_policy`),
so acting is a table lookup and the average policy is measured exactly: `average_policy()` is the
TabularPolicy of the Pi networks, `best_response_policy()` the greedy policy of the Q networks.
The defaults (`NFSPConfig`) are the paper's Leduc settings where they fit these budgets and
OpenSpiel's NFSP example on Leduc otherwise.
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
from labkit.deep.networks import MASKED_LOGIT, MLP, masked_log_softmax, policy_from_outputs
from labkit.policy import TabularPolicy

OPTIMIZERS = ("sgd", "adam")


@dataclass(frozen=True)
class NFSPConfig:
    """Hyperparameters of NFSP (the paper's Leduc values in brackets; OpenSpiel's example in braces).

    Attributes
    ----------
    hidden : tuple of int
        Widths of both networks' hidden layers [one layer of 64] {128}.
    replay_capacity : int
        M_RL, circular [200,000].
    reservoir_capacity : int
        M_SL, reservoir [2,000,000].
    anticipatory : float
        eta, in [0, 1] [0.1].
    batch_size : int
        [128].
    learn_every : int
        A learning step every this many of the player's decisions {64}.
    min_buffer : int
        Transitions in M_RL before learning starts {1,000}.
    optimizer : {"sgd", "adam"}
        "sgd" [the paper, and OpenSpiel's default] or "adam".
    rl_learning_rate, sl_learning_rate : float
        Step sizes [0.1 and 0.005] {0.01 and 0.01}.
    target_update_every : int
        Q-network learning steps between target copies [300] {300}.
    epsilon_start, epsilon_end : float
        Exploration of the best response, in [0, 1], decayed linearly [0.06 to 0].
    epsilon_decay_steps : int
        Over this many of the player's decisions.
    encoding : str
        The infoset features (`labkit.deep.infoset_features`).

    Raises
    ------
    ValueError
        For a count that is not a positive integer, a probability outside [0, 1], a rate that is
        not a finite positive number, bad hidden widths, or an unknown optimizer or encoding.

    References
    ----------
    J. Heinrich and D. Silver (2016), "Deep reinforcement learning from self-play in
    imperfect-information games", arXiv:1603.01121.

    Examples
    --------
    >>> NFSPConfig(optimizer="adam", learn_every=16).optimizer
    'adam'
    >>> NFSPConfig(anticipatory=1.5)
    Traceback (most recent call last):
      ...
    ValueError: anticipatory must be in [0, 1], got 1.5
    """
    hidden: tuple = (128,)
    replay_capacity: int = 200_000
    reservoir_capacity: int = 2_000_000
    anticipatory: float = 0.1
    batch_size: int = 128
    learn_every: int = 64
    min_buffer: int = 1000
    optimizer: str = "sgd"
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.01
    target_update_every: int = 300
    epsilon_start: float = 0.06
    epsilon_end: float = 0.001
    epsilon_decay_steps: int = 2_000_000
    encoding: str = "auto"

    def __post_init__(self) -> None:
        for name in ("replay_capacity", "reservoir_capacity", "batch_size", "learn_every", "min_buffer",
                     "target_update_every", "epsilon_decay_steps"):
            check_positive_int(name, getattr(self, name))
        object.__setattr__(self, "hidden", check_hidden(self.hidden))
        for name in ("rl_learning_rate", "sl_learning_rate"):
            check_rate(name, getattr(self, name))
        from labkit.deep.features import ENCODINGS
        if self.encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {ENCODINGS}, got {self.encoding!r}")
        if not 0 <= self.anticipatory <= 1:
            raise ValueError(f"anticipatory must be in [0, 1], got {self.anticipatory!r}")
        if not (0 <= self.epsilon_end <= 1 and 0 <= self.epsilon_start <= 1):
            raise ValueError("epsilon_start and epsilon_end must be in [0, 1]")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if not (self.rl_learning_rate > 0 and self.sl_learning_rate > 0):
            raise ValueError("learning rates must be positive")


class _Agent:
    """One player's networks, memories and acting tables."""

    def __init__(self, solver: NFSP, player: int, key: Any):
        game, c = solver.game, solver.config
        self.player = player
        self.rows = game.infosets_of(player)
        model = solver.model
        q_key, pi_key = jax.random.split(key)
        self.q_params = model.init(q_key)
        self.target_params = self.q_params
        self.pi_params = model.init(pi_key)
        self.q_opt = solver.rl_optimizer.init(self.q_params)
        self.pi_opt = solver.sl_optimizer.init(self.pi_params)
        # M_RL (circular): infoset, action, reward, next infoset (-1 at the end of the hand)
        self.rl_infoset = np.zeros(c.replay_capacity, dtype=np.int32)
        self.rl_action = np.zeros(c.replay_capacity, dtype=np.int32)
        self.rl_reward = np.zeros(c.replay_capacity, dtype=np.float32)
        self.rl_next = np.zeros(c.replay_capacity, dtype=np.int32)
        self.rl_size = self.rl_cursor = 0
        # M_SL (reservoir): infoset, action
        self.sl_infoset = np.zeros(c.reservoir_capacity, dtype=np.int32)
        self.sl_action = np.zeros(c.reservoir_capacity, dtype=np.int32)
        self.sl_size = self.sl_seen = 0
        self.decisions = 0
        self.learning_steps = 0
        self.greedy = [0] * game.num_infosets            # acting tables (this player's rows only)
        self.average = [None] * game.num_infosets

    def store_transition(self, infoset: int, action: int, reward: float, next_infoset: int) -> None:
        k = self.rl_cursor
        self.rl_infoset[k], self.rl_action[k] = infoset, action
        self.rl_reward[k], self.rl_next[k] = reward, next_infoset
        self.rl_cursor = (k + 1) % len(self.rl_infoset)
        self.rl_size = min(self.rl_size + 1, len(self.rl_infoset))

    def store_best_response_action(self, infoset: int, action: int, rng: np.random.Generator) -> None:
        self.sl_seen += 1
        if self.sl_size < len(self.sl_infoset):
            k = self.sl_size
            self.sl_size += 1
        else:
            k = int(rng.integers(0, self.sl_seen))
            if k >= len(self.sl_infoset):
                return
        self.sl_infoset[k], self.sl_action[k] = infoset, action


class NFSP(NetworkSolver):
    """Neural fictitious self-play; one iteration is one episode (hand) of self-play.

    Parameters
    ----------
    game : str or GameTree
    config : NFSPConfig, optional
    seed : int
        Seeds the hands, the modes, exploration, memories, minibatches and initializations: the same
        seed gives the same networks, bit for bit, on one machine.

    Attributes
    ----------
    agents : list
        Per player: its networks, memories and acting tables.

    Raises
    ------
    TypeError, ValueError
        For a configuration that is not an NFSPConfig or a bad seed.

    References
    ----------
    J. Heinrich and D. Silver (2016), "Deep reinforcement learning from self-play in
    imperfect-information games", arXiv:1603.01121.

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit import deep
    >>> solver = deep.NFSP("kuhn_poker", seed=0)
    >>> _ = solver.run(2000)
    >>> lk.nash_conv(solver.game, solver.average_policy()) < lk.nash_conv(solver.game, lk.uniform_policy(solver.game))
    True
    """

    config_type = NFSPConfig

    def __init__(self, game: Any, config: NFSPConfig | None = None, seed: int = 0):
        super().__init__(game, config, seed)
        game, config = self.game, self.config
        self.model = MLP(self.features.size, config.hidden, game.num_actions)
        self.rl_optimizer = _optimizer(config.optimizer, config.rl_learning_rate)
        self.sl_optimizer = _optimizer(config.optimizer, config.sl_learning_rate)
        self._inputs = jnp.asarray(self.features.matrix)
        self._legal = jnp.asarray(game.legal_mask)
        self._learn = _learning_function(tuple(self.model.sizes), config.optimizer, config.rl_learning_rate,
                                         config.sl_learning_rate)
        keys = jax.random.split(self.streams.key, game.num_players)
        self.agents = [_Agent(self, p, keys[p]) for p in range(game.num_players)]
        for agent in self.agents:
            self._refresh_tables(agent, *self._evaluate(agent.q_params, agent.pi_params, agent.rows))

    # -- acting tables ---------------------------------------------------------------
    def _evaluate(self, q_params: Any, pi_params: Any, rows: Any) -> tuple[np.ndarray, np.ndarray]:
        q, logits = _evaluate_function(tuple(self.model.sizes))(q_params, pi_params, self._inputs[rows],
                                                                  self._legal[rows])
        return np.asarray(q, dtype=np.float64), np.asarray(logits, dtype=np.float64)

    def _refresh_tables(self, agent: _Agent, q: np.ndarray, logits: np.ndarray) -> None:
        """Greedy actions (as indices into the legal actions) and average-policy rows of `agent`."""
        legal = self.game.legal_mask[agent.rows]
        greedy = np.where(legal, q, -np.inf).argmax(axis=1)
        position = np.cumsum(legal, axis=1) - 1                    # action id -> index among the legal
        greedy_index = position[np.arange(len(greedy)), greedy]
        z = np.where(legal, logits, -np.inf)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
        legal_actions = self.flat.legal_actions
        for j, i in enumerate(agent.rows.tolist()):
            agent.greedy[i] = int(greedy_index[j])
            agent.average[i] = probs[j, legal_actions[i]].tolist()

    def epsilon(self, agent: Any) -> float:
        r"""The exploration rate of one player's best response at its current number of decisions.

        .. math:: \epsilon = \epsilon_0 + \min(d / D, 1)\, (\epsilon_1 - \epsilon_0)

        with d the player's decisions so far and D ``epsilon_decay_steps``.

        Parameters
        ----------
        agent : one of `agents`

        Returns
        -------
        float

        Examples
        --------
        >>> from labkit import deep
        >>> solver = deep.NFSP("kuhn_poker", deep.NFSPConfig(epsilon_decay_steps=10), seed=0)
        >>> solver.epsilon(solver.agents[0])
        0.06
        """
        c = self.config
        fraction = min(agent.decisions / c.epsilon_decay_steps, 1.0)
        return c.epsilon_start + fraction * (c.epsilon_end - c.epsilon_start)

    # -- one episode -------------------------------------------------------------------
    def _step(self) -> None:
        flat, draw, c = self.flat, self._draw, self.config
        kind, first_child, infoset_of = flat.player, flat.first_child, flat.infoset
        legal = flat.legal_actions
        best_responding = [draw() < c.anticipatory for _ in self.agents]
        pending: list[Any] = [None] * len(self.agents)
        h = 0
        while kind[h] != flat.TERMINAL:
            acting = kind[h]
            if acting == flat.CHANCE:
                h = first_child[h] + pick(flat.chance_cumulative[h], draw())
                continue
            agent, infoset = self.agents[acting], infoset_of[h]
            if pending[acting] is not None:
                agent.store_transition(*pending[acting], 0.0, infoset)
            actions = legal[infoset]
            if best_responding[acting]:
                if draw() < self.epsilon(agent):
                    k = min(int(draw() * len(actions)), len(actions) - 1)
                else:
                    k = agent.greedy[infoset]
                agent.store_best_response_action(infoset, actions[k], self.streams.memory)
            else:
                k = pick_from(agent.average[infoset], draw())
            pending[acting] = (infoset, actions[k])
            agent.decisions += 1
            if agent.decisions % c.learn_every == 0 and agent.rl_size >= c.min_buffer:
                self._learn_step(agent)
            h = first_child[h] + k
        returns = flat.returns[h]
        for p, transition in enumerate(pending):
            if transition is not None:
                infoset, action = transition
                self.agents[p].store_transition(infoset, action, returns[p], -1)

    def _learn_step(self, agent: _Agent) -> None:
        c, rng = self.config, self.streams.batches
        rl = rng.integers(0, agent.rl_size, c.batch_size)
        sl = rng.integers(0, max(agent.sl_size, 1), c.batch_size)
        sl_weight = np.float32(1.0 if agent.sl_size else 0.0)
        out = self._learn(agent.q_params, agent.q_opt, agent.target_params, agent.pi_params, agent.pi_opt,
                          self._inputs, self._legal,
                          agent.rl_infoset[rl], agent.rl_action[rl], agent.rl_reward[rl], agent.rl_next[rl],
                          agent.sl_infoset[sl], agent.sl_action[sl], sl_weight, agent.rows)
        agent.q_params, agent.q_opt, agent.pi_params, agent.pi_opt, q, logits = out
        agent.learning_steps += 1
        if agent.learning_steps % c.target_update_every == 0:
            agent.target_params = agent.q_params
        self._refresh_tables(agent, np.asarray(q, dtype=np.float64), np.asarray(logits, dtype=np.float64))

    # -- policies ------------------------------------------------------------------
    def _outputs(self, which: str) -> np.ndarray:
        outputs = np.zeros(self.game.legal_mask.shape)
        for agent in self.agents:
            q, logits = self._evaluate(agent.q_params, agent.pi_params, agent.rows)
            outputs[agent.rows] = q if which == "q" else logits
        return outputs

    def average_policy(self) -> TabularPolicy:
        r"""The average-policy networks :math:`\Pi_p` at every infoset (what NFSP's NashConv measures).

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> from labkit import deep
        >>> policy = deep.NFSP("kuhn_poker", seed=0).average_policy()
        >>> bool(abs(policy.probs - 0.5).max() < 0.1)       # a fresh network plays nearly uniformly
        True
        """
        return policy_from_outputs(self.game, self._outputs("pi"), "logits")

    def best_response_policy(self) -> TabularPolicy:
        """The greedy policy of the Q-networks (each player's learned best response).

        Returns
        -------
        TabularPolicy
            Deterministic: one action per infoset.

        Examples
        --------
        >>> from labkit import deep
        >>> policy = deep.NFSP("kuhn_poker", seed=0).best_response_policy()
        >>> sorted(set(policy.probs.ravel().tolist()))
        [0.0, 1.0]
        """
        return policy_from_outputs(self.game, self._outputs("q"), "q_values")

    def current_policy(self) -> TabularPolicy:
        """What an episode plays in expectation.

        Per player, eta times the epsilon-greedy best response plus (1 - eta) times the average
        policy: a mixture chosen once per hand, so reach-weighted, as `TabularPolicy.mixture`
        computes.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> from labkit import deep
        >>> policy = deep.NFSP("kuhn_poker", seed=0).current_policy()
        >>> bool(abs(policy.probs.sum(axis=1) - 1).max() < 1e-12)
        True
        """
        eta = self.config.anticipatory
        greedy, average = self.best_response_policy(), self.average_policy()
        probs = average.probs.copy()
        for agent in self.agents:
            eps = self.epsilon(agent)
            legal = self.game.legal_mask[agent.rows]
            explore = (1 - eps) * greedy.probs[agent.rows] + eps * legal / legal.sum(axis=1, keepdims=True)
            mine = TabularPolicy.mixture([TabularPolicy(self.game, _with_rows(average.probs, agent.rows, explore),
                                                        check=False), average], [eta, 1 - eta])
            probs[agent.rows] = mine.probs[agent.rows]
        return TabularPolicy(self.game, probs, check=False)

    def settings(self) -> dict:
        """The configuration and seed, as plain values (for cached results).

        Returns
        -------
        dict

        Examples
        --------
        >>> from labkit import deep
        >>> deep.NFSP("kuhn_poker", seed=2).settings()["seed"]
        2
        """
        return {**asdict(self.config), "seed": self.seed}

    def __repr__(self) -> str:
        return f"NFSP({self.game.name}, episodes={self.iteration})"


def _with_rows(probs: np.ndarray, rows: Any, values: np.ndarray) -> np.ndarray:
    out = probs.copy()
    out[rows] = values
    return out


@functools.cache
def _evaluate_function(sizes):
    @jax.jit
    def evaluate(q_params, pi_params, inputs, legal):
        return MLP.apply(q_params, inputs), jnp.where(legal, MLP.apply(pi_params, inputs), MASKED_LOGIT)
    return evaluate


@functools.cache
def _learning_function(sizes, optimizer, rl_learning_rate, sl_learning_rate):
    """One jitted NFSP learning step of one player: a DQN step, a supervised step and the new
    acting tables at the player's infosets, in a single dispatch."""
    rl_optimizer, sl_optimizer = _optimizer(optimizer, rl_learning_rate), _optimizer(optimizer, sl_learning_rate)

    def td_loss(q_params, target_params, features, legal, infosets, actions, rewards, next_infosets):
        q = MLP.apply(q_params, features[infosets])
        chosen = jnp.take_along_axis(q, actions[:, None], axis=1)[:, 0]
        done = next_infosets < 0
        nxt = jnp.maximum(next_infosets, 0)
        next_q = jnp.where(legal[nxt], MLP.apply(target_params, features[nxt]), -jnp.inf).max(axis=1)
        target = rewards + jnp.where(done, 0.0, next_q)
        return jnp.mean((chosen - jax.lax.stop_gradient(target)) ** 2)

    def sl_loss(pi_params, features, legal, infosets, actions, weight):
        logp = masked_log_softmax(MLP.apply(pi_params, features[infosets]), legal[infosets])
        return -weight * jnp.mean(jnp.take_along_axis(logp, actions[:, None], axis=1))

    @jax.jit
    def learn(q_params, q_opt, target_params, pi_params, pi_opt, features, legal, infosets, actions, rewards,
              next_infosets, sl_infosets, sl_actions, sl_weight, rows):
        grads = jax.grad(td_loss)(q_params, target_params, features, legal, infosets, actions, rewards,
                                  next_infosets)
        updates, q_opt = rl_optimizer.update(grads, q_opt, q_params)
        q_params = optax.apply_updates(q_params, updates)
        grads = jax.grad(sl_loss)(pi_params, features, legal, sl_infosets, sl_actions, sl_weight)
        updates, pi_opt = sl_optimizer.update(grads, pi_opt, pi_params)
        pi_params = optax.apply_updates(pi_params, updates)
        inputs = features[rows]
        return (q_params, q_opt, pi_params, pi_opt, MLP.apply(q_params, inputs),
                jnp.where(legal[rows], MLP.apply(pi_params, inputs), MASKED_LOGIT))
    return learn


def _optimizer(name, learning_rate):
    return optax.sgd(learning_rate) if name == "sgd" else optax.adam(learning_rate)
