"""The history-by-history walk of `compile_game`: its size guard's exact count of small trees, the
`walk_states` hook the OpenSpiel adapter uses, and its checks of what a definition returns."""
import numpy as np
import pytest

import labkit as lk
from labkit.games import GameError, KuhnPoker
from labkit.games.base import SMALL_TREE, check_size, compile_game, count_histories_up_to
from labkit.tree import TERMINAL


def assert_same_tree(a, b):
    """Every array bit for bit (signs of zeros included), the keys and the names."""
    for name in ("parent", "action", "player", "depth", "infoset", "chance_prob", "returns", "infoset_player",
                 "legal_mask", "infoset_parent_seq", "own_last_seq"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x.view(np.int64) if x.dtype == np.float64 else x,
                              y.view(np.int64) if y.dtype == np.float64 else y), name
    assert a.infoset_keys == b.infoset_keys
    assert (a.name, a.num_players, a.num_actions, a.action_names) == (b.name, b.num_players, b.num_actions,
                                                                      b.action_names)


class _Plain:
    """A definition seen without its optional methods (count_histories, walk_states): the walk
    gets its states through initial_state(), and the size guard has no count to ask for."""

    def __init__(self, definition):
        self.inner = definition
        self.name, self.num_players = definition.name, definition.num_players
        self.num_distinct_actions = definition.num_distinct_actions

    def initial_state(self):
        return self.inner.initial_state()

    def action_name(self, a):
        return self.inner.action_name(a)


def test_small_trees_are_counted_exactly():
    assert count_histories_up_to(KuhnPoker(), 58) == 58
    assert count_histories_up_to(KuhnPoker(), 57) is None
    assert count_histories_up_to(KuhnPoker(players=3), SMALL_TREE) == 617
    size = check_size(_Plain(KuhnPoker()))              # no count_histories: counted, not estimated
    assert size == 58 and isinstance(size, int)
    with pytest.raises(GameError, match=r"has 58 histories \(counted\)"):
        check_size(_Plain(KuhnPoker()), max_histories=50)


def test_a_large_tree_without_a_count_is_still_estimated():
    leduc = _Plain(lk.games.LeducPoker())
    assert count_histories_up_to(leduc, SMALL_TREE) is None
    assert check_size(leduc) == lk.games.estimate_histories(leduc)


@pytest.mark.parametrize("spec", ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker",
                                  "goofspiel(num_cards=3)"])
def test_the_adapter_walks_pyspiel_states_into_the_same_tree(spec):
    """`OpenSpielDefinition.walk_states` lets the walk use pyspiel's states without a wrapper each:
    the tree is the one walked through the wrappers (`initial_state()`), array for array."""
    pytest.importorskip("pyspiel")
    from labkit.games.openspiel_adapter import OpenSpielDefinition
    definition = OpenSpielDefinition(spec)
    root, key_method = definition.walk_states()
    assert key_method == "information_state_string" and type(root).__module__.split(".")[0] == "pyspiel"
    assert_same_tree(compile_game(definition), compile_game(_Plain(definition)))


class _Payoffs:
    """Two players, one move each, then a terminal whose returns() come from `payoffs(history)`."""
    name, num_players, num_distinct_actions = "payoffs", 2, 2

    def __init__(self, payoffs):
        self.payoffs = payoffs

    def initial_state(self):
        return _PayoffsState(self, ())


class _PayoffsState:
    def __init__(self, game, history):
        self.game, self.history = game, history

    def current_player(self):
        return TERMINAL if len(self.history) == 2 else len(self.history)

    def legal_actions(self):
        return [0, 1]

    def child(self, action):
        return _PayoffsState(self.game, self.history + (action,))

    def infoset_key(self):
        return ""

    def returns(self):
        return self.game.payoffs(self.history)


def test_returns_are_read_into_the_table():
    tree = compile_game(_Payoffs(lambda h: (float(h[0]), -0.5 * h[1])))
    z = tree.terminals
    assert tree.returns[z].tolist() == [[0.0, -0.0], [0.0, -0.5], [1.0, -0.0], [1.0, -0.5]]
    assert np.all(tree.returns[tree.infoset >= 0] == 0.0)


@pytest.mark.parametrize("payoffs, count", [
    (lambda h: [1.0], 1),                                      # too few for every terminal
    (lambda h: [1.0, -1.0, 0.0] if h == (1, 1) else [1.0, -1.0], 3),   # one row too long
    (lambda h: 1.0, 1),                                        # a number, not a row
])
def test_returns_of_the_wrong_length_are_refused(payoffs, count):
    with pytest.raises(GameError, match=rf"returns\(\) gave {count} values for 2 players"):
        compile_game(_Payoffs(payoffs))


def test_action_names_come_from_the_definition():
    """`action_names()` gives every name at once where a definition has it (the OpenSpiel adapter),
    else `action_name` is asked per action; an `action_names` that is not a method is not called."""
    class Named(_Payoffs):
        def action_name(self, a):
            return "low" if a == 0 else "high"

    class Listed(Named):
        action_names = ["not", "called"]

    class Batched(Named):
        def action_names(self):
            return ["left", "right"]

    payoffs = lambda h: (1.0, -1.0)                           # noqa: E731
    assert compile_game(Named(payoffs)).action_names == ["low", "high"]
    assert compile_game(Listed(payoffs)).action_names == ["low", "high"]
    assert compile_game(Batched(payoffs)).action_names == ["left", "right"]
    pytest.importorskip("pyspiel")
    from labkit.games.openspiel_adapter import OpenSpielDefinition
    leduc = OpenSpielDefinition("leduc_poker")
    assert leduc.action_names() == [leduc.action_name(a) for a in range(3)] == ["Fold", "Call", "Raise"]


@pytest.mark.parametrize("in_memory", [True, False])
def test_openspiels_error_output_is_captured_in_memory_or_in_a_file(in_memory, monkeypatch):
    """The adapter's capture of file descriptor 2 keeps what C code writes there, whether the
    system offers an in-memory file (memfd_create) or only a temporary file."""
    import os

    from labkit.games import openspiel_adapter
    if not in_memory:
        monkeypatch.delattr(os, "memfd_create", raising=False)
    elif not hasattr(os, "memfd_create"):
        pytest.skip("no memfd_create on this system")
    with openspiel_adapter.captured_stderr() as captured:
        os.write(2, b"OpenSpiel exception: first\n")
        os.write(2, b"second")
    assert captured == ["OpenSpiel exception: first\nsecond"]
    os.write(2, b"")                                          # the descriptor is stderr again
