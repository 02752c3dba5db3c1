"""Fresh probe inputs: arguments a timed call has never seen, so that its time is the time of its work.

A hidden check that grades speed puts a *marker* among a probe's arguments, ``marker("leduc_policy")``.
The kernel's reporter replaces it, call by call, with a value drawn from a seed that it derives
from its secret (`seed_for`: an HMAC of the part, the name, the probe and the run), and reports the
seed beside the result. A cache filled earlier, a result computed in another cell or by a
background thread cannot hold the answer, since nobody knew the input before the call. The grader
draws the same value from the reported seed (`draw`) and checks the result with labkit.

The marker is plain JSON (``{"__fresh__": kind}``), so it travels with the probes
(`labkit.grading.wire`) unchanged.
"""
from __future__ import annotations

import functools
import hashlib
import hmac

FRESH_KEY = "__fresh__"
GAMMA_SHAPE = 0.7          # < 1: many rows near a pure strategy, some near uniform


def marker(kind):
    """The placeholder of one fresh argument of a probe (a kind of `KINDS`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of fresh input {kind!r}; the kinds are {', '.join(KINDS)}")
    return {FRESH_KEY: kind}


def kind_of(arg):
    """The kind of a marker, or None for an ordinary argument."""
    if isinstance(arg, dict) and len(arg) == 1 and isinstance(arg.get(FRESH_KEY), str):
        return arg[FRESH_KEY]
    return None


def has_marker(args):
    return any(kind_of(a) is not None for a in args)


def seed_for(secret, part, name, probe, run):
    """A 63-bit seed: HMAC-SHA256 of "part|name|probe|run" keyed by the kernel's secret (bytes)."""
    digest = hmac.new(secret, f"{part}|{name}|{probe}|{run}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def realize(args, seed):
    """The arguments with every marker replaced by its value drawn from `seed`."""
    return tuple(draw(kind_of(a), seed) if kind_of(a) is not None else a for a in args)


def draw(kind, seed):
    """The value of a fresh argument: the same in the kernel and in the grader for one seed."""
    try:
        make = KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown kind of fresh input {kind!r}; the kinds are {', '.join(KINDS)}") from None
    return make(int(seed))


@functools.lru_cache(maxsize=1)
def _leduc_legal():
    import labkit as lk
    return lk.games.load("leduc_poker").legal_mask


def leduc_policy(seed):
    """A joint policy on Leduc hold'em, (936, 3): at every infoset, weights drawn from a gamma
    distribution (shape `GAMMA_SHAPE`) on the legal actions, normalized."""
    import numpy as np
    legal = _leduc_legal()
    weights = np.random.default_rng(seed).gamma(GAMMA_SHAPE, size=legal.shape) * legal
    weights[legal & (weights.sum(axis=1, keepdims=True) == 0)] = 1.0     # an all-zero row (never seen)
    return weights / weights.sum(axis=1, keepdims=True)


KINDS = {"leduc_policy": leduc_policy}
