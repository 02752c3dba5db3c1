r"""Exact evaluation of a joint policy on a `GameTree`: reach probabilities, values,
counterfactual values, best responses, NashConv and exploitability.

Everything is a vectorized pass over the tree's depth levels (top-down for reach,
bottom-up for values) or over a player's sequences (best response), never a recursion.

NashConv, best responses and expected payoffs only need the terminal histories. With perfect
recall, player i's contribution to reaching a terminal z is the realization weight
x_i(sigma_i(z)) of its last own sequence before z, and chance's contribution does not depend
on the policy; so one evaluation is

1. x_i for every sequence: one pass over the own depths of the infosets (936 in Leduc);
2. pi_i(z) = x_i(sigma_i(z)) by a gather, and pi_c(z) from a per-game cache;
3. on-policy values sum_z pi(z) u(z), and for each player a bottom-up max over its sequences.

Notation (Zinkevich et al., 2007): pi_i(h) is player i's own contribution to the probability
of reaching history h, pi_c(h) chance's, pi_{-i}(h) everyone's but i's (chance included).

Every function takes the game as a `GameTree` or anything `labkit.games.load` accepts (a game
string), and the policy as a `labkit.TabularPolicy` or a raw (num_infosets, num_actions) array,
validated first (`policy_array`): a bad policy raises an error naming the argument and the first
offending infoset, never a number.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

import numpy as np

from labkit import _nash_conv_native, kernels
from labkit.policy import TabularPolicy, _own_depth_levels, infoset_own_reach, probability_array
from labkit.tree import GameTree

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: A policy as the evaluators take it: a TabularPolicy or its (num_infosets, num_actions) array.
PolicyLike: TypeAlias = "TabularPolicy | ArrayLike"


def policy_array(game: GameTree, policy: PolicyLike, name: str = "policy") -> np.ndarray:
    """The (num_infosets, num_actions) probability array of `policy`, validated.

    A `TabularPolicy` must belong to `game` (or to a tree with the same information structure,
    `labkit.tree.GameTree.fingerprint`); it was validated when it was made, or is validated here
    once if it was made with ``check=False``. A plain array is checked row by row as
    `TabularPolicy` checks it (real numbers, finite, >= 0, nothing on illegal actions, every row
    summing to 1 over the legal actions, to a tolerance set by its dtype), by a few whole-array
    reductions (`labkit.policy.check_probs`). Every evaluator of this module calls it first.

    Parameters
    ----------
    game : GameTree
    policy : TabularPolicy or (num_infosets, num_actions) array_like
    name : str
        The argument's name in error messages.

    Returns
    -------
    (num_infosets, num_actions) float array

    Raises
    ------
    TypeError
        If `game` is not a GameTree, or `policy` is neither a policy nor an array of numbers.
    ValueError
        For a policy of another game, a wrong shape, or a row that is not a distribution over the
        legal actions (the first such infoset is named).

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> lk.evaluate.policy_array(kuhn, [[1.0, 0.0]] * 12).shape
    (12, 2)
    >>> lk.evaluate.policy_array(kuhn, [[1.0, 0.0]] * 6)
    Traceback (most recent call last):
      ...
    ValueError: policy array has shape (6, 2); expected (12, 2) (num_infosets, num_actions). ...
    """
    if not isinstance(game, GameTree):
        raise TypeError(f"game must be a GameTree or a game string (labkit.games.load), got {type(game).__name__}")
    return probability_array(game, policy, name)


def _game_and_probs(game: GameTree | str, policy: PolicyLike, name: str = "policy") -> tuple[GameTree, np.ndarray]:
    """(GameTree, validated probability array): `game` may be a GameTree or a game string."""
    if isinstance(game, str):
        from labkit.games import load
        game = load(game)
    return game, policy_array(game, policy, name)


def edge_probabilities(game: GameTree, probs: np.ndarray) -> np.ndarray:
    r"""The probability of the move into each history: :math:`\sigma(h)`'s last factor.

    Parameters
    ----------
    game : GameTree
    probs : (I, A) float array
        A valid policy array (not checked here).

    Returns
    -------
    (H,) float array
        The chance probability of the edge into h, or the acting player's probability of the
        action; 1 at the root.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> print(lk.evaluate.edge_probabilities(kuhn, lk.uniform_policy(kuhn).probs)[:6])
    [1.         0.33333333 0.33333333 0.33333333 0.5        0.5       ]
    """
    prob = game.chance_prob.copy()
    seqs = game.__dict__.get("_decision_edge_seqs")
    if seqs is None:
        seqs = game.__dict__["_decision_edge_seqs"] = game.edge_seq[game.decision_edges]
    prob[game.decision_edges] = np.take(probs.reshape(-1), seqs)
    return prob


def reach_probabilities(game: GameTree | str, policy: PolicyLike) -> np.ndarray:
    r"""Every player's and chance's contribution to the probability of reaching each history.

    .. math:: \pi(h) = \pi_c(h) \prod_{i} \pi_i(h), \qquad
              \pi_{-i}(h) = \pi_c(h) \prod_{j \ne i} \pi_j(h),

    where :math:`\pi_i(h)` is the product of player i's action probabilities on the path to h and
    :math:`\pi_c(h)` the product of the chance probabilities.

    Parameters
    ----------
    game : GameTree or str
    policy : TabularPolicy or (I, A) array

    Returns
    -------
    (n + 1, H) float array
        Row i is :math:`\pi_i(h)` for player i, row n is chance's :math:`\pi_c(h)`. The
        probability of reaching h is the product of the rows.

    Raises
    ------
    TypeError, ValueError
        For an invalid policy (`policy_array`).

    References
    ----------
    M. Zinkevich, M. Johanson, M. Bowling and C. Piccione (2007), "Regret minimization in games
    with incomplete information", NeurIPS.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> F = lk.reach_probabilities(kuhn, lk.uniform_policy(kuhn))
    >>> h = int(kuhn.terminals[0])                          # J, Q dealt; pass, pass
    >>> F[:, h].tolist(), float(F[:, h].prod())
    ([0.5, 0.5, 0.16666666666666666], 0.041666666666666664)
    """
    game, probs = _game_and_probs(game, policy)
    return _reach(game, edge_probabilities(game, probs))


def terminal_reach_probabilities(game: GameTree | str, policy: PolicyLike) -> np.ndarray:
    r"""Reach contributions at the terminal histories only.

    The same numbers as ``reach_probabilities(game, policy)[:, game.terminals]`` (to rounding),
    several times faster: with perfect recall, :math:`\pi_i(z) = x_i(\sigma_i(z))`, player i's
    realization weight of its last sequence before z.

    Parameters
    ----------
    game : GameTree or str
    policy : TabularPolicy or (I, A) array

    Returns
    -------
    (n + 1, Z) float array
        Columns in the order of ``game.terminals``; rows as in `reach_probabilities`.

    Raises
    ------
    TypeError, ValueError
        For an invalid policy.

    Examples
    --------
    >>> import numpy as np
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> R = lk.terminal_reach_probabilities(kuhn, lk.uniform_policy(kuhn))
    >>> R.shape, bool(np.allclose(R, lk.reach_probabilities(kuhn, lk.uniform_policy(kuhn))[:, kuhn.terminals]))
    ((3, 30), True)
    """
    game, probs = _game_and_probs(game, policy)
    return _terminal_reach(game, probs)


def _reach(game, prob):
    n, H = game.num_players, game.num_histories
    F = np.ones((n + 1, H))
    # row edge_owner[h] of column h gets the probability of the move into h
    F.reshape(-1)[_edge_slots(game)] = prob
    parent = game.parent
    for lv in game.levels[1:]:
        F[:, lv] *= np.take(F, parent[lv], axis=1)        # np.take: faster than F[:, index] here
    return F


def _chance_reach(game):
    """(H,) chance's reach pi_c(h), cached per game: row n of ``_reach(game, game.chance_prob)``,
    by the same products level by level without the players' rows."""
    cached = game.__dict__.get("_chance_reach")
    if cached is None:
        by_chance = game.edge_owner == game.num_players
        c = np.where(by_chance, game.chance_prob, 1.0)
        parent = game.parent
        for lv in game.levels[1:] if by_chance.any() else ():      # no chance move: every reach is 1
            c[lv] *= c[parent[lv]]
        cached = game.__dict__["_chance_reach"] = c
    return cached


def _edge_slots(game):
    slots = game.__dict__.get("_edge_slots")
    if slots is None:
        slots = game.__dict__["_edge_slots"] = game.edge_owner * game.num_histories + np.arange(game.num_histories)
    return slots


def _values(game, prob):
    """(H, n): every player's expected return from each history onward."""
    V = game.returns.copy()
    for internal, first_child, nxt in reversed(game.child_blocks):
        V[internal] = np.add.reduceat(prob[nxt, None] * V[nxt], first_child, axis=0)
    return V


def history_values(game: GameTree | str, policy: PolicyLike) -> np.ndarray:
    r"""Every player's expected return from each history onward when all follow `policy`.

    .. math:: v_i(h) = \sum_{z \sqsupseteq h} \frac{\pi(z)}{\pi(h)}\, u_i(z),

    computed bottom-up, level by level: the value of h is the probability-weighted sum of its
    children's.

    Parameters
    ----------
    game : GameTree or str
    policy : TabularPolicy or (I, A) array

    Returns
    -------
    (H, n) float array
        Row 0 is the game's value for every player (`expected_payoffs`).

    Raises
    ------
    TypeError, ValueError
        For an invalid policy.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> V = lk.history_values(kuhn, lk.uniform_policy(kuhn))
    >>> V[0].round(6).tolist(), V[kuhn.infoset == kuhn.infoset_index("K|b")].tolist()
    ([0.125, -0.125], [[-0.5, 0.5], [-0.5, 0.5]])
    """
    game, probs = _game_and_probs(game, policy)
    return _values(game, edge_probabilities(game, probs))


def expected_payoffs(game: GameTree | str, policy: PolicyLike) -> np.ndarray:
    r"""The expected return of each player when everyone follows `policy`.

    .. math:: v_i(\pi) = \sum_{z \in Z} \pi(z)\, u_i(z)

    Parameters
    ----------
    game : GameTree or str
    policy : TabularPolicy or (I, A) array

    Returns
    -------
    (n,) float array

    Raises
    ------
    TypeError, ValueError
        For an invalid policy.

    Examples
    --------
    The value of Kuhn poker to the first player is -1/18 at every equilibrium:

    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> equilibrium, _ = lk.zero_sum_equilibrium(kuhn)
    >>> lk.expected_payoffs(kuhn, equilibrium).round(6).tolist()
    [-0.055556, 0.055556]
    """
    game, probs = _game_and_probs(game, policy)
    return _terminal_structure(game).returns @ _terminal_reach(game, probs).prod(axis=0)


def _others_reach(F, player):
    """pi_{-i}: the product of every row of F except `player`'s."""
    rows = [r for r in range(F.shape[0]) if r != player]
    out = F[rows[0]].copy()
    for r in rows[1:]:
        out *= F[r]
    return out


class _Terminals(NamedTuple):
    """Per-game arrays over the terminal histories z (Z of them), computed once.

    sequence : (n, Z) int, player i's last own sequence before z, plus 1 (0 = none yet);
    chance : (Z,) chance's probability pi_c(z);  returns : (n, Z) the payoffs u_i(z)."""
    sequence: np.ndarray
    chance: np.ndarray
    returns: np.ndarray


def _terminal_structure(game):
    cached = game.__dict__.get("_terminal_cache")
    if cached is None:
        z = game.terminals
        chance = _chance_reach(game)[z]
        cached = _Terminals(np.ascontiguousarray(game.own_last_seq[z].T + 1), chance,
                            np.ascontiguousarray(game.returns[z].T))
        game.__dict__["_terminal_cache"] = cached
    return cached


def _sequence_weights(game, probs):
    """x: (I * A + 1,) realization weights, x[0] = 1 for the empty sequence and
    x[1 + I * A + a] = x_i(I, a), the acting player's own probability of the sequence (I, a)."""
    x = np.empty(probs.size + 1)
    x[0] = 1.0
    x[1:] = (infoset_own_reach(game, probs)[:, None] * probs).reshape(-1)
    return x


def _terminal_reach(game, probs):
    """(n + 1, Z): rows pi_i(z) = x_i(sigma_i(z)) for each player, then pi_c(z)."""
    t = _terminal_structure(game)
    R = np.empty((game.num_players + 1, len(t.chance)))
    R[:-1] = _sequence_weights(game, probs)[t.sequence]
    R[-1] = t.chance
    return R


def counterfactual_values(game: GameTree | str, policy: PolicyLike) -> np.ndarray:
    r"""Counterfactual action values of the player acting at each infoset.

    .. math:: q(I, a) = \sum_{h \in I} \pi_{-i}(h)\, v_i(h a),

    where :math:`v_i(h a)` is player i's expected return after playing a at h. The
    counterfactual value of I itself is :math:`v(I) = \sum_a \pi(a \mid I)\, q(I, a)`, and
    :math:`q(I, a) - v(I)` is CFR's instantaneous regret.

    Parameters
    ----------
    game : GameTree or str
    policy : TabularPolicy or (I, A) array

    Returns
    -------
    (I, A) float array
        Zero on illegal actions.

    Raises
    ------
    TypeError, ValueError
        For an invalid policy.

    References
    ----------
    Zinkevich et al. (2007), "Regret minimization in games with incomplete information".

    Examples
    --------
    The second player holding the king after a bet: the others (chance dealing the two cards,
    the first player betting half the time) reach each of its two histories with probability
    1/6 x 1/2; a call wins 2 in both, a fold loses 1, so q = (-2/12, 4/12).

    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> q = lk.counterfactual_values(kuhn, lk.uniform_policy(kuhn))
    >>> q[kuhn.infoset_index("K|b")].tolist()
    [-0.16666666666666666, 0.3333333333333333]
    """
    game, probs = _game_and_probs(game, policy)
    q, _, _ = _cf_values(game, probs, edge_probabilities(game, probs))
    return q


def _cf_values(game, probs, prob):
    """Counterfactual action values, reach rows F and values V in one forward/backward pass."""
    F = _reach(game, prob)
    V = _values(game, prob)
    q = np.zeros(probs.size)
    for p, (edges, parents, seqs) in enumerate(_decision_edges_by_player(game)):
        # q(I, a) += pi_{-i}(h) v_i(h a) for every history h of I
        q += np.bincount(seqs, weights=_others_reach(F[:, parents], p) * V[edges, p], minlength=probs.size)
    return q.reshape(probs.shape), F, V


def _decision_edges_by_player(game):
    """Cached per game: for each player, the histories h a entered by its moves, their parents h
    and the sequences (I, a) flattened."""
    cached = game.__dict__.get("_decision_edges_cache")
    if cached is None:
        e = game.decision_edges
        owner = game.edge_owner[e]
        cached = [(e[owner == p], game.parent[e[owner == p]], game.edge_seq[e[owner == p]])
                  for p in range(game.num_players)]
        game.__dict__["_decision_edges_cache"] = cached
    return cached


class BestResponse(NamedTuple):
    """What `best_response` returns.

    Attributes
    ----------
    value : float
        The best responder's expected return.
    policy : TabularPolicy
        The joint policy with the player's infosets replaced by the best response (pure).
    action_values : (I, A) float array
        Counterfactual values of the player's actions when it best-responds below them (its
        rows only; 0 elsewhere).

    Examples
    --------
    >>> import labkit as lk
    >>> response = lk.best_response("kuhn_poker", lk.uniform_policy("kuhn_poker"), 0)
    >>> response.value, type(response.policy).__name__
    (0.5, 'TabularPolicy')
    """
    value: float
    policy: TabularPolicy
    action_values: np.ndarray


def _player_structure(game, player):
    """Cached per game and player: each terminal's last sequence of `player` (+1), and the
    player's infosets grouped by own depth, deepest first. A level holds the slots (+1) of its
    legal sequences, infoset after infoset, where each infoset's run starts, and the parent
    sequence (+1) of each infoset."""
    cache = game.__dict__.setdefault("_br_cache", {})
    if player not in cache:
        mine = game.infoset_player == player
        levels = []
        for d in range(int(game.infoset_own_depth.max(initial=0)), -1, -1):
            idx = np.flatnonzero(mine & (game.infoset_own_depth == d))
            if len(idx):
                infoset, action = np.nonzero(game.legal_mask[idx])        # row-major: grouped by infoset
                slots = idx[infoset] * game.num_actions + action + 1
                starts = np.concatenate(([0], np.cumsum(game.num_legal[idx])[:-1]))
                levels.append((slots, starts, game.infoset_parent_seq[idx] + 1))
        cache[player] = (game.own_last_seq[game.terminals, player] + 1, levels)
    return cache[player]


def _best_response_tables(game, F, player):
    """Best-response counterfactual values of `player` by one bottom-up pass over its sequences.

    q(I, a) = sum of pi_{-i}(z) u_i(z) over terminals z whose last own sequence is (I, a),
            + sum over the player's next infosets J after (I, a) of max_b q(J, b).
    F is the (n + 1, H) reach array of `_reach`. Returns (value at the root, q).
    """
    z = game.terminals
    return _best_response_pass(game, player, _others_reach(F[:, z], player) * game.returns[z, player])


def _best_response_pass(game, player, weights):
    """The pass of `_best_response_tables`, from weights[z] = pi_{-i}(z) u_i(z) over terminals."""
    last_seq, levels = _player_structure(game, player)
    # slot 0 collects the root: terminals before the player's first move, and its first infosets
    total = np.bincount(last_seq, weights=weights, minlength=game.num_infosets * game.num_actions + 1)
    q = total[1:].reshape(game.num_infosets, game.num_actions)
    for slots, starts, parent in levels:
        # max over each infoset's legal actions, added to the sequence that leads to it
        np.add.at(total, parent, np.maximum.reduceat(total[slots], starts))
    return total[0], q


def _best_response_value_table(game, probs, player, R=None):
    R = _terminal_reach(game, probs) if R is None else R
    weights = _others_reach(R, player) * _terminal_structure(game).returns[player]
    return _best_response_pass(game, player, weights)


def best_response(game: GameTree | str, policy: PolicyLike, player: int) -> BestResponse:
    r"""An exact best response of `player` to the other players' parts of `policy` (n players).

    One bottom-up pass over the player's own sequences:

    .. math:: q(I, a) = \sum_{z:\ \sigma_i(z) = (I, a)} \pi_{-i}(z)\, u_i(z)
              + \sum_{J \text{ after } (I, a)} \max_b q(J, b),

    and the value is the sum over the player's first infosets (plus the terminals before its
    first move). Ties are broken toward the lowest action id. Infosets the others never reach get
    the lowest legal action with the largest value (all values are 0 there).

    Parameters
    ----------
    game : GameTree or str
    policy : TabularPolicy or (I, A) array
        A joint policy; the player's own rows are ignored.
    player : int
        The best responder, 0..n-1.

    Returns
    -------
    BestResponse
        (value, policy, action_values).

    Raises
    ------
    TypeError, ValueError
        For an invalid policy or player.

    Examples
    --------
    Against a first player who always passes (and so folds to a bet), the second wins the ante
    whatever it holds: after the check it bets with J and Q; with K, checking wins the showdown
    just as well, and the tie goes to the lower action, pass.

    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> response = lk.best_response(kuhn, lk.TabularPolicy.pure(kuhn, {}), player=1)
    >>> [response.policy[f"{card}|p"]["bet"] for card in "JQK"], response.value
    ([1.0, 1.0, 0.0], 1.0)
    """
    game, probs = _game_and_probs(game, policy)
    game.check_player(player)
    value, q = _best_response_value_table(game, probs, player)
    mine = game.infosets_of(player)
    masked = np.where(game.legal_mask, q, -np.inf)
    br = probs.copy()
    br[mine] = 0.0
    br[mine, masked[mine].argmax(axis=1)] = 1.0
    action_values = np.where(game.infoset_player[:, None] == player, q, 0.0)
    return BestResponse(float(value), TabularPolicy(game, br, check=False), action_values)


def best_response_values(game: GameTree | str, policy: PolicyLike) -> np.ndarray:
    r"""The value each player would get by best-responding to the others:
    :math:`\max_{\pi'_i} v_i(\pi'_i, \pi_{-i})` for every i.

    Parameters
    ----------
    game : GameTree or str
    policy : TabularPolicy or (I, A) array

    Returns
    -------
    (n,) float array

    Raises
    ------
    TypeError, ValueError
        For an invalid policy.

    Examples
    --------
    >>> import labkit as lk
    >>> lk.evaluate.best_response_values("kuhn_poker", lk.uniform_policy("kuhn_poker")).tolist()
    [0.5, 0.41666666666666663]
    """
    game, probs = _game_and_probs(game, policy)
    R = _terminal_reach(game, probs)
    return np.array([_best_response_value_table(game, probs, p, R)[0] for p in range(game.num_players)])


def nash_conv(game: GameTree | str, policy: PolicyLike) -> float:
    r"""NashConv: the total gain of the players' best responses, zero exactly at a Nash equilibrium.

    .. math:: \mathrm{NashConv}(\pi) = \sum_i \Big( \max_{\pi'_i} v_i(\pi'_i, \pi_{-i})
              - v_i(\pi) \Big) \ \ge\ 0

    Parameters
    ----------
    game : GameTree or str
    policy : TabularPolicy or (I, A) array
        A joint policy (every player's infosets).

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For an invalid policy (`policy_array`).

    References
    ----------
    M. Lanctot, V. Zambaldi, A. Gruslys et al. (2017), "A unified game-theoretic approach to
    multiagent reinforcement learning", NeurIPS (the name NashConv).

    Examples
    --------
    >>> import labkit as lk
    >>> round(lk.nash_conv("kuhn_poker", lk.uniform_policy("kuhn_poker")), 10)      # 11/12
    0.9166666667
    >>> round(lk.nash_conv("leduc_poker", lk.uniform_policy("leduc_poker")), 10)
    4.7472222222
    """
    if type(policy) is TabularPolicy and policy.game is game and policy.checked:   # validated when made
        return _nash_conv(game, policy.probs)
    game, probs = _game_and_probs(game, policy)
    return _nash_conv(game, probs)


def _nash_conv(game, probs):
    plan = game.__dict__.get("_compiled_plan")
    if plan is not None and kernels._current == "numba":
        # the compiled backend: one C call where the extension gives numpy's bits (it declines,
        # with None, an array it cannot read as C-contiguous float64), else numba's pass
        if plan[3] is not None:
            value = _NATIVE.nash_conv(probs, plan[3])
            if value is not None:
                return value
        return _numba_nash_conv(game, plan, probs)
    if kernels.backend() == "numba" and _worth_compiling(game):
        return _compiled_nash_conv(game, probs)
    start = time.process_time()
    R = _terminal_reach(game, probs)
    on_policy = _terminal_structure(game).returns @ R.prod(axis=0)
    gains = [_best_response_value_table(game, probs, p, R)[0] - on_policy[p] for p in range(game.num_players)]
    game.__dict__["_numpy_nash_conv_seconds"] = (game.__dict__.get("_numpy_nash_conv_seconds", 0.0)
                                                 + time.process_time() - start)
    return float(sum(gains))


def _numba_nash_conv(game, plan, probs):
    """NashConv by numba's pass (`labkit._evaluate_kernels`); the on-policy values by the same BLAS
    product as the numpy backend's."""
    global _KERNELS
    if _KERNELS is None:
        _KERNELS = kernels.load("labkit._evaluate_kernels")     # says so if it must compile first
    index, on_policy, pool, _ = plan
    scratch = pool.pop() if pool else _scratch(game)         # one per thread at a time
    out, prod, best = scratch
    _KERNELS.best_response_values(probs, index, out)
    values, on = best.tolist(), on_policy(prod).tolist()
    pool.append(scratch)
    total = 0.0
    for p in range(len(values)):                             # sum(gains) of the numpy backend, in order
        total += values[p] - on[p]
    return total


_KERNELS: Any = None             # labkit._evaluate_kernels, imported on the first numba evaluation
_NATIVE: Any = None              # the C extension of labkit._nash_conv_native, once a plan uses it
#: CPU seconds of numpy evaluations of one game after which the numba backend compiles its pass
#: (where the C extension is not available: it loads in milliseconds and is used at once).
#: Importing numba and loading its cached kernel cost about this much, once per process: a few
#: evaluations of a small game (Kuhn poker: 60 us each) are cheaper in numpy. All give the same bits.
NUMPY_FIRST_SECONDS = 0.5


def _worth_compiling(game):
    """Whether the compiled pass pays: the C extension serves this game, numba's kernel is loaded
    already, or numpy evaluations of this game have cost `NUMPY_FIRST_SECONDS` so far."""
    if _KERNELS is not None or game.__dict__.get("_numpy_nash_conv_seconds", 0.0) >= NUMPY_FIRST_SECONDS:
        return True
    return game.num_players > 1 and len(game.terminals) > 1 and _nash_conv_native.module() is not None


def _scratch(game):
    """Memory of one compiled evaluation: (out, its first Z entries, its next n); see the kernel."""
    n, Z = game.num_players, len(game.terminals)
    out = np.empty(Z + n + game.num_infosets + 2 * (game.legal_mask.size + 1))
    return out, out[:Z], out[Z:Z + n]


def _compiled_nash_conv(game, probs):
    """First compiled evaluation of `game`: build and cache its plan, then evaluate."""
    global _NATIVE
    plan = game.__dict__["_compiled_plan"] = _compiled_plan(game)
    if plan[3] is not None:
        _NATIVE = _nash_conv_native.module()
    return _nash_conv(game, probs)


def _compiled_plan(game):
    """(packed arrays, on-policy values of pi, scratch pool, the C extension's plan or None) for
    `labkit._evaluate_kernels` and `labkit._nash_conv_native`."""
    t = _terminal_structure(game)
    n, Z = game.num_players, len(t.chance)
    own = _own_depth_levels(game)
    parts = {"own_infoset": [], "own_parent_infoset": [], "own_parent_seq": []}
    for idx, parent_infoset, parent_seq in own:
        parts["own_infoset"].append(idx)
        parts["own_parent_infoset"].append(parent_infoset)
        parts["own_parent_seq"].append(parent_seq)
    parts = {k: np.concatenate(v) if v else np.zeros(0, dtype=np.int64) for k, v in parts.items()}
    parts["last_seq"] = t.sequence.reshape(-1)
    player_levels, levels, slots, infoset_start, infoset_parent = [0], [], [], [], []
    count = 0                                      # infosets so far, over all players' levels
    used = 0                                       # slots so far
    for p in range(n):
        for level_slots, starts, parent in _player_structure(game, p)[1]:
            levels += [count, count + len(starts)]
            infoset_start.append(used + starts)
            infoset_parent.append(parent)
            slots.append(level_slots)
            count += len(starts)
            used += len(level_slots)
        player_levels.append(len(levels) // 2)
    parts["player_levels"] = np.array(player_levels)
    parts["levels"] = np.array(levels, dtype=np.int64)
    parts["slots"] = np.concatenate(slots) if slots else np.zeros(0, dtype=np.int64)
    parts["infoset_start"] = np.concatenate(infoset_start + [[used]])
    parts["infoset_parent"] = np.concatenate(infoset_parent) if infoset_parent else np.zeros(0, dtype=np.int64)
    # each player's terms: the terminals sorted (stably) by the player's last sequence, in runs
    player_runs, run_slot, run_end, others, term_chance, term_payoff = [0], [], [], [], [], []
    for p in range(n):
        order = np.argsort(t.sequence[p], kind="stable")
        target = t.sequence[p][order]
        ends = np.flatnonzero(np.diff(target)) + 1
        run_slot.append(target[np.concatenate(([0], ends))] if Z else target)
        run_end.append(p * Z + np.concatenate((ends, [Z])) if Z else target)
        player_runs.append(player_runs[-1] + len(run_slot[-1]))
        others.append(np.delete(t.sequence, p, axis=0)[:, order].T.reshape(-1))
        term_chance.append(t.chance[order])
        term_payoff.append(t.returns[p][order])
    parts["player_runs"] = np.array(player_runs)
    parts["run_slot"] = np.concatenate(run_slot)
    parts["run_end"] = np.concatenate(run_end)
    parts["term_others"] = np.concatenate(others)
    floats = np.concatenate([t.chance] + term_chance + term_payoff).astype(np.float64)
    returns = np.ascontiguousarray(t.returns, dtype=np.float64)
    index = _nash_conv_native.pack(n, Z, parts, floats)
    # returns.dot(pi): numpy's BLAS product, the same bits as `returns @ pi` and cheaper to call;
    # scratch memory is taken from and given back to the list around each call (one per thread)
    return index, returns.dot, [_scratch(game)], _nash_conv_native.plan(index, returns, game.legal_mask.shape)


def exploitability(game: GameTree | str, policy: PolicyLike) -> float:
    r"""NashConv divided by the number of players (OpenSpiel's ``exploitability``).

    .. math:: \mathrm{exploitability}(\pi) = \mathrm{NashConv}(\pi) / n

    In a two-player zero-sum game this is the average of what the two best responses win.

    Parameters
    ----------
    game : GameTree or str
    policy : TabularPolicy or (I, A) array

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For an invalid policy.

    Examples
    --------
    >>> import labkit as lk
    >>> round(lk.exploitability("kuhn_poker", lk.uniform_policy("kuhn_poker")), 10)   # 11/24
    0.4583333333
    """
    game, probs = _game_and_probs(game, policy)
    return _nash_conv(game, probs) / game.num_players
