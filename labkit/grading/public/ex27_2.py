"""Public checks of exercise 27.2 (biased rock-paper-scissors): numbers, distributions, actions,
and what must hold between them, read off the game's matrix (public in labkit).

The value of a matrix game lies between the best pure guarantee of each player: max_i min_j A_ij
<= value <= min_j max_i A_ij. A fully mixed equilibrium strategy leaves the other player no
better reply: every action earns the same against it. A best response earns at least as much as
every other action, and NashConv adds up two gains that are each at least 0.
"""
import numpy as np

from labkit.grading.checking import RPS
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, action, as_array, as_number, distribution, number, reported, vector


def _matrix():
    import labkit as lk
    return lk.games.biased_rock_paper_scissors().A


def _between_pure_guarantees(value):
    A = _matrix()
    low, high = A.min(axis=1).max(), A.max(axis=0).min()
    v = as_number(reported(value, "value"), "value")
    if not low - 1e-9 <= v <= high + 1e-9:
        raise Wrong(f"`value` is {v:g}, outside [{low:g}, {high:g}]: player 1 can guarantee {low:g} with a pure "
                    f"action and player 2 can hold it to {high:g}, so the value lies in between")


def _consistent(value):
    A = _matrix()
    e = as_array(reported(value, "equilibrium"), "equilibrium", (3,))
    p = as_array(reported(value, "payoffs_against_equilibrium"), "payoffs_against_equilibrium", (3,))
    if not np.allclose(p, A @ e, atol=1e-6):
        raise Wrong("`payoffs_against_equilibrium` should hold what rock, paper and scissors earn against your "
                    "`equilibrium` (entry i is row i of A times the strategy)")
    if np.ptp(p) > 1e-6:
        raise Wrong("against an equilibrium that plays every action, no action does better than another: the "
                    "three payoffs should be equal, and they are not (is `equilibrium` an equilibrium?)")


def _best_reply(value):
    A = _matrix()
    average = as_array(reported(value, "cycle_average"), "cycle_average", (3,))
    earned = A @ average
    chosen = RPS.index(reported(value, "best_response_to_average"))
    if earned[chosen] < earned.max() - 1e-9:
        raise Wrong("`best_response_to_average` is not the action that earns the most against `cycle_average`")
    gain = as_number(reported(value, "gain"), "gain")
    nash_conv = as_number(reported(value, "nash_conv_of_average"), "nash_conv_of_average")
    if gain < -1e-9 or nash_conv < gain - 1e-9:
        raise Wrong("a best response gains at least 0, and NashConv adds both players' gains (each >= 0): "
                    "0 <= gain <= nash_conv_of_average should hold")


def _feedback_a(value):
    return FormatChecks(value).item("value is a number", lambda: number(value, "value")).item(
        "value lies between the pure guarantees", lambda: _between_pure_guarantees(value))


def _feedback_b(value):
    f = FormatChecks(value)
    f.item("equilibrium is a distribution over 3 actions", lambda: distribution(value, "equilibrium", 3))
    f.item("payoffs_against_equilibrium has 3 entries",
           lambda: vector(value, "payoffs_against_equilibrium", (3,)))
    f.item("the payoffs are A times the equilibrium, all equal", lambda: _consistent(value))
    return f


def _feedback_c(value):
    f = FormatChecks(value)
    f.item("cycle_average is a distribution", lambda: distribution(value, "cycle_average", 3))
    f.item("best_response_to_average names an action", lambda: action(value, "best_response_to_average", RPS))
    f.item("gain is a number", lambda: number(value, "gain"))
    f.item("nash_conv_of_average is a number >= 0", lambda: number(value, "nash_conv_of_average", low=0))
    f.item("the best response and the gains agree with the average", lambda: _best_reply(value))
    return f


PARTS = [
    public_part("27.2(a)", ["value"], 1, _feedback_a),
    public_part("27.2(b)", ["equilibrium", "payoffs_against_equilibrium"], 2, _feedback_b),
    public_part("27.2(c)", ["cycle_average", "best_response_to_average", "gain", "nash_conv_of_average"], 4,
                _feedback_c),
]
