"""The authors' numerics play strategies whose rows do not sum to 1, and the runner evaluates them.

Their fixed point (hr_edl's WeightedActionTransformation::FixedPoint) is Eigen's least-squares
solution clipped to [0, 1] and stored as the strategy without renormalizing. Where a chain's
weights mix 1e-2 with 1e-16 the system is nearly singular, the solution has a -0.00215 that the
clip removes, and the row sums to 1.00215: TIPS against ACT_IN's self-play in goofspiel(5,
descending, N = 2), the strategy played in round t = 23. The authors' data file holds the values
of that row, so the runner must evaluate (and feed back) exactly that strategy; the library's
entry points still refuse it.
"""
import numpy as np
import pytest

from labkit.efr import eigen
from labkit.experiments import efr_tournament
from labkit.experiments.games import resolve_game
from labkit.experiments.tournament import efr_learner, load_game, seat_values, terminal_reach

eigen_ok, eigen_reason = eigen.available()
pytestmark = pytest.mark.skipif(not eigen_ok, reason=eigen_reason)

GAME = "goofspiel5_2p_descending"
# hr_edl_experiments, data/efr.goofspiel.null.fixed.gen.ssv (OpenSpiel's goofspiel default,
# descending), row TIPS-EFR, column A-EFR_IN, rounds t = 21..27, as printed (6 digits)
AUTHORS_TIPS_VS_ACT_IN = {21: 0.990918, 22: 1.0, 23: 0.858571, 24: 0.105115, 25: 0.509734,
                          26: 0.826625, 27: 0.976355}
BAD_INFOSET_SUM = 1.0021482920203253       # the row of the blocker's error message


@pytest.fixture(scope="module")
def goofspiel():
    return load_game(resolve_game(GAME))


@pytest.fixture(scope="module")
def round_23(goofspiel):
    """(TIPS's profile, ACT_IN's self-play profile) played in round t = 23."""
    column, row = efr_learner(goofspiel, "act_in", "paper"), efr_learner(goofspiel, "tips", "paper")
    for _ in range(23):
        y = column._probs.copy()
        column._update_unchecked(y)
        row._update_unchecked(y)
    return row._probs.copy(), column._probs.copy()


def _row_sums(game, probs):
    return np.where(game.legal_mask, probs, 0.0).sum(axis=1)


def test_the_authors_solver_leaves_the_simplex_there(goofspiel, round_23):
    tips, act_in = round_23
    sums = _row_sums(goofspiel, tips)
    worst = int(np.argmax(np.abs(sums - 1.0)))
    assert sums[worst] == BAD_INFOSET_SUM
    assert np.count_nonzero(np.abs(sums - 1.0) > 1e-6) == 1
    assert tips[worst][goofspiel.legal_mask[worst]][-1] == 0.0      # the clipped entry
    np.testing.assert_allclose(_row_sums(goofspiel, act_in), 1.0, atol=1e-12)


def test_public_entry_points_still_refuse_it(goofspiel, round_23):
    tips, act_in = round_23
    with pytest.raises(ValueError, match="do not sum to 1"):
        terminal_reach(goofspiel, tips)
    with pytest.raises(ValueError, match="do not sum to 1"):
        seat_values(goofspiel, tips, act_in)
    learner = efr_learner(goofspiel, "cf", "paper")
    with pytest.raises(ValueError, match="opponents: .*do not sum to 1"):
        learner.update(tips)


def test_the_runner_reproduces_the_authors_values_through_it():
    result = efr_tournament(GAME, ["tips"], ["act_in"], regime="fixed", rounds=28, executor="serial",
                            progress=False, fixed_point="paper")
    values = result.per_round["tips"]["act_in"]
    for t, printed in AUTHORS_TIPS_VS_ACT_IN.items():
        # six significant digits: half a unit of the sixth
        assert abs(values[t] - printed) <= 0.5 * 10.0 ** (np.floor(np.log10(abs(printed))) - 5), (t, values[t])


def test_the_exact_rule_stays_on_the_simplex_and_validated(goofspiel):
    learner = efr_learner(goofspiel, "tips", "exact")
    column = efr_learner(goofspiel, "act_in", "exact")
    for _ in range(24):
        y = column._probs.copy()
        column.update(y)                 # validated every round
        learner.update(y)
    np.testing.assert_allclose(_row_sums(goofspiel, learner._probs), 1.0, atol=1e-12)
