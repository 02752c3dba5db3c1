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

import jax
import jax.numpy as jnp
import numpy as np
import optax

from labkit.deep.common import check_positive_int, check_seed
from labkit.deep.teams import TEAM_GAMES, TeamGame, play, team_value


@dataclass(frozen=True)
class TeamConfig:
    """Hyperparameters of the cooperative learners (QMIX's paper values in brackets, scaled down).

    episodes : episodes per iteration, one gradient step each [32]
    hidden : hidden widths of the agents' networks [one GRU layer of 64]
    mixing_embed : width of QMIX's mixing layer [32]
    learning_rate : Adam's (the paper: RMSprop, 5e-4)
    epsilon_start, epsilon_end, epsilon_decay : exploration of the value methods, linear over
        this many iterations [1.0 to 0.05]
    critic_learning_rate, entropy : COMA's critic step size; COMA's and MAPPO's entropy bonus
    ppo_clip, ppo_epochs : MAPPO's clipping of the probability ratio and its Adam steps per batch
        [0.2 and 5-15 epochs]
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

    def __post_init__(self):
        if not 0 < self.ppo_clip < 1:
            raise ValueError(f"ppo_clip must be in (0, 1), got {self.ppo_clip!r}")
        for name in ("episodes", "mixing_embed", "epsilon_decay", "ppo_epochs"):
            check_positive_int(name, getattr(self, name))
        if not (0 <= self.epsilon_end <= 1 and 0 <= self.epsilon_start <= 1):
            raise ValueError("epsilon_start and epsilon_end must be in [0, 1]")
        if not (self.learning_rate > 0 and self.critic_learning_rate > 0 and self.entropy >= 0):
            raise ValueError("learning rates must be positive and entropy >= 0")


def mlp_init(key, sizes, last_scale=0.1):
    """Parameters of an MLP with the given layer sizes (He-normal weights, zero biases)."""
    params = []
    keys = jax.random.split(key, len(sizes) - 1)
    for k, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        scale = np.sqrt(2.0 / m) * (last_scale if k == len(sizes) - 2 else 1.0)
        params.append({"w": scale * jax.random.normal(keys[k], (m, n), jnp.float32), "b": jnp.zeros((n,), jnp.float32)})
    return params


def mlp(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


_COMPILED = {}


@functools.lru_cache(maxsize=None)
def _named_game(name):
    return TEAM_GAMES[name]()


class TeamLearner:
    """Base class: a subclass defines `_init_params(key)`, `_loss(params, batch)` and
    `_tables(params)` (per agent, an (O_i, A) array: utilities, or probabilities if `stochastic`).

    Parameters
    ----------
    game : TeamGame or str ("climbing game", "messenger game")
    config : TeamConfig, optional
    seed : int
        Seeds the initialization, the episodes and the exploration: same seed, same numbers.

    Attributes
    ----------
    history : list of (iteration, team value of the greedy policies)
    """

    stochastic = False           # COMA acts from its actors' probabilities, the others epsilon-greedily

    def __init__(self, game, config: TeamConfig | None = None, seed: int = 0):
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
        self.history = []
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

    def _optimizer(self):
        return optax.adam(self.config.learning_rate)

    # -- what a subclass provides ---------------------------------------------------
    def _init_params(self, key):
        raise NotImplementedError

    def _tables(self, params):
        raise NotImplementedError

    def _loss(self, params, batch):
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------
    def utility_q(self, params, agent):
        """(O_i, A) network outputs of `agent` at every observation."""
        return mlp(params["agents"][agent], self.obs_inputs[agent])

    def _update_step(self, params, opt_state, batch):
        loss, grads = jax.value_and_grad(self._loss)(params, batch)
        updates, opt_state = self.optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def epsilon(self) -> float:
        c = self.config
        fraction = min(self.iteration / c.epsilon_decay, 1.0)
        return c.epsilon_start + fraction * (c.epsilon_end - c.epsilon_start)

    def behaviour(self):
        """Per agent, the (O_i, A) distribution the next episodes are played with."""
        tables = [np.asarray(t, dtype=np.float64) for t in self._read(self.params)]
        if self.stochastic:
            return [t / t.sum(axis=1, keepdims=True) for t in tables]
        eps, A = self.epsilon(), self.game.num_actions
        return [(1 - eps) * np.eye(A)[t.argmax(axis=1)] + eps / A for t in tables]

    def step(self):
        batch = play(self.game, self.behaviour(), self.config.episodes, self.rng)
        arrays = {"state": jnp.asarray(batch.state), "actions": jnp.asarray(batch.actions),
                  "reward": jnp.asarray(batch.reward, dtype=jnp.float32), "next": jnp.asarray(batch.next_state)}
        self.params, self.opt_state, self.last_loss = self._update(self.params, self.opt_state, arrays)
        self.iteration += 1
        return self

    def run(self, iterations: int, eval_every: int = 0, progress: bool = False):
        """Train for `iterations` iterations; every `eval_every` (0: never) record the team value of
        the greedy policies in `history`. Returns the records made in this call."""
        check_positive_int("iterations", iterations)
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

    def tables(self):
        """Per agent, the (O_i, A) table the agent acts on (utilities, or probabilities for COMA)."""
        return [np.asarray(t, dtype=np.float64) for t in self._read(self.params)]

    def greedy_actions(self):
        """Per agent, the greedy action at each observation (ties to the lowest action)."""
        return [t.argmax(axis=1) for t in self.tables()]

    def team_value(self) -> float:
        """Exact expected team return when both agents play their greedy actions."""
        return team_value(self.game, self.greedy_actions())

    def settings(self) -> dict:
        return {**asdict(self.config), "seed": self.seed}

    def __repr__(self):
        return f"{type(self).__name__}({self.game.name}, iteration={self.iteration})"


def bootstrap(next_state, values):
    """values[s'] where the episode continues, 0 where it ended (next_state = -1)."""
    return jnp.where(next_state >= 0, values[jnp.maximum(next_state, 0)], 0.0)
