"""Fixtures shared by the library tests: the two poker games, compiled once per session; and the
skip of the tests that need the grading sandbox where bubblewrap is not installed.

(labkit.games.load caches compiled trees, so these are the same objects the library sees.)

A test that runs student code in the grading sandbox is marked ``sandbox`` (in its file, or in
`SANDBOXED` below for files that belong to other parts of the suite). Without bubblewrap --
``bwrap`` not on PATH, or ``LABKIT_GRADE_BWRAP=none`` to try the suite as such a machine would
run it -- every such test is skipped with the same one message saying how to install it, as the
browser tests are without Chromium; the rest of the suite runs. Where bubblewrap *is* installed,
a sandbox that does not work fails its tests loudly instead of skipping them.

Run from the source distribution (``pip download``/``sdist``, unpacked), the test modules that need
the parts of the repository the sdist leaves out (the book's pages, the instructor's material) are
not collected; the header of the run lists them and says why.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import labkit as lk

# tests outside the grading files that grade through the sandbox (file::name)
SANDBOXED = {
    "test_grading_timing.py::test_the_sandboxed_grader_times_nash_conv_at_the_labs_budget",
    "test_lab15_exercise.py::test_tampering_with_the_lab_earns_nothing",
    "test_grading_wheel.py::test_the_installed_grader_grades_a_solution",
    "test_grading_own_work.py::test_the_library_wrapper_notebook_scores_zero_on_the_wrapped_parts",
    "test_grading_own_work.py::test_speed_bought_before_the_timed_call_earns_no_speed_point",
    "test_grading_own_work.py::test_the_honest_notebook_scores_full_marks",
}


def pytest_configure(config):
    config.addinivalue_line("markers", "sandbox: runs student code in the grading sandbox (needs bubblewrap)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        # notebook cells collected by nbval have no originalname: none of them is in the list
        if f"{item.path.name}::{getattr(item, 'originalname', item.name)}" in SANDBOXED:
            item.add_marker(pytest.mark.sandbox)
    _longest_files_first(items)


def _longest_files_first(items):
    """Order the files so the long ones start first: those with a `slow` test, then the notebooks,
    then the rest, each group in its collected order.

    `make test` hands whole files to its workers in this order (pytest-xdist's --dist loadfile
    with --no-loadscope-reorder; without it, xdist starts the files with the most tests first);
    a long file that starts last keeps one worker busy while the other has finished, and the short
    files at the end fill the gaps instead."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}

    def group(item):
        if item.path in slow_files:
            return 0
        return 1 if item.path.suffix == ".ipynb" else 2

    items.sort(key=group)        # stable: the order within a file, and within a group, is kept


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


ROOT = Path(__file__).resolve().parent.parent
# test modules -> the folder of the repository each one reads (absent from the source distribution)
NEEDS_REPOSITORY = {
    "browser": "book", "test_book_config.py": "book", "test_openspiel_map.py": "book",
    "test_page_width.py": "book", "test_lite_site.py": "book", "test_notebook_width.py": "book",
    "test_install_cell.py": "book", "test_page_model.py": "book", "test_notebook_execution.py": "chapters",
    "test_chapter_exercises.py": "instructor", "test_lab15_exercise.py": "instructor",
    "test_command_lines.py": "instructor", "test_grading.py": "instructor", "test_grading_attacks.py": "instructor",
    "test_grading_cgroups.py": "instructor", "test_grading_reports.py": "instructor",
    "test_grading_sandbox.py": "instructor", "test_grading_secrecy.py": "instructor",
    "test_grading_timing.py": "instructor", "test_grading_wheel.py": "instructor",
    "test_gradescope.py": "instructor", "test_grading_course.py": "instructor", "test_pdf.py": "book",
    "test_plain_markdown.py": "chapters", "test_grading_infra.py": "instructor",
    "test_grading_load.py": "instructor", "test_grading_machine.py": "instructor",
    "test_grading_own_work.py": "instructor",
}
_LEFT_OUT = sorted(name for name, folder in NEEDS_REPOSITORY.items() if not (ROOT / folder).is_dir())


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.name in _LEFT_OUT and collection_path.parent.name in ("tests", "browser"):
        return True
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if not _LEFT_OUT:
        return None
    return (f"not collected: {', '.join(_LEFT_OUT)} (they need the repository's book/, chapters/ or "
            "instructor/, which the source distribution leaves out)")


@pytest.fixture(scope="session")
def kuhn():
    return lk.games.load("kuhn_poker")


@pytest.fixture(scope="session")
def leduc():
    return lk.games.load("leduc_poker")
