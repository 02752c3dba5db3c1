"""Hidden checks of exercise 6.1, deviation counts at an information set and the regrets of recorded play.

The exercise itself is labkit_instructor/exercises/ex6_1.py; chapter 6 (Hindsight rationality)
defines the types. The references are labkit's: the counts come from the regret tables EFR keeps
(`labkit.efr.deviation_structure`), tested against the formulas of the chapter's table, and the
regrets from `labkit.hindsight`, which applies every deviation to the recorded strategies and
evaluates it on the tree.
"""
from __future__ import annotations

import functools

import numpy as np

from labkit_instructor.checks.base import Grader, Lazy, Wrong, as_number, kind_of, part_spec, probe_results

TYPES = ("act", "act_in", "cf", "cf_in", "bps", "cfps", "csps", "tips", "bhv")
COUNT_PROBES = [("Js||cr|",), ("Jh|Ks|rrc|r",), ("Qs|Kh|cc|rr",), ("Ks|Jh|crc|crr",), ("Kh|Ks|crrc|cr",)]


def game(name):
    import labkit as lk
    return lk.games.load(name)


def reference_counts(key):
    """{type: number of regrets EFR keeps at the Leduc infoset `key`}."""
    from labkit.efr import deviation_structure
    leduc = game("leduc_poker")
    I = leduc.infoset_index(key)
    out = {}
    for name in TYPES:
        structure = deviation_structure(leduc, name)
        out[name] = int(structure.row_active[structure.row_infoset == I].sum())
    return out


def recorded_cfr(rounds):
    """The current strategies CFR plays on Kuhn poker in rounds 1..rounds."""
    import labkit as lk
    solver, played = lk.CFR(game("kuhn_poker")), []
    for _ in range(rounds):
        played.append(solver.current_policy().probs)
        solver.step()
    return played


def recorded_random(rounds, seed):
    legal = game("kuhn_poker").legal_mask
    rng = np.random.default_rng(seed)
    return [w / w.sum(axis=1, keepdims=True) for w in (rng.gamma(0.5, size=legal.shape) + 1e-3 for _ in range(rounds))]


def _recordings():
    return [recorded_cfr(25), recorded_random(15, 61)]


def _regret_probes():
    return [(rec, p) for rec in RECORDINGS for p in (0, 1)]


# computed when 6.1(b) is first graded, not at import (CFR's 25 rounds load labkit's kernels)
RECORDINGS = Lazy(_recordings)
REGRET_PROBES = Lazy(_regret_probes)


@functools.lru_cache(maxsize=None)
def reference_regrets(kind):
    from labkit import hindsight
    return [hindsight.deviation_regret(game("kuhn_poker"), rec, p, kind) for rec, p in REGRET_PROBES]


def _grade_a(value):
    g = Grader(value)

    def types(names):
        def test():
            results = probe_results(value, "count_deviations", len(COUNT_PROBES))
            for (key,), r in zip(COUNT_PROBES, results):
                if not isinstance(r, dict):
                    raise Wrong(f"`count_deviations(key)` should return a dict {{type: count}}, got {kind_of(r)}")
                expected = reference_counts(key)
                for name in names:
                    if name not in r:
                        return f"`count_deviations(key)` has no entry {name!r}"
                    if as_number(r[name], f"count_deviations(key)[{name!r}]") != expected[name]:
                        return (f"your count for {name!r} is wrong at a deeper information set: count the player's "
                                "decisions before it (d) and their numbers of actions (n_k)")
            return None
        return test

    g.item("action and counterfactual types", 1, types(("act", "act_in", "cf", "cf_in")))
    g.item("partial sequence and behavioral types", 1, types(("bps", "cfps", "csps", "tips", "bhv")))
    return g.items


def _grade_b(value):
    g = Grader(value)

    def regret(name, kind, other):
        def test():
            results = probe_results(value, name, len(REGRET_PROBES))
            got = [as_number(r, f"{name}(profiles, player)") for r in results]
            if all(abs(x - y) <= 1e-9 for x, y in zip(got, reference_regrets(kind))):
                return None
            if all(abs(x - y) <= 1e-9 for x, y in zip(got, reference_regrets(other))):
                return ("that is the regret for the other type: a blind action deviation follows the strategy "
                        "everywhere but at I; a blind counterfactual one plays straight to I")
            return ("the regret is the largest, over the type's deviations, of the summed payoff gains over the "
                    "rounds, each round's gain computed with that round's strategies of both players")
        return test

    g.item("blind action deviations", 1, regret("blind_action_regret", "act", "cf"))
    g.item("blind counterfactual deviations", 1, regret("blind_cf_regret", "cf", "act"))
    return g.items


PARTS = [
    part_spec("6.1(a)", ["count_deviations"], _grade_a, 2, {"count_deviations": COUNT_PROBES}),
    part_spec("6.1(b)", ["blind_action_regret", "blind_cf_regret"], _grade_b, 2,
              {"blind_action_regret": REGRET_PROBES, "blind_cf_regret": REGRET_PROBES}),
]
