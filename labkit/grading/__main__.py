"""Command line: ``python -m labkit.grading PATH... [--json] [--csv FILE] [--timeout S] [--workers N]``.

Grades every .ipynb given or found under the given folders and prints a score table (or JSON).
The exit status is 0 when every notebook could be graded, 1 when one could not (a malformed
notebook, a notebook of another exercise), 2 on a usage error.
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def _parser():
    p = argparse.ArgumentParser(prog="labkit-grade", description="Grade labkit exercise notebooks (chapter 27).")
    p.add_argument("paths", nargs="*", metavar="PATH", help="submitted notebooks, or folders searched for *.ipynb")
    p.add_argument("--json", action="store_true", help="print machine-readable results instead of the table")
    p.add_argument("--csv", metavar="FILE", help="also write one row per student to FILE")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds each cell may run (default 60)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="parallel grading processes (default: one per core; 1 grades in this process)")
    p.add_argument("--exercise", metavar="27.K", help="refuse notebooks of any other exercise")
    p.add_argument("--instructor", metavar="DIR",
                   help="folder containing labkit_instructor (default: the installed labkit-instructor)")
    p.add_argument("--export-nbgrader", metavar="DIR",
                   help="write the exercises as an nbgrader source folder into DIR and exit")
    return p


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    from labkit.grading.material import MaterialError, load
    try:
        EXERCISES = load(args.instructor).EXERCISES
    except MaterialError as exc:
        print(f"labkit-grade: {exc}", file=sys.stderr)
        return 2
    if args.export_nbgrader:
        from labkit.grading.nbgrader_export import export
        for path in export(args.export_nbgrader, args.exercise, args.instructor):
            print(path)
        return 0
    if not args.paths:
        parser.print_usage(sys.stderr)
        print("labkit-grade: give at least one notebook or folder to grade", file=sys.stderr)
        return 2
    if args.exercise is not None and args.exercise not in EXERCISES:
        print(f"labkit-grade: unknown exercise {args.exercise!r}; choose from {', '.join(EXERCISES)}", file=sys.stderr)
        return 2
    if args.timeout <= 0:
        print("labkit-grade: --timeout must be positive", file=sys.stderr)
        return 2
    if args.workers is not None and args.workers < 1:
        print("labkit-grade: --workers must be at least 1", file=sys.stderr)
        return 2
    from labkit.grading.grader import find_notebooks, format_table, grade_paths, json_ready, write_csv
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        print(f"labkit-grade: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    if not find_notebooks(args.paths):
        print("labkit-grade: no .ipynb files found", file=sys.stderr)
        return 2
    executor = "serial" if args.workers == 1 else args.workers
    results = grade_paths(args.paths, timeout=args.timeout, exercise=args.exercise, executor=executor,
                          progress=sys.stderr.isatty(), instructor=args.instructor)
    if args.csv:
        write_csv(results, args.csv)
    if args.json:
        print(json.dumps(json_ready(results), indent=2))
    else:
        print(format_table(results), end="")
    return 1 if any(r["error"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
