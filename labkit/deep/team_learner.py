"""The training loop shared by the cooperative learners (`IndependentQ`, `VDN`, `QMIX`, `COMA`,
`MAPPO`, which takes several steps per batch).

Every iteration of a learner on a `labkit.deep.teams.TeamGame`:

1. Read the agents' tables: each agent's network evaluated at every one of its observations
   (utilities Q_i(o, .) for the value methods, action probabilities for COMA).
2. Play `episodes` episodes with the behaviour policies (epsilon-greedy on the utilities, with
   epsilon decayed linearly; COMA samples from its actors).
3. One Adam step on the learner's loss over the batch of transitions (the learner's own module
   says which loss); the targets bootstrap from the same networks with the gradient stopped
   (episodes last at most two steps, so no target network is needed).

Observations and states enter the networks as one-hot vectors. `greedy_actions()` gives each agent's
greedy action at each observation, and `team_value()` the exact expected return of those
decentralized greedy policies (`labkit.deep.teams.team_value`), so every result is measured exactly.
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from labkit.deep.common import check_hidden, check_positive_int, check_rate, check_seed
from labkit.deep.teams import TEAM_GAMES, TeamGame, play, team_value


@dataclass(frozen=True)
class TeamConfig:
    """Hyperparameters of the cooperative learners (QMIX's paper values in brackets, scaled down).

    Attributes
    ----------
    episodes : int
        Episodes per iteration, one gradient step each [32].
    hidden : tuple of int
        Hidden widths of the agents' networks [one GRU layer of 64].
    mixing_embed : int
        Width of QMIX's mixing layer [32].
    learning_rate : float
        Adam's (the paper: RMSprop, 5e-4).
    epsilon_start, epsilon_end : float
        Exploration of the value methods, in [0, 1] [1.0 to 0.05].
    epsilon_decay : int
        Iterations over which epsilon decays linearly.
    critic_learning_rate : float
        COMA's critic step size.
    entropy : float
        COMA's and MAPPO's entropy bonus, >= 0.
    ppo_clip : float
        MAPPO's clipping of the probability ratio, in (0, 1) [0.2].
    ppo_epochs : int
        MAPPO's Adam steps per batch [5-15 epochs].

    Raises
    ------
    ValueError
        For counts that are not positive integers, probabilities outside [0, 1], rates that are
        not finite positive numbers, a negative entropy bonus or bad hidden widths.

    Examples
    --------
    >>> TeamConfig(episodes=8).epsilon_decay
    1000
    >>> TeamConfig(epsilon_start=2.0)
    Traceback (most recent call last):
      ...
    ValueError: epsilon_start and epsilon_end must be in [0, 1]
    """
    episodes: int = 32
    hidden: tuple = (32,)
    mixing_embed: int = 8
    learning_rate: float = 5e-3
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_decay: int = 1000
    critic_learning_rate: float = 2e-2
    entropy: float = 0.01
    ppo_clip: float = 0.2
    ppo_epochs: int = 4

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", check_hidden(self.hidden))
        for name in ("learning_rate", "critic_learning_rate"):
            check_rate(name, getattr(self, name))
        if not 0 < self.ppo_clip < 1:
            raise ValueError(f"ppo_clip must be in (0, 1), got {self.ppo_clip!r}")
        for name in ("episodes", "mixing_embed", "epsilon_decay", "ppo_epochs"):
            check_positive_int(name, getattr(self, name))
        if not (0 <= self.epsilon_end <= 1 and 0 <= self.epsilon_start <= 1):
            raise ValueError("epsilon_start and epsilon_end must be in [0, 1]")
        if not (self.learning_rate > 0 and self.critic_learning_rate > 0 and self.entropy >= 0):
            raise ValueError("learning rates must be positive and entropy >= 0")


def mlp_init(key: Any, sizes: list[int], last_scale: float = 0.1) -> list[dict[str, Any]]:
    """Parameters of an MLP with the given layer sizes (He-normal weights, zero biases).

    Parameters
    ----------
    key : jax.Array
    sizes : list of int
        Input, hidden and output widths.
    last_scale : float
        The last layer's weights are scaled by it.

    Returns
    -------
    list of {"w": (m, k) array, "b": (k,) array}

    Examples
    --------
    >>> import jax
    >>> [layer["w"].shape for layer in mlp_init(jax.random.PRNGKey(0), [3, 8, 2])]
    [(3, 8), (8, 2)]
    """
    params = []
    keys = jax.random.split(key, len(sizes) - 1)
    for k, (m, n) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        scale = np.sqrt(2.0 / m) * (last_scale if k == len(sizes) - 2 else 1.0)
        params.append({"w": scale * jax.random.normal(keys[k], (m, n), jnp.float32), "b": jnp.zeros((n,), jnp.float32)})
    return params


def mlp(params: Any, x: Any) -> Any:
    """The outputs of an MLP of `mlp_init` (ReLU hidden layers, linear output).

    Parameters
    ----------
    params : list of dicts
    x : (batch, sizes[0]) array

    Returns
    -------
    (batch, sizes[-1]) jax array

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> mlp(mlp_init(jax.random.PRNGKey(0), [3, 8, 2]), jnp.zeros((4, 3))).tolist()[0]     # zero biases
    [0.0, 0.0]
    """
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


_COMPILED: dict[Any, Any] = {}


@functools.cache
def _named_game(name: str) -> TeamGame:
    return TEAM_GAMES[name]()


class TeamLearner:
    """The training loop of the cooperative learners (module docstring).

    A subclass defines `_init_params(key)`, `_loss(params, batch)` and `_tables(params)` (per
    agent, an (O_i, A) array: utilities, or probabilities if `stochastic`).

    Parameters
    ----------
    game : TeamGame or str ("climbing game", "messenger game")
    config : TeamConfig, optional
    seed : int
        Seeds the initialization, the episodes and the exploration: same seed, same numbers.

    Attributes
    ----------
    history : list of (int, float)
        (iteration, team value of the greedy policies), recorded by `run`.

    Raises
    ------
    TypeError, ValueError
        For an unknown game, a configuration that is not a TeamConfig, or a bad seed.

    Examples
    --------
    >>> from labkit import deep
    >>> learner = deep.IndependentQ("climbing game", deep.TeamConfig(episodes=8), seed=0)
    >>> learner.run(20, eval_every=10)              # doctest: +ELLIPSIS
    [(10, ...), (20, ...)]
    """

    stochastic = False           # COMA acts from its actors' probabilities, the others epsilon-greedily

    def __init__(self, game: TeamGame | str, config: TeamConfig | None = None, seed: int = 0):
        if isinstance(game, str):
            if game not in TEAM_GAMES:
                raise ValueError(f"unknown team game {game!r}; known: {', '.join(TEAM_GAMES)}")
            game = _named_game(game)
        if not isinstance(game, TeamGame):
            raise TypeError(f"game must be a TeamGame or the name of one, got {type(game).__name__}")
        self.game = game
        self.config = config = TeamConfig() if config is None else config
        if not isinstance(config, TeamConfig):
            raise TypeError(f"config must be a TeamConfig, got {type(config).__name__}")
        self.seed = check_seed(seed)
        self.rng = np.random.default_rng(self.seed)
        self.iteration = 0
        self.history: list[tuple[int, float]] = []
        self.obs_inputs = [jnp.eye(n, dtype=jnp.float32) for n in game.num_observations]
        self.state_inputs = jnp.eye(game.num_states, dtype=jnp.float32)
        self.observation = jnp.asarray(game.observation)
        self.params = self._init_params(jax.random.PRNGKey(self.seed))
        self.optimizer = self._optimizer()
        self.opt_state = self.optimizer.init(self.params)
        # compiled once per learner class, game and configuration (the closures read only those)
        key = (type(self), id(game), config)
        if key not in _COMPILED:
            _COMPILED[key] = (game, jax.jit(self._update_step), jax.jit(self._tables))
        self._update, self._read = _COMPILED[key][1:]

    def _optimizer(self) -> Any:
        return optax.adam(self.config.learning_rate)

    # -- what a subclass provides ---------------------------------------------------
    def _init_params(self, key: Any) -> Any:
        raise NotImplementedError

    def _tables(self, params: Any) -> Any:
        raise NotImplementedError

    def _loss(self, params: Any, batch: Any) -> Any:
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------
    def utility_q(self, params: Any, agent: int) -> Any:
        """The network outputs of one agent at every one of its observations.

        Parameters
        ----------
        params : dict
            The learner's parameters (`params`).
        agent : {0, 1}

        Returns
        -------
        (O_i, A) jax array

        Examples
        --------
        >>> from labkit import deep
        >>> learner = deep.IndependentQ("climbing game", deep.TeamConfig(episodes=8), seed=0)
        >>> learner.utility_q(learner.params, 1).shape
        (1, 3)
        """
        return mlp(params["agents"][agent], self.obs_inputs[agent])

    def _update_step(self, params: Any, opt_state: Any, batch: Any) -> Any:
        loss, grads = jax.value_and_grad(self._loss)(params, batch)
        updates, opt_state = self.optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def epsilon(self) -> float:
        """The exploration rate of the value methods now (linear decay over `epsilon_decay` iterations).

        Returns
        -------
        float

        Examples
        --------
        >>> from labkit import deep
        >>> learner = deep.VDN("climbing game", deep.TeamConfig(epsilon_decay=10, episodes=4), seed=0)
        >>> learner.epsilon()
        1.0
        >>> _ = learner.run(5)
        >>> round(learner.epsilon(), 3)                     # 1 + (5 / 10) (0.05 - 1)
        0.525
        """
        c = self.config
        fraction = min(self.iteration / c.epsilon_decay, 1.0)
        return c.epsilon_start + fraction * (c.epsilon_end - c.epsilon_start)

    def behaviour(self) -> list[np.ndarray]:
        """Per agent, the (O_i, A) distribution the next episodes are played with.

        Returns
        -------
        list of two (O_i, A) float arrays

        Examples
        --------
        >>> from labkit import deep
        >>> learner = deep.IndependentQ("climbing game", deep.TeamConfig(episodes=8), seed=0)
        >>> print(learner.behaviour()[0].round(3))                # epsilon 1 at the start: uniform
        [[0.333 0.333 0.333]]
        """
        tables = [np.asarray(t, dtype=np.float64) for t in self._read(self.params)]
        if self.stochastic:
            return [t / t.sum(axis=1, keepdims=True) for t in tables]
        eps, A = self.epsilon(), self.game.num_actions
        return [(1 - eps) * np.eye(A)[t.argmax(axis=1)] + eps / A for t in tables]

    def step(self) -> TeamLearner:
        """One iteration: play a batch of episodes, then one Adam step on the learner's loss.

        Returns
        -------
        TeamLearner
            self.

        Examples
        --------
        >>> from labkit import deep
        >>> learner = deep.QMIX("climbing game", deep.TeamConfig(episodes=8), seed=0)
        >>> learner.step().step().iteration
        2
        """
        batch = play(self.game, self.behaviour(), self.config.episodes, self.rng)
        arrays = {"state": jnp.asarray(batch.state), "actions": jnp.asarray(batch.actions),
                  "reward": jnp.asarray(batch.reward, dtype=jnp.float32), "next": jnp.asarray(batch.next_state)}
        self.params, self.opt_state, self.last_loss = self._update(self.params, self.opt_state, arrays)
        self.iteration += 1
        return self

    def run(self, iterations: int, eval_every: int = 0, progress: bool = False) -> list[tuple[int, float]]:
        """Train for `iterations` iterations, recording the team value of the greedy policies.

        Parameters
        ----------
        iterations : int
            At least 1.
        eval_every : int
            Record every this many iterations and after the last (0: never).
        progress : bool
            Show a tqdm progress bar.

        Returns
        -------
        list of (int, float)
            The records made in this call (also appended to `history`).

        Raises
        ------
        ValueError
            For iterations that is not a positive integer or a negative eval_every.

        Examples
        --------
        >>> from labkit import deep
        >>> learner = deep.COMA("climbing game", deep.TeamConfig(episodes=8), seed=0)
        >>> [iteration for iteration, _ in learner.run(6, eval_every=4)]
        [4, 6]
        """
        check_positive_int("iterations", iterations)
        if isinstance(eval_every, (bool, np.bool_)) or not isinstance(eval_every, (int, np.integer)) \
                or eval_every < 0:
            raise ValueError(f"eval_every must be an integer >= 0 (0: never), got {eval_every!r}")
        records = []
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=iterations, desc=type(self).__name__, leave=False)
        for k in range(1, iterations + 1):
            self.step()
            if bar is not None:
                bar.update(1)
            if eval_every and (k % eval_every == 0 or k == iterations):
                records.append((self.iteration, self.team_value()))
        if bar is not None:
            bar.close()
        self.history += records
        return records

    def tables(self) -> list[np.ndarray]:
        """Per agent, the table the agent acts on (utilities, or probabilities for COMA and MAPPO).

        Returns
        -------
        list of two (O_i, A) float arrays

        Examples
        --------
        >>> from labkit import deep
        >>> [t.shape for t in deep.IndependentQ("messenger game", seed=0).tables()]
        [(8, 3), (4, 3)]
        """
        return [np.asarray(t, dtype=np.float64) for t in self._read(self.params)]

    def greedy_actions(self) -> list[np.ndarray]:
        """Per agent, the greedy action at each observation (ties to the lowest action).

        Returns
        -------
        list of two (O_i,) int arrays

        Examples
        --------
        >>> from labkit import deep
        >>> [a.shape for a in deep.VDN("messenger game", seed=0).greedy_actions()]
        [(8,), (4,)]
        """
        return [t.argmax(axis=1) for t in self.tables()]

    def team_value(self) -> float:
        """Exact expected team return when both agents play their greedy actions.

        Returns
        -------
        float

        Examples
        --------
        >>> from labkit import deep
        >>> from labkit.deep.teams import team_value
        >>> learner = deep.IndependentQ("climbing game", seed=0)
        >>> learner.team_value() == team_value(learner.game, learner.greedy_actions())
        True
        """
        return team_value(self.game, self.greedy_actions())

    def settings(self) -> dict:
        """The configuration and seed, as plain values (for cached results).

        Returns
        -------
        dict

        Examples
        --------
        >>> from labkit import deep
        >>> deep.MAPPO("climbing game", seed=5).settings()["seed"]
        5
        """
        return {**asdict(self.config), "seed": self.seed}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game.name}, iteration={self.iteration})"


def bootstrap(next_state: Any, values: Any) -> Any:
    """values[s'] where the episode continues, 0 where it ended (next_state = -1).

    Parameters
    ----------
    next_state : (N,) int array
    values : (S,) array

    Returns
    -------
    (N,) jax array

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> bootstrap(jnp.array([1, -1, 0]), jnp.array([5.0, 7.0])).tolist()
    [7.0, 0.0, 5.0]
    """
    return jnp.where(next_state >= 0, values[jnp.maximum(next_state, 0)], 0.0)
