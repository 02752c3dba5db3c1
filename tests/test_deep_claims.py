"""What labkit/data/deep/README.md says the cached deep runs show, read back from the files.

The claims are the goals of the deep-learning issue: Deep CFR and NFSP on Leduc below given NashConv
levels within the cached budget, and the cooperative learners' outcomes on the climbing and
messenger games that chapter 7 discusses. The numbers come from the CSV files that
scripts/regenerate_deep.py writes (tests/test_deep_data.py checks that they regenerate); a new run
that no longer shows a claim fails here, so the README and the chapter get revisited.
"""
import csv
from collections import Counter

import numpy as np
import pytest

import labkit as lk

CLIMBING_OPTIMUM = "a a"         # the summit (a, a), worth 11
OPTIMUM = 11.0


def _rows(name):
    with open(lk.data.path("deep", f"{name}.csv"), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _final(rows, method, budget_key):
    mine = [r for r in rows if r["method"] == method]
    last = max(int(r[budget_key]) for r in mine)
    return last, np.array([float(r["nash_conv"]) for r in mine if int(r[budget_key]) == last])


def test_deep_cfr_on_leduc_ends_below_0_3_in_every_seed():
    last, values = _final(_rows("deep_cfr_leduc"), "Deep CFR", "iterations")
    assert len(values) >= 3, "fewer than three seeds cached"
    assert values.max() < 0.3, f"Deep CFR after {last} iterations: {values}"


def test_nfsp_on_leduc_ends_below_0_5():
    last, values = _final(_rows("nfsp_leduc"), "NFSP", "episodes")
    assert len(values) >= 3, "fewer than three seeds cached"
    assert np.median(values) < 0.5, f"NFSP after {last:,} hands: {values}"


def _team_final(learner, game):
    rows = [r for r in _rows("teams") if r["learner"] == learner and r["game"] == game]
    last = max(int(r["iterations"]) for r in rows)
    return [r for r in rows if int(r["iterations"]) == last]


@pytest.mark.parametrize("learner", ["VDN", "QMIX"])
def test_factorized_learners_miss_the_climbing_summit(learner):
    finals = _team_final(learner, "climbing game")
    assert len(finals) == 10
    assert all(r["greedy_actions"] != CLIMBING_OPTIMUM for r in finals)
    assert all(float(r["team_value"]) < OPTIMUM for r in finals)


@pytest.mark.parametrize("learner", ["COMA", "MAPPO"])
def test_centralized_critics_climb_to_the_b_b_equilibrium(learner):
    # (b, b), worth 7, where the factorized learners mostly stop at (b, c), worth 6
    counts = Counter(r["greedy_actions"] for r in _team_final(learner, "climbing game"))
    assert counts["b b"] >= 8, counts
    factorized = Counter(r["greedy_actions"] for r in _team_final("VDN", "climbing game"))
    assert counts["b b"] > factorized["b b"]


def test_only_the_q_learners_learn_to_send_the_message():
    reach = {learner: sum(float(r["team_value"]) == OPTIMUM
                          for r in _team_final(learner, "messenger game"))
             for learner in ["independent Q", "VDN", "QMIX", "COMA", "MAPPO"]}
    assert reach["independent Q"] > max(reach["VDN"], reach["QMIX"]) > 0, reach
    assert reach["COMA"] == reach["MAPPO"] == 0, reach
