"""The EFR authors' fixed-point solver, Eigen's JacobiSVD, compiled on first use.

Morrill et al. (2021) compute regret matching's fixed point at an infoset with internal
transformations as the minimum-norm least-squares solution of

    [L - I; 1^T] sigma = [0; 1],     L = (1/z) sum_phi y_phi phi,

by Eigen's two-sided Jacobi SVD (ColPivHouseholderQR preconditioner), clipped to [0, 1]. In
exact arithmetic that is a fixed point; in floating point it leaves values like 5.6e-17 on
actions that should get 0, and on Leduc those specks decide later rounds (see
`labkit.efr.fixed_point`). No numpy or scipy routine makes the same specks, so
``EFR(..., fixed_point="paper")`` calls the same Eigen routine through this module:
``eigen_fixed_point.cpp`` beside it is compiled once into a small shared library (cached under
``$LABKIT_CACHE_DIR`` or ``~/.cache/labkit``) and loaded with ctypes. The same library holds
``paper_kernels.cpp``, the round's memory-bound loops in the order of the numpy code
(`labkit.efr.paper_numerics`), which the paper mode uses for speed.

Requirements: a C++ compiler (``$CXX``, else ``c++`` or ``g++``) and Eigen 3.4's headers, found
at ``$EIGEN3_INCLUDE_DIR``, in the ``cmeel-eigen`` package from PyPI (``pip install
cmeel-eigen``), or in ``/usr/include/eigen3`` (Debian's ``libeigen3-dev``).

Build flags, and why. Everything is built with ``-ffp-contract=off`` and no ``-march``: fused
multiply-adds round once where the authors' build rounded twice, and change the specks. The
solver's file is built with ``-mavx`` on an x86-64 processor that has AVX (`solver_flags`).
With AVX, Eigen works on four doubles at a time instead of two, and adds the partial sums of
a dot product or a norm in another order. For systems of up to four actions (every one in Leduc,
goofspiel(4), Sheriff and tiny Hanabi) both orders give the same bits; with five (two infosets
of goofspiel(5)) they rarely differ (1 of 20,000 random systems, by 3e-16) and did not in the
paper's runs; tiny bridge's systems of six and seven actions mostly differ, and the authors'
numbers are those of the AVX order (their build: ``-O3 -march=native`` on a processor with AVX
and without FMA). Without AVX the solver is the baseline build, and tiny bridge's
rounding-sensitive rows then leave the authors' values within a few rounds
(``labkit/data/efr/README.md``; `baseline_solver` shows it).
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).with_name("eigen_fixed_point.cpp")
SOURCES = (SOURCE, Path(__file__).with_name("paper_kernels.cpp"))
FLAGS = ["-O2", "-std=c++14", "-shared", "-fPIC", "-DNDEBUG", "-ffp-contract=off"]
# per translation unit: the solver's vector width decides how its sums are grouped (module docstring)
COMPILE_FLAGS = [flag for flag in FLAGS if flag != "-shared"]

_library = None
_kernels = None


class EigenUnavailable(RuntimeError):
    """Raised when the Eigen fixed point cannot be built here; the message says what is missing."""


def eigen_include_dir():
    """The first directory holding Eigen's headers (``<dir>/Eigen/Dense``), or None."""
    candidates = []
    if os.environ.get("EIGEN3_INCLUDE_DIR"):
        candidates.append(Path(os.environ["EIGEN3_INCLUDE_DIR"]))
    for entry in sys.path:
        if entry:
            candidates.append(Path(entry) / "cmeel.prefix" / "include" / "eigen3")
    candidates += [Path(sys.prefix) / "include" / "eigen3", Path("/usr/include/eigen3"),
                   Path("/usr/local/include/eigen3")]
    for directory in candidates:
        if (directory / "Eigen" / "Dense").is_file():
            return directory
    return None


def eigen_version(include_dir):
    """Eigen's version string, read from its Macros.h, e.g. "3.4.0"."""
    macros = Path(include_dir) / "Eigen" / "src" / "Core" / "util" / "Macros.h"
    numbers = {}
    for line in macros.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "#define" and parts[1] in (
                "EIGEN_WORLD_VERSION", "EIGEN_MAJOR_VERSION", "EIGEN_MINOR_VERSION"):
            numbers[parts[1]] = parts[2]
    return ".".join(numbers.get(k, "?") for k in ("EIGEN_WORLD_VERSION", "EIGEN_MAJOR_VERSION",
                                                    "EIGEN_MINOR_VERSION"))


def _compiler():
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _cache_dir():
    root = os.environ.get("LABKIT_CACHE_DIR")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
    return Path(base) / "labkit"


def cpu_has_avx() -> bool:
    """Whether this is an x86-64 processor with AVX vector instructions.

    Read from ``/proc/cpuinfo`` (Linux) or ``sysctl machdep.cpu.features`` (macOS).

    Returns
    -------
    bool
        False on other processors and where neither source says.

    Examples
    --------
    >>> isinstance(cpu_has_avx(), bool)
    True
    """
    import platform
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return "avx" in line.split(":", 1)[1].split()
    except OSError:
        pass
    try:
        features = subprocess.run(["sysctl", "-n", "machdep.cpu.features"], capture_output=True,
                                  text=True, timeout=10).stdout
        return "AVX1.0" in features.split()
    except (OSError, subprocess.SubprocessError):
        return False


def solver_flags() -> list[str]:
    """The extra compiler flags of the fixed-point solver (``eigen_fixed_point.cpp``).

    With AVX, Eigen works on four doubles at a time and groups the partial sums of its dot
    products and norms as the authors' build did (module docstring); the other file of the
    library, the round's loops, keeps the baseline flags.

    Returns
    -------
    list of str
        ``["-mavx"]`` where `cpu_has_avx`, else ``[]``; also ``[]`` when the environment sets
        ``LABKIT_EIGEN_AVX=0`` (the baseline build on any processor).

    Examples
    --------
    >>> solver_flags() in ([], ["-mavx"])
    True
    """
    if os.environ.get("LABKIT_EIGEN_AVX", "").strip() == "0":
        return []
    return ["-mavx"] if cpu_has_avx() else []


def build(verbose=False):
    """Compile the solver if needed and return the path of the shared library."""
    include = eigen_include_dir()
    if include is None:
        raise EigenUnavailable(
            "fixed_point='paper' needs Eigen 3.4's headers: `pip install cmeel-eigen`, or "
            "`apt-get install libeigen3-dev`, or set EIGEN3_INCLUDE_DIR")
    compiler = _compiler()
    if compiler is None:
        raise EigenUnavailable("fixed_point='paper' needs a C++ compiler (set CXX, or install g++)")
    extra = solver_flags()
    key = hashlib.sha256()
    for part in (*(source.read_bytes() for source in SOURCES), str(include).encode(),
                 eigen_version(include).encode(), compiler.encode(), " ".join(FLAGS).encode(),
                 " ".join(extra).encode()):
        key.update(part)
    name = f"labkit_eigen_fixed_point_{key.hexdigest()[:16]}.so"
    target = _cache_dir() / name
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(target.parent, os.W_OK):
            raise PermissionError(target.parent)
    except OSError:                     # no writable home (a locked-down grading server, say)
        target = Path(tempfile.gettempdir()) / f"labkit-{os.getuid() if hasattr(os, 'getuid') else 0}" / name
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
    # build beside the target and rename: concurrent first uses (test workers) never see half a file
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        partial = Path(scratch) / target.name
        # each source with its own flags (the solver's vector width), then one library
        commands = [[compiler, *COMPILE_FLAGS, *(extra if source == SOURCE else []), f"-I{include}", "-c",
                     str(source), "-o", str(Path(scratch) / f"{source.stem}.o")] for source in SOURCES]
        commands.append([compiler, "-shared", *(str(Path(scratch) / f"{source.stem}.o") for source in SOURCES),
                         "-o", str(partial)])
        for command in commands:
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise EigenUnavailable(f"compiling {', '.join(s.name for s in SOURCES)} failed:\n"
                                       f"{' '.join(command)}\n{done.stderr[-2000:]}")
            if verbose:
                print(" ".join(command))
        os.replace(partial, target)
    return target


def _load():
    global _library
    if _library is None:
        library = ctypes.CDLL(str(build()))
        function = library.labkit_eigen_fixed_points
        function.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p]
        function.restype = ctypes.c_int
        _library = function
    return _library


def kernels():
    """The compiled loops of ``paper_kernels.cpp`` as ctypes functions (a namespace with
    ``block_update``, ``immediate_regrets`` (and ``immediate_regrets_constant_rows``),
    ``counterfactual_values``,
    the learner's two halves of it ``others_reach`` and ``counterfactual_values_given_reach``,
    ``player_update`` and ``terminal_reach``)."""
    global _kernels
    if _kernels is None:
        _load()
        library = ctypes.CDLL(str(build()))
        pointer, size = ctypes.c_void_p, ctypes.c_long
        signatures = {
            "immediate_regrets": [size, size, pointer, pointer, pointer, pointer, size, size, size,
                                  pointer],
            "immediate_regrets_constant_rows": [size, size, pointer, pointer, pointer, pointer, size,
                                                size, size, pointer],
            "block_update": [size, size, pointer, pointer, pointer, pointer, pointer, pointer, size,
                             pointer, pointer],
            "counterfactual_values": [size, size, size, *[pointer] * 9, size, *[pointer] * 7],
            "others_reach": [size, size, size, *[pointer] * 7],
            "counterfactual_values_given_reach": [size, size, size, *[pointer] * 8, size, *[pointer] * 6],
            "player_update": [size, size, size, *[pointer] * 9, size, size, size, *[pointer] * 12],
            "terminal_reach": [size, size, *[pointer] * 5, size, pointer, pointer, pointer],
        }
        functions = {}
        for name, argtypes in signatures.items():
            function = getattr(library, f"labkit_efr_{name}")
            function.argtypes = argtypes
            function.restype = None
            functions[name] = function
        _kernels = types.SimpleNamespace(**functions)
    return _kernels


@contextlib.contextmanager
def baseline_solver():
    """A block in which ``fixed_point="paper"`` runs on the solver built without AVX.

    The baseline build works on two doubles per vector, as on a processor without AVX, and shows
    what the vector width changes (tiny bridge's seven-action systems). It is compiled on first use
    and cached like the default one; after the block the default library is back.

    Yields
    ------
    None

    Raises
    ------
    EigenUnavailable
        Where the solver cannot be built (no compiler or no Eigen headers).

    Examples
    --------
    >>> if available()[0]:
    ...     with baseline_solver():
    ...         print(solver_flags())
    ... else:
    ...     print([])
    []
    """
    global _library, _kernels
    saved, previous = (_library, _kernels), os.environ.get("LABKIT_EIGEN_AVX")
    os.environ["LABKIT_EIGEN_AVX"] = "0"
    try:
        _library = _kernels = None
        require()
        kernels()
        yield
    finally:
        if previous is None:
            os.environ.pop("LABKIT_EIGEN_AVX", None)
        else:
            os.environ["LABKIT_EIGEN_AVX"] = previous
        _library, _kernels = saved


def require():
    """Build and load the solver now; raise `EigenUnavailable` saying what is missing if it can't."""
    try:
        _load()
    except OSError as error:            # a library that built but does not load
        raise EigenUnavailable(f"loading the compiled fixed-point solver failed: {error}") from error


def available():
    """(True, "") if the solver builds and loads here, else (False, the reason)."""
    try:
        require()
    except EigenUnavailable as error:
        return False, str(error)
    return True, ""


def eigen_fixed_point(y, legal, external_offset, internal_offset):
    """Regret-matching strategies by the authors' procedure, for a batch of infosets.

    Same arguments as `labkit.efr.fixed_point.transformation_fixed_point`: y is (B, S) with
    external slots at ``external_offset + b`` and internal ones at ``internal_offset + a * A + b``.
    Per infoset, over its legal actions in order: z = the sum of the weights (external ones first);
    z = 0 gives the uniform strategy; only external weight (or two actions, where "a becomes b"
    is "everything becomes b") gives sigma = (weight onto b) / z; otherwise the clipped
    least-squares solution above.
    """
    function = _load()
    B, A = legal.shape
    external = (np.ascontiguousarray(y[:, external_offset:external_offset + A], dtype=float)
                if external_offset is not None else None)
    internal = (np.ascontiguousarray(y[:, internal_offset:internal_offset + A * A], dtype=float)
                if internal_offset is not None else None)
    legal_bytes = np.ascontiguousarray(legal, dtype=np.uint8)
    out = np.empty((B, A))
    function(B, A, None if external is None else external.ctypes.data,
             None if internal is None else internal.ctypes.data, legal_bytes.ctypes.data, out.ctypes.data)
    return out
