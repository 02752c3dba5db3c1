r"""The sequence-form linear program for two-player zero-sum games (Koller, Megiddo and
von Stengel, 1994), solved with scipy's HiGHS.

Player 0 chooses a realization plan x (one weight per sequence, E x = e, x >= 0) to maximize
the value it can guarantee, min_y x^T M y over player 1's plans y (F y = f, y >= 0). By LP
duality the inner minimum is max { f^T v : F^T v <= M^T x }, which gives one LP in (x, v).

scipy is imported when the LP is first solved, not with labkit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from labkit.evaluate import _reach, edge_probabilities
from labkit.policy import TabularPolicy, normalize_rows
from labkit.tree import GameTree

if TYPE_CHECKING:
    from labkit.games import GameLike


def _sequences(game: GameTree, player: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Player's sequences: index 0 is the empty one, then every legal (infoset, action)."""
    I, a = np.nonzero(game.legal_mask & (game.infoset_player == player)[:, None])
    index = np.full(game.num_infosets * game.num_actions + 1, -1)
    index[0] = 0
    index[I * game.num_actions + a + 1] = np.arange(1, len(I) + 1)
    return I, a, index


def _constraints(game: GameTree, player: int, index: np.ndarray) -> tuple[Any, np.ndarray]:
    """E x = e: x(empty) = 1 and, at every infoset, sum_a x(I, a) = x(parent sequence of I)."""
    from scipy import sparse

    infosets = game.infosets_of(player)
    rows, cols, vals = [0], [0], [1.0]
    for r, i in enumerate(infosets, start=1):
        rows.append(r)
        cols.append(index[game.infoset_parent_seq[i] + 1])
        vals.append(-1.0)
        for a in game.legal_actions(i):
            rows.append(r)
            cols.append(index[i * game.num_actions + a + 1])
            vals.append(1.0)
    E = sparse.csr_matrix((vals, (rows, cols)), shape=(len(infosets) + 1, int(index.max()) + 1))
    e = np.zeros(len(infosets) + 1)
    e[0] = 1.0
    return E, e


def _solve_for(game: GameTree, player: int, M: Any, E: Any, e: np.ndarray, F: Any,
               f: np.ndarray) -> tuple[np.ndarray, float]:
    """Maximize player's guaranteed value; M is the payoff to `player` (its sequences x the other's)."""
    from scipy import sparse
    from scipy.optimize import linprog

    nx, nv = E.shape[1], F.shape[0]
    c = np.concatenate([np.zeros(nx), -f])                    # maximize f^T v
    A_ub = sparse.hstack([-M.T, F.T]).tocsr()                  # F^T v - M^T x <= 0
    A_eq = sparse.hstack([E, sparse.csr_matrix((E.shape[0], nv))]).tocsr()
    bounds = [(0, None)] * nx + [(None, None)] * nv
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=e, bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"the sequence-form LP for player {player} failed: {res.message}")
    return res.x[:nx], -res.fun


def zero_sum_equilibrium(game: GameLike) -> tuple[TabularPolicy, float]:
    r"""A Nash equilibrium of a two-player zero-sum game and its value, by linear programming.

    Player 0's realization plan x solves

    .. math:: \max_{x, v}\ f^\top v \quad \text{s.t.} \quad E x = e,\ x \ge 0,\
              F^\top v \le M^\top x,

    where M is the chance-weighted sequence-form payoff matrix, E x = e and F y = f the players'
    sequence constraints (x(empty) = 1, and the weights of an infoset's actions sum to the weight
    of the sequence leading to it); player 1's plan solves the same program on -M^T. The
    behavioral policy is :math:`\pi(a \mid I) = x(I, a) / x(\text{parent of } I)`.

    Parameters
    ----------
    game : str or GameTree
        A two-player zero-sum game.

    Returns
    -------
    (TabularPolicy, float)
        The equilibrium behavioral profile (uniform where x(parent) = 0) and the value of the
        game to player 0.

    Raises
    ------
    ValueError
        If the game does not have two players or is not zero-sum.
    RuntimeError
        If the LP solver fails.

    References
    ----------
    D. Koller, N. Megiddo and B. von Stengel (1994), "Fast algorithms for finding randomized
    strategies in game trees", STOC.

    Examples
    --------
    Kuhn poker's value is -1/18 and Leduc's -0.0856064 (to the first player):

    >>> import labkit as lk
    >>> policy, value = zero_sum_equilibrium("kuhn_poker")
    >>> round(value, 6), round(-1 / 18, 6), lk.nash_conv("kuhn_poker", policy) < 1e-9
    (-0.055556, -0.055556, True)
    >>> round(zero_sum_equilibrium("leduc_poker")[1], 7)
    -0.0856064
    """
    from scipy import sparse

    from labkit.games import load
    game = load(game)
    if game.num_players != 2:
        raise ValueError(f"zero_sum_equilibrium needs a two-player game; {game.name} has {game.num_players}")
    z = game.terminals
    if not np.allclose(game.returns[z].sum(axis=1), 0.0):
        raise ValueError(f"{game.name} is not zero-sum: the players' returns do not sum to 0 at every terminal")
    seqs = [_sequences(game, p) for p in range(2)]
    # chance's reach of each terminal: the edge probabilities with every player choice at 1
    ones = np.where(game.legal_mask, 1.0, 0.0)
    chance_reach = _reach(game, edge_probabilities(game, ones))[game.num_players, z]
    rows = seqs[0][2][game.own_last_seq[z, 0] + 1]
    cols = seqs[1][2][game.own_last_seq[z, 1] + 1]
    shape = (int(seqs[0][2].max()) + 1, int(seqs[1][2].max()) + 1)
    M = sparse.csr_matrix((chance_reach * game.returns[z, 0], (rows, cols)), shape=shape)   # duplicates add up
    E, e = _constraints(game, 0, seqs[0][2])
    F, f = _constraints(game, 1, seqs[1][2])
    x, value = _solve_for(game, 0, M, E, e, F, f)
    y, _ = _solve_for(game, 1, (-M).T.tocsr(), F, f, E, e)
    probs = np.zeros(game.legal_mask.shape)
    for p, plan in ((0, x), (1, y)):
        I, a, index = seqs[p]
        seq_weight = plan[index[I * game.num_actions + a + 1]]
        parent_weight = plan[index[game.infoset_parent_seq[I] + 1]]
        probs[I, a] = np.where(parent_weight > 1e-15, seq_weight / np.where(parent_weight > 1e-15, parent_weight, 1), 0)
    return TabularPolicy(game, normalize_rows(game, probs), check=False), float(value)
