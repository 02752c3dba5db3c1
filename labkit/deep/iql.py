r"""Independent Q-learning with networks (Tan, 1993; Claus and Boutilier, 1998, "The dynamics of
reinforcement learning in cooperative multiagent systems").

Each agent i learns its own utility :math:`Q_i(o_i, a_i)` from the shared reward as if its
teammate were part of the environment. One iteration (the loop of `labkit.deep.team_learner`):

1. play `episodes` episodes epsilon-greedily on each agent's own :math:`Q_i`;
2. one Adam step on the sum over agents of the mean over transitions of

   .. math:: \bigl(Q_i(o_i, a_i) - [r + \max_b Q_i(o_i', b)]\bigr)^2

   (no bootstrap at the end of an episode).

A teammate's exploration enters every agent's targets as noise in its own action values, which is
what makes independent learners prefer actions that are safe against any partner (relative
overgeneralization, the chapter's climbing game).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from typing import Any

from labkit.deep.team_learner import TeamLearner, bootstrap, mlp_init


class IndependentQ(TeamLearner):
    """Two independent deep Q-learners on a `TeamGame` (see the module docstring).

    Parameters
    ----------
    game : TeamGame or str
        "climbing game" or "messenger game".
    config : TeamConfig, optional
    seed : int

    References
    ----------
    C. Claus and C. Boutilier (1998), "The dynamics of reinforcement learning in cooperative
    multiagent systems", AAAI.

    Examples
    --------
    >>> from labkit import deep
    >>> learner = deep.IndependentQ("climbing game", deep.TeamConfig(episodes=8), seed=0)
    >>> _ = learner.run(30)
    >>> [a.tolist() for a in learner.greedy_actions()] in ([[0], [0]], [[1], [1]], [[1], [2]], [[2], [2]],
    ...                                                     [[2], [1]], [[0], [2]], [[2], [0]], [[1], [0]], [[0], [1]])
    True
    """

    def _init_params(self, key: Any) -> Any:
        keys = jax.random.split(key, 2)
        A, hidden = self.game.num_actions, self.config.hidden
        return {"agents": [mlp_init(keys[i], [n, *hidden, A]) for i, n in enumerate(self.game.num_observations)]}

    def _tables(self, params: Any) -> Any:
        return [self.utility_q(params, i) for i in range(2)]

    def _loss(self, params: Any, batch: Any) -> Any:
        total: Any = 0.0
        for i in range(2):
            Q = self.utility_q(params, i)
            chosen = Q[self.observation[i, batch["state"]], batch["actions"][:, i]]
            best_next = jax.lax.stop_gradient(Q.max(axis=1))[self.observation[i]]        # per state
            target = batch["reward"] + bootstrap(batch["next"], best_next)
            total = total + jnp.mean((chosen - target) ** 2)
        return total
