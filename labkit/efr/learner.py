r"""Extensive-form regret minimization (EFR), exact and vectorized.

Morrill, D'Orazio, Lanctot, Wright, Bowling and Greenwald (2021), "Efficient Deviation Types and
Learning for Hindsight Rationality in Extensive-Form Games" (ICML), in the notation of chapter 6;
`labkit.efr.deviations` builds the (infoset, transformation sequence) rows.

One round, for every learning player i against a profile :math:`\pi^t`:

1. Counterfactual action values :math:`q_I(a)` of every decision point I of i (one tree pass),
   and the set of decision points the other players and chance reach with positive probability.
2. Immediate regrets of the action transformations at I:

   .. math::

      \rho_I(\text{every action} \to b) = q_I(b) - \langle \pi(I), q_I \rangle, \qquad
      \rho_I(a \to b) = \pi(a \mid I)\,\bigl(q_I(b) - q_I(a)\bigr).

3. Cumulative regrets, one per (I, sequence s, transformation :math:`\phi`), plain sums with no
   floor: :math:`R_I[s, \phi] \mathrel{+}= w_I(s; \pi_i^t)\, \rho_I(\phi)`.
4. Top-down over i's own depth (the weights use the *new* strategy at the predecessors):

   .. math:: y_\phi = \sum_s w_I(s; \pi_i^{t+1}) \max(R_I[s, \phi], 0),

   and :math:`\pi_i^{t+1}(I)` is the regret-matching fixed point of
   :math:`\sigma \mapsto \frac{1}{z} \sum_\phi y_\phi\, \phi(\sigma)`
   (`labkit.efr.fixed_point`). Decision points not reached by the others keep their strategy.

With deviations="cf" every weight is 1 and only external transformations exist: EFR is vanilla
CFR with simultaneous updates.

Exact ties (with fixed_point="exact", the default): as in `labkit.regret`, an immediate regret
within TIE_TOLERANCE of its bound :math:`\pi_{-i}(I) \max_z |u_i(z)|` is set to exactly 0, every
row keeps the cumulative bound :math:`\sum_t w_I(s; \pi^t)\, \pi_{-i}^t(I) \max_z |u_i(z)|` of
its regrets, and a cumulative regret counts as positive in :math:`y_\phi` only above TIE_TOLERANCE
times that bound. So EFR("cf") and CFR make the same decisions at exact ties (and match exact
rational arithmetic). "lstsq" and "paper" keep the rounding residues: they exist to show (and, for
"paper", replay) what the authors' floating point does.
"""
from __future__ import annotations

import numpy as np

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from labkit._messages import show
from labkit.efr import paper_numerics
from labkit.efr.deviations import (DeviationType, describe_row, describe_slot, deviation_structure,
                                   parse_deviation_type)
from labkit.efr.fixed_point import FIXED_POINT_RULES, transformation_fixed_point
from labkit.evaluate import PolicyLike, edge_probabilities, policy_array
from labkit.policy import TabularPolicy, infoset_own_reach, normalize_rows
from labkit.regret import TIE_TOLERANCE, clean_ties
from labkit.solver import Solver

if TYPE_CHECKING:
    from labkit.games import GameLike


class EFR(Solver):
    r"""Extensive-form regret minimization with one deviation type, for every player.

    Each round every player's cumulative regrets for the type's (memory, transformation) pairs
    grow by the round's immediate regrets weighted by the memory's probability, and its new
    strategy is the fixed point of the positive-regret-weighted transformations (module
    docstring). Its regret for every deviation of the type grows as
    :math:`O(\sqrt{T})` (Theorem 1 of the paper; `labkit.hindsight.theorem1_bound`).

    Parameters
    ----------
    game : str or GameTree
        Any game labkit loads (n players, general-sum).
    deviations : str or DeviationType
        A member of `DeviationType` or its value (`labkit.efr.DEVIATION_NAMES` lists them all,
        from the weakest, blind action "act", to the behavioral deviations "bhv").
    record_profiles : bool
        Keep every current profile in `profiles` (default). Long runs on big games that only
        need the current profile can switch it off to save memory.
    fixed_point : {"exact", "lstsq", "paper"}
        How regret matching over internal transformations picks its fixed point
        (`labkit.efr.fixed_point`): "exact" (default) is deterministic and gives transient actions
        exactly 0; "lstsq" is a floating-point least squares like the authors', for showing how
        much rounding alone moves the rounding-sensitive results; "paper" is the authors'
        computation bit for bit: their Eigen solver (`labkit.efr.eigen`, compiled on first use)
        and every sum of the round in their order (`labkit.efr.paper_numerics`). It reproduces
        the paper's Leduc tables to the printed decimal; its round runs compiled, two to six
        times faster than the default's numpy round (Leduc and goofspiel(4), 2026-12-01).

    Attributes
    ----------
    iteration : int
        Number of rounds played.
    profiles : list of (num_infosets, num_actions) arrays
        The current profile before round 1 (uniform), then after every round: T + 1 entries
        (only the latest one if `record_profiles` is False). profiles[t] is the profile played
        in round t + 1.
    regrets : (num_rows, num_slots) array
        Cumulative regrets, one row per (infoset, transformation sequence) of `structure`.
    structure : DeviationStructure
        The rows and slots of the type on this game (`labkit.efr.deviation_structure`).

    Raises
    ------
    TypeError, ValueError
        For an unknown deviation type or fixed point, or a `record_profiles` that is not a bool.
    ImportError
        With fixed_point="paper", when the compiler or Eigen's headers are missing.

    References
    ----------
    D. Morrill, R. D'Orazio, M. Lanctot, J. R. Wright, M. Bowling and A. R. Greenwald (2021),
    "Efficient deviation types and learning for hindsight rationality in extensive-form games", ICML.

    Examples
    --------
    >>> import labkit as lk
    >>> efr = lk.EFR("kuhn_poker", deviations="tips")
    >>> _ = efr.run(50)
    >>> round(lk.nash_conv(efr.game, efr.average_policy()), 4)
    0.0712
    >>> len(efr.profiles), efr.structure.num_rows
    (51, 18)
    """

    def __init__(self, game: GameLike, deviations: DeviationType | str = "cf", record_profiles: bool = True,
                 fixed_point: str = "exact"):
        super().__init__(game)
        if not isinstance(fixed_point, str) or fixed_point not in FIXED_POINT_RULES:
            raise ValueError(f"fixed_point must be one of {FIXED_POINT_RULES}, got {fixed_point!r}")
        self.fixed_point = fixed_point
        if fixed_point == "paper":
            from labkit.efr.eigen import require
            require()               # fail here, naming what to install, not in the first update
        if not isinstance(record_profiles, (bool, np.bool_)):
            raise TypeError(f"record_profiles must be True or False, got {show(record_profiles)}")
        self.record_profiles = bool(record_profiles)
        self.deviations = parse_deviation_type(deviations)
        self.structure = deviation_structure(self.game, self.deviations)
        g, st = self.game, self.structure
        self.regrets = np.zeros((st.num_rows, st.num_slots))
        self.regret_scale = np.zeros(st.num_rows)          # cumulative tie bound per row (labkit.regret)
        largest = np.abs(g.returns[g.terminals]).max(axis=0) if len(g.terminals) else np.zeros(g.num_players)
        self._payoff_bound = largest[g.infoset_player]      # max_z |u_i(z)| of each infoset's player
        # the current strategy as a flat vector with a trailing 1.0, so that padded weight factors
        # gather a neutral entry
        self._flat = np.ones(g.num_infosets * g.num_actions + 1)
        self._flat[:-1] = (g.legal_mask / g.legal_mask.sum(axis=1, keepdims=True)).reshape(-1)
        self._average_numerator = np.zeros(g.legal_mask.shape)
        self.profiles = [self._probs.copy()]
        self._external_offset = 0 if st.has_external else None
        self._internal_offset = st.internal_offset if st.has_internal else None
        self._player_infosets = [g.infoset_player == p for p in range(g.num_players)]
        self._weights: dict[int, np.ndarray] = {}    # player -> time-selection weights of its rows, current strategy
        self._player_rows = {p: slice(b[0][0].start, b[-1][0].stop) if b else slice(0, 0)
                             for p, b in st.blocks.items()}

    # ------------------------------------------------------------------ policies
    @property
    def _probs(self) -> np.ndarray:
        """The current profile, a (num_infosets, num_actions) view of the flat strategy vector."""
        g = self.game
        return self._flat[:-1].reshape(g.num_infosets, g.num_actions)

    def current_policy(self) -> TabularPolicy:
        """The profile played in the next round (a copy).

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> efr = lk.EFR("kuhn_poker", deviations="cf")
        >>> print(efr.step().current_policy().probs[:3].round(3))
        [[0. 1.]
         [0. 1.]
         [0. 1.]]
        """
        return TabularPolicy(self.game, self._probs.copy(), check=False)

    def average_policy(self) -> TabularPolicy:
        r"""The reach-weighted average of the profiles played so far (rounds 1..T),

        .. math:: \bar\pi(a \mid I) = \frac{\sum_t x_i^t(I)\, \pi^t(a \mid I)}{\sum_t x_i^t(I)},

        :math:`x_i^t(I)` being the acting player's own reach of I; uniform where that sum is 0.
        Every call of `update` adds the profile it started from, for all players (rows of players
        that do not learn stay what they were). EFR itself plays the current profile; the average
        is what converges to a Nash equilibrium in two-player zero-sum games, for every type whose
        deviations include the counterfactual ones (all but "act" and "act_in").

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> efr = lk.EFR("kuhn_poker", deviations="cf")
        >>> _ = efr.run(100)
        >>> round(lk.nash_conv(efr.game, efr.average_policy()), 4)
        0.0513
        """
        return TabularPolicy(self.game, normalize_rows(self.game, self._average_numerator), check=False)

    # ------------------------------------------------------------------ learning
    def step(self) -> EFR:
        """One round of simultaneous self-play: every player updates against the current profile.

        Returns
        -------
        EFR
            self.

        Examples
        --------
        >>> import labkit as lk
        >>> efr = lk.EFR("kuhn_poker", deviations="bps")
        >>> efr.step().step().iteration
        2
        """
        # the learner's own profile needs no validation (and with the authors' numerics it may
        # leave the simplex by the solver's rounding, see `update`)
        return self._update_unchecked(self._probs.copy())

    def update(self, opponents: PolicyLike, players: Iterable[int] | None = None) -> EFR:
        """One round for `players` (default: all) against a fixed profile.

        Player p's regrets are those of the profile in which p plays its own current strategy and
        every other seat plays `opponents` (the fixed regime of the paper's experiments,
        `labkit.experiments.efr_tournament`).

        Parameters
        ----------
        opponents : TabularPolicy or (num_infosets, num_actions) array
            A joint profile of this game; only the rows of players other than p matter for p.
        players : iterable of int, optional
            Distinct players of the game.

        Returns
        -------
        EFR
            self.

        Raises
        ------
        TypeError, ValueError
            For a profile that is not a valid policy of this game (naming the first bad infoset),
            or players that are not the game's or repeat.

        Notes
        -----
        With fixed_point="paper" (and "lstsq") a strategy is the authors' clipped least-squares
        solution, which their code plays without renormalizing: where the system is nearly
        singular (weights of 1e-16 beside weights of 1e-2), a row can sum to 1 +- 1e-3 (e.g.
        TIPS against ACT_IN's self-play in goofspiel(5, descending), round 23, sum 1.00215).
        `update` still validates `opponents`; the experiment runner feeds such profiles back
        through the internal `_update_unchecked`, which is what the authors' runs do.

        Examples
        --------
        >>> import labkit as lk
        >>> efr = lk.EFR("kuhn_poker", deviations="cf")
        >>> always_bet = lk.TabularPolicy.pure(efr.game, {key: 1 for key in efr.game.infoset_keys})
        >>> print(efr.update(always_bet, players=[0]).current_policy().probs[:3])     # J|, Q|, K|
        [[1. 0.]
         [0. 1.]
         [0. 1.]]
        """
        opponents = np.array(policy_array(self.game, opponents, "opponents"), dtype=float)
        return self._update_unchecked(opponents, players)

    # the authors' numerics run steps 1, 3 and 4 in one compiled call per player
    # (`_paper_round`); False runs the block loop below, the reference it equals bit for bit
    # (benchmarks/bench_efr_round.py, tests/test_efr_paper_round.py)
    _fused_paper_round = True

    def _update_unchecked(self, opponents: np.ndarray, players: Iterable[int] | None = None) -> EFR:
        """`update` for a (num_infosets, num_actions) float array taken as it is (no validation):
        for the learner's own profiles and the experiment runner's replays (`update`, Notes)."""
        g, st = self.game, self.structure
        players = self._check_players(players)
        if self.fixed_point == "paper" and self._fused_paper_round:
            return self._paper_round(opponents, players)
        before = self._probs.copy()
        self._average_numerator += infoset_own_reach(g, before)[:, None] * before

        # 1. counterfactual values and reached decision points, for every learning player
        q = np.zeros(g.legal_mask.shape)
        reached = np.zeros(g.num_infosets, dtype=bool)
        paper = self.fixed_point == "paper"
        exact_ties = self.fixed_point == "exact"
        own_value = np.zeros(g.num_infosets)
        bound = np.zeros(g.num_infosets)                    # pi_{-i}(I) max_z |u_i(z)|
        for p in players:
            mine = self._player_infosets[p]
            profile = np.where(mine[:, None], before, opponents)
            if paper:
                values, value, is_reached = paper_numerics.counterfactual_values_compiled(g, profile, p)
                own_value[mine] = value[mine]
                reached[mine] = is_reached[mine]
            else:
                values, others_reach = self._tree_pass(profile, p)
                reached[mine] = others_reach[mine] > 0
                bound[mine] = others_reach[mine] * self._payoff_bound[mine]
            q[mine] = values[mine]

        # 2. immediate regrets of every transformation slot, per infoset
        if paper:
            rho = paper_numerics.immediate_regrets_compiled(g, st, q, own_value, before)
        else:
            rho = self._immediate_regrets(q, before)
            if exact_ties:
                clean_ties(rho, bound[:, None])
        for p in players:
            rows = self._player_rows[p]
            # 3. regrets weighted by the time-selection weight under the strategy that was played
            # (the weights step 4 computed last time: they used exactly that strategy)
            played_weight = self._weights.get(p)
            if played_weight is None:
                played_weight = self._row_weights(rows)
            if not paper:         # (the paper mode does step 3 block by block, fused with step 4)
                self.regrets[rows] += played_weight[:, None] * rho[st.row_infoset[rows]] * st.row_active[rows]
            if exact_ties:
                self.regret_scale[rows] += played_weight * bound[st.row_infoset[rows]]
            # 4. new strategies, top-down: a block's weights read the already updated predecessors
            new_weight = np.empty(rows.stop - rows.start)
            for block, infosets, starts in st.blocks[p]:
                weight = self._row_weights(block)
                within = slice(block.start - rows.start, block.stop - rows.start)
                new_weight[within] = weight
                if paper:
                    # step 3 on the block's rows, then sequential_segment_sums(weight * max(R, 0)):
                    # compiled, one pass over the block's regrets, numpy's operations in order
                    y = paper_numerics.block_update(self.regrets[block], played_weight[within], rho,
                                                    st.row_infoset[block], st.row_active[block], weight,
                                                    starts)
                else:
                    if not exact_ties:
                        positive = np.maximum(self.regrets[block], 0.0)
                    else:                                         # exact ties count as 0
                        regrets = self.regrets[block]
                        positive = np.where(regrets > TIE_TOLERANCE * self.regret_scale[block, None],
                                            regrets, 0.0)
                    y = np.add.reduceat(weight[:, None] * positive, starts, axis=0)
                sigma = transformation_fixed_point(y, g.legal_mask[infosets], self._external_offset,
                                                   self._internal_offset, self.fixed_point)
                update = reached[infosets]
                self._probs[infosets[update]] = sigma[update]
            # a block's weights depend only on shallower blocks, so they are final: cache them
            self._weights[p] = new_weight
        return self._end_round()

    def _end_round(self) -> EFR:
        self.iteration += 1
        if not self.record_profiles:
            self.profiles.clear()
        self.profiles.append(self._probs.copy())
        return self

    def _paper_round(self, opponents: np.ndarray, players: list[int]) -> EFR:
        """`_update_unchecked` with fixed_point="paper": the same steps, each player's blocks
        in one compiled call (`paper_numerics.player_update`), the same bits."""
        g, st = self.game, self.structure
        before = self._probs.copy()
        self._average_numerator += infoset_own_reach(g, before)[:, None] * before
        opponents = np.ascontiguousarray(opponents, dtype=float)
        if self.__dict__.get("_paper_plans") is None:
            self._paper_plans = {p: paper_numerics.PlayerPlan(g, st, p) for p in range(g.num_players)}
            self._paper_scratch: dict[Any, Any] = {}
        # 1. counterfactual values of every learning player, collected in one set of arrays
        q = np.zeros(g.legal_mask.shape)
        own_value = np.zeros(g.num_infosets)
        reached = np.zeros(g.num_infosets, dtype=np.uint8)
        for p in players:
            paper_numerics.counterfactual_values_into(g, before, opponents, p, q, own_value, reached,
                                                      self._paper_scratch)
        # 2. immediate regrets
        rho = paper_numerics.immediate_regrets_compiled(g, st, q, own_value, before, constant_rows=True)
        # 3 and 4, block by block, top-down (see the block loop of `_update_unchecked`)
        for p in players:
            played_weight = self._weights.get(p)
            if played_weight is None:
                played_weight = self._row_weights(self._player_rows[p])
            new_weight = np.empty(len(played_weight))
            paper_numerics.player_update(self._paper_plans[p], self._flat, self.regrets, played_weight,
                                         rho, reached, new_weight)
            self._weights[p] = new_weight
        return self._end_round()

    def _row_weights(self, rows: slice) -> np.ndarray:
        """Time-selection weights w_I(s; pi) of a slice of rows under the current strategy."""
        factors = self._flat[self.structure.row_factors[rows]]
        if self.fixed_point == "paper":
            return paper_numerics.sequential_products(factors)
        return factors.prod(axis=1)

    def regret_table(self, key: str) -> list[tuple[str, str, float]]:
        """The cumulative regrets kept at one infoset, largest first.

        Parameters
        ----------
        key : str
            An infoset key of the game.

        Returns
        -------
        list of (str, str, float)
            (memory description, transformation description, regret), one entry per (memory,
            transformation) pair; empty at an infoset with one legal action.

        Raises
        ------
        KeyError
            If the game has no infoset `key`.

        Examples
        --------
        >>> import labkit as lk
        >>> efr = lk.EFR("kuhn_poker", deviations="cfps")
        >>> _ = efr.run(10)
        >>> for memory, change, regret in efr.regret_table("J|pb"):
        ...     print(f"{memory:20s} {change:12s} {regret:+.3f}")
        play pass at 'J|'    bet -> pass  +0.083
        follow at 'J|'       bet -> pass  +0.042
        follow at 'J|'       pass -> bet  -1.629
        play pass at 'J|'    pass -> bet  -2.129
        """
        g, st = self.game, self.structure
        infoset = g.infoset_index(key)
        rows = np.flatnonzero(st.row_infoset == infoset)
        table = []
        for row in rows:
            memory = "; ".join(describe_row(g, st, int(row))) or "(first decision)"
            for slot in np.flatnonzero(st.row_active[row]):
                table.append((memory, describe_slot(g, st, int(slot)), float(self.regrets[row, slot])))
        return sorted(table, key=lambda entry: -entry[2])

    def _tree_pass(self, profile: np.ndarray, player: int) -> tuple[np.ndarray, np.ndarray]:
        """Counterfactual action values of `player`'s infosets and the others' reach of each of them.

        Sequence form: c(I, a) sums pi_-i(z) u_i(z) over the terminals z whose last own action is
        (I, a); then, deepest own infosets first, q(I, a) = c(I, a) + sum over the next own infosets
        J after (I, a) of sum_b pi(b | J) q(J, b). pi_-i of a history is the product of the
        non-own edge probabilities on its path (one gather over a padded ancestor table).
        """
        g = self.game
        A = g.num_actions
        paths = self._paths(player)
        edge = np.ones(g.num_histories + 1)
        edge[:-1] = edge_probabilities(g, profile)
        edge[:-1][g.edge_owner == player] = 1.0
        terminal_reach = edge[paths["terminal_paths"]].prod(axis=1)
        decision_reach = edge[paths["decision_paths"]].prod(axis=1)
        size = g.num_infosets * A
        q = np.bincount(paths["terminal_seq"], weights=terminal_reach * paths["terminal_payoff"],
                        minlength=size + 1)[1:]
        flat_probs = profile.reshape(-1)
        for _rows, parent_seq, row_seqs in paths["levels"]:
            own_value = (flat_probs[row_seqs] * q[row_seqs]).sum(axis=1)
            q += np.bincount(parent_seq, weights=own_value, minlength=size)
        others_reach = np.bincount(paths["decision_infoset"], weights=decision_reach, minlength=g.num_infosets)
        return q.reshape(g.num_infosets, A), others_reach

    def _paths(self, player: int) -> dict[str, Any]:
        """Per-player index tables for `_tree_pass`, cached on the game."""
        g = self.game
        cache = g.__dict__.setdefault("_efr_path_cache", {})
        if player in cache:
            return cache[player]
        if "ancestors" not in cache:
            # ancestors[h] = the histories on the path root -> h (the edges into them), padded with H
            H = g.num_histories
            max_depth = int(g.depth.max())
            ancestors = np.full((H, max(max_depth, 1)), H, dtype=np.int64)
            current = np.arange(H)
            for k in range(max_depth):
                has_edge = g.parent[current] >= 0
                ancestors[has_edge, k] = current[has_edge]
                current = np.where(has_edge, g.parent[current], current)
            cache["ancestors"] = ancestors
        ancestors = cache["ancestors"]
        A = g.num_actions
        z = g.terminals
        decisions = np.flatnonzero(g.player == player)
        mine = np.flatnonzero(g.infoset_player == player)
        levels = []
        for d in range(int(g.infoset_own_depth[mine].max(initial=0)), 0, -1):
            rows = mine[g.infoset_own_depth[mine] == d]
            row_seqs = rows[:, None] * A + np.arange(A)
            levels.append((rows, g.infoset_parent_seq[rows], row_seqs))
        cache[player] = {
            "terminal_paths": self._others_edges(ancestors[z], player),
            "terminal_seq": g.own_last_seq[z, player] + 1,
            "terminal_payoff": g.returns[z, player],
            "decision_paths": self._others_edges(ancestors[decisions], player),
            "decision_infoset": g.infoset[decisions], "levels": levels,
        }
        return cache[player]

    def _others_edges(self, paths: np.ndarray, player: int) -> np.ndarray:
        """Drop `player`'s own edges from padded paths (they contribute a factor 1 to pi_-i) and
        the columns left empty, so the reach products touch only chance's and the others' moves."""
        g = self.game
        H = g.num_histories
        owner = np.append(g.edge_owner, -1)[paths]
        kept = np.where(owner == player, H, paths)
        # stable sort: real entries first, padding (H) last, then cut the all-padding columns
        order = np.argsort(kept == H, axis=1, kind="stable")
        kept = np.take_along_axis(kept, order, axis=1)
        width = max(1, int((kept != H).sum(axis=1).max(initial=0)))
        return np.ascontiguousarray(kept[:, :width])

    def _immediate_regrets(self, q: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """(I, S): rho_I(phi) for every transformation slot (0 on illegal ones)."""
        g, st = self.game, self.structure
        A = g.num_actions
        legal = g.legal_mask
        parts = []
        if st.has_external:
            value = (probs * q).sum(axis=1, keepdims=True)
            parts.append((q - value) * legal)
        if st.has_internal:
            # rho(a -> b) = pi(a) (q(b) - q(a))
            swap = probs[:, :, None] * (q[:, None, :] - q[:, :, None])
            parts.append(swap.reshape(g.num_infosets, A * A))
        return np.concatenate(parts, axis=1)

    def _check_players(self, players: Iterable[int] | None) -> list[int]:
        n = self.game.num_players
        if players is None:
            return list(range(n))
        if isinstance(players, (str, bytes)) or not isinstance(players, Iterable):
            raise TypeError(f"players must be an iterable of player numbers in 0..{n - 1}, got {show(players)}")
        players = list(players)
        for p in players:
            self.game.check_player(p)
        if len(set(players)) != len(players):
            raise ValueError(f"players must not repeat, got {players}")
        return players

    def __repr__(self) -> str:
        return f"EFR({self.game.name}, deviations={self.deviations.value!r}, iteration={self.iteration})"
