"""CFR's compiled iterations as a small C library (``_cfr_kernel.c``), built once, loaded with ctypes.

The compiled backend (`labkit.kernels`) runs CFR, CFR+ and DCFR through this library where a C
compiler is available, and through numba's kernel (`labkit._cfr_kernels`) elsewhere: the two are
the same loops over the same arrays, with the same floating-point operations in the same order,
so all three backends give the same bits (tests/test_kernels.py). The reason for C is start-up:
importing numba and loading its cached kernels costs about a second of CPU per process, loading
this library a few milliseconds, and a chapter's whole CFR table runs in less.

The library is compiled at the first use on an installation (a fraction of a second; ``python -m
labkit compile`` does it ahead of time) with ``-O2 -ffp-contract=off`` (no fused multiply-add,
which would round once where numpy rounds twice) and cached under ``$LABKIT_CACHE_DIR`` (else
``$XDG_CACHE_HOME/labkit`` or ``~/.cache/labkit``; a temporary folder where those are not
writable), its name carrying a hash of the source, the compiler and the flags.
``LABKIT_NATIVE=0`` turns it off (numba's kernel is then used), and with it the C NashConv of
`labkit._nash_conv_native`.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import sys
import time
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import numpy as np

from labkit._library_cache import home_folder, library_folder

SOURCE = Path(__file__).with_name("_cfr_kernel.c")
FLAGS = ["-O2", "-shared", "-fPIC", "-ffp-contract=off", "-fno-fast-math"]

# the packed layout both kernels read (`pack`); `mode`'s bits
INDEX_PARTS = ("parent_ext", "term_start", "term_target", "term_off", "term_others", "dec_start", "dec_off",
               "dec_others", "rows", "row_level")
FLOAT_PARTS = ("term_payoff", "dec_chance", "payoff_bound", "legal", "uniform")
ALTERNATING, DISCOUNT, RM_PLUS = 1, 2, 4

_function: Any = None
_failed: str | None = None           # why the library is not available in this process


def _compiler() -> str | None:
    import shutil
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None



def build(source: Path = SOURCE, flags: list[str] = FLAGS, stem: str = "labkit_cfr_kernel",
          suffix: str = ".so") -> Path:
    """The path of the compiled library, compiling it first if it is not cached.

    By default CFR's library; `labkit._nash_conv_native` builds its extension module with the
    same function (its own source, flags, name and suffix). Raises RuntimeError (no compiler, or a
    failed compilation, quoted) or OSError."""
    import hashlib       # here, not at the top: `import labkit` stays cheap
    compiler = _compiler()
    if compiler is None:
        raise RuntimeError("no C compiler (set CC, or install gcc)")
    key = hashlib.sha256(source.read_bytes() + compiler.encode() + " ".join(flags).encode()).hexdigest()[:16]
    name = f"{stem}_{key}{suffix}"
    # the user's own cache, else a private folder (labkit._library_cache: a library is loaded and
    # run, so never from a folder another user could write to)
    target = home_folder() / name
    if target.is_file():
        return target
    target = library_folder() / name
    if target.is_file():
        return target
    import subprocess    # only to compile: their imports cost more than loading a cached library
    import tempfile
    start = time.perf_counter()
    # built beside the target and renamed: concurrent first uses never see half a file
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        partial = Path(scratch) / name
        command = [compiler, *flags, str(source), "-o", str(partial)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"compiling {source.name} failed:\n{' '.join(command)}\n{done.stderr[-2000:]}")
        os.replace(partial, target)
    if time.perf_counter() - start > 1.0:
        print(f"labkit: compiled {source.name} in {time.perf_counter() - start:.1f} s (once for this "
              f"installation; cached in {target.parent})", file=sys.stderr, flush=True)
    return target


_off = False                          # `turned_off`


def enabled() -> bool:
    """False when the environment sets ``LABKIT_NATIVE=0``, or inside `turned_off`."""
    return not _off and os.environ.get("LABKIT_NATIVE", "").strip() != "0"


@contextlib.contextmanager
def turned_off() -> Iterator[None]:
    """Solvers made inside the block use numba's kernel (the tests compare both with numpy)."""
    global _off
    previous, _off = _off, True
    try:
        yield
    finally:
        _off = previous


def cfr_iterations() -> Any:
    """The C function, or None where it cannot be built or loaded (or ``LABKIT_NATIVE=0``)."""
    global _function, _failed
    if not enabled():
        return None
    if _function is None and _failed is None:
        import ctypes
        try:
            function = ctypes.CDLL(str(build())).labkit_cfr_iterations
        except (OSError, RuntimeError) as err:
            _failed = str(err)
            return None
        long, pointer = ctypes.c_long, ctypes.c_void_p
        function.argtypes = [long, long, pointer, long, long, pointer, pointer, pointer, pointer, pointer,
                             pointer, pointer, ctypes.c_double]
        function.restype = None
        _function = function
    return _function


def pack(parts: dict[str, Any], names: tuple[str, ...], dtype: Any) -> np.ndarray:
    """One array: len(names) + 1 offsets (counted from the start of the array), then the parts."""
    arrays = [np.asarray(parts[name]).reshape(-1) for name in names]
    offsets = np.array(list(itertools.accumulate([len(a) for a in arrays], initial=len(names) + 1)))
    packed = np.concatenate([offsets] + arrays)
    if dtype == np.int32 and len(packed) and (packed.max() >= 2 ** 31 or packed.min() < -2 ** 31):
        raise ValueError("this game is too large for the compiled CFR kernel's int32 indices")
    return packed.astype(dtype)


def _address(array: np.ndarray, dtype: Any, shape: tuple[int, ...] | None = None) -> int:
    """The data pointer of a C-contiguous array of `dtype` (and `shape`)."""
    if array.dtype != dtype or not array.flags.c_contiguous or (shape is not None and array.shape != shape):
        raise ValueError(f"the compiled CFR kernel needs C-contiguous {np.dtype(dtype)} arrays of shape {shape}, "
                         f"got {array.dtype} {array.shape}")
    return int(array.__array_interface__["data"][0])


class CfrIterations:
    """A callable with the signature of `labkit._cfr_kernels.iterations`, running the C library.

    The arrays' dtype, shape and layout are checked when the call's arrays are not those of the
    previous call (a solver's tables can be reassigned); their addresses are kept for the next
    call, which then costs little more than numba's dispatch (one ``step()`` on Kuhn poker)."""

    def __init__(self, function: Any, tolerance: float):
        self.function = function
        self.tolerance = float(tolerance)
        self._ids: tuple[int, ...] = ()
        self._arrays: tuple[np.ndarray, ...] = ()      # held, so that their ids stay theirs
        self._addresses: tuple[int, ...] = ()

    def __call__(self, mode: int, schedule: np.ndarray, sigma: np.ndarray, regrets: np.ndarray,
                 policy_sum: np.ndarray, scale: np.ndarray, index: np.ndarray, floats: np.ndarray,
                 work: np.ndarray) -> None:
        arrays = (schedule, sigma, regrets, policy_sum, scale, index, floats, work)
        ids = tuple(map(id, arrays))
        if ids != self._ids:
            I, A = sigma.shape
            f8 = np.float64
            self._addresses = (_address(schedule, f8), _address(sigma, f8), _address(regrets, f8, (I, A)),
                               _address(policy_sum, f8, (I, A)), _address(scale, f8, (I, 1)),
                               _address(index, np.int32), _address(floats, f8),
                               _address(work, f8, (3 * (I * A + 1) + I,)))
            self._ids, self._arrays = ids, arrays
        address = self._addresses
        self.function(mode, len(schedule) // 3, address[0], *sigma.shape, *address[1:], self.tolerance)
