"""Public checks of exercise 27.4 (Kuhn poker by hand): numbers, probabilities, functions returning numbers."""
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import as_number, function_results, number

CHECK_PROBES = [(0.4, 0.3), (0.9, 0.6)]
JACK_PROBES = [(0.4,)]


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("ev_bet_queen is a number", lambda: number(value, "ev_bet_queen"))
    f.item("ev_check_queen(call, bluff) returns numbers",
           lambda: function_results(value, "ev_check_queen", len(CHECK_PROBES), as_number))
    f.item("call_with_queen is a probability", lambda: number(value, "call_with_queen", 0, 1))
    return f


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("ev_bet_jack(q) returns a number",
           lambda: function_results(value, "ev_bet_jack", len(JACK_PROBES), as_number))
    f.item("call_queen_p2 is a probability", lambda: number(value, "call_queen_p2", 0, 1))
    return f


PARTS = [
    public_part("27.4(a)", ["ev_bet_queen", "ev_check_queen", "call_with_queen"], 3, _feedback_a,
                {"ev_check_queen": CHECK_PROBES}),
    public_part("27.4(b)", ["ev_bet_jack", "call_queen_p2"], 2, _feedback_b, {"ev_bet_jack": JACK_PROBES}),
]
