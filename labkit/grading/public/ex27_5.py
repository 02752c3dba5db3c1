"""Public checks of exercise 27.5 (CFR weightings): policy tables over Kuhn poker's infosets."""
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import number, policy_table, reported

KUHN_INFOSETS = ("J|", "Q|", "K|", "Q|p", "Q|b", "K|p", "K|b", "J|p", "J|b", "J|pb", "Q|pb", "K|pb")
PLAYER1_INFOSETS = ("J|", "Q|", "K|", "J|pb", "Q|pb", "K|pb")


def _feedback_a(value):
    f = FormatChecks(value)
    for name in ("average_policy_cfr", "average_policy_swapped"):
        f.item(f"{name} gives a distribution at all 12 infosets",
               lambda name=name: policy_table(reported(value, name), name, KUHN_INFOSETS))
    return f


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("mixture_policy gives a distribution at player 1's 6 infosets",
           lambda: policy_table(reported(value, "mixture_policy"), "mixture_policy", KUHN_INFOSETS, complete=False)
           or _covers(reported(value, "mixture_policy")))
    f.item("plain_average_error is a number", lambda: number(value, "plain_average_error"))
    return f


def _covers(table):
    from labkit.grading.checking import Wrong
    missing = [k for k in PLAYER1_INFOSETS if k not in table]
    if missing:
        raise Wrong(f"`mixture_policy` should cover all of player 1's infosets (missing {missing[0]!r})")


PARTS = [
    public_part("27.5(a)", ["average_policy_cfr", "average_policy_swapped"], 2, _feedback_a),
    public_part("27.5(b)", ["mixture_policy", "plain_average_error"], 2, _feedback_b),
]
