"""Exercise 27.4: two equilibrium facts of Kuhn poker, by hand and checked on the game tree.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex27_4.py).
"""
import numpy as np

from labkit_instructor.checks.base import Grader, as_number, part_spec, probe_results, reported
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, written

QUEEN_TEMPLATE = '''
ev_bet_queen = ...  # player 1's expected payoff for betting the Q


def ev_check_queen(call, bluff):
    """Player 1's expected payoff for checking the Q, then calling a bet with
    probability `call`, when player 2 bets the K and bets the J with probability
    `bluff` after a check."""
    ...


call_with_queen = ...  # a calling probability that guarantees at least -1/3
'''

QUEEN_SOLUTION = '''
# player 1 holds the Q; player 2 holds the J or the K, each with probability 1/2.
# Betting: the K calls (player 1 loses its ante and its bet), the J folds
# (player 1 wins the ante).
ev_bet_queen = 0.5 * -2 + 0.5 * 1


def ev_check_queen(call, bluff):
    against_king = call * -2 + (1 - call) * -1  # the K always bets
    # after a check by the J, a showdown
    against_jack = bluff * (call * 2 + (1 - call) * -1) + (1 - bluff) * 1
    return 0.5 * against_king + 0.5 * against_jack


# ev_check_queen is linear in bluff; the calling probability that makes its slope
# zero leaves player 2 nothing to gain by choosing bluff
slope = (
    ev_check_queen(0.0, 1.0) - ev_check_queen(0.0, 0.0),
    ev_check_queen(1.0, 1.0) - ev_check_queen(1.0, 0.0),
)
call_with_queen = slope[0] / (slope[0] - slope[1])
print("betting the Q:", ev_bet_queen)
print("calling probability:", round(call_with_queen, 12))
print(
    "checking, for bluff = 0, 1/2, 1:",
    [round(ev_check_queen(call_with_queen, b), 12) for b in (0, 0.5, 1)],
)

# the same numbers from labkit's exact evaluation of the game tree
kuhn = lk.games.load("kuhn_poker")
# the history where player 1 was dealt the Q
queen = int(np.flatnonzero((kuhn.depth == 1) & (kuhn.action == 1))[0])


def value_with_queen(table):
    policy = lk.TabularPolicy.from_dict(kuhn, table)
    return lk.history_values(kuhn, policy)[queen, 0]


player2 = {"K|b": [0, 1], "J|b": [1, 0], "K|p": [0, 1]}
print("tree, betting the Q:", round(value_with_queen({"Q|": [0, 1], **player2}), 12))
for bluff in (0.0, 0.5, 1.0):
    table = {
        "Q|": [1, 0],
        "Q|pb": [1 - call_with_queen, call_with_queen],
        "J|p": [1 - bluff, bluff],
        **player2,
    }
    print(f"tree, checking with bluff = {bluff}:", round(value_with_queen(table), 12))
'''

JACK_TEMPLATE = '''
def ev_bet_jack(q):
    """Player 1's expected payoff for betting the J when player 2 calls with the K
    and calls with the Q with probability q."""
    ...


call_queen_p2 = ...  # the calling probability of player 2 with the Q
'''

JACK_SOLUTION = '''
def ev_bet_jack(q):
    against_king = -2                                  # the K calls and wins
    against_queen = q * -2 + (1 - q) * 1               # the Q calls (and wins) or folds
    return 0.5 * against_king + 0.5 * against_queen


# checking the J loses 1 whatever happens; betting it must do exactly as well
# ev_bet_jack is linear in q: solve ev_bet_jack(q) = -1
call_queen_p2 = (ev_bet_jack(0) - (-1)) / (ev_bet_jack(0) - ev_bet_jack(1))
print("player 2 calls with the Q with probability", round(call_queen_p2, 12))
print("betting the J then earns", round(ev_bet_jack(call_queen_p2), 12))
'''

ANSWER_A = r'''
With the Q, player 1 faces the J or the K, each with probability 1/2.

*Betting.* The K calls and wins the pot: player 1 loses 2. The J folds: player 1 wins 1. The expected
payoff is $\tfrac12(-2) + \tfrac12(1) = -\tfrac12$.

*Checking, then calling with probability $c$.* Against the K, which bets: calling loses 2, folding
loses 1, so $-1 - c$. Against the J: with probability $1-\beta$ it checks and the Q wins the
showdown, $+1$; with probability $\beta$ it bluffs, and calling wins 2 while folding loses 1,
$3c - 1$. Altogether

$$\tfrac12(-1 - c) + \tfrac12\bigl(\beta(3c - 1) + 1 - \beta\bigr) = \tfrac12\bigl(c(3\beta - 1) - 2\beta\bigr)
= \tfrac12\bigl(\beta(3c - 2) - c\bigr).$$

With $c = 2/3$ the coefficient of $\beta$ vanishes and the payoff is $-\tfrac13$ whatever $\beta$ is. So
checking and calling two times out of three guarantees $-1/3 > -1/2$: with these replies of player 2,
betting the Q is never right.
'''

ANSWER_B = r'''
After a check with the J, player 1 loses 1 whatever player 2 holds. Betting the J, player 1 meets
the K with probability 1/2 (it calls: $-2$) or the Q (it calls with probability $q$: $-2$, else it
folds: $+1$). So betting earns $\tfrac12(-2) + \tfrac12\bigl(-2q + (1 - q)\bigr) = -\tfrac12 - \tfrac32 q$.

In an equilibrium where player 1 bets the J with positive probability, betting must be a best
reply, so $-\tfrac12 - \tfrac32 q \ge -1$, i.e. $q \le 1/3$. If $q < 1/3$, betting the J would be strictly
better than checking and player 1 would bet the J every time. A Q facing a bet would then be
looking at the J at least as often as at the K (player 1 holds each with probability 1/2 and bets
every J), so calling would earn at least $\tfrac12(2) + \tfrac12(-2) = 0$, more than the $-1$ of folding:
player 2 would call with probability 1, contradicting $q < 1/3$. Hence $q = 1/3$ exactly: the value that makes player 1
indifferent between bluffing and checking the J.
'''

EXERCISE = Exercise("27.4", "27_4_kuhn_poker_by_hand", "Kuhn poker by hand", (
    md(r"""
        # Exercise 27.4 — Kuhn poker by hand

        Kuhn poker as in [Imperfect information and counterfactual
        regret](../chapters/03_counterfactual_regret.ipynb): three cards J < Q < K, one dealt to
        each player, an ante of 1 each; player 1 checks or bets 1; after a bet the other player
        calls or folds; after a check player 2 checks (showdown) or bets, and then player 1 calls
        or folds. The higher card wins a showdown. Payoffs below are player 1's net winnings, given its card.
    """),
    how_to("27.4"),
    SETUP,
    md(r"""
        ## (a) Betting the Q is a mistake
        Let player 2 answer a bet by calling with the K and folding with the J. Prove that player 1,
        holding the Q, expects $-1/2$ from betting. Then prove that checking, and calling a bet with a
        well-chosen probability, guarantees at least $-1/3$ whatever player 2 does with the J after a check, where it
        bets (bluffs) with some probability $\beta$ (the K always bets after a check).

        In code: `ev_bet_queen`, the function `ev_check_queen(call, bluff)`, and `call_with_queen`.
    """),
    written("27.4(a)", ANSWER_A, points=2),
    answer("27.4(a)", QUEEN_TEMPLATE, QUEEN_SOLUTION),
    check("27.4(a)"),
    md(r"""
        ## (b) Why player 2 calls with the Q one time in three
        Assume that player 1 sometimes bets (bluffs) with the J, and that checking the J costs it
        exactly 1 chip against either card of player 2. Prove that player 2, holding the Q and facing a
        bet, then calls exactly one time in three.

        In code: the function `ev_bet_jack(q)` and the probability `call_queen_p2`.
    """),
    written("27.4(b)", ANSWER_B, points=2),
    answer("27.4(b)", JACK_TEMPLATE, JACK_SOLUTION),
    check("27.4(b)"),
))


# ------------------------------------------------------------------ the hidden checks
CALL_BLUFF_GRID = [(c, b) for c in (0.0, 1 / 3, 2 / 3, 1.0) for b in (0.0, 0.5, 1.0)]
QUEEN_CALL_GRID = [(q,) for q in (0.0, 0.25, 0.5, 1.0)]


def _ev_check_queen(call, bluff):
    """Player 1 holds Q, checks; player 2 bets K, bluffs J with prob `bluff`; player 1 calls a bet
    with prob `call`. Each of J, K is player 2's card with probability 1/2."""
    against_king = call * -2 + (1 - call) * -1
    against_jack = bluff * (call * 2 + (1 - call) * -1) + (1 - bluff) * 1
    return 0.5 * against_king + 0.5 * against_jack


def _ev_bet_jack(call_queen):
    """Player 1 bets J; player 2 calls with K, and with Q with probability `call_queen`."""
    return 0.5 * -2 + 0.5 * (call_queen * -2 + (1 - call_queen) * 1)


def _branch_hint(got, expected, probes, branch_of, names):
    """Which branch of a payoff function is wrong, from its values at the probes.

    `got` and `expected` are the student's values and the right ones at `probes`; the difference
    is split by the probe coordinate only one branch depends on (`branch_of(probe)`, e.g. the
    bluffing probability, which only the J branch reads): a difference that does not change with
    that coordinate comes from the other branch. Returns the key of `names` to blame: "both
    halves" (every value twice the right one: the card probabilities of 1/2 left out), "fixed"
    (the branch that ignores the coordinate) or "varying"."""
    got, expected = np.asarray(got, float), np.asarray(expected, float)
    if np.allclose(got, 2 * expected, atol=1e-9):
        return names["both halves"]
    gap = got - expected
    groups = {}
    for d, probe in zip(gap, probes):
        groups.setdefault(branch_of(probe)[0], []).append((branch_of(probe)[1], d))
    varies = any(max(d for _, d in g) - min(d for _, d in g) > 1e-9 for g in groups.values() if len(g) > 1)
    return names["varying"] if varies else names["fixed"]


def _grade_27_4_a(value):
    g = Grader(value)
    g.item("betting the Q", 1,
           lambda: None if abs(as_number(reported(value, "ev_bet_queen"), "ev_bet_queen") + 0.5) < 1e-9
           else "list player 2's two possible cards and what each does against a bet")

    def check_fn():
        results = probe_results(value, "ev_check_queen", len(CALL_BLUFF_GRID))
        got = [as_number(r, "ev_check_queen(call, bluff)") for r in results]
        expected = [_ev_check_queen(c, b) for c, b in CALL_BLUFF_GRID]
        if np.allclose(got, expected, rtol=0, atol=1e-9):
            return None
        # only the J branch reads `bluff`: a gap that does not move with it is in the K branch
        return _branch_hint(got, expected, CALL_BLUFF_GRID, lambda probe: (probe[0], probe[1]), {
            "both halves": "`ev_check_queen(call, bluff)` is twice the right value everywhere: player 2 holds the J or "
                           "the K, each with probability 1/2",
            "fixed": "`ev_check_queen(call, bluff)` is off in the K branch: after a check the K always bets, and "
                     "player 1 then calls with probability call",
            "varying": "`ev_check_queen(call, bluff)` is off in the J branch: after a check the J bluffs with "
                       "probability bluff (player 1 then calls with probability call), or checks to a showdown"})

    def call():
        c = as_number(reported(value, "call_with_queen"), "call_with_queen")
        worst = min(_ev_check_queen(c, b) for b in np.linspace(0, 1, 101))
        if not (0 <= c <= 1) or worst < -1 / 3 - 1e-7:
            return "choose the calling probability that makes player 2 indifferent about bluffing"
        return None

    g.item("checking, as a function", 1, check_fn)
    g.item("calling probability", 1, call)
    return g.items


def _grade_27_4_b(value):
    g = Grader(value)

    def bet_jack():
        results = probe_results(value, "ev_bet_jack", len(QUEEN_CALL_GRID))
        got = [as_number(r, "ev_bet_jack(q)") for r in results]
        expected = [_ev_bet_jack(q) for (q,) in QUEEN_CALL_GRID]
        if np.allclose(got, expected, rtol=0, atol=1e-9):
            return None
        # only the Q branch reads q: a gap that is the same for every q is in the K branch
        return _branch_hint(got, expected, QUEEN_CALL_GRID, lambda probe: (0, probe[0]), {
            "both halves": "`ev_bet_jack(q)` is twice the right value everywhere: player 2 holds the Q or the K, each "
                           "with probability 1/2",
            "fixed": "`ev_bet_jack(q)` is off by the same amount for every q, so the K branch is wrong: player 2 "
                     "always calls a bet with the K",
            "varying": "`ev_bet_jack(q)` is off in the Q branch: with the Q, player 2 calls with probability q and "
                       "folds otherwise"})

    def indifference():
        q = as_number(reported(value, "call_queen_p2"), "call_queen_p2")
        return None if abs(_ev_bet_jack(q) - (-1.0)) < 1e-7 else \
            "player 1 bets the J only if betting does as well as the -1 it gets after checking"

    g.item("betting the J, as a function", 1, bet_jack)
    g.item("player 2's calling probability", 1, indifference)
    return g.items


PARTS = [
    part_spec("27.4(a)", ["ev_bet_queen", "ev_check_queen", "call_with_queen"], _grade_27_4_a, 3,
              {"ev_check_queen": CALL_BLUFF_GRID}),
    part_spec("27.4(b)", ["ev_bet_jack", "call_queen_p2"], _grade_27_4_b, 2, {"ev_bet_jack": QUEEN_CALL_GRID}),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
"""Public checks of exercise 27.4 (Kuhn poker by hand): numbers, probabilities, and the payoff
functions at public points worked out by hand (the grader probes other points).

With the Q, player 1 meets the J or the K, each with probability 1/2. After a check, the K
always bets (calling with probability c loses 2, folding loses 1) and the J bets with probability
b (calling wins 2, folding loses 1) or checks (the Q wins the showdown, +1). At (c, b) = (0.4, 0.3):
against the K -1.4, against the J 0.3 (0.4 * 2 - 0.6) + 0.7 = 0.76, so 1/2 (-1.4 + 0.76) = -0.32;
at (0.9, 0.6): -1.9 and 0.6 (1.8 - 0.1) + 0.4 = 1.42, so -0.24. Betting the J when player 2
calls with the Q with probability q = 0.4: the K calls (-2), the Q calls (-2) or folds (+1):
1/2 (-2) + 1/2 (0.4 (-2) + 0.6) = -1.1.
"""
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import as_number, expect, function_results, number, probe_results

CHECK_PROBES = [(0.4, 0.3), (0.9, 0.6)]
CHECK_VALUES = [-0.32, -0.24]            # worked out in the docstring
JACK_PROBES = [(0.4,)]
JACK_VALUES = [-1.1]


def _check_values(value):
    results = probe_results(value, "ev_check_queen", len(CHECK_PROBES))
    for (c, b), got, want in zip(CHECK_PROBES, results, CHECK_VALUES, strict=False):
        expect(as_number(got, "ev_check_queen(...)"), want, f"ev_check_queen({c}, {b})",
               "average the K (which always bets) and the J (which bets with probability bluff), 1/2 each, and "
               "count what calling or folding wins or loses in each case")


def _jack_values(value):
    for (q,), got, want in zip(JACK_PROBES, probe_results(value, "ev_bet_jack", len(JACK_PROBES)), JACK_VALUES,
                                 strict=False):
        expect(as_number(got, "ev_bet_jack(...)"), want, f"ev_bet_jack({q})",
               "player 2 holds the K or the Q, 1/2 each; the K always calls, the Q calls with probability q "
               "and wins 2, or folds and loses 1")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("ev_bet_queen is a number", lambda: number(value, "ev_bet_queen", -2, 2))
    f.item("ev_check_queen(call, bluff) returns numbers",
           lambda: function_results(value, "ev_check_queen", len(CHECK_PROBES), as_number))
    f.item("ev_check_queen at two public points", lambda: _check_values(value))
    f.item("call_with_queen is a probability", lambda: number(value, "call_with_queen", 0, 1))
    return f


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("ev_bet_jack(q) returns a number",
           lambda: function_results(value, "ev_bet_jack", len(JACK_PROBES), as_number))
    f.item("ev_bet_jack at a public point", lambda: _jack_values(value))
    f.item("call_queen_p2 is a probability", lambda: number(value, "call_queen_p2", 0, 1))
    return f


PARTS = [
    public_part("27.4(a)", ["ev_bet_queen", "ev_check_queen", "call_with_queen"], 3, _feedback_a,
                {"ev_check_queen": CHECK_PROBES}),
    public_part("27.4(b)", ["ev_bet_jack", "call_queen_p2"], 2, _feedback_b, {"ev_bet_jack": JACK_PROBES}),
]
'''
