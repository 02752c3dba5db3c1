"""Exact ties: CFR, CFR+, DCFR and EFR("cf") against CFR in rational arithmetic.

The reference (tests/exact_cfr_reference.py) computes every value as a fractions.Fraction, so a
tie is an exact 0 and regret matching plays uniformly where no regret is positive. labkit's
floating-point solvers must make the same decisions (supports equal at every iteration) and
give the same strategies to 1e-12, for the first 20 iterations, on games with many ties:
2-, 3- and 4-player Kuhn poker and goofspiel with a random point order. Where OpenSpiel's
trajectory agrees with the reference, labkit must equal OpenSpiel's too.

Measured with this file's helpers (20 iterations, Python solvers of OpenSpiel 2.0.2): OpenSpiel
follows the exact trajectory on 2- and 3-player Kuhn for CFR, CFR+ and DCFR, and departs on
4-player Kuhn at iteration 2 (CFR) and 1 (CFR+, DCFR), and on 4-card random-order goofspiel at
iteration 1 (all three), where its rounding residues decide ties.
"""
import functools

import numpy as np
import pytest

import labkit as lk
from labkit import regret
from labkit.cfr import CFR, DCFR, CFRPlus
from labkit.efr import EFR

from exact_cfr_reference import ExactCFR

ITERATIONS = 20
SIGMA_BITS = 128            # see exact_cfr_reference: strategies rounded to 2^-128, ties snapped below 2^-64

GOOFSPIEL = "goofspiel(num_cards=4,points_order=random,imp_info=True)"
SMALL_GOOFSPIEL = "goofspiel(num_cards=3,points_order=random,imp_info=True)"

# name -> (exact reference options, labkit solver); DCFR with integer exponents keeps the
# discounts t^alpha / (t^alpha + 1) rational (the paper's alpha = 1.5 does not)
VARIANTS = {
    "cfr": ({}, lambda g: CFR(g)),
    "cfr_alternating": ({"alternating": True}, lambda g: CFR(g, alternating_updates=True)),
    "cfr_plus": ({"alternating": True, "plus": True, "average_exponent": 1}, lambda g: CFRPlus(g)),
    "dcfr": ({"alternating": True, "average_exponent": 2, "discount": (2, 0)},
             lambda g: DCFR(g, alpha=2, beta=0, gamma=2)),
    "efr_cf": ({}, lambda g: EFR(g, "cf")),
}


def exact_trajectory(spec, variant):
    """[(current policy, its support)] after iterations 1..ITERATIONS, and the final average."""
    return _exact_trajectory(spec, tuple(sorted(VARIANTS[variant][0].items())))


@functools.lru_cache(maxsize=None)
def _exact_trajectory(spec, options):
    # cached by the reference's options, not the variant's name: CFR and EFR("cf") share theirs,
    # and on 4-card goofspiel one exact run costs tens of seconds
    game = lk.games.load(spec)
    reference = ExactCFR(game, sigma_bits=SIGMA_BITS, **dict(options))
    trajectory = []
    for _ in range(ITERATIONS):
        reference.step()
        trajectory.append((reference.current_policy(), reference.current_support()))
    return trajectory, reference.average_policy()


# every variant on the small games; on the big ones the variants whose exact reference runs in
# under a minute (the reference's cost: 4-player Kuhn and 4-card goofspiel take 10-100 s each)
CASES = [(spec, variant) for spec in ("kuhn_poker", "kuhn_poker(players=3)", SMALL_GOOFSPIEL)
         for variant in sorted(VARIANTS)] + [
    pytest.param("kuhn_poker(players=4)", variant, marks=pytest.mark.slow) for variant in ("cfr", "efr_cf", "cfr_plus")
] + [pytest.param(GOOFSPIEL, variant, marks=pytest.mark.slow) for variant in ("cfr", "efr_cf")]


@pytest.mark.parametrize("spec, variant", CASES)
def test_solvers_follow_exact_arithmetic(spec, variant):
    game = lk.games.load(spec)
    # goofspiel's strategies are ill-conditioned sums of many terms: 1e-12 of rounding there is not a tie
    atol = 1e-12 if spec.startswith("kuhn") else 1e-11
    solver = VARIANTS[variant][1](game)
    trajectory, average = exact_trajectory(spec, variant)
    for t, (policy, support) in enumerate(trajectory, start=1):
        solver.step()
        ours = solver.current_policy().probs
        np.testing.assert_array_equal(ours > 0, support, err_msg=f"support differs at iteration {t}")
        np.testing.assert_allclose(ours, policy, rtol=0, atol=atol, err_msg=f"iteration {t}")
    np.testing.assert_allclose(solver.average_policy().probs, average, rtol=0, atol=atol)


def test_rounded_reference_equals_the_unrounded_one_where_both_run():
    # simultaneous CFR on 3-player Kuhn keeps its denominators small enough to run unrounded
    game = lk.games.load("kuhn_poker(players=3)")
    exact, rounded = ExactCFR(game), ExactCFR(game, sigma_bits=SIGMA_BITS)
    for _ in range(8):
        exact.step()
        rounded.step()
        np.testing.assert_array_equal(exact.current_support(), rounded.current_support())
    np.testing.assert_allclose(exact.current_policy(), rounded.current_policy(), rtol=0, atol=1e-30)
    assert exact.current_support().sum() < game.legal_mask.sum()        # some actions left the support


def test_three_player_kuhn_tie_is_an_exact_zero():
    """The issue's case: after one CFR iteration, J|pp (player 2 holds the jack after two passes)
    has q(pass) = q(bet) exactly, so its regrets are exactly 0 and it keeps playing uniformly."""
    game = lk.games.load("kuhn_poker(players=3)")
    solver = CFR(game).step()
    i = game.infoset_index("J|pp")
    assert solver.tree.to_game_order(solver.cumulative_regret)[i].tolist() == [0.0, 0.0]
    assert solver.current_policy()["J|pp"] == {"pass": 0.5, "bet": 0.5}
    exact = ExactCFR(game).step()
    assert all(r == 0 for r in exact.regret[i].values())


def test_efr_cf_equals_cfr_on_random_order_goofspiel():
    """EFR("cf") is simultaneous CFR; with ties kept exact the two agree from round 1 on."""
    game = lk.games.load(GOOFSPIEL)
    cfr, efr = CFR(game), EFR(game, "cf")
    for t in range(1, 8):
        cfr.step()
        efr.step()
        np.testing.assert_array_equal(efr.current_policy().probs > 0, cfr.current_policy().probs > 0)
        np.testing.assert_allclose(efr.current_policy().probs, cfr.current_policy().probs, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- against OpenSpiel
OPENSPIEL_SOLVERS = {
    "cfr": lambda os_cfr, os_dcfr, g: os_cfr._CFRSolver(g, regret_matching_plus=False, alternating_updates=False,
                                                        linear_averaging=False),
    "cfr_plus": lambda os_cfr, os_dcfr, g: os_cfr.CFRPlusSolver(g),
    "dcfr": lambda os_cfr, os_dcfr, g: os_dcfr.DCFRSolver(g, alpha=2, beta=0, gamma=2),
}


def _openspiel_table(game, states, os_policy):
    probs = np.zeros(game.legal_mask.shape)
    for i, state in enumerate(states):
        for a, p in os_policy.action_probabilities(state).items():
            probs[i, a] = p
    return probs


@pytest.mark.parametrize("spec, variant, departs", [
    (spec, variant, None) for spec in ("kuhn_poker", "kuhn_poker(players=3)") for variant in sorted(OPENSPIEL_SOLVERS)
] + [
    pytest.param("kuhn_poker(players=4)", "cfr", 2, marks=pytest.mark.slow),
    pytest.param("kuhn_poker(players=4)", "cfr_plus", 1, marks=pytest.mark.slow),
    pytest.param(GOOFSPIEL, "cfr", 1, marks=pytest.mark.slow),
])
def test_labkit_equals_openspiel_wherever_openspiel_is_exact(spec, variant, departs):
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import cfr as os_cfr
    from open_spiel.python.algorithms import discounted_cfr as os_dcfr

    from labkit.games.openspiel_adapter import openspiel_states
    game, os_game = lk.games.load(spec), pyspiel.load_game(spec)
    if os_game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        os_game = pyspiel.convert_to_turn_based(os_game)
    states = openspiel_states(game, os_game)
    theirs = OPENSPIEL_SOLVERS[variant](os_cfr, os_dcfr, os_game)
    ours = VARIANTS[variant][1](game)
    trajectory, _ = exact_trajectory(spec, variant)
    first_departure = None
    for t, (policy, support) in enumerate(trajectory, start=1):
        theirs.evaluate_and_update_policy()
        ours.step()
        table = _openspiel_table(game, states, theirs.current_policy())
        if not (np.array_equal(table > 0, support) and np.abs(table - policy).max() <= 1e-12):
            first_departure = t
            break
        np.testing.assert_allclose(ours.current_policy().probs, table, rtol=0, atol=1e-12)
    assert first_departure == departs


# ---------------------------------------------------------------- the building blocks
def test_clean_ties_zeroes_only_what_is_within_the_relative_tolerance():
    r = np.array([[1e-17, -3e-17, 0.5], [2e-11, -2e-11, 1e-9]])
    regret.clean_ties(r, np.array([[1.0], [1.0]]))
    assert r.tolist() == [[0.0, 0.0, 0.5], [0.0, 0.0, 1e-9]]
    small = np.array([[1e-17, 2e-17]])
    regret.clean_ties(small, np.array([[1e-10]]))            # relative: a tiny scale keeps them
    assert small.tolist() == [[1e-17, 2e-17]]


def test_regret_matching_treats_residues_as_ties():
    legal = np.ones((2, 2), dtype=bool)
    R = np.array([[6.9e-18, 0.0], [3.0, 1.0]])
    np.testing.assert_array_equal(regret.regret_matching(R, legal), [[1.0, 0.0], [0.75, 0.25]])
    tied = regret.regret_matching(R, legal, scale=np.array([[1.0], [1.0]]))
    np.testing.assert_array_equal(tied, [[0.5, 0.5], [0.75, 0.25]])


def test_regret_matching_plus_floors_residues_to_exact_zero():
    out = regret.regret_matching_plus_update(np.array([[1.0, 0.0]]), np.array([[-1.0 + 1e-16, 5e-18]]),
                                             scale=np.array([[2.0]]))
    assert out.tolist() == [[0.0, 0.0]]
    assert regret.regret_matching_plus_update(np.array([[1.0]]), np.array([[-2.0]])).tolist() == [[0.0]]
