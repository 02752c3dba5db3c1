"""Find the instructor material: exercise sources, worked solutions and hidden checks.

They are not part of labkit (students install labkit); they are the separate distribution
``labkit-instructor`` (package ``labkit_instructor``, in the repository's ``instructor/``).
`load` returns that package, which exposes ``EXERCISES``, ``SPECS``, ``grade_part`` and
``spec_for``.
"""
from __future__ import annotations

import importlib
import os
import sys
import threading
import types
from pathlib import Path
from typing import cast

PACKAGE = "labkit_instructor"
HOW_TO_GET_IT = (
    "The grader needs the instructor material (worked solutions and hidden checks), which is not part "
    "of labkit. Pass --instructor DIR, a folder that contains labkit_instructor/ (the repository's "
    "instructor/ folder), or install it: pip install -e instructor/ (from the repository), or "
    "pip install the labkit-instructor wheel your course provides.")

_lock = threading.Lock()


class MaterialError(RuntimeError):
    """The instructor material cannot be found or loaded; the message says how to get it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     try:
    ...         load(folder)
    ...     except MaterialError as error:
    ...         print(str(error).split(". ")[0].endswith("does not contain labkit_instructor/"))
    True
    """


def load(path: str | os.PathLike[str] | None = None) -> types.ModuleType:
    """The ``labkit_instructor`` package.

    Parameters
    ----------
    path : str or Path, optional
        A folder containing ``labkit_instructor/``. Without it, the installed distribution
        ``labkit-instructor`` is used.

    Raises
    ------
    MaterialError
        When it is not there (the message says how to get it), or when another copy of
        ``labkit_instructor`` is already loaded in this process.

    Returns
    -------
    module
        ``labkit_instructor``: its ``EXERCISES``, ``SPECS``, ``grade_part`` and ``spec_for``.

    Examples
    --------
    >>> try:
    ...     material = load()                     # the installed distribution
    ...     print(isinstance(material.EXERCISES, dict))
    ... except MaterialError:                     # a student's installation: not there
    ...     print(True)
    True
    """
    with _lock:
        if path is None:
            try:
                return importlib.import_module(PACKAGE)
            except ModuleNotFoundError as exc:
                if exc.name != PACKAGE:
                    raise
                raise MaterialError(HOW_TO_GET_IT) from None
        folder = Path(path).expanduser().resolve()
        if not (folder / PACKAGE / "__init__.py").is_file():
            if folder.name == PACKAGE and (folder / "__init__.py").is_file():
                folder = folder.parent
            else:
                raise MaterialError(f"{path} does not contain {PACKAGE}/. " + HOW_TO_GET_IT)
        loaded = sys.modules.get(PACKAGE)
        if loaded is not None:
            where = Path(cast(str, loaded.__file__)).resolve().parent.parent
            if where != folder:
                raise MaterialError(f"another copy of {PACKAGE} is already loaded from {where}; "
                                    f"cannot also load the one in {folder}")
            return loaded
        sys.path.insert(0, str(folder))
        try:
            module = importlib.import_module(PACKAGE)
        finally:
            sys.path.remove(str(folder))
        if Path(cast(str, module.__file__)).resolve().parent.parent != folder:     # found elsewhere on sys.path
            raise MaterialError(f"{PACKAGE} was found in {Path(cast(str, module.__file__)).parent}, not in {folder}")
        return module


def location(material: types.ModuleType) -> Path:
    """The folder of a loaded ``labkit_instructor`` package (the sandbox hides it).

    Parameters
    ----------
    material : module
        From `load`.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import types
    >>> location(types.SimpleNamespace(__file__="/opt/course/labkit_instructor/__init__.py")).name
    'labkit_instructor'
    """
    return Path(cast(str, material.__file__)).resolve().parent
