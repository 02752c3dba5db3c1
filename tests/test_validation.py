"""Bad arguments to the public entry points: a ValueError or TypeError whose message names the
argument and says what was expected, never a plausible number computed from garbage."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit as lk
from labkit.efr import EFR

KUHN = lk.games.load("kuhn_poker")
UNIFORM = lk.TabularPolicy.uniform(KUHN).probs

# entry point -> (call with the bad value in place of a policy, the argument's name in the message)
ENTRY_POINTS = {
    "nash_conv": (lambda p: lk.nash_conv(KUHN, p), "policy"),
    "exploitability": (lambda p: lk.exploitability(KUHN, p), "policy"),
    "expected_payoffs": (lambda p: lk.expected_payoffs(KUHN, p), "policy"),
    "best_response": (lambda p: lk.best_response(KUHN, p, 0), "policy"),
    "best_response_values": (lambda p: lk.evaluate.best_response_values(KUHN, p), "policy"),
    "counterfactual_values": (lambda p: lk.counterfactual_values(KUHN, p), "policy"),
    "history_values": (lambda p: lk.history_values(KUHN, p), "policy"),
    "reach_probabilities": (lambda p: lk.reach_probabilities(KUHN, p), "policy"),
    "terminal_reach_probabilities": (lambda p: lk.terminal_reach_probabilities(KUHN, p), "policy"),
    "EFR.update": (lambda p: EFR(KUHN, "cf").update(p), "opponents"),
    "MMD initial_policy": (lambda p: lk.MMD(KUHN, alpha=0.1, initial_policy=p), "initial_policy"),
    "MMD.regularized_response": (lambda p: lk.MMD(KUHN, alpha=0.1).regularized_response(p), "policy"),
    "PSRO initial_policy": (lambda p: lk.PSRO(KUHN, initial_policy=p), "initial_policy"),
    "TabularPolicy": (lambda p: lk.TabularPolicy(KUHN, p), "policy"),
}


def _corrupt(kind, row, column, size):
    probs = UNIFORM.copy()
    if kind == "nan":
        probs[row, column] = np.nan
    elif kind == "inf":
        probs[row, column] = np.inf
    elif kind == "negative":
        probs[row] = [-size, 1 + size]
    elif kind == "sum":
        probs[row] *= 1 + size
    return probs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=st.sampled_from(sorted(ENTRY_POINTS)), kind=st.sampled_from(["nan", "inf", "negative", "sum"]),
       row=st.integers(0, KUHN.num_infosets - 1), column=st.integers(0, 1),
       size=st.floats(1e-5, 1e6))
def test_malformed_probabilities_are_refused_naming_the_argument(entry, kind, row, column, size):
    call, name = ENTRY_POINTS[entry]
    with pytest.raises(ValueError, match=name):
        call(_corrupt(kind, row, column, size))


def _illegal_mass_game():
    return lk.games.load("leduc_poker")          # Leduc has infosets where fold is illegal


def test_mass_on_an_illegal_action_is_refused():
    game = _illegal_mass_game()
    probs = lk.TabularPolicy.uniform(game).probs.copy()
    i = int(np.flatnonzero(~game.legal_mask[:, 0])[0])
    probs[i] = [0.5, 0.25, 0.25]
    for call in (lk.nash_conv, lk.expected_payoffs, lambda g, p: lk.best_response(g, p, 0)):
        with pytest.raises(ValueError, match="policy: invalid policy at infoset .*illegal action"):
            call(game, probs)


@settings(max_examples=40, deadline=None)
@given(entry=st.sampled_from(sorted(ENTRY_POINTS)),
       bad=st.sampled_from([None, "uniform", {"J|": [0.5, 0.5]}, 3, np.ones((3, 2)), np.ones((12, 3)) / 3,
                            [["a", "b"]] * 12, object()]))
def test_wrong_types_and_shapes_are_refused_naming_the_argument(entry, bad):
    call, name = ENTRY_POINTS[entry]
    if bad is None and entry.startswith(("MMD", "PSRO")):
        return                                      # None means "the default" for these arguments
    with pytest.raises((ValueError, TypeError), match=name):
        call(bad)


# the ten unclear cases of the issue, each with the message it now gives
@pytest.mark.parametrize("call, error, message", [
    (lambda: lk.games.from_openspiel(3), TypeError, "spec_or_game must be an OpenSpiel game string"),
    (lambda: lk.nash_conv("kuhn_poker", {"J|": [1, 0]}), TypeError, "policy must be a TabularPolicy or a .* array"),
    (lambda: lk.nash_conv(KUHN, dict(enumerate(UNIFORM))), TypeError, "policy must be a TabularPolicy"),
    (lambda: lk.best_response(KUHN, UNIFORM, True), TypeError, "player must be an integer in 0..1, got bool True"),
    (lambda: lk.best_response(KUHN, UNIFORM, np.int64(5)), ValueError, r"player must be an integer in 0..1, got 5$"),
    (lambda: lk.MCCFR(KUHN, seed=-1), ValueError, "seed must be a nonnegative integer"),
    (lambda: lk.MMD(KUHN, alpha=None), TypeError, "alpha must be a number, got NoneType None"),
    (lambda: lk.MMD(KUHN, alpha=0.1, stepsize="big"), TypeError, "stepsize must be a number"),
    (lambda: lk.nash_conv(3, UNIFORM), TypeError, "game must be a GameTree or a game string"),
    (lambda: lk.CFR(3), TypeError, "cannot load a game from int 3"),
])
def test_unclear_cases_get_clear_messages(call, error, message):
    with pytest.raises(error, match=message) as info:
        call()
    assert "np.int64" not in str(info.value)


def test_a_game_string_is_accepted_where_a_game_is():
    assert lk.nash_conv("kuhn_poker", UNIFORM) == pytest.approx(11 / 12)


def test_nan_policy_has_no_best_response_value():
    # the case: best_response of a NaN policy returned 0.5
    probs = UNIFORM.copy()
    probs[:] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        lk.best_response(KUHN, probs, 0)


@pytest.mark.parametrize("call, message", [
    (lambda: lk.CFR(KUHN).run(np.int64(-1)), r"iterations must be a nonnegative integer, got -1$"),
    (lambda: lk.MCCFR(KUHN, exploration=np.float64(2)), r"exploration must be a number in \(0, 1\], got 2.0$"),
    (lambda: lk.TabularPolicy.from_dict(KUHN, {"J|": {np.int64(3): 1.0}}), r"action 3 is not legal"),
])
def test_numpy_scalars_print_as_plain_numbers(call, message):
    with pytest.raises(ValueError, match=message):
        call()
