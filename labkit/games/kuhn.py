"""Kuhn poker (Kuhn, 1950) with OpenSpiel's rules, for 2 or more players.

The deck has n + 1 cards (J < Q < K for two players); every player antes 1 and gets one
card, dealt by chance to players 0, 1, ... in turn. Actions: 0 = pass (check or fold),
1 = bet (bet or call). Until someone bets, each player in turn passes or bets; after a
bet, every other player, in turn, calls or folds once. The highest card among the players
still in takes the pot.

An information set is the player's card and the betting so far, e.g. ``"Q|pb"`` (queen; pass,
then bet).
"""
from __future__ import annotations

from labkit.tree import CHANCE, TERMINAL

PASS, BET = 0, 1
CARD_NAMES = "JQKA"


class KuhnPoker:
    """Kuhn poker as a game definition (see `labkit.games.base`).

    Load it with ``labkit.games.load("kuhn_poker")`` or ``"kuhn_poker(players=3)"``.

    Parameters
    ----------
    players : int
        The number of players n >= 2; the deck has n + 1 cards.

    Raises
    ------
    ValueError
        If `players` is not an integer >= 2.

    References
    ----------
    H. W. Kuhn (1950), "A simplified two-person poker", Contributions to the Theory of Games 1.

    Examples
    --------
    >>> game = KuhnPoker()
    >>> game.name, game.num_players, game.num_cards
    ('kuhn_poker', 2, 3)
    >>> KuhnPoker(players=3).name
    'kuhn_poker(players=3)'
    """

    def __init__(self, players: int = 2):
        if not isinstance(players, int) or isinstance(players, bool) or players < 2:
            raise ValueError(f"kuhn_poker needs players >= 2, got {players!r}")
        self.num_players = players
        self.num_cards = players + 1
        self.num_distinct_actions = 2
        self.name = "kuhn_poker" if players == 2 else f"kuhn_poker(players={players})"

    def count_histories(self, limit: int | None = None) -> int:
        """Number of histories, from one deal's betting tree (the cards never change who may bet).

        Parameters
        ----------
        limit : int, optional
            Stop counting once the count passes this (then the result is some number above it).

        Returns
        -------
        int

        Examples
        --------
        >>> KuhnPoker().count_histories()
        58
        """
        from labkit.games.base import count_histories_chance_blind
        return count_histories_chance_blind(self, limit)

    def initial_state(self) -> KuhnState:
        """The root: no card dealt yet, chance to move.

        Returns
        -------
        KuhnState

        Examples
        --------
        >>> KuhnPoker().initial_state().current_player()
        -1
        """
        return KuhnState(self, (), "")

    def action_name(self, action: int) -> str:
        """ "pass" for 0, "bet" for 1.

        Parameters
        ----------
        action : int

        Returns
        -------
        str

        Examples
        --------
        >>> KuhnPoker().action_name(1)
        'bet'
        """
        return ("pass", "bet")[action]

    def card_name(self, card: int) -> str:
        """The letter of a card (J, Q, K, A), or its number in decks of more than four cards.

        Parameters
        ----------
        card : int
            0 is the lowest card.

        Returns
        -------
        str

        Examples
        --------
        >>> KuhnPoker().card_name(2)
        'K'
        """
        return CARD_NAMES[card] if self.num_cards <= len(CARD_NAMES) else str(card)


class KuhnState:
    """One history of Kuhn poker: the cards dealt and the betting string ("p" pass, "b" bet).

    Parameters
    ----------
    game : KuhnPoker
    cards : tuple of int
        The cards dealt so far, player 0's first.
    history : str
        The betting so far, one letter per action.

    Examples
    --------
    >>> state = KuhnPoker().initial_state().child(2).child(0)     # K to player 0, J to player 1
    >>> state.infoset_key(), state.legal_actions()
    ('K|', [0, 1])
    """

    def __init__(self, game: KuhnPoker, cards: tuple[int, ...], history: str):
        self.game, self.cards, self.history = game, cards, history     # history: string of "p"/"b"

    def current_player(self) -> int:
        """The player to act, CHANCE (-1) while cards are dealt, or TERMINAL (-4).

        Returns
        -------
        int

        Examples
        --------
        >>> KuhnPoker().initial_state().child(2).child(0).current_player()
        0
        """
        n = self.game.num_players
        if len(self.cards) < n:
            return CHANCE
        if self._is_over():
            return TERMINAL
        return len(self.history) % n

    def _first_bet(self) -> int:
        return self.history.find("b")

    def _is_over(self) -> bool:
        n, first = self.game.num_players, self._first_bet()
        return len(self.history) == n if first < 0 else len(self.history) == first + n

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The cards not yet dealt, each with equal probability.

        Returns
        -------
        list of (int, float)

        Examples
        --------
        >>> KuhnPoker().initial_state().child(1).chance_outcomes()
        [(0, 0.5), (2, 0.5)]
        """
        left = [c for c in range(self.game.num_cards) if c not in self.cards]
        return [(c, 1.0 / len(left)) for c in left]

    def legal_actions(self) -> list[int]:
        """Both actions, pass (0) and bet (1), at every decision.

        Returns
        -------
        list of int

        Examples
        --------
        >>> KuhnPoker().initial_state().child(0).child(1).legal_actions()
        [0, 1]
        """
        return [PASS, BET]

    def child(self, action: int) -> KuhnState:
        """The history after `action` (a card at a chance node, else pass or bet).

        Parameters
        ----------
        action : int

        Returns
        -------
        KuhnState
            A new state; this one is unchanged.

        Examples
        --------
        >>> KuhnPoker().initial_state().child(2).child(0).child(1).history
        'b'
        """
        if self.current_player() == CHANCE:
            return KuhnState(self.game, self.cards + (action,), self.history)
        return KuhnState(self.game, self.cards, self.history + "pb"[action])

    def returns(self) -> list[float]:
        """Every player's winnings at a terminal history: the pot to the best card still in,
        minus each player's stake.

        Returns
        -------
        list of float

        Examples
        --------
        >>> state = KuhnPoker().initial_state().child(2).child(0)
        >>> state.child(1).child(0).returns()          # K bets, J folds
        [1.0, -1.0]
        """
        n, first = self.game.num_players, self._first_bet()
        if first < 0:
            stake = [1.0] * n
            contenders: range | list[int] = range(n)
        else:
            # after the first bet, player (first + k) % n answered with history[first + k]
            stake = [1.0] * n
            for k in range(n):
                p = (first + k) % n
                if self.history[first + k] == "b":
                    stake[p] = 2.0
            contenders = [p for p in range(n) if stake[p] == 2.0]
        winner = max(contenders, key=lambda p: self.cards[p])
        pot = sum(stake)
        return [pot - stake[p] if p == winner else -stake[p] for p in range(n)]

    def infoset_key(self) -> str:
        """What the acting player knows: its card and the betting, e.g. "Q|pb".

        Returns
        -------
        str

        Examples
        --------
        >>> KuhnPoker().initial_state().child(1).child(0).child(0).infoset_key()   # player 1 holds J
        'J|p'
        """
        p = self.current_player()
        return f"{self.game.card_name(self.cards[p])}|{self.history}"
