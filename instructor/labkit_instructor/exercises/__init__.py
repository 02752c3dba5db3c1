"""The exercise sources, one module per exercise (``ex27_1`` ... ``ex27_8``), each defining ``EXERCISE``.

Each module is the single source of an exercise: `scripts/build_exercises.py` writes the exercise
notebook (exercises/) and the executed solution notebook (solutions/) from it, and the grader
builds its pristine master from it, so the three never drift apart. The registry of all of them is
``labkit_instructor.EXERCISES``.
"""
