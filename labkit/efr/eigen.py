r"""The EFR authors' fixed-point solver, Eigen's JacobiSVD, compiled on first use.

Morrill et al. (2021) compute regret matching's fixed point at an infoset with internal
transformations as the minimum-norm least-squares solution of

.. math:: \begin{bmatrix} L - I \\ \mathbf{1}^\top \end{bmatrix} \sigma
          = \begin{bmatrix} 0 \\ 1 \end{bmatrix}, \qquad
          L = \frac{1}{z} \sum_\phi y_\phi\, \phi,

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

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from labkit._library_cache import home_folder, library_folder

SOURCE = Path(__file__).with_name("eigen_fixed_point.cpp")
SOURCES = (SOURCE, Path(__file__).with_name("paper_kernels.cpp"))
FLAGS = ["-O2", "-std=c++14", "-shared", "-fPIC", "-DNDEBUG", "-ffp-contract=off"]
# per translation unit: the solver's vector width decides how its sums are grouped (module docstring)
COMPILE_FLAGS = [flag for flag in FLAGS if flag != "-shared"]

_library = None
_kernels = None


class EigenUnavailable(RuntimeError):
    """Raised when the Eigen fixed point cannot be built here; the message says what is missing.

    Examples
    --------
    >>> ok, reason = available()
    >>> ok or "needs" in reason or "failed" in reason
    True
    >>> issubclass(EigenUnavailable, RuntimeError)
    True
    """


def eigen_include_dir() -> Path | None:
    """The first directory holding Eigen's headers (``<dir>/Eigen/Dense``), or None.

    Looked for in ``$EIGEN3_INCLUDE_DIR``, then the ``cmeel-eigen`` package on ``sys.path``, then
    ``<sys.prefix>/include/eigen3``, ``/usr/include/eigen3`` and ``/usr/local/include/eigen3``.

    Returns
    -------
    pathlib.Path or None
        None where no candidate has the headers.

    Examples
    --------
    >>> directory = eigen_include_dir()
    >>> directory is None or (directory / "Eigen" / "Dense").is_file()
    True
    """
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


def eigen_version(include_dir: str | os.PathLike[str]) -> str:
    r"""Eigen's version string, read from its ``Eigen/src/Core/util/Macros.h``, e.g. "3.4.0".

    Parameters
    ----------
    include_dir : str or path
        A directory holding Eigen's headers (`eigen_include_dir`).

    Returns
    -------
    str
        ``"world.major.minor"``, with ``?`` for a number the file does not define.

    Raises
    ------
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     macros = Path(folder, "Eigen", "src", "Core", "util", "Macros.h")
    ...     macros.parent.mkdir(parents=True)
    ...     _ = macros.write_text("#define EIGEN_WORLD_VERSION 3\n#define EIGEN_MAJOR_VERSION 4\n"
    ...                           "#define EIGEN_MINOR_VERSION 0\n")
    ...     eigen_version(folder)
    '3.4.0'
    """
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


def build(verbose: bool = False) -> Path:
    """Compile the solver if needed and return the path of the shared library.

    The library's name carries a hash of the sources, Eigen's directory and version, the
    compiler and the flags, so a change of any of them builds a new one. It is cached under
    ``$LABKIT_CACHE_DIR`` (else ``$XDG_CACHE_HOME/labkit`` or ``~/.cache/labkit``; a temporary
    folder where those are not writable) and written by an atomic rename.

    Parameters
    ----------
    verbose : bool, default False
        Print the compiler commands.

    Returns
    -------
    pathlib.Path
        The shared library.

    Raises
    ------
    EigenUnavailable
        No Eigen headers, no C++ compiler, or a compilation that failed (its error is quoted).

    Examples
    --------
    >>> if available()[0]:
    ...     print(build().name.startswith("labkit_eigen_fixed_point_"))
    ... else:
    ...     print(True)
    True
    """
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
    # the user's own cache, else a private folder (labkit._library_cache: a library is loaded and
    # run, so never from a folder another user could write to)
    target = home_folder() / name
    if target.is_file():
        return target
    target = library_folder() / name
    if target.is_file():
        return target
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


def kernels() -> types.SimpleNamespace:
    """The compiled loops of ``paper_kernels.cpp`` as ctypes functions.

    Returns
    -------
    types.SimpleNamespace
        With ``block_update``, ``immediate_regrets`` (and ``immediate_regrets_constant_rows``),
        ``counterfactual_values``, the learner's two halves of it ``others_reach`` and
        ``counterfactual_values_given_reach``, ``player_update`` and ``terminal_reach``
        (`labkit.efr.paper_numerics` calls them).

    Raises
    ------
    EigenUnavailable
        Where the library cannot be built.

    Examples
    --------
    >>> if available()[0]:
    ...     print(sorted(vars(kernels()))[:3])
    ... else:
    ...     print(['block_update', 'counterfactual_values', 'counterfactual_values_given_reach'])
    ['block_update', 'counterfactual_values', 'counterfactual_values_given_reach']
    """
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
def baseline_solver() -> Iterator[None]:
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


def require() -> None:
    """Build and load the solver now; raise `EigenUnavailable` saying what is missing if it can't.

    Raises
    ------
    EigenUnavailable
        No Eigen headers, no compiler, a failed compilation, or a library that does not load.

    Examples
    --------
    >>> try:
    ...     require()
    ... except EigenUnavailable as error:
    ...     print(available() == (False, str(error)))
    ... else:
    ...     print(available() == (True, ""))
    True
    """
    try:
        _load()
    except OSError as error:            # a library that built but does not load
        raise EigenUnavailable(f"loading the compiled fixed-point solver failed: {error}") from error


def available() -> tuple[bool, str]:
    """Whether the solver builds and loads here (`require` without the exception).

    Returns
    -------
    (bool, str)
        ``(True, "")``, else ``(False, the reason)``.

    Examples
    --------
    >>> ok, reason = available()
    >>> ok == (reason == "")
    True
    """
    try:
        require()
    except EigenUnavailable as error:
        return False, str(error)
    return True, ""


def eigen_fixed_point(y: NDArray[np.floating[Any]], legal: NDArray[np.bool_], external_offset: int | None,
                      internal_offset: int | None) -> NDArray[np.float64]:
    r"""Regret-matching strategies by the authors' procedure, for a batch of infosets.

    Per infoset, over its legal actions in order: :math:`z` = the sum of the weights (external
    ones first); :math:`z = 0` gives the uniform strategy; without internal slots (or with two
    actions, where "a becomes b" is "everything becomes b") :math:`\sigma(b) = (\text{weight onto }
    b) / z`; otherwise the clipped least-squares solution of the module docstring, even where the
    internal weights are all 0 (that is the authors' procedure, and it may leave a 2e-16).

    Parameters
    ----------
    y : (B, S) float array, nonnegative
        Transformation weights, as in `labkit.efr.fixed_point.transformation_fixed_point`:
        external slots at ``external_offset + b``, internal ones at ``internal_offset + a * A + b``.
    legal : (B, A) bool array
        The legal actions of each infoset.
    external_offset : int or None
        First external slot, or None when there are none.
    internal_offset : int or None
        First internal slot, or None when there are none.

    Returns
    -------
    (B, A) float array
        One distribution per infoset.

    Raises
    ------
    EigenUnavailable
        Where the solver cannot be built.

    Examples
    --------
    Internal transformations 0 -> 1 -> 2 -> 0 with weights 1, 1, 2 (three actions: slots 0-2 are
    external, 3-11 internal):

    >>> import numpy as np
    >>> from labkit.efr.fixed_point import transformation_fixed_point
    >>> legal = np.ones((1, 3), dtype=bool)
    >>> y = np.zeros((1, 12))
    >>> y[0, [3 + 0 * 3 + 1, 3 + 1 * 3 + 2, 3 + 2 * 3 + 0]] = 1.0, 1.0, 2.0
    >>> if available()[0]:
    ...     sigma = eigen_fixed_point(y, legal, 0, 3)
    ... else:
    ...     sigma = transformation_fixed_point(y, legal, 0, 3)
    >>> np.allclose(sigma, [[0.4, 0.4, 0.2]], rtol=0, atol=1e-12)
    True
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
