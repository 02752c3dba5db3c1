"""Kuhn poker (Kuhn, 1950) with OpenSpiel's rules, for 2 or more players.

The deck has n + 1 cards (J < Q < K for two players); every player antes 1 and gets one
card, dealt by chance to players 0, 1, ... in turn. Actions: 0 = pass (check or fold),
1 = bet (bet or call). Until someone bets, each player in turn passes or bets; after a
bet, every other player, in turn, calls or folds once. The highest card among the players
still in takes the pot.
"""
from __future__ import annotations

from labkit.tree import CHANCE, TERMINAL

PASS, BET = 0, 1
CARD_NAMES = "JQKA"


class KuhnPoker:
    """Game definition (see `labkit.games.base`). Load it with ``labkit.games.load("kuhn_poker")``."""

    def __init__(self, players: int = 2):
        if not isinstance(players, int) or players < 2:
            raise ValueError(f"kuhn_poker needs players >= 2, got {players!r}")
        self.num_players = players
        self.num_cards = players + 1
        self.num_distinct_actions = 2
        self.name = "kuhn_poker" if players == 2 else f"kuhn_poker(players={players})"

    def count_histories(self):
        """Number of histories, from one deal's betting tree (the cards never change who may bet)."""
        from labkit.games.base import count_histories_chance_blind
        return count_histories_chance_blind(self)

    def initial_state(self):
        return KuhnState(self, (), "")

    def action_name(self, action):
        return ("pass", "bet")[action]

    def card_name(self, card):
        return CARD_NAMES[card] if self.num_cards <= len(CARD_NAMES) else str(card)


class KuhnState:
    def __init__(self, game, cards, history):
        self.game, self.cards, self.history = game, cards, history     # history: string of "p"/"b"

    def current_player(self):
        n = self.game.num_players
        if len(self.cards) < n:
            return CHANCE
        if self._is_over():
            return TERMINAL
        return len(self.history) % n

    def _first_bet(self):
        return self.history.find("b")

    def _is_over(self):
        n, first = self.game.num_players, self._first_bet()
        return len(self.history) == n if first < 0 else len(self.history) == first + n

    def chance_outcomes(self):
        left = [c for c in range(self.game.num_cards) if c not in self.cards]
        return [(c, 1.0 / len(left)) for c in left]

    def legal_actions(self):
        return [PASS, BET]

    def child(self, action):
        if self.current_player() == CHANCE:
            return KuhnState(self.game, self.cards + (action,), self.history)
        return KuhnState(self.game, self.cards, self.history + "pb"[action])

    def returns(self):
        n, first = self.game.num_players, self._first_bet()
        if first < 0:
            stake = [1.0] * n
            contenders = range(n)
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

    def infoset_key(self):
        p = self.current_player()
        return f"{self.game.card_name(self.cards[p])}|{self.history}"
