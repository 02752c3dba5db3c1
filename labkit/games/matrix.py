"""Matrix (normal-form) games: the chapter's examples and any payoff matrices.

A `MatrixGame` keeps the payoff matrices for the self-play dynamics of `labkit.dynamics`;
`as_extensive()` turns it into a two-move tree (the column player does not see the row)
so that every extensive-form tool of labkit applies to it too.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from labkit.tree import TERMINAL

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


class MatrixGame:
    r"""A two-player game in normal form.

    The row player picks a row a, the column player a column b, at the same time; they receive
    :math:`A_{ab}` and :math:`B_{ab}`. Mixed strategies x and y give the expected payoffs
    :math:`x^\top A y` and :math:`x^\top B y`.

    Parameters
    ----------
    row_payoffs : (m, k) array_like
        A[a, b], the row player's payoff when the row player plays a and the column player b.
    col_payoffs : (m, k) array_like, optional
        B[a, b], the column player's payoff; defaults to -A (zero-sum).
    row_actions, col_actions : list of str, optional
        Names of the actions ("r0", "r1", ... and "c0", ... by default).
    name : str
        The game's name in messages and in the compiled tree.

    Raises
    ------
    ValueError
        If the matrices are not non-empty 2-d arrays of the same shape and finite numbers, or the
        numbers of action names do not match.

    Examples
    --------
    >>> game = MatrixGame([[3, 0], [5, 1]], [[3, 5], [0, 1]], name="dilemma")
    >>> game
    MatrixGame('dilemma', 2x2, zero_sum=False)
    >>> game.payoffs([1, 0], [0.5, 0.5])
    (1.5, 4.0)
    """

    def __init__(self, row_payoffs: ArrayLike, col_payoffs: ArrayLike | None = None,
                 row_actions: Sequence[str] | None = None, col_actions: Sequence[str] | None = None,
                 name: str = "matrix_game"):
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
    def shape(self) -> tuple[int, int]:
        """(m, k): the numbers of row and column actions.

        Examples
        --------
        >>> rock_paper_scissors().shape
        (3, 3)
        """
        m, k = self.A.shape
        return m, k

    @property
    def is_zero_sum(self) -> bool:
        """Whether A + B = 0 (to numpy's default closeness).

        Examples
        --------
        >>> rock_paper_scissors().is_zero_sum, climbing_game().is_zero_sum
        (True, False)
        """
        return bool(np.allclose(self.A + self.B, 0.0))

    def payoffs(self, x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
        r"""Expected payoffs :math:`(x^\top A y,\ x^\top B y)` of mixed strategies.

        Parameters
        ----------
        x : (m,) array_like
            The row player's mixed strategy.
        y : (k,) array_like
            The column player's mixed strategy.

        Returns
        -------
        (float, float)
            The row player's and the column player's expected payoffs.

        Examples
        --------
        >>> biased_rock_paper_scissors().payoffs([0.25, 0.5, 0.25], [1, 0, 0])
        (0.0, 0.0)
        """
        x, y = np.asarray(x, float), np.asarray(y, float)
        return float(x @ self.A @ y), float(x @ self.B @ y)

    def as_extensive(self) -> _MatrixAsTree:
        """This game as an extensive-form definition: row moves, then column moves unseen.

        The row player's one infoset is "row", the column player's "column"; actions are the row
        and column indices. `labkit.games.load` compiles it.

        Returns
        -------
        game definition (see `labkit.games.base`)

        Examples
        --------
        >>> import labkit as lk
        >>> tree = lk.games.compile_game(rock_paper_scissors().as_extensive())
        >>> tree.infoset_keys, tree.num_histories
        (['row', 'column'], 13)
        """
        return _MatrixAsTree(self)

    def __repr__(self) -> str:
        return f"MatrixGame({self.name!r}, {self.A.shape[0]}x{self.A.shape[1]}, zero_sum={self.is_zero_sum})"


class _MatrixAsTree:
    def __init__(self, game: MatrixGame):
        self.game = game
        self.name = game.name
        self.num_players = 2
        self.num_distinct_actions = max(game.A.shape)

    def initial_state(self) -> _MatrixState:
        return _MatrixState(self.game, ())

    def action_name(self, a: int) -> str:
        names = self.game.row_actions if len(self.game.row_actions) >= len(self.game.col_actions) \
            else self.game.col_actions
        return names[a]


class _MatrixState:
    def __init__(self, game: MatrixGame, moves: tuple[int, ...]):
        self.game, self.moves = game, moves

    def current_player(self) -> int:
        return TERMINAL if len(self.moves) == 2 else len(self.moves)

    def legal_actions(self) -> list[int]:
        return list(range(self.game.A.shape[len(self.moves)]))

    def child(self, a: int) -> _MatrixState:
        return _MatrixState(self.game, self.moves + (a,))

    def returns(self) -> list[float]:
        a, b = self.moves
        return [float(self.game.A[a, b]), float(self.game.B[a, b])]

    def infoset_key(self) -> str:
        return ("row", "column")[len(self.moves)]


RPS = ["rock", "paper", "scissors"]


def rock_paper_scissors() -> MatrixGame:
    """Rock-paper-scissors: win 1, lose 1; the equilibrium is uniform.

    Returns
    -------
    MatrixGame

    Examples
    --------
    >>> print(rock_paper_scissors().A)
    [[ 0. -1.  1.]
     [ 1.  0. -1.]
     [-1.  1.  0.]]
    """
    return MatrixGame([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], row_actions=RPS, col_actions=RPS,
                      name="rock_paper_scissors")


def biased_rock_paper_scissors() -> MatrixGame:
    """Rock-paper-scissors where a win with rock is worth 2 (the chapter's example).

    Both players' only equilibrium strategy is (1/4, 1/2, 1/4); the game is symmetric, so its value is 0.

    Returns
    -------
    MatrixGame

    Examples
    --------
    >>> game = biased_rock_paper_scissors()
    >>> print(game.A @ [0.25, 0.5, 0.25])                 # every row earns 0 against the equilibrium
    [0. 0. 0.]
    """
    return MatrixGame([[0, -1, 2], [1, 0, -1], [-2, 1, 0]], row_actions=RPS, col_actions=RPS,
                      name="biased_rock_paper_scissors")


def climbing_game() -> MatrixGame:
    """The climbing game of Claus and Boutilier (1998): both agents receive the same payoff.

    The best joint action (a, a) pays 11 but a lone deviation from it costs -30, which pushes
    independent learners toward the safe (c, c) with 5.

    Returns
    -------
    MatrixGame

    References
    ----------
    C. Claus and C. Boutilier (1998), "The dynamics of reinforcement learning in cooperative
    multiagent systems", AAAI.

    Examples
    --------
    >>> game = climbing_game()
    >>> float(game.A.max()), bool((game.A == game.B).all())
    (11.0, True)
    """
    A = [[11, -30, 0], [-30, 7, 6], [0, 0, 5]]
    return MatrixGame(A, A, row_actions=["a", "b", "c"], col_actions=["a", "b", "c"], name="climbing_game")


def prisoners_dilemma(reward: float = 3, sucker: float = 0, temptation: float = 5,
                      punishment: float = 1) -> MatrixGame:
    """The prisoner's dilemma (actions cooperate, defect) with the usual payoffs T > R > P > S.

    Parameters
    ----------
    reward, sucker, temptation, punishment : float
        R (both cooperate), S (cooperate against a defector), T (defect against a cooperator)
        and P (both defect).

    Returns
    -------
    MatrixGame

    Raises
    ------
    ValueError
        Unless T > R > P > S.

    Examples
    --------
    >>> game = prisoners_dilemma()
    >>> game.payoffs([0, 1], [1, 0])                      # defect against a cooperator
    (5.0, 0.0)
    """
    if not temptation > reward > punishment > sucker:
        raise ValueError("a prisoner's dilemma needs temptation > reward > punishment > sucker")
    A = [[reward, sucker], [temptation, punishment]]
    return MatrixGame(A, np.transpose(A), row_actions=["cooperate", "defect"],
                      col_actions=["cooperate", "defect"], name="prisoners_dilemma")


def preference_game(prefer: ArrayLike | None = None, responses: Sequence[str] = ("A", "B", "C")) -> MatrixGame:
    """The symmetric zero-sum game of a preference model (exercise 27.8).

    Each player picks a response; the row player receives P(row > column) - 1/2.

    Parameters
    ----------
    prefer : (r, r) array_like, optional
        ``prefer[i][j]`` is P(response i preferred to response j), with P + P^T = 1; the default
        is the exercise's intransitive cycle P(A > B) = 0.8, P(B > C) = 0.6, P(C > A) = 0.7.
    responses : sequence of str
        The names of the r responses.

    Returns
    -------
    MatrixGame

    Raises
    ------
    ValueError
        If `prefer` is not a square matrix of probabilities with P + P^T = 1 over `responses`.

    Examples
    --------
    >>> print(preference_game().A)
    [[ 0.   0.3 -0.2]
     [-0.3  0.   0.1]
     [ 0.2 -0.1  0. ]]
    """
    if prefer is None:
        prefer = [[0.5, 0.8, 0.3], [0.2, 0.5, 0.6], [0.7, 0.4, 0.5]]
    P = np.array(prefer, dtype=float)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] != len(responses):
        raise ValueError(f"prefer must be a square matrix over {len(responses)} responses, got shape {P.shape}")
    if np.any(P < 0) or np.any(P > 1) or not np.allclose(P + P.T, 1.0):
        raise ValueError("prefer must hold probabilities with P[i][j] + P[j][i] = 1")
    return MatrixGame(P - 0.5, row_actions=list(responses), col_actions=list(responses), name="preference_game")
