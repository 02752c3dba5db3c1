"""Every example in labkit's docstrings runs and prints what it shows (doctest).

The same collection as ``pytest --doctest-modules labkit``, written as a test module so that the
README's test command (and ``make test-fast``) runs it: one test per docstring with examples, in
every module of the package. Examples that call OpenSpiel are skipped where it is not installed,
and those of the optional extras (``labkit.deep``: JAX) where the extra is missing.
"""
from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import numpy as np
import pytest

import labkit

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# an example that mentions one of these needs the package on the right
NEEDS = {"openspiel": "pyspiel", "start_new_kernel_client()": "jupyter_core"}     # (compared in lower case)
# modules that import an optional dependency at the top
OPTIONAL_MODULES = {"labkit.deep": "jax"}
# command-line modules whose functions are documented with examples (tests/test_api_docs.py)
DOCUMENTED_COMMANDS = ("labkit.__main__", "labkit.experiments.__main__")


def _modules():
    names = ["labkit"] + [m.name for m in pkgutil.walk_packages(labkit.__path__, "labkit.")]
    # command-line modules other than those documented are left out: importing them is harmless,
    # but their examples, if any, would be about argument parsing run as a script
    return sorted(name for name in names if not name.endswith("__main__") or name in DOCUMENTED_COMMANDS)


def _importable(name):
    return importlib.util.find_spec(name) is not None


def _docstring_tests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    cases = []
    for name in _modules():
        needed = next((dep for prefix, dep in OPTIONAL_MODULES.items() if name.startswith(prefix)), None)
        if needed and not _importable(needed):
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:          # an optional dependency of that module is missing
            if err.name and err.name.split(".")[0] == "labkit":
                raise
            cases.append(pytest.param(None, id=name, marks=pytest.mark.skip(reason=f"{name} needs {err.name}")))
            continue
        for test in finder.find(module, name):
            if test.examples:
                cases.append(pytest.param(test, id=test.name))
    return cases


CASES = _docstring_tests()


def test_the_collection_finds_the_documented_api():
    # a floor, so that a broken collection cannot pass by finding nothing
    assert len(CASES) >= 150


@pytest.mark.parametrize("test", CASES)
def test_docstring_examples(test):
    source = "\n".join(example.source for example in test.examples).lower()
    for marker, dependency in NEEDS.items():
        if marker.lower() in source and not _importable(dependency):
            pytest.skip(f"the example needs {dependency}")
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    with np.printoptions(legacy=False):
        result = runner.run(test, out=_collect(lines := []))
    assert result.failed == 0, "\n".join(lines)


def _collect(lines):
    return lines.append
