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
matching of unchanged rows give the same numbers again).
"""
from labkit.kernels import njit
from labkit.regret import TIE_TOLERANCE


@njit
def _update(u, weight, discount, positive, negative, rm_plus, sigma, reach_ext, q_ext, v, others_reach, acc,
            parent_ext, level_start, term_start, term_target, term_off, term_others, term_payoff,
            dec_start, dec_target, dec_off, dec_others, dec_chance, rows, row_level, payoff_bound, legal, uniform,
            regrets, policy_sum, scale):
    """Update u: steps 2-5 of `labkit.cfr` at update u's rows, then their regret matching."""
    I, A = sigma.shape
    # 2. own reach x(I, a) = x(parent sequence) sigma(I, a), every row, in own-depth order
    for r in range(level_start[1]):
        for a in range(A):
            reach_ext[1 + r * A + a] = sigma[r, a]
    for r in range(level_start[1], I):
        parent = reach_ext[parent_ext[r]]
        for a in range(A):
            reach_ext[1 + r * A + a] = sigma[r, a] * parent
    # 3. every terminal adds pi_{-i}(z) u_i(z) to its player's last sequence (np.bincount)
    # (runs of terms adding to one sequence, each summed from 0.0 in np.bincount's order)
    q_ext[:] = 0.0
    for g in range(term_off[u], term_off[u + 1]):
        total = 0.0
        for e in range(term_start[g], term_start[g + 1]):
            # the product of the others' reach, left to right (1.0 in a one-player game)
            w = reach_ext[term_others[e, 0]] if term_others.shape[1] else 1.0
            for j in range(1, term_others.shape[1]):
                w *= reach_ext[term_others[e, j]]
            w *= term_payoff[e]
            total += w
        q_ext[term_target[g]] = total
    # bottom-up, a level at a time: v(I) = sum_a sigma(I, a) q(I, a), then added to the parent
    # sequence of I as one sum per parent (np.bincount of the level, added to the level above)
    depths = row_level.shape[1] - 1
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
    # the others' and chance's reach pi_{-i}(I) of the updated infosets
    for k in range(row_level[u, 0], row_level[u, depths]):
        others_reach[rows[k]] = 0.0
    for g in range(dec_off[u], dec_off[u + 1]):
        total = 0.0
        for e in range(dec_start[g], dec_start[g + 1]):
            w = reach_ext[dec_others[e, 0]] if dec_others.shape[1] else 1.0
            for j in range(1, dec_others.shape[1]):
                w *= reach_ext[dec_others[e, j]]
            w *= dec_chance[e]
            total += w
        others_reach[dec_target[g]] = total
    # 4-5. regrets (exact ties to exact zeros), tie bounds, average policy; then RM+, DCFR's
    # discount, and regret matching of the updated rows
    plain_average = u == row_level.shape[0] - 1 and weight == 1.0
    most = positive if positive >= negative else negative
    for k in range(row_level[u, 0], row_level[u, depths]):
        r = rows[k]
        bound = others_reach[r] * payoff_bound[r]
        for a in range(A):
            instant = (q_ext[1 + r * A + a] - v[r]) * legal[r, a]
            if abs(instant) <= TIE_TOLERANCE * bound:
                instant = 0.0
            regrets[r, a] += instant
        scale[r, 0] += bound
        for a in range(A):
            x = reach_ext[1 + r * A + a]
            if plain_average:
                policy_sum[r, a] += x
            else:
                policy_sum[r, a] += x * (weight * legal[r, a])
        threshold = TIE_TOLERANCE * scale[r, 0]
        if rm_plus:
            for a in range(A):
                if regrets[r, a] <= threshold:
                    regrets[r, a] = 0.0
        if discount and u < row_level.shape[0] - 1:     # DCFR discounts after alternating updates
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


@njit
def iterations(alternating, weights, positive, negative, discount, rm_plus, sigma, reach_ext, q_ext, v,
               others_reach, acc, parent_ext, level_start, term_start, term_target, term_off, term_others,
               term_payoff, dec_start, dec_target, dec_off, dec_others, dec_chance, rows, row_level, payoff_bound,
               legal, uniform, regrets, policy_sum, scale):
    """len(weights) CFR iterations: weights[k], positive[k], negative[k] are iteration k's
    averaging weight and DCFR discount factors (computed by the caller in Python, so they are the
    numpy backend's numbers)."""
    n = row_level.shape[0] - 1
    for k in range(len(weights)):
        for u in range(n) if alternating else range(n, n + 1):
            _update(u, weights[k], discount, positive[k], negative[k], rm_plus, sigma, reach_ext, q_ext, v,
                    others_reach, acc, parent_ext, level_start, term_start, term_target, term_off, term_others,
                    term_payoff, dec_start, dec_target, dec_off, dec_others, dec_chance, rows, row_level,
                    payoff_bound, legal, uniform, regrets, policy_sum, scale)
