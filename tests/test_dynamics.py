"""labkit.dynamics beyond the chapter's table: validation, the other methods, general-sum games,
and closed-form facts about the dynamics (conserved KL of the replicator, Nash of the dilemma)."""
import numpy as np
import pytest

import labkit as lk
from labkit import dynamics

EQ = np.array([0.25, 0.5, 0.25])          # biased RPS equilibrium (closed form, both players)


def brps():
    return lk.games.biased_rock_paper_scissors()


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(ValueError, match="fictitious play") as err:
        dynamics.run(brps(), "ficticious play")
    assert "regularized, moving magnet" in str(err.value)


@pytest.mark.parametrize("alias, name", [("Hedge", "mirror descent"),
                                         ("optimistic_hedge", "optimistic mirror descent"),
                                         ("R-NaD", "regularized, moving magnet"),
                                         ("Fictitious-Play", "fictitious play")])
def test_aliases(alias, name):
    assert dynamics.method_name(alias) == name


@pytest.mark.parametrize("kwargs, message", [
    ({"x0": (0.5, 0.5)}, "x0 must be a vector of 3"),
    ({"y0": (0.5, 0.6, -0.1)}, "y0 must be nonnegative"),
    ({"eta": 0.0}, "eta"),
    ({"alpha": -1.0}, "alpha"),
    ({"steps": -3}, "steps"),
    ({"reset": 0}, "reset"),
    ({"x0": (1.0, 0.0, 0.0)}, "strictly positive"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dynamics.run(brps(), "mirror descent", **kwargs)


def test_game_type_is_checked():
    with pytest.raises(TypeError, match="MatrixGame"):
        dynamics.run(lk.games.load("kuhn_poker"), "mirror descent")


@pytest.mark.parametrize("method", dynamics.METHODS)
def test_every_method_stays_on_the_simplex(method):
    traj = dynamics.run(brps(), method, steps=300, x0=dynamics.CHAPTER_X0, y0=dynamics.CHAPTER_Y0)
    for strategies in (traj.x, traj.y, traj.x_average, traj.y_average):
        assert strategies.shape == (301, 3)
        assert np.all(strategies >= -1e-12)
        np.testing.assert_allclose(strategies.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(traj.exploitability >= -1e-12)
    # zero-sum: NashConv and the chapter's exploitability are the same number
    np.testing.assert_allclose(traj.nash_conv, traj.exploitability, atol=1e-12)


def test_exploitability_of_the_start_by_hand():
    traj = dynamics.run(brps(), "mirror descent", steps=1, x0=dynamics.CHAPTER_X0, y0=dynamics.CHAPTER_Y0)
    A = brps().A
    x0, y0 = np.array(dynamics.CHAPTER_X0), np.array(dynamics.CHAPTER_Y0)
    # A y0 = (1.0, -0.4, -0.2), x0^T A = (-0.2, -0.4, 1.0): gap 1.0 - (-0.4) = 1.4
    assert traj.exploitability[0] == pytest.approx(1.4, abs=1e-12)
    assert traj.exploitability[0] == pytest.approx((A @ y0).max() - (x0 @ A).min())


def test_optimistic_hedge_converges_in_the_last_iterate():
    """Daskalakis and Panageas (2019): optimistic Hedge's current strategies converge to the unique
    equilibrium, where plain Hedge's spiral out."""
    opt = dynamics.run(brps(), "optimistic hedge", steps=5000, x0=dynamics.CHAPTER_X0, y0=dynamics.CHAPTER_Y0)
    plain = dynamics.run(brps(), "hedge", steps=5000, x0=dynamics.CHAPTER_X0, y0=dynamics.CHAPTER_Y0)
    assert opt.exploitability[-1] < 1e-5
    assert opt.exploitability[-1] < opt.exploitability[2000] / 100
    np.testing.assert_allclose(opt.x[-1], EQ, atol=1e-5)
    assert plain.exploitability[-1] > 1.0


def test_regret_matching_average_converges():
    traj = dynamics.run(brps(), "regret matching", steps=20000, x0=dynamics.CHAPTER_X0, y0=dynamics.CHAPTER_Y0)
    assert traj.average_exploitability[-1] < 0.02
    assert traj.average_exploitability[-1] < traj.average_exploitability[100] / 5


def test_replicator_conserves_the_kl_divergence_to_the_equilibrium():
    """In a zero-sum game with an interior equilibrium (x*, y*), KL(x*||x) + KL(y*||y) is
    constant along the replicator ODE (exercise 27.3)."""
    traj = dynamics.run(brps(), "replicator", steps=500, eta=0.05, x0=dynamics.CHAPTER_X0, y0=dynamics.CHAPTER_Y0)
    kl = (EQ * np.log(EQ / traj.x)).sum(1) + (EQ * np.log(EQ / traj.y)).sum(1)
    assert np.ptp(kl) < 1e-7
    assert np.ptp(traj.x[:, 0]) > 0.2               # it really moves (orbits)
    assert traj.times[-1] == pytest.approx(25.0)


def test_replicator_time_average_approaches_equilibrium():
    traj = dynamics.run(brps(), "replicator", steps=4000, eta=0.05, x0=dynamics.CHAPTER_X0, y0=dynamics.CHAPTER_Y0)
    np.testing.assert_allclose(traj.x_average[-1], EQ, atol=0.02)


def test_rock_paper_scissors_fictitious_play_average():
    traj = dynamics.run(lk.games.rock_paper_scissors(), "fictitious play", steps=3000,
                        x0=(0.5, 0.3, 0.2), y0=(0.2, 0.3, 0.5))
    np.testing.assert_allclose(traj.x_average[-1], np.full(3, 1 / 3), atol=0.03)


def test_general_sum_prisoners_dilemma():
    """Both defect is the unique equilibrium: best response reaches it in one step, NashConv 0;
    from mutual cooperation NashConv is 2 (each gains temptation - reward = 2)."""
    game = lk.games.prisoners_dilemma()
    traj = dynamics.run(game, "best response", steps=3, x0=(1.0, 0.0), y0=(1.0, 0.0))
    assert traj.nash_conv[0] == pytest.approx(4.0)
    np.testing.assert_array_equal(traj.x[1:], [[0.0, 1.0]] * 3)
    assert traj.nash_conv[-1] == 0.0
    with pytest.raises(ValueError, match="not zero-sum"):
        traj.exploitability
    assert traj.at(3)["gap"] == 0.0


def test_climbing_game_fictitious_play_reaches_a_pure_equilibrium():
    game = lk.games.climbing_game()
    traj = dynamics.run(game, "fictitious play", steps=200)
    assert traj.nash_conv[-1] == 0.0


def test_moving_magnet_beats_fixed_magnet():
    fixed = dynamics.run(brps(), "regularized, fixed magnet", steps=3000, alpha=0.2)
    moving = dynamics.run(brps(), "regularized, moving magnet", steps=3000, alpha=0.2, reset=200)
    assert fixed.exploitability[-1] > 0.1
    assert moving.exploitability[-1] < 1e-4


def test_custom_magnet_pulls_toward_itself():
    magnet = (np.array([0.8, 0.1, 0.1]), np.full(3, 1 / 3))
    pulled = dynamics.run(brps(), "regularized, fixed magnet", steps=3000, alpha=1.0, magnet=magnet)
    plain = dynamics.run(brps(), "regularized, fixed magnet", steps=3000, alpha=1.0)
    assert pulled.x[-1, 0] > plain.x[-1, 0] + 0.1
