/* CFR iterations in C: labkit/_cfr_kernels.py's `iterations` and `_update`, line for line.

   The same loops over the same packed arrays (`labkit._cfr_kernels.pack`), so the same
   floating-point operations in the same order: the regrets, policy sums and policies are bit
   for bit those of the numpy backend (tests/test_kernels.py). Built with -ffp-contract=off
   (no fused multiply-add) by `labkit._native`, and loaded with ctypes: loading it costs a few
   milliseconds, where numba's import and its cached kernels cost about a second. */
#include <math.h>

#define ALTERNATING 1
#define DISCOUNT 2
#define RM_PLUS 4

/* part k of a packed int32 array: packed[packed[k]:packed[k + 1]] */
#define PART(packed, k) ((packed) + (packed)[k])

static void update(long u, long previous, long n, long W, long depths, double weight, double positive,
                   double negative, long mode, double tolerance, long I, long A, double *sigma,
                   double *regrets, double *policy_sum, double *scale, const int *parent_ext,
                   const int *term_start, const int *term_target, const int *term_off, const int *term_others,
                   const int *dec_start, const int *dec_off, const int *dec_others, const int *rows,
                   const int *row_level, const double *term_payoff, const double *dec_chance,
                   const double *payoff_bound, const double *legal, const double *uniform, double *reach_ext,
                   double *q_ext, double *v, double *acc)
{
    long S = I * A + 1;
    long L = depths + 1;                        /* row_level is (n + 1, depths + 1) */
    /* 2. own reach x(I, a) = x(parent sequence) sigma(I, a), at the rows changed last update */
    for (long k = row_level[previous * L]; k < row_level[previous * L + depths]; k++) {
        long r = rows[k];
        double parent = reach_ext[parent_ext[r]];
        for (long a = 0; a < A; a++)
            reach_ext[1 + r * A + a] = sigma[r * A + a] * parent;
    }
    /* 3. terminals: pi_{-i}(z) u_i(z) summed per sequence from 0.0, in np.bincount's order */
    for (long s = 0; s < S; s++)
        q_ext[s] = 0.0;
    if (W == 1) {
        for (long g = term_off[u]; g < term_off[u + 1]; g++) {
            double total = 0.0;
            for (long e = term_start[g]; e < term_start[g + 1]; e++)
                total += reach_ext[term_others[e]] * term_payoff[e];
            q_ext[term_target[g]] = total;
        }
    } else {
        for (long g = term_off[u]; g < term_off[u + 1]; g++) {
            double total = 0.0;
            for (long e = term_start[g]; e < term_start[g + 1]; e++) {
                double w = W ? reach_ext[term_others[e * W]] : 1.0;
                for (long j = 1; j < W; j++)
                    w *= reach_ext[term_others[e * W + j]];
                total += w * term_payoff[e];
            }
            q_ext[term_target[g]] = total;
        }
    }
    /* bottom-up: v(I) = sum_a sigma(I, a) q(I, a), added to the parent sequence one sum per parent */
    for (long d = depths - 1; d >= 0; d--) {
        long lo = row_level[u * L + d], hi = row_level[u * L + d + 1];
        for (long k = lo; k < hi; k++) {
            long r = rows[k];
            double total = sigma[r * A] * q_ext[1 + r * A];
            for (long a = 1; a < A; a++)
                total += sigma[r * A + a] * q_ext[1 + r * A + a];
            v[r] = total;
        }
        if (d > 0) {
            for (long k = lo; k < hi; k++)
                acc[parent_ext[rows[k]]] += v[rows[k]];
            for (long k = lo; k < hi; k++) {
                long p = parent_ext[rows[k]];
                q_ext[p] += acc[p];
                acc[p] = 0.0;
            }
        }
    }
    /* 4-5. the others' reach, regrets (ties to zeros), tie bounds, average; RM+, discount, matching */
    int rm_plus = (mode & RM_PLUS) != 0, discount = (mode & DISCOUNT) != 0;
    int plain_average = u == n && weight == 1.0;
    double most = positive >= negative ? positive : negative;
    long g = dec_off[u];
    for (long k = row_level[u * L]; k < row_level[u * L + depths]; k++) {
        long r = rows[k];
        double others = 0.0;
        if (W == 1) {
            for (long e = dec_start[g]; e < dec_start[g + 1]; e++)
                others += reach_ext[dec_others[e]] * dec_chance[e];
        } else {
            for (long e = dec_start[g]; e < dec_start[g + 1]; e++) {
                double w = W ? reach_ext[dec_others[e * W]] : 1.0;
                for (long j = 1; j < W; j++)
                    w *= reach_ext[dec_others[e * W + j]];
                others += w * dec_chance[e];
            }
        }
        g++;
        double bound = others * payoff_bound[r];
        double tie = tolerance * bound;
        double value = v[r];
        long base = 1 + r * A;
        scale[r] += bound;
        double threshold = tolerance * scale[r];
        for (long a = 0; a < A; a++) {
            double instant = (q_ext[base + a] - value) * legal[r * A + a];
            if (fabs(instant) <= tie)
                instant = 0.0;
            double regret = regrets[r * A + a] + instant;
            if (rm_plus && regret <= threshold)
                regret = 0.0;
            regrets[r * A + a] = regret;
            double x = reach_ext[base + a];
            if (plain_average)
                policy_sum[r * A + a] += x;
            else
                policy_sum[r * A + a] += x * (weight * legal[r * A + a]);
        }
        if (discount && u < n) {
            for (long a = 0; a < A; a++)
                regrets[r * A + a] *= regrets[r * A + a] >= 0.0 ? positive : negative;
            scale[r] *= most;
            threshold = tolerance * scale[r];
        }
        /* 1. regret matching, uniform where no regret is positive */
        double total = 0.0;
        for (long a = 0; a < A; a++) {
            double p = regrets[r * A + a] > threshold ? regrets[r * A + a] : 0.0;
            p *= legal[r * A + a];
            sigma[r * A + a] = p;
            total = a == 0 ? p : total + p;
        }
        for (long a = 0; a < A; a++)
            sigma[r * A + a] = total > 0.0 ? sigma[r * A + a] / total : uniform[r * A + a];
    }
}

/* len(schedule) / 3 = count iterations; the arguments of `labkit._cfr_kernels.iterations`, with
   the shapes (I, A), the packed arrays' lengths and the tie tolerance spelled out. */
void labkit_cfr_iterations(long mode, long count, const double *schedule, long I, long A, double *sigma,
                           double *regrets, double *policy_sum, double *scale, const int *index,
                           const double *floats, double *work, double tolerance)
{
    long S = I * A + 1;
    const int *parent_ext = PART(index, 0), *term_start = PART(index, 1), *term_target = PART(index, 2);
    const int *term_off = PART(index, 3), *term_others = PART(index, 4), *dec_start = PART(index, 5);
    const int *dec_off = PART(index, 6), *dec_others = PART(index, 7), *rows = PART(index, 8);
    const int *row_level = PART(index, 9);
    long row_level_len = index[10] - index[9];
    long term_off_len = index[4] - index[3];
    const double *term_payoff = floats + (long)floats[0], *dec_chance = floats + (long)floats[1];
    const double *payoff_bound = floats + (long)floats[2], *legal = floats + (long)floats[3];
    const double *uniform = floats + (long)floats[4];
    double *reach_ext = work, *q_ext = work + S, *v = work + 2 * S, *acc = work + 2 * S + I;
    long n = term_off_len - 2;
    long depths = row_level_len / (n + 1) - 1;
    long W = n - 1;
    int alternating = (mode & ALTERNATING) != 0;
    long previous = n;
    for (long k = 0; k < count; k++) {
        double weight = schedule[k], positive = schedule[count + k], negative = schedule[2 * count + k];
        long first = alternating ? 0 : n, last = alternating ? n : n + 1;
        for (long u = first; u < last; u++) {
            update(u, previous, n, W, depths, weight, positive, negative, mode, tolerance, I, A, sigma, regrets,
                   policy_sum, scale, parent_ext, term_start, term_target, term_off, term_others, dec_start,
                   dec_off, dec_others, rows, row_level, term_payoff, dec_chance, payoff_bound, legal, uniform,
                   reach_ext, q_ext, v, acc);
            previous = u;
        }
    }
}
