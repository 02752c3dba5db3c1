"""Counterfactual regret minimization: CFR, CFR+ and discounted CFR as vectorized tree passes.

Papers: Zinkevich, Johanson, Bowling and Piccione (2007), "Regret minimization in games with
incomplete information" (CFR); Tammelin (2014), "Solving large imperfect information games
using CFR+"; Brown and Sandholm (2019), "Solving imperfect-information games via discounted
regret minimization" (DCFR).

One iteration t (simultaneous updates, the chapter's CFR):

1. Current policy sigma^t: regret matching on the cumulative regrets R at every infoset.
2. Own reach: x_i(I, a) = pi_i(I) sigma^t(I, a), each player's probability of its own sequence
   (one top-down pass over the players' sequence trees).
3. Counterfactual action values q(I, a) = sum_{z below (I, a)} pi_{-i}(z) pi_i(I a -> z) u_i(z):
   every terminal z adds pi_c(z) x_{-i}(z) u_i(z) to its player's last sequence, then one
   bottom-up pass adds each infoset's value v(I) = sum_a sigma(I, a) q(I, a) to the sequence
   that leads to it.
4. Regrets: R(I, a) += q(I, a) - v(I) (CFR+: then R <- max(R, 0)), with exact ties kept
   exact (below).
5. Average policy: S(I, a) += w_t x_i(I, a) with w_t = 1 (CFR), t (CFR+, linear averaging) or
   t^gamma (DCFR); the average policy is S normalized per infoset.

With alternating updates (OpenSpiel's default CFRSolver, and CFR+), steps 2-5 run once per
player in turn, each pass updating only that player's regrets and average, and the next pass
seeing the policy that regret matching gives after the update.

Exact ties. Where two actions have equal counterfactual values as rationals, the computed
q(I, a) - v(I) is a rounding residue of either sign, and regret matching would turn it into a
pure strategy. Every regret within `labkit.regret.TIE_TOLERANCE` (1e-10) of the magnitude of
its terms counts as an exact 0: the instantaneous regrets are bounded by
pi_{-i}(I) max_z |u_i(z)| (step 3 also sums the others' and chance's reach pi_{-i}(I) of every
infoset), the cumulative ones by the running sum of those bounds (`regret_scale`, discounted
like the regrets in DCFR). So CFR, CFR+ and DCFR follow exact rational-arithmetic CFR on games
with ties (tests/test_exact_ties.py); see `labkit.regret` for the argument. The tolerance is the
solvers' ``tie_tolerance`` argument: 0 compares regrets with 0 exactly.

The passes never recurse: infosets are re-ordered internally by their depth in their player's
own sequence tree, so each level of step 2 and step 3 is one numpy operation on a slice.
"""
from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from labkit import _native, kernels
from labkit._messages import show
from labkit.evaluate import _chance_reach
from labkit.policy import TabularPolicy
from labkit.regret import TIE_TOLERANCE, _check_tolerance, uniform_rows
from labkit.solver import Solver
from labkit.tree import GameTree

if TYPE_CHECKING:
    from labkit.games import GameLike

__all__ = ["CFR", "CFRPlus", "DCFR", "SequenceTree"]


class SequenceTree:
    """Index arrays for sequence-form passes over a `GameTree`, computed once per game.

    Infosets are stored in an internal order sorted by own depth, so every level of the
    players' sequence trees is a contiguous slice. Sequences are numbered in an *extended*
    vector of length S + 1 whose entry 0 is the empty sequence (reach 1) and entry
    1 + k * A + a is the sequence (internal infoset k, action a).

    Attributes
    ----------
    order : (I,) int
        Game infoset index of each internal row; ``rank`` is its inverse.
    legal, uniform : (I, A) arrays in internal order.
    levels : list of (slice, parent_ext)
        The internal rows of own depth d and the extended index of each one's parent sequence.
    terminal_terms : dict
        For None (all players) and for each player i, a triple of arrays over the pairs
        (terminal z, player i) (row-major):
        own_ext, the extended index of i's last sequence before z; others_ext, the other
        players' last sequences ((k,) for two players, else (k, n - 1)); chance_payoff,
        pi_c(z) u_i(z). Pairs where i never acted are left out of the per-player triples.

    Parameters
    ----------
    game : GameTree

    Examples
    --------
    >>> import labkit as lk
    >>> tree = sequence_tree(lk.games.load("kuhn_poker"))
    >>> tree.num_sequences, [rows for rows, _ in tree.levels]
    (24, [slice(0, 9, None), slice(9, 12, None)])
    """

    def __init__(self, game: GameTree):
        I, A, n = game.num_infosets, game.num_actions, game.num_players
        self.num_infosets, self.num_actions, self.num_players = I, A, n
        self.num_sequences = I * A
        self.order = self._row_order(game)
        self.rank = np.empty(I, dtype=np.int64)
        self.rank[self.order] = np.arange(I)
        # extended index of every game sequence, shifted by one (entry 0 is the empty sequence, -1):
        # `extended` is then one gather instead of a division and a remainder per sequence
        self._extended_table = np.zeros(I * A + 1, dtype=np.int64)
        self._extended_table[1:] = 1 + (self.rank[:, None] * A + np.arange(A)).reshape(-1)
        self.legal = game.legal_mask[self.order]
        self.uniform = uniform_rows(self.legal)
        self.player = game.infoset_player[self.order]
        self._depth = game.infoset_own_depth[self.order]
        self._parent_ext = self.extended(game.infoset_parent_seq[self.order])
        self.levels = self._make_levels()
        # max_z |u_i(z)| of the acting player, per internal row: the payoff factor of the tie bound
        z = game.terminals
        largest = np.abs(game.returns[z]).max(axis=0) if len(z) else np.zeros(n)
        self.payoff_bound = largest[self.player]
        # the terms of each update (None: all players), computed on first use
        self._game = game
        self._terminal_rows = None
        self.terminal_terms = _Lazy(self._terminal_terms)
        self.decision_terms = _Lazy(self._decision_terms)
        self._kernel_plans: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}

    def _row_order(self, game):
        """Internal row order: by own depth, stably."""
        return np.argsort(game.infoset_own_depth, kind="stable")

    def _make_levels(self):
        """(slice of the rows of own depth d, their parent sequences) for d = 0, 1, ..."""
        bounds = np.searchsorted(self._depth, np.arange(int(self._depth.max(initial=0)) + 2)).tolist()
        return [(slice(a, b), self._parent_ext[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def _terminal_terms(self, player):
        """(own_ext, others_ext, chance_payoff) of the pairs (terminal z, player i) of update `player`."""
        game, n = self._game, self.num_players
        z = game.terminals
        if self._terminal_rows is None:                                   # shared by the updates
            self._terminal_rows = _chance_reach(game)[z], game.own_last_seq[z]
        chance, last = self._terminal_rows                                # last: (Z, n), game numbering
        if player is None:
            ext = self.extended(last)
            own_ext = ext.reshape(-1)
            others = np.stack([np.delete(ext, i, axis=1) for i in range(n)], axis=1).reshape(len(z) * n, n - 1)
            payoff = (chance[:, None] * game.returns[z]).reshape(-1)
        else:
            mine = (last[:, player] >= 0).nonzero()[0]                    # pairs where the player acted
            own_ext = self.extended(last[mine, player])
            others = self.extended(last[mine[:, None], [q for q in range(n) if q != player]])
            payoff = chance[mine] * game.returns[z[mine], player]
        return own_ext, (others[:, 0].copy() if n == 2 else others), payoff

    def _decision_terms(self, player):
        """(rows_h, others_h, chance_h) over the decision histories h of update `player`: the
        others' and chance's reach pi_{-i}(I) of an infoset is summed from its histories h, as
        pi_c(h) times the other players' realization weights of their last sequences before h."""
        game, n = self._game, self.num_players
        if player is not None:
            h = ((game.infoset >= 0) & (game.player == player)).nonzero()[0]
            others = self.extended(game.own_last_seq[h[:, None], [q for q in range(n) if q != player]])
        else:
            h = (game.infoset >= 0).nonzero()[0]
            last_h = self.extended(game.own_last_seq[h])                   # (D, n)
            others = last_h[np.arange(n) != game.player[h][:, None]].reshape(len(h), n - 1)
        return self.rank[game.infoset[h]], (others[:, 0].copy() if n == 2 else others), _chance_reach(game)[h]

    def kernel_plan(self) -> tuple[np.ndarray, np.ndarray]:
        """The same terms for the compiled kernel (labkit._cfr_kernels), built on first use.

        For each update (player 0, ..., n - 1, then all players at once as number n) its slice
        of concatenated arrays, given by offsets; the rows of each update grouped by own depth.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            One int32 and one float64 array (`labkit._native.pack`).

        Examples
        --------
        >>> import labkit as lk
        >>> index, numbers = sequence_tree(lk.games.load("kuhn_poker")).kernel_plan()
        >>> index.dtype, numbers.dtype
        (dtype('int32'), dtype('float64'))
        """
        return self._kernel_plan_for(range(self.num_players + 1))

    def _kernel_plan_for(self, updates):
        """`kernel_plan` with the terms of the given updates only (the others' are empty: a solver
        with alternating updates never runs update n, one with simultaneous updates only runs it)."""
        updates = tuple(updates)
        plan = self._kernel_plans.get(updates)
        if plan is None:
            from labkit import _native
            parts = self._kernel_parts(updates)
            plan = self._kernel_plans[updates] = (_native.pack(parts, _native.INDEX_PARTS, np.int32),
                                                  _native.pack(parts, _native.FLOAT_PARTS, np.float64))
        return plan

    def _kernel_parts(self, updates):
        n, I = self.num_players, self.num_infosets
        depth = self._depth
        depths = int(depth.max(initial=0)) + 1
        groups = [(self.player == p).nonzero()[0] for p in range(n)] + [depth.argsort(kind="stable")]
        rows = np.concatenate(groups).astype(np.int64)
        starts = list(itertools.accumulate([len(g) for g in groups], initial=0))
        # row_level[u, d]: where update u's rows of own depth d start in `rows`
        row_level = np.array([start + np.searchsorted(depth[g], np.arange(depths + 1))
                              for start, g in zip(starts, groups, strict=False)], dtype=np.int64)
        # where each row comes in its update's group (the regret update visits them in that order)
        position = np.empty((n + 1, I), dtype=np.int64)
        for u, g in enumerate(groups):
            position[u, g] = np.arange(len(g))
        term = self._grouped(self.terminal_terms, updates)
        dec = self._grouped(self.decision_terms, updates, position)
        # the regret update visits each update's rows in `rows` order and reads their runs of
        # decision-history terms in turn: one run per row (every infoset has a history), same order
        for u in range(n + 1):
            runs = dec[1][dec[2][u]:dec[2][u + 1]]
            if u in updates and not np.array_equal(runs, groups[u]):
                raise AssertionError("the decision-history runs are not in the order of the kernel's rows")
        return dict(
            parent_ext=self._parent_ext, term_start=term[0], term_target=term[1], term_off=term[2],
            term_others=term[3], term_payoff=term[4], dec_start=dec[0], dec_off=dec[2], dec_others=dec[3],
            dec_chance=dec[4], rows=rows, row_level=row_level, payoff_bound=self.payoff_bound,
            legal=self.legal.astype(np.float64), uniform=self.uniform)

    def _grouped(self, table, updates, place=None):
        """Each update's terms (from `table`, one entry per update: player p, or None for all)
        sorted (stably) by the entry they add to (or, with `place`, by that entry's place in the
        update's rows), and the runs of equal entries: a run is summed in a register, from 0.0 in
        the original order, as np.bincount sums it, instead of through memory (a chain of
        dependent loads and stores). Updates not in `updates` have no terms, so no runs."""
        n = self.num_players
        run_start, run_target, run_off, others, numbers = [], [], [0], [], []
        base = 0
        for u in range(n + 1):
            if u not in updates:
                run_off.append(run_off[-1])
                continue
            target, other, number = table[u if u < n else None]
            sort = (target if place is None else place[u][target]).argsort(kind="stable")
            sorted_target = target[sort]
            starts = _run_starts(sorted_target)
            run_start.append(base + starts)
            run_target.append(sorted_target[starts])
            run_off.append(run_off[-1] + len(starts))
            others.append(np.asarray(other).reshape(len(target), n - 1)[sort])
            numbers.append(number[sort])
            base += len(target)
        run_start.append(np.array([base]))          # where the last run ends
        return (np.concatenate(run_start), np.concatenate(run_target), np.array(run_off, dtype=np.int64),
                np.concatenate(others), np.concatenate(numbers))

    def extended(self, game_seq: Any) -> np.ndarray:
        """Extended index (0 = empty) of game sequences J * A + a (-1 = empty).

        Parameters
        ----------
        game_seq : int array_like
            Sequences in the game's numbering, infoset J * A + action a, or -1.

        Returns
        -------
        int array
            1 + (internal row of J) * A + a, or 0 for -1.

        Examples
        --------
        >>> import labkit as lk
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> sequence_tree(kuhn).extended([-1, kuhn.infoset_index("Q|p") * 2 + 1])
        array([0, 8])
        """
        return self._extended_table[np.asarray(game_seq) + 1]

    def to_game_order(self, rows: np.ndarray) -> np.ndarray:
        """(I, ...) rows in internal order -> the game's infoset order.

        Parameters
        ----------
        rows : (I, ...) array

        Returns
        -------
        (I, ...) array

        Examples
        --------
        >>> import numpy as np
        >>> import labkit as lk
        >>> tree = sequence_tree(lk.games.load("kuhn_poker"))
        >>> rows = np.arange(12)
        >>> bool((tree.to_game_order(tree.from_game_order(rows)) == rows).all())
        True
        """
        return rows[self.rank]

    def from_game_order(self, rows: np.ndarray) -> np.ndarray:
        """(I, ...) rows in the game's infoset order -> internal order (inverse of `to_game_order`).

        Parameters
        ----------
        rows : (I, ...) array

        Returns
        -------
        (I, ...) array

        Examples
        --------
        >>> import numpy as np
        >>> import labkit as lk
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> tree = sequence_tree(kuhn)
        >>> [kuhn.infoset_keys[i] for i in tree.from_game_order(np.arange(12))][-3:]   # own depth 1 last
        ['J|pb', 'Q|pb', 'K|pb']
        """
        return rows[self.order]


def sequence_tree(game: GameTree) -> SequenceTree:
    """The `SequenceTree` of `game`, built on first use and cached on the game.

    Parameters
    ----------
    game : GameTree

    Returns
    -------
    SequenceTree

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> sequence_tree(kuhn) is sequence_tree(kuhn)
    True
    """
    cached = game.__dict__.get("_sequence_tree")
    if cached is None:
        cached = game.__dict__["_sequence_tree"] = SequenceTree(game)
    return cached


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal entries of `values` starts (0 first, unless `values` is empty)."""
    change = np.empty(len(values), dtype=bool)
    change[:1] = True
    np.not_equal(values[1:], values[:-1], out=change[1:])
    return change.nonzero()[0]


class _Lazy(dict):
    """A dict that computes a missing entry as make(key), once."""

    def __init__(self, make):
        super().__init__()
        self._make = make

    def __missing__(self, key):
        value = self[key] = self._make(key)
        return value


class _PlayerSequenceTree(SequenceTree):
    """The `SequenceTree` the CFR solvers work on: internal rows ordered by player, then by own
    depth (stably), so that an alternating update works on one contiguous block of rows,
    ``blocks[p]``, and each (player, own depth) is a slice. ``levels`` lists those slices, player
    after player and by own depth, and ``level_player[k]`` is the player of ``levels[k]``."""

    def _row_order(self, game):
        return np.lexsort((game.infoset_own_depth, game.infoset_player))

    def _make_levels(self):
        n = self.num_players
        width = int(self._depth.max(initial=0)) + 1
        key = self.player * width + self._depth                 # nondecreasing in this order
        bounds = np.searchsorted(key, np.arange(n * width + 1)).tolist()
        self.blocks = [slice(bounds[p * width], bounds[(p + 1) * width]) for p in range(n)]
        levels, self.level_player = [], []
        for k in range(n * width):
            if bounds[k + 1] > bounds[k]:
                levels.append((slice(bounds[k], bounds[k + 1]), self._parent_ext[bounds[k]:bounds[k + 1]]))
                self.level_player.append(k // width)
        return levels


def _solver_tree(game) -> _PlayerSequenceTree:
    """The `_PlayerSequenceTree` of `game`, built on first use and cached on the game."""
    cached = game.__dict__.get("_player_sequence_tree")
    if cached is None:
        cached = game.__dict__["_player_sequence_tree"] = _PlayerSequenceTree(game)
    return cached


class _CounterfactualPass:
    """Steps 2-3 of an iteration with preallocated buffers (one per solver), over the rows of a
    `_PlayerSequenceTree`: one player's rows (an alternating update) or every player's."""

    def __init__(self, tree: SequenceTree):
        self.tree = tree
        I, A = tree.num_infosets, tree.num_actions
        self.reach_ext = np.ones(I * A + 1)                  # entry 0: the empty sequence
        self.reach = self.reach_ext[1:].reshape(I, A)        # x_i(I, a), a view
        self.q_ext = np.zeros(I * A + 1)
        self.value = np.empty(I)
        self._players: dict[int, tuple[Any, ...]] | None = None   # index arrays per player, made on first use

    def _player_arrays(self, p):
        """Player p's levels for the top-down pass (views of the reach buffer, (k, 1) parent
        indices to broadcast) and the bottom-up pass (level d's values add into level d - 1's
        sequences), with indices local to its block, and its terms with local targets."""
        if self._players is None:
            self._players = {}
        arrays = self._players.get(p)
        if arrays is None:
            tree, A = self.tree, self.tree.num_actions
            block = tree.blocks[p]
            lo = 1 + block.start * A                              # first extended index of the block
            mine = [(rows, parent_ext)
                    for (rows, parent_ext), q in zip(tree.levels, tree.level_player, strict=True) if q == p]
            down = [(self.reach[rows], parent_ext[:, None]) for rows, parent_ext in mine[1:]]
            up = []
            for d in range(len(mine) - 1, -1, -1):
                rows, parent_ext = mine[d]
                local = slice(rows.start - block.start, rows.stop - block.start)
                if d == 0:
                    up.append((local, None, None, 0))
                    continue
                above = mine[d - 1][0]
                first = 1 + above.start * A
                up.append((local, parent_ext - first, slice(first - lo, first - lo + (above.stop - above.start) * A),
                           (above.stop - above.start) * A))
            own_ext, others_ext, chance_payoff = tree.terminal_terms[p]
            rows_h, others_h, chance_h = tree.decision_terms[p]
            arrays = self._players[p] = (block, down, up, (own_ext - lo, others_ext, chance_payoff),
                                         (rows_h - block.start, others_h, chance_h))
        return arrays

    def __call__(self, sigma, player=None, stale=None):
        """Own reach x (I, A), counterfactual action values q, infoset values v and the others' and
        chance's reach pi_{-i}(I) under `sigma` (internal order), at every player's infosets
        (player None: q (I, A), v and pi_{-i} (I,)) or at one player's (q, v and pi_{-i} over
        its block of rows only). The own reach is recomputed at the rows of the players in
        `stale` (None: all; the others' rows hold it from an earlier call with the same policy
        there). x, q and v are reused buffers."""
        tree = self.tree
        n, A = tree.num_players, tree.num_actions
        reach, reach_ext = self.reach, self.reach_ext
        for p in range(n) if stale is None else stale:
            block, down = self._player_arrays(p)[:2]
            np.copyto(reach[block], sigma[block])
            for rows, parent_ext in down:                      # x(I, a) = x(parent seq) sigma(I, a)
                rows *= reach_ext[parent_ext]
        if player is not None:
            block = self.tree.blocks[player]
            q, others_reach = self._values(player, sigma, self.value[:block.stop - block.start])
            return reach, q, self.value[:len(others_reach)], others_reach
        q_ext, v, others_reach = self.q_ext, self.value, np.zeros(tree.num_infosets)
        for p in range(n):
            block = tree.blocks[p]
            q_ext[1 + block.start * A:1 + block.stop * A] = self._values(p, sigma, v[block])[0].reshape(-1)
            others_reach[block] = self._values_others
        return reach, q_ext[1:].reshape(sigma.shape), v, others_reach

    def _values(self, p, sigma, v):
        """Player p's counterfactual action values q (its rows, (k, A)) and the others' and chance's
        reach of its infosets (k,); its infoset values into v (k,)."""
        block, _, up, terminal, decision = self._player_arrays(p)
        reach_ext = self.reach_ext
        A = self.tree.num_actions
        own_local, others_ext, chance_payoff = terminal
        weight = reach_ext[others_ext]
        if weight.ndim == 2:
            weight = weight.prod(axis=1)
        weight *= chance_payoff                                 # pi_{-i}(z) u_i(z)
        q_local = np.bincount(own_local, weight, minlength=(block.stop - block.start) * A)
        q = q_local.reshape(-1, A)
        mine = sigma[block]
        for rows, parent_local, parent_block, size in up:
            _row_sums(mine[rows] * q[rows], v[rows])           # v(I) = sum_a sigma(I, a) q(I, a)
            if parent_local is not None:
                q_local[parent_block] += np.bincount(parent_local, v[rows], minlength=size)
        rows_h, others_h, chance_h = decision
        weight_h = reach_ext[others_h]
        if weight_h.ndim == 2:
            weight_h = weight_h.prod(axis=1)
        weight_h *= chance_h
        self._values_others = others = np.bincount(rows_h, weight_h, minlength=block.stop - block.start)
        return q, others


def _row_sums(x, out):
    """``np.add.reduce(x, axis=1, out=out)`` for a (k, A) array, with the same bits: numpy adds a
    row of fewer than 8 numbers left to right from 0.0, which column after column is the same
    arithmetic without numpy's loop per row (several times faster for A = 2 or 3); rows of 8
    numbers or more, which numpy sums pairwise, are left to numpy."""
    A = x.shape[1]
    if A >= 8:
        return np.add.reduce(x, axis=1, out=out)
    np.add(x[:, 0], 0.0, out=out)
    for a in range(1, A):
        np.add(out, x[:, a], out=out)
    return out


def _regret_matching(regrets: np.ndarray, legal: np.ndarray, uniform: np.ndarray, out: np.ndarray,
                     scale: np.ndarray, total: np.ndarray, tolerance: float) -> np.ndarray:
    """`labkit.regret.regret_matching(regrets, legal, uniform, out, scale, tolerance)` with the same
    bits, its row sums by `_row_sums` into the buffer `total` (k,)."""
    positive = np.where(regrets > tolerance * scale, regrets, 0.0)
    positive *= legal
    total = _row_sums(positive, total)[:, None]
    np.copyto(out, uniform)                   # kept where no regret is positive
    np.divide(positive, total, out=out, where=total > 0.0)
    return out


_ALTERNATING, _DISCOUNT, _RM_PLUS = 1, 2, 4          # the kernel's `mode` bits (labkit._cfr_kernels)


class CFR(Solver):
    r"""Counterfactual regret minimization (Zinkevich et al., 2007), vectorized over the tree.

    Iteration t plays :math:`\sigma^t` = regret matching of the cumulative counterfactual regrets

    .. math:: R^T(I, a) = \sum_{t=1}^{T} \big( q^t(I, a) - v^t(I) \big), \qquad
              \sigma^{T+1}(a \mid I) = \frac{R^{T,+}(I, a)}{\sum_b R^{T,+}(I, b)},

    with :math:`q^t` the counterfactual action values of `labkit.counterfactual_values` under
    :math:`\sigma^t`; the average policy weights each :math:`\sigma^t` by the player's own reach.
    Its NashConv goes to 0 like :math:`O(1/\sqrt{T})` in two-player zero-sum games (module
    docstring for the steps of one iteration).

    Parameters
    ----------
    game : str or GameTree
        Anything `labkit.games.load` accepts.
    alternating_updates : bool
        False (default, the chapter's CFR): both players update from the same policy each
        iteration, like OpenSpiel's ``cfr._CFRSolver(alternating_updates=False)``. True: players
        update in turn, like OpenSpiel's ``CFRSolver``.
    regret_matching_plus : bool
        Floor the cumulative regrets at 0 after every update (RM+).
    linear_averaging : bool
        Weight iteration t's policy by t in the average.
    tie_tolerance : float
        Regrets count as ties (as exactly 0) while their magnitude is at most ``tie_tolerance``
        times the largest term they were summed from, :math:`\pi_{-i}(I) \max_z |u_i(z)|` per
        iteration (`labkit.regret`). The default, ``labkit.regret.TIE_TOLERANCE`` = 1e-10, makes
        CFR follow exact rational arithmetic on games with ties; it also means that a decision
        worth less than 1e-10 of the game's largest payoff is treated as a tie (in a game with
        stakes of 1e4, a difference of 1e-6 at an infoset reached with probability 1). 0 compares
        with 0 exactly, as textbook CFR does.

    Attributes
    ----------
    game : GameTree
    iteration : int
    cumulative_regret, policy_sum : (I, A) float arrays
        R and the average-policy numerator S, in the internal order of ``tree``
        (`SequenceTree.to_game_order` maps them back).
    backend : {"numpy", "numba"}
        Which implementation runs the iterations (`labkit.kernels`; the same numbers).

    Raises
    ------
    TypeError
        If a flag is not a bool.
    ValueError
        If `tie_tolerance` is not a number in [0, 1).

    Notes
    -----
    Where numba is installed, an iteration runs as one compiled kernel (`labkit.kernels`) that
    repeats the numpy passes below operation for operation, so the numbers are the same bit for
    bit: a small C library (`labkit._native`, loaded in milliseconds) where a C compiler is
    available, else numba's (`labkit._cfr_kernels`). ``lk.kernels.use("numpy")`` runs the numpy
    code itself. A solver with another ``tie_tolerance`` than the default runs the numpy code.

    References
    ----------
    M. Zinkevich, M. Johanson, M. Bowling and C. Piccione (2007), "Regret minimization in games
    with incomplete information", NeurIPS.

    Examples
    --------
    >>> import labkit as lk
    >>> solver = lk.CFR("kuhn_poker")
    >>> _ = solver.run(100)
    >>> round(lk.nash_conv(solver.game, solver.average_policy()), 4)
    0.0513

    The tie tolerance in action: a row player whose first action is better by 1e-6 (against the
    first column) in a game whose stakes reach 1e4. By default the difference is a tie and CFR
    stays at [0.5, 0.5]; with ``tie_tolerance=0`` the first action wins.

    >>> game = lk.games.MatrixGame([[1e-6, 1e4], [0.0, 1e4]], [[0.0, 0.0], [0.0, 0.0]],
    ...                            row_actions=["edge", "plain"], col_actions=["left", "right"])
    >>> for tolerance in (1e-10, 0.0):
    ...     solver = lk.CFR(game, tie_tolerance=tolerance)
    ...     _ = solver.run(10)
    ...     print(solver.current_policy()["row"])
    {'edge': 0.5, 'plain': 0.5}
    {'edge': 1.0, 'plain': 0.0}
    """

    def __init__(self, game: GameLike, alternating_updates: bool = False, regret_matching_plus: bool = False,
                 linear_averaging: bool = False, tie_tolerance: float = TIE_TOLERANCE):
        super().__init__(game)
        for name, flag in (("alternating_updates", alternating_updates),
                           ("regret_matching_plus", regret_matching_plus),
                           ("linear_averaging", linear_averaging)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {show(flag)}")
        self.alternating_updates = bool(alternating_updates)
        self.regret_matching_plus = bool(regret_matching_plus)
        self.linear_averaging = bool(linear_averaging)
        self.tie_tolerance = _check_tolerance(tie_tolerance)
        self.tree = _solver_tree(self.game)
        shape = self.tree.legal.shape
        self.cumulative_regret = np.zeros(shape)     # R(I, a), internal order
        self.policy_sum = np.zeros(shape)            # S(I, a), internal order
        self.regret_scale = np.zeros((shape[0], 1))  # cumulative tie bound of each row (labkit.regret)
        self._sigma = self.tree.uniform.copy()       # regret matching of R
        self._stale = None                           # whose own reach the pass must recompute (None: all)
        # the compiled kernel replays exactly CFR's, CFR+'s and DCFR's updates: a subclass that
        # changes an update keeps the numpy version
        cls = type(self)
        self.backend = kernels.backend()
        self._compiled = (self.backend == "numba" and cls._update is CFR._update and cls._step is CFR._step
                          and cls._discount_regrets in (CFR._discount_regrets, DCFR._discount_regrets)
                          and self.tie_tolerance == TIE_TOLERANCE)      # the kernel has the default built in
        if self._compiled:
            I, A = shape
            S = I * A + 1
            self._work = np.zeros(3 * S + I)                 # reach_ext, q_ext, v, acc of the kernel
            self._work[:S] = 1.0
            self._schedule = np.ones(3)                      # step(): weight, positive, negative
            self._mode = ((_ALTERNATING if self.alternating_updates else 0)
                          | (_RM_PLUS if self.regret_matching_plus else 0))
            # the C library where it builds (loads in milliseconds), else numba's kernel: the same loops
            native = _native.cfr_iterations()
            if native is not None:
                self._kernel = _native.CfrIterations(native, TIE_TOLERANCE)
            else:         # compiled (or loaded from numba's cache) at the first call, which says so if it compiles
                kernels.bind(self, "_kernel", kernels.load("labkit._cfr_kernels").iterations)
            self._plan = self.tree._kernel_plan_for(range(self.game.num_players) if self.alternating_updates
                                                    else (self.game.num_players,)) + (self._work,)

    # what only the numpy updates use is made on first use (the compiled kernel has its own)
    @functools.cached_property
    def _update_masks(self) -> dict[int | None, np.ndarray]:
        """The legal actions, as 0/1, of every row (None) and of each player's rows."""
        legal = self.tree.legal.astype(float)
        masks: dict[int | None, np.ndarray] = {None: legal}
        for p in range(self.game.num_players):
            masks[p] = legal * (self.tree.player == p)[:, None]
        return masks

    @functools.cached_property
    def _pass(self) -> _CounterfactualPass:
        return _CounterfactualPass(self.tree)

    @functools.cached_property
    def _scratch(self) -> np.ndarray:
        """The tie test's buffer for |instantaneous regrets|."""
        return np.empty(self.tree.legal.shape)

    @functools.cached_property
    def _small(self) -> np.ndarray:
        """The tie tests' buffer for their verdicts."""
        return np.empty(self.tree.legal.shape, dtype=bool)

    # -- one iteration -------------------------------------------------------------
    def _step(self):
        t = self.iteration + 1
        if self._compiled:
            self._compiled_iterations(t, 1)
            return
        if self.alternating_updates:
            for player in range(self.game.num_players):
                self._update(t, player)
        else:
            self._update(t, None)

    def _steps(self, count):
        """`count` iterations; the numba backend runs them in one compiled call."""
        if not self._compiled:
            return super()._steps(count)
        self._compiled_iterations(self.iteration + 1, count)
        self.iteration += count

    def _compiled_iterations(self, first, count):
        """Iterations first, ..., first + count - 1 by `labkit._cfr_kernels` (same numbers)."""
        # the per-iteration numbers, from the same Python expressions as the numpy backend
        schedule = self._schedule if count == 1 else np.ones(3 * count)
        for k in range(count):
            schedule[k] = self._average_weight(first + k)
        mode = self._mode
        if self._discount_factors(first) is not None:
            mode |= _DISCOUNT
            for k in range(count):
                schedule[count + k], schedule[2 * count + k] = self._discount_factors(first + k)
        self._kernel(mode, schedule, self._sigma, self.cumulative_regret, self.policy_sum, self.regret_scale,
                     *self._plan)

    def _average_weight(self, t):
        return float(t) if self.linear_averaging else 1.0

    def _discount_factors(self, t):
        """DCFR's (positive, negative) regret discounts after iteration t; None: no discount."""
        return None

    def _discount_regrets(self, t, player):
        """Hook for DCFR: rescale the cumulative regrets after an update."""

    def _update(self, t, player):
        """Steps 2-5 for one player (alternating updates) or all of them (player None)."""
        tree = self.tree
        rows = slice(0, tree.num_infosets) if player is None else tree.blocks[player]
        # the own reach changed only where the previous update changed the policy
        reach, q, v, others_reach = self._pass(self._sigma, player, self._stale)
        self._stale = None if player is None else (player,)
        legal = self._update_masks[None][rows]              # legal actions of the updated rows, as 0/1
        instant = q - v[:, None]                              # q(I, a) - v(I)
        instant *= legal
        bound = (others_reach * tree.payoff_bound[rows])[:, None]
        # exact ties become exact zeros: clean_ties(instant, bound), with reused buffers
        small = np.less_equal(np.abs(instant, out=self._scratch[rows]), self.tie_tolerance * bound,
                              out=self._small[rows])
        np.copyto(instant, 0.0, where=small)
        regrets, scale = self.cumulative_regret[rows], self.regret_scale[rows]
        regrets += instant
        scale += bound
        weight = self._average_weight(t)
        if player is None and weight == 1.0:
            self.policy_sum += reach
        else:
            self.policy_sum[rows] += reach[rows] * (weight * legal)
        if self.regret_matching_plus:
            # RM+: floor at 0, and so also everything within the tie tolerance of 0
            small = np.less_equal(regrets, self.tie_tolerance * scale, out=self._small[rows])
            np.copyto(regrets, 0.0, where=small)
        self._discount_regrets(t, player)
        _regret_matching(self.cumulative_regret[rows], legal, tree.uniform[rows], self._sigma[rows],
                         self.regret_scale[rows], self._pass.value[:legal.shape[0]], self.tie_tolerance)

    # -- policies ------------------------------------------------------------------
    def current_policy(self) -> TabularPolicy:
        r"""The policy of the next iteration, :math:`\sigma^{T+1}`: regret matching on the regrets
        after T iterations (uniform at T = 0).

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.CFR("kuhn_poker")
        >>> solver.current_policy()["K|b"]
        {'pass': 0.5, 'bet': 0.5}
        >>> solver.step().current_policy()["K|b"]           # calling with the king has no regret
        {'pass': 0.0, 'bet': 1.0}
        """
        return TabularPolicy(self.game, self.tree.to_game_order(self._sigma), check=False)

    def average_policy(self) -> TabularPolicy:
        r"""The reach-weighted average policy, the one that converges to an equilibrium:

        .. math:: \bar\sigma(a \mid I) = \frac{S(I, a)}{\sum_b S(I, b)}, \qquad
                  S(I, a) = \sum_t w_t\, x_i^t(I)\, \sigma^t(a \mid I),

        with :math:`x_i^t(I)` the player's own reach and :math:`w_t` the averaging weight (1, t
        or :math:`t^\gamma`); uniform where S is all zero.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.CFRPlus("kuhn_poker")
        >>> _ = solver.run(1000)
        >>> round(solver.average_policy()["K|b"]["bet"], 3)
        1.0
        """
        total = self.policy_sum.sum(axis=1, keepdims=True)
        empty = total <= 0.0
        probs = (self.policy_sum + empty * self.tree.uniform) / (total + empty)
        return TabularPolicy(self.game, self.tree.to_game_order(probs), check=False)


class CFRPlus(CFR):
    r"""CFR+ (Tammelin, 2014): regret matching+, alternating updates, linear averaging, no delay.

    The cumulative regrets are floored at 0 after every update,
    :math:`Q^t = \max(Q^{t-1} + q^t - v^t, 0)`, and iteration t enters the average with weight t.
    The same algorithm as OpenSpiel's ``CFRPlusSolver`` and the chapter's CFR+.

    Parameters
    ----------
    game : str or GameTree
    tie_tolerance : float
        As in `CFR` (default 1e-10 of the terms' magnitude; 0 for exact comparisons).

    References
    ----------
    O. Tammelin (2014), "Solving large imperfect information games using CFR+", arXiv:1407.5042.

    Examples
    --------
    The chapter's Kuhn table: CFR+ after 1000 iterations.

    >>> import labkit as lk
    >>> solver = lk.CFRPlus("kuhn_poker")
    >>> _ = solver.run(1000)
    >>> round(lk.nash_conv(solver.game, solver.average_policy()), 4)
    0.0002
    """

    def __init__(self, game: GameLike, tie_tolerance: float = TIE_TOLERANCE):
        super().__init__(game, alternating_updates=True, regret_matching_plus=True, linear_averaging=True,
                         tie_tolerance=tie_tolerance)


class DCFR(CFR):
    r"""Discounted CFR (Brown and Sandholm, 2019), alternating updates.

    After player i's update at iteration t its cumulative regrets are multiplied by
    :math:`t^\alpha / (t^\alpha + 1)` where they are >= 0 and by :math:`t^\beta / (t^\beta + 1)`
    where negative; iteration t enters the average with weight :math:`t^\gamma`. The defaults
    (1.5, 0, 2) are the paper's; (1, 1, 1) is linear CFR. Matches OpenSpiel's
    ``discounted_cfr.DCFRSolver``.

    Parameters
    ----------
    game : str or GameTree
    alpha, beta, gamma : float
        The discount exponents (finite numbers).
    tie_tolerance : float
        As in `CFR`.

    Raises
    ------
    TypeError, ValueError
        If an exponent is not a finite number.

    References
    ----------
    N. Brown and T. Sandholm (2019), "Solving imperfect-information games via discounted regret
    minimization", AAAI.

    Examples
    --------
    >>> import labkit as lk
    >>> solver = lk.DCFR("kuhn_poker")
    >>> _ = solver.run(1000)
    >>> lk.nash_conv(solver.game, solver.average_policy()) < 1e-3
    True
    """

    def __init__(self, game: GameLike, alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0,
                 tie_tolerance: float = TIE_TOLERANCE):
        super().__init__(game, alternating_updates=True, regret_matching_plus=False, linear_averaging=True,
                         tie_tolerance=tie_tolerance)
        for name, value in (("alpha", alpha), ("beta", beta), ("gamma", gamma)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise TypeError(f"{name} must be a number, got {show(value)}")
            if not np.isfinite(value):
                raise ValueError(f"{name} must be finite, got {show(value)}")
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)

    def _average_weight(self, t):
        return float(t) ** self.gamma

    def _discount_factors(self, t):
        return t ** self.alpha / (t ** self.alpha + 1.0), t ** self.beta / (t ** self.beta + 1.0)

    def _discount_regrets(self, t, player):
        positive, negative = self._discount_factors(t)
        factor = np.where(self.cumulative_regret >= 0.0, positive, negative)
        rows = self.tree.player == player
        self.cumulative_regret[rows] *= factor[rows]
        # the tie bound shrinks at most like the regrets it bounds
        self.regret_scale[rows] *= max(positive, negative)
