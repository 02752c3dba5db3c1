"""Write exercises/*.ipynb and solutions/*.ipynb from the instructor sources, the one source.

The sources are instructor/labkit_instructor/exercises/ (one module per exercise), which are not
part of the student package labkit.

    python scripts/build_exercises.py            # all eight
    python scripts/build_exercises.py 27.4 27.6  # some

The exercise notebooks are written without outputs. The solution notebooks are executed by
scripts/execute_notebooks.py, like every notebook of the book, so their stored outputs come only from
running them (nbval re-checks them in `make test`).
tests/test_grading.py fails when a committed notebook differs from what this script writes.
"""
import argparse
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from execute_notebooks import execute as execute_notebook  # noqa: E402
from install_cell import for_the_book  # noqa: E402  (the first cell: installs labkit where missing)


def build(numbers=None, execute_solutions=True):
    sys.path.insert(0, str(ROOT))
    from labkit.grading.material import load
    EXERCISES = load(ROOT / "instructor").EXERCISES
    chosen = numbers or list(EXERCISES)
    for number in chosen:
        ex = EXERCISES[number]
        start = time.perf_counter()
        nbformat.write(for_the_book(ex.notebook()), ROOT / "exercises" / ex.filename)
        solution_path = ROOT / "solutions" / ex.filename
        nbformat.write(for_the_book(ex.notebook(solution=True)), solution_path)
        if execute_solutions:
            # the same execution as every other notebook of the book (scripts/execute_notebooks.py)
            _, _, error = execute_notebook(solution_path)
            if error:
                sys.exit(f"{solution_path}: {error}")
        print(f"{number}: exercises/{ex.filename} and solutions/{ex.filename} ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("numbers", nargs="*", help="exercise numbers such as 27.4 (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="write the solutions without running them")
    sys.path.insert(0, str(ROOT))
    from labkit._cli import add_version
    from labkit.grading.material import load
    add_version(parser)
    args = parser.parse_args()
    known = list(load(ROOT / "instructor").EXERCISES)
    unknown = [n for n in args.numbers if n not in known]
    if unknown:
        parser.error(f"unknown exercise(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    build(args.numbers or None, not args.no_execute)
