"""Command line: ``labkit-grade PATH... [--csv FILE] [--jsonl FILE] [--feedback DIR] [--json] [--timeout S]
[--budget S] [--memory MIB] [--processes N] [--workers N] [--exercise 27.K] [--instructor DIR]
[--no-sandbox] [--roster FILE] [--lms canvas|moodle] [--gradebook FORMAT FILE] [--review DIR]
[--manual FILE]``, and two subcommands: ``labkit-grade merge GRADES.csv manual.csv``
(`labkit.grading.manual`) and ``labkit-grade gradescope EXERCISE OUT.zip``
(`labkit.grading.gradescope`).

Grades every .ipynb given or found under the given folders, each in its own sandbox, and prints a
score table (or JSON). Rows are written to the CSV and JSON-lines files as each notebook is done,
and one line per notebook goes to standard error as it finishes (`labkit.grading.course`). The
exit status is 0 when every notebook was graded or reported as not gradable (a malformed notebook,
a notebook of another exercise: its row says why), 1 when the grader itself failed on a notebook,
2 on a usage error or when no sandbox is available.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

NO_SANDBOX_WARNING = ("labkit-grade: WARNING: --no-sandbox: student code runs as you, with your files, "
                      "environment and network; use it only for notebooks you trust")


def _version():
    from importlib import metadata
    try:
        labkit_version = metadata.version("labkit-marl")
    except metadata.PackageNotFoundError:
        labkit_version = "unknown"
    return f"labkit-grade (labkit {labkit_version})"


def _parser():
    p = argparse.ArgumentParser(prog="labkit-grade", description="Grade labkit exercise notebooks, each in a sandbox.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="submitted notebooks, or folders searched for *.ipynb")
    p.add_argument("--json", action="store_true", help="print machine-readable results instead of the table")
    p.add_argument("--csv", metavar="FILE", help="also write one row per student to FILE (as they are graded)")
    p.add_argument("--jsonl", metavar="FILE", help="also write one JSON line per student to FILE (as they are graded)")
    p.add_argument("--feedback", metavar="DIR", help="write a feedback file per student (Markdown and HTML) into DIR")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds each cell may run (default 60)")
    p.add_argument("--budget", type=float, default=600.0, metavar="S",
                   help="seconds one notebook may take in all (default 600)")
    p.add_argument("--memory", type=int, default=2048, metavar="MIB",
                   help="MiB of memory one notebook may use, all its processes together (default 2048)")
    p.add_argument("--processes", type=int, default=64, metavar="N",
                   help="processes and threads one notebook may run at once (default 64)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="notebooks graded at the same time (default: one per core)")
    p.add_argument("--exercise", metavar="27.K", help="refuse notebooks of any other exercise")
    p.add_argument("--instructor", metavar="DIR",
                   help="folder containing labkit_instructor (default: the installed labkit-instructor)")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run student code without the bubblewrap sandbox (trusted notebooks only)")
    p.add_argument("--export-nbgrader", metavar="DIR",
                   help="write the exercises as an nbgrader source folder into DIR and exit")
    from labkit.grading import course
    course.add_arguments(p)
    p.add_argument("--version", action="version", version=_version())
    return p


def _usage_error(args):
    if args.timeout <= 0:
        return "--timeout must be positive"
    if args.budget <= 0:
        return "--budget must be positive"
    if args.workers is not None and args.workers < 1:
        return "--workers must be at least 1"
    from labkit.grading.sandbox import MIN_MEMORY, MIN_PROCESSES, MIB
    if args.memory < MIN_MEMORY // MIB:
        return f"--memory must be at least {MIN_MEMORY // MIB} (MiB; the kernel and its driver need about 300)"
    if args.processes < MIN_PROCESSES:
        return f"--processes must be at least {MIN_PROCESSES} (the kernel alone runs a dozen threads)"
    for option in ("csv", "jsonl"):
        path = getattr(args, option)
        if path is None:
            continue
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path):
            return f"--{option} {path} is a folder; give a file name"
        if not os.path.isdir(folder):
            return f"--{option}: the folder {folder} does not exist"
    if args.feedback is not None and os.path.exists(args.feedback) and not os.path.isdir(args.feedback):
        return f"--feedback {args.feedback} is a file; give a folder (it is created if missing)"
    from labkit.grading import course
    return course.usage_error(args)


def confinement_note(memory_mib):
    """One line for the grader's output when no control group per submission can be made
    (not root, a read-only or absent hierarchy): the limits then apply per process. None when
    control groups are used."""
    from labkit.grading.cgroups import available
    hierarchy, why = available()
    if hierarchy is not None:
        return None
    return (f"labkit-grade: note: no control group per notebook ({why}); memory is limited per process "
            f"({memory_mib} MiB of address space each), not per notebook, and the process count per user")


SUBCOMMANDS = {"merge": ("labkit.grading.manual", "merge_main"),
               "gradescope": ("labkit.grading.gradescope", "main")}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in SUBCOMMANDS and not os.path.exists(argv[0]):     # a folder named merge: ./merge
        import importlib
        module, function = SUBCOMMANDS[argv[0]]
        return getattr(importlib.import_module(module), function)(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    from labkit.grading.material import MaterialError, load
    try:
        mat = load(args.instructor)
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
    if args.exercise is not None and args.exercise not in mat.EXERCISES:
        print(f"labkit-grade: unknown exercise {args.exercise!r}; choose from {', '.join(mat.EXERCISES)}",
              file=sys.stderr)
        return 2
    problem = _usage_error(args)
    if problem:
        print(f"labkit-grade: {problem}", file=sys.stderr)
        return 2
    from labkit.grading.intake import find_notebooks
    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing:
        print(f"labkit-grade: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    if not find_notebooks(args.paths):
        print("labkit-grade: no .ipynb files found", file=sys.stderr)
        return 2
    if args.no_sandbox:
        print(NO_SANDBOX_WARNING, file=sys.stderr)
    else:
        from labkit.grading.sandbox import SandboxUnavailable, check_available
        try:
            check_available()
        except SandboxUnavailable as exc:
            print(f"labkit-grade: refusing to grade: {exc}", file=sys.stderr)
            return 2
    note = confinement_note(args.memory)
    if note:
        print(note, file=sys.stderr)
    return _grade(args, mat)


def _grade(args, mat):
    from labkit.grading import course, manual, report
    from labkit.grading.grader import grade_paths
    from labkit.grading.sandbox import MIB, Limits
    limits = Limits(memory=args.memory * MIB, processes=args.processes)
    logs = []
    try:
        run = course.Course(args, mat)
    except ValueError as exc:               # a class list or manual.csv that cannot be used
        print(f"labkit-grade: {exc}", file=sys.stderr)
        return 2

    def on_start(intakes):
        run.on_start(intakes)
        numbers = [args.exercise] if args.exercise else sorted({i.exercise for i in intakes if i.exercise},
                                                               key=list(mat.EXERCISES).index)
        parts = report.part_columns(exercises=[mat.EXERCISES[n] for n in numbers])
        if args.csv:
            logs.append(report.CsvLog(args.csv, parts, manual.written_columns(mat.EXERCISES[n] for n in numbers)))
        if args.jsonl:
            logs.append(report.JsonLinesLog(args.jsonl))
        if args.feedback:
            logs.append(report.FeedbackWriter(args.feedback))

    def on_result(result):
        run.on_result(result)
        for log in logs:
            log.add(result)

    executor = "serial" if args.workers == 1 else args.workers
    try:
        results = grade_paths(args.paths, timeout=args.timeout, exercise=args.exercise, executor=executor,
                              progress=False, instructor=args.instructor,
                              sandbox=not args.no_sandbox, budget=args.budget, limits=limits, on_start=on_start,
                              on_result=on_result)
    finally:
        for log in logs:
            log.close()
    if args.json:
        print(json.dumps(report.json_ready(results), indent=2))
    else:
        print(report.format_table(results), end="")
    try:
        run.finish(results)
    except (ValueError, OSError) as exc:          # a gradebook that cannot be written as asked
        print(f"labkit-grade: {exc}", file=sys.stderr)
        return 2
    if args.no_sandbox:
        print(NO_SANDBOX_WARNING, file=sys.stderr)
    return 1 if any(r.get("grader_failed") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
