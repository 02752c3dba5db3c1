"""Leduc hold'em (Southey et al., 2005) with OpenSpiel's rules, for 2 or more players.

The deck has two suits of n + 1 ranks (J, Q, K for two players); card c has rank c // 2.
Every player antes 1 and gets one private card. Two betting rounds; in each, at most two
raises, of 2 chips in the first round and 4 in the second. Actions: 0 = fold (only when
facing a bet), 1 = call (or check), 2 = raise. A public card is dealt between the rounds.
At the showdown a private card that pairs the public card wins, otherwise the higher rank;
equal hands split the pot.

An information set is the player's card, the public card (empty before it is dealt) and the
betting of each round, e.g. ``"Ks|Qh|rc|c"`` (king of spades, queen of hearts on the board;
raise, call in the first round; a check in the second).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from labkit.tree import CHANCE, TERMINAL

if TYPE_CHECKING:
    from labkit.tree import GameTree

FOLD, CALL, RAISE = 0, 1, 2
RANK_NAMES = "JQKAT98765"
SUIT_NAMES = "sh"
BET_SIZE = (2, 4)
MAX_RAISES = 2


class LeducPoker:
    """Leduc hold'em as a game definition (see `labkit.games.base`).

    Load it with ``labkit.games.load("leduc_poker")`` or ``"leduc_poker(players=3)"``.

    Parameters
    ----------
    players : int
        The number of players n >= 2; the deck has two suits of n + 1 ranks.

    Raises
    ------
    ValueError
        If `players` is not an integer >= 2.

    References
    ----------
    F. Southey, M. Bowling, B. Larson, C. Piccione, N. Burch, D. Billings and C. Rayner (2005),
    "Bayes' bluff: opponent modelling in poker", UAI.

    Examples
    --------
    >>> game = LeducPoker()
    >>> game.name, game.num_cards, game.num_distinct_actions
    ('leduc_poker', 6, 3)
    """

    def __init__(self, players: int = 2):
        if not isinstance(players, int) or isinstance(players, bool) or players < 2:
            raise ValueError(f"leduc_poker needs players >= 2, got {players!r}")
        self.num_players = players
        self.num_cards = 2 * (players + 1)
        self.num_distinct_actions = 3
        self.name = "leduc_poker" if players == 2 else f"leduc_poker(players={players})"

    def count_histories(self, limit: int | None = None) -> int:
        """Number of histories, from one deal's betting tree (the cards never change who may bet).

        Parameters
        ----------
        limit : int, optional
            Stop counting once the count passes this (then the result is some number above it),
            so a game far too large to compile is refused at once.

        Returns
        -------
        int

        Examples
        --------
        >>> LeducPoker().count_histories()
        9457
        >>> LeducPoker(players=9).count_histories(limit=10**6) > 10**6
        True
        """
        from labkit.games.base import count_histories_chance_blind
        return count_histories_chance_blind(self, limit)

    def initial_state(self) -> LeducState:
        """The root: no card dealt, every player has put its ante of 1 in the pot.

        Returns
        -------
        LeducState

        Examples
        --------
        >>> LeducPoker().initial_state().stake
        (1, 1)
        """
        n = self.num_players
        return LeducState(self, private=(), public=None, rounds=("", ""), round=0,
                          stake=(1,) * n, folded=(False,) * n, to_act=0, raises=0, calls=0)

    def action_name(self, action: int) -> str:
        """ "fold", "call" or "raise" for 0, 1, 2.

        Parameters
        ----------
        action : int

        Returns
        -------
        str

        Examples
        --------
        >>> LeducPoker().action_name(2)
        'raise'
        """
        return ("fold", "call", "raise")[action]

    @staticmethod
    def card_name(card: int) -> str:
        """Rank then suit, e.g. "Ks"; card c has rank c // 2 and suit c % 2 (ranks past the
        tenth are written as numbers).

        Parameters
        ----------
        card : int

        Returns
        -------
        str

        Examples
        --------
        >>> LeducPoker.card_name(5)
        'Kh'
        """
        rank = card // 2
        return (RANK_NAMES[rank] if rank < len(RANK_NAMES) else str(rank)) + SUIT_NAMES[card % 2]

    # -- compiling by deals (labkit.games.deals): the same tree as the history-by-history walk
    def compile_by_deals(self) -> GameTree:
        """The GameTree, from one betting tree expanded over the deals (`labkit.games.deals`).

        Returns
        -------
        GameTree
            The same tree as `labkit.games.base.compile_game` with ``by_deals=False``, array
            for array.

        Examples
        --------
        >>> LeducPoker().compile_by_deals().num_infosets
        936
        """
        from labkit.games.deals import compile_leduc
        return compile_leduc(self)

    def betting_view(self, state: LeducState) -> tuple[int, tuple[str, str]]:
        """What an infoset key says besides the cards: the acting player and the betting.

        Parameters
        ----------
        state : LeducState

        Returns
        -------
        (int, (str, str))
            The player to act and the betting strings of both rounds.

        Examples
        --------
        >>> game = LeducPoker()
        >>> game.betting_view(game.initial_state().child(0).child(1).child(2))
        (1, ('r', ''))
        """
        return state.current_player(), state.rounds

    def visible_cards(self, players: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """The cards each acting player sees, for many deals at once.

        Parameters
        ----------
        players : (m,) int array
            The acting player of each deal.
        cards : (m, n) or (m, n + 1) int array
            The dealt cards in dealing order (private cards, then the public card if dealt).

        Returns
        -------
        (m, 2) int array
            The acting player's private card and the public card (-1: not dealt).

        Examples
        --------
        >>> import numpy as np
        >>> LeducPoker().visible_cards(np.array([1]), np.array([[0, 3, 5]]))
        array([[3, 5]])
        """
        n = self.num_players
        public = cards[:, n] if cards.shape[1] > n else np.full(len(cards), -1)
        return np.stack([cards[np.arange(len(cards)), players], public], axis=1)

    def deal_infoset_key(self, state: LeducState, cards: list[int]) -> str:
        """`LeducState.infoset_key` of the betting state `state` with the dealt cards `cards`.

        Parameters
        ----------
        state : LeducState
            A decision history (its own cards are ignored).
        cards : list of int
            The dealt cards, private cards first; -1 where the public card is not dealt.

        Returns
        -------
        str

        Examples
        --------
        >>> game = LeducPoker()
        >>> game.deal_infoset_key(game.initial_state().child(0).child(1), [4, 2, -1])
        'Ks|||'
        """
        p = state.current_player()
        public = "" if len(cards) <= self.num_players or cards[self.num_players] < 0 \
            else self.card_name(cards[self.num_players])
        return f"{self.card_name(cards[p])}|{public}|{state.rounds[0]}|{state.rounds[1]}"

    def deal_returns(self, state: LeducState, cards: np.ndarray) -> np.ndarray:
        """`LeducState.returns` of the betting outcome `state`, for every deal (row) of `cards`.

        The same float operations as `returns`: the pot over the number of winners (an exact
        int / int division), minus each player's stake.

        Parameters
        ----------
        state : LeducState
            A terminal history (its own cards are ignored).
        cards : (m, n + 1) int array
            One deal per row: the private cards, then the public card.

        Returns
        -------
        (m, n) float array

        Examples
        --------
        >>> import numpy as np
        >>> game = LeducPoker()
        >>> state = game.initial_state().child(0).child(1)
        >>> for a in (1, 1, 2, 2, 1):          # check, check; public card 2; raise, call
        ...     state = state.child(a)
        >>> game.deal_returns(state, np.array([[0, 1, 2], [0, 3, 2]]))    # a split, then a loss
        array([[ 0.,  0.],
               [-5.,  5.]])
        """
        n = self.num_players
        stake = np.array(state.stake)
        pot = int(stake.sum())
        contender = np.tile(~np.array(state.folded), (len(cards), 1))
        if contender[0].sum() > 1:
            rank, board = cards[:, :n] // 2, cards[:, n:n + 1] // 2
            strength = np.where(contender, (rank == board) * 100 + rank, -1)   # a pair beats any rank
            contender = strength == strength.max(axis=1, keepdims=True)
        share = pot / contender.sum(axis=1, keepdims=True)
        return np.where(contender, share, 0.0) - stake


class LeducState:
    """One history of Leduc hold'em.

    Parameters
    ----------
    game : LeducPoker
    private : tuple of int
        The private cards dealt so far, player 0's first.
    public : int or None
        The public card, None before it is dealt.
    rounds : (str, str)
        The betting of each round, one letter per action ("f", "c", "r").
    round : int
        0 or 1 while betting, 2 once the showdown is reached.
    stake : tuple of int
        What each player has put in the pot.
    folded : tuple of bool
    to_act : int
        The next player to act in the round.
    raises, calls : int
        Raises in the round so far; calls since the last raise.

    Examples
    --------
    >>> state = LeducPoker().initial_state().child(4).child(0).child(2)     # Ks and Js dealt; raise
    >>> state.stake, state.infoset_key()
    ((3, 1), 'Js||r|')
    """

    def __init__(self, game: LeducPoker, private: tuple[int, ...], public: int | None, rounds: tuple[str, str],
                 round: int, stake: tuple[int, ...], folded: tuple[bool, ...], to_act: int, raises: int,
                 calls: int):
        self.game = game
        self.private, self.public, self.rounds, self.round = private, public, rounds, round
        self.stake, self.folded, self.to_act, self.raises, self.calls = stake, folded, to_act, raises, calls

    # ------------------------------------------------------------------ structure
    def _active(self) -> int:
        return sum(not f for f in self.folded)

    def current_player(self) -> int:
        """The player to act, CHANCE (-1) while a card is dealt, or TERMINAL (-4).

        Returns
        -------
        int

        Examples
        --------
        >>> LeducPoker().initial_state().child(4).child(0).current_player()
        0
        """
        n = self.game.num_players
        if len(self.private) < n:
            return CHANCE
        if self._active() == 1 or self.round == 2:
            return TERMINAL
        if self.round == 1 and self.public is None:
            return CHANCE
        return self.to_act

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The cards not yet dealt, each with equal probability.

        Returns
        -------
        list of (int, float)

        Examples
        --------
        >>> len(LeducPoker().initial_state().child(4).chance_outcomes())
        5
        """
        used = set(self.private) | ({self.public} if self.public is not None else set())
        left = [c for c in range(self.game.num_cards) if c not in used]
        return [(c, 1.0 / len(left)) for c in left]

    def legal_actions(self) -> list[int]:
        """Fold (only when facing a bet), call, and raise (while fewer than two raises were made
        in the round).

        Returns
        -------
        list of int

        Examples
        --------
        >>> state = LeducPoker().initial_state().child(4).child(0)
        >>> state.legal_actions(), state.child(2).legal_actions()
        ([1, 2], [0, 1, 2])
        """
        actions = [FOLD] if max(self.stake) > self.stake[self.to_act] else []
        actions.append(CALL)
        if self.raises < MAX_RAISES:
            actions.append(RAISE)
        return actions

    def _next_active(self, p: int) -> int:
        n = self.game.num_players
        q = (p + 1) % n
        while self.folded[q]:
            q = (q + 1) % n
        return q

    def _replace(self, **changes: Any) -> LeducState:
        fields: dict[str, Any] = dict(private=self.private, public=self.public, rounds=self.rounds, round=self.round,
                      stake=self.stake, folded=self.folded, to_act=self.to_act, raises=self.raises,
                      calls=self.calls)
        fields.update(changes)
        return LeducState(self.game, **fields)

    def child(self, action: int) -> LeducState:
        """The history after `action` (a card at a chance node, else fold, call or raise).

        Parameters
        ----------
        action : int

        Returns
        -------
        LeducState
            A new state; this one is unchanged.

        Examples
        --------
        >>> LeducPoker().initial_state().child(4).child(0).child(2).child(1).round     # raise, call
        1
        """
        if len(self.private) < self.game.num_players:
            return self._replace(private=self.private + (action,))
        if self.public is None and self.round == 1:
            # the second round opens with the first player still in, counting from player 0
            first = self._next_active(self.game.num_players - 1)
            return self._replace(public=action, to_act=first)
        p, stake, folded = self.to_act, list(self.stake), list(self.folded)
        raises, calls = self.raises, self.calls
        if action == FOLD:
            folded[p] = True
        elif action == CALL:
            stake[p] = max(stake)
            calls += 1
        else:
            stake[p] = max(stake) + BET_SIZE[self.round]
            raises, calls = raises + 1, 0
        rounds = list(self.rounds)
        rounds[self.round] += "fcr"[action]
        state = self._replace(stake=tuple(stake), folded=tuple(folded), rounds=tuple(rounds),
                              raises=raises, calls=calls)
        active = state._active()
        if active == 1:
            return state
        round_over = calls == active if raises == 0 else calls == active - 1
        if round_over:
            return state._replace(round=self.round + 1, raises=0, calls=0, to_act=-1)
        return state._replace(to_act=state._next_active(p))

    def returns(self) -> list[float]:
        """Every player's winnings at a terminal history: the pot shared by the best hands still in
        (a pair with the public card beats any rank), minus each player's stake.

        Returns
        -------
        list of float

        Examples
        --------
        >>> LeducPoker().initial_state().child(4).child(0).child(2).child(0).returns()   # raise, fold
        [1.0, -1.0]
        """
        n = self.game.num_players
        pot = sum(self.stake)
        contenders = [p for p in range(n) if not self.folded[p]]
        if len(contenders) > 1:
            strength = {p: self._hand_strength(p) for p in contenders}
            best = max(strength.values())
            contenders = [p for p in contenders if strength[p] == best]
        share = pot / len(contenders)
        return [(share if p in contenders else 0.0) - self.stake[p] for p in range(n)]

    def _hand_strength(self, p: int) -> tuple[bool, int]:
        rank, board = self.private[p] // 2, cast(int, self.public) // 2
        return (rank == board, rank)

    def infoset_key(self) -> str:
        """What the acting player knows: its card, the public card and the betting of each round.

        Returns
        -------
        str

        Examples
        --------
        >>> LeducPoker().initial_state().child(4).child(0).child(1).infoset_key()
        'Js||c|'
        """
        p = self.current_player()
        public = "" if self.public is None else self.game.card_name(self.public)
        return f"{self.game.card_name(self.private[p])}|{public}|{self.rounds[0]}|{self.rounds[1]}"
