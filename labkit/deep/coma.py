r"""COMA: counterfactual multi-agent policy gradients (Foerster et al., 2018, AAAI).

Decentralized actors :math:`\pi_i(a_i \mid o_i)` and one centralized critic :math:`Q(s, a_1, a_2)`
that sees the state and the joint action. Each actor follows the policy gradient with the
counterfactual advantage

.. math:: A_i(s, a) = Q(s, a) - \sum_b \pi_i(b \mid o_i)\, Q(s, (a_{-i}, b)),

which keeps the teammate's action fixed and averages only over one's own: the baseline removes
the teammate's part of the shared reward. One iteration:

1. play `episodes` episodes with the actors' stochastic policies (on-policy);
2. one Adam step on the critic's loss, the mean of
   :math:`(Q(s, a) - [r + \sum_{a'} \pi(a' \mid s') Q(s', a')])^2` (expected SARSA; the COMA
   paper uses TD(lambda)), and on the actors' loss, minus the mean of
   :math:`\sum_i [A_i(s, a) \log \pi_i(a_i \mid o_i) + \text{entropy} \cdot H(\pi_i(\cdot \mid o_i))]`.

The critic represents any joint action value (no factorization), and on the messenger game it
carries the value of agent 1's message and agent 2's answer, which the factorized learners lose.
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax

from labkit.deep.team_learner import TeamLearner, bootstrap, mlp, mlp_init


class COMA(TeamLearner):
    """COMA on a `TeamGame` (see the module docstring).

    Parameters
    ----------
    game : TeamGame or str
    config : TeamConfig, optional
        Its ``critic_learning_rate`` and ``entropy`` are COMA's.
    seed : int

    References
    ----------
    J. Foerster, G. Farquhar, T. Afouras, N. Nardelli and S. Whiteson (2018), "Counterfactual
    multi-agent policy gradients", AAAI.

    Examples
    --------
    >>> from labkit import deep
    >>> learner = deep.COMA("climbing game", deep.TeamConfig(episodes=8), seed=0)
    >>> _ = learner.run(20)
    >>> [bool(abs(t.sum(axis=1) - 1).max() < 1e-6) for t in learner.tables()]     # the actors' policies
    [True, True]
    """

    stochastic = True

    def _init_params(self, key: Any) -> Any:
        keys = jax.random.split(key, 3)
        A, hidden = self.game.num_actions, self.config.hidden
        return {"agents": [mlp_init(keys[i], [n, *hidden, A]) for i, n in enumerate(self.game.num_observations)],
                "critic": mlp_init(keys[2], [self.game.num_states, *hidden, A * A])}

    def _optimizer(self) -> Any:
        c = self.config

        def labels(params: Any) -> Any:
            return {"agents": jax.tree_util.tree_map(lambda _: "actor", params["agents"]),
                    "critic": jax.tree_util.tree_map(lambda _: "critic", params["critic"])}
        return optax.multi_transform({"actor": optax.adam(c.learning_rate),
                                      "critic": optax.adam(c.critic_learning_rate)}, labels)

    def _tables(self, params: Any) -> Any:
        return [jax.nn.softmax(self.utility_q(params, i), axis=1) for i in range(2)]

    def critic(self, params: Any) -> Any:
        """The centralized critic's joint action values Q(s, a_1, a_2).

        Parameters
        ----------
        params : dict
            The learner's parameters (`params`).

        Returns
        -------
        (S, A, A) jax array

        Examples
        --------
        >>> from labkit import deep
        >>> learner = deep.COMA("messenger game", seed=0)
        >>> learner.critic(learner.params).shape
        (8, 3, 3)
        """
        A = self.game.num_actions
        return mlp(params["critic"], self.state_inputs).reshape(-1, A, A)

    def _loss(self, params: Any, batch: Any) -> Any:
        Q = self.critic(params)
        s, a, nxt = batch["state"], batch["actions"], batch["next"]
        policies = [jax.lax.stop_gradient(p) for p in self._tables(params)]
        # V(s') = sum over joint actions of pi_1 pi_2 Q(s', .), per state
        p1, p2 = policies[0][self.observation[0]], policies[1][self.observation[1]]
        next_value = jax.lax.stop_gradient(jnp.einsum("sa,sb,sab->s", p1, p2, Q))
        target = batch["reward"] + bootstrap(nxt, next_value)
        chosen = Q[s, a[:, 0], a[:, 1]]
        critic_loss = jnp.mean((chosen - target) ** 2)
        Qs = jax.lax.stop_gradient(Q[s])                                   # (N, A, A)
        actor_loss: Any = 0.0
        for i in range(2):
            logits = self.utility_q(params, i)[self.observation[i, s]]
            logp = jax.nn.log_softmax(logits, axis=1)
            pi = jnp.exp(logp)
            own = jnp.take_along_axis(Qs, a[:, 1][:, None, None], axis=2)[:, :, 0] if i == 0 else \
                jnp.take_along_axis(Qs, a[:, 0][:, None, None], axis=1)[:, 0, :]       # Q(s, (a_-i, b)) over b
            baseline = jnp.sum(jax.lax.stop_gradient(pi) * own, axis=1)
            advantage = jnp.take_along_axis(own, a[:, i][:, None], axis=1)[:, 0] - baseline
            chosen_logp = jnp.take_along_axis(logp, a[:, i][:, None], axis=1)[:, 0]
            entropy = -jnp.sum(pi * logp, axis=1)
            actor_loss = actor_loss - jnp.mean(advantage * chosen_logp + self.config.entropy * entropy)
        return critic_loss + actor_loss
