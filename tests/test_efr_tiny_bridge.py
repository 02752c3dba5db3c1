"""Tiny bridge with the authors' numerics, beside the authors' own per-round values.

The anchors below are numbers from the authors' data files ``data/efr.tiny_bridge.null.fixed.gen.ssv``
and ``data/efr.tiny_bridge.null.sim.gen.ssv`` of github.com/dmorrill10/hr_edl_experiments (commit
9bedae2): the row learner's seat-averaged expected payoff against the column in round t, printed with
six significant digits. The means are those of their per-round values over t = 0..499 (rounded as
printed, so within half a unit of the sixth digit of ours).

Two details of the authors' arithmetic decide these digits and nothing in the other eight games
(labkit/data/efr/README.md, "Tiny bridge"):

* the deal: OpenSpiel lists tiny bridge's hands in an order that is not sorted, and an information
  set's values are sums over its histories in that depth-first order (`paper_numerics.sibling_rank`);
  summed in sorted order, ACT_IN's self-play leaves the authors' values in round 2;
* the solver's vector width: the authors' Eigen ran with AVX (four doubles per vector), whose
  grouping of sums rounds tiny bridge's 8 x 7 systems differently from the two-double baseline
  (`eigen.solver_flags`); without it ACT_IN's self-play leaves them in round 3.
"""
import dataclasses
import functools
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")     # tiny bridge is OpenSpiel's game

from labkit.efr import eigen, paper_numerics  # noqa: E402
from labkit.experiments import TournamentResult, load_game  # noqa: E402
from labkit.experiments.tournament import (FixedUnit, PairUnit, efr_learner, run_fixed_unit,  # noqa: E402
                                           run_pair_unit)
from labkit.tree import CHANCE  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "labkit" / "data" / "efr"
SPEC = "openspiel:tiny_bridge_2p"

# (row, column): the authors' values for t = 1..9
FIXED = {
    ("act_in", "act_in"): (15.6667, 18.7751, 20.1851, 20.3448, 20.3932, 20.5052, 20.5972, 20.6242, 20.6419),
    ("cf", "act_in"): (13.394, 17.3756, 19.9106, 20.1791, 20.2926, 20.4027, 20.526, 20.595, 20.624),
    ("csps", "act_in"): (15.6721, 18.4703, 20.2068, 20.3332, 20.3962, 20.4998, 20.5787, 20.6214, 20.6481),
    ("bhv", "act_in"): (15.6667, 18.5707, 20.1851, 20.3453, 20.4167, 20.5358, 20.5909, 20.6253, 20.65),
    ("bhv", "bhv"): (15.6667, 18.3664, 20.1346, 20.3804, 20.4757, 20.5553, 20.6009, 20.6448, 20.6562),
    ("cf", "bhv"): (13.394, 17.1677, 19.816, 20.1777, 20.3172, 20.4511, 20.552, 20.6046, 20.6264),
    ("tips", "bhv"): (15.6667, 18.3701, 20.1284, 20.3761, 20.468, 20.5804, 20.6117, 20.6448, 20.6562),
    ("cfps", "bhv"): (15.6667, 18.3701, 20.1247, 20.3761, 20.4678, 20.5804, 20.6117, 20.6448, 20.6562),
}
SIMULTANEOUS = {
    ("act_in", "cf"): (13.394, 18.0106, 19.6314, 20.075, 20.3286, 20.5593, 20.5791, 20.5884, 20.5948),
    ("act_in", "csps"): (15.6721, 18.4943, 20.0497, 20.2363, 20.3487, 20.4858, 20.5919, 20.6185, 20.6451),
    ("bhv", "bhv"): (15.6667, 18.3664, 20.1346, 20.3804, 20.4757, 20.5553, 20.6009, 20.6448, 20.6562),
    ("bhv", "cfps"): (15.6667, 18.3701, 20.1246, 20.377, 20.4736, 20.6058, 20.5953, 20.632, 20.6566),
    ("cf_in", "bhv"): (15.6667, 18.3739, 20.1202, 20.368, 20.4408, 20.5407, 20.6033, 20.6047, 20.6498),
    ("cfps_ex+in", "tips"): (13.4815, 18.1937, 19.7261, 20.1807, 20.3799, 20.5653, 20.5777, 20.5866, 20.5956),
}
ANCHORS = {"fixed": FIXED, "simultaneous": SIMULTANEOUS}
# (row, column): the authors' values at t = 100, 250 and 499
LATE = {
    "fixed": {("act_in", "act_in"): (20.6429, 20.6429, 20.6429), ("cf", "bhv"): (20.6587, 20.6587, 20.6587),
              ("tips_ex+in", "cfps"): (20.6587, 20.6587, 20.6587)},
    "simultaneous": {("act_in", "cf"): (20.7083, 20.7083, 20.7083), ("bhv", "cfps"): (20.6587, 20.6587, 20.6587),
                     ("tips", "cfps_ex+in"): (20.7282, 20.7282, 20.7282)},
}
LATE_ROUNDS = (100, 250, 499)
# (row, column): mean of the authors' per-round values over t = 0..499, the entries that labkit's
# earlier tables missed most (by 6e-4 in the fixed regime, 0.035 in the simultaneous one)
MEANS = {
    "fixed": {("act_in", "csps"): 20.656809, ("tips", "act_in"): 20.568348, ("cf_in", "act_in"): 20.568271},
    "simultaneous": {("csps", "act_in"): 20.582861, ("cf", "act_in"): 20.608809, ("tips", "act_in"): 20.568296},
}
HALF_OF_THE_SIXTH_DIGIT = 5e-5 + 1e-9        # payoffs near 20: the sixth digit is 1e-4


def six_digits(value):
    return float(f"{value:.6g}")


def paper_learner():
    return functools.partial(efr_learner, fixed_point="paper")


@pytest.fixture(scope="module")
def bridge():
    return load_game(SPEC)


@pytest.mark.parametrize("regime", ["fixed", "simultaneous"])
def test_cached_tables_hold_the_authors_values(regime):
    result = TournamentResult.from_json(DATA / f"tiny_bridge_2p_{regime}.json")
    for (row, column), values in ANCHORS[regime].items():
        ours = [six_digits(v) for v in result.per_round[row][column][1:10]]
        assert ours == list(values), (row, column, ours)
    for (row, column), values in LATE[regime].items():
        ours = [six_digits(result.per_round[row][column][t]) for t in LATE_ROUNDS]
        assert ours == list(values), (row, column, ours)
    for (row, column), mean in MEANS[regime].items():
        assert abs(result.mean[row][column] - mean) <= HALF_OF_THE_SIXTH_DIGIT, (row, column)


needs_the_authors_solver = pytest.mark.skipif(
    not eigen.available()[0] or "-mavx" not in eigen.solver_flags(),
    reason="needs the compiled solver with AVX (an x86-64 processor with AVX)")


@needs_the_authors_solver
@pytest.mark.parametrize("column", ["act_in", "bhv"])
def test_fixed_regime_rounds_reproduce_the_authors(column):
    rows = tuple(dict.fromkeys(row for row, col in FIXED if col == column))
    unit = FixedUnit(SPEC, column, rows, 10, paper_learner(), validate_profiles=False)
    values = run_fixed_unit(unit)
    for row in rows:
        assert [six_digits(v) for v in values[row][1:]] == list(FIXED[row, column]), row


@needs_the_authors_solver
@pytest.mark.parametrize("pair", list(SIMULTANEOUS), ids="-".join)
def test_simultaneous_rounds_reproduce_the_authors(pair):
    row, column = pair
    ours, _ = run_pair_unit(PairUnit(SPEC, row, column, 10, paper_learner(), validate_profiles=False))
    assert [six_digits(v) for v in ours[1:]] == list(SIMULTANEOUS[pair])


def test_the_deal_is_summed_in_openspiels_order(bridge):
    """Every hand dealt sits at its place in OpenSpiel's list of chance outcomes (hand 0, 1, 3, 6,
    ... for the first player: not sorted), and the depth-first order visits siblings that way."""
    rank = paper_numerics.sibling_rank(bridge)
    order, _ = paper_numerics.depth_first_order(bridge)
    state = pyspiel.load_game("tiny_bridge_2p").new_initial_state()
    listed = [action for action, _ in state.chance_outcomes()]
    assert listed != sorted(listed)
    deals = np.flatnonzero(bridge.parent == 0)
    assert [int(bridge.action[h]) for h in deals[np.argsort(rank[deals])]] == listed
    assert [int(bridge.action[h]) for h in deals[np.argsort(order[deals])]] == listed
    second = np.flatnonzero(bridge.parent == deals[0])              # the partner's hand, after hand 0
    below = [a for a, _ in state.child(int(bridge.action[deals[0]])).chance_outcomes()]
    assert [int(bridge.action[h]) for h in second[np.argsort(order[second])]] == below
    assert sorted(order) == list(range(bridge.num_histories))
    child = np.arange(1, bridge.num_histories)
    assert np.all(order[child] > order[bridge.parent[child]])
    assert np.all(np.diff(bridge.depth[np.argsort(order)]) <= 1)    # a subtree before the next sibling
    # decisions keep the action order
    decided = child[bridge.player[bridge.parent[child]] >= 0]
    np.testing.assert_array_equal(rank[decided], bridge.action[decided])


def test_a_tree_without_its_definition_keeps_the_sorted_order(bridge):
    bare = dataclasses.replace(bridge, definition=None)
    np.testing.assert_array_equal(paper_numerics.sibling_rank(bare), np.maximum(bridge.action, 0))
    assert (bare.player == CHANCE).sum() == 29


@pytest.mark.skipif(not eigen.available()[0], reason=eigen.available()[1])
def test_summed_in_sorted_deal_order_act_in_leaves_the_authors_in_round_2(bridge):
    """The first cause: the same learner on the same tree, its infosets' values summed over the
    deals in sorted order instead of OpenSpiel's, plays another strategy in round 2."""
    values = {}
    for name, game in [("dealt", bridge), ("sorted", dataclasses.replace(bridge, definition=None))]:
        unit = FixedUnit(game, "act_in", ("act_in",), 3, paper_learner(), validate_profiles=False)
        values[name] = run_fixed_unit(unit)["act_in"]
    assert six_digits(values["dealt"][2]) == FIXED["act_in", "act_in"][1]
    assert abs(values["sorted"][2] - FIXED["act_in", "act_in"][1]) > 0.01
    assert six_digits(values["sorted"][1]) == six_digits(values["dealt"][1]) == FIXED["act_in", "act_in"][0]


@needs_the_authors_solver
def test_with_two_doubles_per_vector_act_in_leaves_the_authors_in_round_3():
    """The second cause: the same run on the solver built without AVX (`eigen.baseline_solver`)
    agrees with the authors through round 2 and not in round 3; the AVX build is back afterwards."""
    unit = FixedUnit(SPEC, "act_in", ("act_in",), 4, paper_learner(), validate_profiles=False)
    with eigen.baseline_solver():
        baseline = run_fixed_unit(unit)["act_in"]
    again = run_fixed_unit(unit)["act_in"]
    authors = FIXED["act_in", "act_in"]
    assert [six_digits(v) for v in baseline[1:3]] == list(authors[:2])
    assert six_digits(baseline[3]) != authors[2]
    assert [six_digits(v) for v in again[1:]] == list(authors[:3])
