"""The cached runs of labkit.deep (labkit/data/deep/) are what scripts/regenerate_deep.py makes.

Every test reruns the first checkpoint of the first seed of one result and compares. The tabular
references (CFR, CFR+, seeded MCCFR, tabular MMD) are numpy code and must agree to 1e-9. The JAX
learners are bit-identical on the machine and library versions that made the file (recorded in its
JSON), and there they agree to float32 rounding (1e-6: a change of labkit's float64 evaluation around
the network, e.g. how a policy is normalized, moves the last float32 bit); elsewhere XLA's float32
kernels may round differently
(other vector instructions), so the comparison allows 2e-3 in NashConv, far below the differences
between seeds (about 0.1 at these checkpoints) and between methods.
"""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "labkit" / "data" / "deep"


def _load_script():
    path = ROOT / "scripts" / "regenerate_deep.py"
    spec = importlib.util.spec_from_file_location("regenerate_deep", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.setdefault("regenerate_deep", module)
    return module


script = _load_script()
CACHED = [name for name in script.RUNS if (DATA / f"{name}.csv").exists()]


def _same_machine(meta):
    return meta["machine"] == script.machine()


def test_every_result_is_cached_with_its_settings():
    assert CACHED == list(script.RUNS)
    for name in CACHED:
        meta = json.loads((DATA / f"{name}.json").read_text())
        rows = script.read_csv(DATA / f"{name}.csv")
        assert meta["rows"] == len(rows)
        assert meta["checkpoints"] == script.RUNS[name]["checkpoints"]
        assert meta["command"].endswith(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", CACHED)
def test_a_slice_of_every_result_regenerates(name):
    meta = json.loads((DATA / f"{name}.json").read_text())
    cached = script.read_csv(DATA / f"{name}.csv")
    fresh = script.make(name, quick=True)
    value = "team_value" if name == "teams" else "nash_conv"
    keys = [k for k in fresh[0] if k not in (value, "cpu_seconds", "best_response_nash_conv", "greedy_actions")]
    index = {tuple(r[k] for k in keys): r for r in cached}
    exact = _same_machine(meta)
    for row in fresh:
        old = index[tuple(str(row[k]) for k in keys)]
        tabular = row.get("method") in ("CFR", "CFR+", "MCCFR (external sampling)", "MMD (tabular)")
        tolerance = 1e-9 if tabular else (1e-6 if exact else 2e-3)
        assert abs(float(old[value]) - row[value]) <= tolerance, (name, row, old[value])
        if name == "teams" and exact:
            assert old["greedy_actions"] == row["greedy_actions"]
