"""Small cooperative games for the learners trained by temporal differences, and their exact values.

A `TeamGame` is a two-agent, finite-horizon, fully cooperative game with a shared reward. Its
states are numbered; every agent sees only an *observation* of the state. At each state both
agents act at once (an agent whose action does not matter there simply has no effect), the team
receives reward[s, a1, a2] and moves to next_state[s, a1, a2] (-1 ends the episode). Chance acts
only at the start (the initial distribution). Everything is small enough for exact answers:

* `team_value(game, policies)`: the expected return of decentralized policies, one distribution
  over actions per observation and agent (a dynamic program over the states);
* `optimal_team_value(game)`: the best decentralized deterministic policies by enumeration.

Two games:

`climbing_team_game()` (Claus and Boutilier, 1998): one state, the payoffs of
`labkit.games.climbing_game()`; the optimum (a, a) pays 11.

`messenger_game()`, designed for this book: the climbing game with hidden roles and a messenger.
Chance draws x in {0, 1}, and only agent 1 sees it. At x = 0 the payoffs are the climbing game's;
at x = 1 the actions a and c trade places, so the summit is (c, c). Step 1: agent 1 sends a
message, its action m in {a, b, c} (agent 2's action has no effect and nothing is paid). Step 2:
agent 1 sees (x, m), agent 2 sees only m, and they play the payoff matrix of x. To reach 11 in
both cases agent 1 must say which matrix is in play and agent 2 must listen: the first action
reveals information the second agent needs, and its value reaches step 1 only through bootstrapping.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from labkit.games.matrix import climbing_game

ACTION_NAMES = ("a", "b", "c")


@dataclass(eq=False)
class TeamGame:
    """A two-agent cooperative game (see the module docstring).

    Attributes
    ----------
    name : str
    initial : (S,) float array
        The initial state distribution.
    reward : (S, A, A) float array
        The shared reward of each joint action.
    next_state : (S, A, A) int array
        The following state, -1 at the end.
    observation : (2, S) int array
        What each agent sees in each state (numbered 0 .. num_observations[i] - 1).
    observation_names : list of two lists of str

    Raises
    ------
    ValueError
        For arrays of inconsistent shapes, an initial vector that is not a distribution, or a
        transition to a state that does not exist.

    Examples
    --------
    >>> game = messenger_game()
    >>> game
    TeamGame('messenger game': 8 states, 3 actions, observations [8, 4])
    >>> game.observation_names[1]
    ['start', 'm=a', 'm=b', 'm=c']
    """
    name: str
    initial: np.ndarray
    reward: np.ndarray
    next_state: np.ndarray
    observation: np.ndarray
    observation_names: list

    def __post_init__(self) -> None:
        self.reward = np.asarray(self.reward, dtype=float)
        if (self.reward.ndim != 3 or self.reward.shape[1] != self.reward.shape[2]
                or not np.all(np.isfinite(self.reward))):
            raise ValueError(f"reward must be a finite (S, A, A) array, got shape {self.reward.shape}")
        S, A, _ = self.reward.shape
        self.num_states, self.num_actions = S, A
        self.num_observations = [int(self.observation[i].max()) + 1 for i in range(2)]
        if self.next_state.shape != (S, A, A) or self.initial.shape != (S,):
            raise ValueError("reward, next_state and initial must have shapes (S, A, A), (S, A, A) and (S,)")
        if not np.isclose(self.initial.sum(), 1.0) or not np.all(self.initial >= 0):
            raise ValueError("initial must be a probability distribution over the states")
        if np.any(self.next_state >= S) or np.any(self.next_state < -1):
            raise ValueError(f"next_state must hold states 0..{S - 1} or -1 (the end)")
        if np.asarray(self.observation).shape != (2, S) or np.any(np.asarray(self.observation) < 0):
            raise ValueError(f"observation must be a (2, {S}) array of observation numbers >= 0")
        # states in an order where every state comes after the states that lead to it
        self.order = _topological_order(self.next_state)

    def __repr__(self) -> str:
        return (f"TeamGame({self.name!r}: {self.num_states} states, {self.num_actions} actions, "
                f"observations {self.num_observations})")


def _topological_order(next_state: np.ndarray) -> list[int]:
    S = next_state.shape[0]
    depth = np.zeros(S, dtype=int)
    for _ in range(S):
        for s in range(S):
            for t in np.unique(next_state[s]):
                if t >= 0:
                    depth[t] = max(depth[t], depth[s] + 1)
    return list(np.argsort(depth, kind="stable"))


def climbing_team_game() -> TeamGame:
    """The climbing game as a one-state team game (Claus and Boutilier, 1998).

    Returns
    -------
    TeamGame

    References
    ----------
    C. Claus and C. Boutilier (1998), "The dynamics of reinforcement learning in cooperative
    multiagent systems", AAAI.

    Examples
    --------
    >>> game = climbing_team_game()
    >>> game.reward[0].tolist()
    [[11.0, -30.0, 0.0], [-30.0, 7.0, 6.0], [0.0, 0.0, 5.0]]
    >>> optimal_team_value(game)
    (11.0, ((0,), (0,)))
    """
    A = climbing_game().A
    return TeamGame("climbing game", np.ones(1), A[None].copy(), -np.ones((1, 3, 3), dtype=int),
                    np.zeros((2, 1), dtype=int), [["-"], ["-"]])


def messenger_game() -> TeamGame:
    """The messenger game (module docstring): agent 1 must tell agent 2 which matrix is in play.

    Returns
    -------
    TeamGame

    Examples
    --------
    >>> game = messenger_game()
    >>> value, (first, second) = optimal_team_value(game)
    >>> value, second          # agent 2 plays a after the message a, c after c (at 'start' nothing counts)
    (11.0, (0, 0, 0, 2))
    """
    A = climbing_game().A
    swap = [2, 1, 0]
    payoffs = [A, A[np.ix_(swap, swap)]]                  # at x = 1, a and c trade places
    # states: 0, 1 = step 1 with x = 0, 1;  2 + 3 x + m = step 2 after message m
    S = 2 + 6
    reward = np.zeros((S, 3, 3))
    next_state = -np.ones((S, 3, 3), dtype=int)
    observation = np.zeros((2, S), dtype=int)
    names = [[f"x={x}" for x in (0, 1)] + [f"x={x}, m={ACTION_NAMES[m]}" for x in (0, 1) for m in range(3)],
             ["start"] + [f"m={ACTION_NAMES[m]}" for m in range(3)]]
    for x in (0, 1):
        observation[0, x] = x
        observation[1, x] = 0
        for m in range(3):
            next_state[x, m, :] = 2 + 3 * x + m
            s = 2 + 3 * x + m
            reward[s] = payoffs[x]
            observation[0, s] = 2 + 3 * x + m
            observation[1, s] = 1 + m
    initial = np.zeros(S)
    initial[:2] = 0.5
    return TeamGame("messenger game", initial, reward, next_state, observation, names)


TEAM_GAMES = {"climbing game": climbing_team_game, "messenger game": messenger_game}


def _check_policies(game: TeamGame, policies: Any) -> list[np.ndarray]:
    if not isinstance(game, TeamGame):
        raise TypeError(f"game must be a TeamGame, got {type(game).__name__}")
    if isinstance(policies, (str, bytes)) or not hasattr(policies, "__len__") or len(policies) != 2:
        raise ValueError("policies must hold two policies, one per agent")
    out = []
    for i in range(2):
        try:
            p = np.asarray(policies[i], dtype=float)
        except (TypeError, ValueError):
            p = np.full(0, np.nan)
        if p.ndim == 1:                                   # one action per observation
            actions = p
            if not (np.all(np.isfinite(actions)) and np.all(actions == np.round(actions))
                    and np.all((actions >= 0) & (actions < game.num_actions))):
                raise ValueError(f"agent {i + 1}'s actions must be integers in 0..{game.num_actions - 1}, "
                                 f"got {policies[i]!r}")
            p = np.eye(game.num_actions)[actions.astype(int)]
        if p.ndim == 2 and not np.all(np.isfinite(p) & (p >= 0)):
            raise ValueError(f"agent {i + 1}'s policy must hold probabilities (finite, >= 0)")
        if p.shape != (game.num_observations[i], game.num_actions) or not np.allclose(p.sum(axis=1), 1):
            raise ValueError(f"agent {i + 1}'s policy must be one distribution over {game.num_actions} actions per "
                             f"observation ({game.num_observations[i]}), or one action per observation")
        out.append(p)
    return out


def state_values(game: TeamGame, policies: Any) -> np.ndarray:
    r"""The expected return from each state when the agents follow `policies` (backward induction).

    .. math:: V(s) = \sum_{a_1, a_2} \pi_1(a_1 \mid o_1(s))\, \pi_2(a_2 \mid o_2(s))
              \bigl[r(s, a_1, a_2) + V(s')\bigr], \quad V(\text{end}) = 0.

    Parameters
    ----------
    game : TeamGame
    policies : two arrays
        Per agent, (O_i, A) distributions or (O_i,) actions.

    Returns
    -------
    (S,) float array

    Raises
    ------
    TypeError, ValueError
        For anything but two policies of the game's shapes (probabilities >= 0 summing to 1, or
        legal action numbers).

    Examples
    --------
    >>> game = messenger_game()
    >>> state_values(game, [[0] * 8, [0] * 4]).tolist()      # everyone plays a: 11 at x = 0, 5 at x = 1
    [11.0, 5.0, 11.0, 11.0, 11.0, 5.0, 5.0, 5.0]
    """
    p1, p2 = _check_policies(game, policies)
    V = np.zeros(game.num_states)
    for s in reversed(game.order):
        joint = np.outer(p1[game.observation[0, s]], p2[game.observation[1, s]])
        nxt = game.next_state[s]
        cont = np.where(nxt >= 0, V[np.maximum(nxt, 0)], 0.0)
        V[s] = np.sum(joint * (game.reward[s] + cont))
    return V


def team_value(game: TeamGame, policies: Any) -> float:
    r"""The expected team return of decentralized policies, :math:`\sum_s \mu_0(s) V(s)`.

    Parameters
    ----------
    game : TeamGame
    policies : two arrays
        Per agent, (O_i, A) distributions or (O_i,) actions.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        As `state_values`.

    Examples
    --------
    >>> game = climbing_team_game()
    >>> team_value(game, [[1], [1]]), team_value(game, [[[1 / 3] * 3], [[1 / 3] * 3]])
    (7.0, -3.4444444444444438)
    >>> team_value(game, [[[1.5, -0.5, 0.0]], [[1.0, 0.0, 0.0]]])
    Traceback (most recent call last):
      ...
    ValueError: agent 1's policy must hold probabilities (finite, >= 0)
    """
    return float(game.initial @ state_values(game, policies))


def optimal_team_value(game: TeamGame) -> tuple[float, Any]:
    """The best deterministic decentralized policies and their value.

    By enumerating agent 2's policies and best-responding with agent 1 (exact when agent 1
    observes the state, as in both games here; otherwise by enumerating both).

    Parameters
    ----------
    game : TeamGame

    Returns
    -------
    value : float
    actions : (tuple of int, tuple of int)
        Agent 1's action at each of its observations, and agent 2's.

    Examples
    --------
    >>> optimal_team_value(climbing_team_game())
    (11.0, ((0,), (0,)))
    """
    A, (O1, O2) = game.num_actions, game.num_observations
    full = len(np.unique(game.observation[0])) == game.num_states
    best: tuple[float, Any] = (-np.inf, None)
    for second in itertools.product(range(A), repeat=O2):
        candidates: Any = [None] if full else itertools.product(range(A), repeat=O1)
        first: Any
        for first in candidates:
            if first is None:
                first = _best_response_of_agent_1(game, np.array(second))
            value = team_value(game, [np.array(first), np.array(second)])
            if value > best[0] + 1e-12:
                best = (value, (tuple(int(a) for a in first), tuple(second)))
    return best


def _best_response_of_agent_1(game: TeamGame, second: np.ndarray) -> np.ndarray:
    """Agent 1 observes the state: backward induction against agent 2's deterministic policy."""
    V = np.zeros(game.num_states)
    choice = np.zeros(game.num_observations[0], dtype=int)
    for s in reversed(game.order):
        b = second[game.observation[1, s]]
        nxt = game.next_state[s, :, b]
        q = game.reward[s, :, b] + np.where(nxt >= 0, V[np.maximum(nxt, 0)], 0.0)
        choice[game.observation[0, s]] = int(np.argmax(q))
        V[s] = q.max()
    return choice


class EpisodeBatch:
    """Transitions of a batch of episodes, as flat arrays (one row per step of one episode).

    Parameters
    ----------
    state : (N,) int array
    actions : (N, 2) int array
    reward : (N,) float array
    next_state : (N,) int array
        -1 where the episode ended.

    Examples
    --------
    >>> batch = play(climbing_team_game(), [[0], [0]], 3, np.random.default_rng(0))
    >>> batch.actions.tolist(), batch.reward.tolist()
    ([[0, 0], [0, 0], [0, 0]], [11.0, 11.0, 11.0])
    """

    def __init__(self, state: np.ndarray, actions: np.ndarray, reward: np.ndarray, next_state: np.ndarray):
        self.state, self.actions, self.reward, self.next_state = state, actions, reward, next_state


def play(game: TeamGame, policies: Any, episodes: int, rng: np.random.Generator) -> EpisodeBatch:
    """Sample episodes with the agents drawing their actions from `policies`.

    Parameters
    ----------
    game : TeamGame
    policies : two arrays
        Per agent, (O_i, A) distributions or (O_i,) actions.
    episodes : int
        At least 1.
    rng : numpy Generator

    Returns
    -------
    EpisodeBatch

    Raises
    ------
    TypeError, ValueError
        As `state_values`, and for episodes that is not a positive integer.

    Examples
    --------
    >>> batch = play(messenger_game(), [[0] * 8, [0] * 4], 2, np.random.default_rng(1))
    >>> len(batch.state), batch.next_state.tolist().count(-1)    # two steps per episode
    (4, 2)
    """
    from labkit.deep.common import check_positive_int
    episodes = check_positive_int("episodes", episodes)
    p = _check_policies(game, policies)
    cumulative = [np.cumsum(pi, axis=1) for pi in p]
    state = rng.choice(game.num_states, size=episodes, p=game.initial)
    rows = []
    while len(state):
        draws = rng.random((len(state), 2))
        actions = np.stack([np.minimum((cumulative[i][game.observation[i, state]] < draws[:, i:i + 1]).sum(axis=1),
                                       game.num_actions - 1) for i in range(2)], axis=1)
        reward = game.reward[state, actions[:, 0], actions[:, 1]]
        nxt = game.next_state[state, actions[:, 0], actions[:, 1]]
        rows.append((state, actions, reward, nxt))
        state = nxt[nxt >= 0]
    return EpisodeBatch(*(np.concatenate([r[k] for r in rows]) for k in range(4)))
