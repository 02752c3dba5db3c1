"""PSRO with an exact meta-game: OpenSpiel's Kuhn numbers (reference/openspiel.md §5.8), double
oracle reaching Nash, the meta-game and the mixture policy checked against direct evaluation.

What is comparable with OpenSpiel: its PSRO estimates meta-game entries by simulation, so with the
Nash meta-solver only the deterministic first iterations agree (0.9167, 0.8333, 0.3333; the
meta-games there are degenerate enough that noise does not change the solution); from iteration 3
its curves differ between seeds. The uniform meta-solver never reads the meta-game payoffs, so its
whole curve is deterministic and must agree when best responses break ties the same way.
"""
import warnings

import numpy as np
import pytest

import labkit as lk
from labkit.psro import PSRO, _project_simplex, projected_replicator_dynamics, zero_sum_matrix_equilibrium

OPENSPIEL_UNIFORM = [0.9167, 0.6250, 0.4167, 0.3542, 0.2833, 0.2639, 0.2262, 0.1979, 0.2037, 0.1833, 0.1667]
OPENSPIEL_NASH_FIRST = [0.9167, 0.8333, 0.3333]


def joint(game, members):
    """The joint policy in which player p follows members[p] (an (I, A) array)."""
    probs = np.zeros(game.legal_mask.shape)
    for p, member in enumerate(members):
        rows = game.infoset_player == p
        probs[rows] = member[rows]
    return probs


def test_uniform_meta_solver_reproduces_openspiel(kuhn):
    psro = PSRO(kuhn, meta_solver="uniform")
    psro.run(10)
    assert [round(v, 4) for _, v in psro.nash_conv_history] == OPENSPIEL_UNIFORM
    assert [t for t, _ in psro.nash_conv_history] == list(range(11))


def test_nash_meta_solver_first_iterations_match_openspiel(kuhn):
    psro = PSRO(kuhn, meta_solver="nash")
    psro.run(2)
    assert [round(v, 4) for _, v in psro.nash_conv_history] == OPENSPIEL_NASH_FIRST


def test_double_oracle_reaches_nash_on_kuhn(kuhn):
    psro = PSRO(kuhn, meta_solver="nash")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        psro.run(12, target_nash_conv=1e-10)
    final = psro.nash_conv_history[-1][1]
    assert final < 1e-8
    assert psro.iteration <= 10                                    # measured: 6 iterations
    assert lk.expected_payoffs(kuhn, psro.average_policy())[0] == pytest.approx(-1 / 18, abs=1e-9)
    assert psro.population_sizes == [psro.iteration + 1] * 2
    # one more iteration adds only duplicates, and says so once
    with pytest.warns(UserWarning, match="double oracle has converged"):
        psro.step()
    assert psro.nash_conv_history[-1][1] < 1e-8
    assert not any("converged" in str(w.message) for w in caught)


def test_double_oracle_falls_on_leduc():
    leduc = lk.games.load("leduc_poker")
    psro = PSRO(leduc, meta_solver="nash")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        psro.run(20)
    values = np.array([v for _, v in psro.nash_conv_history])
    assert values[0] == pytest.approx(4.747222222222222, abs=1e-12)       # uniform Leduc NashConv
    assert values[-5:].min() < values[0] / 3                               # measured: 1.30 at 20
    # the meta-strategies are an equilibrium of the meta-game: no member does better
    M = psro.meta_game[0]
    x, y = psro.meta_strategies
    value = x @ M @ y
    assert (M @ y).max() <= value + 1e-8 and (x @ M).min() >= value - 1e-8


def test_meta_game_is_the_expected_payoff_of_every_combination(kuhn):
    psro = PSRO(kuhn, meta_solver="uniform")
    psro.run(3)
    K0, K1 = psro.population_sizes
    assert psro.meta_game.shape == (2, K0, K1)
    for i in range(K0):
        for j in range(K1):
            direct = lk.expected_payoffs(kuhn, joint(kuhn, [psro.populations[0][i], psro.populations[1][j]]))
            np.testing.assert_allclose(psro.meta_game[:, i, j], direct, atol=1e-12)


def test_mixture_policy_plays_the_meta_strategy(kuhn):
    """Against every opponent member, the behavioral mixture earns sigma-weighted meta-game payoffs
    (realization equivalence of the reach-weighted mixture)."""
    psro = PSRO(kuhn, meta_solver="nash")
    psro.run(4)
    mixture = psro.average_policy().probs
    x, y = psro.meta_strategies
    for j, member in enumerate(psro.populations[1]):
        got = lk.expected_payoffs(kuhn, joint(kuhn, [mixture, member]))[0]
        assert got == pytest.approx(x @ psro.meta_game[0][:, j], abs=1e-12)
    for i, member in enumerate(psro.populations[0]):
        got = lk.expected_payoffs(kuhn, joint(kuhn, [member, mixture]))[1]
        assert got == pytest.approx(psro.meta_game[1][i] @ y, abs=1e-12)


def test_last_meta_solver_is_self_play_and_cycles(kuhn):
    psro = PSRO(kuhn, meta_solver="last")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        psro.run(10)
    values = [v for _, v in psro.nash_conv_history]
    # the mixture is just the newest best responses, and iterated best response cycles
    np.testing.assert_array_equal(psro.average_policy().probs, psro.current_policy().probs)
    assert values[6] == pytest.approx(values[2], abs=1e-12) and values[7] == pytest.approx(values[3], abs=1e-12)
    assert max(values[3:]) > 1.0


def test_prd_meta_solver_on_kuhn(kuhn):
    psro = PSRO(kuhn, meta_solver="prd", prd_iterations=2000, prd_stepsize=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        psro.run(8)
    values = [v for _, v in psro.nash_conv_history]
    assert values[:3] == pytest.approx([11 / 12, 5 / 6, 1 / 3], abs=1e-4)
    assert min(values[3:]) < 0.2


def test_three_player_kuhn_with_uniform_meta_solver():
    game = lk.games.load("kuhn_poker(players=3)")
    psro = PSRO(game, meta_solver="uniform")
    psro.run(4)
    assert psro.meta_game.shape == (3, 5, 5, 5)
    members = [pop[-1] for pop in psro.populations]
    direct = lk.expected_payoffs(game, joint(game, [psro.populations[0][1], members[1], psro.populations[2][0]]))
    np.testing.assert_allclose(psro.meta_game[:, 1, -1, 0], direct, atol=1e-12)
    values = [v for _, v in psro.nash_conv_history]
    assert values[-1] < values[0]


# ----------------------------------------------------------------------------- meta-solvers
def test_zero_sum_matrix_equilibrium_biased_rps():
    A = lk.games.biased_rock_paper_scissors().A
    x, y, value = zero_sum_matrix_equilibrium(A)
    np.testing.assert_allclose(x, [0.25, 0.5, 0.25], atol=1e-9)
    np.testing.assert_allclose(y, [0.25, 0.5, 0.25], atol=1e-9)
    assert value == pytest.approx(0.0, abs=1e-12)


def test_zero_sum_matrix_equilibrium_with_a_saddle_point():
    M = np.array([[3.0, 1.0], [4.0, 2.0], [0.0, 5.0]])        # row 1 dominates row 0
    x, y, value = zero_sum_matrix_equilibrium(M)
    # rows 1 and 2 mixed (p, 1 - p) equalize the columns: 4p = 2p + 5(1 - p), p = 5/7, value 20/7;
    # columns (q, 1 - q) equalize the rows: 4q + 2(1 - q) = 5(1 - q), q = 3/7
    assert value == pytest.approx(20 / 7, abs=1e-9)
    np.testing.assert_allclose(x, [0, 5 / 7, 2 / 7], atol=1e-9)
    np.testing.assert_allclose(y, [3 / 7, 4 / 7], atol=1e-9)


def test_projected_replicator_dynamics_on_rock_paper_scissors():
    A = lk.games.rock_paper_scissors().A
    sigma = projected_replicator_dynamics(np.stack([A, -A]), iterations=3000, stepsize=0.05)
    for s in sigma:
        np.testing.assert_allclose(s, np.full(3, 1 / 3), atol=0.05)


@pytest.mark.parametrize("v, lower", [([0.2, 0.5, 0.3], 0.0), ([1.5, -0.4, -0.1], 0.01), ([0.0, 0.0, 3.0], 0.1)])
def test_simplex_projection(v, lower):
    p = _project_simplex(np.array(v), lower)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(p >= lower - 1e-15)
    # optimality: no feasible point on a small grid is closer to v
    grid = [np.array([a, b, 1 - a - b]) for a in np.linspace(0, 1, 51) for b in np.linspace(0, 1, 51)]
    grid = [q for q in grid if np.all(q >= lower)]
    assert np.linalg.norm(p - v) <= min(np.linalg.norm(q - v) for q in grid) + 1e-12


# ----------------------------------------------------------------------------- errors
def test_bad_arguments(kuhn):
    with pytest.raises(ValueError, match="'nash', 'uniform', 'last', 'prd'"):
        PSRO(kuhn, meta_solver="alpharank")
    with pytest.raises(ValueError, match="oracle"):
        PSRO(kuhn, oracle="rl")
    with pytest.raises(ValueError, match="two-player zero-sum"):
        PSRO("kuhn_poker(players=3)", meta_solver="nash")
    with pytest.raises(ValueError, match="iterations"):
        PSRO(kuhn).run(-1)


@pytest.mark.parametrize("meta_solver", ["nash", "uniform"])
def test_incremental_meta_game_equals_a_full_recomputation_on_leduc(meta_solver):
    """Each iteration computes only the meta-game slabs with a new member; after several iterations
    the table must be the full recomputation digit for digit, and its entries (old members against
    old, old against new, new against new) the expected payoffs evaluated directly."""
    leduc = lk.games.load("leduc_poker")
    psro = PSRO(leduc, meta_solver=meta_solver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        psro.run(7)
    assert psro.meta_game.shape == (2, 8, 8)
    np.testing.assert_array_equal(psro.meta_game, psro._compute_meta_game())
    for i, j in [(0, 0), (1, 3), (3, 1), (0, 7), (7, 0), (5, 6), (7, 7)]:
        direct = lk.expected_payoffs(leduc, joint(leduc, [psro.populations[0][i], psro.populations[1][j]]))
        np.testing.assert_allclose(psro.meta_game[:, i, j], direct, rtol=0, atol=1e-12)


def test_incremental_meta_game_on_three_players():
    game = lk.games.load("kuhn_poker(players=3)")
    psro = PSRO(game, meta_solver="uniform")
    psro.run(3)
    np.testing.assert_array_equal(psro.meta_game, psro._compute_meta_game())
    members = [psro.populations[0][3], psro.populations[1][0], psro.populations[2][2]]
    np.testing.assert_allclose(psro.meta_game[:, 3, 0, 2], lk.expected_payoffs(game, joint(game, members)),
                               rtol=0, atol=1e-12)
