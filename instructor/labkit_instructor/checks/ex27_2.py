"""Checks of exercise 27.2, biased rock-paper-scissors.

The exercise itself (text, answer and check cells) is labkit_instructor/exercises/ex27_2.py.
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import (BIASED_RPS, Grader, RPS, RPS_EQUILIBRIUM, as_action, as_array,
    as_number, close_to, part_spec, reported)


def _grade_27_2_a(value):
    g = Grader(value)
    g.item("value", 1, lambda: None if abs(as_number(reported(value, "value"), "value")) < 1e-6 else
           "compare the game with the one where the players swap roles: A^T = -A")
    return g.items


def _grade_27_2_b(value):
    g = Grader(value)

    def equilibrium():
        x = as_array(reported(value, "equilibrium"), "equilibrium", (3,))
        if not close_to(x, RPS_EQUILIBRIUM, 1e-6):
            return ("at an interior equilibrium the opponent must be indifferent between its "
                    "three actions: solve the linear system that says so")
        return None

    def indifference():
        u = as_array(reported(value, "payoffs_against_equilibrium"), "payoffs_against_equilibrium", (3,))
        if not close_to(u, BIASED_RPS @ RPS_EQUILIBRIUM, 1e-6):
            return "compute A @ y for the equilibrium y: the payoff of each pure strategy against it"
        return None

    g.item("equilibrium", 1, equilibrium)
    g.item("indifference", 1, indifference)
    return g.items


def _grade_27_2_c(value):
    g = Grader(value)
    average = np.full(3, 1 / 3)
    payoffs = BIASED_RPS @ average

    def cycle():
        a = as_array(reported(value, "cycle_average"), "cycle_average", (3,))
        return None if close_to(a, average, 1e-6) else "equal time on each pure strategy: what mixed strategy is that?"

    def response():
        a = as_action(reported(value, "best_response_to_average"), "best_response_to_average", RPS)
        return None if a == int(np.argmax(payoffs)) else "compare A @ (cycle average) entry by entry"

    def gain():
        v = as_number(reported(value, "gain"), "gain")
        return None if abs(v - payoffs.max()) < 1e-6 else \
            "the gain is the best response's payoff minus the average's payoff against itself (0)"

    def nash_conv():
        v = as_number(reported(value, "nash_conv_of_average"), "nash_conv_of_average")
        return None if abs(v - 2 * payoffs.max()) < 1e-6 else "NashConv adds up both players' gains"

    g.item("cycle average", 1, cycle)
    g.item("best response", 1, response)
    g.item("gain", 1, gain)
    g.item("NashConv", 1, nash_conv)
    return g.items


PARTS = [
    part_spec("27.2(a)", ["value"], _grade_27_2_a, 1),
    part_spec("27.2(b)", ["equilibrium", "payoffs_against_equilibrium"], _grade_27_2_b, 2),
    part_spec("27.2(c)", ["cycle_average", "best_response_to_average", "gain", "nash_conv_of_average"],
              _grade_27_2_c, 4),
]
