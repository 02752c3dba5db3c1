"""The floor reference: a minimal hand-written numba CFR+ for two-player games, for benchmarks only.

CFR+ as OpenSpiel's ``CFRPlusSolver`` and ``labkit.CFRPlus`` run it (alternating updates, regret
matching+, linear averaging), with none of labkit's bookkeeping: no exact-tie bounds, no numpy
twin to agree with bit for bit, no DCFR or simultaneous variants. What is left is the least a
sequence-form CFR+ iteration does:

* sequences are numbered ``1 + I * A + a`` in the game's infoset order (parents before children,
  as `labkit.games` numbers them), 0 being the empty sequence;
* per player, the terminals where that player moved, sorted by the player's last sequence, with
  the other player's last sequence (int32) and chance-probability-times-payoff beside it, so
  each sequence's counterfactual value is one run summed in a register;
* one update of player i: the reach of every sequence top-down, the runs, a bottom-up pass over
  i's infosets (children have larger indices than their parents), then RM+, the linear average
  and regret matching of i's infosets.

`benchmarks/bench_kernels.py` times labkit's kernels against `FloorCFRPlus.step` and checks that
the two reach the same NashConv.
"""
from __future__ import annotations

import numba
import numpy as np

from labkit.evaluate import _reach


@numba.njit(cache=True)
def _iteration(t, A, sigma, reach, q, value, parent_ext, infoset_player, runs, run_target, other, payoff,
               regrets, average, legal, uniform):
    I = sigma.shape[0]
    for player in range(2):
        for r in range(I):                               # every sequence's own reach, parents first
            x = reach[parent_ext[r]]
            for a in range(A):
                reach[1 + r * A + a] = x * sigma[r, a]
        lo, hi = runs[player], runs[player + 1]          # this player's runs
        for g in range(lo, hi):                          # q(s) = sum over z after s of x_-i(z) c(z) u_i(z)
            total = 0.0
            for e in range(run_target[g, 1], run_target[g, 2]):
                total += reach[other[e]] * payoff[e]
            q[run_target[g, 0]] = total
        for r in range(I - 1, -1, -1):                   # bottom-up: children first
            if infoset_player[r] != player:
                continue
            v = 0.0
            for a in range(A):
                v += sigma[r, a] * q[1 + r * A + a]
            value[r] = v
            q[parent_ext[r]] += v
        for r in range(I):                               # RM+, linear average, regret matching
            if infoset_player[r] != player:
                continue
            total = 0.0
            for a in range(A):
                s = 1 + r * A + a
                regret = regrets[r, a] + (q[s] - value[r]) * legal[r, a]
                regret = regret if regret > 0.0 else 0.0
                regrets[r, a] = regret
                average[r, a] += t * reach[s]
                total += regret
            for a in range(A):
                sigma[r, a] = regrets[r, a] / total if total > 0.0 else uniform[r, a]
        for r in range(I):                               # q is reused: clear this player's sequences
            if infoset_player[r] == player:
                for a in range(A):
                    q[1 + r * A + a] = 0.0
        q[0] = 0.0


class FloorCFRPlus:
    """Minimal CFR+ on a two-player labkit `GameTree` (benchmarks only)."""

    def __init__(self, game):
        if game.num_players != 2:
            raise ValueError("the floor kernel is written for two players")
        I, A = game.num_infosets, game.num_actions
        self.game, self.iteration = game, 0
        self.legal = game.legal_mask.astype(np.float64)
        self.uniform = self.legal / self.legal.sum(axis=1, keepdims=True)
        self.sigma = self.uniform.copy()
        self.regrets = np.zeros((I, A))
        self.average = np.zeros((I, A))
        self.reach = np.ones(I * A + 1)
        self.q = np.zeros(I * A + 1)
        self.value = np.zeros(I)
        self.parent_ext = (game.infoset_parent_seq + 1).astype(np.int32)
        self.infoset_player = game.infoset_player.astype(np.int32)
        z = game.terminals
        last = game.own_last_seq[z] + 1                     # (Z, 2) extended sequence indices
        chance = _reach(game, game.chance_prob)[2, z]
        runs, targets, others, payoffs = [0], [], [], []
        start = 0
        for i in range(2):
            mine = np.flatnonzero(last[:, i] > 0)
            order = mine[np.argsort(last[mine, i], kind="stable")]
            seq = last[order, i]
            bounds = np.concatenate(([0], np.flatnonzero(np.diff(seq)) + 1, [len(seq)]))
            for b0, b1 in zip(bounds[:-1], bounds[1:]):
                targets.append((seq[b0], start + b0, start + b1))
            runs.append(len(targets))
            others.append(last[order, 1 - i])
            payoffs.append(chance[order] * game.returns[z[order], i])
            start += len(order)
        self.runs = np.array(runs, dtype=np.int32)
        self.run_target = np.array(targets, dtype=np.int32).reshape(-1, 3)
        self.other = np.concatenate(others).astype(np.int32)
        self.payoff = np.concatenate(payoffs)

    def step(self):
        self.iteration += 1
        _iteration(float(self.iteration), self.game.num_actions, self.sigma, self.reach, self.q, self.value,
                   self.parent_ext, self.infoset_player, self.runs, self.run_target, self.other, self.payoff,
                   self.regrets, self.average, self.legal, self.uniform)

    def average_policy(self):
        import labkit as lk
        total = self.average.sum(axis=1, keepdims=True)
        probs = np.where(total > 0, self.average / np.where(total > 0, total, 1.0), self.uniform)
        return lk.TabularPolicy(self.game, probs, check=False)
