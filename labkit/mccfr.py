r"""Monte Carlo CFR with outcome or external sampling (Lanctot, Waugh, Zinkevich and Bowling, 2009,
"Monte Carlo sampling for regret minimization in extensive games").

MCCFR replaces CFR's exact counterfactual values by unbiased, importance-weighted estimates from
sampled parts of the tree. One iteration is one sampled episode per player i (OpenSpiel's
convention); each episode uses the policy sigma = regret matching of the current regrets.

Outcome sampling, episode for player i:

1. Sample one terminal history z: chance by its probabilities, the other players by sigma,
   player i by the exploratory policy s = exploration * uniform + (1 - exploration) * sigma.
2. Walking back from z, keep the sampled value estimate u~(h) = u_i(z) * prod sigma(a)/s(a) over
   player i's moves between h and z. At player i's infoset I on the path, with sampled action a*,
   the estimated action values are u~(h a*) / s(a*) for a* and 0 for the other actions, and
       R(I, a) += (pi_{-i}(h) / q(h)) * (value(a) - sum_b sigma(I, b) value(b)),
   q(h) being the probability that the sampling reached h (so the estimate is unbiased).
3. Average policy ("stochastically weighted averaging"): S(I, a) += pi_i(h) sigma(I, a) / q(h)
   at the same infosets.

External sampling, episode for player i:

1. Sample chance and the other players' actions (one per visited node), but follow *every*
   action of player i, so the episode is a subtree.
2. At player i's infosets, with v(I a) the sampled values below, R(I, a) += v(I a) - v(I),
   v(I) = sum_a sigma(I, a) v(I a) (the sampling probabilities cancel the others' reach).
3. Average policy ("simple" averaging, as OpenSpiel's default): at every visited infoset of player
   (i + 1) mod n, S(I, a) += sigma(I, a).

A sampled episode is one path (outcome sampling) or one small subtree (external sampling), so it
is walked node by node over the compiled tree (children blocks and flat lists, no game
objects); the random numbers come from one seeded `numpy.random.Generator`, drawn in blocks.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from labkit import kernels
from labkit._messages import show
from labkit.policy import TabularPolicy
from labkit.solver import Solver
from labkit.tree import CHANCE, TERMINAL

if TYPE_CHECKING:
    from labkit.games import GameLike

__all__ = ["MCCFR", "SAMPLING_SCHEMES"]

SAMPLING_SCHEMES = ("outcome", "external")
_BLOCK = 4096            # uniform random numbers drawn per numpy call


class _FlatTree:
    """The parts of a `GameTree` an episode reads, as Python lists (fast scalar access)."""

    def __init__(self, game):
        H, parent = game.num_histories, game.parent
        # breadth-first order makes `parent` nondecreasing and each node's children contiguous
        first_child = np.searchsorted(parent, np.arange(H))
        num_children = np.bincount(parent[1:], minlength=H)          # for the chance nodes
        self.player = game.player.tolist()
        self.depth = game.depth.tolist()                 # root = 0; a path to h has depth[h] + 1 histories
        self.first_child = first_child.tolist()
        self.infoset = game.infoset.tolist()
        self.returns = game.returns.tolist()
        probs = game.chance_prob
        self.chance_probs = [None] * H
        self.chance_cumulative = [None] * H
        for h in np.flatnonzero(game.is_chance):
            k0, k = first_child[h], num_children[h]
            p = probs[k0:k0 + k]
            self.chance_probs[h] = p.tolist()
            self.chance_cumulative[h] = np.cumsum(p).tolist()
        self.legal_actions = [game.legal_actions(i).tolist() for i in range(game.num_infosets)]


class _KernelTree:
    """The arrays of the compiled episodes (`labkit._mccfr_kernels`), computed once per game.

    ``draw_bound[sampling][i]`` bounds the uniform numbers one episode of player i can use: one
    per chance or other-player node on the sampled path, so for outcome sampling the longest
    path, and for external sampling the recursion d(h) = sum_a d(h a) at player i's nodes,
    1 + max_a d(h a) at the others, 0 at terminals.
    """

    def __init__(self, game):
        H, n = game.num_histories, game.num_players
        parent = game.parent
        self.kind = game.player.astype(np.int64)
        self.first_child = np.searchsorted(parent, np.arange(H)).astype(np.int64)
        self.num_children = np.bincount(parent[1:], minlength=H).astype(np.int64)
        self.infoset = game.infoset.astype(np.int64)
        self.depth = game.depth.astype(np.int64)
        self.returns = np.ascontiguousarray(game.returns, dtype=np.float64)
        self.chance_prob = np.ascontiguousarray(game.chance_prob, dtype=np.float64)
        # cumulative chance probabilities at each child, as np.cumsum over each chance node's children
        self.cumulative = np.zeros(H)
        for h in np.flatnonzero(game.is_chance):
            k0, k = self.first_child[h], self.num_children[h]
            self.cumulative[k0:k0 + k] = np.cumsum(self.chance_prob[k0:k0 + k])
        self.off = np.concatenate(([0], np.cumsum(game.num_legal))).astype(np.int64)
        self.path_length = int(game.depth.max()) + 1
        self.widest = int(game.num_legal.max(initial=1))
        outcome = np.full(n, int(game.depth[game.terminals].max()))
        external = np.zeros(n, dtype=np.int64)
        for i in range(n):
            d = np.zeros(H, dtype=np.int64)
            for internal, first, nxt in reversed(game.child_blocks):
                below = d[nxt]
                total = np.add.reduceat(below, first)
                most = np.maximum.reduceat(below, first)
                d[internal] = np.where(game.player[internal] == i, total, most + 1)
            external[i] = d[0]
        self.draw_bound = {"outcome": outcome, "external": external}
        self.round_draws = {k: int(v.sum()) for k, v in self.draw_bound.items()}
        from labkit import _mccfr_kernels as K
        header = dict(num_histories=H, num_players=n, num_infosets=game.num_infosets,
                      path_length=self.path_length, widest=self.widest, table_size=int(self.off[-1]))
        self.packed = K.pack(header, dict(
            kind=self.kind, first_child=self.first_child, num_children=self.num_children, infoset=self.infoset,
            depth=self.depth, off=self.off,
            outcome_draws=np.append(outcome, outcome.sum()), external_draws=np.append(external, external.sum())),
            np.concatenate([self.returns.reshape(-1), self.chance_prob, self.cumulative]))


def _compiled_module():
    """labkit._mccfr_kernels, imported (and its kernels compiled or loaded) on first use."""
    global _KERNELS
    if _KERNELS is None:
        _KERNELS = kernels.load("labkit._mccfr_kernels")     # says so if it must compile first
    return _KERNELS


_KERNELS: Any = None


def _kernel_tree(game):
    cached = game.__dict__.get("_mccfr_kernel_tree")
    if cached is None:
        cached = game.__dict__["_mccfr_kernel_tree"] = _KernelTree(game)
    return cached


def _flat_tree(game):
    cached = game.__dict__.get("_mccfr_flat_tree")
    if cached is None:
        cached = game.__dict__["_mccfr_flat_tree"] = _FlatTree(game)
    return cached


def _uniform_stream(rng):
    """Uniform numbers in [0, 1) from `rng`, drawn _BLOCK at a time (one numpy call per block)."""
    while True:
        yield from rng.random(_BLOCK).tolist()


def _pick(cumulative, u):
    """Index k of the sample: the first k with u < cumulative[k] (the last one if rounding left a gap)."""
    k = 0
    for c in cumulative:
        if u < c:
            return k
        k += 1
    return k - 1


def _pick_from(probs, u):
    """Sample an index from a probability list with the uniform number u, never a zero-probability one."""
    total = 0.0
    last = 0
    for k, p in enumerate(probs):
        if p > 0.0:
            total += p
            last = k
            if u < total:
                return k
    return last


def _regret_matching(regrets):
    """Regret matching on one infoset's list of regrets (legal actions only)."""
    total = 0.0
    for r in regrets:
        if r > 0.0:
            total += r
    if total > 0.0:
        return [r / total if r > 0.0 else 0.0 for r in regrets]
    return [1.0 / len(regrets)] * len(regrets)


class MCCFR(Solver):
    r"""Monte Carlo CFR (Lanctot et al., 2009) with outcome or external sampling.

    Each iteration samples one episode per player and adds unbiased estimates of the
    counterfactual regrets, e.g. for outcome sampling at an infoset I on the sampled path,

    .. math:: \tilde r(I, a) = \frac{\pi_{-i}(h)}{q(h)} \big( \tilde u(h a) - \tilde u(h) \big),

    whose expectation is CFR's regret (module docstring for both schemes and their averaging).

    Parameters
    ----------
    game : str or GameTree
        Anything `labkit.games.load` accepts.
    sampling : {"outcome", "external"}
    seed : int, numpy.random.Generator or None
        The same seed gives the same regrets and policies, digit for digit (None: fresh entropy).
    exploration : float in (0, 1]
        Outcome sampling only: weight of the uniform policy in the update player's sampling
        policy (OpenSpiel's 0.6 by default). Must be positive so every action can be sampled.

    Attributes
    ----------
    regrets, policy_sums : list of lists
        Per infoset, over its legal actions (`game.legal_actions(I)`). With the compiled backend
        (`labkit.kernels`, the default where numba is installed) the tables are flat arrays and
        these are fresh copies: read them, do not write into them.
    backend : {"numpy", "numba"}
        Which implementation runs the episodes (`labkit.kernels`; the same numbers either way).
    nodes_touched : int
        Histories (chance, decision and terminal alike) visited by the sampled episodes since
        construction, each counted once per episode that visits it; `sampled_regrets` episodes
        count too. An outcome-sampling episode visits one root-to-terminal path; an
        external-sampling episode a subtree. Counted per path segment from the tree depths,
        so it costs nothing per node.

    Raises
    ------
    ValueError
        For an unknown sampling scheme, an exploration outside (0, 1] or a negative seed.
    TypeError
        For a seed that is neither an integer nor a Generator.

    Notes
    -----
    The updates are OpenSpiel's (Python ``OutcomeSamplingSolver`` and ``ExternalSamplingSolver``):
    fed the same uniform numbers, the two give the same regrets and policy sums (tests/test_mccfr.py),
    except that OpenSpiel starts every table at 1e-6 instead of 0.

    References
    ----------
    M. Lanctot, K. Waugh, M. Zinkevich and M. Bowling (2009), "Monte Carlo sampling for regret
    minimization in extensive games", NeurIPS.

    Examples
    --------
    >>> import labkit as lk
    >>> solver = lk.MCCFR("kuhn_poker", sampling="external", seed=1)
    >>> _ = solver.run(1000)
    >>> lk.nash_conv(solver.game, solver.average_policy()) < 0.2
    True
    """

    def __init__(self, game: GameLike, sampling: str = "outcome", seed: int | np.random.Generator | None = 0,
                 exploration: float = 0.6):
        super().__init__(game)
        if sampling not in SAMPLING_SCHEMES:
            raise ValueError(f"sampling must be one of {SAMPLING_SCHEMES}, got {sampling!r}")
        if isinstance(exploration, bool) or not isinstance(exploration, (int, float, np.floating)) \
                or not 0.0 < exploration <= 1.0:
            raise ValueError(f"exploration must be a number in (0, 1], got {show(exploration)}")
        if isinstance(seed, np.random.Generator):
            self.rng = seed
        elif seed is None or isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            if seed is not None and seed < 0:
                raise ValueError(f"seed must be a nonnegative integer or a numpy.random.Generator, got {int(seed)}")
            self.rng = np.random.default_rng(seed)
        else:
            raise TypeError(f"seed must be an integer or a numpy.random.Generator, got {show(seed)}")
        self.sampling = sampling
        self.exploration = float(exploration)
        self.flat = _flat_tree(self.game)
        self.nodes_touched = 0
        self.backend = kernels.backend()
        sizes = [len(a) for a in self.flat.legal_actions]
        if self.backend == "numba":
            K = _compiled_module()
            t = self._arrays = _kernel_tree(self.game)
            total, I, D = int(t.off[-1]), len(sizes), t.path_length
            # regrets, policy sums, cached policies, two scratch rows for sampled_regrets (flat:
            # infoset I's actions are off[I]:off[I + 1]), then the episodes' working numbers
            self._memory = np.zeros(5 * total + 1 + 3 * D + D * (t.widest + 1))
            # buffer position, the call's settings, then fresh flags, the path and frames (_mccfr_kernels)
            self._state = np.zeros(len(K.STATE_FIELDS) + I + 4 * D, dtype=np.int64)
            self._state[K.ROUNDS], self._state[K.PLAYER], self._state[K.INVALIDATE] = 1, -1, 1   # step()
            self._memory[5 * total] = self.exploration   # kept equal by the property's setter
            self._buffer = np.empty(0)                   # uniform numbers not yet used, in stream order
            kernels.bind(self, "_kernel", K.outcome_episodes if sampling == "outcome" else K.external_episodes)
            # the arrays themselves (views are made on use, so copies and pickles keep them linked)
            self._kernel_args = [t.packed, self._memory, self._buffer, self._state]
        else:
            self._regret_lists = [[0.0] * k for k in sizes]
            self._sum_lists = [[0.0] * k for k in sizes]
            self._sigma = [None] * len(sizes)          # cached regret matching, None = stale
            self._draw = _uniform_stream(self.rng).__next__

    @property
    def exploration(self) -> float:
        """Outcome sampling's weight of the uniform policy in the update player's sampling policy.

        Setting it takes effect from the next iteration.

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MCCFR("kuhn_poker", sampling="outcome", seed=0)
        >>> solver.exploration
        0.6
        """
        return self._exploration

    @exploration.setter
    def exploration(self, value: float) -> None:
        self._exploration = float(value)
        if "_memory" in self.__dict__:
            self._memory[5 * int(self._arrays.off[-1])] = self._exploration

    # views of the compiled backend's memory (labkit._mccfr_kernels)
    @property
    def _tables(self):
        total = int(self._arrays.off[-1])
        return self._memory[:5 * total].reshape(5, total)

    _regret_table = property(lambda self: self._tables[0])
    _sum_table = property(lambda self: self._tables[1])
    _sigma_table = property(lambda self: self._tables[2])
    _fresh = property(lambda self: self._state[5:5 + self.game.num_infosets])

    @property
    def regrets(self) -> list[list[float]]:
        """Cumulative regrets, per infoset over its legal actions (numba backend: a copy).

        Assigning a list of rows replaces them (numba backend: copied into the flat table).

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MCCFR("kuhn_poker", sampling="external", seed=0)
        >>> len(solver.step().regrets), len(solver.regrets[0])
        (12, 2)
        """
        if self.backend == "numba":
            return self._rows_of(self._regret_table)
        return self._regret_lists

    @regrets.setter
    def regrets(self, rows: list[list[float]]) -> None:
        self._set_rows("regrets", rows)

    @property
    def policy_sums(self) -> list[list[float]]:
        """Average-policy sums, per infoset over its legal actions (numba backend: a copy).

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MCCFR("kuhn_poker", sampling="external", seed=0)
        >>> sum(map(sum, solver.policy_sums))
        0.0
        """
        if self.backend == "numba":
            return self._rows_of(self._sum_table)
        return self._sum_lists

    @policy_sums.setter
    def policy_sums(self, rows: list[list[float]]) -> None:
        self._set_rows("policy_sums", rows)

    def _set_rows(self, name: str, rows: list[list[float]]) -> None:
        """Replace a table by per-infoset rows over the legal actions (numpy backend: the lists
        themselves, as before; numba backend: copied into the flat table, cached policies reset)."""
        if self.backend != "numba":
            setattr(self, "_regret_lists" if name == "regrets" else "_sum_lists", rows)
            return
        sizes = np.diff(self._arrays.off)
        if len(rows) != len(sizes) or any(len(r) != k for r, k in zip(rows, sizes.tolist(), strict=True)):
            raise ValueError(f"{name} must have one row per infoset, over its legal actions "
                             f"({len(sizes)} rows of lengths {sizes[:5].tolist()}...)")
        table = self._regret_table if name == "regrets" else self._sum_table
        table[:] = np.concatenate([np.asarray(r, dtype=float) for r in rows]) if len(rows) else 0.0
        self._fresh[:] = 0

    def _rows_of(self, table: np.ndarray) -> list[list[float]]:
        off = self._arrays.off.tolist()
        values = table.tolist()
        return [values[a:b] for a, b in zip(off[:-1], off[1:], strict=True)]

    def _policy(self, infoset):
        """sigma(I): regret matching of the current regrets, cached until they change."""
        sigma = self._sigma[infoset]
        if sigma is None:
            sigma = self._sigma[infoset] = _regret_matching(self.regrets[infoset])
        return sigma

    # -- one iteration -------------------------------------------------------------
    def _step(self):
        if self.backend == "numba":
            visited = self._kernel(*self._kernel_args)        # one episode per player (state set for it)
            if visited < 0:                                   # the buffer ran short: refill, call again
                self._refill(self._arrays.round_draws[self.sampling])
                visited = self._kernel(*self._kernel_args)
            self.nodes_touched += visited
            return
        for player in range(self.game.num_players):
            self._episode(player, self.regrets, self.policy_sums)

    def _steps(self, count):
        """`count` iterations; the numba backend runs them in a few compiled calls."""
        if self.backend != "numba":
            return super()._steps(count)
        # one call per slice, so the random-number buffer stays small
        per_round = self._arrays.round_draws[self.sampling]
        chunk = max(1, _BLOCK * 16 // max(per_round, 1))
        done = 0
        while done < count:
            rounds = min(chunk, count - done)
            self._compiled_episodes(rounds, -1, False)
            done += rounds
            self.iteration += rounds

    def _compiled_episodes(self, rounds, player, scratch):
        """`rounds` times one episode per player (player -1) or for `player` only, by the numba
        kernel, into the solver's tables or (scratch=True) into the scratch rows without marking
        policies stale; the state is left set for step()."""
        K = _compiled_module()
        state = self._state
        state[K.ROUNDS], state[K.PLAYER], state[K.INVALIDATE], state[K.SCRATCH] = rounds, player, not scratch, scratch
        try:
            visited = self._kernel(*self._kernel_args)
            if visited < 0:
                bound = self._arrays.draw_bound[self.sampling]
                self._refill(rounds * (int(bound.sum()) if player < 0 else int(bound[player])))
                visited = self._kernel(*self._kernel_args)
        finally:
            state[K.ROUNDS], state[K.PLAYER], state[K.INVALIDATE], state[K.SCRATCH] = 1, -1, 1, 0
        self.nodes_touched += visited

    def _refill(self, need):
        """Make the buffer hold at least `need` unread numbers: the same stream as the numpy
        backend's, blocks of _BLOCK numbers drawn in order."""
        K = _compiled_module()
        position = int(self._state[K.POSITION])
        left = len(self._buffer) - position
        blocks = [self._buffer[position:]]
        while left < need:
            blocks.append(self.rng.random(_BLOCK))
            left += _BLOCK
        self._buffer = np.concatenate(blocks)
        self._kernel_args[2] = self._buffer
        self._state[K.POSITION] = 0

    def _episode(self, player, regret_out, policy_sum_out):
        """One sampled episode for `player`, adding its regret and average-policy increments to
        the given tables (the solver's own, or scratch tables for testing the estimates)."""
        # each infoset is visited at most once per episode (perfect recall), so a regret update
        # can mark its cached policy stale at once without changing what the episode plays
        stale = self._sigma if regret_out is self.regrets else [None] * len(self._sigma)
        if self.sampling == "outcome":
            self._outcome_episode(player, regret_out, policy_sum_out, stale)
        else:
            self._external_episode(player, regret_out, policy_sum_out, stale)

    def _outcome_episode(self, player, regret_out, policy_sum_out, stale):
        flat, eps, draw, policy = self.flat, self.exploration, self._draw, self._policy
        h = 0
        my_reach = opp_reach = sample_reach = 1.0
        path = []
        while True:
            acting = flat.player[h]
            if acting == TERMINAL:
                break
            if acting == CHANCE:
                k = _pick(flat.chance_cumulative[h], draw())
                p = flat.chance_probs[h][k]
                opp_reach *= p
                sample_reach *= p
            else:
                infoset = flat.infoset[h]
                sigma = policy(infoset)
                if acting == player:
                    mix = eps / len(sigma)
                    sample = [mix + (1.0 - eps) * x for x in sigma]
                    k = _pick_from(sample, draw())
                    path.append((infoset, sigma, sample, k, my_reach, opp_reach, sample_reach))
                    my_reach *= sigma[k]
                    sample_reach *= sample[k]
                else:
                    k = _pick_from(sigma, draw())
                    opp_reach *= sigma[k]
                    sample_reach *= sigma[k]
            h = flat.first_child[h] + k
        self.nodes_touched += flat.depth[h] + 1          # the path from the root to the terminal h
        # the other players' and chance's nodes pass the estimate up unchanged (sigma/s = 1 there)
        value = flat.returns[h][player]
        for infoset, sigma, sample, k, my, opp, reach in reversed(path):
            sampled_value = value / sample[k]               # u~(h a*) / s(a*); 0 for the others
            value = sigma[k] * sampled_value                 # u~(h) = sum_a sigma(a) value(a)
            weight = opp / reach                             # pi_{-i}(h) / q(h)
            regrets = regret_out[infoset]
            for a in range(len(sigma)):
                regrets[a] -= weight * value
            regrets[k] += weight * sampled_value
            sums = policy_sum_out[infoset]
            scale = my / reach
            for a, x in enumerate(sigma):
                sums[a] += scale * x
            stale[infoset] = None

    def _external_episode(self, player, regret_out, policy_sum_out, stale):
        flat = self.flat
        kind, first_child, infoset_of, returns = flat.player, flat.first_child, flat.infoset, flat.returns
        chance_cumulative = flat.chance_cumulative
        averaging_player = (player + 1) % self.game.num_players
        draw, sigma_cache, current_regrets = self._draw, self._sigma, self.regrets
        depth = flat.depth
        touched = 0

        def value_of(h):
            """Sampled value of history h for `player`, updating player's regrets below h."""
            nonlocal touched
            start = depth[h]
            acting = kind[h]
            # chance and the other players: follow one sampled move
            while acting != player:
                if acting == TERMINAL:
                    touched += depth[h] - start + 1      # the sampled segment from the start to h
                    return returns[h][player]
                if acting == CHANCE:
                    k = _pick(chance_cumulative[h], draw())
                else:
                    infoset = infoset_of[h]
                    sigma = sigma_cache[infoset]
                    if sigma is None:
                        sigma = sigma_cache[infoset] = _regret_matching(current_regrets[infoset])
                    k = _pick_from(sigma, draw())
                    if acting == averaging_player:
                        sums = policy_sum_out[infoset]
                        for a, x in enumerate(sigma):
                            sums[a] += x
                h = first_child[h] + k
                acting = kind[h]
            # the update player: follow every action (each child counts its own segment)
            touched += depth[h] - start + 1
            infoset = infoset_of[h]
            sigma = sigma_cache[infoset]
            if sigma is None:
                sigma = sigma_cache[infoset] = _regret_matching(current_regrets[infoset])
            child = first_child[h]
            values = []
            value = 0.0
            for x in sigma:
                v = value_of(child)
                values.append(v)
                value += x * v
                child += 1
            regrets = regret_out[infoset]
            for a, v in enumerate(values):
                regrets[a] += v - value
            stale[infoset] = None
            return value

        value_of(0)
        self.nodes_touched += touched

    # -- estimates (for tests and teaching) ---------------------------------------
    def sampled_regrets(self, player: int) -> np.ndarray:
        """The regret increments one episode for `player` would add, as an (I, A) array, without
        changing the solver's regrets or averages (the random stream does advance).

        Their expectation is the exact counterfactual regret q(I, a) - v(I) of the current policy
        at `player`'s infosets, which is what makes MCCFR converge like CFR.

        Parameters
        ----------
        player : int

        Returns
        -------
        (I, A) float array
            Zero at the other players' infosets and at infosets the episode did not update.

        Raises
        ------
        TypeError, ValueError
            For an invalid player.

        Examples
        --------
        The mean of many sampled increments approaches the exact counterfactual regret:

        >>> import numpy as np
        >>> import labkit as lk
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> solver = lk.MCCFR(kuhn, sampling="external", seed=0)
        >>> estimate = np.mean([solver.sampled_regrets(0) for _ in range(3000)], axis=0)
        >>> q = lk.counterfactual_values(kuhn, lk.uniform_policy(kuhn))
        >>> exact = q - (q * lk.uniform_policy(kuhn).probs).sum(axis=1, keepdims=True)
        >>> i = kuhn.infoset_index("K|")
        >>> exact[i].round(3).tolist(), estimate[i].round(2).tolist()
        ([-0.125, 0.125], [-0.13, 0.13])
        """
        self.game.check_player(player)
        if self.backend == "numba":
            self._tables[3:] = 0.0
            self._compiled_episodes(1, int(player), True)
            return self._to_array(self._tables[3])
        regret_out = [[0.0] * len(r) for r in self.regrets]
        scratch = [[0.0] * len(r) for r in self.regrets]
        self._episode(player, regret_out, scratch)
        return self._to_array(regret_out)

    # -- policies ------------------------------------------------------------------
    def _to_array(self, rows: list[list[float]] | np.ndarray) -> np.ndarray:
        """Per-infoset lists over legal actions (or the numba backend's flat table, the same
        numbers in the same order) -> an (I, A) array, zero on illegal actions."""
        positions = self._legal_positions()
        if isinstance(rows, np.ndarray):
            flat = rows
        else:
            if len(rows) != len(self.flat.legal_actions):
                raise ValueError(f"expected {len(self.flat.legal_actions)} rows, one per infoset, got {len(rows)}")
            flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=float)
        if flat.shape != positions.shape:
            raise ValueError(f"expected {len(positions)} numbers over the legal actions, got {flat.size}")
        out = np.zeros(self.game.legal_mask.shape)
        out.flat[positions] = flat
        return out

    def _legal_positions(self) -> np.ndarray:
        """Where each infoset's legal actions sit in a flattened (I, A) array, infoset by infoset
        (the order of the rows and of the flat tables); computed once per solver."""
        positions = self.__dict__.get("_positions")
        if positions is None:
            width = self.game.legal_mask.shape[1]
            positions = np.array([i * width + a for i, actions in enumerate(self.flat.legal_actions)
                                  for a in actions], dtype=np.int64)
            self._positions = positions
        return positions

    def current_policy(self) -> TabularPolicy:
        """Regret matching of the current regrets (uniform where none is positive).

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MCCFR("kuhn_poker", sampling="external", seed=0)
        >>> solver.current_policy()["K|"]
        {'pass': 0.5, 'bet': 0.5}
        """
        probs = self._to_array([_regret_matching(r) for r in self.regrets])
        return TabularPolicy(self.game, probs, check=False)

    def average_policy(self) -> TabularPolicy:
        r"""The accumulated policy sums normalized per infoset,
        :math:`\bar\sigma(a \mid I) = S(I, a) / \sum_b S(I, b)`; uniform where nothing was added.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.MCCFR("kuhn_poker", sampling="outcome", seed=3)
        >>> _ = solver.run(2000)
        >>> round(lk.nash_conv(solver.game, solver.average_policy()), 3) < 0.2
        True
        """
        sums = self._to_array(self._sum_table if self.backend == "numba" else self.policy_sums)
        total = sums.sum(axis=1, keepdims=True)
        legal = self.game.legal_mask
        uniform = legal / legal.sum(axis=1, keepdims=True)
        probs = np.where(total > 0, sums / np.where(total > 0, total, 1.0), uniform)
        return TabularPolicy(self.game, probs, check=False)
