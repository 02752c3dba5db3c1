"""The cached results of chapters 4 and 5 (labkit/data/book/) are what scripts/regenerate_book_data.py makes.

Each test reruns a small slice of one cached result with the script's own functions and compares:
CFR, CFR+ and PSRO are deterministic (agreement to 1e-9), seeded MCCFR runs must agree exactly. The
files are also checked for completeness (every run, seed and checkpoint the chapters read) and for
values that are known from outside the cache (NashConv of the uniform policy on Leduc, 4.7472222...).
CPU times are not compared: they depend on the machine.
"""
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "labkit" / "data" / "book"
LEDUC_UNIFORM_NASH_CONV = 4.7472222222222222       # OpenSpiel's value for the uniform policy


def _load_script():
    path = ROOT / "scripts" / "regenerate_book_data.py"
    spec = importlib.util.spec_from_file_location("regenerate_book_data", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.setdefault("regenerate_book_data", module)
    return module


script = _load_script()


@pytest.fixture(scope="module")
def mccfr_rows():
    return script.read_csv(DATA / "ch04_mccfr_leduc.csv")


@pytest.fixture(scope="module")
def psro_rows():
    return script.read_csv(DATA / "ch05_psro_leduc.csv")


def _select(rows, **where):
    return [r for r in rows if all(r[k] == str(v) for k, v in where.items())]


# ----------------------------------------------------------------------------- chapter 4
def test_mccfr_cache_has_every_run_seed_and_checkpoint(mccfr_rows):
    meta = json.loads((DATA / "ch04_mccfr_leduc.json").read_text())
    assert meta["rows"] == len(mccfr_rows)
    assert meta["checkpoints"] == script.MCCFR_CHECKPOINTS
    assert script.MCCFR_CHECKPOINTS[0] == 10 and script.MCCFR_CHECKPOINTS[-1] == 100_000
    for method, exploration, seed in script.mccfr_runs():
        run = _select(mccfr_rows, method=method, exploration=exploration, seed=seed)
        assert [int(r["iterations"]) for r in run] == script.MCCFR_CHECKPOINTS, (method, exploration, seed)
        values = np.array([float(r["nash_conv"]) for r in run])
        cpu = np.array([float(r["cpu_seconds"]) for r in run])
        assert np.all(values >= 0) and np.all(values < LEDUC_UNIFORM_NASH_CONV + 1)
        assert np.all(np.diff(cpu) >= 0)
    assert len(mccfr_rows) == len(script.mccfr_runs()) * len(script.MCCFR_CHECKPOINTS)


@pytest.mark.parametrize("method", ["CFR", "CFR+"])
def test_deterministic_solvers_reproduce_the_cache(leduc, mccfr_rows, method):
    checkpoints = [T for T in script.MCCFR_CHECKPOINTS if T <= 100]
    fresh = script.convergence_run(leduc, method, checkpoints=checkpoints)
    cached = _select(mccfr_rows, method=method)[:len(checkpoints)]
    assert [int(r["iterations"]) for r in cached] == checkpoints
    np.testing.assert_allclose([r["nash_conv"] for r in fresh], [float(r["nash_conv"]) for r in cached],
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("method, exploration, seed", [
    ("MCCFR (external sampling)", "", 0),
    ("MCCFR (external sampling)", "", 3),
    ("MCCFR (outcome sampling)", 0.6, 0),
    ("MCCFR (outcome sampling)", 0.1, 4),
    ("MCCFR (outcome sampling)", 1.0, 2),
])
def test_seeded_mccfr_runs_reproduce_the_cache_exactly(leduc, mccfr_rows, method, exploration, seed):
    checkpoints = [T for T in script.MCCFR_CHECKPOINTS if T <= 1000]
    fresh = script.convergence_run(leduc, method, exploration, seed, checkpoints=checkpoints)
    cached = _select(mccfr_rows, method=method, exploration=exploration, seed=seed)[:len(checkpoints)]
    assert [r["nash_conv"] for r in fresh] == [float(r["nash_conv"]) for r in cached]


def test_cached_mccfr_starts_far_from_and_ends_close_to_equilibrium(mccfr_rows):
    """Sanity against outside values: after 10 iterations no run is near an equilibrium; after 100,000
    every run is below a third of the uniform policy's NashConv, external sampling below a tenth, and
    CFR+ is the most accurate."""
    last = {(r["method"], r["exploration"], r["seed"]): float(r["nash_conv"])
            for r in mccfr_rows if r["iterations"] == "100000"}
    first = [float(r["nash_conv"]) for r in mccfr_rows if r["iterations"] == "10"]
    assert min(first) > 0.1
    assert max(last.values()) < LEDUC_UNIFORM_NASH_CONV / 3
    assert max(v for k, v in last.items() if k[0] == "MCCFR (external sampling)") < LEDUC_UNIFORM_NASH_CONV / 10
    assert last[("CFR+", "", "")] == min(last.values())


# ----------------------------------------------------------------------------- chapter 5
def test_psro_cache_has_every_meta_solver_and_iteration(psro_rows):
    meta = json.loads((DATA / "ch05_psro_leduc.json").read_text())
    assert meta["rows"] == len(psro_rows) == len(script.META_SOLVERS) * (script.PSRO_ITERATIONS + 1)
    for meta_solver in script.META_SOLVERS:
        run = _select(psro_rows, meta_solver=meta_solver)
        assert [int(r["iteration"]) for r in run] == list(range(script.PSRO_ITERATIONS + 1))
        # every run starts from the uniform policy, whose NashConv is known
        assert float(run[0]["nash_conv"]) == pytest.approx(LEDUC_UNIFORM_NASH_CONV, abs=1e-9)
        sizes = [int(r["population_size"]) for r in run]
        assert sizes == [k + 1 for k in range(script.PSRO_ITERATIONS + 1)]
        for r in run:
            for p in ("1", "2"):
                assert 1 <= int(r[f"support_{p}"]) <= int(r["population_size"])
                assert 1 <= int(r[f"distinct_{p}"]) <= int(r["population_size"])


@pytest.mark.parametrize("meta_solver", ["nash", "uniform", "last", "prd"])
def test_psro_runs_reproduce_the_cache(leduc, psro_rows, meta_solver):
    iterations = 4 if meta_solver == "prd" else 8
    fresh = script.psro_run(leduc, meta_solver, iterations=iterations)
    cached = _select(psro_rows, meta_solver=meta_solver)[:iterations + 1]
    np.testing.assert_allclose([r["nash_conv"] for r in fresh], [float(r["nash_conv"]) for r in cached],
                               rtol=0, atol=1e-9)
    for key in ("population_size", "distinct_1", "distinct_2", "support_1", "support_2"):
        assert [r[key] for r in fresh] == [int(r[key]) for r in cached], key


def test_regenerate_script_lists_its_results(capsys):
    assert script.main(["--list"]) == 0
    assert capsys.readouterr().out.split() == list(script.RESULTS)
    with pytest.raises(SystemExit):
        script.main(["no_such_result"])
