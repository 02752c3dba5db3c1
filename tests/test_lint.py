"""ruff and mypy stay clean (their configuration is in pyproject.toml).

CLEAN lists what is checked: the whole package, brought to zero findings of both tools. Both tools
are part of the test extra; without them these tests are skipped with a reason.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLEAN = ["labkit"]                      # the whole package: every module has zero findings


def _tool(name):
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return path


def test_the_clean_list_names_existing_files():
    missing = [entry for entry in CLEAN if not (ROOT / entry).exists()]
    assert not missing


def test_ruff_finds_nothing():
    done = subprocess.run([_tool("ruff"), "check", "--no-cache", *CLEAN], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing():
    # --follow-imports=silent: the modules they import are read for their types, and their own
    # findings (modules not yet in CLEAN) are not reported here; the cache is .mypy_cache
    done = subprocess.run([_tool("mypy"), "--follow-imports=silent", *CLEAN], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
