"""Tests of labkit.social: closed-form values of the iterated prisoner's dilemma, LOLA, Nash-MD."""
import numpy as np
import pytest

import labkit as lk
from labkit import social

SURE = 40.0                                 # a logit so large that the probability is 1 to machine precision
ALWAYS_C, ALWAYS_D = np.full(5, SURE), np.full(5, -SURE)
TIT_FOR_TAT = np.array([SURE, SURE, -SURE, SURE, -SURE])   # start C, then copy the other's last move


def test_values_of_known_policies():
    gamma = 0.96
    # payoffs 3 (both cooperate), 0 / 5 (sucker / temptation), 1 (both defect)
    assert np.allclose(social.ipd_values(TIT_FOR_TAT, TIT_FOR_TAT, discount=gamma), [3, 3])
    assert np.allclose(social.ipd_values(ALWAYS_C, ALWAYS_D, discount=gamma), [0, 5])
    # defecting against tit-for-tat: 5 in the first round, then mutual defection
    expected = (1 - gamma) * 5 + gamma * 1
    assert np.allclose(social.ipd_values(ALWAYS_D, TIT_FOR_TAT, discount=gamma),
                       [expected, (1 - gamma) * 0 + gamma * 1])
    # tit-for-tat's own-move-first view: player 2 copying player 1 gives the same values by symmetry
    assert np.allclose(social.ipd_values(TIT_FOR_TAT, ALWAYS_D, discount=gamma)[::-1],
                       social.ipd_values(ALWAYS_D, TIT_FOR_TAT, discount=gamma))


def test_values_match_a_long_simulated_average():
    rng = np.random.default_rng(0)
    theta1, theta2 = rng.normal(size=5), rng.normal(size=5)
    gamma = 0.5
    p, q = 1 / (1 + np.exp(-theta1)), 1 / (1 + np.exp(-theta2))
    game = lk.games.prisoners_dilemma()
    runs = 200_000
    me, other = rng.random(runs) < p[0], rng.random(runs) < q[0]
    total = np.zeros(2)
    for t in range(40):
        a, b = np.where(me, 0, 1), np.where(other, 0, 1)
        total += gamma ** t * np.array([game.A[a, b].mean(), game.B[a, b].mean()])
        state1 = 1 + 2 * a + b                # own move first
        state2 = 1 + 2 * b + a
        me, other = rng.random(runs) < p[state1], rng.random(runs) < q[state2]
    assert np.allclose((1 - gamma) * total, social.ipd_values(theta1, theta2, discount=gamma), atol=0.01)


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    theta = rng.normal(size=(2, 5))
    _, grads = social.ipd_gradients(theta[0], theta[1])
    h = 1e-6
    for j in range(2):
        for k in range(5):
            plus, minus = theta.copy(), theta.copy()
            plus[j, k] += h
            minus[j, k] -= h
            numeric = (social.ipd_values(*plus) - social.ipd_values(*minus)) / (2 * h)
            assert np.allclose(grads[:, j, k], numeric, atol=1e-7)


def test_batched_equals_one_by_one():
    rng = np.random.default_rng(2)
    T1, T2 = rng.normal(size=(2, 3, 5))
    new1, new2, values = social.lola_step(T1, T2, lookahead=2.0)
    for r in range(3):
        a, b, v = social.lola_step(T1[r], T2[r], lookahead=2.0)
        assert np.allclose(a, new1[r]) and np.allclose(b, new2[r]) and np.allclose(v, values[r])


def test_zero_lookahead_is_naive_gradient_ascent():
    rng = np.random.default_rng(3)
    t1, t2 = rng.normal(size=(2, 5))
    _, g = social.ipd_gradients(t1, t2)
    new1, new2, _ = social.lola_step(t1, t2, lr=0.5, lookahead=0.0)
    assert np.allclose(new1, t1 + 0.5 * g[0, 0]) and np.allclose(new2, t2 + 0.5 * g[1, 1])


def test_naive_learners_defect_and_lola_learners_reciprocate():
    rng = np.random.default_rng(0)
    T1, T2 = rng.normal(size=(2, 8, 5))
    _, naive = social.train_ipd(T1, T2, steps=200, lookahead=0.0)
    cooperation, lola = social.train_ipd(T1, T2, steps=200, lookahead=5.0)
    assert naive[-1].mean() < 1.2                 # mutual defection pays 1
    assert lola[-1].mean() > 2.3                  # mutual cooperation pays 3
    median = np.median(cooperation[-1].reshape(-1, 5), axis=0)
    assert median[1] > 0.9 and median[3] > 0.9    # cooperate after the other cooperated
    assert median[2] < 0.1 and median[4] < 0.1    # defect after the other defected


def test_bad_theta():
    with pytest.raises(ValueError, match="5 finite logits"):
        social.ipd_values(np.zeros(4), np.zeros(5))
    with pytest.raises(ValueError, match="discount"):
        social.ipd_values(np.zeros(5), np.zeros(5), discount=1.0)


CYCLE = [[0.5, 0.9, 0.35], [0.1, 0.5, 0.75], [0.65, 0.25, 0.5]]


def test_regularized_equilibrium_matches_the_fixed_magnet_dynamics():
    game = lk.games.preference_game(CYCLE)
    reference = np.array([0.2, 0.5, 0.3])
    equilibrium = social.regularized_equilibrium(game, 0.05, reference)
    run = lk.dynamics.run(game, "regularized, fixed magnet", steps=5000, eta=0.2, alpha=0.05,
                          x0=reference, y0=reference, magnet=(reference, reference))
    assert np.allclose(run.x[-1], equilibrium, atol=1e-9)


def test_nash_md_last_iterate_bias_shrinks_with_the_step_size():
    game = lk.games.preference_game(CYCLE)
    equilibrium = social.regularized_equilibrium(game, 0.05)
    gaps = [np.abs(social.nash_md(game, steps=int(300 / eta), eta=eta, beta=0.05)[-1] - equilibrium).max()
            for eta in (0.4, 0.1)]
    assert gaps[1] < gaps[0] / 3 and gaps[1] < 3e-3


def test_plain_mirror_descent_does_not_converge():
    game = lk.games.preference_game(CYCLE)
    nash = np.array([5, 3, 8]) / 16            # the cycle's equilibrium is proportional to (0.25, 0.15, 0.4)
    assert np.allclose(game.A @ nash, 0)
    policies = social.nash_md(game, steps=3000, eta=0.2, beta=0.0)
    late = np.abs(policies[2000:] - nash).max(axis=1)
    assert late.min() > 0.05


def test_nash_md_bad_arguments():
    with pytest.raises(ValueError, match="symmetric zero-sum"):
        social.nash_md(lk.games.prisoners_dilemma())
    with pytest.raises(ValueError, match="reference"):
        social.nash_md(lk.games.preference_game(), reference=[1.0, 0.0, 0.0])
