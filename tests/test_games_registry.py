"""`lk.games.names()`: the registry of game names `lk.games.load` knows.

Outside references: OpenSpiel's own registry (``pyspiel.registered_names()``) must know every
OpenSpiel game listed, and OpenSpiel's tree sizes for the native games.
"""
import pytest

import labkit as lk

# the number of histories of each game, from OpenSpiel (pyspiel's tree walk, see test_games.py)
OPENSPIEL_SIZES = {"kuhn_poker": 58, "leduc_poker": 9457}


def test_names_lists_each_group_and_all_of_them():
    native, matrix, openspiel = (lk.games.names(kind) for kind in ("native", "matrix", "openspiel"))
    assert native == ["goofspiel", "kuhn_poker", "leduc_poker"]
    assert {"rock_paper_scissors", "biased_rock_paper_scissors", "climbing_game"} <= set(matrix)
    assert "openspiel:sheriff" in openspiel and all(n.startswith("openspiel:") for n in openspiel)
    assert lk.games.names() == sorted(native + matrix + openspiel)
    assert len(set(lk.games.names())) == len(lk.games.names())


@pytest.mark.parametrize("name", lk.games.names("native") + lk.games.names("matrix"))
def test_every_native_and_matrix_name_loads(name):
    spec = "goofspiel(num_cards=3)" if name == "goofspiel" else name     # OpenSpiel's 13 cards: too big
    game = lk.games.load(spec)
    assert game.num_histories > 1 and game.num_players >= 2
    if name in OPENSPIEL_SIZES:
        assert game.num_histories == OPENSPIEL_SIZES[name]


def test_bare_goofspiel_is_refused_for_its_size_before_compiling():
    with pytest.raises(ValueError, match=r"4\.68e\+29 histories.*num_cards <= 5"):
        lk.games.load("goofspiel")


def test_every_openspiel_name_is_an_openspiel_game():
    pyspiel = pytest.importorskip("pyspiel")
    registered = set(pyspiel.registered_names())
    assert {n.removeprefix("openspiel:") for n in lk.games.names("openspiel")} <= registered


@pytest.mark.parametrize("name", ["openspiel:sheriff", "openspiel:tiny_hanabi", "openspiel:blotto"])
def test_openspiel_names_load_as_from_openspiel_does(name):
    pytest.importorskip("pyspiel")
    from labkit.games import tree_differences
    game = lk.games.load(name)
    assert tree_differences(game, lk.games.from_openspiel(name.removeprefix("openspiel:"))) == []
    assert lk.games.load(name) is game                   # cached like every game string


def test_openspiel_prefix_keeps_the_size_limit():
    pytest.importorskip("pyspiel")
    with pytest.raises(lk.games.GameError, match="max_histories=1,000"):
        lk.games.load("openspiel:sheriff", max_histories=1000)


def test_a_bad_kind_names_the_valid_ones():
    with pytest.raises(ValueError, match=r"kind must be None or one of 'native', 'matrix', 'openspiel'"):
        lk.games.names("poker")


def test_an_unknown_game_points_at_the_registry():
    with pytest.raises(ValueError, match=r"unknown game 'goofspeil'.*labkit\.games\.names\(\)"):
        lk.games.load("goofspeil")
