r"""MAPPO: proximal policy optimization with shared parameters and a centralized value function
(Yu, Velu, Vinitsky, Gao, Wang, Bayen and Wu, 2022, "The surprising effectiveness of PPO in
cooperative multi-agent games", NeurIPS Datasets and Benchmarks).

Both agents act from one actor network :math:`\pi(a \mid o_i, i)` (parameter sharing: the input
is the agent's one-hot id and its observation, each agent's observations in a block of their own),
and one critic V(s) sees the state, which only training uses: the agents still act on their own
observations. One iteration:

1. play `episodes` episodes with the actors' stochastic policies (on-policy), and keep the
   probabilities :math:`\pi_{old}(a_i \mid o_i)` of the actions played;
2. advantages from the centralized critic, with the gradient stopped,
   :math:`A(s, a) = r + V(s') - V(s)` (V(s') = 0 at the end; GAE with lambda = 0), shared by both
   agents (one team reward), normalized over the batch;
3. `ppo_epochs` Adam steps, each on the clipped surrogate of both agents plus the critic's squared
   error to :math:`r + V_{old}(s')` and an entropy bonus:

   .. math::

      -\frac{1}{2} \sum_i \mathrm{mean} \bigl[\min(\rho_i A, \mathrm{clip}(\rho_i, 1 - \epsilon,
      1 + \epsilon) A) + \text{entropy} \cdot H(\pi(\cdot \mid o_i, i))\bigr]
      + \mathrm{mean}\, (V(s) - [r + V_{old}(s')])^2, \qquad
      \rho_i = \frac{\pi(a_i \mid o_i, i)}{\pi_{old}(a_i \mid o_i)}.

The critic values states, not joint actions: it cannot say which joint action was good, only how
good the situation is. That is the difference from COMA's counterfactual critic Q(s, a_1, a_2).
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from labkit.deep.team_learner import TeamLearner, mlp, mlp_init
from labkit.deep.teams import play


class MAPPO(TeamLearner):
    """MAPPO on a `TeamGame` (see the module docstring).

    Uses `TeamConfig`'s episodes, hidden, learning_rate (actor and critic), entropy, ppo_clip and
    ppo_epochs.

    Parameters
    ----------
    game : TeamGame or str
    config : TeamConfig, optional
    seed : int

    References
    ----------
    C. Yu, A. Velu, E. Vinitsky, J. Gao, Y. Wang, A. Bayen and Y. Wu (2022), "The surprising
    effectiveness of PPO in cooperative multi-agent games", NeurIPS Datasets and Benchmarks.

    Examples
    --------
    >>> from labkit import deep
    >>> learner = deep.MAPPO("climbing game", deep.TeamConfig(episodes=8), seed=0)
    >>> _ = learner.run(10)
    >>> learner.state_values().shape, learner.iteration
    ((1,), 10)
    """

    stochastic = True

    def _init_params(self, key: Any) -> Any:
        keys = jax.random.split(key, 2)
        A, hidden = self.game.num_actions, self.config.hidden
        inputs = 2 + sum(self.game.num_observations)
        return {"actor": mlp_init(keys[0], [inputs, *hidden, A]),
                "critic": mlp_init(keys[1], [self.game.num_states, *hidden, 1], last_scale=1.0)}

    def actor_inputs(self, agent: int) -> Any:
        """The actor's inputs for one agent: its id one-hot, then its observation in its own block.

        Parameters
        ----------
        agent : {0, 1}

        Returns
        -------
        (O_i, 2 + O_1 + O_2) jax array

        Examples
        --------
        >>> from labkit import deep
        >>> deep.MAPPO("messenger game", seed=0).actor_inputs(1)[0].tolist()
        [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
        """
        sizes = self.game.num_observations
        rows = np.zeros((sizes[agent], 2 + sum(sizes)), dtype=np.float32)
        rows[:, agent] = 1.0
        start = 2 + sum(sizes[:agent])
        rows[:, start:start + sizes[agent]] = np.eye(sizes[agent])
        return jnp.asarray(rows)

    def _logits(self, params: Any, agent: int) -> Any:
        return mlp(params["actor"], self.actor_inputs(agent))

    def _tables(self, params: Any) -> Any:
        return [jax.nn.softmax(self._logits(params, i), axis=1) for i in range(2)]

    def state_values(self, params: Any = None) -> Any:
        """The centralized critic's V(s) at every state.

        Parameters
        ----------
        params : dict, optional
            Default: the learner's current parameters.

        Returns
        -------
        (S,) jax array

        Examples
        --------
        >>> from labkit import deep
        >>> deep.MAPPO("messenger game", seed=0).state_values().shape
        (8,)
        """
        return mlp((self.params if params is None else params)["critic"], self.state_inputs)[:, 0]

    def _loss(self, params: Any, batch: Any) -> Any:
        s, a = batch["state"], batch["actions"]
        V = self.state_values(params)
        value_loss = jnp.mean((V[s] - batch["value_target"]) ** 2)
        eps = self.config.ppo_clip
        policy_loss: Any = 0.0
        for i in range(2):
            logp = jax.nn.log_softmax(self._logits(params, i), axis=1)[self.observation[i, s]]
            chosen = jnp.take_along_axis(logp, a[:, i][:, None], axis=1)[:, 0]
            ratio = jnp.exp(chosen - batch["old_logp"][:, i])
            A = batch["advantage"]
            surrogate = jnp.minimum(ratio * A, jnp.clip(ratio, 1 - eps, 1 + eps) * A)
            entropy = -jnp.sum(jnp.exp(logp) * logp, axis=1)
            policy_loss = policy_loss - jnp.mean(surrogate + self.config.entropy * entropy)
        return policy_loss / 2 + value_loss

    def step(self) -> MAPPO:
        """One iteration: a batch of episodes, then `ppo_epochs` Adam steps on it (module docstring).

        Returns
        -------
        MAPPO
            self.

        Examples
        --------
        >>> from labkit import deep
        >>> learner = deep.MAPPO("climbing game", deep.TeamConfig(episodes=8), seed=0)
        >>> learner.step().iteration
        1
        """
        c = self.config
        behaviour = self.behaviour()
        batch = play(self.game, behaviour, c.episodes, self.rng)
        V = np.asarray(self.state_values(), dtype=np.float64)
        nxt = batch.next_state
        target = batch.reward + np.where(nxt >= 0, V[np.maximum(nxt, 0)], 0.0)
        advantage = target - V[batch.state]
        advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
        obs = self.game.observation
        old_logp = np.stack([np.log(behaviour[i][obs[i, batch.state], batch.actions[:, i]]) for i in range(2)], axis=1)
        arrays = {"state": jnp.asarray(batch.state), "actions": jnp.asarray(batch.actions),
                  "reward": jnp.asarray(batch.reward, dtype=jnp.float32), "next": jnp.asarray(nxt),
                  "value_target": jnp.asarray(target, dtype=jnp.float32),
                  "advantage": jnp.asarray(advantage, dtype=jnp.float32),
                  "old_logp": jnp.asarray(old_logp, dtype=jnp.float32)}
        for _ in range(c.ppo_epochs):
            self.params, self.opt_state, self.last_loss = self._update(self.params, self.opt_state, arrays)
        self.iteration += 1
        return self

