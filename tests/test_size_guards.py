"""Size guards: every loader knows (or estimates) a tree's size before compiling it, and refuses
a tree above `max_histories` with a message naming both numbers."""
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


@pytest.mark.parametrize("spec", ["kuhn_poker(players=11)", "kuhn_poker(players=8)", "leduc_poker(players=4)",
                                  "leduc_poker(players=9)", "leduc_poker(players=12)"])
def test_too_big_native_games_are_refused_at_once(spec):
    with pytest.raises(GameError, match=r"has more than 20,000,000 histories \(counted until the count passed "
                                        r"the limit; about .* by random playouts\).*max_histories=20,000,000"):
        lk.games.load(spec)


class _Visits:
    """Counts the states the size guard creates (every call of a state's `child`)."""

    def __init__(self, monkeypatch, *state_classes):
        self.count = 0
        for cls in state_classes:
            original = cls.child

            def child(state, action, original=original):
                self.count += 1
                return original(state, action)
            monkeypatch.setattr(cls, "child", child)


@pytest.mark.parametrize("definition", [LeducPoker(players=9), KuhnPoker(players=11)], ids=["leduc9", "kuhn11"])
@pytest.mark.parametrize("limit", [10, 1000, 50_000])
def test_the_count_stops_as_soon_as_it_passes_the_limit(monkeypatch, definition, limit):
    from labkit.games.kuhn import KuhnState
    from labkit.games.leduc import LeducState
    visits = _Visits(monkeypatch, KuhnState, LeducState)
    size = definition.count_histories(limit=limit)
    assert size > limit
    assert visits.count <= limit + 1                # each visited state counts at least once


def test_the_guard_of_nine_player_leduc_counts_a_bounded_part_of_the_tree(monkeypatch):
    from labkit.games.base import check_size
    from labkit.games.leduc import LeducState
    visits = _Visits(monkeypatch, LeducState)
    with pytest.raises(GameError, match="leduc_poker[(]players=9[)] has more than 1,000 histories"):
        check_size(LeducPoker(players=9), max_histories=1000)
    # the count (at most limit + 1 states) and the estimate's 200 playouts (one root-to-leaf path each)
    longest_path = 2 * 9 * 9 + 10                   # a generous bound on a betting line of 9 players
    assert visits.count <= 1000 + 1 + 200 * longest_path


def test_the_experiments_command_refuses_nine_player_leduc():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "labkit.experiments", "efr", "--game", "leduc_poker(players=9)"],
                          capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert "has more than 20,000,000 histories" in done.stderr


def test_the_limit_is_an_argument():
    with pytest.raises(GameError, match="more than 100 histories.*max_histories=100"):
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
