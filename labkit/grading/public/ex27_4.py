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
    for (c, b), got, want in zip(CHECK_PROBES, results, CHECK_VALUES):
        expect(as_number(got, "ev_check_queen(...)"), want, f"ev_check_queen({c}, {b})",
               "average the K (which always bets) and the J (which bets with probability bluff), 1/2 each, and "
               "count what calling or folding wins or loses in each case")


def _jack_values(value):
    for (q,), got, want in zip(JACK_PROBES, probe_results(value, "ev_bet_jack", len(JACK_PROBES)), JACK_VALUES):
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
