"""Public checks of exercise 5.1 (meta-game and double oracle): shapes, probability vectors, the
form of the returned run. No expected value."""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, kind_of, probe_results

UNIFORM = np.full((12, 2), 0.5)
ALWAYS_BET = np.tile([0.0, 1.0], (12, 1))
ALWAYS_PASS = np.tile([1.0, 0.0], (12, 1))


def _meta_game(value):
    as_array(probe_results(value, "meta_game", 1)[0], "meta_game(...)", (2, 1))


def _run(value):
    r = probe_results(value, "double_oracle", 1)[0]
    if not isinstance(r, dict):
        raise Wrong(f"`double_oracle(start)` should return a dict, got {kind_of(r)}")
    for key in ("policy", "population_1", "population_2", "meta_strategies"):
        if key not in r:
            raise Wrong(f"`double_oracle(start)` should return the entry {key!r}")
    policy = as_array(r["policy"], "policy", (12, 2))
    if np.any(policy < -1e-9) or np.any(np.abs(policy.sum(axis=1) - 1) > 1e-6):
        raise Wrong("every row of the returned policy should be a probability distribution")
    sizes = [len(r["population_1"]), len(r["population_2"])] if isinstance(r["population_1"], list) \
        and isinstance(r["population_2"], list) else None
    sigma = r["meta_strategies"]
    if sizes is None or not isinstance(sigma, list) or len(sigma) != 2:
        raise Wrong("return the two populations as lists and the two meta-strategies")
    for s, k in zip(sigma, sizes):
        s = as_array(s, "meta_strategies[i]", (k,))
        if np.any(s < -1e-9) or abs(s.sum() - 1) > 1e-6:
            raise Wrong("each meta-strategy should be a probability vector over its population")


PARTS = [
    public_part("5.1(a)", ["meta_game"], 2,
                lambda value: FormatChecks(value).item("meta_game gives a (K1, K2) matrix", lambda: _meta_game(value)),
                {"meta_game": [([ALWAYS_BET, ALWAYS_PASS], [ALWAYS_BET])]}),
    public_part("5.1(b)", ["double_oracle"], 2,
                lambda value: FormatChecks(value).item("double_oracle returns its populations, meta-strategies "
                                                       "and mixture", lambda: _run(value)),
                {"double_oracle": [(UNIFORM,)]}),
]
