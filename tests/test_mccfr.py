"""Monte Carlo CFR: reproducible from a seed, unbiased regret estimates, and NashConv on Leduc
falling like OpenSpiel's MCCFR (reference/openspiel.md §5.3), averaged over seeds."""
import numpy as np
import pytest

import labkit as lk
from labkit.games.openspiel_adapter import openspiel_infoset_keys as openspiel_keys
from labkit.mccfr import MCCFR

# the numpy/Python episodes, and the compiled ones where numba is installed
BACKENDS = ["numpy"] + (["numba"] if lk.kernels.available() else [])


@pytest.mark.parametrize("sampling", ["outcome", "external"])
def test_same_seed_same_digits(leduc, sampling):
    a = MCCFR(leduc, sampling=sampling, seed=11)
    b = MCCFR(leduc, sampling=sampling, seed=11)
    c = MCCFR(leduc, sampling=sampling, seed=12)
    for solver in (a, b, c):
        solver.run(300)
    np.testing.assert_array_equal(a.average_policy().probs, b.average_policy().probs)
    np.testing.assert_array_equal(a.current_policy().probs, b.current_policy().probs)
    assert not np.array_equal(a.average_policy().probs, c.average_policy().probs)
    # a Generator can be passed instead of a seed, and gives the same stream
    d = MCCFR(leduc, sampling=sampling, seed=np.random.default_rng(11))
    d.run(300)
    np.testing.assert_array_equal(a.average_policy().probs, d.average_policy().probs)


def test_no_global_random_state(kuhn):
    np.random.seed(0)
    before = np.random.random()
    np.random.seed(0)
    MCCFR(kuhn, seed=3).run(50)
    assert np.random.random() == before


def test_invalid_arguments(kuhn):
    with pytest.raises(ValueError, match=r"'outcome', 'external'"):
        MCCFR(kuhn, sampling="chance")
    for bad in (0.0, 1.5, -0.1, "0.6"):
        with pytest.raises(ValueError, match="exploration"):
            MCCFR(kuhn, exploration=bad)
    with pytest.raises(TypeError, match="seed"):
        MCCFR(kuhn, seed="zero")
    with pytest.raises(ValueError, match="player"):
        MCCFR(kuhn).sampled_regrets(2)


def exact_regrets(game, policy, player):
    """q(I, a) - v(I) at `player`'s infosets under `policy`: vanilla CFR's regret increment."""
    q = lk.counterfactual_values(game, policy)
    v = (q * policy.probs).sum(axis=1, keepdims=True)
    mine = (game.infoset_player == player)[:, None] & game.legal_mask
    return np.where(mine, q - v, 0.0)


@pytest.mark.parametrize("sampling", ["outcome", "external"])
@pytest.mark.parametrize("player", [0, 1])
def test_sampled_regrets_are_unbiased(kuhn, sampling, player):
    solver = MCCFR(kuhn, sampling=sampling, seed=5)
    solver.run(30)                                   # a non-uniform current policy
    exact = exact_regrets(kuhn, solver.current_policy(), player)
    regrets_before = [list(r) for r in solver.regrets]
    sums_before = [list(r) for r in solver.policy_sums]
    assert np.abs(exact).max() > 0.05
    n = 20_000 if sampling == "outcome" else 5_000
    total = np.zeros(kuhn.legal_mask.shape)
    squares = np.zeros(kuhn.legal_mask.shape)
    for _ in range(n):
        r = solver.sampled_regrets(player)
        total += r
        squares += r * r
    mean = total / n
    stderr = np.sqrt(np.maximum(squares / n - mean ** 2, 0.0) / n)
    assert np.all(np.abs(mean - exact) <= 5 * stderr + 1e-12), (mean - exact) / np.maximum(stderr, 1e-12)
    # the estimates did not change the solver
    assert solver.regrets == regrets_before and solver.policy_sums == sums_before


# reference/openspiel.md §5.3, Leduc, mean over seeds 0, 1, 2 of OpenSpiel's MCCFR (C++; Python):
#   outcome  10^3: 4.542; 4.85     10^4: 2.223; 2.347
#   external 10^3: 2.488; 2.484    10^4: 0.566; 0.578
LEDUC_BANDS = {
    "outcome": {1000: (4.0, 5.2), 10_000: (1.9, 2.7)},
    "external": {1000: (2.1, 2.9), 10_000: (0.45, 0.70)},
}


@pytest.mark.parametrize("sampling", ["outcome", "external"])
def test_leduc_nash_conv_falls_like_openspiel(leduc, sampling):
    curves = []
    for seed in range(3):
        solver = MCCFR(leduc, sampling=sampling, seed=seed)
        curve = []
        for T in (1000, 10_000):
            solver.run(T - solver.iteration)
            curve.append(lk.nash_conv(leduc, solver.average_policy()))
        curves.append(curve)
    mean = np.mean(curves, axis=0)
    for (T, (low, high)), value in zip(LEDUC_BANDS[sampling].items(), mean):
        assert low <= value <= high, (sampling, T, value)
    uniform = lk.nash_conv(leduc, lk.uniform_policy(leduc))
    assert mean[1] < mean[0] < uniform


@pytest.mark.parametrize("sampling", ["outcome", "external"])
def test_kuhn_converges_toward_equilibrium_value(kuhn, sampling):
    solver = lk.MCCFR(kuhn, sampling=sampling, seed=0)
    solver.run(20_000)
    average = solver.average_policy()
    lk.policy.validate_probs(kuhn, average.probs)
    assert lk.nash_conv(kuhn, average) < 0.06
    assert abs(lk.expected_payoffs(kuhn, average)[0] + 1 / 18) < 0.02


# ----------------------------------------------------------------------------- same draws as OpenSpiel
@pytest.mark.parametrize("game_name, iterations", [("kuhn_poker", 300), ("leduc_poker", 40),
                                                  ("kuhn_poker(players=3)", 100)])
@pytest.mark.parametrize("sampling", ["outcome", "external"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_same_random_numbers_same_regrets_as_openspiel(game_name, iterations, sampling, backend):
    """Fed the uniform numbers OpenSpiel's Python MCCFR consumes (one per sampled node, from the
    global numpy state, in the same depth-first order), labkit's MCCFR makes the same updates.

    OpenSpiel starts every table at 1e-6 instead of 0; we start its tables at 0 so the two are
    the same algorithm, and compare regrets and average-policy sums to 1e-9.
    """
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms.external_sampling_mccfr import ExternalSamplingSolver
    from open_spiel.python.algorithms.outcome_sampling_mccfr import OutcomeSamplingSolver

    game = lk.games.load(game_name)
    os_game = pyspiel.load_game(game_name)
    keys = openspiel_keys(game, os_game)
    theirs = OutcomeSamplingSolver(os_game) if sampling == "outcome" else ExternalSamplingSolver(os_game)
    for key, actions in zip(keys, game.legal_mask):
        theirs._infostates[key] = [np.zeros(actions.sum()), np.zeros(actions.sum())]
    with lk.kernels.using(backend):
        ours = MCCFR(game, sampling=sampling)
    state = np.random.RandomState(2024)
    np.random.set_state(state.get_state())
    for _ in range(iterations):
        theirs.iteration()
    np.random.set_state(state.get_state())            # replay the same stream into labkit
    if backend == "numpy":
        ours._draw = np.random.random_sample
    else:                                             # the kernel reads a buffer: fill it from the stream
        ours._buffer = np.random.random_sample(200_000)
    ours.run(iterations)
    if backend == "numba":
        assert ours._state[0] < len(ours._buffer)     # every number came from OpenSpiel's stream
    for i, key in enumerate(keys):
        regrets, sums = theirs._infostates[key]
        np.testing.assert_allclose(ours.regrets[i], regrets, atol=1e-9, rtol=0, err_msg=key)
        np.testing.assert_allclose(ours.policy_sums[i], sums, atol=1e-9, rtol=1e-12, err_msg=key)
    assert max(abs(r) for row in ours.regrets for r in row) > 0.1


@pytest.mark.parametrize("sampling, allowed", [
    # outcome: one root-to-terminal path per player's episode. Kuhn's terminals sit after the deal
    # (2 chance moves) and 2 or 3 bets: 1 + 2 + 2 = 5 or 1 + 2 + 3 = 6 histories per path
    ("outcome", {10, 11, 12}),
    # external, player 1's episode: root, 2 deal nodes, 2 actions at P1's root infoset; after
    # pass, P2 samples one move (pass -> terminal: 2 histories; bet -> P1 decides with 2 terminals:
    # 4); after bet, P2 samples one terminal (2 histories): 3 + {2, 4} + 2 = 7 or 9.
    # Player 2's episode: 3 + P1 samples (bet -> P2 node + 2 terminals: 3; pass -> P2 node,
    # pass terminal, bet -> P1 samples one terminal: 1 + 1 + 1 + 1 = 4): 6 or 7.
    ("external", {13, 14, 15, 16}),
])
def test_nodes_touched_on_kuhn(kuhn, sampling, allowed):
    solver = MCCFR(kuhn, sampling=sampling, seed=3)
    assert solver.nodes_touched == 0
    seen = set()
    for _ in range(300):
        before = solver.nodes_touched
        solver.step()
        seen.add(solver.nodes_touched - before)
    assert seen <= allowed and len(seen) > 1, seen


class _CountingList(list):
    """Counts item reads: every episode reads flat.player[h] once per history it visits."""

    reads = 0

    def __getitem__(self, index):
        self.reads += 1
        return list.__getitem__(self, index)


@pytest.mark.parametrize("sampling", ["outcome", "external"])
def test_nodes_touched_equals_the_histories_read(leduc, sampling):
    import copy
    with lk.kernels.using("numpy"):                   # counts the reads of the Python episode's lists
        solver = MCCFR(leduc, sampling=sampling, seed=5)
    solver.flat = copy.copy(solver.flat)
    solver.flat.player = _CountingList(solver.flat.player)
    solver.run(40)
    solver.sampled_regrets(1)          # a scratch episode is a traversal too
    assert solver.nodes_touched == solver.flat.player.reads > 0
