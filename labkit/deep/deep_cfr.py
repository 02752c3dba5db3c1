r"""Deep CFR (Brown, Lerer, Gross and Sandholm, 2019, "Deep counterfactual regret minimization", ICML).

CFR with the regret table replaced by one *advantage network* per player, trained on regrets
sampled by external-sampling traversals, and the average strategy learned by a *strategy network*.
Iteration t, for each player p in turn:

1. Strategies: :math:`\sigma^t(I)` = regret matching on :math:`V_q(I, \cdot \mid \theta_q)` for
   every player q, with all mass on the largest advantage where none is positive (the paper's
   rule). labkit evaluates each network once at every infoset of the game (the networks do not
   change during the traversals).
2. K external-sampling traversals for p (as in `labkit.mccfr`): chance and the other players
   sample one action from :math:`\sigma^t`; p tries every legal action. At p's infoset I the
   sampled instantaneous regrets

   .. math:: \tilde r(I, a) = \tilde v(I a) - \sum_b \sigma^t(b \mid I)\, \tilde v(I b)

   go to p's advantage memory :math:`M_{V,p}` with weight t; at another player q's infoset,
   :math:`(I, \sigma^t(I))` goes to q's strategy memory :math:`M_{\Pi,q}` with weight t. Both
   memories are reservoirs.
3. Train p's advantage network from scratch on :math:`M_{V,p}`, minimizing the t-weighted squared
   error :math:`\sum t\, (\tilde r(I, a) - V_p(I, a))^2`, so :math:`V_p` estimates the linearly
   weighted average regret.

The average strategy is a network per player trained on M_Pi with t-weighted cross-entropy (the
paper uses squared error; both have the weighted mean of the stored strategies as minimizer): it
is what `average_policy()` returns, retrained when new samples came in since the last call.

With ``approximator="table"`` every network is a lookup table fitted exactly (the weighted mean of
its samples). Then, with uniform weighting, one traversal per iteration and the uniform rule where
no advantage is positive, Deep CFR *is* external-sampling MCCFR: regret matching on a mean equals
regret matching on the sum, and the same seed draws the same samples (tests/test_deep_cfr.py).

Defaults (`DeepCFRConfig`) scale the paper's (10,000 traversals per iteration, memories of 40
million, 4,000 Adam steps on batches of 10,000, learning rate 1e-3, gradient norm clipped at 1)
down to games with at most a few thousand infosets.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import jax
import numpy as np

from labkit.deep.common import (BATCHINGS, NetworkRegressor, NetworkSolver, Reservoir, TableRegressor, check_hidden,
                                check_positive_int, check_rate, pick, pick_from, rows_to_lists)
from labkit.deep.networks import NONPOSITIVE_RULES, policy_from_outputs
from labkit.policy import TabularPolicy

APPROXIMATORS = ("network", "table")


@dataclass(frozen=True)
class DeepCFRConfig:
    """Hyperparameters of Deep CFR (the paper's values in brackets).

    Attributes
    ----------
    traversals : int
        External-sampling traversals per player per iteration [10,000].
    hidden : tuple of int
        Hidden-layer widths of every network [3 layers of 192 after card/bet embeddings].
    advantage_memory, strategy_memory : int
        Reservoir capacities, per player [40 million].
    advantage_steps, strategy_steps : int
        Adam steps per training [4,000 and 4,000].
    batch_size : int
        [10,000].
    learning_rate : float
        Adam's [1e-3].
    gradient_clip : float
        Global gradient norm clip [1].
    linear_weighting : bool
        Weight iteration t's samples by t [yes]; False: all weights 1.
    reinitialize : bool
        Train the advantage networks from fresh weights every iteration [yes].
    nonpositive : {"argmax", "uniform"}
        "argmax" [the paper] or "uniform" (tabular CFR) where no advantage is positive.
    batching : {"minibatch", "infosets"}
        "minibatch" [the paper: batch_size samples of the memory per step] or "infosets": the
        same loss with its exact gradient, one batch of all the player's infosets weighted by the
        memory (`labkit.deep.common.NetworkRegressor`; batch_size is then unused).
    encoding : str
        The infoset features (`labkit.deep.infoset_features`).

    Raises
    ------
    ValueError
        For a count that is not a positive integer, a rate that is not a finite positive number,
        bad hidden widths, or an unknown rule, batching or encoding.

    References
    ----------
    N. Brown, A. Lerer, S. Gross and T. Sandholm (2019), "Deep counterfactual regret
    minimization", ICML.

    Examples
    --------
    >>> DeepCFRConfig(traversals=50, hidden=[32, 32]).hidden
    (32, 32)
    >>> DeepCFRConfig(learning_rate=0)
    Traceback (most recent call last):
      ...
    ValueError: learning_rate must be a finite positive number, got 0
    """
    traversals: int = 200
    hidden: tuple = (64, 64)
    advantage_memory: int = 200_000
    strategy_memory: int = 200_000
    advantage_steps: int = 200
    strategy_steps: int = 1000
    batch_size: int = 512
    learning_rate: float = 1e-3
    gradient_clip: float = 1.0
    linear_weighting: bool = True
    reinitialize: bool = True
    nonpositive: str = "argmax"
    batching: str = "minibatch"
    encoding: str = "auto"

    def __post_init__(self) -> None:
        for name in ("traversals", "advantage_memory", "strategy_memory", "advantage_steps", "strategy_steps",
                     "batch_size"):
            check_positive_int(name, getattr(self, name))
        object.__setattr__(self, "hidden", check_hidden(self.hidden))
        for name in ("learning_rate", "gradient_clip"):
            check_rate(name, getattr(self, name))
        for name in ("linear_weighting", "reinitialize"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        from labkit.deep.features import ENCODINGS
        if self.encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {ENCODINGS}, got {self.encoding!r}")
        if self.nonpositive not in NONPOSITIVE_RULES:
            raise ValueError(f"nonpositive must be one of {NONPOSITIVE_RULES}, got {self.nonpositive!r}")
        if self.batching not in BATCHINGS:
            raise ValueError(f"batching must be one of {BATCHINGS}, got {self.batching!r}")
        if not self.learning_rate > 0 or not self.gradient_clip > 0:
            raise ValueError("learning_rate and gradient_clip must be positive")


class DeepCFR(NetworkSolver):
    """Deep CFR on a labkit game (any number of players; two-player zero-sum is where it converges).

    One `step` is one iteration: K traversals and an advantage-network fit per player (module
    docstring); `average_policy` fits the strategy networks when new samples came in.

    Parameters
    ----------
    game : str or GameTree
    config : DeepCFRConfig, optional
    seed : int
        One seed for the traversals (the same stream as ``lk.MCCFR(game, seed=seed)``), the
        reservoirs, the minibatches and the network initializations: the same seed gives the same
        networks, bit for bit, on one machine.
    approximator : {"network", "table"}
        MLPs trained by Adam, or exact lookup tables (tabular MCCFR in disguise; see the module).

    Attributes
    ----------
    advantage_memories, strategy_memories : list of Reservoir, one per player
    traversals_done : int
        External-sampling traversals so far (the unit of work to compare with MCCFR episodes).

    Raises
    ------
    TypeError, ValueError
        For a configuration that is not a DeepCFRConfig, a bad seed or an unknown approximator.

    References
    ----------
    N. Brown, A. Lerer, S. Gross and T. Sandholm (2019), "Deep counterfactual regret
    minimization", ICML.

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit import deep
    >>> config = deep.DeepCFRConfig(traversals=20, hidden=(16,), advantage_steps=20, strategy_steps=20)
    >>> solver = deep.DeepCFR("kuhn_poker", config, seed=0)
    >>> _ = solver.run(2)
    >>> solver.traversals_done, solver.average_policy().probs.shape
    (80, (12, 2))

    With exact lookup tables, uniform weights, one traversal per iteration and the uniform rule it is
    external-sampling MCCFR, sample for sample:

    >>> tables = deep.DeepCFR("kuhn_poker", deep.DeepCFRConfig(traversals=1, linear_weighting=False,
    ...                       nonpositive="uniform"), seed=3, approximator="table")
    >>> mccfr = lk.MCCFR("kuhn_poker", sampling="external", seed=3)
    >>> _ = tables.run(50), mccfr.run(50)
    >>> bool(abs(tables.current_policy().probs - mccfr.current_policy().probs).max() < 1e-12)
    True
    """

    config_type = DeepCFRConfig

    def __init__(self, game: Any, config: DeepCFRConfig | None = None, seed: int = 0, approximator: str = "network"):
        if approximator not in APPROXIMATORS:
            raise ValueError(f"approximator must be one of {APPROXIMATORS}, got {approximator!r}")
        super().__init__(game, config, seed)
        self.approximator = approximator
        game, config, n = self.game, self.config, self.game.num_players
        A = game.num_actions
        self.advantage_memories = [Reservoir(config.advantage_memory, A, self.streams.memory) for _ in range(n)]
        self.strategy_memories = [Reservoir(config.strategy_memory, A, self.streams.memory) for _ in range(n)]
        keys = jax.random.split(self.streams.key, 2 * n)
        # the advantage memory of p holds p's infosets; the strategy memory of q holds q's
        self.advantage_nets = [self._regressor("mse", config.advantage_steps, config.reinitialize, keys[p], p)
                               for p in range(n)]
        self.strategy_nets = [self._regressor("cross_entropy", config.strategy_steps, True, keys[n + p], p)
                              for p in range(n)]
        self._strategy_key = jax.random.fold_in(self.streams.key, 1)
        self._sigma = TabularPolicy.uniform(game).probs.copy()      # all advantages start at 0
        self._sigma_lists = rows_to_lists(game, self._sigma)
        self._average: np.ndarray | None = None
        self.traversals_done = 0

    def _regressor(self, loss: str, steps: int, reinitialize: bool, key: Any, player: int) -> Any:
        if self.approximator == "table":
            return TableRegressor(self.game, loss)
        c = self.config
        return NetworkRegressor(self.game, self.features, c.hidden, loss, c.learning_rate, steps, c.batch_size,
                                c.gradient_clip, reinitialize, key, self.streams.batches, batching=c.batching,
                                rows=self.game.infosets_of(player))

    # -- one iteration -------------------------------------------------------------
    def _step(self) -> None:
        t = self.iteration + 1
        weight = float(t) if self.config.linear_weighting else 1.0
        for player in range(self.game.num_players):
            regrets, strategies = self._traverse(player, self.config.traversals)
            self.advantage_memories[player].add(*regrets, weight)
            for q, (rows, targets) in enumerate(strategies):
                self.strategy_memories[q].add(rows, targets, weight)
            self.advantage_nets[player].fit(self.advantage_memories[player])
            self._refresh_strategy(player)
        self._average = None

    def _refresh_strategy(self, player: int) -> None:
        """sigma at `player`'s infosets: regret matching on its advantage network's outputs."""
        net = self.advantage_nets[player]
        rows = self.game.infosets_of(player)
        outputs = np.zeros(self.game.legal_mask.shape)
        outputs[rows] = net.predict()[rows]
        probs = policy_from_outputs(self.game, outputs, "advantages", self.config.nonpositive).probs
        self._sigma[rows] = probs[rows]
        for i in rows.tolist():
            self._sigma_lists[i] = probs[i, self.flat.legal_actions[i]].tolist()

    def _traverse(self, player: int, count: int) -> tuple[tuple[np.ndarray, np.ndarray],
                                                          list[tuple[np.ndarray, np.ndarray]]]:
        """`count` external-sampling traversals for `player`; returns its advantage samples
        (rows, regret vectors) and every other player's strategy samples."""
        flat, draw, sigma = self.flat, self._draw, self._sigma_lists
        kind, first_child, infoset_of, returns = flat.player, flat.first_child, flat.infoset, flat.returns
        cumulative = flat.chance_cumulative
        A, n = self.game.num_actions, self.game.num_players
        regret_samples: list[tuple[int, list[float]]] = []
        strategy_samples: list[list[tuple[int, list[float]]]] = [[] for _ in range(n)]
        CHANCE, TERMINAL = flat.CHANCE, flat.TERMINAL

        def value_of(h: int) -> float:
            acting = kind[h]
            while acting != player:                       # chance and the others: one sample
                if acting == TERMINAL:
                    return returns[h][player]
                if acting == CHANCE:
                    k = pick(cumulative[h], draw())
                else:
                    infoset = infoset_of[h]
                    s = sigma[infoset]
                    k = pick_from(s, draw())
                    strategy_samples[acting].append((infoset, s))
                h = first_child[h] + k
                acting = kind[h]
            infoset = infoset_of[h]                       # the traverser: every action
            s = sigma[infoset]
            child = first_child[h]
            values = []
            value = 0.0
            for x in s:
                v = value_of(child)
                values.append(v)
                value += x * v
                child += 1
            regret_samples.append((infoset, [v - value for v in values]))
            return value

        for _ in range(count):
            value_of(0)
        self.traversals_done += count
        return self._dense(regret_samples, A), [self._dense(samples, A) for samples in strategy_samples]

    def _dense(self, samples: list[tuple[int, list[float]]], A: int) -> tuple[np.ndarray, np.ndarray]:
        """[(infoset, values over its legal actions)] -> (rows, (k, A) array zero on illegal actions)."""
        rows = np.fromiter((infoset for infoset, _ in samples), dtype=np.int64, count=len(samples))
        out = np.zeros((len(samples), A))
        legal = self.flat.legal_actions
        for j, (infoset, values) in enumerate(samples):
            out[j, legal[infoset]] = values
        return rows, out

    # -- policies ------------------------------------------------------------------
    def current_policy(self) -> TabularPolicy:
        r""":math:`\sigma^{t+1}`: regret matching on every player's advantage network.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> from labkit import deep
        >>> solver = deep.DeepCFR("kuhn_poker", deep.DeepCFRConfig(traversals=1), seed=0)
        >>> print(solver.current_policy().probs[:2])        # all advantages start at 0: uniform
        [[0.5 0.5]
         [0.5 0.5]]
        """
        return TabularPolicy(self.game, self._sigma.copy(), check=False)

    def average_policy(self) -> TabularPolicy:
        """The strategy networks' policy (trained on the strategy memories when they changed).

        The fit depends only on (seed, iteration, player), so asking for the average never changes
        the random numbers of training, whatever the evaluation schedule.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> from labkit import deep
        >>> solver = deep.DeepCFR("kuhn_poker", deep.DeepCFRConfig(traversals=1), seed=0)
        >>> print(solver.average_policy().probs[:2])        # no sample yet: uniform
        [[0.5 0.5]
         [0.5 0.5]]
        """
        if self._average is None:
            probs = TabularPolicy.uniform(self.game).probs.copy()
            for player, (net, memory) in enumerate(zip(self.strategy_nets, self.strategy_memories, strict=True)):
                if memory.size == 0:
                    continue
                if isinstance(net, NetworkRegressor):
                    # a fit that depends only on (seed, iteration, player), so looking at the average
                    # never changes the random numbers of training, whatever the evaluation schedule
                    net.key = jax.random.fold_in(self._strategy_key, self.iteration * len(self.strategy_nets) + player)
                    net.rng = np.random.default_rng([self.seed, 3, self.iteration, player])
                net.fit(memory)
                rows = self.game.infosets_of(player)
                probs[rows] = policy_from_outputs(self.game, net.predict(), net.kind).probs[rows]
            self._average = probs
        return TabularPolicy(self.game, self._average.copy(), check=False)

    def settings(self) -> dict:
        """The configuration, approximator and seed, as plain values (for cached results).

        Returns
        -------
        dict

        Examples
        --------
        >>> from labkit import deep
        >>> settings = deep.DeepCFR("kuhn_poker", seed=4).settings()
        >>> settings["traversals"], settings["approximator"], settings["seed"]
        (200, 'network', 4)
        """
        return {**asdict(self.config), "approximator": self.approximator, "seed": self.seed}

    def __repr__(self) -> str:
        return (f"DeepCFR({self.game.name}, {self.approximator}, iteration={self.iteration}, "
                f"traversals={self.traversals_done})")
