"""EFR with fixed_point="paper": the authors' floating-point computation.

The point of this mode is reproducing published digits, so the decisive tests compare with the
paper (tests/test_experiments.py: per-round anchors and whole Figure E.5 tables). Here: the
mode computes the same mathematics as the default path (to rounding), its solver is a fixed
point, and it fails clearly where it cannot be built.
"""
import subprocess
from pathlib import Path

import numpy as np
import pytest

import labkit as lk
from labkit.efr import EFR, eigen, paper_numerics, transformation_fixed_point
from labkit.efr.deviations import deviation_structure

GAMES = ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)",
         "goofspiel(num_cards=3,players=2,points_order=ascending,imp_info=True)"]

eigen_ok, eigen_reason = eigen.available()
needs_eigen = pytest.mark.skipif(not eigen_ok, reason=eigen_reason)


def random_profile(game, seed):
    rng = np.random.default_rng(seed)
    probs = rng.random(game.legal_mask.shape) * game.legal_mask
    probs[rng.random(probs.shape) < 0.15] = 0.0          # some exact zeros: pruned branches
    probs[probs.sum(axis=1) == 0] = game.legal_mask[probs.sum(axis=1) == 0]
    return probs / probs.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("name", GAMES)
def test_depth_first_values_equal_the_vectorized_pass(name):
    game = lk.games.load(name)
    learner = EFR(game, "cf")
    profile = random_profile(game, 3)
    unreached = 0
    for player in range(game.num_players):
        q, v, reached = paper_numerics.counterfactual_values(game, profile, player)
        expected_q, others_reach = learner._tree_pass(profile, player)
        mine = game.infoset_player == player
        np.testing.assert_allclose(q[mine], expected_q[mine], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(v[mine], (profile * expected_q).sum(axis=1)[mine], rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(reached[mine], others_reach[mine] > 0)
        unreached += mine.sum() - reached[mine].sum()
    if name == "leduc_poker":
        assert unreached > 0                                    # the zeros did prune something


def test_depth_first_order_is_a_preorder(leduc):
    order, children = paper_numerics.depth_first_order(leduc)
    assert sorted(order) == list(range(leduc.num_histories))
    child = np.arange(1, leduc.num_histories)
    assert np.all(order[child] > order[leduc.parent[child]])
    # siblings in action order, and a whole subtree before the next sibling
    by_order = np.argsort(order)
    depth_walk = leduc.depth[by_order]
    assert np.all(np.diff(depth_walk) <= 1)
    assert children.sum() == leduc.num_histories - 1


@pytest.mark.parametrize("kind", ["cf_ex+in", "tips_ex+in"])
def test_sequential_regrets_equal_the_closed_forms(leduc, kind):
    learner = EFR(leduc, kind)
    profile = random_profile(leduc, 5)
    q = np.zeros(leduc.legal_mask.shape)
    v = np.zeros(leduc.num_infosets)
    for p in range(2):
        qq, vv, _ = paper_numerics.counterfactual_values(leduc, profile, p)
        mine = leduc.infoset_player == p
        q[mine], v[mine] = qq[mine], vv[mine]
    structure = deviation_structure(leduc, kind)
    rho = paper_numerics.immediate_regrets(leduc, structure, q, v, profile)
    active = np.zeros(rho.shape, dtype=bool)
    np.logical_or.at(active, structure.row_infoset, structure.row_active)
    expected = learner._immediate_regrets(q, profile)
    np.testing.assert_allclose(rho[active], expected[active], rtol=1e-9, atol=1e-13)
    assert np.all(rho[~active] == 0.0)


def test_sequential_sums_and_products():
    terms = np.array([[1e16], [1.0], [-1e16], [1.0], [2.0]])
    # left to right: ((1e16 + 1) - 1e16) + 1 = 1, where a pairwise sum gives 0
    np.testing.assert_array_equal(paper_numerics.sequential_segment_sums(terms, np.array([0, 4])), [[1.0], [2.0]])
    # segments of uneven length against a plain Python running sum, bit for bit
    rng = np.random.default_rng(0)
    terms = rng.standard_normal((300, 4)) * 10.0 ** rng.integers(-18, 18, (300, 4))
    starts = np.r_[0, np.sort(rng.choice(np.arange(1, 300), 40, replace=False))]
    expected = np.zeros((len(starts), 4))
    for segment, (begin, end) in enumerate(zip(starts, np.r_[starts[1:], 300])):
        for row in range(begin, end):
            expected[segment] = expected[segment] + terms[row]
    np.testing.assert_array_equal(paper_numerics.sequential_segment_sums(terms, starts), expected)
    factors = np.array([[0.1, 0.7, 0.3], [0.5, 1.0, 1.0]])
    np.testing.assert_array_equal(paper_numerics.sequential_products(factors), [(0.1 * 0.7) * 0.3, 0.5])


# ---------------------------------------------------------------------------- the Eigen solver
@needs_eigen
def test_eigen_solution_is_a_fixed_point(leduc):
    rng = np.random.default_rng(7)
    three = np.flatnonzero(leduc.num_legal == 3)[:200]
    legal = leduc.legal_mask[three]
    A = leduc.num_actions
    y = np.zeros((len(three), A + A * A))
    y[:, :A] = rng.random((len(three), A)) * (rng.random((len(three), A)) < 0.5)
    internal = rng.random((len(three), A, A)) * ~np.eye(A, dtype=bool)
    y[:, A:] = internal.reshape(len(three), -1)
    sigma = eigen.eigen_fixed_point(y, legal, 0, A)
    # dense positive weights: a unique stationary distribution, which the exact rule also finds
    np.testing.assert_allclose(sigma, transformation_fixed_point(y, legal, 0, A), atol=1e-12)
    np.testing.assert_allclose(sigma.sum(axis=1), 1.0, atol=1e-12)


@needs_eigen
def test_two_actions_take_the_closed_form_without_specks(leduc):
    """With two actions "a becomes b" is "every action becomes b": no least squares, exact zeros."""
    two = np.flatnonzero(leduc.num_legal == 2)[:50]
    legal = leduc.legal_mask[two]
    A = leduc.num_actions
    y = np.zeros((len(two), A * A))
    for row, infoset in enumerate(two):
        a, b = np.flatnonzero(legal[row])
        y[row, a * A + b] = 0.25 + row                       # only a -> b carries weight
    sigma = eigen.eigen_fixed_point(y, legal, None, 0)
    for row in range(len(two)):
        a, b = np.flatnonzero(legal[row])
        assert sigma[row, a] == 0.0 and sigma[row, b] == 1.0


@needs_eigen
def test_least_squares_leaves_the_authors_specks():
    """Three actions, every action moved to one of them: in exact arithmetic (0, 0, 1); Eigen's
    JacobiSVD leaves a rounding speck on an action, and that speck is what the paper's runs saw."""
    legal = np.ones((1, 3), dtype=bool)
    y = np.zeros((1, 9))
    y[0, 0 * 3 + 2] = y[0, 1 * 3 + 2] = 1.0                  # 0 -> 2 and 1 -> 2
    sigma = eigen.eigen_fixed_point(y, legal, None, 0)
    assert sigma[0, 2] == pytest.approx(1.0, abs=1e-15)
    assert np.all(sigma[0, :2] < 1e-15) and sigma[0, :2].max() > 0.0


@needs_eigen
def test_paper_cf_is_simultaneous_cfr(leduc):
    efr, cfr = EFR(leduc, "cf", fixed_point="paper"), lk.CFR(leduc, alternating_updates=False)
    for _ in range(10):
        efr.step()
        cfr.step()
    np.testing.assert_allclose(efr.current_policy().probs, cfr.current_policy().probs, atol=1e-12)


def test_missing_headers_are_named(monkeypatch):
    monkeypatch.setattr(eigen, "eigen_include_dir", lambda: None)
    with pytest.raises(eigen.EigenUnavailable, match="cmeel-eigen"):
        eigen.build()


def test_efr_refuses_paper_mode_with_the_reason(monkeypatch, kuhn):
    monkeypatch.setattr(eigen, "_library", None)                  # as in a fresh process
    monkeypatch.setattr(eigen, "_compiler", lambda: None)
    with pytest.raises(eigen.EigenUnavailable, match="C\\+\\+ compiler"):
        EFR(kuhn, "tips", fixed_point="paper")
    with pytest.raises(eigen.EigenUnavailable, match="compiler"):
        lk.experiments.efr_tournament(kuhn, ["cf"], ["cf"], rounds=2, executor="serial", fixed_point="paper")
    ok, reason = eigen.available()
    assert not ok and "compiler" in reason
    with pytest.raises(ValueError, match="paper"):
        EFR(kuhn, "tips", fixed_point="eigen")


@needs_eigen
def test_build_falls_back_to_a_temporary_directory(monkeypatch, tmp_path):
    """Where the cache directory cannot be made (here: its parent is a file) the solver is built
    under the temporary directory."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("LABKIT_CACHE_DIR", str(blocker / "cache"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(eigen.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    path = eigen.build()
    assert path.is_file() and path.is_relative_to(tmp_path / "tmp")


def test_solver_flags_follow_the_processor(monkeypatch):
    """AVX for the solver where the processor has it (the authors' build grouped Eigen's sums four
    doubles at a time); the baseline build on request or without AVX."""
    monkeypatch.delenv("LABKIT_EIGEN_AVX", raising=False)
    monkeypatch.setattr(eigen, "cpu_has_avx", lambda: True)
    assert eigen.solver_flags() == ["-mavx"]
    monkeypatch.setenv("LABKIT_EIGEN_AVX", "0")
    assert eigen.solver_flags() == []
    monkeypatch.delenv("LABKIT_EIGEN_AVX")
    monkeypatch.setattr(eigen, "cpu_has_avx", lambda: False)
    assert eigen.solver_flags() == []


def test_only_an_x86_64_processor_has_avx(monkeypatch):
    import platform
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert not eigen.cpu_has_avx()


def test_only_the_solver_is_built_with_avx(monkeypatch, tmp_path):
    """The solver's file gets -mavx, the round's loops keep the baseline flags (their sums are
    written out in order and must not change), and the flags are part of the library's name."""
    if eigen.eigen_include_dir() is None or eigen._compiler() is None:
        pytest.skip("needs Eigen's headers and a compiler (only to name them)")
    monkeypatch.setenv("LABKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(eigen, "cpu_has_avx", lambda: True)
    commands = []

    def pretend(command, **kwargs):
        commands.append(command)
        Path(command[command.index("-o") + 1]).write_bytes(b"")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(eigen.subprocess, "run", pretend)
    with_avx = eigen.build()
    by_source = {Path(c[c.index("-c") + 1]).name: c for c in commands if "-c" in c}
    assert "-mavx" in by_source["eigen_fixed_point.cpp"]
    assert "-mavx" not in by_source["paper_kernels.cpp"]
    assert all("-ffp-contract=off" in c and not any(f.startswith("-march") for f in c)
               for c in by_source.values())
    monkeypatch.setattr(eigen, "cpu_has_avx", lambda: False)
    assert eigen.build() != with_avx


@needs_eigen
@pytest.mark.skipif("-mavx" not in eigen.solver_flags(), reason="the solver is built without AVX here")
def test_the_vector_width_matters_only_for_large_systems():
    """Built four doubles wide (AVX) or two, Eigen's SVD groups its sums differently. Up to four
    actions (every system of Leduc, goofspiel(4), Sheriff, tiny Hanabi) the solutions have the same
    bits; with seven (tiny bridge's opening bid) most do not."""
    rng = np.random.default_rng(5)
    same = {}
    for n in (3, 4, 7):
        B = 3000
        internal = rng.random((B, n, n)) * (rng.random((B, n, n)) < 0.6)
        internal *= 10.0 ** rng.integers(-17, 1, size=(B, n, n))         # specks beside weights
        internal[:, np.arange(n), np.arange(n)] = 0
        y = np.concatenate([rng.random((B, n)) * (rng.random((B, n)) < 0.3), internal.reshape(B, -1)], axis=1)
        legal = np.ones((B, n), bool)
        four_wide = eigen.eigen_fixed_point(y, legal, 0, n)
        with eigen.baseline_solver():
            two_wide = eigen.eigen_fixed_point(y, legal, 0, n)
        same[n] = np.all(four_wide.view(np.int64) == two_wide.view(np.int64), axis=1).mean()
    assert same[3] == same[4] == 1.0
    assert same[7] < 0.5
