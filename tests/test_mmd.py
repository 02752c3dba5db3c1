"""Magnetic mirror descent: OpenSpiel's MMDDilatedEnt iterate for iterate, the numbers of
reference/openspiel.md §5.7, an independent QRE of a matrix game, the chapter's regularized
dynamics, and last-iterate convergence with a fixed and a moving magnet."""
import numpy as np
import pytest
from scipy.optimize import fsolve

import labkit as lk
from labkit import dynamics
from labkit.mmd import MMD, sequence_form_gradient, sequence_form_payoff_max


@pytest.fixture(scope="module")
def brps():
    return lk.games.load("biased_rock_paper_scissors")


def nash_convs(game, solver):
    return lk.nash_conv(game, solver.current_policy()), lk.nash_conv(game, solver.average_policy())


# ----------------------------------------------------------------------------- OpenSpiel
def infoset_states(game, os_game):
    """For each labkit infoset, an OpenSpiel state in it (same action ids, same histories)."""
    states, chosen = [os_game.new_initial_state()], {}
    for h in range(1, game.num_histories):
        states.append(states[game.parent[h]].child(int(game.action[h])))
        chosen.setdefault(int(game.infoset[h]), states[h])
    return [chosen[i] for i in range(game.num_infosets)]


def as_array(game, states, os_policy):
    probs = np.zeros(game.legal_mask.shape)
    for i, state in enumerate(states):
        for a, p in os_policy.action_probabilities(state).items():
            probs[i, a] = p
    return probs


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_kuhn_iterates_equal_openspiel(kuhn, alpha):
    """magnet="entropy" is OpenSpiel's parametrization: the same policies at every iteration."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms.mmd_dilated import MMDDilatedEnt
    os_game = pyspiel.load_game("kuhn_poker")
    states = infoset_states(kuhn, os_game)
    ours, theirs = MMD(kuhn, alpha=alpha, magnet="entropy"), MMDDilatedEnt(os_game, alpha=alpha)
    assert ours.stepsize == pytest.approx(theirs.stepsize, rel=1e-14)
    for t in range(1, 31):
        ours.step()
        theirs.update_sequences()
        np.testing.assert_allclose(ours.current_policy().probs, as_array(kuhn, states, theirs.get_policies()),
                                   atol=1e-9, rtol=0)
        np.testing.assert_allclose(ours.average_policy().probs, as_array(kuhn, states, theirs.get_avg_policies()),
                                   atol=1e-9, rtol=0)
        if t % 10 == 0:
            assert ours.regularized_gap() == pytest.approx(theirs.get_gap(), abs=1e-9)


def test_leduc_iterates_equal_openspiel(leduc):
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms.mmd_dilated import MMDDilatedEnt
    os_game = pyspiel.load_game("leduc_poker")
    states = infoset_states(leduc, os_game)
    ours, theirs = MMD(leduc, alpha=0.05, magnet="entropy"), MMDDilatedEnt(os_game, alpha=0.05)
    for _ in range(2):
        ours.step()
        theirs.update_sequences()
    np.testing.assert_allclose(ours.current_policy().probs, as_array(leduc, states, theirs.get_policies()),
                               atol=1e-9, rtol=0)
    np.testing.assert_allclose(ours.average_policy().probs, as_array(leduc, states, theirs.get_avg_policies()),
                               atol=1e-9, rtol=0)


def test_sequence_form_payoff_scale(kuhn, leduc):
    """reference/openspiel.md §5.7: max|A| = 0.3333 on Kuhn and 0.1083 on Leduc."""
    assert sequence_form_payoff_max(kuhn) == pytest.approx(1 / 3, abs=1e-12)
    assert sequence_form_payoff_max(leduc) == pytest.approx(0.1083, abs=5e-5)


# (T, last-iterate NashConv, average NashConv) from reference/openspiel.md §5.7
KUHN_005 = [(1, 0.8172, 0.8670), (10, 0.4126, 0.4968), (100, 0.0808, 0.1797), (300, 0.0927, 0.1225)]
KUHN_01 = [(1, 0.7349, 0.8258), (10, 0.3456, 0.4021), (100, 0.2074, 0.2346), (300, 0.2074, 0.2165)]
LEDUC_005 = [(1, 4.960, 4.825), (10, 3.653, 3.995), (100, 3.268, 3.316)]


@pytest.mark.parametrize("spec, alpha, table, digits", [("kuhn_poker", 0.05, KUHN_005, 4),
                                                         ("kuhn_poker", 0.1, KUHN_01, 4),
                                                         ("leduc_poker", 0.05, LEDUC_005, 3)])
def test_openspiel_reference_numbers(spec, alpha, table, digits):
    game = lk.games.load(spec)
    solver = MMD(game, alpha=alpha, magnet="entropy")
    for T, last, average in table:
        solver.run(T - solver.iteration)
        got_last, got_average = nash_convs(game, solver)
        assert round(got_last, digits) == pytest.approx(last, abs=1e-12)
        assert round(got_average, digits) == pytest.approx(average, abs=1e-12)


# ----------------------------------------------------------------------------- matrix games
def logit_qre(A, B, alpha, magnet_x, magnet_y):
    """Solve x = softmax(A y / alpha + log magnet_x), y = softmax(x^T B / alpha + log magnet_y) with fsolve."""
    m = A.shape[0]

    def softmax(v):
        w = np.exp(v - v.max())
        return w / w.sum()

    def residual(z):
        x, y = z[:m], z[m:]
        return np.concatenate([x - softmax(A @ y / alpha + np.log(magnet_x)),
                               y - softmax(x @ B / alpha + np.log(magnet_y))])

    z = fsolve(residual, np.concatenate([magnet_x, magnet_y]), xtol=1e-12)
    assert np.abs(residual(z)).max() < 1e-12
    return z[:m], z[m:]


@pytest.mark.parametrize("alpha, magnet_x", [(0.2, (1 / 3, 1 / 3, 1 / 3)), (0.5, (0.6, 0.3, 0.1))])
def test_matrix_game_fixed_point_is_the_logit_qre(brps, alpha, magnet_x):
    matrix = lk.games.biased_rock_paper_scissors()
    magnet_y = np.array([0.2, 0.5, 0.3])
    magnet = np.array([magnet_x, magnet_y])
    solver = MMD(brps, alpha=alpha, stepsize=0.5, magnet=magnet)
    solver.run(3000, target_nash_conv=None)
    x, y = logit_qre(matrix.A, matrix.B, alpha, np.array(magnet_x), magnet_y)
    np.testing.assert_allclose(solver.current_policy().probs, [x, y], atol=1e-9)
    assert solver.qre_residual() < 1e-12
    assert abs(solver.regularized_gap()) < 1e-12


def test_matrix_game_iterates_equal_the_chapter_dynamics(brps):
    """On a matrix game MMD is the chapter's regularized step, fixed or moving magnet."""
    matrix = lk.games.biased_rock_paper_scissors()
    start = np.array([dynamics.CHAPTER_X0, dynamics.CHAPTER_Y0])
    for method, every in (("regularized, fixed magnet", None), ("regularized, moving magnet", 200)):
        traj = dynamics.run(matrix, method, steps=1000, eta=0.1, alpha=0.2, reset=200,
                            x0=dynamics.CHAPTER_X0, y0=dynamics.CHAPTER_Y0)
        solver = MMD(brps, alpha=0.2, stepsize=0.1, initial_policy=start, magnet_update_every=every)
        for t in range(1, 1001):
            solver.step()
            if t % 100 == 0:
                np.testing.assert_allclose(solver.current_policy().probs, [traj.x[t], traj.y[t]], atol=1e-10)
    # the chapter's printed limit of the fixed-magnet dynamics
    fixed = MMD(brps, alpha=0.2, stepsize=0.1, initial_policy=start)
    fixed.run(3000)
    assert np.array2string(fixed.current_policy().probs[0], precision=3) == "[0.289 0.487 0.224]"


# ----------------------------------------------------------------------------- convergence
def test_kuhn_fixed_magnet_converges_to_the_regularized_equilibrium(kuhn):
    solver = MMD(kuhn, alpha=0.05)
    solver.run(600)
    at_600 = lk.nash_conv(kuhn, solver.current_policy())
    solver.run(600)
    assert solver.qre_residual() < 1e-9                     # measured: 1.2e-11 at 1200, 4e-6 at 600
    assert abs(solver.regularized_gap()) < 1e-12
    at_1200 = lk.nash_conv(kuhn, solver.current_policy())
    assert at_1200 == pytest.approx(at_600, abs=1e-6)       # settled ...
    assert at_1200 > 0.05                                   # ... on the biased QRE, not on Nash
    # the fixed point of the regularized best response is where the iterates went
    np.testing.assert_allclose(solver.regularized_response().probs, solver.current_policy().probs, atol=1e-9)


def test_kuhn_entropy_regularized_limit_is_openspiels(kuhn):
    """§5.7: OpenSpiel's last iterate settles at NashConv 0.0925 (alpha = 0.05, T = 1000 and 10000)."""
    solver = MMD(kuhn, alpha=0.05, magnet="entropy")
    solver.run(1000)
    assert round(lk.nash_conv(kuhn, solver.current_policy()), 4) == pytest.approx(0.0925, abs=1e-12)
    assert solver.qre_residual() < 1e-7


def test_leduc_fixed_magnet_converges_to_the_regularized_equilibrium(leduc):
    solver = MMD(leduc, alpha=0.05)
    residuals = []
    for _ in range(4):
        solver.run(25)
        residuals.append(solver.qre_residual())
    assert residuals[-1] < 1e-6
    assert residuals[-1] < residuals[0] / 100
    assert lk.nash_conv(leduc, solver.current_policy()) > 1.0      # the QRE is far from Nash at this alpha


def test_kuhn_moving_magnet_goes_to_nash(kuhn):
    fixed = MMD(kuhn, alpha=0.05)
    moving = MMD(kuhn, alpha=0.05, magnet_update_every=100)
    fixed.run(1000)
    moving.run(1000)
    assert lk.nash_conv(kuhn, moving.current_policy()) < 1e-4
    assert lk.nash_conv(kuhn, fixed.current_policy()) > 0.05
    value = lk.expected_payoffs(kuhn, moving.current_policy())[0]
    assert value == pytest.approx(-1 / 18, abs=1e-4)


def test_leduc_moving_magnet_leaves_the_qre_behind(leduc):
    moving = MMD(leduc, alpha=0.05, magnet_update_every=20)
    history = moving.run(300, eval_every=100, policy="current")
    values = [v for _, v in history]
    assert values[-1] < values[0] < 3.268                  # below the fixed magnet's QRE (§5.7: 3.268)
    assert values[-1] < 0.9


def test_geometric_magnet_step_goes_to_nash(kuhn):
    solver = MMD(kuhn, alpha=0.05, magnet_stepsize=0.05)
    solver.run(1500)
    assert lk.nash_conv(kuhn, solver.current_policy()) < 1e-3


# ----------------------------------------------------------------------------- properties and errors
@pytest.mark.parametrize("spec", ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker"])
def test_sequence_form_gradient_gives_the_payoff(spec):
    """The payoff is linear in a player's realization plan: v_i = <g_i, x_i>."""
    game = lk.games.load(spec)
    rng = np.random.default_rng(0)
    probs = lk.policy.normalize_rows(game, rng.random(game.legal_mask.shape))
    g = sequence_form_gradient(game, probs)
    x = lk.policy.realization_weights(game, probs)
    values = [(g * x)[game.infoset_player == p].sum() for p in range(game.num_players)]
    np.testing.assert_allclose(values, lk.expected_payoffs(game, probs), atol=1e-12)


def test_three_player_kuhn_runs_with_an_explicit_stepsize():
    game = lk.games.load("kuhn_poker(players=3)")
    with pytest.raises(ValueError, match="stepsize"):
        MMD(game, alpha=0.1)
    solver = MMD(game, alpha=0.1, stepsize=0.5)
    solver.run(200)
    assert solver.qre_residual() < solver.qre_residual(lk.uniform_policy(game))


def test_regularized_gap_is_nonnegative(kuhn):
    rng = np.random.default_rng(1)
    solver = MMD(kuhn, alpha=0.1)
    for _ in range(5):
        probs = lk.policy.normalize_rows(kuhn, rng.random(kuhn.legal_mask.shape) + 0.01)
        assert solver.regularized_gap(probs) > 0


@pytest.mark.parametrize("kwargs, error", [
    ({"alpha": -0.1}, "alpha"),
    ({"alpha": 0.0}, "stepsize"),
    ({"alpha": 0.1, "stepsize": 0.0}, "stepsize"),
    ({"alpha": 0.1, "magnet": "uniformm"}, "uniform"),
    ({"alpha": 0.1, "magnet_update_every": 0}, "magnet_update_every"),
    ({"alpha": 0.1, "magnet_stepsize": 1.5}, "magnet_stepsize"),
    ({"alpha": 0.1, "magnet_update_every": 5, "magnet_stepsize": 0.1}, "not both"),
])
def test_bad_arguments(kuhn, kwargs, error):
    with pytest.raises(ValueError, match=error):
        MMD(kuhn, **kwargs)


def test_magnet_needs_full_support(kuhn):
    pure = lk.TabularPolicy.pure(kuhn, [0] * kuhn.num_infosets)
    with pytest.raises(ValueError, match="positive probability"):
        MMD(kuhn, alpha=0.1, magnet=pure)


def test_unregularized_needs_a_stepsize_and_runs(kuhn):
    solver = MMD(kuhn, alpha=0.0, stepsize=1.0)
    solver.run(200)
    assert lk.nash_conv(kuhn, solver.average_policy()) < 0.2
    with pytest.raises(ValueError, match="alpha > 0"):
        solver.qre_residual()


# ----------------------------------------------------------------------------- action-value feedback
def test_action_value_feedback_converges_to_the_agent_qre(kuhn):
    """The fixed point satisfies pi(a | I) ∝ exp(q(I, a) / alpha), with q the expected action values
    recomputed here from labkit's public evaluation functions, history by history."""
    alpha = 0.2
    solver = MMD(kuhn, alpha=alpha, stepsize=0.5, feedback="action values")
    solver.run(400)
    assert solver.qre_residual() < 1e-8                   # measured 1.2e-10
    probs = solver.current_policy().probs
    cf = lk.counterfactual_values(kuhn, probs)
    reach = lk.reach_probabilities(kuhn, probs)
    others = np.zeros(kuhn.num_infosets)
    for h in np.flatnonzero(kuhn.infoset >= 0):
        others[kuhn.infoset[h]] += np.prod(np.delete(reach[:, h], kuhn.player[h]))
    q = cf / others[:, None]
    logit = np.exp(q / alpha) * kuhn.legal_mask
    np.testing.assert_allclose(probs, logit / logit.sum(1, keepdims=True), atol=1e-8)
    # ... which is not the sequence-form (dilated-entropy) QRE of the same alpha
    dilated = MMD(kuhn, alpha=alpha, stepsize=0.5)
    dilated.run(400)
    assert np.abs(dilated.current_policy().probs - probs).max() > 0.01


def test_both_feedbacks_agree_on_a_matrix_game(brps):
    a = MMD(brps, alpha=0.2, stepsize=0.1, feedback="action values")
    b = MMD(brps, alpha=0.2, stepsize=0.1)
    a.run(300)
    b.run(300)
    np.testing.assert_allclose(a.current_policy().probs, b.current_policy().probs, atol=1e-12)


def test_action_value_feedback_needs_a_stepsize(kuhn):
    with pytest.raises(ValueError, match="explicit stepsize"):
        MMD(kuhn, alpha=0.1, feedback="action values")
    with pytest.raises(ValueError, match="feedback must be one of"):
        MMD(kuhn, alpha=0.1, feedback="q")
    with pytest.raises(ValueError, match="qre_residual"):
        MMD(kuhn, alpha=0.1, stepsize=0.1, feedback="action values").regularized_gap()


def test_unregularized_kuhn_matches_openspiel_and_stays_finite(kuhn):
    """§5.7, alpha = 0, eta = 1: last / average NashConv 0.6988 / 0.8077 (T=1), 0.3078 / 0.3971 (10),
    0.3112 / 0.0795 (100), 0.2864 / 0.0301 (300), 0.4909 / 0.0149 (1000), average 0.00664 at 4671.
    OpenSpiel's sequences underflow at 4671 and turn to NaN; labkit updates in log space and
    does not."""
    table = [(1, 0.6988, 0.8077), (10, 0.3078, 0.3971), (100, 0.3112, 0.0795), (300, 0.2864, 0.0301),
             (1000, 0.4909, 0.0149)]
    solver = MMD(kuhn, alpha=0.0, stepsize=1.0)
    for T, last, average in table:
        solver.run(T - solver.iteration)
        got_last, got_average = nash_convs(kuhn, solver)
        assert (round(got_last, 4), round(got_average, 4)) == pytest.approx((last, average), abs=1e-12)
    solver.run(4671 - solver.iteration)
    assert round(lk.nash_conv(kuhn, solver.average_policy()), 5) == pytest.approx(0.00664, abs=1e-12)
    solver.run(30)
    assert np.all(np.isfinite(solver.current_policy().probs))
    assert np.all(np.isfinite(solver.average_policy().probs))
