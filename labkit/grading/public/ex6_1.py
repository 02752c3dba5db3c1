"""Public checks of exercise 6.1 (deviation counts and regrets): whole numbers for every type,
regrets that cannot be negative when the same strategies are played every round, and the values of
public cases (the grader's infosets and recorded plays are other ones).

At a player's first decision ("Ks|||": call or raise) nothing came before, so every type keeps the
2 swaps of one legal action for the other. The counts at "Qh||cr|" and the two regrets of three
rounds of uniform play are small numbers from labkit's deviation structures and hindsight module
(the course's tests recompute them there).
"""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_number, expect, kind_of, probe_results

TYPES = ("act", "act_in", "cf", "cf_in", "bps", "cfps", "csps", "tips", "bhv")
REPEATED = [np.full((12, 2), 0.5)] * 3
COUNT_KEYS = [("Ks|||",), ("Qh||cr|",)]
COUNTS = [dict.fromkeys(TYPES, 2),
          {"act": 3, "act_in": 6, "cf": 3, "cf_in": 6, "bps": 6, "cfps": 12, "csps": 12, "tips": 18, "bhv": 12}]
UNIFORM_REGRETS = {"blind_action_regret": 0.375, "blind_cf_regret": 0.75}     # three rounds of uniform play


def _count_cases(value):
    for (key,), got, want in zip(COUNT_KEYS, probe_results(value, "count_deviations", len(COUNT_KEYS)),
                                   COUNTS, strict=False):
        for name in TYPES:
            expect(as_number(got[name], name), want[name], f"count_deviations({key!r})[{name!r}]",
                   "count the deviations of that type that end at this information set, one regret each")


def _regret_cases(value):
    for name, want in UNIFORM_REGRETS.items():
        expect(as_number(probe_results(value, name, 1)[0], name), want, f"{name}(three rounds of uniform play, ...)",
               "the regret is the best blind deviation's gain over the rounds played, added up over the rounds")


def _counts(value):
    r = probe_results(value, "count_deviations", len(COUNT_KEYS))[0]
    if not isinstance(r, dict):
        raise Wrong(f"`count_deviations(key)` should return a dict {{type: count}}, got {kind_of(r)}")
    for name in TYPES:
        if name not in r:
            raise Wrong(f"`count_deviations(key)` has no entry {name!r}")
        v = as_number(r[name], f"count_deviations(key)[{name!r}]")
        if v < 1 or not v.is_integer():
            raise Wrong(f"`count_deviations(key)[{name!r}]` should be a positive whole number")


def _regrets(value):
    for name in ("blind_action_regret", "blind_cf_regret"):
        if as_number(probe_results(value, name, 1)[0], f"{name}(profiles, player)") < -1e-9:
            raise Wrong(f"with the same strategies in every round, `{name}` cannot be negative: some action at "
                        "the first decision does at least as well as the strategy's mixture")


PARTS = [
    public_part("6.1(a)", ["count_deviations"], 2,
                lambda value: FormatChecks(value).item("count_deviations gives a whole number per type",
                                                       lambda: _counts(value))
                .item("the counts at two public information sets", lambda: _count_cases(value)),
                {"count_deviations": COUNT_KEYS}),
    public_part("6.1(b)", ["blind_action_regret", "blind_cf_regret"], 2,
                lambda value: FormatChecks(value).item("both regrets are numbers, >= 0 for repeated play",
                                                       lambda: _regrets(value))
                .item("the regrets of three rounds of uniform play", lambda: _regret_cases(value)),
                {"blind_action_regret": [(REPEATED, 0)], "blind_cf_regret": [(REPEATED, 1)]}),
]
