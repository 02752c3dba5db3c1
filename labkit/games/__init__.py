"""Games: readable definitions compiled into `GameTree` arrays.

    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> kuhn.num_histories, kuhn.num_infosets
    (58, 12)

`load` accepts OpenSpiel's game-string syntax for labkit's native games, the names of the
matrix games below, ``"openspiel:<game string>"`` for an OpenSpiel game, a `MatrixGame`, or any
object written as in `labkit.games.base`. `names` lists the names it knows.
"""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from labkit.games.base import (DEFAULT_MAX_HISTORIES, GameDefinition, GameError, GameState, compile_game,
                               estimate_histories)
from labkit.games.goofspiel import Goofspiel
from labkit.games.kuhn import KuhnPoker
from labkit.games.leduc import LeducPoker
from labkit.games.matrix import (MatrixGame, biased_rock_paper_scissors, climbing_game, preference_game,
                                 prisoners_dilemma, rock_paper_scissors)
from labkit.tree import CHANCE, TERMINAL, GameTree

if TYPE_CHECKING:
    import pyspiel

__all__ = ["load", "from_openspiel", "parse_spec", "GameTree", "GameError", "GameDefinition", "GameState",
           "MatrixGame", "KuhnPoker", "LeducPoker", "Goofspiel", "tree_differences", "rock_paper_scissors",
           "biased_rock_paper_scissors", "climbing_game", "prisoners_dilemma", "preference_game", "compile_game",
           "CHANCE", "TERMINAL", "NATIVE_GAMES", "DEFAULT_MAX_HISTORIES", "estimate_histories", "names",
           "OPENSPIEL_GAMES"]

#: A game as `load` takes it: a game string, a compiled tree, a matrix game or a definition.
GameLike = str | GameTree | MatrixGame | GameDefinition

MATRIX_GAMES: dict[str, Any] = {
    "rock_paper_scissors": rock_paper_scissors,
    "biased_rock_paper_scissors": biased_rock_paper_scissors,
    "climbing_game": climbing_game,
    "prisoners_dilemma": prisoners_dilemma,
    "preference_game": preference_game,
}


NATIVE_GAMES: dict[str, Any] = {"kuhn_poker": KuhnPoker, "leduc_poker": LeducPoker, "goofspiel": Goofspiel}

# OpenSpiel games that labkit compiles and has checked position by position against OpenSpiel
# (tests/test_openspiel_crosscheck.py, tests/test_efr_games.py); any other OpenSpiel game may
# work too through `from_openspiel`, within the size limit.
OPENSPIEL_GAMES = ("blotto", "dark_hex", "liars_dice", "sheriff", "tiny_bridge_2p", "tiny_hanabi")
_KINDS = ("native", "matrix", "openspiel")


def names(kind: str | None = None) -> list[str]:
    """The game names `load` knows, sorted: like OpenSpiel's ``pyspiel.registered_names()``.

    Parameters
    ----------
    kind : {None, "native", "matrix", "openspiel"}
        None (default) lists all three groups: "native", the extensive-form games labkit defines
        itself (Kuhn, Leduc, goofspiel); "matrix", the one-shot games; "openspiel", the OpenSpiel
        games labkit has checked against OpenSpiel, spelled as `load` takes them
        (``"openspiel:sheriff"``; they need ``pip install open_spiel``).

    Returns
    -------
    list of str
        Names, each usable as the name of a game string. Parameters follow in parentheses,
        as in OpenSpiel (``"kuhn_poker(players=3)"``); goofspiel needs ``num_cards`` of at most
        5 (OpenSpiel's default of 13 cards is far beyond what a whole tree can hold), and a
        game above ``max_histories`` is refused before it is compiled.

    Raises
    ------
    ValueError
        If `kind` is not one of the four values.

    Examples
    --------
    >>> import labkit as lk
    >>> lk.games.names("native")
    ['goofspiel', 'kuhn_poker', 'leduc_poker']
    >>> "openspiel:sheriff" in lk.games.names()
    True
    """
    if kind is not None and kind not in _KINDS:
        raise ValueError(f"kind must be None or one of {', '.join(map(repr, _KINDS))}, got {kind!r}")
    groups = {"native": list(NATIVE_GAMES), "matrix": list(MATRIX_GAMES),
              "openspiel": [f"openspiel:{name}" for name in OPENSPIEL_GAMES]}
    chosen = _KINDS if kind is None else (kind,)
    return sorted(name for group in chosen for name in groups[group])

_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$")


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split an OpenSpiel-style game string into (name, {parameter: value}).

    Values are read as booleans (``True``/``False``, any case), integers, floats, or else kept as
    strings, as OpenSpiel reads them.

    Parameters
    ----------
    spec : str
        ``"name"`` or ``"name(key=value,key=value,...)"``.

    Returns
    -------
    (str, dict)
        The game's name and its parameters.

    Raises
    ------
    ValueError
        If the string is not of that form.

    Examples
    --------
    >>> parse_spec("goofspiel(num_cards=4,players=3,imp_info=True)")
    ('goofspiel', {'num_cards': 4, 'players': 3, 'imp_info': True})
    >>> parse_spec("kuhn_poker")
    ('kuhn_poker', {})
    """
    match = _SPEC.match(spec)
    if not match:
        raise ValueError(f"cannot read the game string {spec!r}; expected e.g. 'leduc_poker(players=3)'")
    name, body = match.group(1), match.group(2)
    params: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in (body or "").split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"in {spec!r}: parameter {item!r} is not of the form name=value")
        params[key.strip()] = _parse_value(value.strip())
    return name, params


def _parse_value(text: str) -> bool | int | float | str:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


@functools.lru_cache(maxsize=32)
def _load_spec(spec: str, max_histories: int) -> GameTree:
    if spec.strip().startswith("openspiel:"):
        return from_openspiel(spec.strip()[len("openspiel:"):], max_histories)
    name, params = parse_spec(spec)
    if name in NATIVE_GAMES:
        try:
            definition = NATIVE_GAMES[name](**params)
        except TypeError as err:
            raise ValueError(f"{spec!r}: {err}") from None
        return compile_game(definition, max_histories)
    if name in MATRIX_GAMES:
        return compile_game(MATRIX_GAMES[name](**params).as_extensive(), max_histories)
    known = sorted(NATIVE_GAMES) + sorted(MATRIX_GAMES)
    raise ValueError(f"unknown game {name!r}; labkit's own games are {', '.join(known)} "
                     "(and 'openspiel:<game string>' loads any OpenSpiel game; see labkit.games.names())")


def load(spec: GameLike, max_histories: int = DEFAULT_MAX_HISTORIES) -> GameTree:
    """Compile a game into a `GameTree`, the flat arrays every labkit algorithm reads.

    Parameters
    ----------
    spec : str, MatrixGame, GameTree or game definition
        "kuhn_poker", "kuhn_poker(players=3)", "leduc_poker", "leduc_poker(players=3)",
        "goofspiel(num_cards=4,players=2,points_order=descending,imp_info=True)", a matrix
        game name ("biased_rock_paper_scissors", "climbing_game", ...), an OpenSpiel game as
        "openspiel:<game string>" (e.g. "openspiel:sheriff", see `from_openspiel`), a
        `MatrixGame`, or a definition object (see `labkit.games.base`). `names()` lists the
        names. Strings are compiled once and cached.
    max_histories : int
        The largest tree to compile (default DEFAULT_MAX_HISTORIES, 20 million: sized for a
        24 GB machine). The size is counted from the game's parameters (or estimated) before
        compiling, and a bigger game is refused with a GameError naming both numbers.

    Returns
    -------
    GameTree
        A `GameTree` passed in is returned as it is; a string gives the same cached object
        every time.

    Raises
    ------
    ValueError
        For an unknown game name or a parameter the game does not take.
    GameError
        (a ValueError) For a game above `max_histories` or one labkit cannot compile.
    TypeError
        For an argument of another type, or a `max_histories` that is not a positive integer.

    Examples
    --------
    >>> import labkit as lk
    >>> lk.games.load("leduc_poker")
    GameTree('leduc_poker': 2 players, 9457 histories, 936 infosets, 3 distinct actions)
    >>> lk.games.load("kuhn_poker") is lk.games.load("kuhn_poker")
    True
    >>> lk.games.load("biased_rock_paper_scissors").infoset_keys
    ['row', 'column']
    """
    if isinstance(spec, GameTree):
        return spec
    if isinstance(spec, str):
        if isinstance(max_histories, bool) or not isinstance(max_histories, (int, np.integer)) or max_histories < 1:
            raise TypeError(f"max_histories must be a positive integer, got {max_histories!r}")
        return _load_spec(spec, int(max_histories))
    if isinstance(spec, MatrixGame):
        return compile_game(spec.as_extensive(), max_histories)
    if hasattr(spec, "initial_state") and hasattr(spec, "num_players"):
        return compile_game(spec, max_histories)
    raise TypeError(f"cannot load a game from {type(spec).__name__} {spec!r}; pass a game string "
                    "(e.g. 'kuhn_poker'), a MatrixGame or a game definition")


def tree_differences(native: GameTree, reference: GameTree) -> list[str]:
    """Readable differences between two compiled trees; see
    `labkit.games.openspiel_adapter.tree_differences`.

    Parameters
    ----------
    native, reference : GameTree

    Returns
    -------
    list of str
        One line per difference; empty when the trees are the same game.

    Examples
    --------
    >>> import labkit as lk
    >>> tree_differences(lk.games.load("kuhn_poker"), lk.games.compile_game(lk.games.KuhnPoker()))
    []
    >>> tree_differences(lk.games.load("kuhn_poker"), lk.games.load("leduc_poker"))
    ['kuhn_poker: 58 histories, leduc_poker: 9457']
    """
    from labkit.games.openspiel_adapter import tree_differences as differences
    return differences(native, reference)


def from_openspiel(spec_or_game: str | pyspiel.Game, max_histories: int = DEFAULT_MAX_HISTORIES) -> GameTree:
    """Compile an OpenSpiel game (a game string or a pyspiel.Game) into labkit's tree.

    Information sets are (player, information state string) pairs; their keys are OpenSpiel's
    strings (with " (player p)" appended where two players' strings coincide). Simultaneous-move
    games are made turn-based first. Before compiling, the tree's size is estimated from random
    playouts and a tree above `max_histories` (see `load`) is refused. Needs
    ``pip install open_spiel``; ``load("openspiel:<game string>")`` calls this.

    Parameters
    ----------
    spec_or_game : str or pyspiel.Game
        E.g. ``"kuhn_poker"`` or ``"liars_dice(numdice=1)"``.
    max_histories : int
        The largest tree to compile.

    Returns
    -------
    GameTree

    Raises
    ------
    ImportError
        If OpenSpiel is not installed.
    ValueError
        If OpenSpiel cannot load the game (its message is quoted), or it is too large (GameError).

    Examples
    --------
    >>> game = from_openspiel("kuhn_poker")
    >>> game.num_histories, game.infoset_keys[:3]
    (58, ['0', '1', '2'])
    """
    from labkit.games.openspiel_adapter import OpenSpielDefinition
    return compile_game(OpenSpielDefinition(spec_or_game), max_histories)
