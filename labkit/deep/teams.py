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

import numpy as np

from labkit.games.matrix import climbing_game

ACTION_NAMES = ("a", "b", "c")


@dataclass(eq=False)
class TeamGame:
    """A two-agent cooperative game (see the module docstring).

    Attributes
    ----------
    name : str
    initial : (S,) initial state distribution
    reward : (S, A, A) shared reward of each joint action
    next_state : (S, A, A) int, the following state, -1 at the end
    observation : (2, S) int, what each agent sees in each state (numbered 0 .. num_observations[i] - 1)
    observation_names : list of two lists of str
    """
    name: str
    initial: np.ndarray
    reward: np.ndarray
    next_state: np.ndarray
    observation: np.ndarray
    observation_names: list

    def __post_init__(self):
        S, A, _ = self.reward.shape
        self.num_states, self.num_actions = S, A
        self.num_observations = [int(self.observation[i].max()) + 1 for i in range(2)]
        if self.next_state.shape != (S, A, A) or self.initial.shape != (S,):
            raise ValueError("reward, next_state and initial must have shapes (S, A, A), (S, A, A) and (S,)")
        if not np.isclose(self.initial.sum(), 1.0) or np.any(self.initial < 0):
            raise ValueError("initial must be a probability distribution over the states")
        # states in an order where every state comes after the states that lead to it
        self.order = _topological_order(self.next_state)

    def __repr__(self):
        return (f"TeamGame({self.name!r}: {self.num_states} states, {self.num_actions} actions, "
                f"observations {self.num_observations})")


def _topological_order(next_state):
    S = next_state.shape[0]
    depth = np.zeros(S, dtype=int)
    for _ in range(S):
        for s in range(S):
            for t in np.unique(next_state[s]):
                if t >= 0:
                    depth[t] = max(depth[t], depth[s] + 1)
    return list(np.argsort(depth, kind="stable"))


def climbing_team_game() -> TeamGame:
    A = climbing_game().A
    return TeamGame("climbing game", np.ones(1), A[None].copy(), -np.ones((1, 3, 3), dtype=int),
                    np.zeros((2, 1), dtype=int), [["-"], ["-"]])


def messenger_game() -> TeamGame:
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


def _check_policies(game, policies):
    out = []
    for i in range(2):
        p = np.asarray(policies[i], dtype=float)
        if p.ndim == 1:                                   # one action per observation
            p = np.eye(game.num_actions)[p.astype(int)]
        if p.shape != (game.num_observations[i], game.num_actions) or not np.allclose(p.sum(axis=1), 1):
            raise ValueError(f"agent {i + 1}'s policy must be one distribution over {game.num_actions} actions per "
                             f"observation ({game.num_observations[i]}), or one action per observation")
        out.append(p)
    return out


def state_values(game, policies):
    """(S,) expected return from each state when the agents follow `policies` (backward DP)."""
    p1, p2 = _check_policies(game, policies)
    V = np.zeros(game.num_states)
    for s in reversed(game.order):
        joint = np.outer(p1[game.observation[0, s]], p2[game.observation[1, s]])
        nxt = game.next_state[s]
        cont = np.where(nxt >= 0, V[np.maximum(nxt, 0)], 0.0)
        V[s] = np.sum(joint * (game.reward[s] + cont))
    return V


def team_value(game, policies) -> float:
    """Expected team return of decentralized `policies` (per agent: (O_i, A) distributions, or
    (O_i,) actions)."""
    return float(game.initial @ state_values(game, policies))


def optimal_team_value(game):
    """(value, (actions of agent 1, actions of agent 2)) of the best deterministic decentralized
    policies, by enumerating agent 2's policies and best-responding with agent 1 (exact when agent 1
    observes the state, as in both games here; otherwise by enumerating both)."""
    A, (O1, O2) = game.num_actions, game.num_observations
    full = len(np.unique(game.observation[0])) == game.num_states
    best = (-np.inf, None)
    for second in itertools.product(range(A), repeat=O2):
        candidates = [None] if full else itertools.product(range(A), repeat=O1)
        for first in candidates:
            if first is None:
                first = _best_response_of_agent_1(game, np.array(second))
            value = team_value(game, [np.array(first), np.array(second)])
            if value > best[0] + 1e-12:
                best = (value, (tuple(int(a) for a in first), tuple(second)))
    return best


def _best_response_of_agent_1(game, second):
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
    """Transitions of a batch of episodes, as flat arrays (one row per step of one episode)."""

    def __init__(self, state, actions, reward, next_state):
        self.state, self.actions, self.reward, self.next_state = state, actions, reward, next_state


def play(game, policies, episodes, rng) -> EpisodeBatch:
    """Sample `episodes` episodes with the agents drawing actions from `policies` ((O_i, A) each)."""
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
