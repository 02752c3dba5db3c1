"""The book's table from OpenSpiel's calls to labkit's names every call correctly, on both sides."""
import importlib
import re
from pathlib import Path

import pytest

import labkit as lk

PAGE = Path(__file__).resolve().parents[1] / "book" / "openspiel_map.md"
ROWS = [line.split("|")[1:4] for line in PAGE.read_text().splitlines()
        if line.startswith("| ") and not line.startswith("| task") and "---" not in line]
OPENSPIEL_MODULES = {"policy": "open_spiel.python.policy", **{m: f"open_spiel.python.algorithms.{m}" for m in (
    "expected_game_score", "best_response", "exploitability", "cfr", "discounted_cfr", "outcome_sampling_mccfr",
    "external_sampling_mccfr", "mmd_dilated", "sequence_form_lp")}, "psro_v2": "open_spiel.python.algorithms.psro_v2.psro_v2"}


def test_the_table_is_there():
    assert len(ROWS) >= 15


@pytest.mark.parametrize("task,openspiel,labkit", ROWS, ids=[r[0].strip() for r in ROWS])
def test_labkit_side_names_real_objects(task, openspiel, labkit):
    names = re.findall(r"lk\.([A-Za-z_.]+)", labkit)
    for dotted in names:
        obj = lk
        for part in dotted.split("."):
            assert hasattr(obj, part), f"{task}: lk.{dotted} does not exist"
            obj = getattr(obj, part)
    for method in re.findall(r"solver\.([a-z_]+)\(", labkit):
        assert hasattr(lk.CFR, method), f"{task}: labkit's solvers have no {method}()"


@pytest.mark.parametrize("task,openspiel,labkit", ROWS, ids=[r[0].strip() for r in ROWS])
def test_openspiel_side_names_real_objects(task, openspiel, labkit):
    pytest.importorskip("open_spiel")
    for module, name in re.findall(r"`(?:\w+ = )?([a-z_0-9]+)\.([A-Za-z_]+)\(", openspiel):
        if module in ("pyspiel",):
            import pyspiel
            assert hasattr(pyspiel, name)
            continue
        if module == "solver":
            continue
        try:
            mod = importlib.import_module(OPENSPIEL_MODULES[module])
        except ModuleNotFoundError as err:              # psro_v2 and the LP need cvxpy
            pytest.skip(f"{module}: {err}")
        assert hasattr(mod, name), f"{task}: {OPENSPIEL_MODULES[module]}.{name} does not exist"
