"""Value decomposition networks (Sunehag et al., 2018, "Value-decomposition networks for cooperative
multi-agent learning based on team reward", AAMAS).

The team's action value is the sum of per-agent utilities, Q_tot(s, a) = Q_1(o_1, a_1) + Q_2(o_2, a_2),
trained end to end by Q-learning on the team reward; since a sum is maximized term by term, each
agent's greedy action on its own Q_i is the greedy joint action of Q_tot. One iteration:

1. play `episodes` episodes epsilon-greedily on each Q_i;
2. one Adam step on mean over transitions of
       (Q_1(o_1, a_1) + Q_2(o_2, a_2) - [r + max_b Q_1(o_1', b) + max_b Q_2(o_2', b)])^2.

A sum cannot represent a payoff in which one agent's best action depends on the other's (the
climbing game): the least-squares compromise moves the greedy joint action away from the optimum.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from labkit.deep.iql import IndependentQ
from labkit.deep.team_learner import bootstrap


class VDN(IndependentQ):
    """VDN on a `TeamGame`: the same per-agent networks as `IndependentQ`, trained through their sum."""

    def _loss(self, params, batch):
        chosen, best_next = 0.0, 0.0
        for i in range(2):
            Q = self.utility_q(params, i)
            chosen = chosen + Q[self.observation[i, batch["state"]], batch["actions"][:, i]]
            best_next = best_next + jax.lax.stop_gradient(Q.max(axis=1))[self.observation[i]]
        target = batch["reward"] + bootstrap(batch["next"], best_next)
        return jnp.mean((chosen - target) ** 2)

    def joint_values(self, state: int = 0):
        """(A, A) the learned Q_tot(s, a_1, a_2) = Q_1(o_1(s), a_1) + Q_2(o_2(s), a_2) at one state."""
        q1, q2 = self.tables()
        return q1[self.game.observation[0, state]][:, None] + q2[self.game.observation[1, state]][None, :]
