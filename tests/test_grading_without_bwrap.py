"""On a machine without bubblewrap, the sandboxed tests skip with one message and the others pass.

A small pytest run of the grading test files in a subprocess, with ``LABKIT_GRADE_BWRAP=none``
(the grader then behaves as if ``bwrap`` were not installed): it must end green, with exactly one
"SKIPPED" line in its summary, saying how to install bubblewrap, and with tests that ran.
"""
import os
import re
import subprocess
import sys

import pytest

from _grading_support import ROOT

pytestmark = pytest.mark.slow
FILES = ["tests/test_grading_reports.py", "tests/test_grading_sandbox.py", "tests/test_grading_attacks.py",
         "tests/test_grading_identity.py"]


def test_without_bubblewrap_the_sandboxed_tests_skip_with_one_message():
    env = {**os.environ, "LABKIT_GRADE_BWRAP": "none"}
    done = subprocess.run([sys.executable, "-m", "pytest", *FILES, "-q", "-p", "no:nbval", "-p", "no:cacheprovider",
                           "-o", "addopts=", "-rs"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    summary = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout[-3000:]
    skipped = [line for line in summary if line.startswith("SKIPPED")]
    assert len(skipped) == 1 and "apt-get install bubblewrap" in skipped[0], skipped
    counts = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|skipped|failed|error)", summary[-1]))
    assert counts.get("passed", 0) >= 10 and counts.get("skipped", 0) >= 20, summary[-1]
    assert "JSONDecodeError" not in done.stdout and "error" not in counts
