"""Compiled (numba) MCCFR episodes: the same walk as `labkit.mccfr`, line for line, over flat arrays.

Imported only by the numba backend (`labkit.kernels`). Every floating-point operation is the one
of the Python episode in `labkit.mccfr`, in the same order, so the regrets and policy sums come
out bit for bit equal for the same uniform numbers. The tables are flat: infoset I's legal
actions are the entries ``off[I]:off[I + 1]`` of the regret, policy-sum and policy arrays.

Random numbers come from a buffer filled by the caller (`labkit.mccfr`) with enough numbers for
the episodes of one call: a kernel that finds too few left returns -1 at once, and the caller
refills the buffer and calls again; otherwise it returns the number of histories visited
(MCCFR.nodes_touched).

Four arrays per call: numba's dispatch costs about 0.1 us per argument, more than a Kuhn poker
episode, so the game is one int64 array (`pack`: header TREE_HEADER, the parts of TREE_PARTS,
then the bits of its numbers: returns, chance probabilities, cumulative chance probabilities),
the uniform numbers one, and the solver's own memory two: ``memory`` (float64) = five tables of
T entries (regrets, policy sums, cached policies, and two scratch rows for
`MCCFR.sampled_regrets`), then the exploration, the path's reach probabilities and external
sampling's values; ``state`` (int64) = the buffer position, the call's settings (STATE_FIELDS),
each infoset's "policy is fresh" flag and the episode's path and frames.
"""
import numpy as np

from labkit.kernels import njit
from labkit.tree import CHANCE, TERMINAL


TREE_HEADER = ("num_histories", "num_players", "num_infosets", "path_length", "widest", "table_size")
TREE_PARTS = ("kind", "first_child", "num_children", "infoset", "depth", "off", "outcome_draws", "external_draws")
STATE_FIELDS = ("position", "rounds", "player", "invalidate", "scratch")     # then fresh, path, frames
POSITION, ROUNDS, PLAYER, INVALIDATE, SCRATCH = range(5)


def pack(header, parts, floats):
    """One int64 array: the header numbers, len(TREE_PARTS) + 1 offsets, the parts, then the bits
    of the float64 array `floats` (read back as floats by `_floats`)."""
    arrays = [np.asarray(parts[name], dtype=np.int64).reshape(-1) for name in TREE_PARTS]
    start = len(TREE_HEADER) + len(TREE_PARTS) + 1
    offsets = start + np.concatenate(([0], np.cumsum([len(a) for a in arrays])))
    return np.concatenate([[header[name] for name in TREE_HEADER], offsets] + arrays +
                          [np.ascontiguousarray(floats, dtype=np.float64).view(np.int64)]).astype(np.int64)


@njit(inline=True)
def _floats(tree):
    return tree[tree[len(TREE_HEADER) + len(TREE_PARTS)]:].view(np.float64)


@njit(inline=True)
def _part(tree, k):
    base = len(TREE_HEADER)
    return tree[tree[base + k]:tree[base + k + 1]]


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
def outcome_episodes(tree, memory, buf, state):
    """state[ROUNDS] times, one outcome-sampling episode for each player (or for state[PLAYER]
    only), in order: `labkit.mccfr.MCCFR._outcome_episode`. Returns the histories visited, or -1
    (and does nothing) if the buffer holds too few uniform numbers."""
    H, n, I, D, T = tree[0], tree[1], tree[2], tree[3], tree[5]
    floats = _floats(tree)
    kind, first_child, num_children = _part(tree, 0), _part(tree, 1), _part(tree, 2)
    infoset_of, depth, off, draws = _part(tree, 3), _part(tree, 4), _part(tree, 5), _part(tree, 6)
    returns = floats[:H * n].reshape(H, n)
    chance_prob, cumulative = floats[H * n:H * n + H], floats[H * n + H:H * n + 2 * H]
    rounds, only, invalidate = state[ROUNDS], state[PLAYER], state[INVALIDATE] != 0
    need = rounds * (draws[only] if only >= 0 else draws[n])
    if state[POSITION] + need > len(buf):
        return -1
    tables = memory[:5 * T].reshape(5, T)
    work = memory[5 * T:]
    regrets, sigma = tables[0], tables[2]
    regret_out, sums_out = (tables[3], tables[4]) if state[SCRATCH] else (tables[0], tables[1])
    fresh = state[5:5 + I]
    path_infoset, path_k = state[5 + I:5 + I + D], state[5 + I + D:5 + I + 2 * D]
    eps = work[0]
    path_reach = work[1:1 + 3 * D].reshape(D, 3)
    visited = 0
    for _ in range(rounds):
        for p in range(n) if only < 0 else range(only, only + 1):
            h = 0
            my_reach = 1.0
            opp_reach = 1.0
            sample_reach = 1.0
            m = 0
            while True:
                acting = kind[h]
                if acting == TERMINAL:
                    break
                u = buf[state[POSITION]]
                state[POSITION] += 1
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
                        path_infoset[m] = infoset
                        path_k[m] = k
                        path_reach[m, 0] = my_reach
                        path_reach[m, 1] = opp_reach
                        path_reach[m, 2] = sample_reach
                        m += 1
                        my_reach *= sigma[lo + k]
                        sample_reach *= mix + (1.0 - eps) * sigma[lo + k]
                    else:
                        k = _pick_from(sigma, lo, hi, u)
                        opp_reach *= sigma[lo + k]
                        sample_reach *= sigma[lo + k]
                h = first_child[h] + k
            visited += depth[h] + 1                     # the path from the root to the terminal h
            # walking back from z over the player's own nodes (the others pass the estimate up)
            value = returns[h, p]
            for j in range(m - 1, -1, -1):
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
    return visited


@njit
def external_episodes(tree, memory, buf, state):
    """state[ROUNDS] times, one external-sampling episode for each player (or for state[PLAYER]
    only), in order: `labkit.mccfr.MCCFR._external_episode`. Returns the histories visited, or -1
    (and does nothing) if the buffer holds too few uniform numbers.

    The Python version recurses (`value_of`); here the recursion is an explicit stack (numba
    cannot cache recursive functions), visiting the same histories in the same order. A frame is
    one of the update player's histories whose actions are being followed: frames[f] = (history,
    next action), the running value in values[f, -1] and the children's values in values[f, :-1].
    """
    H, n, I, D, widest, T = tree[0], tree[1], tree[2], tree[3], tree[4], tree[5]
    floats = _floats(tree)
    kind, first_child, num_children = _part(tree, 0), _part(tree, 1), _part(tree, 2)
    infoset_of, depth, off, draws = _part(tree, 3), _part(tree, 4), _part(tree, 5), _part(tree, 7)
    returns = floats[:H * n].reshape(H, n)
    cumulative = floats[H * n + H:H * n + 2 * H]
    rounds, only, invalidate = state[ROUNDS], state[PLAYER], state[INVALIDATE] != 0
    need = rounds * (draws[only] if only >= 0 else draws[n])
    if state[POSITION] + need > len(buf):
        return -1
    tables = memory[:5 * T].reshape(5, T)
    work = memory[5 * T:]
    regrets, sigma = tables[0], tables[2]
    regret_out, sums_out = (tables[3], tables[4]) if state[SCRATCH] else (tables[0], tables[1])
    fresh = state[5:5 + I]
    frames = state[5 + I + 2 * D:5 + I + 4 * D].reshape(D, 2)
    values = work[1 + 3 * D:1 + 3 * D + D * (widest + 1)].reshape(D, widest + 1)
    visited = 0
    for _ in range(rounds):
        for player in range(n) if only < 0 else range(only, only + 1):
            averaging_player = (player + 1) % n
            top = -1                    # index of the innermost frame
            h = 0
            while True:
                # from h, follow one sampled move at chance and the other players' nodes
                start = depth[h]
                acting = kind[h]
                while acting != player and acting != TERMINAL:
                    u = buf[state[POSITION]]
                    state[POSITION] += 1
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
                visited += depth[h] - start + 1
                if acting != TERMINAL:
                    # the update player: open a frame and follow its first action
                    _policy(infoset_of[h], off, regrets, sigma, fresh)
                    top += 1
                    frames[top, 0] = h
                    frames[top, 1] = 0
                    values[top, widest] = 0.0
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
                    values[top, widest] += sigma[lo + j] * v
                    j += 1
                    if j < hi - lo:
                        frames[top, 1] = j
                        break
                    value = values[top, widest]
                    for a in range(hi - lo):
                        regret_out[lo + a] += values[top, a] - value
                    if invalidate:
                        fresh[infoset] = False
                    v = value
                    top -= 1
                if top < 0:
                    break
                h = first_child[frames[top, 0]] + frames[top, 1]
    return visited
