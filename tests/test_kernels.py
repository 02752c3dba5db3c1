"""The compiled (numba) kernels give the numpy backend's numbers bit for bit (labkit.kernels).

Every comparison is of the raw float64 bits (`.view(np.int64)`), so even a difference in the last
digit, or in the sign of a zero, fails. The numpy backend is itself checked against OpenSpiel and
exact fractions elsewhere (tests/test_cfr.py, tests/test_exact_ties.py, tests/test_mccfr.py).
"""
import numpy as np
import pytest

import labkit as lk
from labkit.cfr import CFR, DCFR, CFRPlus
from labkit.mccfr import MCCFR

pytestmark = pytest.mark.skipif(not lk.kernels.available(), reason="numba is not installed")

GAMES = ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)",
         "goofspiel(num_cards=3,points_order=random,imp_info=True)"]
SOLVERS = {
    "CFR": CFR,
    "CFR alternating": lambda g: CFR(g, alternating_updates=True),
    "CFR+": CFRPlus,
    "DCFR": DCFR,
    "DCFR(1, 1, 1)": lambda g: DCFR(g, alpha=1, beta=1, gamma=1),
    "simultaneous RM+ linear": lambda g: CFR(g, regret_matching_plus=True, linear_averaging=True),
}


def bits(array):
    return np.ascontiguousarray(array, dtype=np.float64).view(np.int64)


def assert_same_bits(a, b):
    assert a.shape == b.shape
    different = bits(a) != bits(b)
    assert not different.any(), f"{different.sum()} entries differ, e.g. {a[different][:3]} vs {b[different][:3]}"


@pytest.fixture(scope="module")
def games():
    return {name: lk.games.load(name) for name in GAMES}


@pytest.mark.parametrize("game_name", GAMES)
@pytest.mark.parametrize("solver_name", SOLVERS)
def test_cfr_family_same_bits(games, game_name, solver_name):
    game = games[game_name]
    make = SOLVERS[solver_name]
    with lk.kernels.using("numpy"):
        reference = make(game)
    with lk.kernels.using("numba"):
        stepped, batched = make(game), make(game)
    assert reference.backend == "numpy" and not reference._compiled
    assert stepped._compiled and batched._compiled
    iterations = 25 if game_name == "leduc_poker" else 40
    reference.run(iterations)
    for _ in range(iterations):
        stepped.step()
    batched.run(iterations, eval_every=7)             # batches of 7 between evaluations
    for solver in (stepped, batched):
        assert solver.iteration == iterations
        for name in ("cumulative_regret", "policy_sum", "regret_scale", "_sigma"):
            assert_same_bits(getattr(reference, name), getattr(solver, name))
        assert_same_bits(reference.average_policy().probs, solver.average_policy().probs)
        assert_same_bits(reference.current_policy().probs, solver.current_policy().probs)
    assert [v for _, v in batched.nash_conv_history][-1] == lk.nash_conv(game, reference.average_policy())


def test_a_subclass_that_changes_the_update_keeps_numpy(games):
    class Plain(CFR):
        def _update(self, t, player):
            super()._update(t, player)

    with lk.kernels.using("numba"):
        solver = Plain(games["kuhn_poker"])
    assert solver.backend == "numba" and not solver._compiled
    with lk.kernels.using("numpy"):
        reference = CFR(games["kuhn_poker"])
    solver.run(20)
    reference.run(20)
    assert_same_bits(reference.cumulative_regret, solver.cumulative_regret)


@pytest.mark.parametrize("game_name", GAMES[:3])
@pytest.mark.parametrize("sampling", ["outcome", "external"])
def test_mccfr_same_bits(games, game_name, sampling):
    game = games[game_name]
    with lk.kernels.using("numpy"):
        reference = MCCFR(game, sampling=sampling, seed=17)
    with lk.kernels.using("numba"):
        stepped = MCCFR(game, sampling=sampling, seed=17)
        batched = MCCFR(game, sampling=sampling, seed=np.random.default_rng(17))
    iterations = 400
    reference.run(iterations)
    for _ in range(iterations):
        stepped.step()
    batched.run(iterations)
    for solver in (stepped, batched):
        assert solver.regrets == reference.regrets              # Python floats: == is bit equality here
        assert solver.policy_sums == reference.policy_sums
        assert solver.nodes_touched == reference.nodes_touched
        assert_same_bits(reference.average_policy().probs, solver.average_policy().probs)
        assert_same_bits(reference.current_policy().probs, solver.current_policy().probs)
    # scratch episodes: the same estimates, and the solver's tables untouched
    before = stepped.regrets
    for player in range(game.num_players):
        assert_same_bits(reference.sampled_regrets(player), stepped.sampled_regrets(player))
    assert stepped.regrets == before
    # and the streams continue in step
    reference.run(10)
    stepped.run(10)
    assert stepped.regrets == reference.regrets


def test_switch():
    previous = lk.kernels.backend()
    with lk.kernels.using("numpy"):
        assert lk.kernels.backend() == "numpy"
        assert MCCFR("kuhn_poker").backend == "numpy" and CFR("kuhn_poker").backend == "numpy"
    assert lk.kernels.backend() == previous
    with pytest.raises(ValueError, match="backend must be one of"):
        lk.kernels.use("fortran")


def test_environment_variable(monkeypatch):
    monkeypatch.setattr(lk.kernels, "_current", None)
    monkeypatch.setenv("LABKIT_KERNELS", "numpy")
    assert lk.kernels.backend() == "numpy"
    monkeypatch.setattr(lk.kernels, "_current", None)
    monkeypatch.setenv("LABKIT_KERNELS", "cuda")
    with pytest.raises(ValueError, match="LABKIT_KERNELS"):
        lk.kernels.backend()
    monkeypatch.setattr(lk.kernels, "_current", None)
    monkeypatch.delenv("LABKIT_KERNELS")
    assert lk.kernels.backend() == "numba"


class _Solo:
    """A one-player game with chance: no other player's reach to multiply (an edge of the kernels)."""

    name, num_players, num_distinct_actions = "solo", 1, 2

    def initial_state(self):
        return _SoloState(())


class _SoloState:
    def __init__(self, moves):
        self.moves = moves

    def current_player(self):
        return lk.games.CHANCE if not self.moves else (lk.games.TERMINAL if len(self.moves) == 3 else 0)

    def chance_outcomes(self):
        return [(0, 0.3), (1, 0.7)]

    def legal_actions(self):
        return [0, 1]

    def child(self, action):
        return _SoloState(self.moves + (action,))

    def returns(self):
        return [float(sum(self.moves) * (1 if self.moves[0] else -1)) + 0.1 * self.moves[2]]

    def infoset_key(self):
        return str(self.moves[1:])


def test_one_player_game_same_bits():
    game = lk.games.compile_game(_Solo())
    for make in (CFR, CFRPlus):
        with lk.kernels.using("numpy"):
            reference = make(game)
        with lk.kernels.using("numba"):
            compiled = make(game)
        reference.run(20)
        compiled.run(20)
        assert_same_bits(reference.cumulative_regret, compiled.cumulative_regret)
        assert_same_bits(reference.policy_sum, compiled.policy_sum)
    for sampling in ("outcome", "external"):
        with lk.kernels.using("numpy"):
            reference = MCCFR(game, sampling=sampling, seed=1)
        with lk.kernels.using("numba"):
            compiled = MCCFR(game, sampling=sampling, seed=1)
        reference.run(50)
        compiled.run(50)
        assert compiled.regrets == reference.regrets and compiled.policy_sums == reference.policy_sums


def test_mccfr_tables_can_be_assigned(games):
    """`solver.regrets = rows` sets the regrets in both backends (the compiled one copies them into
    its flat table and forgets its cached policies), so the next episodes agree."""
    game = games["kuhn_poker"]
    rows = [[0.5 * i, 1.0 - 0.1 * i] for i in range(game.num_infosets)]
    solvers = []
    for backend in ("numpy", "numba"):
        with lk.kernels.using(backend):
            solver = MCCFR(game, sampling="outcome", seed=4)
        solver.run(5)
        solver.regrets = [list(r) for r in rows]
        solver.policy_sums = [[1.0, 2.0] for _ in rows]
        if backend == "numpy":
            solver._sigma = [None] * game.num_infosets     # the Python episode's cache
        assert solver.regrets == rows
        solver.run(20)
        solvers.append(solver)
    assert solvers[0].regrets == solvers[1].regrets and solvers[0].policy_sums == solvers[1].policy_sums
    with pytest.raises(ValueError, match="one row per infoset"):
        solvers[1].regrets = rows[:-1]


@pytest.mark.parametrize("game_name", GAMES + ["leduc_poker(players=3)"])
def test_nash_conv_same_bits(games, game_name):
    """The compiled best-response passes (labkit._evaluate_kernels) give numpy's NashConv bit for bit,
    at random policies with zeros (pure actions, unreached infosets) and at a solver's average."""
    game = games[game_name] if game_name in games else lk.games.load(game_name)
    rng = np.random.default_rng(11)
    policies = []
    for k in range(4 if game_name == "leduc_poker(players=3)" else 12):
        raw = rng.random(game.legal_mask.shape) ** (1 + k % 4) * game.legal_mask
        if k % 2:
            raw[rng.random(raw.shape) < 0.4] = 0.0                     # some pure rows, unreached subtrees
        raw += game.legal_mask * (raw.sum(axis=1, keepdims=True) == 0)
        policies.append(lk.TabularPolicy(game, raw / raw.sum(axis=1, keepdims=True)))
    policies.append(lk.uniform_policy(game))
    if game.num_histories < 10_000:
        solver = CFRPlus(game)
        solver.run(30)
        policies.append(solver.average_policy())
    for policy in policies:
        with lk.kernels.using("numpy"):
            expected = (lk.nash_conv(game, policy), lk.exploitability(game, policy))
        with lk.kernels.using("numba"):
            compiled = (lk.nash_conv(game, policy), lk.exploitability(game, policy),
                        lk.nash_conv(game, policy.probs.copy()))          # a raw array takes the same path
        assert_same_bits(np.array(expected + expected[:1]), np.array(compiled))
    assert "_compiled_plan" in game.__dict__


def test_one_player_nash_conv_same_bits():
    game = lk.games.compile_game(_Solo())
    rng = np.random.default_rng(3)
    for _ in range(5):
        raw = rng.random(game.legal_mask.shape)
        policy = lk.TabularPolicy(game, raw / raw.sum(axis=1, keepdims=True))
        with lk.kernels.using("numpy"):
            expected = lk.nash_conv(game, policy)
        with lk.kernels.using("numba"):
            assert_same_bits(np.array([expected]), np.array([lk.nash_conv(game, policy)]))
