"""The instructor's half of labkit's graded exercises: worked solutions, model answers and hidden checks.

This distribution (``labkit-instructor``) is not what students install. It holds

* ``labkit_instructor.exercises`` -- one module per exercise, the exercise's one source. Each
  defines ``EXERCISE`` (a `labkit.grading.notebooks.Exercise`: text, answer templates, worked
  solutions, model answers to the written parts with their points), ``PARTS`` (the hidden
  checks: a list of `labkit.grading.checking.PartSpec`, the reference computations and the
  verdicts) and ``PUBLIC_CHECKS`` (the source of the public checks shipped to students, which
  scripts/build_exercises.py writes to labkit/grading/public/<module>.py);
* ``labkit_instructor.checks`` -- what the hidden checks share (``base``, ``sampling``,
  ``own_work``) and `grade_part`.

The grader (``labkit-grade``, in the student package) loads it through
`labkit.grading.material.load` and runs the hidden checks in its own process, never in a
student's kernel. An exercise is found by its module's name: there is no list to extend
(book/instructors.md, "Adding an exercise").
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

__version__ = "0.1.0"

# one name per exercise: labkit_instructor.exercises.<name>, found by name (every module of
# labkit_instructor.exercises but `common`), in the order of the names
MODULES = sorted(info.name for info in pkgutil.iter_modules(
    [str(Path(__file__).parent / "exercises")]) if info.name != "common")


EXERCISES = {}
SPECS = {}
# {module name: source of labkit.grading.public.<name>} (each exercise's ``PUBLIC_CHECKS``);
# scripts/build_exercises.py writes them into labkit/grading/public/
PUBLIC_SOURCES = {}
for _name in MODULES:
    _module = importlib.import_module(f"labkit_instructor.exercises.{_name}")
    EXERCISES[_module.EXERCISE.number] = _module.EXERCISE
    for _spec in _module.PARTS:
        SPECS[_spec.part] = _spec
    PUBLIC_SOURCES[_name] = _module.PUBLIC_CHECKS
del _name, _module, _spec

from labkit_instructor.checks import grade_part, spec_for  # noqa: E402

__all__ = ["EXERCISES", "MODULES", "PUBLIC_SOURCES", "SPECS", "grade_part", "spec_for", "__version__"]
