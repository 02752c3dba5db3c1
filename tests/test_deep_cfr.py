"""Deep CFR: with lookup tables it is external-sampling MCCFR; with networks it is reproducible and
solves small games (known equilibria from outside the code: biased rock-paper-scissors' (1/4, 1/2, 1/4))."""
import numpy as np
import pytest

import labkit as lk

pytest.importorskip("jax")
from labkit.deep import DeepCFR, DeepCFRConfig  # noqa: E402

TABULAR = DeepCFRConfig(traversals=1, linear_weighting=False, nonpositive="uniform")


@pytest.mark.parametrize("spec, iterations", [("kuhn_poker", 300), ("leduc_poker", 60)])
def test_lookup_tables_reproduce_external_sampling_mccfr(spec, iterations):
    game = lk.games.load(spec)
    deep = DeepCFR(game, TABULAR, seed=7, approximator="table")
    mccfr = lk.MCCFR(game, sampling="external", seed=7)
    deep.run(iterations)
    mccfr.run(iterations)
    # the summed sampled regrets are MCCFR's regret table (same cards and actions drawn)
    regrets = np.zeros(game.legal_mask.shape)
    for memory in deep.advantage_memories:
        np.add.at(regrets, memory.rows[:memory.size], memory.targets[:memory.size])
    expected = np.zeros(game.legal_mask.shape)
    for i, (actions, row) in enumerate(zip((game.legal_actions(i) for i in range(game.num_infosets)), mccfr.regrets)):
        expected[i, actions] = row
    np.testing.assert_allclose(regrets, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(deep.current_policy().probs, mccfr.current_policy().probs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(deep.average_policy().probs, mccfr.average_policy().probs, rtol=0, atol=1e-12)
    assert deep.traversals_done == iterations * game.num_players


SMALL = DeepCFRConfig(traversals=40, hidden=(16,), advantage_memory=5000, strategy_memory=5000, advantage_steps=60,
                      strategy_steps=150, batch_size=64)


def test_same_seed_same_networks_bit_for_bit():
    runs = []
    for _ in range(2):
        solver = DeepCFR("kuhn_poker", SMALL, seed=3)
        solver.run(4)
        runs.append((solver.current_policy().probs, solver.average_policy().probs))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    other = DeepCFR("kuhn_poker", SMALL, seed=4)
    other.run(4)
    assert not np.array_equal(other.average_policy().probs, runs[0][1])


def test_network_average_reaches_the_known_equilibrium_of_biased_rps():
    game = lk.games.load("biased_rock_paper_scissors")
    solver = DeepCFR(game, DeepCFRConfig(traversals=20, hidden=(16,), advantage_steps=100, strategy_steps=300,
                                         batch_size=64), seed=0)
    solver.run(100)
    probs = solver.average_policy().probs
    np.testing.assert_allclose(probs, [[0.25, 0.5, 0.25]] * 2, atol=0.05)
    assert lk.nash_conv(game, solver.average_policy()) < 0.2     # uniform: 2/3


def test_reservoir_keeps_capacity_and_a_uniform_sample():
    from labkit.deep.common import Reservoir
    memory = Reservoir(100, 1, np.random.default_rng(0))
    for start in range(0, 10_000, 250):
        memory.add(np.arange(start, start + 250), np.zeros((250, 1)), 1.0)
    assert memory.size == 100 and memory.seen == 10_000
    # a uniform sample of 0..9999: its mean is near 5000 (standard error 2887 / sqrt(100) ~ 289)
    assert abs(memory.rows.mean() - 4999.5) < 4 * 289


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="traversals must be a positive integer"):
        DeepCFRConfig(traversals=0)
    with pytest.raises(ValueError, match="nonpositive must be one of"):
        DeepCFRConfig(nonpositive="zero")
    with pytest.raises(ValueError, match="approximator must be one of"):
        DeepCFR("kuhn_poker", approximator="forest")
    with pytest.raises(TypeError, match="seed must be an integer"):
        DeepCFR("kuhn_poker", seed=1.5)


def test_looking_at_the_average_does_not_change_training():
    watched, unwatched = DeepCFR("kuhn_poker", SMALL, seed=1), DeepCFR("kuhn_poker", SMALL, seed=1)
    for _ in range(3):
        watched.run(1)
        watched.average_policy()
    unwatched.run(3)
    np.testing.assert_array_equal(watched.current_policy().probs, unwatched.current_policy().probs)
    np.testing.assert_array_equal(watched.average_policy().probs, unwatched.average_policy().probs)


def test_infoset_batching_takes_the_exact_gradient_of_the_memory_loss():
    # sum_b w_b (y(I_b) - r_b)^2 and sum_I W_I (y(I) - mean_I)^2 differ by a constant, so their
    # gradients agree; the grouped batch must reproduce the gradient over every stored sample
    import jax
    import jax.numpy as jnp

    from labkit.deep.common import NetworkRegressor
    from labkit.deep.networks import MLP

    game = lk.games.load("kuhn_poker")
    solver = DeepCFR(game, SMALL, seed=0)
    solver.run(2)
    memory = solver.advantage_memories[0]
    features = solver.features
    net = NetworkRegressor(game, features, (8,), "mse", 1e-3, 1, 16, 1.0, False, jax.random.PRNGKey(0),
                           np.random.default_rng(0), batching="infosets", rows=game.infosets_of(0))
    rows, means, weights = net._grouped(memory)
    legal = jnp.asarray(game.legal_mask)
    X = jnp.asarray(features.matrix)

    def memory_loss(params):
        n = memory.size
        y = MLP.apply(params, X[memory.rows[:n]])
        err = jnp.where(legal[memory.rows[:n]], (y - memory.targets[:n]) ** 2, 0.0).sum(axis=1)
        return jnp.sum(memory.weights[:n] * err) / memory.weights[:n].sum()

    def grouped_loss(params):
        y = MLP.apply(params, X[rows])
        err = jnp.where(legal[rows], (y - means) ** 2, 0.0).sum(axis=1)
        return jnp.mean(weights * err)

    g1 = jax.tree_util.tree_leaves(jax.grad(memory_loss)(net.params))
    g2 = jax.tree_util.tree_leaves(jax.grad(grouped_loss)(net.params))
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert memory.size > len(set(memory.rows[:memory.size].tolist()))     # samples really were grouped
    with pytest.raises(ValueError, match="outside this regressor's rows"):
        NetworkRegressor(game, features, (8,), "mse", 1e-3, 1, 16, 1.0, False, jax.random.PRNGKey(0),
                         np.random.default_rng(0), batching="infosets", rows=game.infosets_of(1))._grouped(memory)
    with pytest.raises(ValueError, match="batching must be one of"):
        DeepCFRConfig(batching="all")


def test_infoset_batching_is_reproducible_and_follows_the_table_version():
    config = DeepCFRConfig(traversals=40, hidden=(32,), advantage_steps=300, strategy_steps=500, learning_rate=1e-2,
                           batching="infosets")
    runs = [DeepCFR("kuhn_poker", config, seed=5) for _ in range(2)]
    for solver in runs:
        solver.run(30)
    np.testing.assert_array_equal(runs[0].average_policy().probs, runs[1].average_policy().probs)
    # uniform play has NashConv 11/12 in Kuhn poker; lookup tables fed the same seed reach 0.058
    table = DeepCFR("kuhn_poker", config, seed=5, approximator="table")
    table.run(30)
    assert lk.nash_conv(table.game, table.average_policy()) < 0.1
    assert lk.nash_conv(runs[0].game, runs[0].average_policy()) < 0.12
