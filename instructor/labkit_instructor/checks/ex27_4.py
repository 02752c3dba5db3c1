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


def _grade_27_4_a(value):
    g = Grader(value)
    g.item("betting the Q", 1,
           lambda: None if abs(as_number(reported(value, "ev_bet_queen"), "ev_bet_queen") + 0.5) < 1e-9
           else "list player 2's two possible cards and what each does against a bet")

    def check_fn():
        results = probe_results(value, "ev_check_queen", len(CALL_BLUFF_GRID))
        for r, (c, b) in zip(results, CALL_BLUFF_GRID):
            if abs(as_number(r, "ev_check_queen(call, bluff)") - _ev_check_queen(c, b)) > 1e-9:
                return ("`ev_check_queen(call, bluff)` is wrong for some (call, bluff): after a check, "
                        "player 2 bets the K and bluffs the J with probability bluff")
        return None

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
        for r, (q,) in zip(results, QUEEN_CALL_GRID):
            if abs(as_number(r, "ev_bet_jack(q)") - _ev_bet_jack(q)) > 1e-9:
                return "`ev_bet_jack(q)` is wrong for some q: player 2 always calls with the K"
        return None

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
