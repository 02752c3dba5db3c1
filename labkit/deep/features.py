"""Information-state features: one fixed-length 0/1 vector per information set.

Every learner of `labkit.deep` reads the same encoding, built from the readable infoset keys of
labkit's games (numpy only; no JAX needed). Each block below is a one-hot group, so two keys that
differ anywhere differ in some coordinate: the encoding is injective (tests/test_deep_features.py
checks it on every game). "Slots" are positions in an action history; a slot that has not happened
yet is all zeros.

kuhn_poker (n players, n + 1 cards), key "Q|pb"
    own card (n + 1) | for each of the L slots of the betting history: pass, bet (2 L)
    L is the longest history at a decision (2 for two players), so 2 players give 3 + 4 = 7 features.
leduc_poker (n players, 2 (n + 1) cards), key "Ks|Jh|cr|c"
    private card (num_cards) | public card (num_cards; zeros before the flop) |
    first-round slots: fold, call, raise (3 L1) | second-round slots (3 L2)
    Cards are one-hot over the card ids 2 rank + suit (suits are part of the key, so of the
    features). Two players: 6 + 6 + 3 * 4 + 3 * 3 = 33 features (the first round's whole history,
    up to 4 actions as in "crrc", is part of the keys of the second round).
goofspiel (N cards, n players), key "P0 | prizes 4,3 | my bids 1 | won P1"
    acting player (n) | for each round r < N: prize turned up (N) | for each finished round:
    the bids (N for one's own with imp_info=True, n N for everyone's otherwise) and the winner
    (n players + a tie)
onehot (any game)
    the infoset's index (num_infosets): a lookup table, which generalizes nothing; the fallback
    for games without a structured encoding (matrix games: one infoset per player).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labkit.games import load
from labkit.games.goofspiel import Goofspiel
from labkit.games.kuhn import KuhnPoker
from labkit.games.leduc import RANK_NAMES, SUIT_NAMES, LeducPoker

ENCODINGS = ("auto", "kuhn", "leduc", "goofspiel", "onehot")


@dataclass(eq=False)
class InfosetFeatures:
    """The feature vectors of every infoset of a game.

    Attributes
    ----------
    game : GameTree
    encoding : str
        One of ``ENCODINGS`` (never "auto": the encoding that was chosen).
    names : list of str
        A readable name per feature, e.g. "card=Q" or "slot 1=bet".
    matrix : (num_infosets, num_features) float32 array
        Row I is the encoding of ``game.infoset_keys[I]``.

    Examples
    --------
    >>> features = infoset_features("kuhn_poker")
    >>> features
    InfosetFeatures(kuhn_poker, encoding='kuhn', 12 infosets x 7 features)
    >>> features.names
    ['card=J', 'card=Q', 'card=K', 'slot 1=pass', 'slot 1=bet', 'slot 2=pass', 'slot 2=bet']
    """

    game: Any
    encoding: str
    names: list
    matrix: np.ndarray = field(repr=False)
    _encoder: Callable[[str], np.ndarray] | None = field(repr=False, default=None)

    @property
    def size(self) -> int:
        """The number of features.

        Examples
        --------
        >>> infoset_features("leduc_poker").size
        33
        """
        return len(self.names)

    def encode(self, key: str) -> np.ndarray:
        """The feature vector of one infoset key.

        Parameters
        ----------
        key : str
            An infoset key of the game.

        Returns
        -------
        (num_features,) float32 array

        Raises
        ------
        KeyError
            If the game has no infoset `key`.

        Examples
        --------
        >>> infoset_features("kuhn_poker").encode("Q|pb").tolist()
        [0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0]
        """
        if self.encoding == "onehot" or self._encoder is None:
            return self.matrix[self.game.infoset_index(key)]
        return self._encoder(key)

    def __repr__(self) -> str:
        return (f"InfosetFeatures({self.game.name}, encoding={self.encoding!r}, "
                f"{self.game.num_infosets} infosets x {self.size} features)")


def infoset_features(game: Any, encoding: str = "auto") -> InfosetFeatures:
    """Encode every infoset of `game` as a 0/1 vector (see the module docstring for the layout).

    Parameters
    ----------
    game : str or GameTree
    encoding : {"auto", "kuhn", "leduc", "goofspiel", "onehot"}
        "auto" picks the game's own encoding (Kuhn, Leduc, goofspiel) and "onehot" otherwise.

    Returns
    -------
    InfosetFeatures
        Cached on the game, so every learner shares one array.

    Raises
    ------
    ValueError
        For an unknown encoding, or one made for another kind of game.

    Examples
    --------
    >>> infoset_features("goofspiel(num_cards=3,imp_info=True)").size
    29
    >>> infoset_features("rock_paper_scissors").names
    ['infoset=row', 'infoset=column']
    >>> infoset_features("kuhn_poker", encoding="leduc")
    Traceback (most recent call last):
      ...
    ValueError: encoding 'leduc' is for LeducPoker games, not kuhn_poker; use encoding='auto' or 'onehot'
    """
    game = load(game)
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
    if encoding == "auto":
        encoding = _native_encoding(game.definition)
    cache = game.__dict__.setdefault("_deep_features", {})
    if encoding not in cache:
        cache[encoding] = _build(game, encoding)
    return cache[encoding]


def _native_encoding(definition: Any) -> str:
    for kind, name in ((KuhnPoker, "kuhn"), (LeducPoker, "leduc"), (Goofspiel, "goofspiel")):
        if isinstance(definition, kind):
            return name
    return "onehot"


def _build(game: Any, encoding: str) -> InfosetFeatures:
    if encoding == "onehot":
        names = [f"infoset={key}" for key in game.infoset_keys]
        return InfosetFeatures(game, encoding, names, np.eye(game.num_infosets, dtype=np.float32))
    expected = {"kuhn": KuhnPoker, "leduc": LeducPoker, "goofspiel": Goofspiel}[encoding]
    if not isinstance(game.definition, expected):
        raise ValueError(f"encoding {encoding!r} is for {expected.__name__} games, not {game.name}; "
                         "use encoding='auto' or 'onehot'")
    names, encoder = {"kuhn": _kuhn, "leduc": _leduc, "goofspiel": _goofspiel}[encoding](game)
    matrix = np.stack([encoder(key) for key in game.infoset_keys]).astype(np.float32)
    return InfosetFeatures(game, encoding, names, matrix, encoder)


class _Layout:
    """Feature names and offsets of consecutive one-hot groups."""

    def __init__(self):
        self.names, self.offsets = [], {}

    def group(self, name, values):
        self.offsets[name] = len(self.names)
        self.names += [f"{name}={v}" for v in values]

    def vector(self):
        return np.zeros(len(self.names), dtype=np.float32)


def _checked(game, key):
    game.infoset_index(key)               # KeyError naming close keys if `key` is not the game's
    return key


def _history_slots(layout, prefix, histories, letters, names):
    slots = max((len(h) for h in histories), default=0)
    for s in range(slots):
        layout.group(f"{prefix}slot {s + 1}", names)
    lookup = {c: k for k, c in enumerate(letters)}

    def fill(vector, history):
        for s, letter in enumerate(history):
            vector[layout.offsets[f"{prefix}slot {s + 1}"] + lookup[letter]] = 1.0
    return fill


def _kuhn(game):
    definition, layout = game.definition, _Layout()
    cards = [definition.card_name(c) for c in range(definition.num_cards)]
    layout.group("card", cards)
    histories = [key.split("|")[1] for key in game.infoset_keys]
    fill = _history_slots(layout, "", histories, "pb", ["pass", "bet"])

    def encode(key):
        card, history = _checked(game, key).split("|")
        vector = layout.vector()
        vector[layout.offsets["card"] + cards.index(card)] = 1.0
        fill(vector, history)
        return vector
    return layout.names, encode


def _leduc_card(name):
    return 2 * RANK_NAMES.index(name[0]) + SUIT_NAMES.index(name[1])


def _leduc(game):
    definition, layout = game.definition, _Layout()
    cards = [definition.card_name(c) for c in range(definition.num_cards)]
    layout.group("private", cards)
    layout.group("public", cards)
    parts = [key.split("|") for key in game.infoset_keys]
    actions = ["fold", "call", "raise"]
    first = _history_slots(layout, "round 1 ", [p[2] for p in parts], "fcr", actions)
    second = _history_slots(layout, "round 2 ", [p[3] for p in parts], "fcr", actions)

    def encode(key):
        private, public, round_1, round_2 = _checked(game, key).split("|")
        vector = layout.vector()
        vector[layout.offsets["private"] + _leduc_card(private)] = 1.0
        if public:
            vector[layout.offsets["public"] + _leduc_card(public)] = 1.0
        first(vector, round_1)
        second(vector, round_2)
        return vector
    return layout.names, encode


def _goofspiel(game):
    definition, layout = game.definition, _Layout()
    N, n, own_only = definition.num_cards, definition.num_players, definition.imp_info
    cards = [str(c + 1) for c in range(N)]
    layout.group("player", [f"P{p}" for p in range(n)])
    for r in range(N):
        layout.group(f"round {r + 1} prize", cards)
    for r in range(N):
        if own_only:
            layout.group(f"round {r + 1} my bid", cards)
        else:
            for p in range(n):
                layout.group(f"round {r + 1} P{p} bid", cards)
        layout.group(f"round {r + 1} won", [f"P{p}" for p in range(n)] + ["tie"])
    winners = {f"P{p}": p for p in range(n)} | {"tie": n}

    def encode(key):
        player, prizes, bids, won = (part.strip() for part in _checked(game, key).split("|"))
        vector = layout.vector()
        vector[layout.offsets["player"] + int(player[1:])] = 1.0
        for r, prize in enumerate(_items(prizes.removeprefix("prizes").strip(), ",")):
            vector[layout.offsets[f"round {r + 1} prize"] + int(prize) - 1] = 1.0
        rounds = _items(bids.split(" ", 2)[-1] if own_only else bids.removeprefix("bids").strip(),
                        "," if own_only else " ")
        for r, bid in enumerate(rounds):
            if own_only:
                vector[layout.offsets[f"round {r + 1} my bid"] + int(bid) - 1] = 1.0
            else:
                for p, b in enumerate(bid.split(":")):
                    vector[layout.offsets[f"round {r + 1} P{p} bid"] + int(b) - 1] = 1.0
        for r, winner in enumerate(_items(won.removeprefix("won").strip(), ",")):
            vector[layout.offsets[f"round {r + 1} won"] + winners[winner]] = 1.0
        return vector
    return layout.names, encode


def _items(text, separator):
    """The entries of a list written with `separator`; "-" or "" is the empty list."""
    return [] if text in ("", "-") else text.split(separator)
