"""The eight exercises of chapter 27, one module each; `EXERCISES` maps "27.k" to its `Exercise`.

Each module is the single source of an exercise: `scripts/build_exercises.py` writes the exercise
notebook (exercises/) and the executed solution notebook (solutions/) from it, and the grader
builds its pristine master from it, so the three never drift apart.
"""
from labkit.grading.exercises import ex27_1, ex27_2, ex27_3, ex27_4, ex27_5, ex27_6, ex27_7, ex27_8

EXERCISES = {m.EXERCISE.number: m.EXERCISE
             for m in (ex27_1, ex27_2, ex27_3, ex27_4, ex27_5, ex27_6, ex27_7, ex27_8)}

__all__ = ["EXERCISES"]
