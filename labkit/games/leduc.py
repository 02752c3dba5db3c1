"""Leduc hold'em (Southey et al., 2005) with OpenSpiel's rules, for 2 or more players.

The deck has two suits of n + 1 ranks (J, Q, K for two players); card c has rank c // 2.
Every player antes 1 and gets one private card. Two betting rounds; in each, at most two
raises, of 2 chips in the first round and 4 in the second. Actions: 0 = fold (only when
facing a bet), 1 = call (or check), 2 = raise. A public card is dealt between the rounds.
At the showdown a private card that pairs the public card wins, otherwise the higher rank;
equal hands split the pot.
"""
from __future__ import annotations

import numpy as np

from labkit.tree import CHANCE, TERMINAL

FOLD, CALL, RAISE = 0, 1, 2
RANK_NAMES = "JQKAT98765"
SUIT_NAMES = "sh"
BET_SIZE = (2, 4)
MAX_RAISES = 2


class LeducPoker:
    """Game definition (see `labkit.games.base`). Load it with ``labkit.games.load("leduc_poker")``."""

    def __init__(self, players: int = 2):
        if not isinstance(players, int) or players < 2:
            raise ValueError(f"leduc_poker needs players >= 2, got {players!r}")
        self.num_players = players
        self.num_cards = 2 * (players + 1)
        self.num_distinct_actions = 3
        self.name = "leduc_poker" if players == 2 else f"leduc_poker(players={players})"

    def count_histories(self):
        """Number of histories, from one deal's betting tree (the cards never change who may bet)."""
        from labkit.games.base import count_histories_chance_blind
        return count_histories_chance_blind(self)

    def initial_state(self):
        n = self.num_players
        return LeducState(self, private=(), public=None, rounds=("", ""), round=0,
                          stake=(1,) * n, folded=(False,) * n, to_act=0, raises=0, calls=0)

    def action_name(self, action):
        return ("fold", "call", "raise")[action]

    @staticmethod
    def card_name(card):
        return RANK_NAMES[card // 2] + SUIT_NAMES[card % 2]

    # -- compiling by deals (labkit.games.deals): the same tree as the history-by-history walk
    def compile_by_deals(self):
        """The GameTree, from one betting tree expanded over the deals (labkit.games.deals)."""
        from labkit.games.deals import compile_leduc
        return compile_leduc(self)

    def betting_view(self, state):
        """What an infoset key says besides the cards: the acting player and the betting."""
        return state.current_player(), state.rounds

    def visible_cards(self, players, cards):
        """(m, 2) the private card of each acting player and the public card (-1: not dealt),
        from the dealt cards (m, n [+ 1]) in dealing order."""
        n = self.num_players
        public = cards[:, n] if cards.shape[1] > n else np.full(len(cards), -1)
        return np.stack([cards[np.arange(len(cards)), players], public], axis=1)

    def deal_infoset_key(self, state, cards):
        """`LeducState.infoset_key` of the betting state `state` with the dealt cards `cards`."""
        p = state.current_player()
        public = "" if len(cards) <= self.num_players or cards[self.num_players] < 0 \
            else self.card_name(cards[self.num_players])
        return f"{self.card_name(cards[p])}|{public}|{state.rounds[0]}|{state.rounds[1]}"

    def deal_returns(self, state, cards):
        """`LeducState.returns` of the betting outcome `state`, for every deal (row) of `cards`.

        The same float operations as `returns`: the pot over the number of winners (an exact
        int / int division), minus each player's stake."""
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
    def __init__(self, game, private, public, rounds, round, stake, folded, to_act, raises, calls):
        self.game = game
        self.private, self.public, self.rounds, self.round = private, public, rounds, round
        self.stake, self.folded, self.to_act, self.raises, self.calls = stake, folded, to_act, raises, calls

    # ------------------------------------------------------------------ structure
    def _active(self):
        return sum(not f for f in self.folded)

    def current_player(self):
        n = self.game.num_players
        if len(self.private) < n:
            return CHANCE
        if self._active() == 1 or self.round == 2:
            return TERMINAL
        if self.round == 1 and self.public is None:
            return CHANCE
        return self.to_act

    def chance_outcomes(self):
        used = set(self.private) | ({self.public} if self.public is not None else set())
        left = [c for c in range(self.game.num_cards) if c not in used]
        return [(c, 1.0 / len(left)) for c in left]

    def legal_actions(self):
        actions = [FOLD] if max(self.stake) > self.stake[self.to_act] else []
        actions.append(CALL)
        if self.raises < MAX_RAISES:
            actions.append(RAISE)
        return actions

    def _next_active(self, p):
        n = self.game.num_players
        q = (p + 1) % n
        while self.folded[q]:
            q = (q + 1) % n
        return q

    def _replace(self, **changes):
        fields = dict(private=self.private, public=self.public, rounds=self.rounds, round=self.round,
                      stake=self.stake, folded=self.folded, to_act=self.to_act, raises=self.raises,
                      calls=self.calls)
        fields.update(changes)
        return LeducState(self.game, **fields)

    def child(self, action):
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

    def returns(self):
        n = self.game.num_players
        pot = sum(self.stake)
        contenders = [p for p in range(n) if not self.folded[p]]
        if len(contenders) > 1:
            strength = {p: self._hand_strength(p) for p in contenders}
            best = max(strength.values())
            contenders = [p for p in contenders if strength[p] == best]
        share = pot / len(contenders)
        return [(share if p in contenders else 0.0) - self.stake[p] for p in range(n)]

    def _hand_strength(self, p):
        rank, board = self.private[p] // 2, self.public // 2
        return (rank == board, rank)

    def infoset_key(self):
        p = self.current_player()
        public = "" if self.public is None else self.game.card_name(self.public)
        return f"{self.game.card_name(self.private[p])}|{public}|{self.rounds[0]}|{self.rounds[1]}"
