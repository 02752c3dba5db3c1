"""CFR, CFR+ and discounted CFR in exact rational arithmetic (fractions.Fraction), for tests.

A deliberately plain reference: one walk over the compiled `GameTree`'s histories per pass (top
down for reach, bottom up for values), every number a Fraction, no tolerance anywhere. The
game's chance probabilities and payoffs are floats in the tree; they are read back as the
rationals with small denominators they were made from (1/3, -1/2, ...).

Exact CFR's denominators grow doubly exponentially with alternating updates (3-player Kuhn
CFR+: 3, 8, 35, 337, ... digits after iterations 1, 2, 3, 4), so `sigma_bits` can round each
new strategy to a multiple of 2^-sigma_bits (the rounding remainder going to its largest entry,
so the support is kept). Everything else stays exact, so a tie that the game's structure makes
(equal values whatever the strategy) is still an exact 0; a tie that holds only for the exact
strategy leaves a residue of order 2^-sigma_bits, and every regret within 2^(-sigma_bits / 2)
of 0 is therefore set to 0 and counted in `snapped` (1e-39 for 256 bits: no regret of these
games that is not a tie comes anywhere near, and the float code under test resolves 1e-16).
"""
from fractions import Fraction

import numpy as np

from labkit.tree import CHANCE, TERMINAL


def rational(x, max_denominator=10_000):
    """The small-denominator rational that the float x rounds (checked to 1e-15)."""
    r = Fraction(float(x)).limit_denominator(max_denominator)
    assert abs(float(r) - float(x)) <= 1e-15 * max(1.0, abs(float(x))), x
    return r


class ExactCFR:
    """Exact CFR on a GameTree.

    Parameters
    ----------
    game : GameTree
    alternating : bool
        Players update in turn (each pass sees the others' latest policy) or all at once.
    plus : bool
        Regret matching+ (floor the cumulative regrets at 0 after every update).
    average_exponent : int
        Iteration t enters the average with weight t ** average_exponent (0: uniform averaging).
    discount : (alpha, beta) of integers, optional
        DCFR: after an update at iteration t, multiply positive regrets by t^alpha / (t^alpha + 1)
        and negative ones by t^beta / (t^beta + 1). Integer exponents keep the factors rational.
    """

    def __init__(self, game, alternating=False, plus=False, average_exponent=0, discount=None, sigma_bits=None):
        self.game, self.alternating, self.plus = game, alternating, plus
        self.sigma_bits, self.snapped = sigma_bits, 0
        self.average_exponent, self.discount = average_exponent, discount
        self.n = game.num_players
        self.legal = [list(np.flatnonzero(row)) for row in game.legal_mask]
        self.children = [[] for _ in range(game.num_histories)]
        for h in range(1, game.num_histories):
            self.children[game.parent[h]].append(h)
        self.kind = game.player.tolist()
        self.infoset = game.infoset.tolist()
        self.action = game.action.tolist()
        self.chance = [rational(p) for p in game.chance_prob]
        self.returns = {int(z): [rational(u) for u in game.returns[z]] for z in game.terminals}
        I = game.num_infosets
        self.regret = [{a: Fraction(0) for a in self.legal[i]} for i in range(I)]
        self.policy_sum = [{a: Fraction(0) for a in self.legal[i]} for i in range(I)]
        self.sigma = [self._match(i) for i in range(I)]
        self.iteration = 0

    def _match(self, i):
        positive = {a: max(r, Fraction(0)) for a, r in self.regret[i].items()}
        total = sum(positive.values())
        if total > 0:
            return self._rounded({a: p / total for a, p in positive.items()})
        return self._rounded({a: Fraction(1, len(positive)) for a in positive})

    def _rounded(self, sigma):
        if self.sigma_bits is None:
            return sigma
        unit = Fraction(1, 2 ** self.sigma_bits)
        rounded = {a: round(p / unit) * unit for a, p in sigma.items()}
        top = max(sigma, key=sigma.get)
        rounded[top] += 1 - sum(rounded.values())
        assert all((rounded[a] > 0) == (sigma[a] > 0) for a in sigma), "rounding changed a support"
        return rounded

    def _pass(self, players):
        """Counterfactual action values q[I][a] and own reach x[I] for the infosets of `players`."""
        g, n = self.game, self.n
        H = g.num_histories
        reach = [None] * H          # reach[h][j]: player j's (j = n: chance's) contribution
        reach[0] = [Fraction(1)] * (n + 1)
        for h in range(H):
            for c in self.children[h]:
                r = list(reach[h])
                if self.kind[h] == CHANCE:
                    r[n] *= self.chance[c]
                else:
                    r[self.kind[h]] *= self.sigma[self.infoset[h]][self.action[c]]
                reach[c] = r
        value = [None] * H          # value[h][j]: player j's expected return below h
        for h in range(H - 1, -1, -1):
            if self.kind[h] == TERMINAL:
                value[h] = self.returns[h]
                continue
            total = [Fraction(0)] * n
            for c in self.children[h]:
                w = self.chance[c] if self.kind[h] == CHANCE else self.sigma[self.infoset[h]][self.action[c]]
                if w:
                    total = [t + w * v for t, v in zip(total, value[c])]
            value[h] = total
        q, own = {}, {}
        for h in range(H):
            p = self.kind[h]
            if p < 0 or p not in players:
                continue
            i = self.infoset[h]
            others = reach[h][n]
            for j in range(n):
                if j != p:
                    others *= reach[h][j]
            row = q.setdefault(i, {a: Fraction(0) for a in self.legal[i]})
            for c in self.children[h]:
                row[self.action[c]] += others * value[c][p]
            own[i] = reach[h][p]
        return q, own

    def _update(self, t, players):
        q, own = self._pass(players)
        weight = Fraction(t) ** self.average_exponent
        for i, row in q.items():
            sigma = self.sigma[i]
            v = sum(sigma[a] * row[a] for a in row)
            for a in row:
                self.regret[i][a] += self._snap(row[a] - v)
                self.policy_sum[i][a] += weight * own[i] * sigma[a]
                if self.plus:
                    self.regret[i][a] = max(self.regret[i][a], Fraction(0))
                if self.discount is not None:
                    alpha, beta = self.discount
                    k = alpha if self.regret[i][a] >= 0 else beta
                    self.regret[i][a] *= Fraction(t) ** k / (Fraction(t) ** k + 1)
        for i in q:
            self.regret[i] = {a: self._snap(r) for a, r in self.regret[i].items()}
            self.sigma[i] = self._match(i)

    def _snap(self, r):
        """r, or 0 if strategy rounding may have made it (sigma_bits only)."""
        if self.sigma_bits is not None and r != 0 and abs(r) < Fraction(1, 2 ** (self.sigma_bits // 2)):
            self.snapped += 1
            return Fraction(0)
        return r

    def step(self):
        t = self.iteration + 1
        if self.alternating:
            for p in range(self.n):
                self._update(t, {p})
        else:
            self._update(t, set(range(self.n)))
        self.iteration = t
        return self

    def current_policy(self):
        """(I, A) float array of sigma^{T+1}."""
        return self._table(self.sigma)

    def average_policy(self):
        rows = []
        for i, sums in enumerate(self.policy_sum):
            total = sum(sums.values())
            rows.append({a: s / total for a, s in sums.items()} if total > 0
                        else {a: Fraction(1, len(sums)) for a in sums})
        return self._table(rows)

    def current_support(self):
        """(I, A) bool: the actions sigma^{T+1} plays with positive probability (exactly)."""
        support = np.zeros(self.game.legal_mask.shape, dtype=bool)
        for i, row in enumerate(self.sigma):
            for a, p in row.items():
                support[i, a] = p > 0
        return support

    def _table(self, rows):
        out = np.zeros(self.game.legal_mask.shape)
        for i, row in enumerate(rows):
            for a, p in row.items():
                out[i, a] = float(p)
        return out
