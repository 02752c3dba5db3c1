"""Outcome sampling's estimates for one stream of random numbers, on any compiled game: the reference
of exercise 4.1 (sampled counterfactual values, Kuhn poker) and of Lab 15 (regret increments, Leduc).

One episode uses the numbers in order, one per chance or decision node on the sampled path, and
picks the first outcome whose cumulative probability exceeds the number: chance and the other
players by their probabilities, the updating player by s = eps * uniform + (1 - eps) * sigma.
Walking back from the terminal z, at the updating player's infoset I (history h, sampled a*):

    q~(I, a*) = pi_{-i}(h) / q(h) * u~(h a*) / s(a*),    q~(I, a) = 0 for a != a*,

with q(h) the probability that the sampling reached h and u~ the sampled value (u_i(z) times
sigma / s over the player's later moves). The regret increments are q~(I, a) - sum_b sigma(b) q~(I, b),
which is what labkit's `MCCFR.sampled_regrets` adds (the tests compare them).
"""
from __future__ import annotations

import functools

import numpy as np

CHANCE, TERMINAL = -1, -4


@functools.lru_cache(maxsize=None)
def _children(game):
    return (np.searchsorted(game.parent, np.arange(game.num_histories)),
            np.bincount(game.parent[1:], minlength=game.num_histories))


def pick(probs, u):
    """The first k whose cumulative probability exceeds u (the last one if rounding leaves a gap)."""
    return min(int(np.searchsorted(np.cumsum(probs), u, side="right")), len(probs) - 1)


def sampled_values(game, policy, player, uniforms, exploration, importance=True):
    """(I, A) sampled counterfactual action values of one outcome-sampling episode.

    With importance=False the importance weights are left out, as a student might: the sampled
    action's value is the sampled return itself, weighted by pi_{-i}(h) instead of pi_{-i}(h) / q(h).
    """
    first, count = _children(game)
    policy = np.asarray(policy, dtype=float)
    draw = iter(uniforms).__next__
    h, others, sampled, path = 0, 1.0, 1.0, []
    while game.player[h] != TERMINAL:
        if game.player[h] == CHANCE:
            probs = game.chance_prob[first[h]:first[h] + count[h]]
            k = pick(probs, draw())
            others, sampled = others * probs[k], sampled * probs[k]
        else:
            I = game.infoset[h]
            legal = game.legal_actions(I)
            sigma = policy[I, legal]
            if game.player[h] == player:
                s = exploration / len(sigma) + (1 - exploration) * sigma
                k = pick(s, draw())
                path.append((I, legal[k], sigma[k], s[k], others, sampled))
                sampled *= s[k]
            else:
                k = pick(sigma, draw())
                others, sampled = others * sigma[k], sampled * sigma[k]
        h = first[h] + k
    value = game.returns[h, player]
    q = np.zeros(game.legal_mask.shape)
    for I, a, sigma_a, s_a, reach, reached in reversed(path):
        action_value = value / s_a if importance else value
        q[I, a] = (reach / reached if importance else reach) * action_value
        value = sigma_a * action_value
    return q


def sampled_regrets(game, policy, player, uniforms, exploration, importance=True):
    """(I, A) regret increments of the same episode: q~(I, a) - sum_b sigma(I, b) q~(I, b) at the
    updating player's sampled infosets, 0 elsewhere."""
    q = sampled_values(game, policy, player, uniforms, exploration, importance)
    visited = np.zeros(len(q), dtype=bool)
    visited[np.flatnonzero(q.any(axis=1))] = True
    policy = np.asarray(policy, dtype=float)
    return (q - (policy * q).sum(axis=1, keepdims=True)) * game.legal_mask * visited[:, None]
