"""The cached results of Lab 15 (labkit/data/lab15/) are what scripts/regenerate_lab15.py computes.

The script is run with --quick, which reruns every cached run (every MCCFR seed, every MMD variant,
both PSRO meta-solvers) for its first iterations, on the same evaluation grid; those rows must equal
the stored ones: digit for digit for seeded MCCFR (with the exact same count of histories touched),
to 1e-9 for the deterministic solvers. Known values from outside labkit anchor the files (NashConv
of the uniform policy, 4.7472222..., at iteration 0), and the node counter is checked on Kuhn poker,
where the possible path and subtree sizes can be listed by hand.
"""
import importlib.util
import json
from pathlib import Path

import pytest

import labkit as lk

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "labkit" / "data" / "lab15"
UNIFORM_NASH_CONV = 4.747222222222222       # Leduc, both players uniform (OpenSpiel gives the same)


def _load_script():
    spec = importlib.util.spec_from_file_location("regenerate_lab15", ROOT / "scripts" / "regenerate_lab15.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


regen = _load_script()


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """Every run's first iterations, regenerated into a temporary folder."""
    out = tmp_path_factory.mktemp("lab15")
    regen.regenerate(out_dir=out, quick=True, log=lambda *args: None)
    return {group: regen.read_csv(out / f"{group}.csv") for group in regen.GROUPS}


@pytest.fixture(scope="module")
def cached():
    return {group: regen.read_csv(DATA / f"{group}.csv") for group in regen.GROUPS}


def _keyed(rows, *key):
    return {tuple(row[k] for k in key): row for row in rows}


def _prefix(cached_rows, quick_rows, key, limit):
    cached_keyed = _keyed(cached_rows, *key)
    quick_keyed = _keyed(quick_rows, *key)
    expected = {k for k, row in cached_keyed.items() if row["iteration"] <= limit}
    assert set(quick_keyed) == expected, "the quick run evaluated other iterations than the cached prefix"
    return [(quick_keyed[k], cached_keyed[k]) for k in sorted(expected, key=str)]


def test_mccfr_prefix_is_reproduced_digit_for_digit(quick, cached):
    pairs = _prefix(cached["mccfr"], quick["mccfr"], ("sampling", "seed", "iteration"), regen.QUICK["mccfr"])
    assert len(pairs) > 100
    for new, old in pairs:
        assert new["nodes_touched"] == old["nodes_touched"], (new, old)
        assert f"{new['nash_conv']:.12g}" == f"{old['nash_conv']:.12g}", (new, old)


def test_mmd_prefix_is_reproduced(quick, cached):
    pairs = _prefix(cached["mmd"], quick["mmd"], ("variant", "iteration"), regen.QUICK["mmd"])
    assert len(pairs) > 100
    for new, old in pairs:
        for column in ("nash_conv_current", "nash_conv_average"):
            assert abs(new[column] - old[column]) <= 1e-9, (column, new, old)


def test_psro_prefix_is_reproduced(quick, cached):
    pairs = _prefix(cached["psro"], quick["psro"], ("meta_solver", "iteration"), regen.QUICK["psro"])
    assert len(pairs) == 2 * (regen.QUICK["psro"] + 1)
    for new, old in pairs:
        assert new["population_size"] == old["population_size"]
        assert abs(new["nash_conv"] - old["nash_conv"]) <= 1e-9, (new, old)


def test_cached_files_cover_every_run_to_its_end(cached):
    settings = json.loads((DATA / "settings.json").read_text())
    game = lk.games.load(regen.GAME)
    assert settings["command"] == "python scripts/regenerate_lab15.py"
    variants = regen.mmd_variants(game)
    assert settings["mmd"]["variants"].keys() == variants.keys()
    for name, options in variants.items():
        assert settings["mmd"]["variants"][name] == pytest.approx(options, rel=1e-12), name
    for sampling, iterations in regen.MCCFR_ITERATIONS.items():
        assert settings["mccfr"]["iterations"][sampling] == iterations
        for seed in regen.SEEDS:
            rows = [r for r in cached["mccfr"] if r["sampling"] == sampling and r["seed"] == seed]
            assert [r["iteration"] for r in rows] == regen.log_grid(iterations, per_decade=10)
            nodes = [r["nodes_touched"] for r in rows]
            assert all(b > a for a, b in zip(nodes, nodes[1:])), "nodes touched must grow with iterations"
    for variant in regen.mmd_variants(game):
        rows = [r for r in cached["mmd"] if r["variant"] == variant]
        assert rows[0]["iteration"] == 0 and rows[-1]["iteration"] == regen.MMD_ITERATIONS
        assert rows[0]["nash_conv_current"] == pytest.approx(UNIFORM_NASH_CONV, abs=1e-12)
    for meta_solver in ("nash", "uniform"):
        rows = [r for r in cached["psro"] if r["meta_solver"] == meta_solver]
        assert [r["iteration"] for r in rows] == list(range(regen.PSRO_ITERATIONS + 1))
        assert [r["population_size"] for r in rows] == list(range(1, regen.PSRO_ITERATIONS + 2))
        assert rows[0]["nash_conv"] == pytest.approx(UNIFORM_NASH_CONV, abs=1e-12)
    values = [r["nash_conv"] for r in cached["mccfr"] + cached["psro"]]
    values += [r[c] for r in cached["mmd"] for c in ("nash_conv_current", "nash_conv_average")]
    assert min(values) >= -1e-12, "NashConv is never negative"


def test_fixed_magnet_runs_end_at_the_regularized_equilibrium():
    """With a fixed magnet the last iterate converges to the regularized game's fixed point."""
    facts = json.loads((DATA / "settings.json").read_text())["mmd"]["end_of_run"]
    for variant, values in facts.items():
        if variant.startswith("fixed magnet"):
            assert values["regularized_equilibrium_residual"] < 1e-6, variant


@pytest.mark.parametrize("sampling, allowed", [
    # outcome: two paths of 5 or 6 histories (two deals, then 2 or 3 bets, then the end)
    ("outcome", {10, 11, 12}),
    # external, counted by hand from the tree: 7 or 9 histories for player 1's episode, 6 or 7 for player 2's
    ("external", {13, 14, 15, 16}),
])
def test_node_counter_on_kuhn_poker(sampling, allowed):
    kuhn = lk.games.load("kuhn_poker")
    solver = lk.MCCFR(kuhn, sampling=sampling, seed=3)
    seen = set()
    for _ in range(300):
        before = solver.nodes_touched
        solver.run(1)
        seen.add(solver.nodes_touched - before)
    assert seen <= allowed and len(seen) > 1, seen

