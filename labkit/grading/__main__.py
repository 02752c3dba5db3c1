"""Command line: ``labkit-grade PATH... [--out DIR] [--csv FILE] [--jsonl FILE] [--feedback DIR] [--resume]
[--json] [--timeout S] [--budget S] [--memory MIB] [--processes N] [--cpus N] [--workers N] [--exercise 27.K]
[--instructor DIR] [--no-sandbox] [--roster FILE] [--lms canvas|moodle] [--gradebook FORMAT FILE]
[--review DIR] [--manual FILE]``, and two subcommands: ``labkit-grade merge GRADES.csv manual.csv``
(`labkit.grading.manual`) and ``labkit-grade gradescope EXERCISE OUT.zip``
(`labkit.grading.gradescope`).

Grades every .ipynb given or found under the given folders, each in its own sandbox, and prints a
score table (or JSON); one line per notebook goes to standard error as it finishes
(`labkit.grading.course`). ``--out DIR`` puts every output in one folder (``grades.csv``,
``grades.jsonl``, ``feedback/``); ``--csv``, ``--jsonl`` and ``--feedback`` choose files of their
own. The output folder (``--out``, else the folder of the CSV, the JSON lines or the feedback
folder) also holds the run journal (`labkit.grading.journal`), which records each notebook as it
is done, and, when some submissions have the same answers, ``labkit-grade-similarity.csv`` (for
the instructor; students' feedback never names anyone else).

``--resume`` grades only what the journal does not already hold (new or changed notebooks,
those not reached, parts a busy machine could not time) and keeps the other rows. Ctrl-C (or
SIGTERM) stops every sandbox, writes every finished row and the tables, and prints the command
that resumes. A disk that fills up ends the run with a message naming the file that could not
be written; the journal stays whole.

The exit status is 0 when every notebook was graded or reported as not gradable (a malformed
notebook, a notebook of another exercise: its row says why), 1 when the grader itself failed on
a notebook or a grade is not final (a part a busy machine could not time: ``--resume`` grades it
again), 2 on a usage error or when no sandbox is available, 3 when an output could not be
written (a full disk), 130 when interrupted.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import sys

# As in the driver (labkit/grading/driver.py): jsonschema, which nbformat validates with, would
# import rfc3987_syntax, which compiles an IRI grammar as it loads (about 2-3 CPU seconds at every
# start of this command) for a format no notebook schema uses. This command is a process of its own.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: "not importable"

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
    p.add_argument("--out", metavar="DIR",
                   help="write grades.csv, grades.jsonl, feedback/ and the run journal into DIR")
    p.add_argument("--csv", metavar="FILE", help="also write one row per student to FILE")
    p.add_argument("--jsonl", metavar="FILE", help="also write one JSON line per student to FILE (as they are graded)")
    p.add_argument("--feedback", metavar="DIR", help="write a feedback file per student (Markdown and HTML) into DIR")
    p.add_argument("--resume", action="store_true",
                   help="keep the rows the output folder's journal already holds; grade only the rest")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="CPU seconds each cell may use (default 60; time spent waiting for a busy machine is free)")
    p.add_argument("--budget", type=float, default=600.0, metavar="S",
                   help="CPU seconds one notebook may use in all (default 600)")
    p.add_argument("--cpus", type=float, default=1.0, metavar="N",
                   help="CPUs one notebook may use at once, where control groups exist (default 1)")
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
    p.add_argument("--site-url", metavar="URL",
                   help="with --export-nbgrader: the published book's address, such as https://ORG.github.io/REPO, "
                        "which the links to its chapters point to (default: $LABKIT_SITE_URL, else plain text)")
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
    if not args.cpus >= 0.01:
        return "--cpus must be at least 0.01"
    if args.out is not None and os.path.exists(args.out) and not os.path.isdir(args.out):
        return f"--out {args.out} is a file; give a folder (it is created if missing)"
    if args.resume and output_folder(args) is None:
        return "--resume needs an output folder with a journal: give --out DIR (or the --csv of the run to resume)"
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


def output_folder(args):
    """The folder of the journal: --out, else that of --csv, --jsonl or --feedback (None: none given)."""
    if args.out:
        return args.out
    for path in (args.csv, args.jsonl):
        if path:
            return os.path.dirname(os.path.abspath(path))
    if args.feedback:
        return os.path.dirname(os.path.abspath(args.feedback.rstrip(os.sep)))
    return None


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
    if args.site_url is not None and not args.export_nbgrader:
        print("labkit-grade: --site-url is for --export-nbgrader (the links of the exported notebooks)",
              file=sys.stderr)
        return 2
    if args.export_nbgrader:
        from labkit.grading.nbgrader_export import SITE_VARIABLE, export, site_url_error
        # the flag, else the environment variable
        site_url, where = args.site_url, "--site-url"
        if site_url is None:
            site_url, where = os.environ.get(SITE_VARIABLE) or None, SITE_VARIABLE
        problem = site_url_error(site_url)
        if problem:
            print(f"labkit-grade: {where} {site_url!r}: {problem}", file=sys.stderr)
            return 2
        for path in export(args.export_nbgrader, args.exercise, args.instructor, site_url=site_url or ""):
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
        from labkit.grading.material import location
        from labkit.grading.sandbox import SandboxUnavailable, check_available
        try:
            check_available([location(mat)])
        except SandboxUnavailable as exc:
            print(f"labkit-grade: refusing to grade: {exc}", file=sys.stderr)
            return 2
    note = confinement_note(args.memory)
    if note:
        print(note, file=sys.stderr)
    return _grade(args, mat, argv)


SIMILARITY_NAME = "labkit-grade-similarity.csv"
INTERRUPTED, OUTPUT_FAILED = 130, 3


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM and SIGHUP end the run the way Ctrl-C does (finished rows written, resume line)."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    saved = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            saved[signum] = signal.signal(signum, interrupt)
        except ValueError:             # not the main thread: leave signals alone
            pass
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


class _Outputs:
    """Where this run writes: the journal, JSON lines and feedback as each notebook is done; the
    CSV, the JSON lines again (complete, in path order) and the similarity report at the end."""

    def __init__(self, args, argv):
        from labkit.grading import report
        from labkit.grading.journal import Journal
        self.report, self.args = report, args
        out = args.out
        self.csv = args.csv or (os.path.join(out, "grades.csv") if out else None)
        self.jsonl = args.jsonl or (os.path.join(out, "grades.jsonl") if out else None)
        self.feedback = args.feedback or (os.path.join(out, "feedback") if out else None)
        self.folder = output_folder(args)
        self.command = ["labkit-grade", *[a for a in argv if a != "--resume"], "--resume"]
        self.journal = self.lines = self.writer = None
        self.journal = (Journal(self.folder, resume=args.resume, command=["labkit-grade", *argv])
                        if self.folder else None)
        try:
            self.lines = report.JsonLinesLog(self.jsonl) if self.jsonl else None
            self.writer = report.FeedbackWriter(self.feedback) if self.feedback else None
        except BaseException:
            self.close()
            raise

    def add(self, result):
        if self.lines is not None:
            self.lines.add(result)
        if self.writer is not None:
            self.writer.add(result)

    def tables(self, results, exercises):
        """The CSV, the complete JSON lines and (if any) the similarity report, each a new file."""
        from labkit.grading.outputs import write_new
        if self.lines is not None:
            self.lines.close()
            self.lines = None
            write_new(self.jsonl, self.report.jsonl_text(results))
        if self.csv:
            self.report.write_csv(results, self.csv, exercises)
        if self.folder and self.report.similarity_rows(results):
            write_new(os.path.join(self.folder, SIMILARITY_NAME), self.report.similarity_text(results))

    def close(self):
        for log in (self.lines, self.journal):
            if log is not None:
                log.close()

    def resume_line(self):
        return f"to go on where this run stopped: {shlex.join(self.command)}"


def _exercises(args, mat, results):
    numbers = [args.exercise] if args.exercise else sorted({r["exercise"] for r in results if r.get("exercise")},
                                                           key=list(mat.EXERCISES).index)
    return [mat.EXERCISES[n] for n in numbers if n in mat.EXERCISES]


def _grade(args, mat, argv):
    from labkit.grading import course, report
    from labkit.grading.grader import GradingInterrupted, finish, grade_paths, is_final
    from labkit.grading.journal import JournalBusy
    from labkit.grading.outputs import OutputError
    from labkit.grading.sandbox import MIB, Limits
    limits = Limits(memory=args.memory * MIB, processes=args.processes, cpus=args.cpus)
    try:
        run = course.Course(args, mat)
    except ValueError as exc:               # a class list or manual.csv that cannot be used
        print(f"labkit-grade: {exc}", file=sys.stderr)
        return 2
    try:
        outputs = _Outputs(args, argv)
    except JournalBusy as exc:
        print(f"labkit-grade: {exc}", file=sys.stderr)
        return 2
    except OutputError as exc:
        print(f"labkit-grade: {'the disk is full: ' if exc.disk_full else ''}{exc}", file=sys.stderr)
        return OUTPUT_FAILED

    def on_result(result):
        run.on_result(result)               # hand-graded points merged, the progress line
        outputs.add(result)

    executor = "serial" if args.workers == 1 else args.workers
    stopped = None
    try:
        with _terminate_as_interrupt():
            try:
                results = grade_paths(args.paths, timeout=args.timeout, exercise=args.exercise, executor=executor,
                                      progress=False, instructor=args.instructor,
                                      sandbox=not args.no_sandbox, budget=args.budget, limits=limits,
                                      on_start=run.on_start, on_read=run.on_read if run.reads_first else None,
                                      on_result=on_result, journal=outputs.journal)
            except (GradingInterrupted, OutputError) as exc:
                stopped = exc
                results = [r for r in finish(getattr(exc, "results", None) or [], mat) if r is not None]
            try:
                outputs.tables(results, _exercises(args, mat, results))
            except OutputError as exc:
                stopped = stopped if isinstance(stopped, OutputError) else exc
    finally:
        outputs.close()
        run.close()
    if args.json:
        print(json.dumps(report.json_ready(results), indent=2))
    else:
        print(report.format_table(results) if results else "", end="")
    if stopped is None:
        try:
            run.finish(results)
        except (ValueError, OSError) as exc:          # a gradebook that cannot be written as asked
            print(f"labkit-grade: {exc}", file=sys.stderr)
            return 2
    if args.no_sandbox:
        print(NO_SANDBOX_WARNING, file=sys.stderr)
    if isinstance(stopped, OutputError):
        kept = (f"; the {outputs.journal.recorded} notebooks graded are in {outputs.journal.path}"
                if outputs.journal else "")
        full = "the disk is full: " if stopped.disk_full else ""
        print(f"labkit-grade: stopped: {full}{stopped}{kept}. Free some space, then "
              f"{outputs.resume_line() if outputs.journal else 'run it again'}", file=sys.stderr)
        return OUTPUT_FAILED
    if stopped is not None:
        print(f"labkit-grade: interrupted: {len(results)} of {len(stopped.results)} notebooks finished, their rows "
              f"are written. {outputs.resume_line() if outputs.journal else 'Give --out DIR to be able to resume.'}",
              file=sys.stderr)
        return INTERRUPTED
    unfinished = [r for r in results if not is_final(r)]
    if unfinished:
        print(f"labkit-grade: {len(unfinished)} notebooks are not graded for good (the machine was too busy, or the "
              f"grader failed on them); {outputs.resume_line() if outputs.journal else 'grade them again'}",
              file=sys.stderr)
    return 1 if any(r.get("grader_failed") or not is_final(r) for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
