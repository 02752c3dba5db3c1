"""Compiling Leduc poker by deals: one betting tree, expanded over every deal with numpy.

`compile_game` walks a definition history by history, one Python state per history: 1.83 M
states for 3-player Leduc. But in Leduc the cards never change who may bet how: the tree below
a chance node has the same shape for every card dealt. So this module

1. walks the *betting tree* once, with the first card at every deal (a few thousand states);
2. expands it breadth first into the whole game, a depth level at a time: a decision node of
   the betting tree is copied once per deal that reaches it, and a chance node's k children are
   the k cards not yet dealt, in increasing order (`np.nonzero` of a cards-left mask, row by row);
3. computes the payoffs of each betting outcome for all its deals at once, numbers the
   information sets by their first history in breadth-first order (as the walk does), and fills
   each player's last own sequence level by level.

The result is the `GameTree` `compile_game` builds, array for array and key for key
(tests/test_games.py compares them); only `labkit.games.leduc.LeducPoker` itself is compiled
this way (a subclass may change the rules).
"""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from labkit.tree import CHANCE, TERMINAL, GameTree

if TYPE_CHECKING:
    from labkit.games.leduc import LeducPoker


class _BettingTree:
    """The game walked with the first card at every deal: one node per betting history."""

    def __init__(self, definition: LeducPoker):
        self.states: list[Any] = []
        self.children: list[list[int]] = []
        self.actions: list[tuple[int, ...]] = []
        players: list[int] = []
        dealt_cards: list[int] = []
        queue: deque[tuple[Any, int]] = deque([(definition.initial_state(), 0)])
        while queue:
            state, dealt = queue.popleft()
            node = len(self.states)
            self.states.append(state)
            dealt_cards.append(dealt)
            p = state.current_player()
            players.append(p)
            self.children.append([])
            if p == TERMINAL:
                self.actions.append(())
                continue
            if p == CHANCE:
                first = min(a for a, _ in state.chance_outcomes())
                self.actions.append(())
                moves = [(state.child(first), dealt + 1)]
            else:
                legal = tuple(sorted(state.legal_actions()))
                self.actions.append(legal)
                moves = [(state.child(a), dealt) for a in legal]
            for child, d in moves:
                self.children[node].append(len(self.states) + len(queue))
                queue.append((child, d))
        size = len(self.states)
        self.player = np.array(players, dtype=np.int64)
        self.dealt = np.array(dealt_cards, dtype=np.int64)
        width = max(1, max(len(c) for c in self.children))
        # child_table[s, j]: betting node of the j-th decision child (chance: its one child, j = 0)
        self.child_table = np.full((size, width), -1, dtype=np.int64)
        self.action_table = np.full((size, width), -1, dtype=np.int64)
        for s in range(size):
            self.child_table[s, :len(self.children[s])] = self.children[s]
            self.action_table[s, :len(self.actions[s])] = self.actions[s]
        self.num_moves = np.array([len(a) for a in self.actions], dtype=np.int64)


def compile_leduc(definition: LeducPoker) -> GameTree:
    """The `GameTree` of a `LeducPoker` definition, by deals (module docstring).

    Parameters
    ----------
    definition : LeducPoker
        Exactly labkit's Leduc poker, any number of players (a subclass may change the rules).

    Returns
    -------
    GameTree
        The tree `labkit.games.base.compile_game` builds history by history, array for array.

    Raises
    ------
    GameError
        If an information set breaks perfect recall (a changed `betting_view` could do that).

    Examples
    --------
    >>> import numpy as np
    >>> import labkit as lk
    >>> by_deals = compile_leduc(lk.games.LeducPoker())
    >>> walked = lk.games.compile_game(lk.games.LeducPoker(), by_deals=False)
    >>> bool(np.array_equal(by_deals.returns, walked.returns)), by_deals.infoset_keys == walked.infoset_keys
    (True, True)
    """
    n, C, A = definition.num_players, definition.num_cards, definition.num_distinct_actions
    bt = _BettingTree(definition)
    max_dealt = int(bt.dealt.max())
    # level 0: the root; a level is the arrays (betting node, cards dealt so far) of its histories
    shape, cards = np.zeros(1, dtype=np.int64), np.full((1, max_dealt), -1, dtype=np.int64)
    parents, actions, probs = [np.array([-1])], [np.array([-1])], [np.ones(1)]
    shapes, card_rows = [shape], [cards]
    offset = 0                                      # index of the level's first history
    while len(shape):
        kind = bt.player[shape]
        chance = kind == CHANCE
        # children per history: its legal moves, or the cards left at a chance node
        count = np.where(chance, C - bt.dealt[shape], np.where(kind == TERMINAL, 0, bt.num_moves[shape]))
        total = int(count.sum())
        if total == 0:
            break
        start = np.cumsum(count) - count            # first child of each history, within the next level
        parent = np.repeat(np.arange(len(shape)), count)
        j = np.arange(total) - start[parent]        # which child of its parent
        by_chance = chance[parent]
        child_shape = bt.child_table[shape[parent], np.where(by_chance, 0, j)]
        action = bt.action_table[shape[parent], np.where(by_chance, 0, j)]     # decision moves
        prob = np.ones(total)
        child_cards = cards[parent]
        rows = np.flatnonzero(chance)
        if len(rows):
            # the cards left at each chance history, in increasing order, row after row: exactly
            # the order of those histories' children in the next level (compile_game sorts the
            # chance outcomes), so they fill the children of chance histories in turn
            left = np.ones((len(rows), C), dtype=bool)
            dealt_cards = cards[rows]
            for k in range(max_dealt):
                has = dealt_cards[:, k] >= 0
                left[np.flatnonzero(has), dealt_cards[has, k]] = False
            _, card = np.nonzero(left)
            slots = np.flatnonzero(by_chance)
            action[slots] = card
            prob[slots] = 1.0 / count[parent[slots]]          # uniform over the cards left
            child_cards[slots, bt.dealt[shape[parent[slots]]]] = card
        offset += len(shape)
        parents.append(offset - len(shape) + parent)
        actions.append(action)
        probs.append(prob)
        shapes.append(child_shape)
        card_rows.append(child_cards)
        shape, cards = child_shape, child_cards
    parent = np.concatenate(parents)
    action = np.concatenate(actions)
    chance_prob = np.concatenate(probs)
    shape = np.concatenate(shapes)
    cards = np.concatenate(card_rows)
    depth = np.repeat(np.arange(len(shapes)), [len(s) for s in shapes])
    H = len(parent)
    player = bt.player[shape]

    # payoffs: each terminal betting node, for all the deals that reach it at once
    returns = np.zeros((H, n))
    terminal = np.flatnonzero(player == TERMINAL)
    order = terminal[np.argsort(shape[terminal], kind="stable")]
    bounds = np.flatnonzero(np.diff(shape[order])) + 1
    for group in np.split(order, bounds):
        returns[group] = definition.deal_returns(bt.states[shape[group[0]]], cards[group])

    # information sets: (betting node's view, the cards the player sees), numbered by first history
    decision = np.flatnonzero(player >= 0)
    view: dict[Any, int] = {}
    view_id = np.full(len(bt.states), -1, dtype=np.int64)
    for s in np.unique(shape[decision]):
        view_id[s] = view.setdefault(definition.betting_view(bt.states[s]), len(view))
    code = view_id[shape[decision]]
    seen = definition.visible_cards(player[decision], cards[decision])
    for column in range(seen.shape[1]):
        code = code * (C + 1) + np.where(seen[:, column] >= 0, seen[:, column], C)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    # infoset numbers in the order of their first history (the walk meets them in that order)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    infoset = np.full(H, -1, dtype=np.int64)
    infoset[decision] = rank[inverse.reshape(-1)]
    first_history = np.empty(len(first), dtype=np.int64)
    first_history[rank] = decision[first]
    infoset_player = player[first_history]
    legal_mask = np.zeros((len(first), A), dtype=bool)
    moves = bt.action_table[shape[first_history]]
    for k in range(moves.shape[1]):
        ok = moves[:, k] >= 0
        legal_mask[np.flatnonzero(ok), moves[ok, k]] = True
    keys = [definition.deal_infoset_key(bt.states[s], row)
            for s, row in zip(shape[first_history].tolist(), cards[first_history].tolist(), strict=True)]

    # each player's last own sequence before every history, a level at a time
    own_last = np.full((H, n), -1, dtype=np.int64)
    edge_infoset = np.where(parent >= 0, infoset[np.maximum(parent, 0)], -1)
    for lo, hi in zip(np.cumsum([0] + [len(s) for s in shapes[:-1]]), np.cumsum([len(s) for s in shapes]), strict=True):
        if lo == 0:
            continue
        p = parent[lo:hi]
        own_last[lo:hi] = own_last[p]
        moved = np.flatnonzero(edge_infoset[lo:hi] >= 0)
        own_last[lo + moved, player[p[moved]]] = edge_infoset[lo + moved] * A + action[lo + moved]
    infoset_parent_seq = own_last[first_history, infoset_player]
    if np.any(own_last[decision, player[decision]] != infoset_parent_seq[infoset[decision]]):
        from labkit.games.base import GameError
        raise GameError(f"{definition.name}: an information set breaks perfect recall")

    from labkit.games.base import _action_name, _distinct_keys
    return GameTree(
        name=definition.name, num_players=n, num_actions=A, parent=parent, action=action,
        player=player, depth=depth, infoset=infoset, chance_prob=chance_prob, returns=returns,
        infoset_keys=_distinct_keys(keys, infoset_player.tolist()), infoset_player=infoset_player,
        legal_mask=legal_mask, infoset_parent_seq=infoset_parent_seq, own_last_seq=own_last,
        action_names=[_action_name(definition, a) for a in range(A)], definition=definition)
