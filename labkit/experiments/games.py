"""The nine benchmark games of the EFR paper's Appendix E, with the rows each table shows.

Morrill et al. (2021) run every EFR variant against every other in nine OpenSpiel games
(Appendix E.1): Leduc hold'em, five versions of imperfect-information goofspiel (``imp_info=True``,
win/loss payoffs), Sheriff, the two-player tiny bridge and tiny Hanabi. labkit compiles Leduc and
goofspiel natively and reads the other three through `labkit.games.from_openspiel`; either way a
game string is compiled once per process (`labkit.experiments.load_game`).

    >>> from labkit.experiments.games import PAPER_GAMES, paper_game
    >>> [g.key for g in PAPER_GAMES][:3]
    ['leduc', 'goofspiel5_2p_descending', 'goofspiel5_2p']
    >>> paper_game("tiny_hanabi").variants
    ('cf', 'cf_in', 'cf_ex+in')

Every game shows the eleven variants of Figure E.5 except tiny Hanabi: each of its players acts
once, at an information set with no predecessor, so a deviation type reduces to its set of action
transformations and only three learners differ (external: CF; internal: CF_IN; both: CF_EX+IN).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from labkit.experiments.results import default_units
from labkit.experiments.tournament import FIGURE_E5_VARIANTS

TINY_HANABI_VARIANTS = ("cf", "cf_in", "cf_ex+in")


def _goofspiel(cards: Any, players: Any, order: Any) -> str:
    return f"goofspiel(num_cards={cards},players={players},points_order={order},imp_info=True)"


@dataclass(frozen=True)
class PaperGame:
    """One benchmark game of Appendix E.

    Attributes
    ----------
    key : str
        Short name; the cached runs are ``labkit/data/efr/<key>_<regime>.json``.
    spec : str
        What `labkit.experiments.load_game` compiles ("openspiel:..." for OpenSpiel's games).
    title : str
        The paper's panel title, e.g. "goofspiel(4, ↓, N = 3)".
    family : str
        "poker", "goofspiel", "sheriff", "bridge" or "hanabi".
    variants : tuple of str
        The rows (and columns) of its tables, in the paper's order.

    Examples
    --------
    >>> game = paper_game("goofspiel4_3p_descending")
    >>> game.title, game.units, game.stem("fixed")
    ('goofspiel(4, ↓, N = 3)', 'win%', 'goofspiel4_3p_descending_fixed')
    """

    key: str
    spec: str
    title: str
    family: str
    variants: tuple = FIGURE_E5_VARIANTS

    @property
    def units(self) -> str:
        """The paper's units: "mbb" (Leduc), "win%" (goofspiel) or "raw".

        Examples
        --------
        >>> [g.units for g in PAPER_GAMES[:2]]
        ['mbb', 'win%']
        """
        return default_units(self.spec)

    @property
    def players(self) -> int:
        """The number of players (compiles the game once per process).

        Examples
        --------
        >>> paper_game("goofspiel4_3p").players
        3
        """
        from labkit.experiments.tournament import load_game
        return load_game(self.spec).num_players

    def stem(self, regime: str) -> str:
        """File stem of the cached run of one regime, e.g. "goofspiel4_3p_descending_fixed".

        Parameters
        ----------
        regime : {"fixed", "simultaneous"}

        Returns
        -------
        str

        Raises
        ------
        ValueError
            For another regime.

        Examples
        --------
        >>> paper_game("leduc").stem("simultaneous")
        'leduc_simultaneous'
        """
        if regime not in ("fixed", "simultaneous"):
            raise ValueError(f"regime must be 'fixed' or 'simultaneous', got {regime!r}")
        return f"{self.key}_{regime}"


# in the order of the paper's Figures E.1-E.6
PAPER_GAMES = (
    PaperGame("leduc", "leduc_poker", "Leduc hold'em (N = 2)", "poker"),
    PaperGame("goofspiel5_2p_descending", _goofspiel(5, 2, "descending"), "goofspiel(5, ↓, N = 2)", "goofspiel"),
    PaperGame("goofspiel5_2p", _goofspiel(5, 2, "ascending"), "goofspiel(5, ↑, N = 2)", "goofspiel"),
    PaperGame("goofspiel4_2p_random", _goofspiel(4, 2, "random"), "goofspiel(4, R, N = 2)", "goofspiel"),
    PaperGame("goofspiel4_3p_descending", _goofspiel(4, 3, "descending"), "goofspiel(4, ↓, N = 3)", "goofspiel"),
    PaperGame("goofspiel4_3p", _goofspiel(4, 3, "ascending"), "goofspiel(4, ↑, N = 3)", "goofspiel"),
    PaperGame("sheriff", "openspiel:sheriff", "Sheriff (N = 2)", "sheriff"),
    PaperGame("tiny_bridge_2p", "openspiel:tiny_bridge_2p", "tiny bridge (N = 2)", "bridge"),
    PaperGame("tiny_hanabi", "openspiel:tiny_hanabi", "tiny Hanabi (N = 2)", "hanabi", TINY_HANABI_VARIANTS),
)
_BY_KEY = {g.key: g for g in PAPER_GAMES}
_BY_SPEC = {g.spec: g for g in PAPER_GAMES}
# OpenSpiel's own names for the three games labkit reads from OpenSpiel
_ALIASES = {"sheriff": "sheriff", "tiny_bridge_2p": "tiny_bridge_2p", "tiny_hanabi": "tiny_hanabi",
            "leduc_poker": "leduc"}


def paper_game(name: Any) -> PaperGame | None:
    """The `PaperGame` named by its key, its OpenSpiel name or its spec string.

    Parameters
    ----------
    name : str
        A key ("goofspiel4_3p_descending"), an OpenSpiel name ("sheriff", "leduc_poker") or a
        goofspiel spec with its parameters in any order.

    Returns
    -------
    PaperGame or None
        None for anything that is not one of the nine games (also for a non-string).

    Examples
    --------
    >>> paper_game("goofspiel(points_order=random,num_cards=4,imp_info=True)").key
    'goofspiel4_2p_random'
    >>> paper_game("kuhn_poker") is None
    True
    """
    if not isinstance(name, str):
        return None
    name = name.strip()
    if name in _BY_KEY:
        return _BY_KEY[name]
    if name in _ALIASES:
        return _BY_KEY[_ALIASES[name]]
    canonical = _canonical_goofspiel(name)
    return _BY_SPEC.get(name) or (_BY_SPEC.get(canonical) if canonical is not None else None)


def _canonical_goofspiel(spec: str) -> str | None:
    """A goofspiel string with its parameters in the registry's order (None if not goofspiel)."""
    from labkit.games import parse_spec
    try:
        name, params = parse_spec(spec.removeprefix("openspiel:"))
    except ValueError:
        return None
    if (name != "goofspiel" or params.get("imp_info") is not True
            or set(params) - {"num_cards", "players", "points_order", "imp_info"}):
        return None
    return _goofspiel(params.get("num_cards"), params.get("players", 2), params.get("points_order"))


def resolve_game(name: str) -> str:
    """The spec to load for a command-line --game.

    Parameters
    ----------
    name : str
        A paper game's key or name, any labkit game string, or "openspiel:<game string>".

    Returns
    -------
    str
        The paper game's spec when `name` names one of the nine, else `name` itself.

    Examples
    --------
    >>> resolve_game("sheriff"), resolve_game("kuhn_poker")
    ('openspiel:sheriff', 'kuhn_poker')
    """
    game = paper_game(name)
    return game.spec if game is not None else name


def paper_variants(game: Any) -> tuple[str, ...]:
    """The rows the paper shows for a game: tiny Hanabi's three, else the eleven of Figure E.5.

    Parameters
    ----------
    game : str or GameTree
        A key, name or spec (a tree gets the eleven).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> paper_variants("tiny_hanabi"), len(paper_variants("leduc_poker"))
    (('cf', 'cf_in', 'cf_ex+in'), 11)
    """
    found = paper_game(game) if isinstance(game, str) else None
    return found.variants if found is not None else FIGURE_E5_VARIANTS


__all__ = ["PaperGame", "PAPER_GAMES", "TINY_HANABI_VARIANTS", "paper_game", "paper_variants", "resolve_game"]
