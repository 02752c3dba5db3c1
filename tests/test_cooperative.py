"""Tests of labkit.cooperative: independent Q-learners, VDN fit, monotonic mixing, COMA's baseline."""
import numpy as np
import pytest

import labkit as lk
from labkit import cooperative


def test_same_seed_same_runs_and_counts_add_up():
    game = lk.games.climbing_game()
    first = cooperative.independent_q_learning(game, steps=300, runs=40, seed=3, record=True)
    again = cooperative.independent_q_learning(game, steps=300, runs=40, seed=3, record=True)
    assert np.array_equal(first.q_row, again.q_row) and np.array_equal(first.played, again.played)
    assert first.outcome_counts(game.shape).sum() == 40


def test_q_values_are_running_averages_of_rewards():
    # with learning rate 1 and no discount a Q-value is the last reward its action earned
    game = lk.games.climbing_game()
    runs = cooperative.independent_q_learning(game, steps=50, runs=5, learning_rate=1.0, epsilon=1.0,
                                              seed=0, record=True)
    for r in range(5):
        a, b = runs.played[-1, r]
        assert runs.q_row[r, 0, a] == game.A[a, b]
        assert runs.q_col[r, 0, b] == game.B[a, b]


def test_greedy_learners_in_a_dominant_strategy_game_defect():
    # the prisoner's dilemma: defect earns more whatever the other does, so every greedy run ends at (D, D)
    game = lk.games.prisoners_dilemma()
    runs = cooperative.independent_q_learning(game, steps=2000, runs=30, epsilon=0.1, seed=1)
    assert np.all(runs.greedy_row == 1) and np.all(runs.greedy_col == 1)


def test_memory_one_states():
    game = lk.games.prisoners_dilemma()
    runs = cooperative.independent_q_learning(game, steps=100, runs=4, memory=True, discount=0.9, seed=0)
    assert runs.q_row.shape == (4, 4, 2) and runs.q_col.shape == (4, 4, 2)


@pytest.mark.parametrize("exploration", cooperative.EXPLORATIONS)
def test_exploration_options_run(exploration):
    runs = cooperative.independent_q_learning(lk.games.climbing_game(), steps=20, runs=3,
                                              exploration=exploration, seed=0)
    assert runs.greedy_row.shape == (3,)


def test_bad_arguments():
    game = lk.games.climbing_game()
    with pytest.raises(ValueError, match="boltzmann"):
        cooperative.independent_q_learning(game, exploration="softmax")
    with pytest.raises(ValueError, match="epsilon"):
        cooperative.independent_q_learning(game, epsilon=1.5)
    with pytest.raises(ValueError, match="temperature"):
        cooperative.independent_q_learning(game, exploration="boltzmann", temperature=0)
    with pytest.raises(TypeError):
        cooperative.independent_q_learning(np.eye(2))


def test_vdn_fit_is_exact_for_additive_matrices_and_matches_row_column_means():
    q1, q2 = np.array([1.0, -2.0, 0.5]), np.array([3.0, 0.0])
    _, _, fitted = cooperative.vdn_fit(q1[:, None] + q2[None, :])
    assert np.allclose(fitted, q1[:, None] + q2[None, :])
    # with equal weights the least-squares additive fit is row mean + column mean - grand mean
    M = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 5.0]])
    _, _, fitted = cooperative.vdn_fit(M)
    expected = M.mean(axis=1, keepdims=True) + M.mean(axis=0, keepdims=True) - M.mean()
    assert np.allclose(fitted, expected)


def test_vdn_weights_focus_the_fit():
    M = np.array([[1.0, 0.0], [0.0, 1.0]])
    weights = np.array([[1.0, 1.0], [1.0, 1e-9]])
    _, _, fitted = cooperative.vdn_fit(M, weights)
    assert np.allclose(fitted[[0, 0, 1], [0, 1, 0]], M[[0, 0, 1], [0, 1, 0]], atol=1e-6)


def test_monotonic_representable():
    assert cooperative.monotonic_representable([[4, 2], [2, 1]])          # a product of positive utilities
    assert cooperative.monotonic_representable([[3, 1], [2, 0]])          # additive
    assert not cooperative.monotonic_representable([[1, 0], [0, 1]])      # two coordination optima
    assert cooperative.monotonic_representable(lk.games.prisoners_dilemma().A + lk.games.prisoners_dilemma().B)
    assert not cooperative.monotonic_representable([[0, 2, 1], [1, 0, 1], [1, 1, 1]])


def test_coma_advantages_by_hand():
    Q = np.array([[2.0, 0.0], [1.0, 3.0]])
    row, col = cooperative.coma_advantages(Q, [0.25, 0.75], [0.5, 0.5])
    # row agent: baseline for column 0 is 0.25*2 + 0.75*1 = 1.25, for column 1 it is 2.25
    assert np.allclose(row, [[0.75, -2.25], [-0.25, 0.75]])
    # column agent: baseline for row 0 is 1, for row 1 it is 2
    assert np.allclose(col, [[1.0, -1.0], [-1.0, 1.0]])
    # the advantages average to zero under the agent's own policy
    assert np.allclose(np.array([0.25, 0.75]) @ row, 0)
    with pytest.raises(ValueError, match="row_policy"):
        cooperative.coma_advantages(Q, [0.5, 0.6], [0.5, 0.5])


def test_against_a_uniformly_random_partner_q_values_average_the_rows():
    # epsilon = 1: both agents play uniformly at random, so each Q-value estimates the mean of its row
    # (column) of payoffs; averaged over many runs the estimates must be close to those means
    rng = np.random.default_rng(5)
    A, B = rng.integers(-5, 6, size=(3, 4)).astype(float), rng.integers(-5, 6, size=(3, 4)).astype(float)
    game = lk.games.MatrixGame(A, B)
    runs = cooperative.independent_q_learning(game, steps=400, runs=3000, epsilon=1.0, learning_rate=0.05, seed=2)
    assert np.allclose(runs.q_row[:, 0].mean(axis=0), A.mean(axis=1), atol=0.15)
    assert np.allclose(runs.q_col[:, 0].mean(axis=0), B.mean(axis=0), atol=0.15)
