"""Public checks of exercise 27.8 (intransitive preferences): numbers, a boolean test, a distribution."""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, distribution, function_results, number

PROBES = [(np.array([[0.5, 0.6, 0.45], [0.4, 0.5, 0.7], [0.55, 0.3, 0.5]]),)]


def _boolean(result, label):
    if not isinstance(result, bool):
        raise Wrong(f"`{label}` should return True or False")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("logit_cycle_sum is a number", lambda: number(value, "logit_cycle_sum"))
    f.item("bradley_terry_consistent(P) returns True or False",
           lambda: function_results(value, "bradley_terry_consistent", len(PROBES), _boolean))
    return f


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("nash_equilibrium is a distribution over 3 responses", lambda: distribution(value, "nash_equilibrium", 3))
    f.item("worst_case_payoff is a number", lambda: number(value, "worst_case_payoff"))
    return f


PARTS = [
    public_part("27.8(a)", ["logit_cycle_sum", "bradley_terry_consistent"], 2, _feedback_a,
                {"bradley_terry_consistent": PROBES}),
    public_part("27.8(b)", ["nash_equilibrium", "worst_case_payoff"], 2, _feedback_b),
]
