"""Facts about the games and the evaluation that come from outside labkit
(OpenSpiel's measured numbers in ../shared/reference/openspiel.md and the chapter)."""
import numpy as np
import pytest

import labkit as lk


@pytest.mark.parametrize("spec, histories, infosets", [
    ("kuhn_poker", 58, 12),
    ("leduc_poker", 9457, 936),
])
def test_tree_sizes_match_openspiel(spec, histories, infosets):
    game = lk.games.load(spec)
    assert (game.num_histories, game.num_infosets) == (histories, infosets)


@pytest.mark.parametrize("spec, expected", [
    ("kuhn_poker", 11 / 12),
    ("leduc_poker", 4.747222222222222),
])
def test_uniform_nash_conv(spec, expected):
    game = lk.games.load(spec)
    assert lk.nash_conv(game, lk.uniform_policy(game)) == pytest.approx(expected, abs=1e-12)
    assert lk.exploitability(game, lk.uniform_policy(game)) == pytest.approx(expected / 2, abs=1e-12)


@pytest.mark.parametrize("spec, value", [
    ("kuhn_poker", -1 / 18),
    ("leduc_poker", -0.085606424078),
])
def test_sequence_form_lp_value_and_equilibrium(spec, value):
    game = lk.games.load(spec)
    policy, v = lk.zero_sum_equilibrium(game)
    assert v == pytest.approx(value, abs=1e-10)
    assert lk.expected_payoffs(game, policy)[0] == pytest.approx(value, abs=1e-9)
    assert lk.nash_conv(game, policy) < 1e-9


def test_biased_rps_equilibrium_from_lp():
    game = lk.games.load("biased_rock_paper_scissors")
    policy, v = lk.zero_sum_equilibrium(game)
    assert v == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(policy.probs, [[0.25, 0.5, 0.25], [0.25, 0.5, 0.25]], atol=1e-9)
