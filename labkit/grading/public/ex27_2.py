"""Public checks of exercise 27.2 (biased rock-paper-scissors): numbers, distributions, actions."""
from labkit.grading.checking import RPS
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import action, distribution, number, vector


def _feedback_a(value):
    return FormatChecks(value).item("value is a number", lambda: number(value, "value"))


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("equilibrium is a distribution over 3 actions", lambda: distribution(value, "equilibrium", 3))
    f.item("payoffs_against_equilibrium has 3 entries",
           lambda: vector(value, "payoffs_against_equilibrium", (3,)))
    return f


def _feedback_c(value):
    f = FormatChecks(value)
    f.item("cycle_average is a distribution", lambda: distribution(value, "cycle_average", 3))
    f.item("best_response_to_average names an action", lambda: action(value, "best_response_to_average", RPS))
    f.item("gain is a number", lambda: number(value, "gain"))
    f.item("nash_conv_of_average is a number >= 0", lambda: number(value, "nash_conv_of_average", low=0))
    return f


PARTS = [
    public_part("27.2(a)", ["value"], 1, _feedback_a),
    public_part("27.2(b)", ["equilibrium", "payoffs_against_equilibrium"], 2, _feedback_b),
    public_part("27.2(c)", ["cycle_average", "best_response_to_average", "gain", "nash_conv_of_average"], 4,
                _feedback_c),
]
