"""Size guards: every loader knows (or estimates) a tree's size before compiling it, and refuses
a tree above `max_histories` with a message naming both numbers."""
import time

import pytest

import labkit as lk
from labkit.games import GameError, KuhnPoker, LeducPoker, estimate_histories
from labkit.games.base import compile_game
from labkit.tree import TERMINAL


@pytest.mark.parametrize("spec", ["kuhn_poker", "kuhn_poker(players=3)", "kuhn_poker(players=4)", "leduc_poker"])
def test_native_games_count_their_histories_exactly(spec):
    game = lk.games.load(spec)
    assert game.definition.count_histories() == game.num_histories


def test_three_player_leduc_count_is_the_known_size():
    # 1,831,601 histories: tests/test_openspiel_crosscheck.py compares the tree deal by deal
    assert LeducPoker(players=3).count_histories() == 1_831_601


@pytest.mark.parametrize("spec, size", [("kuhn_poker(players=11)", "1.08e+13"), ("kuhn_poker(players=8)", "7.44e+08"),
                                        ("leduc_poker(players=4)", "3.49e+08")])
def test_too_big_native_games_are_refused_at_once(spec, size):
    start = time.process_time()
    with pytest.raises(GameError, match=rf"has {size.replace('+', '[+]')} histories \(counted\).*"
                                        r"max_histories=20,000,000"):
        lk.games.load(spec)
    assert time.process_time() - start < 5          # counted from one deal's betting tree, not built


def test_the_limit_is_an_argument():
    with pytest.raises(GameError, match="617 histories.*max_histories=100"):
        lk.games.load("kuhn_poker(players=3)", max_histories=100)
    assert lk.games.load("kuhn_poker(players=3)", max_histories=617).num_histories == 617
    for bad in (0, -5, 2.5, "big", True):
        with pytest.raises(TypeError, match="max_histories must be a positive integer"):
            lk.games.load("kuhn_poker", max_histories=bad)


def test_goofspiel_default_is_refused_by_its_parameters():
    with pytest.raises(ValueError, match="histories"):
        lk.games.load("goofspiel")


def test_estimate_is_close_on_a_tree_of_known_size():
    estimate = estimate_histories(LeducPoker(players=3), samples=200)
    assert 0.7 * 1_831_601 < estimate < 1.4 * 1_831_601


class _Comb:
    """A definition without count_histories whose size random playouts underestimate: a spine
    of `length` one-player decisions, where action 1 ends the game and action 0 continues, and a
    bushy subtree of `bush` binary levels at the end of the spine."""
    name, num_players, num_distinct_actions = "comb", 1, 2

    def __init__(self, length, bush):
        self.length, self.bush = length, bush

    def initial_state(self):
        return _CombState(self, 0, 0, "")


class _CombState:
    def __init__(self, game, depth, bushy, path):
        self.game, self.depth, self.bushy, self.path = game, depth, bushy, path

    def current_player(self):
        if self.bushy > self.game.bush or (self.bushy == 0 and self.depth < 0):
            return TERMINAL
        return 0

    def legal_actions(self):
        return [0, 1]

    def child(self, action):
        path = self.path + str(action)
        if self.bushy:
            return _CombState(self.game, self.depth, self.bushy + 1, path)
        if action == 1:
            return _CombState(self.game, -1, 0, path)
        return _CombState(self.game, self.depth + 1, int(self.depth + 1 == self.game.length), path)

    def returns(self):
        return [0.0]

    def infoset_key(self):
        return self.path                                     # perfect information


def test_the_walk_stops_at_the_limit_when_the_estimate_was_low():
    comb = _Comb(length=12, bush=14)                          # ~2^15 histories below the spine
    assert estimate_histories(comb, samples=20) < 1000         # playouts rarely reach the bush
    with pytest.raises(GameError, match="more than max_histories=1,000 histories"):
        compile_game(comb, max_histories=1000)
