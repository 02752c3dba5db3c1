"""Compiled (numba) CFR iterations: `labkit.cfr.CFR._update` as loops over the same arrays.

Imported only by the numba backend (`labkit.kernels`). Each loop performs the floating-point
operations of the numpy version in the same order (numpy sums a row of 2 or 3 numbers left to
right, `np.bincount` adds in index order starting from 0.0, a product of the others' reach is
taken left to right), so the regrets, policy sums and policies are bit for bit those of the
numpy backend (tests/test_kernels.py). Array names follow `labkit.cfr`: rows are infosets in
the `SequenceTree`'s internal order, "ext" indices count the empty sequence as 0; update u is
player u's (alternating updates) or, for u = n, every player's at once.

What the kernel leaves out, with an alternating update of player i, is what cannot change:
the numpy version computes values and regret matching at every row and then masks the other
players' rows, whose regrets, tie bounds and sums receive exact zeros (and RM+ and regret
matching of unchanged rows give the same numbers again). Likewise the own reach x(I, a) of a
row only changes when its player's policy does, so after the first update of a call only the
rows of the previous update are recomputed.

Layout. The game's index arrays are one int32 array and its constants one float64 array, each a
header of offsets followed by its parts (`pack`, in the order of INDEX_PARTS and FLOAT_PARTS),
so a call passes nine arguments instead of thirty: numba's dispatch costs about 0.1 us per
argument, as much as a whole Kuhn poker iteration. The terms of each update come sorted by the
entry they add to, in runs summed in a register from 0.0 (the order of `np.bincount`); the
decision-history terms of the others' reach pi_{-i}(I) are in the order in which the regret
update visits the rows, one run per row, so the tie bound is formed where it is used.
"""
from labkit._native import ALTERNATING, DISCOUNT, FLOAT_PARTS, INDEX_PARTS, RM_PLUS, pack  # noqa: F401
from labkit.kernels import njit
from labkit.regret import TIE_TOLERANCE


@njit(inline=True)
def _part(packed, k):
    return packed[packed[k]:packed[k + 1]]


@njit
def iterations(mode, schedule, sigma, regrets, policy_sum, scale, index, floats, work):
    """len(schedule) // 3 CFR iterations. schedule = (weights, positive, negative): iteration k's
    averaging weight and DCFR discount factors, computed by the caller in Python so that they are
    the numpy backend's numbers. work holds reach_ext, q_ext (I A + 1 each), v (I) and acc (I A + 1)."""
    I, A = sigma.shape
    S = I * A + 1
    parent_ext, term_start, term_target = _part(index, 0), _part(index, 1), _part(index, 2)
    term_off, term_others, dec_start, dec_off = _part(index, 3), _part(index, 4), _part(index, 5), _part(index, 6)
    dec_others, rows, row_level_flat = _part(index, 7), _part(index, 8), _part(index, 9)
    term_payoff, dec_chance, payoff_bound = _part(floats, 0), _part(floats, 1), _part(floats, 2)
    legal, uniform = _part(floats, 3).reshape(I, A), _part(floats, 4).reshape(I, A)
    reach_ext, q_ext, v, acc = work[:S], work[S:2 * S], work[2 * S:2 * S + I], work[2 * S + I:3 * S + I]
    n = len(term_off) - 2
    depths = len(row_level_flat) // (n + 1) - 1
    row_level = row_level_flat.reshape(n + 1, depths + 1)
    W = n - 1                                      # others per term
    alternating = (mode & ALTERNATING) != 0
    count = len(schedule) // 3
    previous = n                                   # the first update computes every row's reach
    for k in range(count):
        weight, positive, negative = schedule[k], schedule[count + k], schedule[2 * count + k]
        first, last = (0, n) if alternating else (n, n + 1)
        for u in range(first, last):
            _update(u, previous, n, W, depths, weight, positive, negative, mode, sigma, regrets, policy_sum,
                    scale, parent_ext, term_start, term_target, term_off, term_others, dec_start, dec_off,
                    dec_others, rows, row_level, term_payoff, dec_chance, payoff_bound, legal, uniform,
                    reach_ext, q_ext, v, acc)
            previous = u


@njit
def _update(u, previous, n, W, depths, weight, positive, negative, mode, sigma, regrets, policy_sum, scale,
            parent_ext, term_start, term_target, term_off, term_others, dec_start, dec_off, dec_others, rows,
            row_level, term_payoff, dec_chance, payoff_bound, legal, uniform, reach_ext, q_ext, v, acc):
    """Update u: steps 2-5 of `labkit.cfr` at update u's rows, then their regret matching."""
    I, A = sigma.shape
    # 2. own reach x(I, a) = x(parent sequence) sigma(I, a) (x(empty) = 1: an exact product), in
    # own-depth order, at the rows whose policy changed in the previous update
    for k in range(row_level[previous, 0], row_level[previous, depths]):
        r = rows[k]
        parent = reach_ext[parent_ext[r]]
        for a in range(A):
            reach_ext[1 + r * A + a] = sigma[r, a] * parent
    # 3. every terminal adds pi_{-i}(z) u_i(z) to its player's last sequence (np.bincount), a run
    # of terms adding to one sequence at a time, summed from 0.0 in np.bincount's order
    q_ext[:] = 0.0
    if W == 1:                                     # two players: one other reach per term
        for g in range(term_off[u], term_off[u + 1]):
            total = 0.0
            for e in range(term_start[g], term_start[g + 1]):
                total += reach_ext[term_others[e]] * term_payoff[e]
            q_ext[term_target[g]] = total
    else:
        for g in range(term_off[u], term_off[u + 1]):
            total = 0.0
            for e in range(term_start[g], term_start[g + 1]):
                # the product of the others' reach, left to right (1.0 in a one-player game)
                w = reach_ext[term_others[e * W]] if W else 1.0
                for j in range(1, W):
                    w *= reach_ext[term_others[e * W + j]]
                total += w * term_payoff[e]
            q_ext[term_target[g]] = total
    # bottom-up, a level at a time: v(I) = sum_a sigma(I, a) q(I, a), then added to the parent
    # sequence of I as one sum per parent (np.bincount of the level, added to the level above)
    for d in range(depths - 1, -1, -1):
        lo, hi = row_level[u, d], row_level[u, d + 1]
        for k in range(lo, hi):
            r = rows[k]
            total = sigma[r, 0] * q_ext[1 + r * A]
            for a in range(1, A):
                total += sigma[r, a] * q_ext[1 + r * A + a]
            v[r] = total
        if d > 0:
            for k in range(lo, hi):
                acc[parent_ext[rows[k]]] += v[rows[k]]
            for k in range(lo, hi):
                p = parent_ext[rows[k]]
                q_ext[p] += acc[p]          # a second child of the same parent adds acc = 0.0
                acc[p] = 0.0
    # 4-5. the others' and chance's reach pi_{-i}(I) (its run of decision histories, np.bincount's
    # sum), regrets (exact ties to exact zeros), tie bounds, average policy; then RM+, DCFR's
    # discount, and regret matching of the updated rows
    rm_plus, discount = (mode & RM_PLUS) != 0, (mode & DISCOUNT) != 0
    plain_average = u == n and weight == 1.0
    most = positive if positive >= negative else negative
    g = dec_off[u]
    for k in range(row_level[u, 0], row_level[u, depths]):
        r = rows[k]
        others = 0.0
        if W == 1:
            for e in range(dec_start[g], dec_start[g + 1]):
                others += reach_ext[dec_others[e]] * dec_chance[e]
        else:
            for e in range(dec_start[g], dec_start[g + 1]):
                w = reach_ext[dec_others[e * W]] if W else 1.0
                for j in range(1, W):
                    w *= reach_ext[dec_others[e * W + j]]
                others += w * dec_chance[e]
        g += 1
        bound = others * payoff_bound[r]
        tie = TIE_TOLERANCE * bound
        value = v[r]
        base = 1 + r * A
        scale[r, 0] += bound
        threshold = TIE_TOLERANCE * scale[r, 0]
        for a in range(A):
            instant = (q_ext[base + a] - value) * legal[r, a]
            if abs(instant) <= tie:
                instant = 0.0
            regret = regrets[r, a] + instant
            if rm_plus and regret <= threshold:
                regret = 0.0
            regrets[r, a] = regret
            x = reach_ext[base + a]
            if plain_average:
                policy_sum[r, a] += x
            else:
                policy_sum[r, a] += x * (weight * legal[r, a])
        if discount and u < n:                           # DCFR discounts after alternating updates
            for a in range(A):
                regrets[r, a] *= positive if regrets[r, a] >= 0.0 else negative
            scale[r, 0] *= most
            threshold = TIE_TOLERANCE * scale[r, 0]
        # 1. regret matching, uniform where no regret is positive
        total = 0.0
        for a in range(A):
            p = regrets[r, a] if regrets[r, a] > threshold else 0.0
            p *= legal[r, a]
            sigma[r, a] = p                              # kept where total > 0
            total = p if a == 0 else total + p
        for a in range(A):
            sigma[r, a] = sigma[r, a] / total if total > 0.0 else uniform[r, a]
