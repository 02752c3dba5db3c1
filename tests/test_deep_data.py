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

import numpy as np
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
    keys = [k for k in fresh[0] if k not in (value, "cpu_seconds", "best_response_nash_conv", "greedy_actions",
                                             "policy")]
    index = {tuple(r[k] for k in keys): r for r in cached}
    exact = _same_machine(meta)
    for row in fresh:
        old = index[tuple(str(row[k]) for k in keys)]
        tabular = row.get("method") in ("CFR", "CFR+", "MCCFR (external sampling)", "MMD (tabular)")
        tolerance = 1e-9 if tabular else (1e-6 if exact else 2e-3)
        assert abs(float(old[value]) - row[value]) <= tolerance, (name, row, old[value])
        if name == "teams" and exact:
            assert old["greedy_actions"] == row["greedy_actions"]
    if "policy" in fresh[0]:                     # the widget's record: the first checkpoint of seed 0
        record = meta["policies"]
        tolerance = 1e-6 if exact else 2e-3
        assert abs(record["nash_conv"][0][0] - fresh[0]["nash_conv"]) <= tolerance
        assert abs(np.asarray(record["probs"][0][0]) - np.asarray(fresh[0]["policy"])).max() <= tolerance


def test_the_widget_record_matches_the_curves_it_comes_from():
    import labkit as lk
    meta = lk.data.read_json("deep", "nfsp_leduc_widget.json")
    record = meta["policies"]
    rows = script.read_csv(DATA / "nfsp_leduc_widget.csv")
    game = lk.games.load(record["game"])
    assert record["infosets"] == script.RUNS["nfsp_leduc_widget"]["policies_at"]
    assert record["action_names"] == list(game.action_names)
    assert record["episodes"] == script.RUNS["nfsp_leduc_widget"]["checkpoints"]
    # the widget's run is seed 0 of nfsp_leduc (same settings), checked more often: where the
    # checkpoints meet, the two files hold the same NashConv
    assert script.RUNS["nfsp_leduc_widget"]["config"] == script.RUNS["nfsp_leduc"]["config"]
    curve = {int(r["episodes"]): float(r["nash_conv"]) for r in script.read_csv(DATA / "nfsp_leduc.csv")
             if r["seed"] == "0"}
    other = json.loads((DATA / "nfsp_leduc.json").read_text())
    tolerance = 1e-6 if meta["machine"] == other["machine"] else 2e-3
    shared = [t for t in record["episodes"] if t in curve]
    assert len(shared) >= 4
    for t in shared:
        assert abs(record["nash_conv"][0][record["episodes"].index(t)] - curve[t]) <= tolerance, t
    for s, seed in enumerate(record["seeds"]):
        curve = [float(r["nash_conv"]) for r in rows if int(r["seed"]) == seed]
        assert record["nash_conv"][s] == curve                    # both written from the same floats
        probs = np.asarray(record["probs"][s])
        assert probs.shape == (len(record["episodes"]), len(record["infosets"]), game.num_actions)
        np.testing.assert_allclose(probs.sum(axis=2), 1.0, atol=1e-9)
        for j, key in enumerate(record["infosets"]):             # zero on the illegal actions
            legal = game.legal_mask[game.infoset_index(key)]
            assert np.all(probs[:, j, ~legal] == 0)
