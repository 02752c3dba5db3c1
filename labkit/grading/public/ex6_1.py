"""Public checks of exercise 6.1 (deviation counts and regrets): whole numbers for every type, and
regrets that cannot be negative when the same strategies are played every round. No expected value."""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_number, kind_of, probe_results

TYPES = ("act", "act_in", "cf", "cf_in", "bps", "cfps", "csps", "tips", "bhv")
REPEATED = [np.full((12, 2), 0.5)] * 3


def _counts(value):
    r = probe_results(value, "count_deviations", 1)[0]
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
                                                       lambda: _counts(value)),
                {"count_deviations": [("Ks|||",)]}),
    public_part("6.1(b)", ["blind_action_regret", "blind_cf_regret"], 2,
                lambda value: FormatChecks(value).item("both regrets are numbers, >= 0 for repeated play",
                                                       lambda: _regrets(value)),
                {"blind_action_regret": [(REPEATED, 0)], "blind_cf_regret": [(REPEATED, 1)]}),
]
