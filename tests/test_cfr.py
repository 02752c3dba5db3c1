"""CFR, CFR+ and DCFR against OpenSpiel (policies and NashConv to 1e-9), against the numbers in
reference/openspiel.md, and the regret-matching building blocks against their definitions."""
import numpy as np
import pytest

import labkit as lk
from labkit.games.openspiel_adapter import openspiel_states as representative_states
from labkit import regret
from labkit.cfr import CFR, DCFR, CFRPlus

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python.algorithms import cfr as os_cfr  # noqa: E402
from open_spiel.python.algorithms import discounted_cfr as os_dcfr  # noqa: E402


# ----------------------------------------------------------------------------- helpers
def openspiel_probs(game, states, os_policy):
    """An OpenSpiel policy as a labkit (num_infosets, num_actions) array."""
    probs = np.zeros(game.legal_mask.shape)
    for i, state in enumerate(states):
        for a, p in os_policy.action_probabilities(state).items():
            probs[i, a] = p
    return probs


def assert_same_policies(solver, os_solver, states):
    game = solver.game
    np.testing.assert_allclose(solver.average_policy().probs,
                               openspiel_probs(game, states, os_solver.average_policy()), atol=1e-9, rtol=0)
    np.testing.assert_allclose(solver.current_policy().probs,
                               openspiel_probs(game, states, os_solver.current_policy()), atol=1e-9, rtol=0)


@pytest.fixture(scope="module")
def kuhn():
    game = lk.games.load("kuhn_poker")
    os_game = pyspiel.load_game("kuhn_poker")
    return game, os_game, representative_states(game, os_game)


@pytest.fixture(scope="module")
def leduc():
    game = lk.games.load("leduc_poker")
    os_game = pyspiel.load_game("leduc_poker")
    return game, os_game, representative_states(game, os_game)


# ----------------------------------------------------------------------------- Kuhn vs OpenSpiel
KUHN_VARIANTS = {
    "simultaneous": (lambda g: CFR(g),
                     lambda g: os_cfr._CFRSolver(g, regret_matching_plus=False, alternating_updates=False,
                                                 linear_averaging=False)),
    "alternating": (lambda g: CFR(g, alternating_updates=True), lambda g: os_cfr.CFRSolver(g)),
    "cfr_plus": (lambda g: CFRPlus(g), lambda g: os_cfr.CFRPlusSolver(g)),
    "rm_plus_linear_simultaneous": (
        lambda g: CFR(g, regret_matching_plus=True, linear_averaging=True),
        lambda g: os_cfr._CFRSolver(g, regret_matching_plus=True, alternating_updates=False, linear_averaging=True)),
    "dcfr": (lambda g: DCFR(g), lambda g: os_dcfr.DCFRSolver(g)),
    "lcfr": (lambda g: DCFR(g, alpha=1, beta=1, gamma=1), lambda g: os_dcfr.LCFRSolver(g)),
}


@pytest.mark.parametrize("variant", sorted(KUHN_VARIANTS))
def test_kuhn_matches_openspiel_python_every_iteration(kuhn, variant):
    game, os_game, states = kuhn
    make, make_os = KUHN_VARIANTS[variant]
    solver, os_solver = make(game), make_os(os_game)
    for t in range(1, 31):
        solver.step()
        os_solver.evaluate_and_update_policy()
        if t in (1, 2, 3, 10, 30):
            assert_same_policies(solver, os_solver, states)
    assert solver.iteration == 30
    from open_spiel.python.algorithms import exploitability
    ours = lk.nash_conv(game, solver.average_policy())
    theirs = exploitability.nash_conv(os_game, os_solver.average_policy())
    assert abs(ours - theirs) < 1e-9


@pytest.mark.parametrize("make, expected", [
    (lambda g: CFR(g), [0.192417, 0.051349, 0.014538]),
    (lambda g: CFR(g, alternating_updates=True), [0.137398, 0.016452, 0.0018752]),
    (lambda g: CFRPlus(g), [0.065374, 0.0023888, 0.00017473]),
    (lambda g: CFR(g, regret_matching_plus=True, linear_averaging=True), [0.142482, 0.031484, 0.0056562]),
    (lambda g: CFR(g, alternating_updates=True, linear_averaging=True), [0.176105, 0.013626, 0.0012372]),
    (lambda g: CFR(g, alternating_updates=True, regret_matching_plus=True), [0.117082, 0.0086935, 0.00095996]),
])
def test_kuhn_nash_conv_matches_reference_table(kuhn, make, expected):
    """reference/openspiel.md §5.1, to the last digit printed there."""
    game = kuhn[0]
    solver = make(game)
    for T, value in zip((10, 100, 1000), expected):
        solver.run(T - solver.iteration)
        last_digit = 10.0 ** -len(str(value).split(".")[1])        # one unit of the last printed digit
        assert abs(lk.nash_conv(game, solver.average_policy()) - value) <= last_digit


# ----------------------------------------------------------------------------- Leduc vs OpenSpiel
def test_leduc_simultaneous_cfr_matches_openspiel_python(leduc):
    game, os_game, states = leduc
    solver = CFR(game)
    os_solver = os_cfr._CFRSolver(os_game, regret_matching_plus=False, alternating_updates=False,
                                  linear_averaging=False)
    for _ in range(10):
        solver.step()
        os_solver.evaluate_and_update_policy()
    assert_same_policies(solver, os_solver, states)
    assert round(lk.nash_conv(game, solver.average_policy()), 6) == 1.854037     # §5.2


@pytest.mark.parametrize("name", ["CFRSolver", "CFRPlusSolver"])
def test_leduc_matches_openspiel_cpp(leduc, name):
    game, os_game, states = leduc
    solver = CFR(game, alternating_updates=True) if name == "CFRSolver" else CFRPlus(game)
    os_solver = getattr(pyspiel, name)(os_game)
    for t in range(1, 31):
        solver.step()
        os_solver.evaluate_and_update_policy()
        if t in (1, 10, 30):
            np.testing.assert_allclose(solver.average_policy().probs,
                                       openspiel_probs(game, states, os_solver.average_policy()), atol=1e-9, rtol=0)
            ours = lk.nash_conv(game, solver.average_policy())
            assert abs(ours - pyspiel.nash_conv(os_game, os_solver.average_policy())) < 1e-9
        if t == 10:
            expected = 1.777158 if name == "CFRSolver" else 1.220878            # §5.2
            assert round(lk.nash_conv(game, solver.average_policy()), 6) == expected


def test_leduc_dcfr_matches_openspiel(leduc):
    game, os_game, states = leduc
    solver, os_solver = DCFR(game), os_dcfr.DCFRSolver(os_game)
    for _ in range(3):
        solver.step()
        os_solver.evaluate_and_update_policy()
    assert_same_policies(solver, os_solver, states)


def test_three_player_kuhn_regrets_match_openspiel():
    """Three-player Kuhn has exact ties (e.g. J|pp under the uniform policy), where the sign of a
    rounding error decides regret matching; so compare the first iteration's regrets, not later
    policies."""
    game = lk.games.load("kuhn_poker(players=3)")
    os_game = pyspiel.load_game("kuhn_poker(players=3)")
    states = representative_states(game, os_game)
    solver = CFR(game)
    os_solver = KUHN_VARIANTS["simultaneous"][1](os_game)
    solver.step()
    os_solver.evaluate_and_update_policy()
    ours = solver.tree.to_game_order(solver.cumulative_regret)
    for i, state in enumerate(states):
        node = os_solver._info_state_nodes[state.information_state_string()]
        for a, r in node.cumulative_regret.items():
            assert abs(ours[i, a] - r) < 1e-12
    assert np.abs(ours).max() > 0.1
    np.testing.assert_allclose(solver.average_policy().probs,
                               openspiel_probs(game, states, os_solver.average_policy()), atol=1e-12)


# ----------------------------------------------------------------------------- behaviour
def test_counterfactual_pass_equals_evaluate_module(leduc):
    """The fused sequence-form pass gives the same counterfactual values as labkit.evaluate."""
    game = leduc[0]
    rng = np.random.default_rng(3)
    probs = lk.policy.normalize_rows(game, rng.random(game.legal_mask.shape) * game.legal_mask)
    solver = CFR(game)
    sigma = solver.tree.from_game_order(probs)
    reach, q, v, others_reach = solver._pass(sigma)
    expected = lk.counterfactual_values(game, probs)
    np.testing.assert_allclose(solver.tree.to_game_order(q), expected, atol=1e-12)
    np.testing.assert_allclose(solver.tree.to_game_order(reach), lk.policy.realization_weights(game, probs),
                               atol=1e-12)
    np.testing.assert_allclose(solver.tree.to_game_order(v[:, None])[:, 0], (expected * probs).sum(axis=1),
                               atol=1e-12)


def test_run_stops_at_target_and_records_history(kuhn):
    solver = CFRPlus(kuhn[0])
    records = solver.run(10_000, target_nash_conv=0.01, eval_every=5)
    assert records and records[-1][1] <= 0.01 and all(v > 0.01 for _, v in records[:-1])
    assert solver.iteration == records[-1][0] < 10_000
    assert solver.iteration % 5 == 0
    assert solver.nash_conv_history == records


def test_run_with_progress_bar(kuhn, capsys):
    solver = CFR(kuhn[0])
    records = solver.run(20, progress=True, eval_every=10)
    assert [t for t, _ in records] == [10, 20]
    assert solver.iteration == 20
    assert "CFR" in capsys.readouterr().err              # tqdm writes its bar to stderr


@pytest.mark.parametrize("kwargs, error", [
    ({"alternating_updates": "yes"}, TypeError),
    ({"regret_matching_plus": 1}, TypeError),
])
def test_bad_flags(kuhn, kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs))):
        CFR(kuhn[0], **kwargs)


def test_bad_dcfr_parameters(kuhn):
    with pytest.raises(TypeError, match="alpha"):
        DCFR(kuhn[0], alpha="1.5")
    with pytest.raises(ValueError, match="gamma"):
        DCFR(kuhn[0], gamma=float("inf"))


@pytest.mark.parametrize("kwargs", [{"iterations": -1}, {"iterations": 2.5}, {"iterations": 3, "eval_every": -2},
                                    {"iterations": 3, "target_nash_conv": -1.0}, {"iterations": 3, "policy": "best"}])
def test_bad_run_arguments(kuhn, kwargs):
    with pytest.raises(ValueError):
        CFR(kuhn[0]).run(**kwargs)


def test_policies_are_distributions_and_solver_is_lazily_exported(leduc):
    game = leduc[0]
    solver = lk.CFR(game)
    assert isinstance(solver, CFR) and lk.CFRPlus is CFRPlus
    solver.run(3)
    for pol in (solver.average_policy(), solver.current_policy()):
        lk.policy.validate_probs(game, pol.probs)


# ----------------------------------------------------------------------------- regret.py
def test_regret_matching_definition():
    rng = np.random.default_rng(0)
    legal = rng.random((50, 4)) < 0.7
    legal[:, 0] = True
    R = rng.normal(size=(50, 4))
    R[:5] = -1.0                                     # no positive regret: uniform
    sigma = regret.regret_matching(R, legal)
    for r, m, s in zip(R, legal, sigma):
        pos = np.where(m, np.maximum(r, 0), 0)
        expected = pos / pos.sum() if pos.sum() > 0 else m / m.sum()
        np.testing.assert_allclose(s, expected, atol=1e-15)


def test_regret_matching_plus_and_hedge():
    np.testing.assert_array_equal(regret.regret_matching_plus_update(np.array([1.0, -2.0]), np.array([-3.0, 1.0])),
                                  [0.0, 0.0])
    legal = np.array([[True, True, False]])
    p = regret.hedge(np.array([[0.0, np.log(3.0), 50.0]]), legal, 1.0)
    np.testing.assert_allclose(p, [[0.25, 0.75, 0.0]])
    assert np.isfinite(regret.hedge(np.array([[1e4, 0.0, 0.0]]), np.ones((1, 3), bool), 10.0)).all()
    with pytest.raises(ValueError, match="learning_rate"):
        regret.hedge(np.zeros((1, 2)), np.ones((1, 2), bool), 0.0)


# ----------------------------------------------------------------------------- properties
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=60, deadline=None, derandomize=True)
@given(regrets=arrays(float, (6, 4), elements=st.floats(-1e6, 1e6)),
       legal=arrays(bool, (6, 4)))
def test_regret_matching_is_a_distribution_over_legal_actions(regrets, legal):
    legal[:, 0] = True
    sigma = regret.regret_matching(regrets, legal)
    assert np.all(sigma >= 0) and np.all(sigma[~legal] == 0)
    np.testing.assert_allclose(sigma.sum(axis=1), 1.0)
    positive = np.where(legal, np.maximum(regrets, 0), 0)
    rows = positive.sum(axis=1) > 0
    # proportional to positive regret where there is some
    np.testing.assert_allclose(sigma[rows] * positive[rows].sum(axis=1, keepdims=True), positive[rows], rtol=1e-9,
                               atol=1e-300)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(payoffs=arrays(float, st.tuples(st.integers(2, 4), st.integers(2, 4)), elements=st.floats(-3, 3)))
def test_cfr_plus_reaches_the_lp_value_of_random_matrix_games(payoffs):
    """An independent check: the sequence-form LP's game value."""
    game = lk.games.load(lk.games.MatrixGame(payoffs))
    solver = CFRPlus(game)
    solver.run(400)
    average = solver.average_policy()
    _, value = lk.zero_sum_equilibrium(game)
    assert lk.nash_conv(game, average) < 0.05
    assert abs(lk.expected_payoffs(game, average)[0] - value) < 0.05
