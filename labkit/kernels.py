"""The one switch between labkit's two implementations of its hot loops.

CFR, CFR+, DCFR and MCCFR each have a readable numpy/Python implementation (the one the book
explains) and, when the optional package numba is installed (``pip install "labkit-marl[fast]"``
or ``pip install numba``), a compiled kernel over the same arrays that performs the same
floating-point operations in the same order. The two give the same numbers bit for bit for the
same seed (tests/test_kernels.py); the compiled one is faster where numpy's per-call overhead
dominates (small games, sampled episodes)::

    import labkit as lk
    lk.kernels.backend()              # "numba" if numba is installed, else "numpy"
    lk.kernels.use("numpy")           # every solver made from now on uses numpy
    with lk.kernels.using("numpy"):   # ... or only inside this block
        solver = lk.CFRPlus("kuhn_poker")

The environment variable ``LABKIT_KERNELS=numpy`` sets the default before import. A solver
keeps the backend it was made with (its ``backend`` attribute).

What a process pays at start. Importing numba and loading its cached kernels costs about a
second of CPU, more than a chapter's whole table of small-game runs, so the compiled backend
loads numba only when a kernel needs it: CFR, CFR+ and DCFR run a C library of the same loops
(`labkit._native`, a few milliseconds to load) where a C compiler is available, and NashConv
evaluates a game with numpy until numpy has spent `labkit.evaluate.NUMPY_FIRST_SECONDS` on it
(or numba's pass is loaded already). Every path gives the same bits.

Compiling, once per installation. numba compiles a kernel the first time it runs (5 to 30 s of
CPU) and keeps the machine code in its cache, next to the source (``labkit/__pycache__``) or, where
that folder is read-only, in the user's cache folder (``NUMBA_CACHE_DIR`` chooses another). Every
later process loads it in a fraction of a second. `load` checks the cache before a kernel's first
call in a process and, when the kernel has to be compiled, says so on stderr first (and where
the result will be kept, or that nothing can be kept); ``python -m labkit compile`` compiles
every kernel ahead of time (``make venv`` runs it).
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["BACKENDS", "available", "backend", "use", "using", "load", "compile_all", "cache_state"]

BACKENDS = ("numpy", "numba")


def available() -> bool:
    """True if numba can be imported (the compiled kernels can run).

    Returns
    -------
    bool

    Examples
    --------
    >>> available() in (True, False)
    True
    """
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _default() -> str:
    wanted = os.environ.get("LABKIT_KERNELS", "").strip().lower()
    if wanted and wanted not in BACKENDS:
        raise ValueError(f"LABKIT_KERNELS must be one of {BACKENDS}, got {wanted!r}")
    if wanted == "numpy":
        return "numpy"
    if wanted == "numba" and not available():
        raise ValueError("LABKIT_KERNELS=numba, but numba is not installed (pip install numba)")
    # installed is enough here: importing numba costs most of a second, paid when a kernel needs it
    return "numba" if importlib.util.find_spec("numba") is not None else "numpy"


_current: str | None = None


def backend() -> str:
    """The backend new solvers will use: "numba" or "numpy".

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``LABKIT_KERNELS`` names an unknown backend, or numba while it is not installed.

    Examples
    --------
    >>> backend() in BACKENDS
    True
    """
    global _current
    if _current is None:
        _current = _default()
    return _current


def use(name: str) -> None:
    """Make new solvers use `name` ("numpy" or "numba").

    Parameters
    ----------
    name : {"numpy", "numba"}

    Raises
    ------
    ValueError
        For another name, or "numba" while numba is not installed.

    Examples
    --------
    >>> import labkit as lk
    >>> previous = backend()
    >>> use("numpy")
    >>> lk.CFR("kuhn_poker").backend
    'numpy'
    >>> use(previous)
    """
    global _current
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    if name == "numba" and not available():
        raise ValueError("the numba backend needs numba: pip install numba")
    _current = name


@contextlib.contextmanager
def using(name: str) -> Iterator[None]:
    """Context manager: `use(name)` inside the block, the previous backend after it.

    Parameters
    ----------
    name : {"numpy", "numba"}

    Yields
    ------
    None

    Examples
    --------
    >>> import labkit as lk
    >>> with using("numpy"):
    ...     solver = lk.MCCFR("kuhn_poker", seed=0)
    >>> solver.backend
    'numpy'
    """
    previous = backend()
    use(name)
    try:
        yield
    finally:
        use(previous)


def njit(function: Callable[..., Any] | None = None, inline: bool = False) -> Any:
    """numba.njit(cache=True) where a cache folder is writable, plain njit elsewhere (a
    read-only installation without a user cache folder); imported only when a kernel is first
    needed. ``inline=True`` for small helpers: numba then inlines them into their callers (a call
    of a separately compiled function passes every array as a struct, per call).

    Parameters
    ----------
    function : callable, optional
        The Python function (decorator use: ``@njit`` or ``@njit(inline=True)``).
    inline : bool

    Returns
    -------
    numba dispatcher
        (or a decorator, when `function` is None)

    Examples
    --------
    >>> @njit
    ... def add(a, b):
    ...     return a + b
    >>> add(2, 3)
    5
    """
    if function is None:
        return lambda f: njit(f, inline=inline)
    import numba
    options: dict[str, Any] = {"inline": "always"} if inline else {}
    try:
        return numba.njit(cache=True, **options)(function)
    except RuntimeError:                  # "no locator available": nowhere to write the cache
        return numba.njit(**options)(function)


# ----------------------------------------------------------------------------- compiling once
def cache_state(dispatcher: Any) -> tuple[str, str | None]:
    """Whether numba's on-disk cache holds a kernel for its current source.

    Parameters
    ----------
    dispatcher : numba dispatcher
        Made by `njit`.

    Returns
    -------
    (str, str or None)
        "warm" (compiled code for this source is cached), "cold" (it will be compiled, then
        cached), "none" (no cache folder is writable: it will be compiled in every process) or
        "unknown"; and the cache folder.

    Examples
    --------
    >>> import labkit as lk
    >>> if lk.kernels.available():
    ...     state, folder = cache_state(njit(lambda x: x))     # a lambda has no source file
    ... else:
    ...     state = "none"
    >>> state
    'none'
    """
    cache: Any = getattr(dispatcher, "_cache", None)
    folder = getattr(cache, "cache_path", None)
    if folder is None:
        return "none", None
    try:
        index = cache._cache_file._load_index()
    except Exception:                     # another numba: the layout of its cache may differ
        return "unknown", folder
    return ("warm" if index else "cold"), folder


class _FirstCall:
    """A kernel that checks the cache before its first call in this process and, if it is about
    to be compiled, says so on stderr (compiling takes seconds, loading a fraction of one). After
    that first call it puts the plain dispatcher in its place on `owner`, so later calls cost
    nothing extra."""

    def __init__(self, dispatcher: Any, module: str, owner: Any, name: str):
        self.dispatcher = dispatcher
        self.module = module
        self.owner = owner
        self.__name__ = name
        self.__doc__ = getattr(dispatcher, "__doc__", None)
        self._done = False
        self._holders: list[tuple[weakref.ref[Any], str]] = []     # objects to re-point (`bind`)

    def __call__(self, *args: Any) -> Any:
        if self._done:                    # a caller that kept this object rather than the attribute
            return self.dispatcher(*args)
        state, folder = cache_state(self.dispatcher)
        start = time.process_time()
        if state in ("cold", "none"):
            where = (f"once for this installation; cached in {folder}" if state == "cold" else
                     "for this process only: no writable folder for numba's cache (set NUMBA_CACHE_DIR to one, "
                     "or LABKIT_KERNELS=numpy to use the numpy code)")
            print(f"labkit: compiling the kernel {self.module}.{self.__name__} with numba ({where}); "
                  "this takes a few seconds", file=sys.stderr, flush=True)
        result = self.dispatcher(*args)
        self._done = True
        setattr(self.owner, self.__name__, self.dispatcher)
        for ref, attribute in self._holders:     # solvers made before this call: the plain dispatcher too
            holder = ref()
            if holder is not None and holder.__dict__.get(attribute) is self:
                setattr(holder, attribute, self.dispatcher)
        self._holders.clear()
        if state in ("cold", "none"):
            print(f"labkit: compiled in {time.process_time() - start:.1f} s of CPU", file=sys.stderr, flush=True)
        return result


class _KernelModule:
    """A kernel module whose public dispatchers announce their compilation (`_FirstCall`); the
    private ones, called from inside other kernels, stay plain dispatchers."""

    def __init__(self, module: Any):
        self._module = module
        for name, value in vars(module).items():
            if not name.startswith("_") and hasattr(value, "py_func"):
                setattr(self, name, _FirstCall(value, module.__name__, self, name))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def bind(holder: Any, attribute: str, kernel: Any) -> None:
    """Set ``holder.attribute = kernel``, so that it holds the plain dispatcher once compiled.

    A kernel of `load` that has not run yet in this process is a wrapper that announces its
    compilation at its first call; calling it through the wrapper afterwards costs a Python call
    more each time (a tenth of a microsecond's kernel on Kuhn poker runs 10-15% slower). `bind`
    registers the holder, so that the first call replaces the wrapper there with the dispatcher.

    Parameters
    ----------
    holder : object
        An object with a ``__dict__`` that can be weakly referenced (a solver), held by weak
        reference.
    attribute : str
    kernel : callable
        A kernel from `load` (or any callable: then a plain assignment).

    Examples
    --------
    >>> import types
    >>> holder = types.SimpleNamespace()
    >>> bind(holder, "kernel", len)
    >>> holder.kernel([1, 2])
    2
    """
    setattr(holder, attribute, kernel)
    if isinstance(kernel, _FirstCall) and not kernel._done:
        kernel._holders.append((weakref.ref(holder), attribute))


_LOADED: dict[str, _KernelModule] = {}
KERNEL_MODULES = ("labkit._cfr_kernels", "labkit._mccfr_kernels", "labkit._evaluate_kernels")


def load(module: str) -> Any:
    """Import a kernel module; its kernels tell on stderr when their first call has to compile.

    Parameters
    ----------
    module : str
        E.g. "labkit._cfr_kernels" (`KERNEL_MODULES`).

    Returns
    -------
    module-like object
        Its public kernels, wrapped; everything else as in the module.

    Examples
    --------
    >>> import labkit as lk
    >>> kernels = load("labkit._cfr_kernels") if lk.kernels.available() else None
    >>> kernels is None or callable(kernels.iterations)
    True
    """
    loaded = _LOADED.get(module)
    if loaded is None:
        loaded = _LOADED[module] = _KernelModule(importlib.import_module(module))
    return loaded


def compile_all() -> dict[str, str]:
    """Compile (or load from the cache) every kernel, by running each solver once on Kuhn poker.

    ``python -m labkit compile`` calls it; after it, no notebook on this installation waits for
    numba. It also builds CFR's C library (`labkit._native`), which the compiled backend prefers
    to numba's CFR kernel.

    Returns
    -------
    dict
        {kernel: cache state before compiling ("warm", "cold", "none" or "unknown")}.

    Raises
    ------
    ValueError
        If numba is not installed.

    Examples
    --------
    >>> import labkit as lk
    >>> states = compile_all() if lk.kernels.available() else {}
    >>> sorted(states)[:1] in ([], ["labkit._cfr_kernels.iterations"])
    True
    """
    if not available():
        raise ValueError("numba is not installed, so there is nothing to compile (pip install numba)")
    states = {}
    for name in KERNEL_MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if not attr.startswith("_") and hasattr(value, "py_func"):
                states[f"{name}.{attr}"] = cache_state(value)[0]
    from labkit import _native, evaluate
    from labkit.cfr import CFR
    from labkit.mccfr import MCCFR
    from labkit.policy import uniform_policy
    threshold = evaluate.NUMPY_FIRST_SECONDS
    evaluate.NUMPY_FIRST_SECONDS = 0.0                   # the compiled pass from the first evaluation
    try:
        with using("numba"):
            evaluate.nash_conv("kuhn_poker", uniform_policy("kuhn_poker"))   # C's extension where it builds
    finally:
        evaluate.NUMPY_FIRST_SECONDS = threshold
    from labkit.games import load
    kuhn = load("kuhn_poker")                            # numba's pass, for where C is not available
    evaluate._numba_nash_conv(kuhn, evaluate._compiled_plan(kuhn), uniform_policy(kuhn).probs)
    _native.cfr_iterations()                             # CFR's C library (`labkit._native`), built once
    with using("numba"), _native.turned_off():          # numba's CFR kernel, for where C cannot be built
        CFR("kuhn_poker").run(1)
    with using("numba"):
        for sampling in ("outcome", "external"):
            MCCFR("kuhn_poker", sampling=sampling, seed=0).run(1)
    return states
