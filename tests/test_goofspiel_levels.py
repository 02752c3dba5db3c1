"""Goofspiel's level-by-level compiler and the skeletons it keeps (labkit.games.goofspiel_levels).

A compile that starts from a kept skeleton must build the tree the state-by-state walk builds,
whichever points order or returns type made the skeleton, and no two compiled trees may share an
array. tests/test_games.py compares every small variant with the walk once; here the same size is
compiled several times in a row, so that every compile after the first starts from the kept one.
"""
import numpy as np
import pytest
from test_games import assert_same_tree


def _compile_in_turn(variants):
    """Compile each (num_cards, points_order, imp_info, returns_type) after forgetting the kept
    skeletons, and compare each tree with the walk; returns how many skeletons were built."""
    from labkit.games import goofspiel_levels
    from labkit.games.base import compile_game
    from labkit.games.goofspiel import Goofspiel
    goofspiel_levels._kept_skeleton.cache_clear()
    for num_cards, order, imp_info, returns in variants:
        game = Goofspiel(num_cards, points_order=order, imp_info=imp_info, returns_type=returns)
        assert_same_tree(compile_game(game), compile_game(game, by_deals=False))
    return goofspiel_levels._kept_skeleton.cache_info().misses


@pytest.mark.parametrize("num_cards", [3, 4, 5])
@pytest.mark.parametrize("imp_info", [False, True])
def test_one_kept_skeleton_serves_both_fixed_orders(num_cards, imp_info):
    """Descending, then ascending, then descending again (goofspiel 5 has 26,931 histories: its
    keys are written with np.unique, the smaller ones' in a dict)."""
    variants = [(num_cards, "descending", imp_info, "win_loss"), (num_cards, "ascending", imp_info, "point_difference"),
                (num_cards, "descending", imp_info, "total_points")]
    assert _compile_in_turn(variants) == 1


@pytest.mark.parametrize("imp_info", [False, True])
def test_random_order_has_its_own_skeleton(imp_info):
    """A random order adds chance levels: its skeleton is another one, kept as well."""
    variants = [(3, "random", imp_info, "win_loss"), (3, "ascending", imp_info, "win_loss"),
                (3, "random", imp_info, "point_difference"), (3, "ascending", imp_info, "total_points")]
    assert _compile_in_turn(variants) == 2


def test_compiled_trees_share_no_array():
    """Writing into one compiled tree changes neither the kept skeleton nor the next tree."""
    from labkit.games import goofspiel_levels
    from labkit.games.base import compile_game
    from labkit.games.goofspiel import Goofspiel
    goofspiel_levels._kept_skeleton.cache_clear()
    game = Goofspiel(3, points_order="descending", imp_info=True)
    first = compile_game(game)
    for name in ("parent", "action", "player", "depth", "infoset", "chance_prob", "returns", "infoset_player",
                 "legal_mask", "infoset_parent_seq", "own_last_seq"):
        getattr(first, name)[...] = 1
    first.infoset_keys[0] = "scribbled"
    assert goofspiel_levels._kept_skeleton.cache_info().currsize == 1
    assert_same_tree(compile_game(game), compile_game(game, by_deals=False))


@pytest.mark.parametrize("seed", range(6))
def test_infosets_are_numbered_as_np_unique_numbers_them(seed):
    """`_number_infosets` (one stable sort) gives what np.unique's first indices and inverse give,
    renumbered in the order of first histories."""
    from labkit.games.goofspiel_levels import _number_infosets
    rng = np.random.default_rng(seed)
    for size in (1, 2, 5, 40, 300):
        code = rng.integers(0, max(size // 3, 1), size) * 1_000_003      # repeated, unsorted codes
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(first), dtype=np.int64)
        rank[order] = np.arange(len(first))
        infoset, first_history = _number_infosets(code)
        assert np.array_equal(infoset, rank[inverse]) and np.array_equal(first_history, first[order])
        assert infoset.dtype == np.int64 and first_history.dtype == np.int64
