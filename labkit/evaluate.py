"""Exact evaluation of a joint policy on a `GameTree`: reach probabilities, values,
counterfactual values, best responses, NashConv and exploitability.

Everything is a vectorized pass over the tree's depth levels (top-down for reach,
bottom-up for values) or over a player's sequences (best response), never a recursion.

Notation (Zinkevich et al., 2007): pi_i(h) is player i's own contribution to the probability
of reaching history h, pi_c(h) chance's, pi_{-i}(h) everyone's but i's (chance included).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from labkit.policy import TabularPolicy


def policy_array(game, policy):
    """The (num_infosets, num_actions) probability array of `policy` (a TabularPolicy or an array)."""
    if isinstance(policy, TabularPolicy):
        if policy.game is not game and policy.probs.shape != game.legal_mask.shape:
            raise ValueError(f"the policy belongs to {policy.game.name}, not to {game.name}")
        return policy.probs
    probs = np.asarray(policy, dtype=float)
    if probs.shape != game.legal_mask.shape:
        raise ValueError(f"policy array has shape {probs.shape}; expected {game.legal_mask.shape} "
                         "(num_infosets, num_actions). Pass a joint policy covering every player.")
    return probs


def edge_probabilities(game, probs):
    """(H,) probability of the move into each history (chance or the acting player's; 1 at the root)."""
    prob = game.chance_prob.copy()
    e = game.decision_edges
    prob[e] = probs.reshape(-1)[game.edge_seq[e]]
    return prob


def reach_probabilities(game, policy):
    """Reach contributions, shape (n + 1, H): row i is pi_i(h) for player i, row n is chance's pi_c(h).

    The probability of reaching h is the product of the rows; pi_{-i}(h) is the product of
    every row but i.
    """
    return _reach(game, edge_probabilities(game, policy_array(game, policy)))


def _reach(game, prob):
    n, H = game.num_players, game.num_histories
    F = np.ones((n + 1, H))
    F[game.edge_owner, np.arange(H)] = prob
    parent = game.parent
    for lv in game.levels[1:]:
        F[:, lv] *= F[:, parent[lv]]
    return F


def _values(game, prob):
    """(H, n): every player's expected return from each history onward."""
    V = game.returns.copy()
    for internal, first_child, nxt in reversed(game.child_blocks):
        V[internal] = np.add.reduceat(prob[nxt, None] * V[nxt], first_child, axis=0)
    return V


def history_values(game, policy):
    """(H, n) expected return of every player from each history when all follow `policy`."""
    return _values(game, edge_probabilities(game, policy_array(game, policy)))


def expected_payoffs(game, policy):
    """(n,) expected return of each player when everyone follows `policy`: sum_z pi(z) u(z)."""
    probs = policy_array(game, policy)
    F = _reach(game, edge_probabilities(game, probs))
    z = game.terminals
    return F[:, z].prod(axis=0) @ game.returns[z]


def _others_reach(F, player):
    """pi_{-i}: the product of every row of F except `player`'s."""
    return np.prod(np.delete(F, player, axis=0), axis=0)


def counterfactual_values(game, policy):
    """(I, A) counterfactual action values for the player acting at each infoset:

        q(I, a) = sum_{h in I} pi_{-i}(h) v_i(h a),

    where v_i(h a) is player i's expected return after playing a at h. Zero on illegal actions.
    The counterfactual value of I itself is sum_a pi(a | I) q(I, a).
    """
    probs = policy_array(game, policy)
    q, _, _ = _cf_values(game, probs, edge_probabilities(game, probs))
    return q


def _cf_values(game, probs, prob):
    """Counterfactual action values, reach rows F and values V in one forward/backward pass."""
    F = _reach(game, prob)
    V = _values(game, prob)
    e = game.decision_edges
    owner = game.edge_owner[e]
    par = game.parent[e]
    weight = np.empty(len(e))
    for p in range(game.num_players):
        mine = owner == p
        weight[mine] = _others_reach(F[:, par[mine]], p) * V[e[mine], p]
    q = np.bincount(game.edge_seq[e], weights=weight, minlength=probs.size).reshape(probs.shape)
    return q, F, V


class BestResponse(NamedTuple):
    """value: the best responder's expected return; policy: the joint policy with the player's
    infosets replaced by the best response (pure); action_values: (I, A) counterfactual values
    under the best response below (the player's rows only)."""
    value: float
    policy: TabularPolicy
    action_values: np.ndarray


def _player_structure(game, player):
    cache = game.__dict__.setdefault("_br_cache", {})
    if player not in cache:
        mine = game.infoset_player == player
        levels = []
        for d in range(int(game.infoset_own_depth.max(initial=0)), -1, -1):
            idx = np.flatnonzero(mine & (game.infoset_own_depth == d))
            if len(idx):
                levels.append((idx, game.infoset_parent_seq[idx]))
        cache[player] = (game.own_last_seq[game.terminals, player] + 1, levels)
    return cache[player]


def _best_response_tables(game, F, player):
    """Best-response counterfactual values of `player` by one bottom-up pass over its sequences.

    q(I, a) = sum of pi_{-i}(z) u_i(z) over terminals z whose last own sequence is (I, a),
            + sum over the player's next infosets J after (I, a) of max_b q(J, b).
    Returns (value at the root, q).
    """
    A = game.num_actions
    last_seq, levels = _player_structure(game, player)
    z = game.terminals
    base = np.bincount(last_seq, weights=_others_reach(F[:, z], player) * game.returns[z, player],
                       minlength=game.num_infosets * A + 1)
    root, q = base[0], base[1:].reshape(game.num_infosets, A)
    qflat = q.reshape(-1)
    masked = np.where(game.legal_mask, 0.0, -np.inf)
    for idx, parent_seq in levels:
        best = (q[idx] + masked[idx]).max(axis=1)
        inner = parent_seq >= 0
        np.add.at(qflat, parent_seq[inner], best[inner])
        root += best[~inner].sum()
    return root, q


def best_response(game, policy, player) -> BestResponse:
    """An exact best response of `player` to the other players' parts of `policy` (n players).

    Ties are broken toward the lowest action id. Infosets the others never reach get the
    lowest legal action with the largest value (all values are 0 there).
    """
    game.check_player(player)
    probs = policy_array(game, policy)
    F = _reach(game, edge_probabilities(game, probs))
    value, q = _best_response_tables(game, F, player)
    mine = game.infosets_of(player)
    masked = np.where(game.legal_mask, q, -np.inf)
    br = probs.copy()
    br[mine] = 0.0
    br[mine, masked[mine].argmax(axis=1)] = 1.0
    action_values = np.where(game.infoset_player[:, None] == player, q, 0.0)
    return BestResponse(float(value), TabularPolicy(game, br, check=False), action_values)


def best_response_values(game, policy):
    """(n,) the value each player would get by best-responding to the others."""
    probs = policy_array(game, policy)
    F = _reach(game, edge_probabilities(game, probs))
    return np.array([_best_response_tables(game, F, p)[0] for p in range(game.num_players)])


def nash_conv(game, policy) -> float:
    """NashConv(pi) = sum_i ( max_{pi'_i} v_i(pi'_i, pi_{-i}) - v_i(pi) ) >= 0, zero exactly at a Nash equilibrium."""
    probs = policy_array(game, policy)
    F = _reach(game, edge_probabilities(game, probs))
    z = game.terminals
    on_policy = F[:, z].prod(axis=0) @ game.returns[z]
    gains = [_best_response_tables(game, F, p)[0] - on_policy[p] for p in range(game.num_players)]
    return float(sum(gains))


def exploitability(game, policy) -> float:
    """NashConv divided by the number of players (OpenSpiel's `exploitability`).

    In a two-player zero-sum game this is the average of what the two best responses win.
    """
    return nash_conv(game, policy) / game.num_players
