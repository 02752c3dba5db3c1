"""Checks of exercise 27.1, no-regret learning and the minimax theorem.

The exercise itself (text, answer and check cells) is labkit_instructor/exercises/ex27_1.py.
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import Grader, Wrong, as_array, as_number, close_to, part_spec, probe_results


def _probe_game(seed, shape):
    return np.round(np.random.default_rng(seed).uniform(-1, 1, size=shape), 2)


def _probe_sequence(seed, T, n):
    return np.random.default_rng(seed).dirichlet(np.ones(n), size=T)


PROBE_A = _probe_game(2701, (3, 4))
PROBE_XS, PROBE_YS = _probe_sequence(1, 40, 3), _probe_sequence(2, 40, 4)
PROBE_XBAR, PROBE_YBAR = PROBE_XS.mean(axis=0), PROBE_YS.mean(axis=0)
BRACKET_A = _probe_game(2702, (4, 3))


def _game_value(A):
    import labkit as lk
    from labkit.games import MatrixGame
    return lk.zero_sum_equilibrium(lk.games.load(MatrixGame(A)))[1]


def _regrets(A, xs, ys):
    realized = np.einsum("ti,ij,tj->", xs, A, ys)
    r1 = float(np.max(A @ ys.sum(axis=0)) - realized)
    r2 = float(np.max(-(xs.sum(axis=0) @ A)) + realized)
    return r1, r2


def _gap(A, xbar, ybar):
    return float(np.max(A @ ybar) - np.min(xbar @ A))


def _grade_27_1_a(value):
    g = Grader(value)

    def learner():
        (run,) = probe_results(value, "learn", 1)
        if not isinstance(run, list) or len(run) != 2:
            raise Wrong("`learn(A, T)` should return a pair (xs, ys)")
        xs, ys = as_array(run[0], "xs", (200, 3)), as_array(run[1], "ys", (200, 4))
        if np.any(xs < -1e-9) or np.any(ys < -1e-9) or not close_to(xs.sum(axis=1), 1, 1e-6) \
                or not close_to(ys.sum(axis=1), 1, 1e-6):
            return "every row of xs and ys must be a mixed strategy (nonnegative, summing to 1)"
        r1, r2 = _regrets(PROBE_A, xs, ys)
        if (r1 + r2) / 200 > 0.1:
            return ("your learner's average regret after 200 rounds is large; is it a no-regret "
                    "algorithm (e.g. Hedge with a step size of order 1/sqrt(T))?")
        return None

    def regrets():
        (r,) = probe_results(value, "regrets", 1)
        r = as_array(r, "regrets(A, xs, ys)", (2,))
        if not close_to(r, _regrets(PROBE_A, PROBE_XS, PROBE_YS), 1e-6):
            return ("`regrets` disagrees with the definition on a test sequence; the best fixed "
                    "strategy in hindsight is compared with the strategies actually played")
        return None

    def gap():
        (d,) = probe_results(value, "duality_gap", 1)
        if not close_to(as_number(d, "duality_gap"), _gap(PROBE_A, PROBE_XBAR, PROBE_YBAR), 1e-6):
            return "`duality_gap` is not max_x x^T A ybar - min_y xbar^T A y on a test pair"
        return None

    g.item("no-regret learner", 2, learner)
    g.item("regrets", 1, regrets)
    g.item("duality gap", 1, gap)
    return g.items


def _grade_27_1_b(value):
    g = Grader(value)
    v = _game_value(BRACKET_A)

    def bracket():
        (b,) = probe_results(value, "value_bracket", 1)
        lower, upper = as_array(b, "value_bracket(A, T)", (2,))
        if not lower - 1e-7 <= v <= upper + 1e-7:
            return "the game's value must lie between your lower and upper bounds"
        return None

    def tight():
        (b,) = probe_results(value, "value_bracket", 1)
        lower, upper = as_array(b, "value_bracket(A, T)", (2,))
        if upper - lower > 0.05:
            return "after 2000 rounds the bracket should be narrower than 0.05"
        return None

    g.item("bracket holds the value", 1, bracket)
    g.item("bracket is narrow", 1, tight)
    return g.items


PARTS = [
    part_spec("27.1(a)", ["learn", "regrets", "duality_gap"], _grade_27_1_a, 4,
              {"learn": [(PROBE_A, 200)], "regrets": [(PROBE_A, PROBE_XS, PROBE_YS)],
               "duality_gap": [(PROBE_A, PROBE_XBAR, PROBE_YBAR)]}),
    part_spec("27.1(b)", ["value_bracket"], _grade_27_1_b, 2, {"value_bracket": [(BRACKET_A, 2000)]}),
]
