"""Compiled (numba) MCCFR episodes: the same walk as `labkit.mccfr`, line for line, over flat arrays.

Imported only by the numba backend (`labkit.kernels`). Every floating-point operation is the one
of the Python episode in `labkit.mccfr`, in the same order, so the regrets and policy sums come
out bit for bit equal for the same uniform numbers. The tables are flat: infoset I's legal
actions are the entries ``off[I]:off[I + 1]`` of the regret, policy-sum and policy arrays.

Random numbers come from a buffer filled by the caller (`labkit.mccfr`) with enough numbers for
the episodes of one call; ``state[0]`` is the next unread position, ``state[1]`` counts the
histories visited (MCCFR.nodes_touched).
"""
import numpy as np

from labkit.kernels import njit
from labkit.tree import CHANCE, TERMINAL


@njit(inline=True)
def _policy(infoset, off, regrets, sigma, fresh):
    """Regret matching of infoset I's current regrets into sigma[off[I]:off[I+1]], cached
    until the regrets change (`labkit.mccfr._regret_matching`)."""
    lo, hi = off[infoset], off[infoset + 1]
    if not fresh[infoset]:
        total = 0.0
        for a in range(lo, hi):
            if regrets[a] > 0.0:
                total += regrets[a]
        if total > 0.0:
            for a in range(lo, hi):
                sigma[a] = regrets[a] / total if regrets[a] > 0.0 else 0.0
        else:
            for a in range(lo, hi):
                sigma[a] = 1.0 / (hi - lo)
        fresh[infoset] = True
    return lo, hi


@njit(inline=True)
def _pick_chance(cumulative, first, count, u):
    """`labkit.mccfr._pick` over the cumulative probabilities of a chance node's children."""
    for k in range(count):
        if u < cumulative[first + k]:
            return k
    return count - 1


@njit(inline=True)
def _pick_from(sigma, lo, hi, u):
    """`labkit.mccfr._pick_from`: never a zero-probability action."""
    total = 0.0
    last = 0
    for k in range(hi - lo):
        p = sigma[lo + k]
        if p > 0.0:
            total += p
            last = k
            if u < total:
                return k
    return last


@njit
def outcome_episodes(rounds, players, eps, kind, first_child, num_children, infoset_of, depth,
                     returns, chance_prob, cumulative, off, regrets, regret_out, sums_out, sigma, fresh,
                     invalidate, buf, state, path_infoset, path_k, path_reach):
    """`rounds` times, one outcome-sampling episode for each player in `players`, in order:
    `labkit.mccfr.MCCFR._outcome_episode`."""
    for _ in range(rounds):
        for p in players:
            h = 0
            my_reach = 1.0
            opp_reach = 1.0
            sample_reach = 1.0
            n = 0
            while True:
                acting = kind[h]
                if acting == TERMINAL:
                    break
                u = buf[state[0]]
                state[0] += 1
                if acting == CHANCE:
                    k = _pick_chance(cumulative, first_child[h], num_children[h], u)
                    c = chance_prob[first_child[h] + k]
                    opp_reach *= c
                    sample_reach *= c
                else:
                    infoset = infoset_of[h]
                    lo, hi = _policy(infoset, off, regrets, sigma, fresh)
                    if acting == p:
                        mix = eps / (hi - lo)
                        # the exploratory sampling policy s = eps * uniform + (1 - eps) * sigma
                        total = 0.0
                        k = 0
                        last = 0
                        found = False
                        for j in range(hi - lo):
                            s = mix + (1.0 - eps) * sigma[lo + j]
                            if s > 0.0:
                                total += s
                                last = j
                                if u < total:
                                    k = j
                                    found = True
                                    break
                        if not found:
                            k = last
                        path_infoset[n] = infoset
                        path_k[n] = k
                        path_reach[n, 0] = my_reach
                        path_reach[n, 1] = opp_reach
                        path_reach[n, 2] = sample_reach
                        n += 1
                        my_reach *= sigma[lo + k]
                        sample_reach *= mix + (1.0 - eps) * sigma[lo + k]
                    else:
                        k = _pick_from(sigma, lo, hi, u)
                        opp_reach *= sigma[lo + k]
                        sample_reach *= sigma[lo + k]
                h = first_child[h] + k
            state[1] += depth[h] + 1                    # the path from the root to the terminal h
            # walking back from z over the player's own nodes (the others pass the estimate up)
            value = returns[h, p]
            for j in range(n - 1, -1, -1):
                infoset = path_infoset[j]
                k = path_k[j]
                lo, hi = off[infoset], off[infoset + 1]
                mix = eps / (hi - lo)
                sampled_value = value / (mix + (1.0 - eps) * sigma[lo + k])    # u~(h a*) / s(a*)
                value = sigma[lo + k] * sampled_value                          # u~(h)
                weight = path_reach[j, 1] / path_reach[j, 2]                   # pi_{-i}(h) / q(h)
                for a in range(lo, hi):
                    regret_out[a] -= weight * value
                regret_out[lo + k] += weight * sampled_value
                scale = path_reach[j, 0] / path_reach[j, 2]
                for a in range(lo, hi):
                    sums_out[a] += scale * sigma[a]
                if invalidate:
                    fresh[infoset] = False


@njit
def external_episodes(rounds, players, kind, first_child, num_children, infoset_of, depth, returns,
                      cumulative, off, regrets, regret_out, sums_out, sigma, fresh, invalidate, buf, state,
                      values, frames):
    """`rounds` times, one external-sampling episode for each player in `players`, in order:
    `labkit.mccfr.MCCFR._external_episode`.

    The Python version recurses (`value_of`); here the recursion is an explicit stack (numba
    cannot cache recursive functions), visiting the same histories in the same order. A frame is
    one of the update player's histories whose actions are being followed: frames[f] = (history,
    next action), the running value in values[f, -1] and the children's values in values[f, :-1].
    """
    for _ in range(rounds):
        for player in players:
            averaging_player = (player + 1) % returns.shape[1]
            top = -1                    # index of the innermost frame
            h = 0
            while True:
                # from h, follow one sampled move at chance and the other players' nodes
                start = depth[h]
                acting = kind[h]
                while acting != player and acting != TERMINAL:
                    u = buf[state[0]]
                    state[0] += 1
                    if acting == CHANCE:
                        k = _pick_chance(cumulative, first_child[h], num_children[h], u)
                    else:
                        infoset = infoset_of[h]
                        lo, hi = _policy(infoset, off, regrets, sigma, fresh)
                        k = _pick_from(sigma, lo, hi, u)
                        if acting == averaging_player:
                            for a in range(lo, hi):
                                sums_out[a] += sigma[a]
                    h = first_child[h] + k
                    acting = kind[h]
                state[1] += depth[h] - start + 1
                if acting != TERMINAL:
                    # the update player: open a frame and follow its first action
                    _policy(infoset_of[h], off, regrets, sigma, fresh)
                    top += 1
                    frames[top, 0] = h
                    frames[top, 1] = 0
                    values[top, -1] = 0.0
                    h = first_child[h]
                    continue
                v = returns[h, player]
                # hand v to the innermost frame; close every frame whose actions are all done
                while top >= 0:
                    node = frames[top, 0]
                    j = frames[top, 1]
                    infoset = infoset_of[node]
                    lo, hi = off[infoset], off[infoset + 1]
                    values[top, j] = v
                    values[top, -1] += sigma[lo + j] * v
                    j += 1
                    if j < hi - lo:
                        frames[top, 1] = j
                        break
                    value = values[top, -1]
                    for a in range(hi - lo):
                        regret_out[lo + a] += values[top, a] - value
                    if invalidate:
                        fresh[infoset] = False
                    v = value
                    top -= 1
                if top < 0:
                    break
                h = first_child[frames[top, 0]] + frames[top, 1]
