r"""Learning to cooperate on matrix games: independent learners, value factorization, COMA's baseline.

Three small tools for the chapter on cooperation.

* `independent_q_learning`: two independent Q-learners on a repeated two-player matrix game
  (Tan, 1993; Claus and Boutilier, 1998), many seeded runs at once. Each agent treats the other as
  part of the environment. One step of every run:

  1. each agent picks an action from its own Q-values (epsilon-greedy or Boltzmann);
  2. both receive their payoffs A[a, b] and B[a, b];
  3. each agent moves its own Q-value toward the target,
     Q_i(s, a_i) <- Q_i(s, a_i) + lr * (r_i + discount * max_a' Q_i(s', a') - Q_i(s, a_i)).

  With ``memory=False`` there is a single state (the stage game repeated); with ``memory=True`` the
  state is the previous joint action, which is what a memory-one player of an iterated game sees.
* `vdn_fit`: the least-squares additive decomposition Q_tot(a, b) ~ Q_1(a) + Q_2(b) of a payoff matrix
  (value decomposition networks, Sunehag et al., 2018).
* `monotonic_representable`: whether Q_tot(a, b) = f(Q_1(a), Q_2(b)) with f non-decreasing in both
  arguments can hold exactly (the class of QMIX's mixing networks, Rashid et al., 2018).
* `coma_advantages`: the counterfactual advantage of COMA (Foerster et al., 2018),
  A^i(a) = Q(a) - sum_b pi^i(b) Q(a^{-i}, b), for both agents of a matrix game.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from labkit.games.matrix import MatrixGame

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

EXPLORATIONS = ("epsilon-greedy", "boltzmann")


@dataclass
class IndependentRuns:
    """Independent Q-learners after training, `runs` seeded runs side by side.

    Attributes
    ----------
    q_row, q_col : (runs, states, m) and (runs, states, k) arrays
        The final Q-values; states = 1 without memory, m * k with memory (state = a * k + b).
    greedy_row, greedy_col : (runs,) int arrays
        Each agent's greedy action in the state of the last step, ties broken toward the lower index.
    played : (steps, runs, 2) int8 array, or None
        The joint action of every step (kept when ``record=True``).

    Examples
    --------
    >>> import labkit as lk
    >>> runs = independent_q_learning(lk.games.climbing_game(), steps=200, runs=5)
    >>> runs.q_row.shape, runs.greedy_row.shape
    ((5, 1, 3), (5,))
    """

    q_row: np.ndarray
    q_col: np.ndarray
    greedy_row: np.ndarray
    greedy_col: np.ndarray
    played: np.ndarray | None = None

    def outcome_counts(self, shape: tuple[int, int]) -> np.ndarray:
        """How many runs ended with each greedy joint action.

        Parameters
        ----------
        shape : (int, int)
            (m, k), the game's shape.

        Returns
        -------
        (m, k) int array

        Examples
        --------
        Most independent learners on the climbing game settle on a safe joint action instead of
        the best one (a, a):

        >>> import labkit as lk
        >>> game = lk.games.climbing_game()
        >>> counts = independent_q_learning(game, steps=3000, runs=100, seed=0).outcome_counts(game.shape)
        >>> int(counts.sum()), int(counts[0, 0]) < 50
        (100, True)
        """
        counts = np.zeros(shape, dtype=int)
        np.add.at(counts, (self.greedy_row, self.greedy_col), 1)
        return counts


def _choose(q: np.ndarray, exploration: str, level: float, rng: np.random.Generator) -> np.ndarray:
    """One action per run from Q-values q of shape (runs, actions)."""
    runs, n = q.shape
    if exploration == "boltzmann":
        logits = q / level
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        cumulative = np.cumsum(weights, axis=1)
        draws = rng.random(runs) * cumulative[:, -1]
        return np.minimum((cumulative < draws[:, None]).sum(axis=1), n - 1)
    # epsilon-greedy, with ties among the greedy actions broken at random
    noise = rng.random(q.shape) * 1e-9
    greedy = np.argmax(q + noise, axis=1)
    explore = rng.random(runs) < level
    return np.where(explore, rng.integers(0, n, runs), greedy)


def independent_q_learning(game: MatrixGame, steps: int = 3000, runs: int = 100, exploration: str = "epsilon-greedy",
                           epsilon: float = 0.1, temperature: float = 1.0, learning_rate: float = 0.1,
                           discount: float = 0.0, memory: bool = False, initial_q: float = 0.0,
                           seed: int | np.random.Generator | None = 0, record: bool = False) -> IndependentRuns:
    r"""Train two independent Q-learners on a repeated matrix game, `runs` seeded runs at once.

    Each agent updates its own Q-values from its own payoff,

    .. math:: Q_i(s, a_i) \leftarrow Q_i(s, a_i) + \alpha \big( r_i + \gamma \max_{a'} Q_i(s', a')
              - Q_i(s, a_i) \big),

    treating the other agent as part of the environment.

    Parameters
    ----------
    game : MatrixGame
        Payoffs A (row agent) and B (column agent); a cooperative game has A == B.
    steps : int
        Rounds of play per run.
    runs : int
        Independent runs, vectorized (all draws come from one ``np.random.default_rng(seed)``).
    exploration : {"epsilon-greedy", "boltzmann"}
        Epsilon-greedy: a uniformly random action with probability `epsilon`, else the greedy one.
        Boltzmann: P(a) proportional to exp(Q(a) / temperature).
    learning_rate, discount : float
        Step size of the update and discount of the next state's value (0: the stage game alone).
    memory : bool
        If True the state is the previous joint action (the first state is drawn at random).
    initial_q : float
        Starting value of every Q-value.
    record : bool
        Keep the joint action of every step in ``played``.
    seed : int, numpy.random.Generator or None
        Every draw comes from ``np.random.default_rng(seed)``.

    Returns
    -------
    IndependentRuns

    Raises
    ------
    TypeError
        If `game` is not a MatrixGame.
    ValueError
        For an unknown exploration or a setting out of range.

    References
    ----------
    M. Tan (1993), "Multi-agent reinforcement learning: independent vs. cooperative agents", ICML;
    C. Claus and C. Boutilier (1998), "The dynamics of reinforcement learning in cooperative
    multiagent systems", AAAI.

    Examples
    --------
    >>> import labkit as lk
    >>> runs = independent_q_learning(lk.games.prisoners_dilemma(), steps=2000, runs=20, seed=1)
    >>> runs.outcome_counts((2, 2)).tolist()                 # everyone learns to defect
    [[0, 0], [0, 20]]
    """
    if not isinstance(game, MatrixGame):
        raise TypeError(f"game must be a labkit MatrixGame, got {type(game).__name__}")
    if exploration not in EXPLORATIONS:
        raise ValueError(f"unknown exploration {exploration!r}; valid: {', '.join(EXPLORATIONS)}")
    level = float(epsilon if exploration == "epsilon-greedy" else temperature)
    if exploration == "epsilon-greedy" and not 0 <= level <= 1:
        raise ValueError(f"epsilon must be in [0, 1], got {epsilon!r}")
    if exploration == "boltzmann" and not level > 0:
        raise ValueError(f"temperature must be positive, got {temperature!r}")
    if not 0 < learning_rate <= 1:
        raise ValueError(f"learning_rate must be in (0, 1], got {learning_rate!r}")
    if not 0 <= discount < 1:
        raise ValueError(f"discount must be in [0, 1), got {discount!r}")
    steps, runs = int(steps), int(runs)
    if steps < 1 or runs < 1:
        raise ValueError(f"steps and runs must be positive, got steps={steps}, runs={runs}")
    rng = np.random.default_rng(seed)
    m, k = game.shape
    num_states = m * k if memory else 1
    q_row = np.full((runs, num_states, m), float(initial_q))
    q_col = np.full((runs, num_states, k), float(initial_q))
    index = np.arange(runs)
    state = rng.integers(0, num_states, runs)
    played = np.zeros((steps, runs, 2), dtype=np.int8) if record else None
    for t in range(steps):
        a = _choose(q_row[index, state], exploration, level, rng)
        b = _choose(q_col[index, state], exploration, level, rng)
        following = a * k + b if memory else state
        # the target bootstraps from the next state's best value (nothing when discount = 0)
        target_row = game.A[a, b] + discount * q_row[index, following].max(axis=1)
        target_col = game.B[a, b] + discount * q_col[index, following].max(axis=1)
        q_row[index, state, a] += learning_rate * (target_row - q_row[index, state, a])
        q_col[index, state, b] += learning_rate * (target_col - q_col[index, state, b])
        if played is not None:
            played[t, :, 0], played[t, :, 1] = a, b
        state = following
    greedy_row = q_row[index, state].argmax(axis=1)
    greedy_col = q_col[index, state].argmax(axis=1)
    return IndependentRuns(q_row, q_col, greedy_row, greedy_col, played)


def _matrix(payoffs: ArrayLike | MatrixGame) -> np.ndarray:
    M = np.array(payoffs.A if isinstance(payoffs, MatrixGame) else payoffs, dtype=float)
    if M.ndim != 2 or 0 in M.shape or not np.all(np.isfinite(M)):
        raise ValueError(f"payoffs must be a finite, non-empty 2-d matrix, got shape {M.shape}")
    return M


def vdn_fit(payoffs: ArrayLike | MatrixGame,
            weights: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Least-squares additive fit :math:`Q_{\text{tot}}(a, b) \approx q_1(a) + q_2(b)` (VDN's
    factorization of a matrix).

    .. math:: \min_{q_1, q_2} \sum_{a, b} w_{ab} \big(M_{ab} - q_1(a) - q_2(b)\big)^2

    The split of a constant between q1 and q2 is arbitrary; the minimum-norm solution is returned.

    Parameters
    ----------
    payoffs : (m, k) array_like or MatrixGame
        (A MatrixGame's row payoffs A are used.)
    weights : (m, k) array_like, optional
        Non-negative weights (default: every joint action equally).

    Returns
    -------
    q1 : (m,) float array
    q2 : (k,) float array
    fitted : (m, k) float array
        fitted[a, b] = q1[a] + q2[b].

    Raises
    ------
    ValueError
        For a matrix that is not finite, non-empty and 2-d, or bad weights.

    References
    ----------
    P. Sunehag et al. (2018), "Value-decomposition networks for cooperative multi-agent learning
    based on team reward", AAMAS.

    Examples
    --------
    An additive matrix is fitted exactly; the climbing game is not:

    >>> import labkit as lk
    >>> q1, q2, fitted = vdn_fit([[1.0, 2.0], [3.0, 4.0]])
    >>> fitted.round(6).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> _, _, fitted = vdn_fit(lk.games.climbing_game())
    >>> round(float(fitted[0, 0]), 2)                          # 11 in the game
    -9.22
    """
    M = _matrix(payoffs)
    m, k = M.shape
    w = np.ones_like(M) if weights is None else np.array(weights, dtype=float)
    if w.shape != M.shape or np.any(w < 0):
        raise ValueError(f"weights must be non-negative with shape {M.shape}")
    # design matrix: one row per joint action (a, b), a one in column a and in column m + b
    design = np.zeros((m * k, m + k))
    design[np.arange(m * k), np.repeat(np.arange(m), k)] = 1.0
    design[np.arange(m * k), m + np.tile(np.arange(k), m)] = 1.0
    root = np.sqrt(w.ravel())
    solution = np.linalg.lstsq(design * root[:, None], M.ravel() * root, rcond=None)[0]
    q1, q2 = solution[:m], solution[m:]
    return q1, q2, q1[:, None] + q2[None, :]


def monotonic_representable(payoffs: ArrayLike | MatrixGame) -> bool:
    """Whether M[a, b] = f(u[a], v[b]) for some utilities u, v and f non-decreasing in both arguments.

    This holds exactly when, for every two rows, one is at least the other in every column, and the
    same for every two columns: then ranking rows and columns gives u and v, and f reads M off the
    grid. If some pair of rows is ordered one way in one column and the other way in another, no
    monotonic f fits, whatever u and v are.

    Parameters
    ----------
    payoffs : (m, k) array_like or MatrixGame

    Returns
    -------
    bool

    References
    ----------
    T. Rashid, M. Samvelyan, C. Schroeder de Witt, G. Farquhar, J. Foerster and S. Whiteson (2018),
    "QMIX: monotonic value function factorisation for deep multi-agent reinforcement learning",
    ICML.

    Examples
    --------
    >>> import labkit as lk
    >>> monotonic_representable([[1, 2], [3, 4]]), monotonic_representable(lk.games.climbing_game())
    (True, False)
    """
    M = _matrix(payoffs)

    def ordered(rows: np.ndarray) -> bool:
        difference = rows[:, None, :] - rows[None, :, :]          # (i, j, column)
        mixed = np.any(difference > 0, axis=2) & np.any(difference < 0, axis=2)
        return not mixed.any()

    return ordered(M) and ordered(M.T)


def coma_advantages(q: ArrayLike | MatrixGame, row_policy: ArrayLike,
                    col_policy: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r"""COMA's counterfactual advantages of both agents in a two-agent matrix game.

    .. math:: A^1(a, b) = Q(a, b) - \sum_{a'} \pi^1(a')\, Q(a', b), \qquad
              A^2(a, b) = Q(a, b) - \sum_{b'} \pi^2(b')\, Q(a, b')

    (one agent's action replaced by its policy's average, the other's kept).

    Parameters
    ----------
    q : (m, k) array_like or MatrixGame
        The centralized critic's joint-action values.
    row_policy : (m,) array_like
    col_policy : (k,) array_like
        The agents' current policies.

    Returns
    -------
    advantage_row, advantage_col : (m, k) float arrays

    Raises
    ------
    ValueError
        For policies that are not probability vectors of the right length.

    References
    ----------
    J. Foerster, G. Farquhar, T. Afouras, N. Nardelli and S. Whiteson (2018), "Counterfactual
    multi-agent policy gradients", AAAI.

    Examples
    --------
    >>> row, col = coma_advantages([[1.0, 0.0], [0.0, 1.0]], [0.5, 0.5], [1.0, 0.0])
    >>> row.tolist(), col.tolist()
    ([[0.5, -0.5], [-0.5, 0.5]], [[0.0, -1.0], [0.0, 1.0]])
    """
    Q = _matrix(q)
    m, k = Q.shape
    x, y = np.asarray(row_policy, float), np.asarray(col_policy, float)
    for name, p, n in (("row_policy", x, m), ("col_policy", y, k)):
        if p.shape != (n,) or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
            raise ValueError(f"{name} must be a probability vector of length {n}, got {p}")
    baseline_row = x @ Q             # (k,): for each column action, the row agent's average
    baseline_col = Q @ y             # (m,)
    return Q - baseline_row[None, :], Q - baseline_col[:, None]
