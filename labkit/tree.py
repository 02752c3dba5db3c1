"""GameTree: an extensive-form game compiled into flat numpy arrays.

Histories are numbered breadth first (the root is 0), so

* every depth level is a contiguous block ``levels[d]``;
* the children of one node are contiguous, and the children of the nodes of level d
  come in the order of their parents inside level d + 1.

A behavioral policy is one dense array ``(num_infosets, num_actions)`` whose columns are
the game's action ids (zero on illegal actions). A *sequence* of a player is a pair
(infoset I, action a), flattened to ``I * num_actions + a``; -1 is the empty sequence.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from labkit._messages import show

CHANCE = -1      # the same player ids as OpenSpiel
TERMINAL = -4


@dataclass(eq=False)
class GameTree:
    """Arrays describing every history of a game. Build it with `labkit.games.load`.

    Shapes use H histories, I infosets, A distinct actions and n players.

    Attributes
    ----------
    parent, action : (H,) int
        The parent history and the action that leads from it (-1 at the root).
    player : (H,) int
        The acting player, CHANCE (-1) or TERMINAL (-4).
    depth : (H,) int
        Number of moves (chance included) from the root.
    infoset : (H,) int
        Information set of a decision history, -1 elsewhere.
    chance_prob : (H,) float
        Probability of the edge into the history when its parent is a chance node, else 1.
    returns : (H, n) float
        Payoffs at terminal histories (zero rows elsewhere).
    infoset_keys : list of str
        Readable name of each infoset, e.g. "Q|pb" in Kuhn poker.
    infoset_player : (I,) int
        The player who acts at each infoset.
    legal_mask : (I, A) bool
        Which actions are legal at each infoset.
    infoset_parent_seq : (I,) int
        The acting player's previous sequence I' * A + a' on the way to I (-1 if none).
    own_last_seq : (H, n) int
        For every history and player, that player's last sequence before it (-1 if none).
    """

    name: str
    num_players: int
    num_actions: int
    parent: np.ndarray
    action: np.ndarray
    player: np.ndarray
    depth: np.ndarray
    infoset: np.ndarray
    chance_prob: np.ndarray
    returns: np.ndarray
    infoset_keys: list
    infoset_player: np.ndarray
    legal_mask: np.ndarray
    infoset_parent_seq: np.ndarray
    own_last_seq: np.ndarray
    action_names: list
    definition: object = field(default=None, repr=False)

    def __post_init__(self):
        H, A, n = len(self.parent), self.num_actions, self.num_players
        self.num_histories = H
        self.num_infosets = len(self.infoset_keys)
        self.is_terminal = self.player == TERMINAL
        self.is_chance = self.player == CHANCE
        self.terminals = np.flatnonzero(self.is_terminal)
        self._key_index = {k: i for i, k in enumerate(self.infoset_keys)}
        # depth levels: breadth-first order makes them contiguous
        bounds = np.flatnonzero(np.diff(self.depth)) + 1
        starts = np.concatenate(([0], bounds))
        stops = np.concatenate((bounds, [H]))
        self.levels = [slice(int(a), int(b)) for a, b in zip(starts, stops)]
        # the edge into h: who moved (row n stands for chance) and which sequence it is
        par = np.maximum(self.parent, 0)
        parent_player = np.where(self.parent >= 0, self.player[par], CHANCE)
        self.edge_owner = np.where(parent_player == CHANCE, n, parent_player)
        self.edge_infoset = np.where(self.parent >= 0, self.infoset[par], -1)
        self.is_decision_edge = self.edge_infoset >= 0
        self.edge_seq = np.where(self.is_decision_edge, self.edge_infoset * A + np.maximum(self.action, 0), -1)
        self.decision_edges = np.flatnonzero(self.is_decision_edge)
        # bottom-up sums: for each level, its non-terminal nodes and where their children start
        self.child_blocks = []
        for d, lv in enumerate(self.levels[:-1]):
            nodes = np.arange(lv.start, lv.stop)
            internal = nodes[~self.is_terminal[nodes]]
            nxt = self.levels[d + 1]
            first_child = np.searchsorted(self.parent[nxt], internal)
            self.child_blocks.append((internal, first_child, nxt))
        self.num_legal = self.legal_mask.sum(axis=1)
        # own depth of each infoset in its player's sequence tree (parents come first in BFS)
        own_depth = np.zeros(self.num_infosets, dtype=np.int64)
        for i, s in enumerate(self.infoset_parent_seq):
            if s >= 0:
                own_depth[i] = own_depth[s // A] + 1
        self.infoset_own_depth = own_depth

    # ----------------------------------------------------------------- lookups
    def infoset_index(self, key: str) -> int:
        """Index of the infoset with this readable key (KeyError naming close keys if absent)."""
        try:
            return self._key_index[key]
        except KeyError:
            sample = ", ".join(repr(k) for k in self.infoset_keys[:8])
            raise KeyError(f"no infoset {key!r} in {self.name}; keys look like {sample}, ...") from None

    def infosets_of(self, player: int) -> np.ndarray:
        """Indices of the infosets where `player` acts."""
        self.check_player(player)
        return np.flatnonzero(self.infoset_player == player)

    def legal_actions(self, infoset: int) -> np.ndarray:
        return np.flatnonzero(self.legal_mask[infoset])

    def check_player(self, player):
        if isinstance(player, (bool, np.bool_)) or not isinstance(player, (int, np.integer)):
            raise TypeError(f"player must be an integer in 0..{self.num_players - 1}, got "
                            f"{type(player).__name__} {show(player)}")
        if not 0 <= player < self.num_players:
            raise ValueError(f"player must be an integer in 0..{self.num_players - 1}, got {int(player)}")

    def __repr__(self):
        return (f"GameTree({self.name!r}: {self.num_players} players, {self.num_histories} histories, "
                f"{self.num_infosets} infosets, {self.num_actions} distinct actions)")
