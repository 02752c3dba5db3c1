"""The native games: sizes measured with OpenSpiel, rules worked out by hand, parameters refused
with a message that says what is valid."""
import numpy as np
import pytest

import labkit as lk
from labkit.games import TERMINAL
from labkit.games.goofspiel import Goofspiel


# sizes of OpenSpiel 2.0.2's trees (goofspiel after pyspiel.convert_to_turn_based)
@pytest.mark.parametrize("spec, histories, infosets", [
    ("kuhn_poker", 58, 12),
    ("kuhn_poker(players=3)", 617, 48),
    ("leduc_poker", 9457, 936),
    ("goofspiel(num_cards=3,imp_info=True)", 418, 90),
    ("goofspiel(num_cards=3,imp_info=False)", 418, 114),
    ("goofspiel(num_cards=4,imp_info=True,points_order=descending)", 1077, 162),
    ("goofspiel(num_cards=4,imp_info=True)", 26773, 3608),
    ("goofspiel(num_cards=4,players=3,imp_info=True,points_order=ascending)", 26773, 414),
])
def test_sizes_match_openspiel(spec, histories, infosets):
    game = lk.games.load(spec)
    assert (game.num_histories, game.num_infosets) == (histories, infosets)
    if spec.startswith("goofspiel"):
        assert game.definition.count_histories() == histories


def _play(definition, actions):
    state = definition.initial_state()
    for a in actions:
        state = state.child(a)
    return state


# ------------------------------------------------------------------ goofspiel rules by hand

def test_goofspiel_round_by_round():
    # descending prizes 3, 2, 1; bids are action ids (card - 1)
    game = Goofspiel(num_cards=3, points_order="descending", imp_info=True)
    state = game.initial_state()
    assert state.current_player() == 0 and state.legal_actions() == [0, 1, 2]
    state = state.child(2)                    # P0 bids 3
    assert state.current_player() == 1        # P1 bids next, without seeing the 3
    assert state.infoset_key() == "P1 | prizes 3 | my bids - | won -"
    state = state.child(2)                    # P1 bids 3 too: tie, the 3 is discarded
    assert state.points == (0, 0) and state.winners == (-1,)
    assert state.infoset_key() == "P0 | prizes 3,2 | my bids 3 | won tie"
    assert state.legal_actions() == [0, 1]
    state = state.child(1).child(0)           # P0 bids 2, P1 bids 1: P0 wins the 2
    # the last round plays itself: P0's 1 against P1's 2 for the prize 1
    assert state.current_player() == TERMINAL
    assert state.points == (2, 1)
    assert state.returns() == [1.0, -1.0]


@pytest.mark.parametrize("returns_type, expected", [
    ("win_loss", [1.0, -1.0]),
    ("point_difference", [0.5, -0.5]),
    ("total_points", [2.0, 1.0]),
])
def test_goofspiel_returns_types(returns_type, expected):
    game = Goofspiel(num_cards=3, points_order="descending", returns_type=returns_type)
    assert _play(game, [2, 2, 1, 0]).returns() == expected


def test_goofspiel_three_player_win_loss():
    ascending = Goofspiel(num_cards=3, players=3, points_order="ascending")
    # prize 1: bids 3, 1, 2 -> P0; prize 2: bids 2, 3, 1 -> P1; prize 3 (played out): 1, 2, 3 -> P2
    state = _play(ascending, [2, 0, 1, 1, 2, 0])
    assert state.points == (1, 2, 3) and state.winners == (0, 1, 2)
    assert state.returns() == [-0.5, -0.5, 1.0]
    # prize 1: bids 3, 3, 1 (top bid tied: discarded); prize 2: 1, 2, 3 -> P2; prize 3: 2, 1, 2 (tied)
    state = _play(ascending, [2, 2, 0, 0, 1, 2])
    assert state.points == (0, 0, 2) and state.winners == (-1, 2, -1)
    assert state.returns() == [-0.5, -0.5, 1.0]


def test_goofspiel_tied_winners_share_and_a_full_tie_pays_nothing():
    game = Goofspiel(num_cards=4, players=3, points_order="descending")
    # prize 4: bids 4, 1, 1 -> P0; prize 3: bids 1, 3, 2 -> P1; prize 2: bids 3, 2, 4 -> P2;
    # prize 1 (played out): 2, 4, 3 -> P1
    state = _play(game, [3, 0, 0, 0, 2, 1, 2, 1, 3])
    assert state.points == (4, 4, 2)
    assert state.returns() == [0.5, 0.5, -1.0]
    # two players bid the same cards throughout: nobody scores, a draw
    equal = _play(Goofspiel(num_cards=3, points_order="descending"), [2, 2, 1, 1])
    assert equal.points == (0, 0) and equal.returns() == [0.0, 0.0]


def test_goofspiel_random_order_deals_prizes_by_chance():
    game = lk.games.load("goofspiel(num_cards=3,imp_info=True)")
    assert game.player[0] == lk.games.CHANCE
    np.testing.assert_allclose(game.chance_prob[1:4], 1 / 3)
    # the last prize is not a chance node: it is the only card left
    assert game.is_chance.sum() == 1 + 3 * 3 * 3


def test_goofspiel_symmetric_win_loss_has_value_zero():
    # a symmetric zero-sum game is worth 0 to both players
    game = lk.games.load("goofspiel(num_cards=3,points_order=descending,imp_info=True)")
    policy, value = lk.zero_sum_equilibrium(game)
    assert value == pytest.approx(0.0, abs=1e-9)
    assert lk.nash_conv(game, policy) == pytest.approx(0.0, abs=1e-9)


def test_goofspiel_perfect_information_keys_show_every_bid():
    game = lk.games.load("goofspiel(num_cards=4,points_order=ascending,imp_info=False)")
    assert "P1 | prizes 1,2 | bids 4:1 | won P0" in game.infoset_keys
    imperfect = lk.games.load("goofspiel(num_cards=4,points_order=ascending,imp_info=True)")
    assert "P1 | prizes 1,2 | my bids 1 | won P0" in imperfect.infoset_keys
    assert game.num_infosets > imperfect.num_infosets


@pytest.mark.parametrize("params, message", [
    (dict(points_order="shuffled"), "points_order must be one of random, ascending, descending"),
    (dict(returns_type="score"), "returns_type must be one of win_loss, point_difference, total_points"),
    (dict(num_cards=0), "num_cards >= 1"),
    (dict(num_cards=3, players=1), "2 to 10 players"),
    (dict(num_cards=3, imp_info="yes"), "imp_info"),
    (dict(num_cards=3, num_turns=2), "num_turns"),
    (dict(), "histories"),                                     # OpenSpiel's default: 13 cards
])
def test_goofspiel_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        Goofspiel(**params)


def test_load_reports_bad_game_strings():
    with pytest.raises(ValueError, match="shuffled"):
        lk.games.load("goofspiel(num_cards=3,points_order=shuffled)")
    with pytest.raises(ValueError, match="colour"):
        lk.games.load("goofspiel(num_cards=3,colour=red)")
    with pytest.raises(ValueError, match="unknown game 'goofspeil'"):
        lk.games.load("goofspeil(num_cards=3)")


def test_openspiel_full_game_strings_are_accepted():
    spec = ("goofspiel(egocentric=False,imp_info=True,num_cards=3,num_turns=-1,players=2,"
            "points_order=ascending,returns_type=win_loss)")
    assert lk.games.load(spec).num_histories == 67


# ------------------------------------------------------------------ Kuhn and Leduc by hand

def test_three_player_kuhn_payoffs():
    game = lk.games.KuhnPoker(players=3)
    # J, Q, K to players 0, 1, 2; P0 bets, P1 calls, P2 folds: P1's Q beats P0's J, pot 5
    assert _play(game, [0, 1, 2, 1, 1, 0]).returns() == [-2.0, 3.0, -1.0]
    # K, J, Q; everyone passes: the king takes the 3 antes
    assert _play(game, [2, 0, 1, 0, 0, 0]).returns() == [2.0, -1.0, -1.0]
    # K, J, Q; P0 passes, P1 bets, P2 calls, P0 folds: P2's Q beats P1's J, pot 5
    assert _play(game, [2, 0, 1, 0, 1, 1, 0]).returns() == [-1.0, -2.0, 3.0]


def test_leduc_rules_by_hand():
    game = lk.games.LeducPoker()
    # private cards Js (0) and Qs (2); raise, call (pot 3 + 3); public Jh (1); check, check: pair wins
    state = _play(game, [0, 2, 2, 1, 1, 1, 1])
    assert state.current_player() == TERMINAL
    assert state.returns() == [3.0, -3.0]
    # second-round raises are 4: raise, raise, call after a first-round check-check
    state = _play(game, [0, 2, 1, 1, 5, 2, 2, 1])
    assert state.returns() == [-9.0, 9.0]         # Kh on the board: Q beats J, pot 18
    # equal ranks split the pot: Js and Jh against a Q on the board
    assert _play(game, [0, 1, 1, 1, 2, 1, 1]).returns() == [0.0, 0.0]
    # at most two raises per round: after raise, raise only fold and call remain
    state = _play(game, [0, 2, 2, 2])
    assert state.legal_actions() == [0, 1]


GAME_TREE_ARRAYS = ("parent", "action", "player", "depth", "infoset", "chance_prob", "returns", "infoset_player",
                    "legal_mask", "infoset_parent_seq", "own_last_seq")


def assert_same_tree(a, b):
    for name in GAME_TREE_ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        if x.dtype == np.float64:
            x, y = x.view(np.int64), y.view(np.int64)      # bit for bit, signs of zeros included
        assert np.array_equal(x, y), name
    assert a.infoset_keys == b.infoset_keys
    assert (a.name, a.num_players, a.num_actions, a.action_names) == (b.name, b.num_players, b.num_actions,
                                                                      b.action_names)


@pytest.mark.parametrize("players", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_leduc_by_deals_is_the_walked_tree(players):
    """labkit.games.deals (one betting tree expanded over the deals) builds the tree the
    history-by-history walk builds; the walk of 3-player Leduc takes ~20 s of CPU."""
    from labkit.games.base import compile_game
    from labkit.games.leduc import LeducPoker
    assert_same_tree(compile_game(LeducPoker(players), by_deals=True), compile_game(LeducPoker(players), by_deals=False))


def test_a_leduc_subclass_is_walked():
    from labkit.games.base import compile_game
    from labkit.games.leduc import LeducPoker

    class Tweaked(LeducPoker):
        def compile_by_deals(self):
            raise AssertionError("a subclass may change the rules: it must be walked")

    assert compile_game(Tweaked(2)).num_histories == 9457


GOOFSPIEL_VARIANTS = [(N, players, order, imp_info, returns)
                      for N in (1, 2, 3, 4) for players in (2, 3)
                      for order in ("random", "ascending", "descending") for imp_info in (False, True)
                      for returns in ("win_loss", "point_difference", "total_points")
                      if players == 2 or N <= 3]


@pytest.mark.parametrize("variant", GOOFSPIEL_VARIANTS, ids=lambda v: "-".join(map(str, v)))
def test_goofspiel_by_levels_is_the_walked_tree(variant):
    """labkit.games.goofspiel_levels (numpy, a depth level at a time) builds the tree, the
    information sets and their keys that the state-by-state walk builds, bit for bit."""
    from labkit.games.base import compile_game
    from labkit.games.goofspiel import Goofspiel
    game = Goofspiel(*variant)
    assert_same_tree(compile_game(game, by_deals=True), compile_game(game, by_deals=False))


def test_goofspiel_levels_are_taken_by_load(monkeypatch):
    """compile_game takes the level-by-level compiler for Goofspiel itself, and walks a subclass."""
    from labkit.games import goofspiel_levels
    from labkit.games.base import compile_game
    from labkit.games.goofspiel import Goofspiel
    calls = []
    level_compile = goofspiel_levels.compile_goofspiel
    monkeypatch.setattr(goofspiel_levels, "compile_goofspiel", lambda game: calls.append(game) or level_compile(game))
    assert compile_game(Goofspiel(3)).num_histories == 418
    assert len(calls) == 1

    class Tweaked(Goofspiel):
        def compile_by_levels(self):
            raise AssertionError("a subclass may change the rules: it must be walked")

    assert compile_game(Tweaked(3)).num_histories == 418
    assert len(calls) == 1
