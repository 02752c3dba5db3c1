"""Checks of exercise 27.6, the climbing game.

The exercise itself (text, answer and check cells) is labkit_instructor/exercises/ex27_6.py.
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import (ACTIONS3, Grader, Wrong, as_action, as_array, as_pair, close_to,
    part_spec, probe_results, reported)


LEARNER_SEEDS = [(s,) for s in range(2700, 2730)]   # the grader's own; the public check uses 100 to 103
MISSING_THE_OPTIMUM = 0.6        # share of the runs that must end away from the optimum


def climbing_payoffs():
    """The climbing game's common payoff matrix (from labkit.games, imported when first needed)."""
    from labkit.games import climbing_game
    return climbing_game().A


def pure_equilibria(A, B):
    """Joint actions (a, b) where neither player gains by deviating alone."""
    return {(a, b) for a in range(A.shape[0]) for b in range(A.shape[1])
            if A[a, b] >= A[:, b].max() and B[a, b] >= B[a, :].max()}


def _grade_27_6_a(value):
    g = Grader(value)
    A = climbing_payoffs()

    def equilibria():
        pairs = reported(value, "pure_equilibria")
        if not isinstance(pairs, list):
            raise Wrong("`pure_equilibria` should be a list of pairs such as ('a', 'c')")
        got = {as_pair(p, "pure_equilibria") for p in pairs}
        want = pure_equilibria(A, A)
        if got == want:
            return None
        if got - want:
            return "one of your joint actions has a player who gains by deviating alone"
        return "you are missing an equilibrium: check every joint action, including the unattractive ones"

    g.item("pure equilibria", 1, equilibria)
    return g.items


def _grade_27_6_b(value):
    g = Grader(value)
    A = climbing_payoffs()
    row_values, col_values = A.mean(axis=1), A.mean(axis=0)

    def values():
        v = as_array(reported(value, "values_uniform_partner"), "values_uniform_partner", (3,))
        return None if close_to(v, row_values, 1e-6) else "average each row of the payoffs over the partner's actions"

    def favoured():
        r = as_action(reported(value, "favoured_row"), "favoured_row", ACTIONS3)
        c = as_action(reported(value, "favoured_column"), "favoured_column", ACTIONS3)
        return None if (r, c) == (int(np.argmax(row_values)), int(np.argmax(col_values))) else \
            "each agent favours the action with the highest value against a uniform partner"

    g.item("values against a uniform partner", 1, values)
    g.item("favoured actions", 1, favoured)
    return g.items


def _grade_27_6_c(value):
    g = Grader(value)
    A = climbing_payoffs()
    best = tuple(int(i) for i in np.unravel_index(np.argmax(A), A.shape))

    def simulation():
        # a simulation of learners that explore at random ends differently for some seeds; an answer
        # that is the same for all of them states an outcome instead of simulating it
        results = probe_results(value, "independent_learners", len(LEARNER_SEEDS))
        pairs = [as_pair(r, "independent_learners(seed)") for r in results]
        if len(set(pairs)) == 1:
            return (f"all {len(pairs)} seeds end at the same joint action: simulate the two learners with the "
                    "seed's random numbers (np.random.default_rng(seed)), exploring long enough that the runs "
                    "can end differently")
        wrong = sum(p != best for p in pairs)
        if wrong < MISSING_THE_OPTIMUM * len(pairs):
            return ("most of your runs reach the optimum; the pathology shows with value estimates "
                    "averaged over an exploring partner")
        return None

    def name():
        text = str(reported(value, "pathology")).lower().replace("-", "").replace(" ", "")
        return None if "overgeneraliz" in text or "overgeneralis" in text else \
            "the pathology has a name in the cooperative MARL literature (two words)"

    g.item("simulated learners, runs that differ with the seed, missing the optimum", 1, simulation)
    g.item("name of the pathology", 1, name)
    return g.items


PARTS = [
    part_spec("27.6(a)", ["pure_equilibria"], _grade_27_6_a, 1),
    part_spec("27.6(b)", ["values_uniform_partner", "favoured_row", "favoured_column"], _grade_27_6_b, 2),
    part_spec("27.6(c)", ["independent_learners", "pathology"], _grade_27_6_c, 2,
              {"independent_learners": LEARNER_SEEDS}),
]
