"""Exercise 27.5: the two reach weightings of CFR, and what breaks when they are swapped.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex27_5.py).
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import (Grader, Wrong, as_array, as_number, close_to, kind_of, part_spec,
    reported)
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, written

CFR_TEMPLATE = '''
kuhn = lk.games.load("kuhn_poker")  # for lk.nash_conv; the rules: lk.games.KuhnPoker()


def run_cfr(iterations, regret_weight="opponents", average_weight="own"):
    """Vanilla CFR on Kuhn poker. Returns the average policy
    {infoset key: [p_pass, p_bet]}.

    regret_weight, average_weight: "own" (the acting player's reach probability) or
    "opponents" (the reach probability of the other player and chance)."""
    ...


average_policy_cfr = ...  # run_cfr(1000)
average_policy_swapped = ...  # run_cfr(1000) with the two weightings swapped
'''

CFR_SOLUTION = '''
kuhn = lk.games.load("kuhn_poker")  # for lk.nash_conv; the rules: lk.games.KuhnPoker()
rules = lk.games.KuhnPoker()
CHANCE, TERMINAL = lk.games.CHANCE, lk.games.TERMINAL


def regret_matching(regret):
    positive = np.maximum(regret, 0.0)
    return positive / positive.sum() if positive.sum() > 0 else np.full(2, 0.5)


def run_cfr(iterations, regret_weight="opponents", average_weight="own"):
    regrets, strategy_sums = {}, {}
    policy = {}  # this iteration's strategies, fixed during the pass

    def current(key):
        if key not in policy:
            policy[key] = regret_matching(regrets.setdefault(key, np.zeros(2)))
        return policy[key]

    def walk(state, reach):  # reach = [player 1, player 2, chance]
        player = state.current_player()
        if player == TERMINAL:
            return np.array(state.returns())
        if player == CHANCE:
            value = np.zeros(2)
            for card, p in state.chance_outcomes():
                value += p * walk(state.child(card), reach * np.array([1.0, 1.0, p]))
            return value
        key, sigma = state.infoset_key(), current(state.infoset_key())
        action_values = np.array(
            [
                walk(
                    state.child(a),
                    np.where(np.arange(3) == player, reach * sigma[a], reach),
                )
                for a in (0, 1)
            ]
        )
        value = sigma @ action_values
        weight = {"own": reach[player], "opponents": reach[1 - player] * reach[2]}
        regrets[key] += weight[regret_weight] * (
            action_values[:, player] - value[player]
        )
        strategy_sums[key] = (
            strategy_sums.get(key, 0.0) + weight[average_weight] * sigma
        )
        return value

    for _ in range(iterations):
        policy.clear()  # simultaneous updates: every infoset uses sigma^t
        walk(rules.initial_state(), np.ones(3))
    return {
        key: list(s / s.sum()) if s.sum() > 0 else [0.5, 0.5]
        for key, s in strategy_sums.items()
    }


def nash_conv(table):
    return lk.nash_conv(kuhn, lk.TabularPolicy.from_dict(kuhn, table))


average_policy_cfr = run_cfr(1000)
average_policy_swapped = run_cfr(1000, regret_weight="own", average_weight="opponents")
for name, table in [("CFR", average_policy_cfr), ("swapped", average_policy_swapped)]:
    gap = nash_conv(table)
    print(f"{name:>8}: NashConv of the average after 1000 iterations = {gap:.4f}")
print(
    "average by opponents' reach, regrets as in CFR:",
    round(nash_conv(run_cfr(1000, average_weight="opponents")), 4),
)

# scratch, then library: labkit's vectorized CFR (simultaneous updates) gives the
# same average
solver = lk.CFR(kuhn)
solver.run(1000)
library = solver.average_policy()
difference = max(
    abs(np.array(p) - library.probs[kuhn.infoset_index(k)]).max()
    for k, p in average_policy_cfr.items()
)
print(
    "largest difference from lk.CFR's average policy:",
    f"{difference:.1e}" if difference > 1e-12 else "below 1e-12",
)
'''

PURE_STRATEGIES = '''
# two pure strategies of player 1: bet every card; check every card, then call any bet
always_bet = {"J|": [0, 1], "Q|": [0, 1], "K|": [0, 1],
              "J|pb": [1, 0], "Q|pb": [1, 0], "K|pb": [1, 0]}
check_call = {"J|": [1, 0], "Q|": [1, 0], "K|": [1, 0],
              "J|pb": [0, 1], "Q|pb": [0, 1], "K|pb": [0, 1]}
'''

MIXTURE_TEMPLATE = PURE_STRATEGIES + '''
# player 1's behavioral policy equal to flipping a coin between the two
mixture_policy = ...
# value of the plain average of the two tables minus the coin flip's value
plain_average_error = ...
'''

MIXTURE_SOLUTION = PURE_STRATEGIES + '''

def own_reach(table, key):
    """Player 1's own probability of reaching `key`: checking first if the key
    ends in 'pb'."""
    return table[key[0] + "|"][0] if key.endswith("pb") else 1.0


mixture_policy = {}
for key in always_bet:
    w = np.array([own_reach(always_bet, key), own_reach(check_call, key)])
    rows = np.array([always_bet[key], check_call[key]], dtype=float)
    mixture_policy[key] = list(w @ rows / w.sum())
plain = {
    key: list((np.array(always_bet[key]) + np.array(check_call[key])) / 2)
    for key in always_bet
}


def value(table):  # player 1's expected payoff against a uniformly random player 2
    return lk.expected_payoffs(kuhn, lk.TabularPolicy.from_dict(kuhn, table))[0]


coin_flip = (value(always_bet) + value(check_call)) / 2
plain_average_error = value(plain) - coin_flip
print(
    "at J|pb the mixture plays",
    [float(p) for p in mixture_policy["J|pb"]],
    "and the plain average",
    [float(p) for p in plain["J|pb"]],
)
print(
    f"coin flip {coin_flip:.4f}, reach-weighted {value(mixture_policy):.4f},",
    f"plain {value(plain):.4f}",
)
'''

ANSWER_A = r'''
At an information set $I$ of player $i$, every history $h \in I$ has the same own reach $\pi_i(h)$:
by perfect recall, player $i$ took the same actions on the way to all of them. So $\pi_i$ only scales
all of $I$'s regrets by one common factor, which regret matching ignores anyway -- except when it is
zero or tiny. The regret at $I$ has to answer the question "if I played to reach $I$, what should I do
there?"; that is what the counterfactual value $\sum_{h\in I}\pi_{-i}(h)\,v_i(h)$ measures. Weighting by
$\pi_i$ instead would make the regrets at $I$ vanish whenever the current strategy avoids $I$, so the
play at $I$ would never improve, and the values that earlier decisions compare would stay wrong.
The regret bound of CFR, overall regret $\le \sum_I$ (positive immediate counterfactual regret), also
needs exactly the $\pi_{-i}$ weights. The first cell shows it: with the weights swapped, the average
stays far from equilibrium.
'''

ANSWER_B = r'''
The average strategy has to be the behavioral strategy that plays like the *mixture* of the iterates
(pick an iteration $t$ at random, then follow $\sigma^t$), because that mixture is what the regret
bound controls. Mixtures average linearly in realization weights, not in behavior probabilities:
the mixture plays $a$ at $I$ with probability $\sum_t \pi_i^t(I)\,\sigma^t(I,a) / \sum_t \pi_i^t(I)$.

Take an information set that player $i$ reaches only after an earlier unlikely move. In most
iterations $\sigma^t(I)$ is never used, since player $i$ does not go there, and whatever it says must
not count; the few iterations that do go there decide how the mixture plays at $I$. An unweighted
(or opponent-weighted) average lets the irrelevant iterations drown them out. The second cell shows
this with two pure strategies: the reach-weighted average reproduces the coin flip's value, the
plain average does not. (In Kuhn poker CFR with the average weighted by the opponents' reach still
ends up close to equilibrium, as the first cell shows, but nothing guarantees it.)
'''

EXERCISE = Exercise("27.5", "27_5_cfr_weightings", "The two weightings of CFR", (
    md(r"""
        # Exercise 27.5 — The two weightings of CFR

        This exercise goes with the chapter [Imperfect information and counterfactual
        regret](../chapters/03_counterfactual_regret.ipynb).

        CFR uses two different reach probabilities. At an information set $I$ of player $i$, the
        *regrets* are weighted by $\pi_{-i}$, the probability that chance and the other players bring
        the game to $I$; the *average strategy* is weighted by $\pi_i$, player $i$'s own probability of
        playing toward $I$.
    """),
    how_to("27.5"),
    SETUP,
    md(r"""
        ## (a) Regrets ignore one's own reach
        Explain why the regrets should not depend on player $i$'s own reach probability.

        **Experiment.** Write `run_cfr(iterations, regret_weight, average_weight)`: vanilla CFR on Kuhn
        poker (`lk.games.KuhnPoker()` gives the rules as states with `current_player()`,
        `legal_actions()`, `chance_outcomes()`, `child(a)`, `returns()`, `infoset_key()`), returning the
        average policy as `{infoset key: [p_pass, p_bet]}`. Store the average after 1000 iterations in
        `average_policy_cfr`, and the average with both weightings swapped (regrets by own reach,
        average by the opponents' reach) in `average_policy_swapped`. The check measures NashConv.
    """),
    written("27.5(a)", ANSWER_A, points=1),
    answer("27.5(a)", CFR_TEMPLATE, CFR_SOLUTION),
    check("27.5(a)"),
    md(r"""
        ## (b) The average needs one's own reach
        Explain why the average strategy must be weighted by $\pi_i$. Think of an information set that
        player $i$ reaches only after making an unlikely move earlier.

        **Experiment.** Player 1 flips a fair coin before the game and plays one of the two pure
        strategies below. Store in `mixture_policy` the behavioral policy (player 1's six information
        sets) that plays exactly like this coin flip, and in `plain_average_error` how far the value of
        the plain, unweighted average of the two tables is from the coin flip's value, both against a
        player 2 who plays uniformly at random.
    """),
    written("27.5(b)", ANSWER_B, points=1),
    answer("27.5(b)", MIXTURE_TEMPLATE, MIXTURE_SOLUTION),
    check("27.5(b)"),
))


# ------------------------------------------------------------------ the hidden checks
PLAYER1_KEYS = ("J|", "Q|", "K|", "J|pb", "Q|pb", "K|pb")
# two pure strategies of player 1 in Kuhn poker: always bet; always check, then always call
ALWAYS_BET = {k: [0.0, 1.0] if k.endswith("|") else [1.0, 0.0] for k in PLAYER1_KEYS}
CHECK_CALL = {k: [1.0, 0.0] if k.endswith("|") else [0.0, 1.0] for k in PLAYER1_KEYS}


def _kuhn_policy(table, name):
    import labkit as lk
    game = lk.games.load("kuhn_poker")
    if not isinstance(table, dict):
        raise Wrong(f"`{name}` should be a dict {{infoset key: [p_pass, p_bet]}}, got {kind_of(table)}")
    unknown = sorted(set(table) - set(game.infoset_keys))
    if unknown:
        raise Wrong(f"`{name}` has keys that are not Kuhn infosets: {unknown[:3]} (keys look like 'Q|pb')")
    rows = {}
    for key, row in table.items():
        if isinstance(row, dict):          # {"pass": p, "bet": q}, as TabularPolicy.to_dict() gives
            row = [row.get("pass", 0.0), row.get("bet", 0.0)]
        row = as_array(row, f"{name}[{key!r}]", (2,))
        if np.any(row < -1e-9) or abs(row.sum() - 1) > 1e-6:
            raise Wrong(f"`{name}[{key!r}]` is not a probability distribution")
        rows[key] = list(np.clip(row, 0, None) / np.clip(row, 0, None).sum())
    return lk.TabularPolicy.from_dict(game, rows)


def _nash_conv(table, name):
    import labkit as lk
    policy = _kuhn_policy(table, name)
    if len(table) != policy.game.num_infosets:
        raise Wrong(f"`{name}` should give a distribution at all {policy.game.num_infosets} infosets")
    return lk.nash_conv(policy.game, policy)


def _mixture_answers():
    """Player 1's own-reach-weighted average of ALWAYS_BET and CHECK_CALL, and the error in
    player 1's value (against a uniform player 2) of the plain, unweighted average."""
    import labkit as lk
    a, b = _kuhn_policy(ALWAYS_BET, "always bet"), _kuhn_policy(CHECK_CALL, "check-call")
    game = a.game
    weighted = lk.TabularPolicy.mixture([a, b])
    plain = lk.TabularPolicy(game, (a.probs + b.probs) / 2)
    true_value = (lk.expected_payoffs(game, a)[0] + lk.expected_payoffs(game, b)[0]) / 2
    return weighted, float(lk.expected_payoffs(game, plain)[0] - true_value)


def _grade_27_5_a(value):
    g = Grader(value)

    def correct():
        nc = _nash_conv(reported(value, "average_policy_cfr"), "average_policy_cfr")
        return None if nc < 0.03 else ("the NashConv of your CFR average after 1000 iterations is too high; "
                                       "check the regret update and the average's weights")

    def swapped():
        table = reported(value, "average_policy_swapped")
        nc = _nash_conv(table, "average_policy_swapped")
        if close_to(_kuhn_policy(table, "average_policy_swapped").probs, 0.5, 1e-3):
            return "that is the uniform policy, not the output of CFR with swapped weights"
        return None if nc > 0.2 else ("with the weightings swapped, the average should stay far from "
                                      "equilibrium; did you swap both weights?")

    g.item("CFR converges", 1, correct)
    g.item("swapped weights do not", 1, swapped)
    return g.items


def _grade_27_5_b(value):
    g = Grader(value)
    weighted, error = _mixture_answers()

    def average():
        policy = _kuhn_policy(reported(value, "mixture_policy"), "mixture_policy")
        keys = [k for k in PLAYER1_KEYS if k not in reported(value, "mixture_policy")]
        if keys:
            return f"`mixture_policy` should cover all of player 1's infosets (missing {keys[0]!r})"
        rows = [policy.game.infoset_index(k) for k in PLAYER1_KEYS]
        return None if close_to(policy.probs[rows], weighted.probs[rows], 1e-9) else \
            "weight each policy's action probabilities at an infoset by how often it reaches that infoset"

    def plain_error():
        e = as_number(reported(value, "plain_average_error"), "plain_average_error")
        return None if abs(e - error) < 1e-9 else \
            "value of the plain average minus the average of the two policies' values"

    g.item("reach-weighted average", 1, average)
    g.item("error of the plain average", 1, plain_error)
    return g.items


PARTS = [
    part_spec("27.5(a)", ["average_policy_cfr", "average_policy_swapped"], _grade_27_5_a, 2),
    part_spec("27.5(b)", ["mixture_policy", "plain_average_error"], _grade_27_5_b, 2),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
"""Public checks of exercise 27.5 (CFR weightings): policy tables over Kuhn poker's infosets, and the
two decisions of each player that Kuhn poker settles by dominance, worked out by hand.

Facing a bet with the K, calling wins 2 and folding loses 1; with the J, calling loses 2 and
folding loses 1. CFR's regrets push these four decisions (K|b, J|b for player 2, K|pb, J|pb for
player 1) to call with the K and fold with the J, so after 1,000 iterations CFR's average does so
almost always (the swapped weighting is the exercise's broken variant: nothing is asked of it).
Player 1's first decisions are reached by both pure strategies of (b) with probability 1, so the
coin flip between them plays each action there with probability 1/2.
"""
from labkit.grading.checking import Wrong
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import number, policy_table, reported

DOMINATED = {"K|b": "bet", "J|b": "pass", "K|pb": "bet", "J|pb": "pass"}     # infoset: the dominant action
ALMOST_ALWAYS = 0.9


def _dominance(table, name, keys):
    for key in keys:
        row = table[key]
        p = row.get(DOMINATED[key], 0.0) if isinstance(row, dict) else row[("pass", "bet").index(DOMINATED[key])]
        if p < ALMOST_ALWAYS:
            card, verb = key[0], "call" if DOMINATED[key] == "bet" else "fold"
            raise Wrong(f"`{name}` should {verb} with the {card} at {key!r} almost always (it does with probability "
                        f"{p:.3f}): facing a bet, calling with the K always wins and calling with the J always loses; "
                        "check that the regrets compare each action's value with the strategy's, from the acting "
                        "player's side")

KUHN_INFOSETS = ("J|", "Q|", "K|", "Q|p", "Q|b", "K|p", "K|b", "J|p", "J|b", "J|pb", "Q|pb", "K|pb")
PLAYER1_INFOSETS = ("J|", "Q|", "K|", "J|pb", "Q|pb", "K|pb")


def _feedback_a(value):
    f = FormatChecks(value)
    for name in ("average_policy_cfr", "average_policy_swapped"):
        f.item(f"{name} gives a distribution at all 12 infosets",
               lambda name=name: policy_table(reported(value, name), name, KUHN_INFOSETS))
    f.item("average_policy_cfr calls with the K and folds with the J facing a bet",
           lambda: _dominance(reported(value, "average_policy_cfr"), "average_policy_cfr", DOMINATED))
    return f


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("mixture_policy gives a distribution at player 1's 6 infosets",
           lambda: policy_table(reported(value, "mixture_policy"), "mixture_policy", KUHN_INFOSETS, complete=False)
           or _covers(reported(value, "mixture_policy")))
    f.item("mixture_policy flips the coin at the first decisions", lambda: _first_decisions(value))
    f.item("plain_average_error is a number", lambda: number(value, "plain_average_error"))
    return f


def _first_decisions(value):
    table = reported(value, "mixture_policy")
    for key in ("J|", "Q|", "K|"):
        row = table[key]
        row = [row.get(a, 0.0) for a in ("pass", "bet")] if isinstance(row, dict) else row
        if abs(row[0] - 0.5) > 1e-9:
            raise Wrong(f"`mixture_policy[{key!r}]` should be [0.5, 0.5]: both pure strategies reach player 1's "
                        "first decisions, so the coin flip decides there")


def _covers(table):
    missing = [k for k in PLAYER1_INFOSETS if k not in table]
    if missing:
        raise Wrong(f"`mixture_policy` should cover all of player 1's infosets (missing {missing[0]!r})")


PARTS = [
    public_part("27.5(a)", ["average_policy_cfr", "average_policy_swapped"], 2, _feedback_a),
    public_part("27.5(b)", ["mixture_policy", "plain_average_error"], 2, _feedback_b),
]
'''
