"""Fixtures shared by the library tests: the two poker games, compiled once per session; and the
skip of the tests that need the grading sandbox where bubblewrap is not installed.

(labkit.games.load caches compiled trees, so these are the same objects the library sees.)

A test that runs student code in the grading sandbox is marked ``sandbox`` (in its file, or in
`SANDBOXED` below for files that belong to other parts of the suite). Without bubblewrap --
``bwrap`` not on PATH, or ``LABKIT_GRADE_BWRAP=none`` to try the suite as such a machine would
run it -- every such test is skipped with the same one message saying how to install it, as the
browser tests are without Chromium; the rest of the suite runs. Where bubblewrap *is* installed,
a sandbox that does not work fails its tests loudly instead of skipping them.
"""
import pytest

import labkit as lk

# tests outside the grading files that grade through the sandbox (file::name)
SANDBOXED = {
    "test_grading_timing.py::test_the_sandboxed_grader_times_nash_conv_at_the_labs_budget",
    "test_lab15_exercise.py::test_tampering_with_the_lab_earns_nothing",
    "test_grading_wheel.py::test_the_installed_grader_grades_a_solution",
}


def pytest_configure(config):
    config.addinivalue_line("markers", "sandbox: runs student code in the grading sandbox (needs bubblewrap)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if f"{item.path.name}::{item.originalname}" in SANDBOXED:
            item.add_marker(pytest.mark.sandbox)


def _missing_bubblewrap():
    """The message of the skip when bubblewrap is missing, or None when it is there."""
    from labkit.grading.sandbox import BWRAP_VARIABLE, INSTALL_HINT, bwrap_path
    if bwrap_path() is not None:
        return None
    return (f"the grading sandbox needs bubblewrap, which is not installed (or {BWRAP_VARIABLE}=none): "
            f"{INSTALL_HINT} to run these tests")


def pytest_runtest_setup(item):
    # before any fixture of the test (a module's class graded once is one), so nothing runs
    if item.get_closest_marker("sandbox") is not None:
        reason = _missing_bubblewrap()
        if reason:
            pytest.skip(reason)


@pytest.fixture(scope="session")
def kuhn():
    return lk.games.load("kuhn_poker")


@pytest.fixture(scope="session")
def leduc():
    return lk.games.load("leduc_poker")
