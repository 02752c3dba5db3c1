"""Exercise 27.4: two equilibrium facts of Kuhn poker, by hand and checked on the game tree."""
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
