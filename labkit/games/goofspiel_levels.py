"""Compiling goofspiel a depth level at a time, with numpy, instead of one Python state per history.

In goofspiel every history of a depth level is the same kind of node: a prize turned up by chance,
or the bid of the same player in the same round (bids are asked player 0 first, and every round is
played). So the tree is built level by level, each level from the one above by a few array
operations over all its histories:

1. the children of a history are the cards left in the acting player's hand (or the prizes not
   turned up yet), in increasing order: ``np.nonzero`` of a (histories, cards) mask, row after
   row, is the breadth-first order of `compile_game`'s walk (which sorts the moves);
2. when the last player of a round has bid, the round is scored for every history at once (the
   single highest bid wins the prize's value), and after the second-to-last round the last one
   plays itself out;
3. what the players know is kept as integer codes: a public code (the prizes turned up, who won
   each round and, when bids are shown, every bid of the finished rounds) and, with ``imp_info``,
   a private code per player (its own bids). Two decision histories of a level are in the same
   information set exactly when the acting player's codes agree, that is, exactly when
   `GoofspielState.infoset_key` gives them the same string.

Information sets are numbered by their first history (the order in which the walk meets them), and
only their keys are written as strings, from the moves on the path to that first history. The
result is the `GameTree` of the walk, array for array and key for key (tests/test_games.py).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from labkit.tree import CHANCE, TERMINAL, GameTree

if TYPE_CHECKING:
    from labkit.games.goofspiel import Goofspiel

_CODE_LIMIT = 2 ** 62
_FEW_ROWS = 64                                      # `_keys` writes levels of up to this many infosets key by key


def _extend(code: np.ndarray, value: np.ndarray | int, base: int) -> np.ndarray:
    """A code for the pair (code, value), value in 0..base-1: code * base + value, the codes first
    renumbered 0, 1, ... (equal stays equal) when the product could overflow."""
    if len(code) and int(code.max()) >= _CODE_LIMIT // base:
        code = np.unique(code, return_inverse=True)[1].reshape(-1)
    return code * base + value


def _cards(mask: np.ndarray, num_cards: int) -> np.ndarray:
    """(m, N) bool: the cards 0..N-1 present in each bitmask of `mask` (m,)."""
    return ((mask[:, None] >> np.arange(num_cards)) & 1).astype(bool)


def _only_card(mask: np.ndarray, num_cards: int) -> np.ndarray:
    """The card of each one-card bitmask."""
    return _cards(mask, num_cards).argmax(axis=1)


def _fixed_prize(game: Goofspiel, r: int) -> int:
    """The prize turned up in round r when the order is not random."""
    return r if game.points_order == "ascending" else game.num_cards - 1 - r


def _winners(bids: np.ndarray) -> np.ndarray:
    """The single highest bidder of each row of `bids` (m, n), or -1 (TIE) when the top bid is tied."""
    top = bids.max(axis=1)
    single = (bids == top[:, None]).sum(axis=1) == 1
    return np.where(single, bids.argmax(axis=1), -1)


def _score(bids: np.ndarray, stake: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Add the prize at stake, card value stake + 1, to each row's single highest bidder (in place)."""
    winner = _winners(bids)
    rows = np.flatnonzero(winner >= 0)
    points[rows, winner[rows]] += stake[rows] + 1
    return winner


def level_plan(game: Goofspiel) -> list[tuple[int, int]]:
    """The kind of each depth level, as (player, round): player CHANCE (a prize is turned up), a
    bidding player, or TERMINAL for the last level (its round: the number of rounds with bids)."""
    rounds = max(game.num_cards - 1, 1)             # from 2 cards on, the last round plays itself
    plan = []
    for r in range(rounds):
        if game.points_order == "random":
            plan.append((CHANCE, r))
        plan.extend((p, r) for p in range(game.num_players))
    plan.append((TERMINAL, rounds))
    return plan


def compile_goofspiel(game: Goofspiel) -> GameTree:
    """The `GameTree` of a `Goofspiel` definition, level by level (module docstring)."""
    N, n = game.num_cards, game.num_players
    plan = level_plan(game)
    rounds = plan[-1][1]
    # the current level's histories: cards spent (a bitmask per player), prizes not turned up (a
    # bitmask), the prize at stake, this round's bids, points, and the public and private codes
    spent = np.zeros((1, n), dtype=np.int64)
    prizes_left = np.full(1, (1 << N) - 1, dtype=np.int64)
    stake = np.full(1, -1, dtype=np.int64)
    if game.points_order != "random":
        stake[:] = _fixed_prize(game, 0)
        prizes_left &= ~(1 << stake)
    bids = np.zeros((1, n), dtype=np.int64)
    points = np.zeros((1, n), dtype=np.int64)
    public = np.zeros(1, dtype=np.int64)
    private = np.zeros((1, n), dtype=np.int64)
    parents, actions, probs, sizes = [np.array([-1])], [np.array([-1])], [np.ones(1)], [1]
    infoset_levels, first_levels, legal_levels = [], [], []
    offset = infosets = 0                           # first history of the level, infosets so far
    for p, r in plan[:-1]:
        if p == CHANCE:
            available = _cards(prizes_left, N)
        else:
            available = ~_cards(spent[:, p], N)     # the acting player's hand
            infoset, first = _number_infosets(
                _pair(private[:, p], public) if game.imp_info else public)
            infoset_levels.append(infosets + infoset)
            first_levels.append(offset + first)
            legal_levels.append(available[first])
            if not np.array_equal(available, available[first][infoset]):
                from labkit.games.base import GameError
                raise GameError(f"{game.name}: an information set mixes histories with different hands")
            infosets += len(first)
        parent, card = np.nonzero(available)        # the children: ascending cards, row after row
        parents.append(offset + parent)
        actions.append(card)
        offset += len(stake)
        sizes.append(len(parent))
        spent, prizes_left, stake = spent[parent], prizes_left[parent], stake[parent]
        bids, points, public, private = bids[parent], points[parent], public[parent], private[parent]
        if p == CHANCE:
            probs.append(1.0 / available.sum(axis=1)[parent])
            stake = card
            prizes_left &= ~(1 << card)
            public = _extend(public, card, N)
            continue
        probs.append(np.ones(len(parent)))
        spent[:, p] |= 1 << card
        bids[:, p] = card
        if p < n - 1:
            continue
        # the round is over: score it, and everyone learns who won (and the bids, when shown)
        winner = _score(bids, stake, points)
        for q in range(n):
            if game.imp_info:
                private[:, q] = _extend(private[:, q], bids[:, q], N)
            else:
                public = _extend(public, bids[:, q], N)
        public = _extend(public, winner + 1, n + 1)
        if r == rounds - 1:
            if N >= 2:                              # the last round: last cards for the last prize
                last = np.stack([_only_card(((1 << N) - 1) & ~spent[:, q], N) for q in range(n)], axis=1)
                _score(last, _only_card(prizes_left, N), points)
        elif game.points_order != "random":
            stake = np.full(len(stake), _fixed_prize(game, r + 1))
            prizes_left &= ~(1 << stake)
            public = _extend(public, stake, N)
    parent = np.concatenate(parents)
    action = np.concatenate(actions)
    depth = np.repeat(np.arange(len(sizes)), sizes)
    player = np.repeat(np.array([p for p, _ in plan], dtype=np.int64), sizes)
    H = len(parent)
    infoset = np.full(H, -1, dtype=np.int64)
    decision = player >= 0
    infoset[decision] = np.concatenate(infoset_levels) if infoset_levels else []
    first_history = np.concatenate(first_levels) if first_levels else np.zeros(0, dtype=np.int64)
    legal_mask = np.concatenate(legal_levels) if legal_levels else np.zeros((0, N), dtype=bool)
    returns = np.zeros((H, n))
    returns[H - len(points):] = _returns(game, points)
    return _tree(game, parent, action, player, depth, infoset, np.concatenate(probs), returns,
                 first_history, legal_mask, sizes, plan)


def _pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A code that is equal exactly where both `a` and `b` are."""
    if int(a.max(initial=0)) >= _CODE_LIMIT // (int(b.max(initial=0)) + 1):
        a = np.unique(a, return_inverse=True)[1].reshape(-1)
        b = np.unique(b, return_inverse=True)[1].reshape(-1)
    return a * (int(b.max(initial=0)) + 1) + b


def _number_infosets(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Infosets of one level from the histories' codes: the infoset of each history, numbered in
    the order of first histories, and the first history (within the level) of each infoset."""
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int64)
    rank[order] = np.arange(len(first))
    return rank[inverse.reshape(-1)], first[order]


def _returns(game: Goofspiel, points: np.ndarray) -> np.ndarray:
    """`GoofspielState.returns` for every row of final points (Z, n), with the same float operations."""
    n = game.num_players
    if game.returns_type == "total_points":
        return points.astype(float)
    if game.returns_type == "point_difference":
        return points - points.sum(axis=1, keepdims=True) / n
    best = points == points.max(axis=1, keepdims=True)
    k = best.sum(axis=1, keepdims=True)
    values = np.where(best, 1.0 / k, -1.0 / np.maximum(n - k, 1))
    return np.where(k == n, 0.0, values)


def _tree(game: Goofspiel, parent: np.ndarray, action: np.ndarray, player: np.ndarray, depth: np.ndarray,
          infoset: np.ndarray, chance_prob: np.ndarray, returns: np.ndarray, first_history: np.ndarray,
          legal_mask: np.ndarray, sizes: list[int], plan: list[tuple[int, int]]) -> GameTree:
    """The `GameTree` of the level arrays, with own last sequences, perfect recall checked and keys."""
    from labkit.games.base import _action_name, _distinct_keys, _check_recall, _own_last_sequences
    N, n = game.num_cards, game.num_players
    infoset_player = player[first_history]
    own_last = _own_last_sequences(parent, action, player, infoset, sizes, n, N)
    infoset_parent_seq = own_last[first_history, infoset_player]
    _check_recall(game.name, own_last, player, infoset, infoset_parent_seq)
    keys = _keys(game, parent, action, depth, first_history, plan)
    return GameTree(
        name=game.name, num_players=n, num_actions=N, parent=parent, action=action, player=player,
        depth=depth, infoset=infoset, chance_prob=chance_prob, returns=returns,
        infoset_keys=_distinct_keys(keys, infoset_player.tolist()), infoset_player=infoset_player,
        legal_mask=legal_mask, infoset_parent_seq=infoset_parent_seq, own_last_seq=own_last,
        action_names=[_action_name(game, a) for a in range(N)], definition=game)


def _keys(game: Goofspiel, parent: np.ndarray, action: np.ndarray, depth: np.ndarray,
          first_history: np.ndarray, plan: list[tuple[int, int]]) -> list[str]:
    """`GoofspielState.infoset_key` of every infoset's first history, from the moves on its path;
    each part of a key is written once per distinct value (`_texts`)."""
    n = game.num_players
    keys = []
    depths = depth[first_history]
    for d in np.unique(depths).tolist():
        rows = first_history[depths == d]
        path = np.empty((len(rows), d), dtype=np.int64)
        h = rows
        for j in range(d - 1, -1, -1):
            path[:, j] = action[h]
            h = parent[h]
        p, r = plan[d]
        kinds = plan[:d]
        if len(rows) <= _FEW_ROWS:                  # a few keys: written one by one, without the arrays below
            keys += [_key(game, row, p, r, kinds) for row in path.tolist()]
            continue
        if game.points_order == "random":
            prizes = path[:, [j for j, (q, _) in enumerate(kinds) if q == CHANCE]]
        else:
            prizes = np.tile([_fixed_prize(game, j) for j in range(r + 1)], (len(rows), 1))
        # bids[:, s, q]: player q's bid in the finished round s
        columns = [[j for j, (q, s) in enumerate(kinds) if q >= 0 and s == round_] for round_ in range(r)]
        bids = path[:, columns] if r else np.zeros((len(rows), 0, n), dtype=np.int64)
        winners = np.stack([_winners(bids[:, s]) for s in range(r)], axis=1) if r else bids[:, :, 0]
        prize_text = _texts(prizes + 1, lambda row: ",".join(map(str, row)))
        won_text = _texts(winners, lambda row: ",".join("tie" if w < 0 else f"P{w}" for w in row) or "-")
        if game.imp_info:
            bid_text = _texts(bids[:, :, p] + 1, lambda row: "my bids " + (",".join(map(str, row)) or "-"))
        else:
            bid_text = _texts(bids.reshape(len(rows), -1) + 1, partial(_all_bids_text, players=n))
        keys += [f"P{p} | prizes {a} | {b} | won {c}" for a, b, c in zip(prize_text, bid_text, won_text, strict=True)]
    return keys


def _key(game: Goofspiel, path: list[int], p: int, r: int, kinds: list[tuple[int, int]]) -> str:
    """`GoofspielState.infoset_key` of player p in round r after the moves `path` (one infoset of
    `_keys`, in plain Python: the same parts, written the same way)."""
    if game.points_order == "random":
        prizes = [path[j] for j, (q, _) in enumerate(kinds) if q == CHANCE]
    else:
        prizes = [_fixed_prize(game, j) for j in range(r + 1)]
    # bids[s]: the bids of the finished round s, player after player
    bids = [[path[j] for j, (q, s) in enumerate(kinds) if q >= 0 and s == round_] for round_ in range(r)]
    winners = [row.index(max(row)) if row.count(max(row)) == 1 else -1 for row in bids]
    if game.imp_info:
        bid_text = "my bids " + (",".join(str(row[p] + 1) for row in bids) or "-")
    else:
        bid_text = _all_bids_text([b + 1 for row in bids for b in row], players=game.num_players)
    won_text = ",".join("tie" if w < 0 else f"P{w}" for w in winners) or "-"
    return f"P{p} | prizes {','.join(str(x + 1) for x in prizes)} | {bid_text} | won {won_text}"


def _all_bids_text(row: list[int], players: int) -> str:
    """"bids 1:2 3:1" for the bids (from 1) of finished rounds, `players` numbers per round."""
    rounds = [":".join(map(str, row[s:s + players])) for s in range(0, len(row), players)]
    return "bids " + (" ".join(rounds) or "-")


def _texts(values: np.ndarray, write: Callable[[list[int]], str]) -> list[str]:
    """[write(row) for row in values.tolist()] for the rows of `values` (k, w), small integers
    from -1 on, calling `write` once per distinct row."""
    k, w = values.shape
    base = int(values.max(initial=0)) + 2
    if w == 0 or base ** w >= _CODE_LIMIT:
        distinct, inverse = np.unique(values.reshape(k, w), axis=0, return_inverse=True)
    else:
        code = (values + 1) @ (base ** np.arange(w - 1, -1, -1, dtype=np.int64))
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        distinct = values[first]
    table = [write(row) for row in distinct.tolist()]
    return [table[i] for i in inverse.reshape(-1).tolist()]
