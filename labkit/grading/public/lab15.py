"""Public checks of Lab 15 (Leduc hold'em): shapes, probability rows, zero-sum and zero-mean
properties, at a public policy and a public stream of random numbers. No expected value.

`OWN_WORK` states, part by part, what the lab asks the student to write: while a part's functions
are probed, calls into labkit's solvers and evaluators (anything but the game, its arrays and
`TabularPolicy`; see `labkit.grading.own_work`) or OpenSpiel are recorded, the check cell says so,
and the grader gives the part 0.
"""
import numpy as np

from labkit.grading.fresh import marker
from labkit.grading.own_work import OwnWork
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, as_number, probe_results, reported

OWN_WORK = {
    "L15(b)": OwnWork("compute the expected payoffs yourself"),
    "L15(c)": OwnWork("write the best response yourself"),
    "L15(d)": OwnWork("write NashConv yourself"),
    "L15(e)": OwnWork("write CFR yourself"),
    "L15(f)": OwnWork("write CFR+ yourself"),
    "L15(g)": OwnWork("write CFR+ yourself"),
    "L15(h)": OwnWork("write outcome sampling yourself"),
    "L15(i)": OwnWork("write external sampling yourself"),
    "L15(j)": OwnWork("write Monte Carlo CFR yourself"),
}
NASH_CONV_SECONDS = 1.0      # the lab's budget: CPU seconds per NashConv

CURVES = ("CFR", "CFR+", "MCCFR (outcome sampling)", "MCCFR (external sampling)", "MMD (no magnet)",
          "MMD (magnet)", "PSRO")


def _leduc():
    import labkit as lk
    return lk.games.load("leduc_poker")


def _leaning():
    """A public policy: fold, call and raise weighted 1, 2, 3 over the legal actions."""
    weights = _leduc().legal_mask * np.array([1.0, 2.0, 3.0])
    return weights / weights.sum(axis=1, keepdims=True)


STREAM = np.random.default_rng(15).random(64).tolist()


def _counts(value):
    table = reported(value, "counts")
    if not isinstance(table, dict):
        raise Wrong("`counts` should be a dict with the entries 'histories', 'infosets' and 'terminal'")
    for key in ("histories", "infosets", "terminal"):
        v = as_number(table.get(key), f"counts[{key!r}]") if key in table else None
        if v is None or v < 1 or not float(v).is_integer():
            raise Wrong(f"`counts[{key!r}]` should be a positive whole number")


def _zero_sum(value):
    payoff = as_array(probe_results(value, "expected_payoff", 1)[0], "expected_payoff(policy)", (2,))
    if abs(payoff.sum()) > 1e-9:
        raise Wrong("poker is zero-sum: the two expected payoffs add up to 0")


def _best_responses(value):
    values = [as_number(r, "best_response_value(policy, player)")
              for r in probe_results(value, "best_response_value", 2)]
    if sum(values) < -1e-9:
        raise Wrong("the two best-response values add up to NashConv in a zero-sum game, which is never "
                    "negative")


def _nash_conv(value):
    for r in probe_results(value, "nash_conv", 2):
        if as_number(r, "nash_conv(policy)") < -1e-9:
            raise Wrong("NashConv is never negative")


def _nash_conv_time(value):
    """The CPU time of the call at a policy drawn afresh (what the grader times)."""
    seconds = (value.get("__seconds__") or {}).get("nash_conv") or [None]
    took = seconds[-1]
    if isinstance(took, (int, float)) and took > NASH_CONV_SECONDS:
        raise Wrong(f"one call took {took:.2f} CPU s at a policy it had not seen, over the lab's budget of "
                    f"{NASH_CONV_SECONDS:g} s")


def _policy(v, name):
    game = _leduc()
    p = as_array(v, name, game.legal_mask.shape)
    if np.any(p < -1e-9) or np.any(np.abs(p.sum(axis=1) - 1) > 1e-6):
        raise Wrong(f"every row of `{name}` should be a probability distribution")
    if np.any(np.abs(p[~game.legal_mask]) > 1e-12):
        raise Wrong(f"`{name}` puts probability on an illegal action")


def _policies(value, name, count):
    for r in probe_results(value, name, count):
        _policy(r, f"{name}(...)")


def _regret_table(v, name, player):
    """Keys of the player's infosets, one increment per legal action, their sigma-weighted sum 0."""
    game = _leduc()
    if not isinstance(v, dict) or not v:
        raise Wrong(f"`{name}` should return a non-empty dict {{infoset key: increments}}")
    for key, row in v.items():
        if key not in game.infoset_keys:
            raise Wrong(f"`{name}` returned a key that is not a Leduc infoset: {str(key)[:20]!r}")
        I = game.infoset_index(key)
        if game.infoset_player[I] != player:
            raise Wrong(f"`{name}` updated {key!r}, an infoset of the other player")
        r = as_array(row, f"{name}[{key!r}]", (len(game.legal_actions(I)),))
        sigma = POLICY[I, game.legal_actions(I)]
        if abs(sigma @ r) > 1e-9 * max(1.0, np.abs(r).max()):
            raise Wrong("the increments at an infoset, weighted by the strategy, add up to 0 "
                        f"(sum_a sigma(a) r(a) = 0); those at {key!r} do not")


def _feedback(*items):
    def feedback(value):
        f = FormatChecks(value)
        for label, test in items:
            f.item(label, lambda test=test: test(value))
        return f
    return feedback


def _curves(value):
    table = reported(value, "curves")
    if not isinstance(table, dict):
        raise Wrong("`curves` should be a dict {method: (histories touched, NashConv)}")
    for name in CURVES:
        if name not in table:
            raise Wrong(f"`curves` has no curve named {name!r}")
        pair = table[name]
        if not isinstance(pair, list) or len(pair) != 2:
            raise Wrong(f"`curves[{name!r}]` should be a pair (histories touched, NashConv)")
        x, y = as_array(pair[0], name), as_array(pair[1], name)
        if x.ndim != 1 or x.shape != y.shape or len(x) < 5 or np.any(np.diff(x) <= 0):
            raise Wrong(f"`curves[{name!r}]` needs 5 or more points, in increasing histories touched")


POLICY = _leaning()

PARTS = [
    public_part("L15(a)", ["counts"], 2, _feedback(("counts holds three whole numbers", _counts))),
    public_part("L15(b)", ["expected_payoff"], 2, _feedback(("expected_payoff gives 2 payoffs adding to 0", _zero_sum)),
                {"expected_payoff": [(POLICY,)]}, OWN_WORK["L15(b)"]),
    public_part("L15(c)", ["best_response_value"], 2,
                _feedback(("best_response_value gives numbers whose sum is not negative", _best_responses)),
                {"best_response_value": [(POLICY, 0), (POLICY, 1)]}, OWN_WORK["L15(c)"]),
    public_part("L15(d)", ["nash_conv"], 2,
                _feedback(("nash_conv gives a number >= 0", _nash_conv),
                          (f"under {NASH_CONV_SECONDS:g} CPU s at a new policy", _nash_conv_time)),
                {"nash_conv": [(POLICY,), (marker("leduc_policy"),)]}, OWN_WORK["L15(d)"],
                {"nash_conv": (NASH_CONV_SECONDS, 1)}),
    public_part("L15(e)", ["cfr"], 2, _feedback(("cfr returns a policy (936, 3)", lambda v: _policies(v, "cfr", 1))),
                {"cfr": [(2,)]}, OWN_WORK["L15(e)"]),
    public_part("L15(f)", ["cfr_plus"], 2,
                _feedback(("cfr_plus returns a policy (936, 3)", lambda v: _policies(v, "cfr_plus", 1))),
                {"cfr_plus": [(2,)]}, OWN_WORK["L15(f)"]),
    public_part("L15(g)", ["cfr_plus"], 1,
                _feedback(("cfr_plus returns a policy (936, 3)", lambda v: _policies(v, "cfr_plus", 1))),
                {"cfr_plus": [(3,)]}, OWN_WORK["L15(g)"]),
    public_part("L15(h)", ["outcome_sampling_regrets", "sampled_regret_means"], 2, _feedback(
        ("outcome_sampling_regrets returns increments at the player's infosets",
         lambda v: _regret_table(probe_results(v, "outcome_sampling_regrets", 1)[0], "outcome_sampling_regrets", 0)),
        ("sampled_regret_means returns a (936, 3) array",
         lambda v: as_array(probe_results(v, "sampled_regret_means", 1)[0], "sampled_regret_means(...)",
                            _leduc().legal_mask.shape) is None)),
        {"outcome_sampling_regrets": [(POLICY, 0, STREAM[:16], 0.6)],
         "sampled_regret_means": [(POLICY, 1, [STREAM[:16], STREAM[16:32]])]}, OWN_WORK["L15(h)"]),
    public_part("L15(i)", ["external_sampling_regrets"], 1, _feedback(
        ("external_sampling_regrets returns increments at the player's infosets",
         lambda v: _regret_table(probe_results(v, "external_sampling_regrets", 1)[0], "external_sampling_regrets", 1))),
        {"external_sampling_regrets": [(POLICY, 1, STREAM)]}, OWN_WORK["L15(i)"]),
    public_part("L15(j)", ["mccfr"], 2, _feedback(("mccfr returns policies (936, 3)", lambda v: _policies(v, "mccfr", 2))),
                {"mccfr": [("outcome", 3, 0), ("external", 2, 0)]}, OWN_WORK["L15(j)"]),
    public_part("L15(k)", ["curves"], 1, _feedback(("curves holds the seven methods", _curves))),
]
