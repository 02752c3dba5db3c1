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
