"""The compiled (numba) kernels give the numpy backend's numbers bit for bit (labkit.kernels).

Every comparison is of the raw float64 bits (`.view(np.int64)`), so even a difference in the last
digit, or in the sign of a zero, fails. The numpy backend is itself checked against OpenSpiel and
exact fractions elsewhere (tests/test_cfr.py, tests/test_exact_ties.py, tests/test_mccfr.py).
"""
import contextlib
import os
import subprocess
import sys

import numpy as np
import pytest

import labkit as lk
from labkit import _nash_conv_native, _native, evaluate
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


@pytest.mark.parametrize("kernel", ["c", "numba"])
@pytest.mark.parametrize("game_name", GAMES)
@pytest.mark.parametrize("solver_name", SOLVERS)
def test_cfr_family_same_bits(games, game_name, solver_name, kernel):
    """Both compiled CFR kernels, the C library (labkit._native) and numba's, give numpy's bits."""
    game = games[game_name]
    make = SOLVERS[solver_name]
    with lk.kernels.using("numpy"):
        reference = make(game)
    with lk.kernels.using("numba"), (contextlib.nullcontext() if kernel == "c" else _native.turned_off()):
        stepped, batched = make(game), make(game)
    assert reference.backend == "numpy" and not reference._compiled
    assert stepped._compiled and batched._compiled
    assert isinstance(stepped._kernel, _native.CfrIterations) == (kernel == "c")
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
def test_nash_conv_same_bits(games, game_name, monkeypatch):
    """The compiled best-response passes (labkit._evaluate_kernels) give numpy's NashConv bit for bit,
    at random policies with zeros (pure actions, unreached infosets) and at a solver's average."""
    monkeypatch.setattr(evaluate, "NUMPY_FIRST_SECONDS", 0.0)          # compiled from the first call
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
        # numba's pass, which serves where the C extension does not
        numba_pass = evaluate._numba_nash_conv(game, game.__dict__["_compiled_plan"], policy.probs)
        assert_same_bits(np.array(expected[:1]), np.array([numba_pass]))
    plan = game.__dict__["_compiled_plan"]
    assert (plan[3] is not None) == (_nash_conv_native.module() is not None)


def _native_nash_conv_or_skip():
    if _nash_conv_native.module() is None:
        pytest.skip(f"the C NashConv is not available here: {_nash_conv_native._failed}")
    return _nash_conv_native.module()


@pytest.mark.parametrize("game_name", ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)",
                                       "goofspiel(num_cards=4,imp_info=True,points_order=descending)"])
def test_the_c_nash_conv_is_numbas_pass_bit_for_bit(game_name):
    """The C extension (labkit._nash_conv_native) against numba's pass and numpy, called directly on
    policies with pure rows and unreached subtrees, on games of 2 and 3 players."""
    native = _native_nash_conv_or_skip()
    game = lk.games.load(game_name)
    plan = evaluate._compiled_plan(game)
    assert plan[3] is not None
    rng = np.random.default_rng(5)
    for k in range(6):
        raw = rng.random(game.legal_mask.shape) * game.legal_mask
        raw[rng.random(raw.shape) < 0.3 * (k % 2)] = 0.0
        raw += game.legal_mask * (raw.sum(axis=1, keepdims=True) == 0)
        probs = raw / raw.sum(axis=1, keepdims=True)
        with lk.kernels.using("numpy"):
            expected = lk.nash_conv(game, probs)
        values = [native.nash_conv(probs, plan[3]), evaluate._numba_nash_conv(game, plan, probs)]
        assert_same_bits(np.array([expected, expected]), np.array(values))


def test_the_c_nash_conv_declines_arrays_it_cannot_read():
    """An array that is not C-contiguous float64 of the policy's shape gets None from the extension,
    and `lk.nash_conv` then takes numba's pass: the same number, whatever the caller passed."""
    native = _native_nash_conv_or_skip()
    game = lk.games.load("kuhn_poker")
    plan = evaluate._compiled_plan(game)
    probs = lk.uniform_policy(game).probs
    assert native.nash_conv(probs, plan[3]) == pytest.approx(11 / 12)
    for odd in (probs.astype(np.float32), np.asfortranarray(np.tile(probs, (1, 2)))[:, :2], probs[:-1],
                probs.reshape(-1), probs.tolist(), "probs"):
        assert native.nash_conv(odd, plan[3]) is None
    with pytest.raises(TypeError):
        native.nash_conv(probs)
    with pytest.raises(ValueError):
        native.nash_conv(probs, "not a plan")
    policy = lk.uniform_policy(game)
    policy.probs = probs.astype(np.float32)                   # a checked policy whose array was replaced
    with lk.kernels.using("numba"):
        assert lk.nash_conv(game, policy) == pytest.approx(11 / 12)


def test_the_c_nash_conv_plan_checks_its_arrays():
    native = _native_nash_conv_or_skip()
    game = lk.games.load("kuhn_poker")
    index, returns = evaluate._compiled_plan(game)[0], evaluate._terminal_structure(game).returns
    I, A = game.legal_mask.shape
    with pytest.raises(ValueError, match="work must be"):
        native.plan(index, np.empty(3), returns, I, A, _nash_conv_native._gemv)
    for bad_index in (index[:5], np.zeros(0, dtype=np.int64)):
        with pytest.raises(ValueError, match="packed NashConv index"):
            native.plan(bad_index, np.empty(3), returns, I, A, _nash_conv_native._gemv)
    with pytest.raises(ValueError, match="index must be"):
        native.plan(index.astype(np.float64), np.empty(3), returns, I, A, _nash_conv_native._gemv)
    with pytest.raises(ValueError, match="returns must be"):
        size = len(game.terminals) + 2 + I + 2 * (I * A + 1) + 2
        native.plan(index, np.empty(size), returns[:1], I, A, _nash_conv_native._gemv)


def test_the_blas_routine_is_numpys_dot():
    """The routine the extension calls for the on-policy values gives numpy's ``dot`` bits on
    products it was not checked on when loaded (odd sizes, zeros, signed zeros, infinities)."""
    native = _native_nash_conv_or_skip()
    rng = np.random.default_rng(9)
    for m, n in [(2, 5), (2, 17), (3, 64), (2, 1001), (5, 333)]:
        matrix, vector = rng.standard_normal((m, n)), rng.random(n)
        vector[rng.random(n) < 0.2] = 0.0
        matrix[0, : n // 3] = -0.0
        assert native.gemv(_nash_conv_native._gemv, matrix, vector, m, n) == matrix.dot(vector).tolist()
    assert not _nash_conv_native._same_as_numpy(_FakeBlas(), 0)


class _FakeBlas:
    """A module whose gemv rounds differently from numpy's dot."""

    @staticmethod
    def gemv(address, matrix, vector, m, n):
        return [float(sum(row * vector)) + 1e-300 for row in matrix]


def test_one_player_nash_conv_same_bits(monkeypatch):
    monkeypatch.setattr(evaluate, "NUMPY_FIRST_SECONDS", 0.0)
    game = lk.games.compile_game(_Solo())
    rng = np.random.default_rng(3)
    for _ in range(5):
        raw = rng.random(game.legal_mask.shape)
        policy = lk.TabularPolicy(game, raw / raw.sum(axis=1, keepdims=True))
        with lk.kernels.using("numpy"):
            expected = lk.nash_conv(game, policy)
        with lk.kernels.using("numba"):
            assert_same_bits(np.array([expected]), np.array([lk.nash_conv(game, policy)]))


def test_bind_gives_holders_the_plain_dispatcher_after_the_first_call():
    """A solver made before a kernel's first call in the process holds the announcing wrapper
    until that call, then the numba dispatcher itself (no extra Python call per step)."""
    import types

    from labkit import kernels
    from labkit.kernels import _FirstCall, njit

    class Holder:                                        # a solver, as far as bind is concerned
        pass

    dispatcher = njit(lambda x: x + 1)
    owner = types.SimpleNamespace()
    first = _FirstCall(dispatcher, "test", owner, "plus_one")
    early, other = Holder(), Holder()
    kernels.bind(early, "kernel", first)
    kernels.bind(other, "kernel", first)
    other.kernel = len                                   # replaced meanwhile: left alone
    assert early.kernel is first
    assert early.kernel(1) == 2
    assert early.kernel is dispatcher and owner.plus_one is dispatcher and other.kernel is len
    late = Holder()
    kernels.bind(late, "kernel", first)                  # after the first call: a plain assignment
    assert late.kernel is first and first._holders == []


def test_nash_conv_stays_in_numpy_until_it_has_cost_the_numba_load(monkeypatch):
    """With the compiled backend, a game is evaluated by numpy until numpy has spent
    NUMPY_FIRST_SECONDS on it (numba's import and kernel cost about that), then by the compiled pass."""
    game = lk.games.compile_game(_Solo())                             # a new game: no plan of earlier tests
    policy = lk.uniform_policy(game)
    monkeypatch.setattr(evaluate, "_KERNELS", None)                    # as in a fresh process
    monkeypatch.setattr(evaluate, "NUMPY_FIRST_SECONDS", float("inf"))
    with lk.kernels.using("numba"):                                   # one player: the C extension does not serve it
        first = lk.nash_conv(game, policy)
        assert "_compiled_plan" not in game.__dict__ and "_numpy_nash_conv_seconds" in game.__dict__
        monkeypatch.setattr(evaluate, "NUMPY_FIRST_SECONDS", game.__dict__["_numpy_nash_conv_seconds"])
        second = lk.nash_conv(game, policy)
    assert "_compiled_plan" in game.__dict__
    assert_same_bits(np.array([first]), np.array([second]))


def test_nash_conv_is_compiled_from_the_first_call_where_c_serves_the_game(monkeypatch):
    """The C extension loads in milliseconds: with it, the first evaluation of a two-player game is
    already compiled (numba is not needed); with LABKIT_NATIVE=0 the numpy-first rule holds."""
    _native_nash_conv_or_skip()
    monkeypatch.setattr(evaluate, "_KERNELS", None)
    monkeypatch.setattr(evaluate, "NUMPY_FIRST_SECONDS", float("inf"))
    with lk.kernels.using("numba"):
        game = lk.games.load("kuhn_poker(players=3)")
        game.__dict__.pop("_compiled_plan", None)
        game.__dict__.pop("_numpy_nash_conv_seconds", None)
        with _native.turned_off():
            lk.nash_conv(game, lk.uniform_policy(game))
            assert "_compiled_plan" not in game.__dict__
        lk.nash_conv(game, lk.uniform_policy(game))
        assert game.__dict__["_compiled_plan"][3] is not None and evaluate._KERNELS is None


def test_the_c_kernel_refuses_arrays_it_cannot_read():
    solver = CFR("kuhn_poker")
    if not isinstance(getattr(solver, "_kernel", None), _native.CfrIterations):
        pytest.skip("no C compiler here: CFR uses numba's kernel")
    solver.cumulative_regret = solver.cumulative_regret.astype(np.float32)
    with pytest.raises(ValueError, match="C-contiguous float64"):
        solver.run(1)
    solver.cumulative_regret = np.asfortranarray(np.zeros((solver.tree.num_infosets, 2)))
    with pytest.raises(ValueError, match="C-contiguous float64"):
        solver.run(1)


def test_a_small_cfr_table_does_not_import_numba():
    """The chapter's kind of run (CFR+ on Kuhn poker, a few NashConvs) in a fresh process loads
    neither numba nor scipy: their import alone costs more than the whole table."""
    if _native.cfr_iterations() is None:
        pytest.skip("no C compiler here: CFR uses numba's kernel")
    script = ("import sys, labkit as lk\n"
              "solver = lk.CFRPlus('kuhn_poker')\n"
              "for T in (10, 100, 1000):\n"
              "    solver.run(T - solver.iteration)\n"
              "    print(lk.nash_conv(solver.game, solver.average_policy()))\n"
              "print(solver.backend, sorted(m for m in ('numba', 'scipy') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          env={k: v for k, v in os.environ.items() if k not in ("LABKIT_KERNELS", "LABKIT_NATIVE")})
    assert done.stdout.splitlines()[-1] == "numba []", done.stdout + done.stderr


def test_a_game_evaluated_by_the_compiled_pass_can_be_pickled_and_copied():
    """The plan of the compiled evaluation (with the C extension's memory) stays in its process:
    a pickled or deep-copied game leaves it out and builds its own, with the same bits."""
    import copy
    import pickle

    game = lk.games.load("kuhn_poker(players=3)")
    policy = lk.uniform_policy(game)
    with lk.kernels.using("numba"):
        value = lk.nash_conv(game, policy)
        for other in (pickle.loads(pickle.dumps(game)), copy.deepcopy(game)):
            assert "_compiled_plan" not in other.__dict__
            assert_same_bits(np.array([value]), np.array([lk.nash_conv(other, lk.uniform_policy(other))]))
