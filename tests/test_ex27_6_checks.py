"""Exercise 27.6(c): the check sees independent learners simulated, not an outcome stated.

A simulation of two learners that explore at random ends differently for some seeds; the hidden
check runs the student's `independent_learners` for 30 seeds of its own, and an answer that is the
same for all of them (``return ("c", "c")``) earns at most half of the part. The worked solution,
whose runs differ from seed to seed, earns all of it.
"""
import pytest

from exercise_harness import Harness

from labkit_instructor.exercises import ex27_6 as hidden  # noqa: E402
from labkit_instructor.exercises import ex27_6 as ex  # noqa: E402

EXERCISE = Harness(ex.EXERCISE, hidden.PARTS)
PART = "27.6(c)"


@pytest.fixture(scope="module")
def solution():
    return EXERCISE.run(EXERCISE.cells(lambda part: True))


def test_the_worked_solution_earns_the_whole_part(solution):
    assert EXERCISE.grade(PART, solution) == (2, [])


def test_its_runs_end_differently_for_different_seeds(solution):
    ends = {solution["independent_learners"](seed) for (seed,) in hidden.LEARNER_SEEDS}
    assert len(ends) > 1 and ("a", "a") not in ends


@pytest.mark.parametrize("answer", [lambda seed: ("c", "c"), lambda seed: ["b", "b"], lambda seed: (2, 2)])
def test_a_constant_answer_earns_at_most_half(solution, answer):
    constant = dict(solution, independent_learners=answer)
    points, hints = EXERCISE.grade(PART, constant)
    assert points <= hidden.PARTS[2].max_points / 2
    assert any("seeds end at the same joint action" in h for h in hints)


def test_runs_that_mostly_find_the_optimum_show_no_pathology(solution):
    lucky = dict(solution, independent_learners=lambda seed: ("a", "a") if seed % 5 else ("c", "c"))
    points, hints = EXERCISE.grade(PART, lucky)
    assert points == 1 and "most of your runs reach the optimum" in hints[0]


def test_the_seeds_are_the_graders_own(solution):
    from labkit.grading.public.ex27_6 import SEEDS
    assert len(hidden.LEARNER_SEEDS) == 30 and not set(SEEDS) & set(hidden.LEARNER_SEEDS)
    assert EXERCISE.public(PART, solution).ok
