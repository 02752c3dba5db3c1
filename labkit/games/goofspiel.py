"""Goofspiel (Ross, 1971) with OpenSpiel's rules, made turn-based as OpenSpiel's converter does.

Every player holds the cards 1..N. Each round a prize card (also 1..N) is turned up; the
players bid one card each, secretly and at the same time, and the single highest bidder
wins the prize's value (a tie for the highest bid discards the prize). Bid cards are spent.
The prizes come in ascending, descending or random order (then each prize is a chance
node). The last round has no choice left, so it is played out automatically.

To fit a tree, the simultaneous bids of a round are asked one player after another
(player 0 first) and nobody sees the bids of the current round: this is exactly the tree
of ``pyspiel.convert_to_turn_based(goofspiel)``, and action ids are the same (bid a means
the card a + 1; chance action p turns up the prize p + 1).

What a player knows
    imp_info=True   its own bids, the prizes so far and who won each round (OpenSpiel's
                    information state, which also shows the points and the hand: both follow).
    imp_info=False  every player's bids of the finished rounds. OpenSpiel's string shows
                    only the current hands and points, which forgets the order of one's own
                    bids from 4 cards on (imperfect recall, so labkit refuses it); for 3 cards
                    or fewer the two partitions are the same.

Returns (OpenSpiel's ``returns_type``)
    win_loss           the players with the most points share +1, the others share -1
                       (0 for everyone if all are tied);
    point_difference   points minus the average points;
    total_points       points (the game is then general-sum).
"""
from __future__ import annotations

from labkit.games.base import DEFAULT_MAX_HISTORIES
from labkit.tree import CHANCE, TERMINAL

POINTS_ORDERS = ("random", "ascending", "descending")
RETURNS_TYPES = ("win_loss", "point_difference", "total_points")
TIE = -1                      # the "winner" of a round whose highest bid was tied


class Goofspiel:
    """Goofspiel as a game definition (see `labkit.games.base`).

    Load it with ``labkit.games.load("goofspiel(num_cards=4,imp_info=True)")``. The parameters
    have OpenSpiel's names and defaults.

    Parameters
    ----------
    num_cards : int
        N, the cards 1..N in every hand and in the prize deck (default 13, far too many for a
        whole tree: 4 or 5 fit).
    players : int
        2 to 10 players (default 2).
    points_order : {"random", "ascending", "descending"}
        The order of the prizes (default "random": each prize is a chance node).
    imp_info : bool
        Whether the bids of the other players stay hidden (only who won is announced); default
        False.
    returns_type : {"win_loss", "point_difference", "total_points"}
        The payoffs (module docstring); default "win_loss".
    egocentric : bool
        Accepted for OpenSpiel's game strings; it only changes OpenSpiel's tensors.
    num_turns : int
        Must be -1 (as many rounds as cards), as in OpenSpiel's default.

    Raises
    ------
    ValueError
        If a parameter is out of range, or the tree has more than `MAX_HISTORIES` histories.

    References
    ----------
    S. M. Ross (1971), "Goofspiel - the game of pure strategy", Journal of Applied Probability
    8(3).

    Examples
    --------
    >>> game = Goofspiel(num_cards=3, points_order="descending", imp_info=True)
    >>> game.name
    'goofspiel(num_cards=3,players=2,points_order=descending,imp_info=True,returns_type=win_loss)'
    >>> game.count_histories()
    67
    """

    MAX_HISTORIES = DEFAULT_MAX_HISTORIES       # labkit compiles the whole tree; beyond this it would not fit

    def __init__(self, num_cards: int = 13, players: int = 2, points_order: str = "random", imp_info: bool = False,
                 returns_type: str = "win_loss", egocentric: bool = False, num_turns: int = -1):
        if not isinstance(num_cards, int) or isinstance(num_cards, bool) or num_cards < 1:
            raise ValueError(f"goofspiel needs num_cards >= 1, got {num_cards!r}")
        if not isinstance(players, int) or isinstance(players, bool) or not 2 <= players <= 10:
            raise ValueError(f"goofspiel needs 2 to 10 players, got {players!r}")
        if points_order not in POINTS_ORDERS:
            raise ValueError(f"points_order must be one of {', '.join(POINTS_ORDERS)}; got {points_order!r}")
        if returns_type not in RETURNS_TYPES:
            raise ValueError(f"returns_type must be one of {', '.join(RETURNS_TYPES)}; got {returns_type!r}")
        if not isinstance(imp_info, bool) or not isinstance(egocentric, bool):
            raise ValueError(f"imp_info and egocentric must be True or False, got {imp_info!r}, {egocentric!r}")
        if num_turns not in (-1, num_cards):
            raise ValueError(f"labkit's goofspiel plays all {num_cards} rounds; num_turns must be -1, "
                             f"got {num_turns!r}")
        self.num_cards = num_cards
        self.num_players = players
        self.points_order = points_order
        self.imp_info = imp_info
        self.returns_type = returns_type
        self.num_distinct_actions = num_cards
        self.name = (f"goofspiel(num_cards={num_cards},players={players},points_order={points_order},"
                     f"imp_info={imp_info},returns_type={returns_type})")
        size = self.count_histories()
        if size > self.MAX_HISTORIES:
            raise ValueError(f"{self.name} has {size:.3g} histories; labkit compiles the whole tree, which "
                             f"fits up to {self.MAX_HISTORIES:.0e} (e.g. num_cards <= 5 for 2 players)")

    def count_histories(self, limit: int | None = None) -> int:
        """Number of histories of the turn-based tree, from the branching of each level.

        A product per level (no tree is walked), so it is exact and immediate whatever the size.

        Parameters
        ----------
        limit : int, optional
            Accepted for the size guard's protocol (`labkit.games.base.check_size`); the count
            costs nothing, so it is always exact.

        Returns
        -------
        int

        Examples
        --------
        >>> Goofspiel(num_cards=4, points_order="ascending").count_histories()
        1077
        """
        total = width = 1
        for r in range(max(self.num_cards - 1, 1)):          # the last round is played automatically
            left = self.num_cards - r
            steps = ([left] if self.points_order == "random" else []) + [left] * self.num_players
            for branching in steps:
                width *= branching
                total += width
        return total

    def initial_state(self) -> GoofspielState:
        """The root: the first prize is turned up (or, in random order, chance turns it up).

        Returns
        -------
        GoofspielState

        Examples
        --------
        >>> Goofspiel(num_cards=3, points_order="descending").initial_state().prizes     # the 3 first
        (2,)
        """
        prizes = () if self.points_order == "random" else (self._next_fixed_prize(()),)
        return GoofspielState(self, prizes=prizes, rounds=(), pending=(), winners=(),
                              points=(0,) * self.num_players)

    def _next_fixed_prize(self, prizes: tuple[int, ...]) -> int:
        if not prizes:
            return 0 if self.points_order == "ascending" else self.num_cards - 1
        return prizes[-1] + (1 if self.points_order == "ascending" else -1)

    def action_name(self, action: int) -> str:
        """ "bid c" for action c - 1.

        Parameters
        ----------
        action : int

        Returns
        -------
        str

        Examples
        --------
        >>> Goofspiel(num_cards=3).action_name(0)
        'bid 1'
        """
        return f"bid {action + 1}"


class GoofspielState:
    """One history of goofspiel.

    Parameters
    ----------
    game : Goofspiel
    prizes : tuple of int
        Prize indices turned up so far (the last one is at stake while bids are pending).
    rounds : tuple of tuples of int
        The bids of every finished round, one tuple per round, player 0's first.
    pending : tuple of int
        This round's bids so far.
    winners : tuple of int
        The winner of each finished round (TIE, -1, if the top bid was tied).
    points : tuple of int
        Each player's points so far.

    Examples
    --------
    >>> state = Goofspiel(num_cards=3, points_order="descending").initial_state().child(2).child(0)
    >>> state.winners, state.points                       # player 0 bid 3, player 1 bid 1
    ((0,), (3, 0))
    """

    def __init__(self, game: Goofspiel, prizes: tuple[int, ...], rounds: tuple[tuple[int, ...], ...],
                 pending: tuple[int, ...], winners: tuple[int, ...], points: tuple[int, ...]):
        self.game, self.prizes, self.rounds, self.pending = game, prizes, rounds, pending
        self.winners, self.points = winners, points

    def current_player(self) -> int:
        """The next bidder, CHANCE (-1) when a random prize is turned up, or TERMINAL (-4).

        Returns
        -------
        int

        Examples
        --------
        >>> Goofspiel(num_cards=3).initial_state().current_player()           # a random first prize
        -1
        """
        if len(self.rounds) == self.game.num_cards:
            return TERMINAL
        if len(self.prizes) == len(self.rounds):            # no prize turned up yet this round
            return CHANCE
        return len(self.pending)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The prizes not yet turned up, each with equal probability.

        Returns
        -------
        list of (int, float)

        Examples
        --------
        >>> Goofspiel(num_cards=2).initial_state().chance_outcomes()
        [(0, 0.5), (1, 0.5)]
        """
        left = [c for c in range(self.game.num_cards) if c not in self.prizes]
        return [(c, 1.0 / len(left)) for c in left]

    def _hand(self, player: int) -> list[int]:
        spent = {bids[player] for bids in self.rounds}
        return [c for c in range(self.game.num_cards) if c not in spent]

    def legal_actions(self) -> list[int]:
        """The cards still in the bidder's hand (action c bids the card c + 1).

        Returns
        -------
        list of int

        Examples
        --------
        >>> state = Goofspiel(num_cards=3, points_order="ascending").initial_state().child(1).child(0)
        >>> state.legal_actions()                             # both spent one card
        [0, 2]
        """
        return self._hand(len(self.pending))

    def child(self, action: int) -> GoofspielState:
        """The history after `action`: a prize turned up, or a bid (the last bid of a round settles it).

        Parameters
        ----------
        action : int

        Returns
        -------
        GoofspielState
            A new state; this one is unchanged.

        Examples
        --------
        >>> state = Goofspiel(num_cards=3, points_order="ascending").initial_state()
        >>> state.child(2).child(2).winners                     # equal bids: the prize is discarded
        (-1,)
        """
        game = self.game
        if self.current_player() == CHANCE:
            return GoofspielState(game, self.prizes + (action,), self.rounds, (), self.winners, self.points)
        bids = self.pending + (action,)
        if len(bids) < game.num_players:
            return GoofspielState(game, self.prizes, self.rounds, bids, self.winners, self.points)
        state = self._finish_round(bids)
        if len(state.rounds) == game.num_cards - 1:
            # one card left in every hand and one prize left in the deck: play it out
            last_prize = [c for c in range(game.num_cards) if c not in state.prizes]
            state = GoofspielState(game, state.prizes + tuple(last_prize), state.rounds, (), state.winners,
                                   state.points)
            state = state._finish_round(tuple(state._hand(p)[0] for p in range(game.num_players)))
        return state

    def _finish_round(self, bids: tuple[int, ...]) -> GoofspielState:
        """Award the prize at stake to the single highest bidder, then turn up the next prize."""
        game, top = self.game, max(bids)
        points, winner = list(self.points), TIE
        if bids.count(top) == 1:
            winner = bids.index(top)
            points[winner] += self.prizes[-1] + 1
        rounds = self.rounds + (bids,)
        prizes = self.prizes
        if game.points_order != "random" and len(rounds) < game.num_cards:
            prizes = prizes + (game._next_fixed_prize(prizes),)
        return GoofspielState(game, prizes, rounds, (), self.winners + (winner,), tuple(points))

    def returns(self) -> list[float]:
        """Every player's payoff at the end, as set by the game's ``returns_type``.

        Returns
        -------
        list of float

        Examples
        --------
        >>> state = Goofspiel(num_cards=2, points_order="ascending").initial_state()
        >>> state.child(1).child(0).returns()          # player 0 wins the 1, player 1 the 2
        [-1.0, 1.0]
        """
        n, points = self.game.num_players, self.points
        if self.game.returns_type == "total_points":
            return [float(x) for x in points]
        if self.game.returns_type == "point_difference":
            mean = sum(points) / n
            return [x - mean for x in points]
        best = max(points)
        winners = [p for p in range(n) if points[p] == best]
        if len(winners) == n:
            return [0.0] * n
        return [1.0 / len(winners) if p in winners else -1.0 / (n - len(winners)) for p in range(n)]

    def infoset_key(self) -> str:
        """What the bidder knows, e.g. "P0 | prizes 4,3 | my bids 1 | won P1" (imp_info) or
        "P1 | prizes 4,3 | bids 1:2 | won P1" (every finished round's bids, player 0's first);
        "-" stands for an empty list.

        Returns
        -------
        str

        Examples
        --------
        >>> Goofspiel(num_cards=3, points_order="descending", imp_info=True).initial_state().infoset_key()
        'P0 | prizes 3 | my bids - | won -'
        """
        p = len(self.pending)
        prizes = ",".join(str(c + 1) for c in self.prizes)
        won = ",".join("tie" if w == TIE else f"P{w}" for w in self.winners) or "-"
        if self.game.imp_info:
            bids = "my bids " + (",".join(str(r[p] + 1) for r in self.rounds) or "-")
        else:
            bids = "bids " + (" ".join(":".join(str(b + 1) for b in r) for r in self.rounds) or "-")
        return f"P{p} | prizes {prizes} | {bids} | won {won}"
