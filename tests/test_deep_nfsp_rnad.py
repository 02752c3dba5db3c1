"""NFSP and neural MMD (R-NaD's dynamics): known equilibria of one-infoset games, agreement of the
network dynamics with labkit's tabular MMD, and seeded reproducibility."""
import numpy as np
import pytest

import labkit as lk

pytest.importorskip("jax")
from labkit.deep import NFSP, NFSPConfig, NeuralMMD, NeuralMMDConfig  # noqa: E402

EQUILIBRIUM = [[0.25, 0.5, 0.25]] * 2          # biased rock-paper-scissors, both players
MATRIX_NFSP = NFSPConfig(learn_every=4, min_buffer=100, batch_size=64, optimizer="adam", rl_learning_rate=1e-2,
                         sl_learning_rate=1e-2, replay_capacity=2000, hidden=(16,), target_update_every=50,
                         epsilon_decay_steps=20_000)


def test_nfsp_average_network_reaches_the_known_equilibrium():
    game = lk.games.load("biased_rock_paper_scissors")
    solver = NFSP(game, MATRIX_NFSP, seed=0)
    solver.run(40_000)
    np.testing.assert_allclose(solver.average_policy().probs, EQUILIBRIUM, atol=0.05)
    assert lk.nash_conv(game, solver.average_policy()) < 0.2     # uniform: 2/3


def test_nfsp_same_seed_same_networks_and_policies_are_valid():
    config = NFSPConfig(min_buffer=200, learn_every=16, hidden=(16,))
    runs = [NFSP("kuhn_poker", config, seed=5) for _ in range(2)]
    for solver in runs:
        solver.run(3000)
    np.testing.assert_array_equal(runs[0].average_policy().probs, runs[1].average_policy().probs)
    np.testing.assert_array_equal(runs[0].best_response_policy().probs, runs[1].best_response_policy().probs)
    game = runs[0].game
    for policy in (runs[0].average_policy(), runs[0].best_response_policy(), runs[0].current_policy()):
        lk.TabularPolicy(game, policy.probs)                       # valid distributions
    assert runs[0].agents[0].learning_steps > 0
    assert runs[0].agents[0].sl_size > 0 and runs[0].agents[0].rl_size > 0


def test_nfsp_configuration_errors():
    with pytest.raises(ValueError, match="anticipatory"):
        NFSPConfig(anticipatory=1.5)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        NFSPConfig(optimizer="rmsprop")


def test_neural_mmd_last_iterate_reaches_the_known_equilibrium():
    game = lk.games.load("biased_rock_paper_scissors")
    config = NeuralMMDConfig(alpha=0.2, stepsize=0.5, magnet_update_every=20, hidden=(16,), learning_rate=1e-2)
    solver = NeuralMMD(game, config, seed=0)
    solver.run(300)
    np.testing.assert_allclose(solver.current_policy().probs, EQUILIBRIUM, atol=0.005)


def test_neural_mmd_follows_tabular_mmd_on_kuhn():
    """The network is fitted to the tabular update's target at every step, so its last iterate stays
    close to tabular MMD's (same alpha, stepsize and magnet schedule, action-value feedback)."""
    config = NeuralMMDConfig(alpha=0.5, stepsize=0.1, magnet_update_every=100)
    neural = NeuralMMD("kuhn_poker", config, seed=0)
    tabular = lk.MMD("kuhn_poker", alpha=0.5, stepsize=0.1, feedback="action values", magnet_update_every=100)
    for T in (50, 200):
        neural.run(T - neural.iteration)
        tabular.run(T - tabular.iteration)
        gap = np.abs(neural.current_policy().probs - tabular.current_policy().probs).max()
        assert gap < 0.05, (T, gap)
    assert abs(neural.nash_conv("current") - tabular.nash_conv("current")) < 0.02


def test_neural_mmd_sampled_feedback_is_reproducible_and_learns():
    config = NeuralMMDConfig(feedback="sampled", episodes=100)
    runs = [NeuralMMD("kuhn_poker", config, seed=2) for _ in range(2)]
    for solver in runs:
        solver.run(100)
    np.testing.assert_array_equal(runs[0].current_policy().probs, runs[1].current_policy().probs)
    assert runs[0].nash_conv("current") < 0.3                       # uniform: 11/12
