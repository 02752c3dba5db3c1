"""The compiled loops of the paper mode (labkit/efr/paper_kernels.cpp) equal numpy's bit for bit.

The paper mode exists to replay the authors' floating point, so "close" is not enough: every
comparison here is of the bits (signed zeros included), against the numpy code that produced
the cached tables (which tests/test_experiments.py checks against the published numbers).
"""
from unittest import mock

import numpy as np
import pytest

import labkit as lk
from labkit.efr import EFR, eigen, paper_numerics
from labkit.efr.deviations import deviation_structure
from labkit.policy import normalize_rows
from labkit.experiments.tournament import FIGURE_E5_VARIANTS

eigen_ok, eigen_reason = eigen.available()
pytestmark = pytest.mark.skipif(not eigen_ok, reason=eigen_reason)

GAMES = ["kuhn_poker(players=3)", "goofspiel(num_cards=3,players=2,points_order=descending,imp_info=True)"]


def same_bits(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def random_table(rng, rows, slots):
    """Regrets with negatives, exact zeros of both signs and tiny values (the signed-zero and
    rounding cases of max(R, 0) and of the zero padding)."""
    table = rng.normal(size=(rows, slots)) * 10.0 ** rng.integers(-17, 1, size=(rows, slots))
    table[rng.random(table.shape) < 0.2] = 0.0
    table[rng.random(table.shape) < 0.1] = -0.0
    return table


@pytest.mark.parametrize("seed", range(4))
def test_block_update_equals_numpy(seed):
    rng = np.random.default_rng(seed)
    infosets, slots = 7, 9
    counts = rng.integers(1, 6, size=infosets)
    counts[0] = 1                           # a one-row segment beside longer ones (padding)
    rows = int(counts.sum())
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    regrets = random_table(rng, rows, slots)
    rho = random_table(rng, 11, slots)
    row_infoset = rng.integers(0, 11, size=rows).astype(np.int64)
    active = rng.random((rows, slots)) < 0.7
    played, new = rng.random(rows), rng.random(rows)
    played[rng.random(rows) < 0.2] = 0.0
    regrets[~active] = 0.0          # inactive slots never leave +0.0 (the fused kernel skips them)
    expected_regrets = regrets.copy()
    expected = paper_numerics.block_update_numpy(expected_regrets, played, rho, row_infoset, active, new, starts)
    y = paper_numerics.block_update(regrets, played, rho, row_infoset, active, new, starts)
    assert same_bits(regrets, expected_regrets) and same_bits(y, expected)
    # a second round on the updated table, as the learner does it
    y = paper_numerics.block_update(regrets, new, rho, row_infoset, active, played, starts)
    expected = paper_numerics.block_update_numpy(expected_regrets, new, rho, row_infoset, active, played, starts)
    assert same_bits(regrets, expected_regrets) and same_bits(y, expected)


def test_padding_turns_a_negative_zero_sum_positive_as_numpy_does():
    regrets, rho = np.zeros((3, 1)), np.zeros((1, 1))
    weight = np.array([-1.0, 1.0, 1.0])      # -1 * 0.0 = -0.0: a one-row segment summing to -0.0
    starts, row_infoset, active = np.array([0, 1]), np.zeros(3, np.int64), np.ones((3, 1), bool)
    y = paper_numerics.block_update(regrets, weight, rho, row_infoset, active, weight, starts)
    reference = paper_numerics.block_update_numpy(regrets.copy(), weight, rho, row_infoset, active, weight,
                                                  starts)
    assert same_bits(y, reference) and not np.signbit(y[0, 0])
    # the full-length segment keeps its -0.0 (no padding added), as numpy does
    y = paper_numerics.block_update(regrets, weight, rho, row_infoset, active, weight, np.array([0, 1, 2]))
    assert np.signbit(y[0, 0])


@pytest.mark.parametrize("game_name", GAMES + ["leduc_poker"])
@pytest.mark.parametrize("kind", ["act", "act_in", "cf_ex+in", "tips_ex+in", "bhv"])
def test_compiled_immediate_regrets_equal_numpy(game_name, kind):
    game = lk.games.load(game_name)
    structure = deviation_structure(game, kind)
    rng = np.random.default_rng(1)
    q = rng.normal(size=game.legal_mask.shape) * game.legal_mask
    v = rng.normal(size=game.num_infosets)
    probs = normalize_rows(game, rng.random(game.legal_mask.shape))
    assert same_bits(paper_numerics.immediate_regrets_compiled(game, structure, q, v, probs),
                     paper_numerics.immediate_regrets(game, structure, q, v, probs))


@pytest.mark.parametrize("game_name", GAMES + [
    "leduc_poker", "goofspiel(num_cards=4,players=2,points_order=random,imp_info=True)"])
def test_compiled_counterfactual_values_equal_numpy(game_name):
    game = lk.games.load(game_name)          # random-order goofspiel: chance between decisions
    rng = np.random.default_rng(2)
    probs = rng.random(game.legal_mask.shape) * game.legal_mask
    probs[rng.random(probs.shape) < 0.2] = 0.0           # pruned branches: unreached infosets
    probs = normalize_rows(game, probs)
    for player in range(game.num_players):
        q, v, reached = paper_numerics.counterfactual_values_compiled(game, probs, player)
        expected_q, expected_v, expected_reached = paper_numerics.counterfactual_values(game, probs, player)
        assert same_bits(q, expected_q) and same_bits(v, expected_v)
        assert np.array_equal(reached, expected_reached) and not expected_reached.all()


@pytest.mark.parametrize("game_name", GAMES)
def test_paper_learner_is_bitwise_the_numpy_code(game_name):
    game = lk.games.load(game_name)
    numpy_loops = {"block_update": paper_numerics.block_update_numpy,
                   "immediate_regrets_compiled": paper_numerics.immediate_regrets,
                   "counterfactual_values_compiled": paper_numerics.counterfactual_values}
    for kind in ("act",) + FIGURE_E5_VARIANTS:
        compiled = EFR(game, kind, fixed_point="paper")
        with mock.patch.multiple(paper_numerics, **numpy_loops):
            reference = EFR(game, kind, fixed_point="paper")
            reference._fused_paper_round = False     # the block loop, where the numpy loops sit
            for _ in range(4):
                reference.step()
        for _ in range(4):
            compiled.step()
        assert same_bits(compiled.regrets, reference.regrets), kind
        # the fused kernel's premise: inactive slots keep exactly +0.0
        inactive = compiled.regrets[~compiled.structure.row_active]
        assert same_bits(inactive, np.zeros_like(inactive)), kind
        assert same_bits(compiled.current_policy().probs, reference.current_policy().probs), kind


def test_kernels_refuse_arrays_they_would_misread():
    regrets, ones, starts = np.zeros((4, 6)), np.ones(4), np.array([0])
    rho, infosets, active = np.zeros((1, 6)), np.zeros(4, np.int64), np.ones((4, 6), bool)
    with pytest.raises(ValueError, match="C-contiguous"):
        paper_numerics.block_update(regrets[:, ::2], ones, rho, infosets, active[:, ::2], ones, starts)
    with pytest.raises(ValueError, match="row_active"):
        paper_numerics.block_update(regrets, ones, rho, infosets, np.ones((4, 6)), ones, starts)
    with pytest.raises(ValueError, match="row_infoset"):
        paper_numerics.block_update(regrets, ones, rho, infosets.astype(np.int32), active, ones, starts)
