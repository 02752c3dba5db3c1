"""Hidden checks of exercise 4.1, the sampled counterfactual values of outcome sampling on Kuhn poker.

The exercise itself is labkit_instructor/exercises/ex4_1.py; chapter 4 (Scaling up) defines the
estimator. The reference estimator below is tested against labkit's MCCFR (the regrets it implies
equal `MCCFR.sampled_regrets` fed the same numbers) and, by enumerating every terminal history
with its sampling probability, shown to have the exact counterfactual values as its expectation.
"""
from __future__ import annotations

import functools

import numpy as np

from labkit_instructor.checks import sampling
from labkit_instructor.checks.base import Grader, Lazy, as_array, part_spec, probe_results

EXPLORATION = 0.6
MEAN_STREAMS = 3000
STREAM_LENGTH = 6                        # Kuhn: two deals and at most three decisions


def kuhn():
    import labkit as lk
    return lk.games.load("kuhn_poker")


def random_policy(seed, concentration=0.5):
    legal = kuhn().legal_mask
    weights = np.random.default_rng(seed).gamma(concentration, size=legal.shape) * legal + 1e-3 * legal
    return weights / weights.sum(axis=1, keepdims=True)


def stream(seed, length=STREAM_LENGTH):
    """Uniform numbers in [0, 1), rounded to 6 digits (shorter on their way into the kernel)."""
    return np.round(np.random.default_rng(seed).random(length), 6).tolist()


def shortened(policy, decimals=10):
    """Rounded to `decimals`, each row's largest entry reset so that the row sums to 1."""
    p = np.round(policy, decimals)
    rows, top = np.arange(len(p)), p.argmax(axis=1)
    p[rows, top] = 0.0
    p[rows, top] = 1.0 - p.sum(axis=1)
    return p


def _policies():
    return [shortened(random_policy(41)), shortened(random_policy(42))]


def _exact_probes():
    return [(POLICIES[0], 0, stream(4100 + k), EXPLORATION) for k in range(4)] + \
           [(POLICIES[1], 1, stream(4110 + k), EXPLORATION) for k in range(4)] + \
           [(POLICIES[0], 1, stream(4120), 0.3), (POLICIES[1], 0, stream(4121), 1.0)]


def _mean_probes():
    return [(POLICIES[0], 0, [stream(seed) for seed in range(10_000, 10_000 + MEAN_STREAMS)], EXPLORATION),
            (POLICIES[1], 1, [stream(seed) for seed in range(20_000, 20_000 + MEAN_STREAMS)], 0.3)]


# computed when 4.1 is first graded, not at import (6,000 streams of random numbers)
POLICIES = Lazy(_policies)
EXACT_PROBES = Lazy(_exact_probes)
MEAN_PROBES = Lazy(_mean_probes)


def sampled_values(policy, player, uniforms, exploration=EXPLORATION, importance=True):
    """(I, A) sampled counterfactual action values of one outcome-sampling episode on Kuhn poker
    (`labkit_instructor.checks.sampling.sampled_values`; importance=False leaves the weights out)."""
    return sampling.sampled_values(kuhn(), policy, player, uniforms, exploration, importance)


def exact_values(policy, player):
    """The exact counterfactual action values at `player`'s infosets (0 elsewhere)."""
    import labkit as lk
    q = lk.counterfactual_values(kuhn(), policy)
    q[kuhn().infoset_player != player] = 0.0
    return q


@functools.lru_cache(maxsize=1)
def _references():
    return ([sampled_values(*args) for args in EXACT_PROBES],
            [sampled_values(*args, importance=False) for args in EXACT_PROBES])


@functools.lru_cache(maxsize=1)
def _standard_errors():
    """Per probe: the standard error of the mean estimate, entry by entry, from the reference."""
    errors = []
    for policy, player, streams, eps in MEAN_PROBES:
        samples = np.array([sampled_values(policy, player, u, eps) for u in streams])
        errors.append(samples.std(axis=0, ddof=1) / np.sqrt(len(streams)))
    return errors


def _grade_a(value):
    g = Grader(value)
    exact, plain = _references()
    shape = kuhn().legal_mask.shape

    def on(indices):
        def test():
            results = probe_results(value, "sampled_cf_values", len(EXACT_PROBES))
            got = {k: as_array(results[k], "sampled_cf_values(...)", shape) for k in indices}
            if all(np.allclose(got[k], exact[k], rtol=1e-9, atol=1e-12) for k in indices):
                return None
            if all(np.allclose(got[k], plain[k], rtol=1e-9, atol=1e-12) for k in indices):
                return ("your values leave out the importance weights: divide by the probability q(h) of having "
                        "sampled the history and by s(a*) for the sampled action")
            return ("with the grader's random numbers your values differ from the estimator's: one number per node on "
                    "the path, in order; the sampled action's value divided by s(a*), the others 0")
        return test

    g.item("episodes at the default exploration", 1, on(range(8)))
    g.item("other explorations", 1, on(range(8, len(EXACT_PROBES))))
    return g.items


def _grade_b(value):
    g = Grader(value)

    def unbiased():
        results = probe_results(value, "mean_sampled_cf_values", len(MEAN_PROBES))
        for r, (policy, player, _, _), se in zip(results, MEAN_PROBES, _standard_errors()):
            mean = as_array(r, "mean_sampled_cf_values(...)", kuhn().legal_mask.shape)
            exact = exact_values(policy, player)
            spread = se > 0                      # entries some episode changes
            if np.max(np.abs(mean - exact)[spread] / se[spread]) > 4.5:
                return ("over the grader's episodes your mean is more than 4.5 standard errors from the exact "
                        "counterfactual values somewhere: the estimator is biased")
        return None

    g.item("the mean over many episodes is the exact value", 1, unbiased)
    return g.items


PARTS = [
    part_spec("4.1(a)", ["sampled_cf_values"], _grade_a, 2, {"sampled_cf_values": EXACT_PROBES}),
    part_spec("4.1(b)", ["mean_sampled_cf_values"], _grade_b, 1, {"mean_sampled_cf_values": MEAN_PROBES}),
]
