r"""QMIX (Rashid et al., 2018, "QMIX: monotonic value function factorisation for deep multi-agent
reinforcement learning", ICML).

The team's action value mixes the agents' utilities with a network whose weights are made from the
state s by hypernetworks and forced non-negative, so :math:`Q_{tot}` is monotonic in every
:math:`Q_i`:

.. math::

   h &= \mathrm{elu}\bigl(W_1(s)^\top [Q_1(o_1, a_1), Q_2(o_2, a_2)] + b_1(s)\bigr), \qquad
   Q_{tot}(s, a) = W_2(s)^\top h + V(s), \\
   W_1(s) &= |H_1 s|, \quad W_2(s) = |H_2 s|, \quad b_1(s) = B_1 s, \quad V(s) = \text{a small MLP of } s.

Monotonicity makes each agent's greedy action on its own :math:`Q_i` the greedy joint action of
:math:`Q_{tot}`. One iteration:

1. play `episodes` episodes epsilon-greedily on each :math:`Q_i`;
2. one Adam step on the mean over transitions of

   .. math:: \bigl(Q_{tot}(s, a) - [r + Q_{tot}(s', \arg\max_b Q_1(o_1', b), \arg\max_b Q_2(o_2', b))]\bigr)^2.

A monotonic mixer cannot represent a payoff whose rows (or columns) change order from one column
to another, as the climbing game's do (exercise 27.7), so its greedy joint action can miss the optimum.
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from labkit.deep.iql import IndependentQ
from labkit.deep.vdn import _check_state
from labkit.deep.team_learner import bootstrap, mlp, mlp_init


class QMIX(IndependentQ):
    """QMIX on a `TeamGame`, with hypernetworks conditioned on the (one-hot) state.

    Parameters
    ----------
    game : TeamGame or str
    config : TeamConfig, optional
        Its ``mixing_embed`` is the mixer's width.
    seed : int

    References
    ----------
    T. Rashid, M. Samvelyan, C. Schroeder de Witt, G. Farquhar, J. Foerster and S. Whiteson (2018),
    "QMIX: monotonic value function factorisation for deep multi-agent reinforcement learning", ICML.

    Examples
    --------
    >>> from labkit import deep
    >>> learner = deep.QMIX("climbing game", deep.TeamConfig(episodes=8), seed=0)
    >>> _ = learner.run(30)
    >>> q_tot = learner.joint_values()
    >>> bool((q_tot.argmax() // 3, q_tot.argmax() % 3) == tuple(int(a[0]) for a in learner.greedy_actions()))
    True
    """

    def _init_params(self, key: Any) -> Any:
        params = super()._init_params(key)
        S, E = self.game.num_states, self.config.mixing_embed
        k = jax.random.split(jax.random.fold_in(key, 1), 4)
        params["mixer"] = {"w1": mlp_init(k[0], [S, 2 * E], 1.0), "b1": mlp_init(k[1], [S, E], 1.0),
                           "w2": mlp_init(k[2], [S, E], 1.0), "v": mlp_init(k[3], [S, E, 1], 1.0)}
        return params

    def mix(self, params: Any, states: Any, utilities: Any) -> Any:
        r""":math:`Q_{tot}` at the given states from the agents' utilities (module docstring).

        Parameters
        ----------
        params : dict
            The learner's parameters.
        states : (N,) int array
        utilities : (N, 2) array
            :math:`Q_1, Q_2` of the chosen actions.

        Returns
        -------
        (N,) jax array

        Examples
        --------
        >>> import jax.numpy as jnp
        >>> from labkit import deep
        >>> learner = deep.QMIX("climbing game", deep.TeamConfig(episodes=8), seed=0)
        >>> low, high = learner.mix(learner.params, jnp.zeros(2, int), jnp.array([[0.0, 0.0], [1.0, 1.0]]))
        >>> bool(high >= low)                                  # monotonic in every utility
        True
        """
        m, E = params["mixer"], self.config.mixing_embed
        s = self.state_inputs[states]
        w1 = jnp.abs(mlp(m["w1"], s)).reshape(-1, 2, E)
        hidden = jax.nn.elu(jnp.einsum("ni,nie->ne", utilities, w1) + mlp(m["b1"], s))
        w2 = jnp.abs(mlp(m["w2"], s))
        return jnp.sum(hidden * w2, axis=1) + mlp(m["v"], s)[:, 0]

    def _loss(self, params: Any, batch: Any) -> Any:
        chosen, best_next = [], []
        for i in range(2):
            Q = self.utility_q(params, i)
            chosen.append(Q[self.observation[i, batch["state"]], batch["actions"][:, i]])
            best_next.append(jax.lax.stop_gradient(Q.max(axis=1))[self.observation[i]])      # per state
        q_tot = self.mix(params, batch["state"], jnp.stack(chosen, axis=1))
        states = jnp.arange(self.game.num_states)
        next_value = jax.lax.stop_gradient(self.mix(params, states, jnp.stack(best_next, axis=1)))
        target = batch["reward"] + bootstrap(batch["next"], next_value)
        return jnp.mean((q_tot - target) ** 2)

    def joint_values(self, state: int = 0) -> np.ndarray:
        r"""The learned :math:`Q_{tot}(s, a_1, a_2)` at one state (the mixer applied to every pair).

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
        >>> deep.QMIX("climbing game", seed=0).joint_values().shape
        (3, 3)
        """
        _check_state(self.game, state)
        q1, q2 = self.tables()
        A = self.game.num_actions
        u1 = q1[self.game.observation[0, state]]
        u2 = q2[self.game.observation[1, state]]
        pairs = np.stack(np.meshgrid(u1, u2, indexing="ij"), axis=-1).reshape(-1, 2)
        values = self.mix(self.params, jnp.full(A * A, state), jnp.asarray(pairs, dtype=jnp.float32))
        return np.asarray(values, dtype=np.float64).reshape(A, A)
