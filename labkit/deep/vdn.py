r"""Value decomposition networks (Sunehag et al., 2018, "Value-decomposition networks for cooperative
multi-agent learning based on team reward", AAMAS).

The team's action value is the sum of per-agent utilities,
:math:`Q_{tot}(s, a) = Q_1(o_1, a_1) + Q_2(o_2, a_2)`, trained end to end by Q-learning on the team
reward; since a sum is maximized term by term, each agent's greedy action on its own :math:`Q_i` is
the greedy joint action of :math:`Q_{tot}`. One iteration:

1. play `episodes` episodes epsilon-greedily on each :math:`Q_i`;
2. one Adam step on the mean over transitions of

   .. math:: \bigl(Q_1(o_1, a_1) + Q_2(o_2, a_2) - [r + \max_b Q_1(o_1', b) + \max_b Q_2(o_2', b)]\bigr)^2.

A sum cannot represent a payoff in which one agent's best action depends on the other's (the
climbing game): the least-squares compromise moves the greedy joint action away from the optimum.
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from labkit.deep.iql import IndependentQ
from labkit.deep.team_learner import bootstrap


class VDN(IndependentQ):
    """VDN on a `TeamGame`: the same per-agent networks as `IndependentQ`, trained through their sum.

    Parameters
    ----------
    game : TeamGame or str
    config : TeamConfig, optional
    seed : int

    References
    ----------
    P. Sunehag et al. (2018), "Value-decomposition networks for cooperative multi-agent learning
    based on team reward", AAMAS.

    Examples
    --------
    >>> from labkit import deep
    >>> learner = deep.VDN("climbing game", deep.TeamConfig(episodes=8), seed=0)
    >>> _ = learner.run(30)
    >>> q_tot = learner.joint_values()
    >>> bool((q_tot.argmax() // 3, q_tot.argmax() % 3) == tuple(int(a[0]) for a in learner.greedy_actions()))
    True
    """

    def _loss(self, params: Any, batch: Any) -> Any:
        chosen, best_next = 0.0, 0.0
        for i in range(2):
            Q = self.utility_q(params, i)
            chosen = chosen + Q[self.observation[i, batch["state"]], batch["actions"][:, i]]
            best_next = best_next + jax.lax.stop_gradient(Q.max(axis=1))[self.observation[i]]
        target = batch["reward"] + bootstrap(batch["next"], best_next)
        return jnp.mean((chosen - target) ** 2)

    def joint_values(self, state: int = 0) -> np.ndarray:
        r"""The learned :math:`Q_{tot}(s, a_1, a_2) = Q_1(o_1(s), a_1) + Q_2(o_2(s), a_2)` at one state.

        Parameters
        ----------
        state : int
            In 0..num_states - 1.

        Returns
        -------
        (A, A) float array

        Raises
        ------
        ValueError
            For a state that is not the game's.

        Examples
        --------
        >>> from labkit import deep
        >>> deep.VDN("messenger game", seed=0).joint_values(state=3).shape
        (3, 3)
        """
        _check_state(self.game, state)
        q1, q2 = self.tables()
        return q1[self.game.observation[0, state]][:, None] + q2[self.game.observation[1, state]][None, :]


def _check_state(game: Any, state: Any) -> int:
    if isinstance(state, (bool, np.bool_)) or not isinstance(state, (int, np.integer)) \
            or not 0 <= state < game.num_states:
        raise ValueError(f"state must be an integer in 0..{game.num_states - 1}, got {state!r}")
    return int(state)
