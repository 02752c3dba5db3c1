"""Public checks of Lab 15 (Leduc hold'em): shapes, probability rows, zero-sum and zero-mean
properties at a public policy and a public stream of random numbers, and values at two public
policies whose answers are worked out by hand (the grader's own policies are other ones).

The hand-worked cases. `TIMID` folds whenever folding is legal and otherwise checks or calls;
`BOLD` raises whenever it may and otherwise calls. Whatever the cards:

* `BOLD` for player 1 against `TIMID` for player 2: player 1 raises, player 2 folds, so the
  payoffs are (+1, -1), the ante won; with the roles swapped they are (-1, +1). Weighting each of
  the 30 deals by 1 instead of by its probability 1/30 gives (30, -30) instead.
* Against `TIMID`, a player never sees the other put more than the ante in the pot (it folds to
  every raise), and it wins the ante by raising: each best-response value is 1, and the NashConv
  of `TIMID` (both players) is 1 + 1 - 0 = 2.
* CFR's first iteration plays the uniform policy. Against it, checking (or calling) at a first
  decision does better than raising, whatever the card, so regret matching plays check/call there
  in the second iteration. The average weights each iteration by the player's own reach, 1 at a
  first decision: after 2 iterations CFR's average there is (0, 3/4, 1/4) (the mean of the uniform
  (0, 1/2, 1/2) and (0, 1, 0)), and CFR+'s, which weights iteration t by t, is
  (1/2 + 2) / 3 = 5/6 and 1/6. After 3 iterations of CFR+ every legal action keeps at least a sixth
  of its uniform probability (the first iteration's weight, 1 of 6).
"""
import numpy as np

from labkit.grading.fresh import marker
from labkit.grading.own_work import OwnWork
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, as_number, expect, probe_results, reported

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


def _preferring(order):
    """The pure policy playing the first legal action of `order` (0 fold, 1 check/call, 2 raise)."""
    legal = _leduc().legal_mask
    first = np.argmax(legal[:, order], axis=1)
    policy = np.zeros(legal.shape)
    policy[np.arange(len(legal)), np.asarray(order)[first]] = 1.0
    return policy


def _seats(first, second):
    """Player 1 plays `first`, player 2 `second` (rows by the infoset's player)."""
    return np.where((_leduc().infoset_player == 0)[:, None], first, second)


TIMID, BOLD = _preferring([0, 1, 2]), _preferring([2, 1, 0])
BOLD_VS_TIMID, TIMID_VS_BOLD = _seats(BOLD, TIMID), _seats(TIMID, BOLD)
CHANCE_HINT = ("at a chance node weight each outcome by its probability (each of the 30 deals has probability "
               "1/30)")


def _counts(value):
    table = reported(value, "counts")
    if not isinstance(table, dict):
        raise Wrong("`counts` should be a dict with the entries 'histories', 'infosets' and 'terminal'")
    for key in ("histories", "infosets", "terminal"):
        v = as_number(table.get(key), f"counts[{key!r}]") if key in table else None
        if v is None or v < 1 or not float(v).is_integer():
            raise Wrong(f"`counts[{key!r}]` should be a positive whole number")


def _counts_agree(value):
    """The counts against each other and against the rows of the game's policy arrays."""
    table = reported(value, "counts")
    rows = _leduc().legal_mask.shape[0]
    if table["infosets"] != rows:
        raise Wrong(f"a Leduc policy array has one row per information set, {rows} rows; `counts['infosets']` "
                    f"is {table['infosets']}")
    if not table["terminal"] < table["histories"]:
        raise Wrong("the terminal histories are some of the histories: count every history, chance's and the "
                    "players' included")
    if not table["infosets"] < table["histories"]:
        raise Wrong("every information set holds at least one history, and the chance and terminal histories "
                    "belong to none: there are fewer information sets than histories")


def _zero_sum(value):
    payoff = as_array(probe_results(value, "expected_payoff", 3)[0], "expected_payoff(policy)", (2,))
    if abs(payoff.sum()) > 1e-9:
        raise Wrong("poker is zero-sum: the two expected payoffs add up to 0")


def _payoff_cases(value):
    results = probe_results(value, "expected_payoff", 3)
    expect(as_array(results[1], "expected_payoff(...)", (2,)), [1.0, -1.0],
           "expected_payoff(player 1 bold, player 2 timid)",
           "player 1 raises whenever it may and player 2 folds whenever it may: player 1 raises, player 2 folds on "
           f"every deal, so player 1 wins the ante; {CHANCE_HINT}")
    expect(as_array(results[2], "expected_payoff(...)", (2,)), [-1.0, 1.0],
           "expected_payoff(player 1 timid, player 2 bold)",
           f"player 1 checks (it cannot fold yet), player 2 raises and player 1 folds; {CHANCE_HINT}")


def _best_responses(value):
    values = [as_number(r, "best_response_value(policy, player)")
              for r in probe_results(value, "best_response_value", 4)[:2]]
    if sum(values) < -1e-9:
        raise Wrong("the two best-response values add up to NashConv in a zero-sum game, which is never "
                    "negative")


def _best_response_cases(value):
    results = probe_results(value, "best_response_value", 4)[2:]
    for player, r in enumerate(results):
        expect(as_number(r, "best_response_value(...)"), 1.0, f"best_response_value(timid, {player})",
               "the timid opponent (it folds whenever it may, else checks or calls) folds to every raise, so a "
               "best response wins the ante and never more; the "
               "best responder picks the best action at each of its information sets, the opponent's reach and "
               f"chance's probabilities weighting the histories in it; {CHANCE_HINT}")


def _nash_conv(value):
    for r in probe_results(value, "nash_conv", 3):
        if as_number(r, "nash_conv(policy)") < -1e-9:
            raise Wrong("NashConv is never negative")


def _nash_conv_case(value):
    got = as_number(probe_results(value, "nash_conv", 3)[1], "nash_conv(TIMID)")
    expect(got, 2.0, "nash_conv(timid)", "NashConv of the policy that folds whenever it may adds up what each "
           "player gains by best responding: here 1 for "
           "each player, against expected payoffs that add up to 0")


def _first_decisions():
    """Player 1's first decisions: its infosets before any action (one per private card)."""
    game = _leduc()
    return [I for I, key in enumerate(game.infoset_keys)
            if game.infoset_player[I] == 0 and not key.replace("|", "")[2:]]


def _first_rows(name, iterations, row, why):
    """After `iterations` of the solver, the average at player 1's first decisions is `row`."""
    def test(value):
        policy = as_array(probe_results(value, name, 1)[0], f"{name}({iterations})", _leduc().legal_mask.shape)
        for I in _first_decisions():
            expect(policy[I], row, f"{name}({iterations})[{_leduc().infoset_keys[I]!r}]", why)
    return test


def _averaged(name, iterations, keep, why):
    """After `iterations` of the solver, each legal action at player 1's first decisions keeps at
    least `keep` of its uniform probability, and the average has moved away from uniform."""
    def test(value):
        policy = as_array(probe_results(value, name, 1)[0], f"{name}({iterations})", _leduc().legal_mask.shape)
        game = _leduc()
        rows = _first_decisions()
        legal = game.legal_mask[rows]
        floor = keep / legal.sum(axis=1, keepdims=True)
        if np.any((policy[rows] < floor - 1e-9) & legal):
            raise Wrong(f"after {iterations} iterations the average at player 1's first decisions should give "
                        f"every legal action at least {keep:g} of its uniform probability: {why}")
        if np.allclose(policy[rows][legal], (legal / legal.sum(axis=1, keepdims=True))[legal], atol=1e-9):
            raise Wrong(f"after {iterations} iterations the average at player 1's first decisions is still "
                        "uniform: the second iteration plays regret matching on the first one's regrets, "
                        "which are not all 0")
    return test


CFR_WHY = ("the first iteration plays the uniform policy and the second check/call at a first decision; the average "
           "weights each iteration's policy by the player's own reach (1 there): return the average policy, not "
           "the last iteration's")
CFR_PLUS_WHY = ("the first iteration plays the uniform policy and the second check/call at a first decision; CFR+ "
                "averages iteration t with weight t times the player's own reach: return the average policy, not "
                "the last iteration's")


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


def _curves_fall(value):
    table = reported(value, "curves")
    for name in CURVES:
        y = as_array(table[name][1], name)
        if np.any(y < -1e-9):
            raise Wrong(f"`curves[{name!r}]` has a negative NashConv: NashConv is never negative")
    for name in ("CFR", "CFR+"):
        y = as_array(table[name][1], name)
        if not y[-1] < y[0]:
            raise Wrong(f"the {name} curve does not fall: its average policy gets closer to an equilibrium as "
                        "the iterations add up")


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


# Monte Carlo CFR's public runs: the first run twice (a seed fixes every sampled episode, so the two
# averages are equal), and once with another seed (other episodes: another average)
MCCFR_RUNS = [("outcome", 3, 0), ("external", 2, 0), ("outcome", 3, 0), ("outcome", 3, 1)]


def _reproducible(value):
    runs = [as_array(r, "mccfr(...)") for r in probe_results(value, "mccfr", len(MCCFR_RUNS))]
    if runs[0].shape != runs[2].shape or not np.array_equal(runs[0], runs[2]):
        raise Wrong("`mccfr('outcome', 3, 0)` returned two different policies: draw every random number from a "
                    "generator made from `seed` in the call (np.random.default_rng(seed)), not from a global one")


def _seeded(value):
    runs = [as_array(r, "mccfr(...)") for r in probe_results(value, "mccfr", len(MCCFR_RUNS))]
    if runs[0].shape == runs[3].shape and np.array_equal(runs[0], runs[3]):
        raise Wrong("`mccfr('outcome', 3, 0)` and `mccfr('outcome', 3, 1)` returned the same policy: the seed "
                    "should decide which episodes are sampled")


POLICY = _leaning()

PARTS = [
    public_part("L15(a)", ["counts"], 2,
                _feedback(("counts holds three whole numbers", _counts),
                          ("the three counts agree with each other and the game", _counts_agree))),
    public_part("L15(b)", ["expected_payoff"], 2,
                _feedback(("expected_payoff gives 2 payoffs adding to 0", _zero_sum),
                          ("(1, -1) and (-1, 1) for bold against timid and back", _payoff_cases)),
                {"expected_payoff": [(POLICY,), (BOLD_VS_TIMID,), (TIMID_VS_BOLD,)]}, OWN_WORK["L15(b)"]),
    public_part("L15(c)", ["best_response_value"], 2,
                _feedback(("best_response_value gives numbers whose sum is not negative", _best_responses),
                          ("1 for each player against the timid policy", _best_response_cases)),
                {"best_response_value": [(POLICY, 0), (POLICY, 1), (TIMID, 0), (TIMID, 1)]}, OWN_WORK["L15(c)"]),
    public_part("L15(d)", ["nash_conv"], 2,
                _feedback(("nash_conv gives a number >= 0", _nash_conv),
                          ("2 for the timid policy", _nash_conv_case),
                          (f"under {NASH_CONV_SECONDS:g} CPU s at a new policy", _nash_conv_time)),
                {"nash_conv": [(POLICY,), (TIMID,), (marker("leduc_policy"),)]}, OWN_WORK["L15(d)"],
                {"nash_conv": (NASH_CONV_SECONDS, 1)}),
    public_part("L15(e)", ["cfr"], 2, _feedback(("cfr returns a policy (936, 3)", lambda v: _policies(v, "cfr", 1)),
                                                ("cfr(2) at the first decisions is (0, 3/4, 1/4)",
                                                 _first_rows("cfr", 2, [0, 3 / 4, 1 / 4], CFR_WHY))),
                {"cfr": [(2,)]}, OWN_WORK["L15(e)"]),
    public_part("L15(f)", ["cfr_plus"], 2,
                _feedback(("cfr_plus returns a policy (936, 3)", lambda v: _policies(v, "cfr_plus", 1)),
                          ("cfr_plus(2) at the first decisions is (0, 5/6, 1/6)",
                           _first_rows("cfr_plus", 2, [0, 5 / 6, 1 / 6], CFR_PLUS_WHY))),
                {"cfr_plus": [(2,)]}, OWN_WORK["L15(f)"]),
    public_part("L15(g)", ["cfr_plus"], 1,
                _feedback(("cfr_plus returns a policy (936, 3)", lambda v: _policies(v, "cfr_plus", 1)),
                          ("cfr_plus(3) averages with linear weights", _averaged("cfr_plus", 3, 1 / 6, CFR_PLUS_WHY))),
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
    public_part("L15(j)", ["mccfr"], 2,
                _feedback(("mccfr returns policies (936, 3)", lambda v: _policies(v, "mccfr", len(MCCFR_RUNS))),
                          ("the same seed gives the same policy", _reproducible),
                          ("another seed samples other episodes", _seeded)),
                {"mccfr": MCCFR_RUNS}, OWN_WORK["L15(j)"]),
    public_part("L15(k)", ["curves"], 1, _feedback(("curves holds the seven methods", _curves),
                                                    ("NashConv >= 0, falling for CFR and CFR+", _curves_fall))),
]
