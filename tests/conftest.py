"""Fixtures shared by the library tests: the two poker games, compiled once per session.

(labkit.games.load caches compiled trees, so these are the same objects the library sees.)

Run from the source distribution (``pip download``/``sdist``, unpacked), the test modules that need
the parts of the repository the sdist leaves out (the book's pages, the instructor's material) are
not collected; the header of the run lists them and says why.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import labkit as lk

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
    "test_plain_markdown.py": "chapters",
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
