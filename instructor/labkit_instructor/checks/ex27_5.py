"""Checks of exercise 27.5, averaging policies.

The exercise itself (text, answer and check cells) is labkit_instructor/exercises/ex27_5.py.
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import (Grader, Wrong, as_array, as_number, close_to, kind_of, part_spec,
    reported)


PLAYER1_KEYS = ("J|", "Q|", "K|", "J|pb", "Q|pb", "K|pb")
# two pure strategies of player 1 in Kuhn poker: always bet; always check, then always call
ALWAYS_BET = {k: [0.0, 1.0] if k.endswith("|") else [1.0, 0.0] for k in PLAYER1_KEYS}
CHECK_CALL = {k: [1.0, 0.0] if k.endswith("|") else [0.0, 1.0] for k in PLAYER1_KEYS}


def _kuhn_policy(table, name):
    import labkit as lk
    game = lk.games.load("kuhn_poker")
    if not isinstance(table, dict):
        raise Wrong(f"`{name}` should be a dict {{infoset key: [p_pass, p_bet]}}, got {kind_of(table)}")
    unknown = sorted(set(table) - set(game.infoset_keys))
    if unknown:
        raise Wrong(f"`{name}` has keys that are not Kuhn infosets: {unknown[:3]} (keys look like 'Q|pb')")
    rows = {}
    for key, row in table.items():
        if isinstance(row, dict):          # {"pass": p, "bet": q}, as TabularPolicy.to_dict() gives
            row = [row.get("pass", 0.0), row.get("bet", 0.0)]
        row = as_array(row, f"{name}[{key!r}]", (2,))
        if np.any(row < -1e-9) or abs(row.sum() - 1) > 1e-6:
            raise Wrong(f"`{name}[{key!r}]` is not a probability distribution")
        rows[key] = list(np.clip(row, 0, None) / np.clip(row, 0, None).sum())
    return lk.TabularPolicy.from_dict(game, rows)


def _nash_conv(table, name):
    import labkit as lk
    policy = _kuhn_policy(table, name)
    if len(table) != policy.game.num_infosets:
        raise Wrong(f"`{name}` should give a distribution at all {policy.game.num_infosets} infosets")
    return lk.nash_conv(policy.game, policy)


def _mixture_answers():
    """Player 1's own-reach-weighted average of ALWAYS_BET and CHECK_CALL, and the error in
    player 1's value (against a uniform player 2) of the plain, unweighted average."""
    import labkit as lk
    a, b = _kuhn_policy(ALWAYS_BET, "always bet"), _kuhn_policy(CHECK_CALL, "check-call")
    game = a.game
    weighted = lk.TabularPolicy.mixture([a, b])
    plain = lk.TabularPolicy(game, (a.probs + b.probs) / 2)
    true_value = (lk.expected_payoffs(game, a)[0] + lk.expected_payoffs(game, b)[0]) / 2
    return weighted, float(lk.expected_payoffs(game, plain)[0] - true_value)


def _grade_27_5_a(value):
    g = Grader(value)

    def correct():
        nc = _nash_conv(reported(value, "average_policy_cfr"), "average_policy_cfr")
        return None if nc < 0.03 else ("the NashConv of your CFR average after 1000 iterations is too high; "
                                       "check the regret update and the average's weights")

    def swapped():
        table = reported(value, "average_policy_swapped")
        nc = _nash_conv(table, "average_policy_swapped")
        if close_to(_kuhn_policy(table, "average_policy_swapped").probs, 0.5, 1e-3):
            return "that is the uniform policy, not the output of CFR with swapped weights"
        return None if nc > 0.2 else ("with the weightings swapped, the average should stay far from "
                                      "equilibrium; did you swap both weights?")

    g.item("CFR converges", 1, correct)
    g.item("swapped weights do not", 1, swapped)
    return g.items


def _grade_27_5_b(value):
    g = Grader(value)
    weighted, error = _mixture_answers()

    def average():
        policy = _kuhn_policy(reported(value, "mixture_policy"), "mixture_policy")
        keys = [k for k in PLAYER1_KEYS if k not in reported(value, "mixture_policy")]
        if keys:
            return f"`mixture_policy` should cover all of player 1's infosets (missing {keys[0]!r})"
        rows = [policy.game.infoset_index(k) for k in PLAYER1_KEYS]
        return None if close_to(policy.probs[rows], weighted.probs[rows], 1e-9) else \
            "weight each policy's action probabilities at an infoset by how often it reaches that infoset"

    def plain_error():
        e = as_number(reported(value, "plain_average_error"), "plain_average_error")
        return None if abs(e - error) < 1e-9 else \
            "value of the plain average minus the average of the two policies' values"

    g.item("reach-weighted average", 1, average)
    g.item("error of the plain average", 1, plain_error)
    return g.items


PARTS = [
    part_spec("27.5(a)", ["average_policy_cfr", "average_policy_swapped"], _grade_27_5_a, 2),
    part_spec("27.5(b)", ["mixture_policy", "plain_average_error"], _grade_27_5_b, 2),
]
