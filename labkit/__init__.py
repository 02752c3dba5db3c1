"""labkit: games, solvers and evaluation for the multi-agent RL and self-play book.

    import labkit as lk
    game = lk.games.load("kuhn_poker")
    lk.nash_conv(game, lk.uniform_policy(game))     # 11/12
"""
from labkit import games
from labkit.evaluate import (best_response, counterfactual_values, expected_payoffs, exploitability,
                             history_values, nash_conv, reach_probabilities)
from labkit.lp import zero_sum_equilibrium
from labkit.policy import TabularPolicy, uniform_policy

__version__ = "0.1.0"

__all__ = ["games", "TabularPolicy", "uniform_policy", "expected_payoffs", "best_response", "nash_conv",
           "exploitability", "counterfactual_values", "reach_probabilities", "history_values",
           "zero_sum_equilibrium"]
