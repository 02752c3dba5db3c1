"""MAPPO: proximal policy optimization with shared parameters and a centralized value function
(Yu, Velu, Vinitsky, Gao, Wang, Bayen and Wu, 2022, "The surprising effectiveness of PPO in
cooperative multi-agent games", NeurIPS Datasets and Benchmarks).

Both agents act from one actor network pi(a | o_i, i) (parameter sharing: the input is the
agent's one-hot id and its observation, each agent's observations in a block of their own), and
one critic V(s) sees the state, which only training uses: the agents still act on their own
observations. One iteration:

1. play `episodes` episodes with the actors' stochastic policies (on-policy), and keep the
   probabilities pi_old(a_i | o_i) of the actions played;
2. advantages from the centralized critic, with the gradient stopped:
       A(s, a) = r + V(s') - V(s)           (V(s') = 0 at the end; GAE with lambda = 0)
   shared by both agents (one team reward), normalized over the batch;
3. `ppo_epochs` Adam steps, each on the clipped surrogate of both agents plus the critic's squared
   error to r + V_old(s') and an entropy bonus:
       - mean_i mean min(rho_i A, clip(rho_i, 1 - eps, 1 + eps) A) - entropy H(pi(. | o_i, i))
       + (V(s) - [r + V_old(s')])^2,        rho_i = pi(a_i | o_i, i) / pi_old(a_i | o_i).

The critic values states, not joint actions: it cannot say which joint action was good, only how
good the situation is. That is the difference from COMA's counterfactual critic Q(s, a_1, a_2).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from labkit.deep.team_learner import TeamLearner, mlp, mlp_init
from labkit.deep.teams import play


class MAPPO(TeamLearner):
    """MAPPO on a `TeamGame` (see the module docstring).

    Uses `TeamConfig`'s episodes, hidden, learning_rate (actor and critic), entropy, ppo_clip and
    ppo_epochs.
    """

    stochastic = True

    def _init_params(self, key):
        keys = jax.random.split(key, 2)
        A, hidden = self.game.num_actions, self.config.hidden
        inputs = 2 + sum(self.game.num_observations)
        return {"actor": mlp_init(keys[0], [inputs, *hidden, A]),
                "critic": mlp_init(keys[1], [self.game.num_states, *hidden, 1], last_scale=1.0)}

    def actor_inputs(self, agent):
        """(O_i, 2 + O_1 + O_2): the agent's id one-hot, then its observation in its own block."""
        sizes = self.game.num_observations
        rows = np.zeros((sizes[agent], 2 + sum(sizes)), dtype=np.float32)
        rows[:, agent] = 1.0
        start = 2 + sum(sizes[:agent])
        rows[:, start:start + sizes[agent]] = np.eye(sizes[agent])
        return jnp.asarray(rows)

    def _logits(self, params, agent):
        return mlp(params["actor"], self.actor_inputs(agent))

    def _tables(self, params):
        return [jax.nn.softmax(self._logits(params, i), axis=1) for i in range(2)]

    def state_values(self, params=None):
        """(S,) the centralized critic's V(s)."""
        return mlp((self.params if params is None else params)["critic"], self.state_inputs)[:, 0]

    def _loss(self, params, batch):
        s, a = batch["state"], batch["actions"]
        V = self.state_values(params)
        value_loss = jnp.mean((V[s] - batch["value_target"]) ** 2)
        eps = self.config.ppo_clip
        policy_loss = 0.0
        for i in range(2):
            logp = jax.nn.log_softmax(self._logits(params, i), axis=1)[self.observation[i, s]]
            chosen = jnp.take_along_axis(logp, a[:, i][:, None], axis=1)[:, 0]
            ratio = jnp.exp(chosen - batch["old_logp"][:, i])
            A = batch["advantage"]
            surrogate = jnp.minimum(ratio * A, jnp.clip(ratio, 1 - eps, 1 + eps) * A)
            entropy = -jnp.sum(jnp.exp(logp) * logp, axis=1)
            policy_loss = policy_loss - jnp.mean(surrogate + self.config.entropy * entropy)
        return policy_loss / 2 + value_loss

    def step(self):
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

