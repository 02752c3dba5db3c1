"""Compiled (numba) best-response passes for NashConv: `labkit.evaluate._nash_conv` as loops.

Imported only by the numba backend (`labkit.kernels`), on the first evaluation. One call computes,
for a policy (probs, game infoset order),

1. the realization weight x_i(I, a) of every sequence (`labkit.policy.infoset_own_reach`, then
   x = reach(I) probs(I, a));
2. every terminal's reach product pi(z) = x_0(z) x_1(z) ... pi_c(z), left to right as numpy's
   ``R.prod(axis=0)``;
3. each player's best-response value: the terminals' pi_{-i}(z) u_i(z) summed per last sequence
   (``np.bincount``: in terminal order, from 0.0), then a pass over the player's own depths,
   deepest first, adding each infoset's largest legal value to the sequence that leads to it
   (``np.maximum.reduceat`` and ``np.add.at``, in the same order).

The on-policy values sum_z pi(z) u_i(z) are left to the caller, which takes them with numpy's
``returns @ pi`` as the numpy backend does (a BLAS product, whose summation order a loop cannot
promise to repeat), so NashConv comes out bit for bit as with numpy (tests/test_kernels.py).

All index arrays of a game are one int64 array (`labkit._nash_conv_native.pack`): a header of
offsets, then the parts in the order of PARTS, then the floats; a call passes three arrays (the
policy, that one, and working memory), since numba's dispatch costs about as much per argument
as a Kuhn poker evaluation itself. Where it gives numpy's bits, the C extension of
`labkit._nash_conv_native` runs these same loops, and the on-policy values, in one call.
"""
import numpy as np

from labkit._nash_conv_native import PARTS, pack  # noqa: F401  (the layout; numba-free for the C plan)
from labkit.kernels import njit


@njit(inline=True)
def _part(index, k):
    return index[index[2 + k]:index[3 + k]]


@njit
def best_response_values(probs, index, out):
    """Into out[:Z] the reach product pi(z) of every terminal, into out[Z:Z + n] each player's
    best-response value (the rest of out, I + 2 (I A + 1) entries, is working memory).

    The floats at the end of `index` are pi_c(z) over the terminals (Z,), then for every player's
    terms (terminals sorted by the player's last sequence, stably) their pi_c(z) and their u_i(z)."""
    I, A = probs.shape
    n, Z = index[0], index[1]
    own_infoset, own_parent_infoset, own_parent_seq = _part(index, 0), _part(index, 1), _part(index, 2)
    last_seq, player_levels, levels = _part(index, 3), _part(index, 4), _part(index, 5)
    slots, infoset_start, infoset_parent = _part(index, 6), _part(index, 7), _part(index, 8)
    player_runs, run_slot, run_end, term_others = _part(index, 9), _part(index, 10), _part(index, 11), \
        _part(index, 12)
    E = run_end[len(run_end) - 1] if len(run_end) else 0
    floats = index[index[2 + len(PARTS)]:].view(np.float64)
    chance, term_chance, term_payoff = floats[:Z], floats[Z:Z + E], floats[Z + E:Z + 2 * E]
    # 1. own reach of every infoset (one product each, parents first), then the sequences' weights
    reach = out[Z + n:Z + n + I]
    reach[:] = 1.0
    for k in range(len(own_infoset)):
        parent = own_parent_infoset[k]
        reach[own_infoset[k]] = reach[parent] * probs[parent, own_parent_seq[k] - parent * A]
    S = I * A + 1
    x = out[Z + n + I:Z + n + I + S]
    x[0] = 1.0
    for i in range(I):
        for a in range(A):
            x[1 + i * A + a] = reach[i] * probs[i, a]
    # 2. pi(z) = x_0 x_1 ... x_{n-1} pi_c, left to right
    prod = out[:Z]
    for z in range(Z):
        w = x[last_seq[z]]
        for p in range(1, n):
            w *= x[last_seq[p * Z + z]]
        prod[z] = w * chance[z]
    # 3. best responses
    values = out[Z:Z + n]
    total = out[Z + n + I + S:Z + n + I + 2 * S]
    total[:] = 0.0
    W = n - 1
    for p in range(n):
        # the terminals' pi_{-p}(z) u_p(z) summed per last sequence of p, a run of terms at a time
        # (np.bincount's order: terminal order, from 0.0); pi_{-p} is the other players' weights,
        # then chance's, left to right (as _others_reach)
        start = run_end[player_runs[p] - 1] if player_runs[p] > 0 else 0
        for g in range(player_runs[p], player_runs[p + 1]):
            acc = 0.0
            for e in range(start, run_end[g]):
                if W == 0:
                    w = term_chance[e]
                else:
                    w = x[term_others[e * W]]
                    for j in range(1, W):
                        w *= x[term_others[e * W + j]]
                    w *= term_chance[e]
                acc += w * term_payoff[e]
            total[run_slot[g]] = acc
            start = run_end[g]
        # own depths, deepest first: each infoset's largest legal value, added to its parent sequence
        for level in range(player_levels[p], player_levels[p + 1]):
            for k in range(levels[2 * level], levels[2 * level + 1]):
                best = total[slots[infoset_start[k]]]
                for s in range(infoset_start[k] + 1, infoset_start[k + 1]):
                    y = total[slots[s]]
                    if not (best >= y or best != best):      # np.maximum: keeps the first of equals, NaN wins
                        best = y
                total[infoset_parent[k]] += best
        values[p] = total[0]
        for g in range(player_runs[p], player_runs[p + 1]):      # clear for the next player
            total[run_slot[g]] = 0.0
        for level in range(player_levels[p], player_levels[p + 1]):
            for k in range(levels[2 * level], levels[2 * level + 1]):
                total[infoset_parent[k]] = 0.0
