"""Everything a hidden check imports, from one place.

The generic readers and results live in the student package (`labkit.grading.checking`, which
holds no expected value); the game data the reference computations share (the biased
rock-paper-scissors game of exercises 27.2 and 27.3 and its equilibrium) live here.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Sequence

import numpy as np

from labkit.grading.checking import (ACTIONS3, RPS, Grader, Item, PartResult, PartSpec, Wrong, as_action,  # noqa: F401
                                     as_array, as_distribution, as_number, as_pair, close_to, kind_of, part_spec,
                                     probe_results, reported)


def kl_divergence(p, q):
    """KL(p || q) = sum_i p_i log(p_i / q_i) over the support of p."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


BIASED_RPS = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-2.0, 1.0, 0.0]])
RPS_EQUILIBRIUM = np.array([0.25, 0.5, 0.25])


def computed_once(function):
    """`functools.lru_cache`, with each value computed once even when the grader's threads ask
    for it at the same time: lru_cache alone lets every thread that finds the value missing
    compute it (a reference run of several CPU seconds, twice). One lock per argument list, so
    that a thread waits only for the value it needs."""
    cached = functools.lru_cache(maxsize=None)(function)
    guard, locks = threading.Lock(), {}

    @functools.wraps(function)
    def once(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        with guard:
            lock = locks.setdefault(key, threading.Lock())
        with lock:
            return cached(*args, **kwargs)

    once.cache_clear = cached.cache_clear
    return once


class Lazy(Sequence):
    """A list of probe arguments computed on first use and then kept.

    Some probes come out of a computation (a solver's run, thousands of random streams); made
    lazy, they cost nothing when the material is imported -- which every grader, test and
    notebook export does -- and are computed once, by the first grading that needs them (one
    thread at a time: the grader grades in threads). The values are the same either way.
    """

    def __init__(self, compute):
        self._compute, self._items, self._lock = compute, None, threading.Lock()

    def _get(self):
        if self._items is None:
            with self._lock:
                if self._items is None:
                    self._items = list(self._compute())
        return self._items

    def __getitem__(self, k):
        return self._get()[k]

    def __len__(self):
        return len(self._get())

    def __iter__(self):
        return iter(self._get())

    def __add__(self, other):
        return list(self) + list(other)

    def __reduce__(self):            # pickled as the list it stands for
        return (list, (self._get(),))

    def __repr__(self):
        return f"Lazy({self._compute.__name__}, computed={self._items is not None})"
