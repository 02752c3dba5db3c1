"""The exercises, one module per exercise (``ex27_1`` ... ``lab15``), each the exercise's one source.

Each module defines ``EXERCISE`` (text, answer slots, worked solutions, written parts with their
points), ``PARTS`` (the hidden checks) and ``PUBLIC_CHECKS`` (the source of the public checks).
`scripts/build_exercises.py` writes from it the exercise notebook (exercises/), the executed
solution notebook (solutions/) and the public checks shipped to students
(labkit/grading/public/<module>.py), and the grader builds its pristine master and grades with
its ``PARTS``, so none of them drift apart. The registry of all of them is
``labkit_instructor.EXERCISES``.
"""
