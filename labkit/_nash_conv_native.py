"""Exact NashConv as one call into C (``_nash_conv_kernel.c``), where it gives numpy's bits.

The compiled backend evaluates a game by one pass over a packed array of its indices (`pack`):
in C through this module's extension, else through numba's kernel (`labkit._evaluate_kernels`),
the same loops in the same order. On a small game the C call is what makes it fast: numba's
argument handling, a numpy call for the on-policy values and the Python in between cost more
than the Kuhn poker pass itself.

The on-policy values :math:`v_i = \\sum_z \\pi(z) u_i(z)` are a matrix-vector product, which
numpy hands to its BLAS; the BLAS kernel's summation order depends on the machine, so no loop of
ours can promise its bits. The extension therefore calls numpy's own ``cblas_dgemv`` with the
arguments numpy's ``dot`` passes. It is found only in the case we can name exactly, numpy's
bundled 64-bit-integer OpenBLAS (``scipy-openblas``, the PyPI wheels), and checked against
numpy's ``dot`` on a few products before use; anywhere else (another BLAS, no compiler, no
Python headers, ``LABKIT_NATIVE=0``) `module` is None and numba's kernel is used.

The extension is built like CFR's library (`labkit._native.build`: once per installation, cached,
``-O2 -ffp-contract=off``) with the Python headers, and loaded in milliseconds.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from labkit import _native

SOURCE = Path(__file__).with_name("_nash_conv_kernel.c")

# the parts of the packed index array, in order (see labkit.evaluate._compiled_plan)
PARTS = ("own_infoset", "own_parent_infoset", "own_parent_seq", "last_seq", "player_levels", "levels",
         "slots", "infoset_start", "infoset_parent", "player_runs", "run_slot", "run_end", "term_others")

_module: Any = None
_failed: str | None = None           # why the extension is not available in this process
_gemv: int | None = None             # the address of numpy's cblas_dgemv


def pack(num_players: int, num_terminals: int, parts: dict[str, Any], floats: np.ndarray) -> np.ndarray:
    """One int64 array: [n, Z, offsets of the parts (len(PARTS) + 1)], the parts, then the bits of
    the float64 array `floats` (the kernels read them back as floats)."""
    header = 2 + len(PARTS) + 1
    sizes = [len(parts[name]) for name in PARTS]
    offsets = header + np.concatenate(([0], np.cumsum(sizes)))
    ints = [np.asarray(parts[name], dtype=np.int64) for name in PARTS]
    pieces: list[np.ndarray] = [np.array([num_players, num_terminals], dtype=np.int64), offsets.astype(np.int64),
                                *ints, np.ascontiguousarray(floats, dtype=np.float64).view(np.int64)]
    return np.concatenate(pieces).astype(np.int64)


def numpy_dgemv() -> int | None:
    """The address of the ``cblas_dgemv`` numpy's ``dot`` calls, or None where it cannot be named.

    Only numpy's bundled scipy-openblas with 64-bit integers (Linux wheels: one
    ``libscipy_openblas64_*`` file in ``numpy.libs``), whose symbol is ``scipy_cblas_dgemv64_``;
    opening the file again gives the copy numpy has loaded."""
    import ctypes
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
    except (AttributeError, KeyError, TypeError):
        return None
    if blas.get("name") != "scipy-openblas" or "USE64BITINT" not in str(blas.get("openblas configuration", "")):
        return None
    files = sorted((Path(np.__file__).parent.parent / "numpy.libs").glob("libscipy_openblas64_*"))
    if len(files) != 1:
        return None
    try:
        function = ctypes.CDLL(str(files[0])).scipy_cblas_dgemv64_
    except (OSError, AttributeError):
        return None
    return ctypes.cast(function, ctypes.c_void_p).value


def _same_as_numpy(module: Any, address: int) -> bool:
    """Whether the routine at `address` gives numpy's ``dot`` bits on products of the shapes
    NashConv takes (a few rows, up to thousands of columns)."""
    for m, n in [(2, 2), (2, 3), (2, 30), (3, 7), (2, 129), (3, 1000), (4, 4097)]:
        # numbers of every sign and many magnitudes (numpy.random's import would cost more than the check)
        matrix = np.sin(np.arange(m * n) * 1.7).reshape(m, n) * np.exp(np.cos(np.arange(m * n)) * 9).reshape(m, n)
        vector = np.cos(np.arange(n) * 0.3) ** 2
        if module.gemv(address, matrix, vector, m, n) != matrix.dot(vector).tolist():
            return False
    return True


def module() -> Any:
    """The extension module, or None where it cannot be built, loaded or trusted for numpy's bits
    (the reason is kept in ``_failed``)."""
    global _module, _failed, _gemv
    if not _native.enabled():
        return None
    if _module is None and _failed is None:
        import importlib.machinery
        import importlib.util
        import sysconfig
        address = numpy_dgemv()
        if address is None:
            _failed = "numpy's BLAS is not its bundled 64-bit OpenBLAS"
            return None
        include = sysconfig.get_paths()["include"]
        if not (Path(include) / "Python.h").is_file():
            _failed = f"no Python.h in {include}"
            return None
        try:
            path = _native.build(SOURCE, _native.FLAGS + [f"-I{include}"], "labkit_nash_conv",
                                 sysconfig.get_config_var("EXT_SUFFIX") or ".so")
            loader = importlib.machinery.ExtensionFileLoader("labkit_nash_conv", str(path))
            spec = importlib.util.spec_from_file_location("labkit_nash_conv", path, loader=loader)
            if spec is None:
                raise ImportError(f"no module spec for {path}")
            loaded = importlib.util.module_from_spec(spec)
            loader.exec_module(loaded)
        except (OSError, RuntimeError, ImportError) as err:
            _failed = str(err)
            return None
        if not _same_as_numpy(loaded, address):
            _failed = "the BLAS routine found does not give numpy's dot bits"
            return None
        _module, _gemv = loaded, address
    return _module


def plan(index: np.ndarray, returns: np.ndarray, shape: tuple[int, int]) -> Any:
    """The extension's plan of a game (its packed `index`, (n, Z) `returns`, the policy `shape`),
    with its own working memory; None where the extension is not available or the product is not
    numpy's matrix-vector case (one player, or one terminal)."""
    ext = module()
    n, Z = int(index[0]), int(index[1])
    if ext is None or n < 2 or Z < 2:
        return None
    I, A = shape
    work = np.empty(Z + n + I + 2 * (I * A + 1) + n)
    return ext.plan(index, work, np.ascontiguousarray(returns, dtype=np.float64), I, A, _gemv)
