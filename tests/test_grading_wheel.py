"""labkit-grade installed from wheels in a clean virtual environment, outside the repository, grades a solution.

Builds the student wheel (labkit, with its `grading` extra) and the instructor wheel
(labkit-instructor) from a clean copy of the sources, installs both into a new venv (pip's cache,
the package index for the dependencies), and runs the installed `labkit-grade` on a worked
solution, sandboxed, from a folder outside the repository and without PYTHONPATH.
"""
import os
import shutil
import subprocess
import sys

import pytest

from _grading_support import EXERCISES, ROOT

pytestmark = pytest.mark.slow


def _run(args, **kw):
    done = subprocess.run(args, capture_output=True, text=True, timeout=1200, **kw)
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-3000:])
    return done


def test_the_installed_grader_grades_a_solution(tmp_path):
    src, dist = tmp_path / "src", tmp_path / "dist"
    shutil.copytree(ROOT / "labkit", src / "labkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "instructor", src / "instructor", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(src), str(src / "instructor"), "-w", str(dist)])
    (student,) = dist.glob("labkit_marl-*.whl")         # the distribution is labkit-marl
    (instructor,) = dist.glob("labkit_instructor-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"{student}[grading]", str(instructor)],
         env=env)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "solutions" / EXERCISES["27.4"].filename, work / "sub.ipynb")
    done = subprocess.run([str(venv / "bin" / "labkit-grade"), "sub.ipynb", "--csv", "grades.csv"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert "total  5/5" in done.stdout and "NoSuchKernel" not in done.stdout + done.stderr
    assert "5,5" in (work / "grades.csv").read_text()
    # the student half alone: the notebook's check works, the grader says how to get the material
    check = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import labkit.grading.public as p; print(p.feedback('27.2(a)', {'value': 0.5}).line())"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert check.stdout.startswith("27.2(a): format ok"), check.stderr
