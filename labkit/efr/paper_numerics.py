"""EFR's round in the floating-point order of the authors' implementation.

Which infosets a rounding-sensitive EFR variant updates, and how, can hinge on a 1e-17 (see
`labkit.efr.fixed_point`). To replay the paper's runs digit for digit it is not enough to call
the same least-squares routine (`labkit.efr.eigen`): its inputs must be the same bits, so every
sum of the round is formed in the same order as in their code. ``EFR(..., fixed_point="paper")``
uses the functions here; the mathematics is the same as the default path's.

1. Counterfactual values by one depth-first pass (`counterfactual_values`): the weight
   ``r(h)`` of a history is the product, root to h, of chance's and the other players'
   probabilities; a terminal z is worth ``u_i(z) r(z)``; a node is worth the sum of its
   children left to right (at the learner's own nodes ``sum_a pi(a) v(ha)``; the others' actions
   of probability 0 are skipped). An infoset adds up ``q(I, a) = sum_h v(ha)`` and its own value
   ``v(I) = sum_h v(h)`` over its histories in depth-first order, the order in which the
   authors' walk meets them: a chance node's outcomes as the game lists them (`sibling_rank`;
   tiny bridge deals its hands out of numerical order, the other games of the paper in it), a
   decision's actions by number. Two differences touch no game of the paper: a chance node's
   own value adds its children in numerical order, and chance nodes that directly follow one
   another are summed level by level (the authors flatten them); both matter only where chance
   moves after a learner's decision in an order other than the numerical one, or twice in a row
   (in the nine games, chance moves twice in a row only at the deal, above every decision).
2. Immediate regrets (`immediate_regrets`) as ``rho(phi) = -v(I) + sum_a q(I, phi(a)) pi(a)``,
   accumulated left to right. With pi(a) = 0 this is a rounding residue, not the exact 0 of
   ``pi(a) (q(b) - q(a))``, and the residue is part of the paper's numbers.
3. Time-selection weights multiply their factors root to leaf (`sequential_products`), and each
   transformation's weight ``y_phi`` adds its sequences' terms in the order of the authors'
   sequence lists (`sequential_segment_sums`; `labkit.efr.deviations` stores rows in that order).
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from labkit.tree import CHANCE

if TYPE_CHECKING:
    from labkit.efr.deviations import DeviationStructure
    from labkit.tree import GameTree


def sibling_rank(game: GameTree) -> NDArray[np.int64]:
    """The place of every history among its siblings in the order the game's definition lists
    them (cached on the game): at a chance node, the position of its outcome in the definition's
    ``chance_outcomes()``; elsewhere the action id.

    The compiled tree sorts every node's children by action id. The authors' traversal takes a
    chance node's outcomes in the order OpenSpiel lists them, and OpenSpiel's tiny bridge deals
    its hands in an order that is not sorted (hand 0, 1, 3, 6, 10, ... for the first player).
    Since an infoset's values are sums over its histories in depth-first order, that order
    decides their last bits. Only the states on the way to a chance node are rebuilt from the
    definition (29 in tiny bridge); a tree without a definition keeps the sorted order.

    Parameters
    ----------
    game : GameTree
        A compiled game; its ``definition`` (an OpenSpiel game or labkit's own) lists the chance
        outcomes.

    Returns
    -------
    numpy.ndarray of int64, shape (num_histories,)
        The rank of each history among its siblings (0 for the root).

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> deals = np.flatnonzero(kuhn.parent == 0)          # the first card, listed in order
    >>> sibling_rank(kuhn)[deals].tolist() == kuhn.action[deals].tolist()
    True
    """
    cache = game.__dict__.setdefault("_efr_paper_cache", {})
    if "sibling_rank" not in cache:
        g = game
        rank = np.maximum(g.action, 0).astype(np.int64)
        definition = getattr(g, "definition", None)
        chance = np.flatnonzero(g.player == CHANCE)
        if definition is not None and len(chance):
            # the histories that have a chance node at or below them: the only states rebuilt
            leads = g.player == CHANCE
            for _, _, below in reversed(g.child_blocks):
                kids = np.arange(below.start, below.stop)
                np.logical_or.at(leads, g.parent[kids[leads[kids]]], True)
            children: dict[int, list[int]] = {}
            for history in np.flatnonzero(g.parent >= 0):
                if leads[g.parent[history]]:
                    children.setdefault(int(g.parent[history]), []).append(int(history))
            stack = [(0, definition.initial_state())]
            while stack:
                h, state = stack.pop()
                below_h = children.get(h, [])
                if g.player[h] == CHANCE:
                    listed = {int(a): k for k, (a, _) in enumerate(state.chance_outcomes())}
                    for child in below_h:
                        rank[child] = listed[int(g.action[child])]
                stack.extend((child, state.child(int(g.action[child]))) for child in below_h
                             if leads[child])
        cache["sibling_rank"] = rank
    return cache["sibling_rank"]


def depth_first_order(game: GameTree) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Pre-order position of every history in a depth-first walk that takes each node's
    children in the definition's order (`sibling_rank`; cached on the game).

    Parameters
    ----------
    game : GameTree
        A compiled game.

    Returns
    -------
    preorder : (num_histories,) int64 array
        The position of each history in the walk (the root is 0).
    num_children : (num_histories,) int64 array
        The number of children of each history.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> preorder, num_children = depth_first_order(kuhn)
    >>> preorder[:4].tolist(), num_children[:2].tolist()     # the root, then its three deals
    ([0, 1, 20, 39], [3, 2])
    """
    cache = game.__dict__.setdefault("_efr_paper_cache", {})
    if "preorder" not in cache:
        H = game.num_histories
        rank = sibling_rank(game)
        subtree = np.ones(H, dtype=np.int64)
        for _, _, below in reversed(game.child_blocks):
            np.add.at(subtree, game.parent[below], subtree[below])
        preorder = np.zeros(H, dtype=np.int64)
        for _, _, below in game.child_blocks:
            # the level's histories grouped by parent (breadth-first: parents nondecreasing),
            # each group in the definition's order
            kids = np.arange(below.start, below.stop)
            if len(kids) == 0:
                continue
            kids = kids[np.lexsort((rank[kids], game.parent[kids]))]
            parents = game.parent[kids]
            before = np.cumsum(subtree[kids]) - subtree[kids]          # sizes of earlier kids, level-wide
            first = np.r_[True, parents[1:] != parents[:-1]]
            group_start = np.maximum.accumulate(np.where(first, np.arange(len(kids)), 0))
            preorder[kids] = preorder[parents] + 1 + before - before[group_start]
        cache["preorder"] = preorder
        cache["num_children"] = np.bincount(game.parent[1:], minlength=H) if H > 1 else np.zeros(H, np.int64)
    return cache["preorder"], cache["num_children"]


def counterfactual_values(game: GameTree, profile: NDArray[np.float64],
                          player: int) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.bool_]]:
    r"""The counterfactual values :math:`q(I, a) = \sum_{h \in I} v(ha)` and
    :math:`v(I) = \sum_{h \in I} v(h)` of `player`'s infosets, and whether the others reach them
    (step 1 of the module docstring: every sum in the authors' order).

    Parameters
    ----------
    game : GameTree
        A compiled game.
    profile : (num_infosets, num_actions) float array
        Every player's behavioral strategy.
    player : int
        The player whose values are computed.

    Returns
    -------
    q : (num_infosets, num_actions) float array
        0 for the other players' infosets.
    v : (num_infosets,) float array
    reached : (num_infosets,) bool array
        Whether chance and the others reach some history of the infoset with positive probability.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> uniform = kuhn.legal_mask / kuhn.legal_mask.sum(axis=1, keepdims=True)
    >>> q, v, reached = counterfactual_values(kuhn, uniform, 0)
    >>> q[0].round(4), round(float(v[0]), 4), int(reached.sum())
    (array([-0.4167, -0.1667]), -0.2917, 6)
    """
    g = game
    H, A = g.num_histories, g.num_actions
    preorder, num_children = depth_first_order(g)
    # top-down: r(h) = r(parent) * (chance probability | other player's probability | 1)
    weight = np.ones(H)
    for level in g.levels[1:]:
        h = np.arange(level.start, level.stop)
        parent = g.parent[h]
        mover = g.player[parent]
        decision = mover >= 0
        factor = np.where(mover == CHANCE, g.chance_prob[h], 1.0)
        others = decision & (mover != player)
        factor[others] = profile[g.infoset[parent[others]], g.action[h[others]]]
        weight[h] = weight[parent] * factor
    # bottom-up, children left to right
    value = np.zeros(H)
    z = g.terminals
    value[z] = g.returns[z, player] * weight[z]
    action_value = np.zeros((H, A))
    for nodes, first_child, below in reversed(g.child_blocks):
        if len(nodes) == 0:
            continue
        kids = num_children[nodes]
        mover = g.player[nodes]
        own = mover == player
        infoset = np.maximum(g.infoset[nodes], 0)
        total = np.zeros(len(nodes))
        for k in range(int(kids.max())):
            present = k < kids
            child = np.where(present, below.start + first_child + k, 0)
            action = np.where(mover >= 0, g.action[child], 0)
            child_value = value[child]
            prob = profile[infoset, action]
            term = np.where(own, prob * child_value, child_value)
            counted = present & ((mover == CHANCE) | own | (prob > 0))
            total = np.where(counted, total + term, total)
            mine = present & own
            action_value[nodes[mine], action[mine]] = child_value[mine]
        value[nodes] = total
    # infoset sums over the reached histories, in depth-first order (bincount adds in input order)
    histories = np.flatnonzero((g.player == player) & (weight > 0))
    histories = histories[np.argsort(preorder[histories], kind="stable")]
    infosets = g.infoset[histories]
    I = g.num_infosets
    q = np.stack([np.bincount(infosets, weights=action_value[histories, a], minlength=I) for a in range(A)],
                 axis=1)
    v = np.bincount(infosets, weights=value[histories], minlength=I)
    reached = np.bincount(infosets, minlength=I) > 0
    return q, v, reached


def immediate_regrets(game: GameTree, structure: DeviationStructure, q: NDArray[np.float64],
                      v: NDArray[np.float64], probs: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""The immediate regret of every transformation slot,
    :math:`\rho(\phi) = -v(I) + \sum_a q(I, \phi(a))\, \pi(a \mid I)`, summed over the actions
    in order (illegal actions add exact zeros); 0 on slots of illegal transformations.

    Parameters
    ----------
    game : GameTree
        A compiled game.
    structure : DeviationStructure
        The deviation type's slots (external ones first, then internal ``a * A + b``).
    q : (I, A) float array
    v : (I,) float array
        From `counterfactual_values`.
    probs : (I, A) float array
        The learner's strategy.

    Returns
    -------
    (I, S) float array

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit.efr import deviation_structure
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> uniform = kuhn.legal_mask / kuhn.legal_mask.sum(axis=1, keepdims=True)
    >>> q, v, _ = counterfactual_values(kuhn, uniform, 0)
    >>> immediate_regrets(kuhn, deviation_structure(kuhn, "cf"), q, v, uniform)[0]   # q(I, b) - v(I)
    array([-0.125,  0.125])
    """
    g, st = game, structure
    A = g.num_actions
    parts = []
    if st.has_external:
        external = np.empty((g.num_infosets, A))
        for b in range(A):
            total = -v
            for a in range(A):
                total = total + q[:, b] * probs[:, a]
            external[:, b] = total
        parts.append(external * g.legal_mask)
    if st.has_internal:
        internal = np.zeros((g.num_infosets, A, A))
        for source in range(A):
            for target in range(A):
                if source == target:
                    continue
                total = -v
                for a in range(A):
                    total = total + q[:, target if a == source else a] * probs[:, a]
                internal[:, source, target] = total
        internal *= g.legal_mask[:, :, None] & g.legal_mask[:, None, :]
        parts.append(internal.reshape(g.num_infosets, A * A))
    return np.concatenate(parts, axis=1)


def sequential_products(factors: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""Row products of a (R, k) array, multiplied left to right:
    :math:`(\cdots((1 \cdot f_{r1}) f_{r2}) \cdots) f_{rk}`.

    Parameters
    ----------
    factors : (R, k) float array

    Returns
    -------
    (R,) float array

    Examples
    --------
    >>> sequential_products(np.array([[0.5, 2.0, 3.0], [1.0, 1.0, 0.25]]))
    array([3.  , 0.25])
    """
    product = np.ones(factors.shape[0])
    for column in factors.T:
        product = product * column
    return product


def sequential_segment_sums(terms: NDArray[np.float64], starts: NDArray[np.int64]) -> NDArray[np.float64]:
    """Sums of consecutive row segments of `terms` (segment s = rows starts[s]..starts[s+1]-1),
    added top to bottom, starting from 0 as a running sum would.

    The segments are padded with trailing zeros to a common length (x + 0 = x, so the padding
    changes no bit) and summed by ``np.add.accumulate``, which runs left to right; np.sum and
    np.add.reduceat may sum pairwise instead.

    Parameters
    ----------
    terms : (R, ...) float array
    starts : (S,) int array
        The first row of each segment, nondecreasing, from 0.

    Returns
    -------
    (S, ...) float array

    Examples
    --------
    >>> sequential_segment_sums(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 1, 3]))
    array([1., 5., 4.])
    """
    counts = np.diff(np.r_[starts, len(terms)])
    width = int(counts.max(initial=0))
    padded = np.zeros((len(starts), max(width, 1)) + terms.shape[1:])
    segment = np.repeat(np.arange(len(starts)), counts)
    padded[segment, np.arange(len(terms)) - np.repeat(starts, counts)] = terms
    return np.add.accumulate(padded, axis=1)[:, -1]


# ---------------------------------------------------------------------- compiled loops
# The same computations as `counterfactual_values`, `immediate_regrets` and steps 3 and 4 of
# `labkit.efr.EFR.update`, each active entry of the regret table touched once (``paper_kernels.cpp``,
# built with the Eigen solver by `labkit.efr.eigen`). Bit for bit the numpy versions'
# results: tests/test_efr_paper_kernels.py compares them on every deviation type, and
# benchmarks/bench_efr_paper_kernels.py measures the two side by side.
#
# The learner's round (`labkit.efr.EFR._paper_round`) goes further, still without changing an
# operation or its order: `counterfactual_values_into` (the others' top-down weights shared by
# the learners that meet one profile, int32 tree arrays), `immediate_regrets_compiled` with
# constant_rows, and `player_update` (all of a player's blocks in one call: weights, regret
# update over the slots some row of the infoset uses, y only where the others reach, the solver
# per infoset with a memory of its last input and output). tests/test_efr_paper_round.py
# compares it with the block loop on all nine games of the paper; benchmarks/bench_efr_round.py
# times the two.

def _pointer(array):
    return array.ctypes.data


class _Addresses(dict):
    """Memory addresses of arrays, cached beside the arrays (ctypes' ``.data`` costs microseconds,
    and an update passes dozens). A copy of the owner (deepcopy, pickle) holds other memory, so
    this cache is never copied: the copy starts empty and looks its own arrays up."""

    def __copy__(self):
        return _Addresses()

    def __deepcopy__(self, memo):
        return _Addresses()

    def __reduce__(self):
        return (_Addresses, ())


def _addresses(cache, key, arrays):
    """``tuple(_pointer(a) for a in arrays())``, kept in the `_Addresses` `cache` under `key`."""
    found = cache.get(key)
    if found is None:
        found = cache[key] = tuple(_pointer(a) for a in arrays())
    return found


def counterfactual_values_compiled(game: GameTree, profile: NDArray[np.float64],
                                   player: int) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.bool_]]:
    r"""`counterfactual_values`, compiled (``paper_kernels.cpp``): the same arguments, the same bits.

    :math:`q(I, a) = \sum_{h \in I} v(ha)` and :math:`v(I) = \sum_{h \in I} v(h)` of `player`'s
    infosets, every sum in the authors' depth-first order (module docstring, step 1).

    Parameters
    ----------
    game : GameTree
        A compiled game.
    profile : (num_infosets, num_actions) float array
        Every player's behavioral strategy.
    player : int
        The player whose values are computed.

    Returns
    -------
    q : (num_infosets, num_actions) float array
        0 at the other players' infosets.
    v : (num_infosets,) float array
    reached : (num_infosets,) bool array
        Whether chance and the others reach some history of the infoset.

    Raises
    ------
    labkit.efr.eigen.EigenUnavailable
        Where the compiled library cannot be built (no C++ compiler or no Eigen headers).

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit.efr import deviation_structure, eigen
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> uniform = kuhn.legal_mask / kuhn.legal_mask.sum(axis=1, keepdims=True)
    >>> if eigen.available()[0]:
    ...     q, v, reached = counterfactual_values_compiled(kuhn, uniform, 0)
    ... else:
    ...     q, v, reached = counterfactual_values(kuhn, uniform, 0)
    >>> q[0].round(4), round(float(v[0]), 4), int(reached.sum())
    (array([-0.4167, -0.1667]), -0.2917, 6)
    """
    from labkit.efr.eigen import kernels
    g = game
    H, A, I = g.num_histories, g.num_actions, g.num_infosets
    tables = _tree_tables(g)
    ordered = tables["ordered"][player]
    payoff = tables["payoff"][player]
    profile = np.ascontiguousarray(profile, dtype=float)
    weight, value, action_value = np.empty(H), np.empty(H), np.empty((H, A))
    q, v, reached = np.zeros((I, A)), np.zeros(I), np.zeros(I, dtype=np.uint8)
    kernels().counterfactual_values(
        H, A, int(player), *(_pointer(tables[k]) for k in ("parent", "mover", "infoset", "action")),
        _pointer(tables["chance_prob"]), _pointer(payoff), _pointer(tables["first_child"]),
        _pointer(tables["num_children"]), _pointer(profile), len(ordered), _pointer(ordered),
        _pointer(weight), _pointer(value), _pointer(action_value), _pointer(q), _pointer(v),
        _pointer(reached))
    return q, v, reached.astype(bool)


def counterfactual_values_into(game: GameTree, own: NDArray[np.float64], others: NDArray[np.float64], player: int,
                               q: NDArray[np.float64], v: NDArray[np.float64], reached: NDArray[np.uint8],
                               scratch: dict[str, Any] | None = None) -> None:
    """`counterfactual_values` of `player` on the merged profile ``np.where(mine, own, others)``
    (mine: the player's infosets), compiled, written into the caller's arrays at the player's
    infosets (the other entries are left alone), so that one set of arrays collects every
    player's values.

    The top-down weights r(h) depend on `others` alone (`_others_reach`): learners that meet
    the same profile in a row (a fixed-regime round: every row against the column's y^t) share
    them.

    Parameters
    ----------
    game : GameTree
        A compiled game.
    own : (I, A) float64 array, C-contiguous
        The strategy read at `player`'s infosets.
    others : (I, A) float64 array, C-contiguous
        The strategy read at everyone else's.
    player : int
    q : (I, A) float64 array, C-contiguous
        Receives q(I, a); zeros at the player's infosets on entry, as `counterfactual_values`'
        fresh arrays are.
    v : (I,) float64 array, C-contiguous
        Receives v(I).
    reached : (I,) uint8 array, C-contiguous
        Receives 1 where the others reach the infoset.
    scratch : dict, optional
        Kept by the caller (one per learner: the pass overwrites it); saves allocating the
        per-history work array in every call.

    Raises
    ------
    ValueError
        If an array has another dtype or is not C-contiguous.
    labkit.efr.eigen.EigenUnavailable
        Where the compiled library cannot be built.

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit.efr import deviation_structure, eigen
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> uniform = kuhn.legal_mask / kuhn.legal_mask.sum(axis=1, keepdims=True)
    >>> q = np.zeros(uniform.shape)
    >>> v, reached = np.zeros(kuhn.num_infosets), np.zeros(kuhn.num_infosets, dtype=np.uint8)
    >>> if eigen.available()[0]:
    ...     counterfactual_values_into(kuhn, uniform, uniform, 0, q, v, reached)
    ...     print(q[0].round(4), int(reached.sum()))
    ... else:
    ...     print("[-0.4167 -0.1667] 6")
    [-0.4167 -0.1667] 6
    """
    from labkit.efr.eigen import kernels
    g = game
    H, A = g.num_histories, g.num_actions
    tables = _tree_tables(g)
    ordered = tables["ordered"][player]
    scratch = {} if scratch is None else scratch
    if not scratch:                      # per-history work array, overwritten by every pass
        scratch.update(value=np.empty(H))
    for array, kind in ((own, np.float64), (others, np.float64), (q, np.float64), (v, np.float64),
                        (reached, np.uint8)):
        if array.dtype != kind or not array.flags.c_contiguous:
            raise ValueError(f"counterfactual_values_into needs C-contiguous {np.dtype(kind).name} arrays")
    weight = _others_reach(g, player, others)
    mover, infoset, action, payoff, first_child, num_children, ordered_at = _pass_addresses(g, player)
    kernels().counterfactual_values_given_reach(
        H, A, int(player), mover, infoset, action, payoff, first_child, num_children, _pointer(own),
        _pointer(others), len(ordered), ordered_at, _pointer(weight), _pointer(scratch["value"]),
        _pointer(q), _pointer(v), _pointer(reached))


def _pass_addresses(game, player):
    """The addresses of the bottom-up pass's fixed arrays for `player` (cached on the game, beside
    the arrays)."""
    cache = game.__dict__.setdefault("_efr_paper_cache", {})
    book = cache.setdefault("pass_addresses", _Addresses())

    def arrays():
        tables, narrow = _tree_tables(game), _narrow_tree_tables(game)
        return (*(narrow[k] for k in ("mover", "infoset", "action")), tables["payoff"][player],
                narrow["first_child"], narrow["num_children"], tables["ordered"][player])
    return _addresses(book, int(player), arrays)


def _narrow_tree_tables(game):
    """`_tree_tables`' integer arrays as int32 (cached on the game): the bottom-up pass streams
    them once per learner and player, and half the bytes is most of its time."""
    cache = game.__dict__.setdefault("_efr_paper_cache", {})
    if "narrow_tree_tables" not in cache:
        tables = _tree_tables(game)
        if game.num_histories >= 2 ** 31:
            raise ValueError(f"{game.name} has too many histories for the compiled pass")
        cache["narrow_tree_tables"] = {k: np.ascontiguousarray(tables[k], dtype=np.int32)
                                       for k in ("mover", "infoset", "action", "first_child", "num_children")}
    return cache["narrow_tree_tables"]


# the last others' profile and its top-down weights per (game, player), one memory per thread
# (the work units of a tournament may run in threads; each thread keeps its own)
_reach_memory = threading.local()


def _others_reach(game, player, others):
    """r(h) = the product of chance's and the other players' probabilities into h, as the first
    half of the compiled counterfactual pass computes it; recomputed only when `others` differs
    (in any bit) from the profile of the previous call for this game and player in this thread.
    The returned array is overwritten by the next call that misses."""
    from labkit.efr.eigen import kernels
    memory = _reach_memory.__dict__.setdefault("entries", {})
    key = (id(game), int(player))
    entry = memory.get(key)
    if (entry is not None and entry[0] is game and entry[1].shape == others.shape
            and np.array_equal(entry[1].view(np.int64), others.view(np.int64))):
        return entry[2]
    weight = entry[2] if entry is not None and entry[0] is game else np.empty(game.num_histories)
    tables = _tree_tables(game)
    kernels().others_reach(game.num_histories, game.num_actions, int(player),
                           *(_pointer(tables[k]) for k in ("parent", "mover", "infoset", "action")),
                           _pointer(tables["chance_prob"]), _pointer(others), _pointer(weight))
    memory[key] = (game, others.copy(), weight)
    return weight


def _tree_tables(game):
    """The tree as contiguous int64/float64 arrays for the compiled pass (cached on the game),
    with each player's histories in depth-first order."""
    cache = game.__dict__.setdefault("_efr_paper_cache", {})
    if "tree_tables" not in cache:
        g = game
        preorder, num_children = depth_first_order(g)
        parent = np.ascontiguousarray(g.parent, dtype=np.int64)
        # breadth-first numbering: parents are nondecreasing, so each node's children start at
        # the first index whose parent it is
        first_child = np.searchsorted(parent[1:], np.arange(g.num_histories)) + 1
        tables = {"parent": parent, "mover": np.ascontiguousarray(g.player, dtype=np.int64),
                  "infoset": np.ascontiguousarray(g.infoset, dtype=np.int64),
                  "action": np.ascontiguousarray(np.maximum(g.action, 0), dtype=np.int64),
                  "chance_prob": np.ascontiguousarray(g.chance_prob, dtype=float),
                  "first_child": np.ascontiguousarray(first_child, dtype=np.int64),
                  "num_children": np.ascontiguousarray(num_children, dtype=np.int64),
                  "ordered": {}, "payoff": {}}
        for p in range(g.num_players):
            own = np.flatnonzero(g.player == p)
            tables["ordered"][p] = np.ascontiguousarray(own[np.argsort(preorder[own], kind="stable")],
                                                        dtype=np.int64)
            tables["payoff"][p] = np.ascontiguousarray(g.returns[:, p], dtype=float)
        cache["tree_tables"] = tables
    return cache["tree_tables"]


def immediate_regrets_compiled(game: GameTree, structure: DeviationStructure, q: NDArray[np.float64],
                               v: NDArray[np.float64], probs: NDArray[np.float64],
                               constant_rows: bool = False) -> NDArray[np.float64]:
    r"""`immediate_regrets`, compiled (same arguments, same bits):
    :math:`\rho(\phi) = -v(I) + \sum_a q(I, \phi(a))\, \pi(a \mid I)`, summed over the actions
    in order.

    Parameters
    ----------
    game : GameTree
    structure : DeviationStructure
        The deviation type's slots.
    q : (I, A) float array
    v : (I,) float array
        From `counterfactual_values`.
    probs : (I, A) float array
        The learner's strategy.
    constant_rows : bool, default False
        An infoset whose q(I, .) is one value in every action (every unreached one) is summed
        once for all its slots: the sums are term for term the same.

    Returns
    -------
    (I, S) float array

    Raises
    ------
    labkit.efr.eigen.EigenUnavailable
        Where the compiled library cannot be built.

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit.efr import deviation_structure, eigen
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> uniform = kuhn.legal_mask / kuhn.legal_mask.sum(axis=1, keepdims=True)
    >>> q, v, _ = counterfactual_values(kuhn, uniform, 0)
    >>> structure = deviation_structure(kuhn, "cf")
    >>> rho = (immediate_regrets_compiled(kuhn, structure, q, v, uniform) if eigen.available()[0]
    ...        else immediate_regrets(kuhn, structure, q, v, uniform))
    >>> rho[0]                                                         # q(I, b) - v(I)
    array([-0.125,  0.125])
    """
    from labkit.efr.eigen import kernels
    g, st = game, structure
    I, A = g.legal_mask.shape
    q, v, probs = (np.ascontiguousarray(x, dtype=float) for x in (q, v, probs))
    legal = _legal_bytes(g)
    rho = np.empty((I, st.num_slots))
    kernel = kernels().immediate_regrets_constant_rows if constant_rows else kernels().immediate_regrets
    kernel(I, A, _pointer(q), _pointer(v), _pointer(probs), _pointer(legal),
                                st.num_slots, 0 if st.has_external else -1,
                                st.internal_offset if st.has_internal else -1, _pointer(rho))
    return rho


def block_update(regrets: NDArray[np.float64], played_weight: NDArray[np.float64], rho: NDArray[np.float64],
                 row_infoset: NDArray[np.int64], row_active: NDArray[np.bool_], new_weight: NDArray[np.float64],
                 starts: NDArray[np.int64]) -> NDArray[np.float64]:
    r"""Steps 3 and 4 of the round on one block of rows, compiled, in one pass: in place
    :math:`R[s, \phi] \mathrel{+}= w(s)\, \rho(I_s, \phi)` on the active slots, then the
    weights :math:`y_\phi = \sum_s w'(s) \max(R[s, \phi], 0)` of each segment, summed top to
    bottom. The same bits as `block_update_numpy` for regrets whose inactive slots are +0.0 (as
    EFR keeps them).

    Parameters
    ----------
    regrets : (R, S) float64 array, C-contiguous
        Changed in place.
    played_weight : (R,) float array
        The rows' time-selection weights of the round played.
    rho : (I, S) float array
        The immediate regrets.
    row_infoset : (R,) int64 array, C-contiguous
    row_active : (R, S) bool array, C-contiguous
    new_weight : (R,) float array
        The rows' weights for the next round.
    starts : (B,) int array
        The first row of each infoset's segment.

    Returns
    -------
    (B, S) float array

    Raises
    ------
    ValueError
        If `regrets`, `row_active` or `row_infoset` has another dtype, layout or shape.
    labkit.efr.eigen.EigenUnavailable
        Where the compiled library cannot be built.

    Examples
    --------
    >>> from labkit.efr import eigen
    >>> regrets = np.zeros((3, 2))
    >>> rho = np.array([[1.0, -2.0], [0.5, 0.25]])              # two infosets' immediate regrets
    >>> row_infoset, row_active = np.array([0, 0, 1]), np.ones((3, 2), dtype=bool)
    >>> update = block_update if eigen.available()[0] else block_update_numpy
    >>> update(regrets, np.array([1.0, 0.5, 2.0]), rho, row_infoset, row_active, np.ones(3), np.array([0, 2]))
    array([[1.5, 0. ],
           [1. , 0.5]])
    """
    from labkit.efr.eigen import kernels
    rows, slots = regrets.shape
    _require_layout(regrets, row_active, row_infoset)
    played_weight, new_weight, rho = (np.ascontiguousarray(x, dtype=float)
                                      for x in (played_weight, new_weight, rho))
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    y = np.empty((len(starts), slots))
    kernels().block_update(rows, slots, _pointer(regrets), _pointer(played_weight), _pointer(rho),
                           _pointer(row_infoset), _pointer(row_active), _pointer(new_weight),
                           len(starts), _pointer(starts), _pointer(y))
    return y


def _require_layout(regrets, row_active=None, row_infoset=None):
    """The kernels index raw memory: refuse any array they would misread."""
    if regrets.dtype != np.float64 or not regrets.flags.c_contiguous or regrets.ndim != 2:
        raise ValueError("regrets must be a C-contiguous 2-d float64 array")
    if row_active is not None and (row_active.dtype != np.bool_ or not row_active.flags.c_contiguous
                                   or row_active.shape != regrets.shape):
        raise ValueError("row_active must be a C-contiguous bool array of the regrets' shape")
    if row_infoset is not None and (row_infoset.dtype != np.int64 or not row_infoset.flags.c_contiguous
                                    or row_infoset.shape != regrets.shape[:1]):
        raise ValueError("row_infoset must be a C-contiguous int64 array, one entry per row")


def _legal_bytes(game):
    cache = game.__dict__.setdefault("_efr_paper_cache", {})
    if "legal_bytes" not in cache:
        cache["legal_bytes"] = np.ascontiguousarray(game.legal_mask, dtype=np.uint8)
    return cache["legal_bytes"]


def accumulate_regrets_numpy(regrets: NDArray[np.float64], weight: NDArray[np.float64], rho: NDArray[np.float64],
                             row_infoset: NDArray[np.int64], row_active: NDArray[np.bool_]) -> None:
    r"""Step 3 in numpy, in place: ``regrets += weight[:, None] * rho[row_infoset] * row_active``,
    :math:`R[s, \phi] \mathrel{+}= w(s)\, \rho(I_s, \phi)` on the active slots.

    Parameters
    ----------
    regrets : (R, S) float array
        One row per (infoset, time-selection memory); changed in place.
    weight : (R,) float array
        The rows' time-selection weights of the round played.
    rho : (I, S) float array
        The immediate regrets (`immediate_regrets`).
    row_infoset : (R,) int array
        The infoset of each row.
    row_active : (R, S) bool array
        The slots each row keeps.

    Examples
    --------
    >>> regrets = np.zeros((3, 2))
    >>> rho = np.array([[1.0, -2.0], [0.5, 0.25]])              # two infosets' immediate regrets
    >>> row_infoset, row_active = np.array([0, 0, 1]), np.ones((3, 2), dtype=bool)
    >>> accumulate_regrets_numpy(regrets, np.array([1.0, 0.5, 2.0]), rho, row_infoset, row_active)
    >>> regrets
    array([[ 1. , -2. ],
           [ 0.5, -1. ],
           [ 1. ,  0.5]])
    """
    regrets += weight[:, None] * rho[row_infoset] * row_active


def positive_segment_sums_numpy(regrets: NDArray[np.float64], weight: NDArray[np.float64],
                                starts: NDArray[np.int64]) -> NDArray[np.float64]:
    r"""Step 4's weights in numpy: the time-selection-weighted positive regrets of each segment of
    rows, :math:`y_\phi = \sum_s w(s) \max(R[s, \phi], 0)`, summed top to bottom in
    `sequential_segment_sums`' order.

    Parameters
    ----------
    regrets : (R, S) float array
    weight : (R,) float array
        The rows' time-selection weights for the next round.
    starts : (B,) int array
        The first row of each infoset's segment.

    Returns
    -------
    (B, S) float array
        The transformation weights of each infoset (`labkit.efr.fixed_point`).

    Examples
    --------
    >>> regrets = np.array([[1.0, -2.0], [0.5, -1.0], [1.0, 0.5]])
    >>> positive_segment_sums_numpy(regrets, np.ones(3), np.array([0, 2]))
    array([[1.5, 0. ],
           [1. , 0.5]])
    """
    return sequential_segment_sums(weight[:, None] * np.maximum(regrets, 0.0), starts)


def block_update_numpy(regrets: NDArray[np.float64], played_weight: NDArray[np.float64], rho: NDArray[np.float64],
                       row_infoset: NDArray[np.int64], row_active: NDArray[np.bool_], new_weight: NDArray[np.float64],
                       starts: NDArray[np.int64]) -> NDArray[np.float64]:
    """`block_update` in numpy (the reference the compiled loop equals bit for bit):
    `accumulate_regrets_numpy`, then `positive_segment_sums_numpy`.

    Parameters
    ----------
    regrets, played_weight, rho, row_infoset, row_active
        As for `accumulate_regrets_numpy` (`regrets` is changed in place).
    new_weight, starts
        As `weight` and `starts` of `positive_segment_sums_numpy`.

    Returns
    -------
    (B, S) float array

    Examples
    --------
    >>> regrets = np.zeros((3, 2))
    >>> rho = np.array([[1.0, -2.0], [0.5, 0.25]])              # two infosets' immediate regrets
    >>> row_infoset, row_active = np.array([0, 0, 1]), np.ones((3, 2), dtype=bool)
    >>> block_update_numpy(regrets, np.array([1.0, 0.5, 2.0]), rho, row_infoset, row_active, np.ones(3),
    ...                    np.array([0, 2]))
    array([[1.5, 0. ],
           [1. , 0.5]])
    """
    accumulate_regrets_numpy(regrets, played_weight, rho, row_infoset, row_active)
    return positive_segment_sums_numpy(regrets, new_weight, starts)


class PlayerLayout:
    """One player's rows of a `DeviationStructure`, laid out for `player_update` (`of` caches it
    on the game per deviation type and player, shared by that type's learners): the row arrays as
    contiguous views, the blocks' row bounds, their infosets and segment starts concatenated,
    and per infoset the slots active in any of its rows.

    Parameters
    ----------
    game : GameTree
    structure : DeviationStructure
    player : int

    Attributes
    ----------
    rows : slice
        The player's rows in the structure's table.
    infosets, starts : int64 arrays
        The blocks' infosets and segment starts, concatenated.

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit.efr import deviation_structure
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> layout = PlayerLayout(kuhn, deviation_structure(kuhn, "cf"), 0)
    >>> layout.rows, len(layout.infosets)
    (slice(0, 6, None), 6)
    """

    def __init__(self, game: GameTree, structure: DeviationStructure, player: int):
        st = structure
        blocks = st.blocks[player]
        first = blocks[0][0].start if blocks else 0
        stop = blocks[-1][0].stop if blocks else 0
        self.rows = slice(first, stop)
        self.row_factors = np.ascontiguousarray(st.row_factors[first:stop], dtype=np.int64)
        self.depth = self.row_factors.shape[1]
        self.row_infoset = np.ascontiguousarray(st.row_infoset[first:stop], dtype=np.int64)
        self.row_active = np.ascontiguousarray(st.row_active[first:stop], dtype=np.bool_)
        self.block_rows = np.array([b.start - first for b, _, _ in blocks] + [stop - first], dtype=np.int64)
        self.counts = [len(infosets) for _, infosets, _ in blocks]
        self.block_infosets = np.r_[0, np.cumsum(self.counts, dtype=np.int64)].astype(np.int64)

        def concat(parts):
            return np.ascontiguousarray(np.concatenate(parts), dtype=np.int64) if parts else np.zeros(0, np.int64)

        self.infosets = concat([infosets for _, infosets, _ in blocks])
        self.starts = concat([starts for _, _, starts in blocks])
        # per infoset (position), the slots active in any of its rows, ascending
        rows = stop - first
        segment_starts = concat([b.start - first + starts for b, _, starts in blocks])
        sizes = np.diff(np.r_[segment_starts, rows])
        union = np.zeros((len(segment_starts), st.num_slots), dtype=bool)
        if rows:
            # (reduceat gives an empty segment its first row: those are masked out)
            union = np.logical_or.reduceat(self.row_active, np.minimum(segment_starts, rows - 1), axis=0)
            union &= (sizes > 0)[:, None]
        self.union_start = np.r_[0, np.cumsum(union.sum(axis=1))].astype(np.int64)
        # whether every row of the infoset has exactly its union active (the kernel then reads
        # no mask)
        mismatched = np.zeros(len(segment_starts), dtype=bool)
        if rows:
            per_row_union = np.repeat(union, sizes, axis=0)
            owner = np.repeat(np.arange(len(segment_starts)), sizes)
            np.logical_or.at(mismatched, owner, (self.row_active != per_row_union).any(axis=1))
        self.uniform = (~mismatched).astype(np.uint8)
        self.union_slots = np.ascontiguousarray(np.nonzero(union)[1], dtype=np.int64)
        self.legal = _legal_bytes(game)
        self.external_offset = 0 if st.has_external else -1
        self.internal_offset = st.internal_offset if st.has_internal else -1
        self.num_slots = st.num_slots
        self.num_actions = game.num_actions
        self._book = _Addresses()

    def addresses(self) -> tuple[int, ...]:
        """The arrays' addresses in `player_update`'s order of arguments (cached).

        Returns
        -------
        tuple of 11 int

        Examples
        --------
        >>> import labkit as lk
        >>> from labkit.efr import deviation_structure
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> layout = PlayerLayout(kuhn, deviation_structure(kuhn, "cf"), 0)
        >>> layout.addresses()[0] == layout.row_factors.ctypes.data
        True
        """
        return _addresses(self._book, "layout", lambda: (
            self.row_factors, self.row_infoset, self.row_active, self.legal, self.block_rows,
            self.block_infosets, self.infosets, self.starts, self.union_start, self.union_slots,
            self.uniform))

    @classmethod
    def of(cls, game: GameTree, structure: DeviationStructure, player: int) -> PlayerLayout:
        """The layout of `player`'s rows, made once per game, deviation structure and player.

        Parameters
        ----------
        game : GameTree
        structure : DeviationStructure
        player : int

        Returns
        -------
        PlayerLayout

        Examples
        --------
        >>> import labkit as lk
        >>> from labkit.efr import deviation_structure
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> structure = deviation_structure(kuhn, "cf")
        >>> PlayerLayout.of(kuhn, structure, 1) is PlayerLayout.of(kuhn, structure, 1)
        True
        """
        cache = game.__dict__.setdefault("_efr_paper_cache", {}).setdefault("layouts", {})
        key = (structure.kind, int(player))
        if key not in cache or cache[key][0] is not structure:
            cache[key] = (structure, cls(game, structure, player))
        return cache[key][1]


class PlayerPlan:
    """A `PlayerLayout` with one learner's working memory for `player_update`: the block's y
    and the solver's last input and output per infoset (``player_update`` reuses them).

    Parameters
    ----------
    game : GameTree
    structure : DeviationStructure
    player : int

    Attributes
    ----------
    layout : PlayerLayout
        Shared by the learners of the same deviation type.
    rows : slice
        The player's rows in the structure's table.
    solved : (infosets,) uint8 array
        Which infosets have a remembered solve.

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit.efr import deviation_structure
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> plan = PlayerPlan(kuhn, deviation_structure(kuhn, "cf"), 0)
    >>> plan.rows, int(plan.solved.sum())
    (slice(0, 6, None), 0)
    """

    def __init__(self, game: GameTree, structure: DeviationStructure, player: int):
        self.layout = layout = PlayerLayout.of(game, structure, player)
        self.rows = layout.rows
        self.y = np.empty((max(layout.counts, default=0), structure.num_slots))
        self.solved_y = np.empty((len(layout.infosets), structure.num_slots))
        self.solved_sigma = np.empty((len(layout.infosets), game.num_actions))
        self.solved = np.zeros(len(layout.infosets), dtype=np.uint8)
        self._book = _Addresses()

    def addresses(self) -> tuple[int, ...]:
        """The working arrays' addresses in `player_update`'s order of arguments (cached).

        Returns
        -------
        tuple of 4 int
            y, solved_y, solved_sigma and solved.

        Examples
        --------
        >>> import labkit as lk
        >>> from labkit.efr import deviation_structure
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> plan = PlayerPlan(kuhn, deviation_structure(kuhn, "cf"), 0)
        >>> plan.addresses()[-1] == plan.solved.ctypes.data
        True
        """
        return _addresses(self._book, "plan", lambda: (self.y, self.solved_y, self.solved_sigma,
                                                      self.solved))


def player_update(plan: PlayerPlan, flat: NDArray[np.float64], regrets: NDArray[np.float64],
                  played_weight: NDArray[np.float64], rho: NDArray[np.float64], reached: NDArray[np.uint8],
                  new_weight: NDArray[np.float64]) -> None:
    """Steps 3 and 4 of the round for one player, compiled: for each of its blocks, shallowest
    first, the time-selection weights under the strategy as the earlier blocks left it
    (`sequential_products`), `block_update`, and the authors' solver (`labkit.efr.eigen`) on
    the infosets the others reach, written into `flat` (the strategy vector with its trailing
    1.0). The same bits as `labkit.efr.EFR`'s block loop with numpy and one solver call per
    block (an infoset whose weights y repeat the bytes of its last solve reuses that solve's
    strategy: the solver is a deterministic function of them; and y is formed only for the
    reached infosets and only over the slots active in some row of the infoset, the others
    being one shared running sum of zeros).

    Parameters
    ----------
    plan : PlayerPlan
        The learner's plan for this player.
    flat : (I * A + 1,) float64 array
        The learner's strategy, flat, with a trailing 1.0; the player's infosets are rewritten.
    regrets : (R, S) float64 array
        The learner's whole regret table; the player's rows are updated in place.
    played_weight : (rows,) float64 array
        The player's rows' time-selection weights of the round played.
    rho : (I, S) float64 array
        The immediate regrets (`immediate_regrets_compiled`).
    reached : (I,) uint8 array
        1 where the others reach the infoset (only those are solved).
    new_weight : (rows,) float64 array
        Receives the rows' weights under the new strategy.

    Raises
    ------
    ValueError
        If an array has another dtype, layout or shape than the plan's.
    labkit.efr.eigen.EigenUnavailable
        Where the compiled library cannot be built.

    Examples
    --------
    One round of counterfactual regret matching ("cf") for player 0 of Kuhn poker, from the
    uniform strategy: each infoset moves to its action of positive regret.

    >>> import labkit as lk
    >>> from labkit.efr import deviation_structure, eigen
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> uniform = kuhn.legal_mask / kuhn.legal_mask.sum(axis=1, keepdims=True)
    >>> structure = deviation_structure(kuhn, "cf")
    >>> flat = np.append(uniform.reshape(-1), 1.0)
    >>> if eigen.available()[0]:
    ...     plan = PlayerPlan(kuhn, structure, 0)
    ...     q, v, reached = counterfactual_values_compiled(kuhn, uniform, 0)
    ...     rho = immediate_regrets_compiled(kuhn, structure, q, v, uniform)
    ...     regrets = np.zeros((len(structure.row_infoset), structure.num_slots))
    ...     played = sequential_products(flat[structure.row_factors[plan.rows]])
    ...     player_update(plan, flat, regrets, played, rho, reached.astype(np.uint8), np.empty(len(played)))
    ...     print(flat[:2], regrets[0])
    ... else:
    ...     print("[0. 1.] [-0.125  0.125]")
    [0. 1.] [-0.125  0.125]
    """
    from labkit.efr.eigen import kernels
    _require_layout(regrets)
    layout, rows = plan.layout, plan.rows
    checks = ((flat, np.float64, None), (played_weight, np.float64, (rows.stop - rows.start,)),
              (new_weight, np.float64, (rows.stop - rows.start,)), (rho, np.float64, None),
              (reached, np.uint8, layout.legal.shape[:1]))
    for array, kind, shape in checks:
        if array.dtype != kind or not array.flags.c_contiguous or (shape and array.shape != shape):
            raise ValueError("player_update needs C-contiguous arrays of the plan's shapes")
    if regrets.shape[1] != layout.num_slots or rho.shape[1:] != (layout.num_slots,):
        raise ValueError("regrets and rho must have the structure's slots")
    (factors, row_infoset, active, legal, block_rows, block_infosets, infosets, starts, union_start,
     union_slots, uniform) = layout.addresses()
    y, solved_y, solved_sigma, solved = plan.addresses()
    kernels().player_update(
        layout.num_actions, layout.num_slots, layout.depth, _pointer(flat), factors,
        _pointer(regrets) + rows.start * layout.num_slots * 8, _pointer(played_weight), _pointer(rho),
        row_infoset, active, legal, _pointer(reached), layout.external_offset,
        layout.internal_offset, len(layout.block_rows) - 1, block_rows, block_infosets, infosets,
        starts, _pointer(new_weight), y, solved_y, solved_sigma, solved, union_start, union_slots,
        uniform)


def terminal_reach_compiled(game: GameTree, probs: NDArray[np.float64],
                            scratch: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    r"""Every player's and chance's contribution :math:`\pi_i(z)` to reaching each terminal z,
    compiled: ``labkit.evaluate._reach(game, edge_probabilities(game, probs))[:, game.terminals]``
    with the same bits.

    Parameters
    ----------
    game : GameTree
    probs : (num_infosets, num_actions) float array
        Every player's behavioral strategy.
    scratch : (num_histories * (n + 1),) float64 array, optional
        Kept by the caller; saves an allocation per call.

    Returns
    -------
    (n + 1, Z) float array
        Row i < n is player i's reach, row n chance's, one column per terminal.

    Raises
    ------
    ValueError
        If `probs` has another shape than the game's, or `scratch` is too small or not
        C-contiguous float64.
    labkit.efr.eigen.EigenUnavailable
        Where the compiled library cannot be built.

    Examples
    --------
    >>> import labkit as lk
    >>> from labkit.efr import deviation_structure, eigen
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> uniform = kuhn.legal_mask / kuhn.legal_mask.sum(axis=1, keepdims=True)
    >>> if eigen.available()[0]:
    ...     reach = terminal_reach_compiled(kuhn, uniform)
    ...     print(reach.shape, round(float(reach.prod(axis=0).sum()), 12))    # the terminals add to 1
    ... else:
    ...     print((3, 30), 1.0)
    (3, 30) 1.0
    """
    from labkit.efr.eigen import kernels
    g = game
    tables = _reach_tables(g)
    rows, H = g.num_players + 1, g.num_histories
    probs = np.ascontiguousarray(probs, dtype=float)
    if probs.shape != g.legal_mask.shape:
        raise ValueError(f"probs must have shape {g.legal_mask.shape}, got {probs.shape}")
    if scratch is None:
        scratch = np.empty(H * rows)
    elif scratch.dtype != np.float64 or not scratch.flags.c_contiguous or scratch.size < H * rows:
        raise ValueError(f"scratch must be a C-contiguous float64 array of at least {H * rows} entries")
    terminals = tables["terminals"]
    out = np.empty((rows, len(terminals)))
    parent, owner, source, chance, terminals_at = _addresses(
        tables["addresses"], "all",
        lambda: tuple(tables[k] for k in ("parent", "edge_owner", "edge_source", "chance_prob", "terminals")))
    kernels().terminal_reach(H, rows, parent, owner, source, chance, _pointer(probs), len(terminals),
                             terminals_at, _pointer(scratch), _pointer(out))
    return out


def _reach_tables(game):
    """The tree's edges for `terminal_reach_compiled` (cached on the game): parent, the row that
    owns each move (edge_owner), the index of its probability in the flat profile or -1 for
    chance's moves (edge_source), chance's probabilities and the terminals."""
    cache = game.__dict__.setdefault("_efr_paper_cache", {})
    if "reach_tables" not in cache:
        g = game
        source = np.full(g.num_histories, -1, dtype=np.int64)
        source[g.decision_edges] = g.edge_seq[g.decision_edges]
        cache["reach_tables"] = {
            "parent": np.ascontiguousarray(g.parent, dtype=np.int64),
            "edge_owner": np.ascontiguousarray(g.edge_owner, dtype=np.int64),
            "edge_source": source,
            "chance_prob": np.ascontiguousarray(g.chance_prob, dtype=float),
            "terminals": np.ascontiguousarray(g.terminals, dtype=np.int64)}
        cache["reach_tables"]["addresses"] = _Addresses()
    return cache["reach_tables"]
