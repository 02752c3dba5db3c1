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

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labkit._messages import show

CHANCE = -1      # the same player ids as OpenSpiel
TERMINAL = -4
_FEW_INFOSETS = 512   # `_own_depths` of up to this many infosets: a Python loop


@dataclass(eq=False)
class GameTree:
    """Arrays describing every history of a game. Build it with `labkit.games.load`.

    Shapes use H histories, I infosets, A distinct actions and n players. Histories are numbered
    breadth first (module docstring); a policy is an (I, A) array whose row I is the acting
    player's distribution at infoset I.

    Attributes
    ----------
    name : str
        The game's name (its game string for games loaded from one).
    num_players, num_actions : int
        n and A.
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
    action_names : list of str
        A readable name for each action id.
    definition : object
        The game definition it was compiled from (see `labkit.games.base`).
    num_histories, num_infosets : int
        H and I.
    terminals : (Z,) int
        The terminal histories, in increasing order.
    levels : list of slice
        The histories of each depth, as contiguous slices.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> kuhn.num_histories, kuhn.num_infosets, kuhn.num_actions, len(kuhn.terminals)
    (58, 12, 2, 30)
    >>> kuhn.infoset_keys[:4], kuhn.action_names
    (['J|', 'Q|', 'K|', 'Q|p'], ['pass', 'bet'])
    >>> int(kuhn.parent[7]), int(kuhn.action[7]), int(kuhn.player[7])    # Q to player 0, then K to player 1
    (2, 2, 0)
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
    infoset_keys: list[str]
    infoset_player: np.ndarray
    legal_mask: np.ndarray
    infoset_parent_seq: np.ndarray
    own_last_seq: np.ndarray
    action_names: list[str]
    definition: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        H, A, n = len(self.parent), self.num_actions, self.num_players
        self.num_histories = H
        self.num_infosets = len(self.infoset_keys)
        self.is_terminal = self.player == TERMINAL
        self.is_chance = self.player == CHANCE
        self.terminals = self.is_terminal.nonzero()[0]
        self._key_index = dict(zip(self.infoset_keys, range(self.num_infosets), strict=True))
        # depth levels: breadth-first order makes them contiguous
        bounds = (self.depth[1:] != self.depth[:-1]).nonzero()[0] + 1
        starts = np.concatenate(([0], bounds))
        stops = np.concatenate((bounds, [H]))
        self.levels = [slice(int(a), int(b)) for a, b in zip(starts, stops, strict=True)]
        # who moved on the edge into h (row n stands for chance)
        parent_player = np.where(self.parent >= 0, self.player[np.maximum(self.parent, 0)], CHANCE)
        self.edge_owner = np.where(parent_player == CHANCE, n, parent_player)
        # own depth of each infoset in its player's sequence tree (parents come first in BFS)
        self.infoset_own_depth = _own_depths(self.infoset_parent_seq, A)

    # what only some passes read is computed on first use (a solver's set-up reads none of it)
    @functools.cached_property
    def edge_infoset(self) -> np.ndarray:
        """(H,) the infoset of the decision history the edge into h leaves, -1 elsewhere."""
        return np.where(self.parent >= 0, self.infoset[np.maximum(self.parent, 0)], -1)

    @functools.cached_property
    def is_decision_edge(self) -> np.ndarray:
        """(H,) whether a player's decision leads into h."""
        return self.edge_infoset >= 0

    @functools.cached_property
    def edge_seq(self) -> np.ndarray:
        """(H,) the sequence I * A + a of the decision into h, -1 where chance moved (or at the root)."""
        return np.where(self.is_decision_edge, self.edge_infoset * self.num_actions + np.maximum(self.action, 0), -1)

    @functools.cached_property
    def decision_edges(self) -> np.ndarray:
        """The histories a player's decision leads into, in increasing order."""
        return self.is_decision_edge.nonzero()[0]

    @functools.cached_property
    def child_blocks(self) -> list[tuple[np.ndarray, np.ndarray, slice]]:
        """For the bottom-up sums, per level: its non-terminal nodes, where their children start in
        the next level, and that level (`parent` never decreases in breadth-first order, so one
        search finds every first child)."""
        internal = (~self.is_terminal).nonzero()[0]
        first_child = self.parent.searchsorted(internal)
        cuts = internal.searchsorted([lv.start for lv in self.levels]).tolist() + [len(internal)]
        return [(internal[cuts[d]:cuts[d + 1]], first_child[cuts[d]:cuts[d + 1]] - nxt.start, nxt)
                for d, nxt in enumerate(self.levels[1:])]

    @functools.cached_property
    def num_legal(self) -> np.ndarray:
        """(I,) the number of legal actions at each infoset."""
        return self.legal_mask.sum(axis=1)

    def __getstate__(self) -> dict[str, Any]:
        """A pickled or copied tree keeps its arrays and leaves out what labkit caches on it (the
        attributes whose names start with "_", except the key index): the compiled evaluation's
        plan holds memory of this process's C extension, and other caches hold local functions,
        which cannot be pickled. The copy builds each again on first use."""
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_") or k == "_key_index"}

    # ----------------------------------------------------------------- lookups
    def infoset_index(self, key: str) -> int:
        """Index of the infoset with this readable key.

        Parameters
        ----------
        key : str
            E.g. "Q|pb" in Kuhn poker.

        Returns
        -------
        int

        Raises
        ------
        KeyError
            If the game has no such infoset (the message shows what keys look like).

        Examples
        --------
        >>> import labkit as lk
        >>> lk.games.load("kuhn_poker").infoset_index("Q|pb")
        10
        """
        try:
            return self._key_index[key]
        except KeyError:
            sample = ", ".join(repr(k) for k in self.infoset_keys[:8])
            raise KeyError(f"no infoset {key!r} in {self.name}; keys look like {sample}, ...") from None

    def infosets_of(self, player: int) -> np.ndarray:
        """Indices of the infosets where `player` acts.

        Parameters
        ----------
        player : int
            0..n-1.

        Returns
        -------
        (k,) int array
            In increasing order.

        Raises
        ------
        TypeError, ValueError
            If `player` is not an integer in 0..n-1 (`check_player`).

        Examples
        --------
        >>> import labkit as lk
        >>> lk.games.load("kuhn_poker").infosets_of(1)
        array([3, 4, 5, 6, 7, 8])
        """
        self.check_player(player)
        return np.flatnonzero(self.infoset_player == player)

    def legal_actions(self, infoset: int | np.integer) -> np.ndarray:
        """The legal action ids at an infoset.

        Parameters
        ----------
        infoset : int
            An infoset index (see `infoset_index`).

        Returns
        -------
        (k,) int array
            In increasing order.

        Examples
        --------
        >>> import labkit as lk
        >>> leduc = lk.games.load("leduc_poker")
        >>> leduc.legal_actions(0), leduc.legal_actions(leduc.infoset_index("Ks||r|"))
        (array([1, 2]), array([0, 1, 2]))
        """
        return np.flatnonzero(self.legal_mask[infoset])

    def check_player(self, player: Any) -> None:
        """Raise unless `player` is an integer in 0..n-1.

        Parameters
        ----------
        player : int

        Raises
        ------
        TypeError
            If `player` is not an integer (a bool is not accepted either).
        ValueError
            If it is out of range.

        Examples
        --------
        >>> import labkit as lk
        >>> lk.games.load("kuhn_poker").check_player(2)
        Traceback (most recent call last):
          ...
        ValueError: player must be an integer in 0..1, got 2
        """
        if isinstance(player, (bool, np.bool_)) or not isinstance(player, (int, np.integer)):
            raise TypeError(f"player must be an integer in 0..{self.num_players - 1}, got "
                            f"{type(player).__name__} {show(player)}")
        if not 0 <= player < self.num_players:
            raise ValueError(f"player must be an integer in 0..{self.num_players - 1}, got {int(player)}")

    @property
    def fingerprint(self) -> str:
        """A hash of the game's information structure: what a policy's rows mean.

        Two trees have the same fingerprint exactly when they have the same players, the same
        infosets (keys, acting players, legal actions, the sequence leading to each) and the same
        action names, so that a policy of one is a policy of the other. Evaluators accept a
        `labkit.TabularPolicy` of another tree only if the fingerprints agree (a policy of
        goofspiel with descending prizes is refused by goofspiel with ascending prizes: their
        infoset keys name different prizes). Computed once per tree.

        Returns
        -------
        str
            A SHA-256 hex digest.

        Examples
        --------
        >>> import labkit as lk
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> kuhn.fingerprint == lk.games.compile_game(lk.games.KuhnPoker()).fingerprint
        True
        >>> kuhn.fingerprint == lk.games.load("openspiel:kuhn_poker").fingerprint    # other keys
        False
        """
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            import hashlib

            digest = hashlib.sha256(f"{self.num_players} {self.num_actions}".encode())
            digest.update("\x00".join(self.infoset_keys).encode())
            digest.update(b"\x01" + "\x00".join(self.action_names).encode())
            for array in (self.infoset_player, self.legal_mask, self.infoset_parent_seq):
                digest.update(b"\x01" + np.ascontiguousarray(array, dtype=np.int64).tobytes())
            cached = self.__dict__["_fingerprint"] = digest.hexdigest()
        return cached

    def __repr__(self) -> str:
        return (f"GameTree({self.name!r}: {self.num_players} players, {self.num_histories} histories, "
                f"{self.num_infosets} infosets, {self.num_actions} distinct actions)")


def _own_depths(parent_seq, num_actions):
    """Depth of each infoset in its player's sequence tree, from its parent sequence I' * A + a'
    (-1: none): the number of its ancestors, counted a generation per pass. Parents are numbered
    before their children (breadth-first order), so the ancestor chains end."""
    parent = np.where(parent_seq >= 0, parent_seq // num_actions, -1)
    if len(parent) <= _FEW_INFOSETS or not (parent < np.arange(len(parent))).all():
        # one at a time: a few infosets (where numpy's passes cost more), or not in breadth-first order
        depths = [0] * len(parent)
        for i, p in enumerate(parent.tolist()):
            if p >= 0:
                depths[i] = depths[p] + 1
        return np.array(depths, dtype=np.int64)
    depth = np.zeros(len(parent), dtype=np.int64)
    above = parent                                       # each infoset's ancestor, one step further per pass
    while True:
        has = above >= 0
        if not has.any():
            return depth
        depth += has
        above = np.where(has, parent[above], -1)         # (where above is -1, parent[-1] is read and dropped)
