"""Checks of exercise 27.4, Kuhn poker by hand.

The exercise itself (text, answer and check cells) is labkit_instructor/exercises/ex27_4.py.
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import Grader, as_number, part_spec, probe_results, reported


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
