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
from collections.abc import Iterable
from typing import Any, cast

FRESH_KEY = "__fresh__"
GAMMA_SHAPE = 0.7          # < 1: many rows near a pure strategy, some near uniform


def marker(kind: str) -> dict[str, str]:
    """The placeholder of one fresh argument of a probe (a kind of `KINDS`).

    Parameters
    ----------
    kind : str
        E.g. "leduc_policy".

    Returns
    -------
    dict
        ``{"__fresh__": kind}``.

    Raises
    ------
    ValueError
        For an unknown kind.

    Examples
    --------
    >>> marker("leduc_policy")
    {'__fresh__': 'leduc_policy'}
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind of fresh input {kind!r}; the kinds are {', '.join(KINDS)}")
    return {FRESH_KEY: kind}


def kind_of(arg: Any) -> str | None:
    """The kind of a marker, or None for an ordinary argument.

    Parameters
    ----------
    arg : object

    Returns
    -------
    str or None

    Examples
    --------
    >>> kind_of(marker("leduc_policy")), kind_of({"a": 1})
    ('leduc_policy', None)
    """
    if isinstance(arg, dict) and len(arg) == 1 and isinstance(arg.get(FRESH_KEY), str):
        return arg[FRESH_KEY]
    return None


def has_marker(args: Iterable[Any]) -> bool:
    """Whether some argument of a probe is a marker.

    Parameters
    ----------
    args : iterable

    Returns
    -------
    bool

    Examples
    --------
    >>> has_marker((marker("leduc_policy"), 3)), has_marker((1, 2))
    (True, False)
    """
    return any(kind_of(a) is not None for a in args)


def seed_for(secret: bytes, part: str, name: str, probe: int, run: int) -> int:
    """A 63-bit seed: HMAC-SHA256 of "part|name|probe|run" keyed by the kernel's secret, its first
    8 bytes as a big-endian integer shifted right by one.

    Parameters
    ----------
    secret : bytes
    part, name : str
    probe, run : int
        The probe's index and the run's (a slow call runs again with another input).

    Returns
    -------
    int
        In [0, 2**63).

    Examples
    --------
    >>> seed_for(b"secret", "27.4(a)", "f", 0, 0)
    6333277390032054940
    >>> seed_for(b"secret", "27.4(a)", "f", 0, 1) != seed_for(b"secret", "27.4(a)", "f", 0, 0)
    True
    """
    digest = hmac.new(secret, f"{part}|{name}|{probe}|{run}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def realize(args: Iterable[Any], seed: int) -> tuple[Any, ...]:
    """The arguments with every marker replaced by its value drawn from `seed`.

    Parameters
    ----------
    args : iterable
    seed : int

    Returns
    -------
    tuple

    Examples
    --------
    >>> policy, other = realize((marker("leduc_policy"), 3), seed=7)
    >>> policy.shape, other
    ((936, 3), 3)
    """
    return tuple(draw(cast(str, kind_of(a)), seed) if kind_of(a) is not None else a for a in args)


def draw(kind: str, seed: int) -> Any:
    """The value of a fresh argument: the same in the kernel and in the grader for one seed.

    Parameters
    ----------
    kind : str
        A kind of `KINDS`.
    seed : int

    Returns
    -------
    object

    Raises
    ------
    ValueError
        For an unknown kind.

    Examples
    --------
    >>> import numpy as np
    >>> np.array_equal(draw("leduc_policy", 7), realize([marker("leduc_policy")], 7)[0])
    True
    """
    try:
        make = KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown kind of fresh input {kind!r}; the kinds are {', '.join(KINDS)}") from None
    return make(int(seed))


@functools.lru_cache(maxsize=1)
def _leduc_legal():
    import labkit as lk
    return lk.games.load("leduc_poker").legal_mask


def leduc_policy(seed: int) -> Any:
    r"""A joint policy on Leduc hold'em, (936, 3): at every infoset, weights
    :math:`w_a \sim \mathrm{Gamma}(k)` (shape `GAMMA_SHAPE`) on the legal actions, normalized,
    :math:`\pi(a \mid I) = w_a / \sum_b w_b`.

    Parameters
    ----------
    seed : int

    Returns
    -------
    (936, 3) numpy.ndarray

    Examples
    --------
    >>> policy = leduc_policy(7)
    >>> policy.shape, bool(abs(policy.sum(axis=1) - 1).max() < 1e-12)
    ((936, 3), True)
    """
    import numpy as np
    legal = _leduc_legal()
    weights = np.random.default_rng(seed).gamma(GAMMA_SHAPE, size=legal.shape) * legal
    weights[legal & (weights.sum(axis=1, keepdims=True) == 0)] = 1.0     # an all-zero row (never seen)
    return weights / weights.sum(axis=1, keepdims=True)


KINDS = {"leduc_policy": leduc_policy}
