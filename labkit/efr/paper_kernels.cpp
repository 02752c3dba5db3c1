// The memory-bound loops of EFR's round under fixed_point="paper", in the same floating-point
// order as the numpy code of labkit/efr/paper_numerics.py and labkit/efr/learner.py, so that
// every bit is the same (compiled with the solver in eigen_fixed_point.cpp, by
// labkit/efr/eigen.py: -O2, no -march, -ffp-contract=off; without -ffast-math the compiler
// keeps every sum in the written order).
//
// numpy forms each step over the whole (rows x slots) regret table with temporaries of the
// table's size (447 MB for BHV in Sheriff); here each entry is read and written once.
//
// Arrays are C-contiguous doubles unless said otherwise; `bool` arrays are one byte per entry.

#include <cstring>
#include <vector>

// numpy's maximum(x, 0.0): x if x > 0 (or x is NaN), else 0.0 (so -0.0 gives +0.0)
static inline double positive_part(double x) { return (x > 0.0 || x != x) ? x : 0.0; }

// Step 2 (paper_numerics.immediate_regrets), for I infosets over A actions:
//   external[i, b]    = (-v[i] + sum_a q[i, b] pi[i, a]) * legal[i, b]
//   internal[i, s, t] = (-v[i] + sum_a q[i, a == s ? t : a] pi[i, a]) * (legal[i, s] & legal[i, t]),
//                       0 for s == t,
// the sums taken over a = 0 .. A-1 in order. rho is (I, S); external slots start at
// external_offset, internal ones at internal_offset (either may be -1: absent).
static inline void immediate_regrets_row(long actions, const double* qi, double vi,
                                         const double* pi, const unsigned char* li,
                                         long external_offset, long internal_offset,
                                         double* out) {
  if (external_offset >= 0) {
    for (long b = 0; b < actions; ++b) {
      double total = -vi;
      for (long a = 0; a < actions; ++a) total = total + qi[b] * pi[a];
      out[external_offset + b] = total * static_cast<double>(li[b]);
    }
  }
  if (internal_offset >= 0) {
    for (long s = 0; s < actions; ++s) {
      for (long t = 0; t < actions; ++t) {
        double value = 0.0;
        if (s != t) {
          double total = -vi;
          for (long a = 0; a < actions; ++a) total = total + qi[a == s ? t : a] * pi[a];
          value = total;
        }
        out[internal_offset + s * actions + t] = value * static_cast<double>(li[s] & li[t]);
      }
    }
  }
}

extern "C" void labkit_efr_immediate_regrets(long infosets, long actions, const double* q,
                                             const double* v, const double* probs,
                                             const unsigned char* legal, long slots,
                                             long external_offset, long internal_offset,
                                             double* rho) {
  for (long i = 0; i < infosets; ++i) {
    immediate_regrets_row(actions, q + i * actions, v[i], probs + i * actions, legal + i * actions,
                          external_offset, internal_offset, rho + i * slots);
  }
}

// The same, except where q(I, .) is one value c in every action (bitwise; every infoset the
// others do not reach has q = +0.0): there every sum above adds the same terms c pi[a] in the
// same order, so one sum serves every slot (late in a run most infosets are such).
extern "C" void labkit_efr_immediate_regrets_constant_rows(
    long infosets, long actions, const double* q, const double* v, const double* probs,
    const unsigned char* legal, long slots, long external_offset, long internal_offset,
    double* rho) {
  for (long i = 0; i < infosets; ++i) {
    const double* qi = q + i * actions;
    const double* pi = probs + i * actions;
    const unsigned char* li = legal + i * actions;
    double* out = rho + i * slots;
    bool constant = actions > 0;
    for (long a = 1; a < actions && constant; ++a) {
      constant = std::memcmp(qi + a, qi, sizeof(double)) == 0;
    }
    if (!constant) {
      immediate_regrets_row(actions, qi, v[i], pi, li, external_offset, internal_offset, out);
      continue;
    }
    double total = -v[i];
    for (long a = 0; a < actions; ++a) total = total + qi[0] * pi[a];
    if (external_offset >= 0) {
      for (long b = 0; b < actions; ++b) out[external_offset + b] = total * static_cast<double>(li[b]);
    }
    if (internal_offset >= 0) {
      for (long s = 0; s < actions; ++s) {
        for (long t = 0; t < actions; ++t) {
          const double value = s != t ? total : 0.0;
          out[internal_offset + s * actions + t] = value * static_cast<double>(li[s] & li[t]);
        }
      }
    }
  }
}

// Steps 3 and 4 fused for one block of rows (they touch the same rows, and step 4 of a block
// reads only that block's regrets, final once step 3 has added this round's): every active
// regret is read and written once. The same results, bit for bit, as numpy's
//   regrets[block] += played_weight[:, None] * rho[row_infoset] * active       (step 3)
//   y = sequential_segment_sums(new_weight[:, None] * maximum(regrets[block], 0.0), starts)
// for regrets that only this kernel has changed (inactive slots at +0.0, finite rho).
// sequential_segment_sums pads the segments with zeros to the longest one (at least 1) and sums
// left to right from the first term, so a shorter segment ends with "+ 0.0" (which turns a -0.0
// into +0.0).
extern "C" void labkit_efr_block_update(long rows, long slots, double* regrets,
                                        const double* played_weight, const double* rho,
                                        const long* row_infoset, const unsigned char* active,
                                        const double* new_weight, long segments,
                                        const long* starts, double* y) {
  long width = 1;
  for (long k = 0; k < segments; ++k) {
    const long stop = k + 1 < segments ? starts[k + 1] : rows;
    if (stop - starts[k] > width) width = stop - starts[k];
  }
  for (long k = 0; k < segments; ++k) {
    const long start = starts[k];
    const long stop = k + 1 < segments ? starts[k + 1] : rows;
    double* out = y + k * slots;
    if (stop == start) {
      for (long s = 0; s < slots; ++s) out[s] = 0.0;
      continue;
    }
    for (long r = start; r < stop; ++r) {
      const double w = played_weight[r];
      const double next = new_weight[r];
      const double* rho_row = rho + row_infoset[r] * slots;
      double* regret_row = regrets + r * slots;
      const unsigned char* active_row = active + r * slots;
      for (long s = 0; s < slots; ++s) {
        double term;
        if (active_row[s]) {
          const double regret = regret_row[s] + (w * rho_row[s]) * 1.0;
          regret_row[s] = regret;
          term = next * positive_part(regret);
        } else {
          // An inactive slot's regret never leaves its initial +0.0: it gains (w rho) * 0.0,
          // a signed zero, and +0.0 + (+-0.0) = +0.0. So it is not read or written (most
          // slots are inactive: 88 % for BHV in Sheriff), and its term is next * max(+0.0, 0).
          term = next * 0.0;
        }
        out[s] = r == start ? term : out[s] + term;
      }
    }
    if (stop - start < width) {
      for (long s = 0; s < slots; ++s) out[s] = out[s] + 0.0;
    }
  }
}

// Step 1 (paper_numerics.counterfactual_values) for `player`, on a tree numbered breadth first
// (a parent's index is below its children's; children are contiguous, first_child[h] ..
// first_child[h] + num_children[h] - 1):
//   top-down  r(h) = r(parent) * (chance's probability | another player's probability | 1);
//   bottom-up v(z) = u(z) r(z) at terminals, v(h) = sum of the counted children's terms in
//             order, starting from 0.0 (own node: pi(a) v(ha), all counted; chance: v(ha);
//             another player: v(ha) where pi(a) > 0);
//   then q(I, a) = sum_h v(ha) and v(I) = sum_h v(h) over the player's histories with
//   r(h) > 0, in the given (depth-first) order, starting from 0.0 as np.bincount does.
// mover is -1 at chance nodes and -4 at terminals; infoset is -1 where no one decides.
extern "C" void labkit_efr_counterfactual_values(
    long histories, long actions, long player, const long* parent, const long* mover,
    const long* infoset, const long* action, const double* chance_prob, const double* payoff,
    const long* first_child, const long* num_children, const double* profile,
    long ordered_count, const long* ordered, double* weight, double* value,
    double* action_value, double* q, double* v, unsigned char* reached) {
  const long kChance = -1, kTerminal = -4;
  weight[0] = 1.0;
  for (long h = 1; h < histories; ++h) {
    const long p = parent[h];
    const long who = mover[p];
    double factor = who == kChance ? chance_prob[h] : 1.0;
    if (who >= 0 && who != player) factor = profile[infoset[p] * actions + action[h]];
    weight[h] = weight[p] * factor;
  }
  for (long h = 0; h < histories * actions; ++h) action_value[h] = 0.0;
  for (long h = histories - 1; h >= 0; --h) {
    const long who = mover[h];
    if (who == kTerminal) {
      value[h] = payoff[h] * weight[h];
      continue;
    }
    const bool own = who == player;
    const long row = infoset[h] > 0 ? infoset[h] : 0;
    double total = 0.0;
    for (long k = 0; k < num_children[h]; ++k) {
      const long child = first_child[h] + k;
      const long a = who >= 0 ? action[child] : 0;
      const double child_value = value[child];
      const double prob = profile[row * actions + a];
      const double term = own ? prob * child_value : child_value;
      if (who == kChance || own || prob > 0) total = total + term;
      if (own) action_value[h * actions + a] = child_value;
    }
    value[h] = total;
  }
  for (long k = 0; k < ordered_count; ++k) {
    const long h = ordered[k];
    if (!(weight[h] > 0)) continue;
    const long i = infoset[h];
    for (long a = 0; a < actions; ++a) q[i * actions + a] += action_value[h * actions + a];
    v[i] += value[h];
    reached[i] = 1;
  }
}

// The learner's pass (paper_numerics.counterfactual_values_into), the same operations as the one
// above split in two, with these differences, none of which touches a floating-point operation:
// `own` is read at the player's nodes, `others` at everyone else's (the result is the merged
// profile's, np.where(mine, own, others): at chance nodes the probability read is never used,
// every chance child being counted); q, v and reached are only added to at the player's
// infosets, so one zeroed array can collect every player's values; and no histories x actions
// table is written.
//
// The top-down half: r(h) for `player` from the others' profile and chance alone (the
// player's own probabilities are not factors of r), so every learner that plays against the
// same profile shares it.
extern "C" void labkit_efr_others_reach(long histories, long actions, long player,
                                        const long* parent, const long* mover, const long* infoset,
                                        const long* action, const double* chance_prob,
                                        const double* others, double* weight) {
  const long kChance = -1;
  weight[0] = 1.0;
  for (long h = 1; h < histories; ++h) {
    const long p = parent[h];
    const long who = mover[p];
    double factor = who == kChance ? chance_prob[h] : 1.0;
    if (who >= 0 && who != player) factor = others[infoset[p] * actions + action[h]];
    weight[h] = weight[p] * factor;
  }
}

// The bottom-up half and the infoset sums, given r(h) (labkit_efr_others_reach). Index is the
// integer type of the tree's arrays (int64 or, to halve the memory the pass streams, int32).
// q(I, a) += the value of the child by action a, or 0.0 where no child has action a, for
// a = 0 .. A-1 in order (np.bincount of the action-value column, which is 0 there); the child
// values are gathered per history into a small row instead of a histories x actions table.
template <typename Index>
static void counterfactual_values_given_reach(
    long histories, long actions, long player, const Index* mover, const Index* infoset,
    const Index* action, const double* payoff, const Index* first_child,
    const Index* num_children, const double* own, const double* others, long ordered_count,
    const long* ordered, const double* weight, double* value, double* q, double* v,
    unsigned char* reached) {
  const long kChance = -1, kTerminal = -4;
  for (long h = histories - 1; h >= 0; --h) {
    const long who = mover[h];
    if (who == kTerminal) {
      value[h] = payoff[h] * weight[h];
      continue;
    }
    const bool own_node = who == player;
    const long row = infoset[h] > 0 ? infoset[h] : 0;
    const double* probs = (own_node ? own : others) + row * actions;
    double total = 0.0;
    const long first = first_child[h], count = num_children[h];
    for (long k = 0; k < count; ++k) {
      const long child = first + k;
      const long a = who >= 0 ? static_cast<long>(action[child]) : 0;
      const double child_value = value[child];
      const double prob = probs[a];
      const double term = own_node ? prob * child_value : child_value;
      if (who == kChance || own_node || prob > 0) total = total + term;
    }
    value[h] = total;
  }
  std::vector<double> by_action(actions > 0 ? actions : 1);
  for (long k = 0; k < ordered_count; ++k) {
    const long h = ordered[k];
    if (!(weight[h] > 0)) continue;
    const long i = infoset[h];
    for (long a = 0; a < actions; ++a) by_action[a] = 0.0;
    const long first = first_child[h], count = num_children[h];
    for (long c = 0; c < count; ++c) by_action[action[first + c]] = value[first + c];
    for (long a = 0; a < actions; ++a) q[i * actions + a] += by_action[a];
    v[i] += value[h];
    reached[i] = 1;
  }
}

extern "C" void labkit_efr_counterfactual_values_given_reach(
    long histories, long actions, long player, const int* mover, const int* infoset,
    const int* action, const double* payoff, const int* first_child, const int* num_children,
    const double* own, const double* others, long ordered_count, const long* ordered,
    const double* weight, double* value, double* q, double* v, unsigned char* reached) {
  counterfactual_values_given_reach<int>(histories, actions, player, mover, infoset, action,
                                         payoff, first_child, num_children, own, others,
                                         ordered_count, ordered, weight, value, q, v, reached);
}

// labkit_efr_block_update for the learner's round (player_update), the same bits where they are
// used, with less memory traffic:
// * a segment (one infoset's rows) visits only the slots active in at least one of its rows
//   (`union_slots`, ascending, segment k's at union_slots[union_start[k] .. union_start[k+1]));
//   every other slot s of the segment adds the same terms next_r * 0.0 (inactive everywhere),
//   so its y is one running sum of those, computed once per row (`zero_sum`);
// * an infoset the others do not reach gets its regrets updated but no y (the solver skips it).
// Rows' active slots still decide, per row, between the regret term and next * 0.0.
static void block_update_sparse(long rows, long slots, double* regrets,
                                const double* played_weight, const double* rho,
                                const long* row_infoset, const unsigned char* active,
                                const double* new_weight, long segments, const long* starts,
                                const long* union_start, const long* union_slots,
                                const unsigned char* uniform, const long* infosets,
                                const unsigned char* reached, double* y) {
  long width = 1;
  for (long k = 0; k < segments; ++k) {
    const long stop = k + 1 < segments ? starts[k + 1] : rows;
    if (stop - starts[k] > width) width = stop - starts[k];
  }
  for (long k = 0; k < segments; ++k) {
    const long start = starts[k];
    const long stop = k + 1 < segments ? starts[k + 1] : rows;
    double* out = y + k * slots;
    if (stop == start) {
      for (long s = 0; s < slots; ++s) out[s] = 0.0;
      continue;
    }
    const long* visit = union_slots + union_start[k];
    const long count = union_start[k + 1] - union_start[k];
    // every row of a uniform segment has exactly the visited slots active: no mask to read
    const bool all_active = uniform[k] != 0;
    if (!reached[infosets[k]]) {
      for (long r = start; r < stop; ++r) {
        const double w = played_weight[r];
        const double* rho_row = rho + row_infoset[r] * slots;
        double* regret_row = regrets + r * slots;
        const unsigned char* active_row = active + r * slots;
        for (long j = 0; j < count; ++j) {
          const long s = visit[j];
          if (all_active || active_row[s]) regret_row[s] = regret_row[s] + (w * rho_row[s]) * 1.0;
        }
      }
      continue;
    }
    double zero_sum = 0.0;
    for (long r = start; r < stop; ++r) {
      const double w = played_weight[r];
      const double next = new_weight[r];
      const double* rho_row = rho + row_infoset[r] * slots;
      double* regret_row = regrets + r * slots;
      const unsigned char* active_row = active + r * slots;
      const double zero_term = next * 0.0;
      zero_sum = r == start ? zero_term : zero_sum + zero_term;
      for (long j = 0; j < count; ++j) {
        const long s = visit[j];
        double term;
        if (all_active || active_row[s]) {
          const double regret = regret_row[s] + (w * rho_row[s]) * 1.0;
          regret_row[s] = regret;
          term = next * positive_part(regret);
        } else {
          term = zero_term;
        }
        out[s] = r == start ? term : out[s] + term;
      }
    }
    if (stop - start < width) {
      zero_sum = zero_sum + 0.0;
      for (long j = 0; j < count; ++j) out[visit[j]] = out[visit[j]] + 0.0;
    }
    for (long s = 0, j = 0; s < slots; ++s) {
      if (j < count && visit[j] == s) {
        ++j;
      } else {
        out[s] = zero_sum;
      }
    }
  }
}

// The solver of eigen_fixed_point.cpp (another translation unit: the same machine code whoever
// calls it).
extern "C" int labkit_eigen_fixed_points(long B, long A, const double* external,
                                         const double* internal, const unsigned char* legal,
                                         double* out);

// Step 4 of the round for all of one player's rows, block by block (shallowest first), what
// learner.py's loop does with numpy and one solver call per block:
//   new_weight[r] = ((1.0 * flat[f_r1]) * flat[f_r2]) ... (sequential_products of the row's
//                   factors, read from the strategy as the earlier blocks left it);
//   block_update_sparse on the block's rows (steps 3 and 4 fused), y one row per reached infoset;
//   the solver on each infoset the others reach, written straight into the strategy (the
//   solver treats infosets one at a time, so calling it per infoset gives the batch's bits;
//   infosets that are not reached keep their strategy and need no solve).
// The solver is a deterministic function of the infoset's y row (and its legal actions), and
// many rows repeat from one round to the next (no regret of the infoset changed: 30-90 % in
// tiny bridge), so the last solved y row and strategy of each infoset are kept (solved_y,
// solved_sigma, solved flags: position k of the player's infosets in block order) and a row
// with the same bytes reuses the strategy instead of solving again.
// Rows, regrets, weights and row_infoset/active/factors are those of the player (row 0 = the
// player's first row); block k holds rows block_rows[k] .. block_rows[k+1] - 1 and the infosets
// infosets[block_infosets[k] ..], with segment starts (relative to the block) at the same
// positions of `starts`; union_start (one entry per position, plus one) and union_slots list the
// slots active in any row of each infoset, `uniform` (one byte per position) whether every row of
// the infoset has exactly those active. y is scratch space for the largest block's infosets x
// slots.
extern "C" void labkit_efr_player_update(
    long actions, long slots, long depth, double* flat, const long* row_factors,
    double* regrets, const double* played_weight, const double* rho, const long* row_infoset,
    const unsigned char* active, const unsigned char* legal, const unsigned char* reached,
    long external_offset, long internal_offset, long blocks, const long* block_rows,
    const long* block_infosets, const long* infosets, const long* starts, double* new_weight,
    double* y, double* solved_y, double* solved_sigma, unsigned char* solved,
    const long* union_start, const long* union_slots, const unsigned char* uniform) {
  const size_t row_bytes = sizeof(double) * slots, sigma_bytes = sizeof(double) * actions;
  for (long b = 0; b < blocks; ++b) {
    const long first = block_rows[b], stop = block_rows[b + 1];
    for (long r = first; r < stop; ++r) {
      double product = 1.0;
      for (long k = 0; k < depth; ++k) product = product * flat[row_factors[r * depth + k]];
      new_weight[r] = product;
    }
    const long offset = block_infosets[b], count = block_infosets[b + 1] - offset;
    block_update_sparse(stop - first, slots, regrets + first * slots, played_weight + first, rho,
                        row_infoset + first, active + first * slots, new_weight + first, count,
                        starts + offset, union_start + offset, union_slots, uniform + offset,
                        infosets + offset, reached, y);
    for (long k = 0; k < count; ++k) {
      const long i = infosets[offset + k], position = offset + k;
      if (!reached[i]) continue;
      const double* row = y + k * slots;
      double* strategy = flat + i * actions;
      double* kept_y = solved_y + position * slots;
      double* kept_sigma = solved_sigma + position * actions;
      if (solved[position] && std::memcmp(kept_y, row, row_bytes) == 0) {
        std::memcpy(strategy, kept_sigma, sigma_bytes);
        continue;
      }
      labkit_eigen_fixed_points(1, actions, external_offset >= 0 ? row + external_offset : nullptr,
                                internal_offset >= 0 ? row + internal_offset : nullptr,
                                legal + i * actions, strategy);
      std::memcpy(kept_y, row, row_bytes);
      std::memcpy(kept_sigma, strategy, sigma_bytes);
      solved[position] = 1;
    }
  }
}

// The terminal reaches of one profile (labkit.evaluate._reach(game, edge_probabilities(game,
// probs))[:, game.terminals]), for a tree numbered breadth first:
//   e(h)    = probs[edge_source[h]] where the move into h is a decision, else chance_prob[h];
//   F[r, h] = (r == edge_owner[h] ? e(h) : 1.0) * F[r, parent[h]], F[:, root] the same with 1.0
//             for the missing parent,
// which is numpy's F[:, level] *= F[:, parent[level]] on F initialized to 1 with e(h) in row
// edge_owner[h] (x * y and y * x are the same double). `scratch` holds F, histories x rows;
// out[r * count + k] = F[r, terminals[k]].
extern "C" void labkit_efr_terminal_reach(long histories, long rows, const long* parent,
                                          const long* edge_owner, const long* edge_source,
                                          const double* chance_prob, const double* probs,
                                          long count, const long* terminals, double* scratch,
                                          double* out) {
  for (long h = 0; h < histories; ++h) {
    const double edge = edge_source[h] >= 0 ? probs[edge_source[h]] : chance_prob[h];
    double* here = scratch + h * rows;
    if (h == 0) {
      for (long r = 0; r < rows; ++r) here[r] = r == edge_owner[h] ? edge : 1.0;
      continue;
    }
    const double* above = scratch + parent[h] * rows;
    for (long r = 0; r < rows; ++r) here[r] = (r == edge_owner[h] ? edge : 1.0) * above[r];
  }
  for (long r = 0; r < rows; ++r) {
    for (long k = 0; k < count; ++k) out[r * count + k] = scratch[terminals[k] * rows + r];
  }
}
