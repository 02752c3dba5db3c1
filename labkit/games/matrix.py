"""Matrix (normal-form) games: the chapter's examples and any payoff matrices.

A `MatrixGame` keeps the payoff matrices for the self-play dynamics of `labkit.dynamics`;
`as_extensive()` turns it into a two-move tree (the column player does not see the row)
so that every extensive-form tool of labkit applies to it too.
"""
from __future__ import annotations

import numpy as np

from labkit.tree import CHANCE, TERMINAL  # noqa: F401  (documented player ids)


class MatrixGame:
    """A two-player game in normal form.

    Parameters
    ----------
    row_payoffs : (m, k) array
        A[a, b], the row player's payoff when the row player plays a and the column player b.
    col_payoffs : (m, k) array, optional
        B[a, b], the column player's payoff; defaults to -A (zero-sum).
    row_actions, col_actions : lists of str, optional
        Names of the actions.
    """

    def __init__(self, row_payoffs, col_payoffs=None, row_actions=None, col_actions=None, name="matrix_game"):
        A = np.array(row_payoffs, dtype=float)
        if A.ndim != 2 or 0 in A.shape:
            raise ValueError(f"row_payoffs must be a non-empty 2-d array, got shape {A.shape}")
        B = -A if col_payoffs is None else np.array(col_payoffs, dtype=float)
        if B.shape != A.shape:
            raise ValueError(f"col_payoffs has shape {B.shape}, row_payoffs {A.shape}; they must match")
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
            raise ValueError("payoffs must be finite numbers")
        m, k = A.shape
        self.A, self.B = A, B
        self.row_actions = list(row_actions) if row_actions is not None else [f"r{a}" for a in range(m)]
        self.col_actions = list(col_actions) if col_actions is not None else [f"c{b}" for b in range(k)]
        if len(self.row_actions) != m or len(self.col_actions) != k:
            raise ValueError(f"need {m} row and {k} column action names")
        self.name = name
        self.num_players = 2

    @property
    def shape(self):
        return self.A.shape

    @property
    def is_zero_sum(self):
        return bool(np.allclose(self.A + self.B, 0.0))

    def payoffs(self, x, y):
        """Expected payoffs (x^T A y, x^T B y) of mixed strategies x (rows) and y (columns)."""
        x, y = np.asarray(x, float), np.asarray(y, float)
        return float(x @ self.A @ y), float(x @ self.B @ y)

    def as_extensive(self):
        """This game as an extensive-form definition: row moves, then column moves unseen."""
        return _MatrixAsTree(self)

    def __repr__(self):
        return f"MatrixGame({self.name!r}, {self.A.shape[0]}x{self.A.shape[1]}, zero_sum={self.is_zero_sum})"


class _MatrixAsTree:
    def __init__(self, game):
        self.game = game
        self.name = game.name
        self.num_players = 2
        self.num_distinct_actions = max(game.A.shape)

    def initial_state(self):
        return _MatrixState(self.game, ())

    def action_name(self, a):
        names = self.game.row_actions if len(self.game.row_actions) >= len(self.game.col_actions) \
            else self.game.col_actions
        return names[a]


class _MatrixState:
    def __init__(self, game, moves):
        self.game, self.moves = game, moves

    def current_player(self):
        return TERMINAL if len(self.moves) == 2 else len(self.moves)

    def legal_actions(self):
        return list(range(self.game.A.shape[len(self.moves)]))

    def child(self, a):
        return _MatrixState(self.game, self.moves + (a,))

    def returns(self):
        a, b = self.moves
        return [self.game.A[a, b], self.game.B[a, b]]

    def infoset_key(self):
        return ("row", "column")[len(self.moves)]


RPS = ["rock", "paper", "scissors"]


def rock_paper_scissors():
    """Rock-paper-scissors: win 1, lose 1; the equilibrium is uniform."""
    return MatrixGame([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], row_actions=RPS, col_actions=RPS,
                      name="rock_paper_scissors")


def biased_rock_paper_scissors():
    """Rock-paper-scissors where a win with rock is worth 2 (the chapter's example).

    Both players' only equilibrium strategy is (1/4, 1/2, 1/4); the game is symmetric, so its value is 0.
    """
    return MatrixGame([[0, -1, 2], [1, 0, -1], [-2, 1, 0]], row_actions=RPS, col_actions=RPS,
                      name="biased_rock_paper_scissors")


def climbing_game():
    """The climbing game of Claus and Boutilier (1998): both agents receive the same payoff."""
    A = [[11, -30, 0], [-30, 7, 6], [0, 0, 5]]
    return MatrixGame(A, A, row_actions=["a", "b", "c"], col_actions=["a", "b", "c"], name="climbing_game")


def prisoners_dilemma(reward=3, sucker=0, temptation=5, punishment=1):
    """The prisoner's dilemma (actions cooperate, defect) with the usual payoffs T > R > P > S."""
    if not temptation > reward > punishment > sucker:
        raise ValueError("a prisoner's dilemma needs temptation > reward > punishment > sucker")
    A = [[reward, sucker], [temptation, punishment]]
    return MatrixGame(A, np.transpose(A), row_actions=["cooperate", "defect"],
                      col_actions=["cooperate", "defect"], name="prisoners_dilemma")


def preference_game(prefer=None, responses=("A", "B", "C")):
    """The symmetric zero-sum game of a preference model (exercise 27.8).

    Each player picks a response; the row player receives P(row > column) - 1/2.
    `prefer[i][j]` is P(response i preferred to response j); the default is the
    exercise's intransitive cycle P(A > B) = 0.8, P(B > C) = 0.6, P(C > A) = 0.7.
    """
    if prefer is None:
        prefer = [[0.5, 0.8, 0.3], [0.2, 0.5, 0.6], [0.7, 0.4, 0.5]]
    P = np.array(prefer, dtype=float)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] != len(responses):
        raise ValueError(f"prefer must be a square matrix over {len(responses)} responses, got shape {P.shape}")
    if np.any(P < 0) or np.any(P > 1) or not np.allclose(P + P.T, 1.0):
        raise ValueError("prefer must hold probabilities with P[i][j] + P[j][i] = 1")
    return MatrixGame(P - 0.5, row_actions=list(responses), col_actions=list(responses), name="preference_game")
