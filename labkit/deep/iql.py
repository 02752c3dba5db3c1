"""Independent Q-learning with networks (Tan, 1993; Claus and Boutilier, 1998, "The dynamics of
reinforcement learning in cooperative multiagent systems").

Each agent i learns its own utility Q_i(o_i, a_i) from the shared reward as if its teammate were
part of the environment. One iteration (the loop of `labkit.deep.team_learner`):

1. play `episodes` episodes epsilon-greedily on each agent's own Q_i;
2. one Adam step on sum_i mean over transitions of
       (Q_i(o_i, a_i) - [r + max_b Q_i(o_i', b)])^2     (no bootstrap at the end of an episode).

A teammate's exploration enters every agent's targets as noise in its own action values, which is
what makes independent learners prefer actions that are safe against any partner (relative
overgeneralization, the chapter's climbing game).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from labkit.deep.team_learner import TeamLearner, bootstrap, mlp_init


class IndependentQ(TeamLearner):
    """Two independent deep Q-learners on a `TeamGame` (see the module docstring)."""

    def _init_params(self, key):
        keys = jax.random.split(key, 2)
        A, hidden = self.game.num_actions, self.config.hidden
        return {"agents": [mlp_init(keys[i], [n, *hidden, A]) for i, n in enumerate(self.game.num_observations)]}

    def _tables(self, params):
        return [self.utility_q(params, i) for i in range(2)]

    def _loss(self, params, batch):
        total = 0.0
        for i in range(2):
            Q = self.utility_q(params, i)
            chosen = Q[self.observation[i, batch["state"]], batch["actions"][:, i]]
            best_next = jax.lax.stop_gradient(Q.max(axis=1))[self.observation[i]]        # per state
            target = batch["reward"] + bootstrap(batch["next"], best_next)
            total = total + jnp.mean((chosen - target) ** 2)
        return total
