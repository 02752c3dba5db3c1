"""The course around a grading run: class lists, LMS downloads, hand grading, gradebooks, progress.

`labkit.grading.__main__` calls into this module at four points of a run::

    add_arguments(parser)        --roster --lms --gradebook --review --manual
    run = Course(args, mat)      reads the class list and the manual.csv first (bad files stop here)
    run.on_start(intakes)        the LMS of the download; notebooks handed in for another exercise
                                 earn nothing there (labkit.grading.lms); the progress line starts
    run.on_result(result)        hand-graded points merged (labkit.grading.manual); one line per notebook
    run.finish(results)          review pages and manual.csv (labkit.grading.review), gradebooks
                                 (labkit.grading.gradebook)

Progress: one line per notebook on standard error as it finishes, with its score; on a terminal a
progress bar under those lines.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from labkit.grading import gradebook, lms, manual


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the course options to the grading command: ``--roster``, ``--lms``, ``--gradebook``
    (`labkit.grading.gradebook.add_arguments`), ``--review DIR`` and ``--manual FILE``.

    Parameters
    ----------
    parser : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["--review", "review"])
    Namespace(roster=None, lms=None, gradebook=[], review='review', manual=None)
    """
    gradebook.add_arguments(parser)
    parser.add_argument("--review", metavar="DIR", help="write a review page per exercise with every student's "
                        "written answers side by side, and a manual.csv to fill in, into DIR")
    parser.add_argument("--manual", metavar="FILE", help="a filled-in manual.csv: add its hand-graded points to "
                        "the totals, the CSV, the feedback and the gradebooks")


def usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the course options of a command line, or None.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed with the options of `add_arguments`.

    Returns
    -------
    str or None
        A message for the command line.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> usage_error(parser.parse_args(["--manual", "no-such-manual.csv"]))
    '--manual no-such-manual.csv: no such file'
    >>> usage_error(parser.parse_args([])) is None
    True
    """
    problem = gradebook.usage_error(args)
    if problem:
        return problem
    if args.review is not None and os.path.exists(args.review) and not os.path.isdir(args.review):
        return f"--review {args.review} is a file; give a folder (it is created if missing)"
    if args.manual is not None and not os.path.isfile(args.manual):
        return f"--manual {args.manual}: no such file"
    return None


class Course:
    """The state of one run (see the module's docstring).

    Parameters
    ----------
    args : argparse.Namespace
        The grading command's arguments (``paths``, ``exercise`` and those of `add_arguments`).
    mat : module
        The instructor package (its ``EXERCISES``).
    stream : text stream, optional
        Where progress goes; default standard error.

    Raises
    ------
    ValueError
        With a message for the command line, when the class list (`labkit.grading.roster.RosterError`)
        or the manual.csv (`labkit.grading.manual.ManualError`) cannot be used.

    Examples
    --------
    >>> import argparse, io, tempfile
    >>> from types import SimpleNamespace
    >>> mat = SimpleNamespace(EXERCISES={})             # the instructor package's exercises
    >>> stream = io.StringIO()
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     args = argparse.Namespace(paths=[folder], roster=None, lms=None, gradebook=[], review=None,
    ...                               manual=None, exercise=None)
    ...     run = Course(args, mat, stream)
    ...     run.on_start([SimpleNamespace(path="jane.ipynb", exercise="27.4", error=None)])
    ...     run.on_result({"student": "jane", "exercise": "27.4", "score": 5.0, "max_score": 8.0, "seconds": 3})
    ...     run.finish([])
    []
    >>> print(stream.getvalue(), end="")
    labkit-grade: [1/1] jane 27.4 5/8 (3 s)
    """

    def __init__(self, args: argparse.Namespace, mat: Any, stream: TextIO | None = None):
        from labkit.grading import roster as _roster
        self.args, self.mat = args, mat
        self.stream = stream if stream is not None else sys.stderr
        self.roster = _roster.read(args.roster) if args.roster else None
        self.marks = manual.read_marks(args.manual, manual.maxima_of(mat.EXERCISES.values())) if args.manual else {}
        self.roots: dict[str, str | None] = {}
        self.lms: str | None = args.lms
        self.bar: Any = None
        self.done, self.total, self.start = 0, 0, time.monotonic()

    # -------------------------------------------------------- the run

    def on_start(self, intakes: Sequence[Any]) -> None:
        """Before grading: find the LMS of the download, refuse notebooks handed in for another
        exercise (`labkit.grading.lms`), start the progress bar on a terminal.

        Parameters
        ----------
        intakes : sequence of labkit.grading.intake.Intake
            Every notebook as read.

        Examples
        --------
        >>> import argparse, io, tempfile
        >>> from types import SimpleNamespace
        >>> mat = SimpleNamespace(EXERCISES={})             # the instructor package's exercises
        >>> stream = io.StringIO()
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     args = argparse.Namespace(paths=[folder], roster=None, lms=None, gradebook=[], review=None,
        ...                               manual=None, exercise=None)
        ...     run = Course(args, mat, stream)
        ...     run.on_start([SimpleNamespace(path="jane.ipynb", exercise="27.4", error=None)])
        ...     run.on_result({"student": "jane", "exercise": "27.4", "score": 5.0, "max_score": 8.0, "seconds": 3})
        ...     run.finish([])
        []
        """
        from labkit.grading.intake import find_notebooks
        self.roots = {str(p): (str(r) if r is not None else None) for p, r in find_notebooks(self.args.paths)}
        if self.lms is None:
            self.lms = lms.detect([(i.path, self.roots.get(i.path)) for i in intakes])
        handed_in_for = lms.assignments(intakes, self.roots, self.mat.EXERCISES, self.lms, self.args.exercise)
        for intake in lms.refuse_wrong_exercise(intakes, handed_in_for, self.mat.EXERCISES):
            self._say(f"note: {intake.path} is a notebook of another exercise, handed in for {intake.exercise}: "
                      "it earns nothing there")
        self.total = len(intakes)
        if self.stream.isatty() and self.total:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=self.total, desc="grading", unit="notebook", file=self.stream)

    def on_result(self, result: dict[str, Any]) -> None:
        """One notebook graded: add its hand-graded points (`labkit.grading.manual.apply`), say
        its `progress_line`.

        Parameters
        ----------
        result : dict
            The notebook's result (changed in place when there are hand-graded points).

        Examples
        --------
        >>> import argparse, io, tempfile
        >>> from types import SimpleNamespace
        >>> mat = SimpleNamespace(EXERCISES={})             # the instructor package's exercises
        >>> stream = io.StringIO()
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     args = argparse.Namespace(paths=[folder], roster=None, lms=None, gradebook=[], review=None,
        ...                               manual=None, exercise=None)
        ...     run = Course(args, mat, stream)
        ...     run.on_start([SimpleNamespace(path="jane.ipynb", exercise="27.4", error=None)])
        ...     run.on_result({"student": "jane", "exercise": "27.4", "score": 5.0, "max_score": 8.0, "seconds": 3})
        ...     run.finish([])
        []
        >>> stream.getvalue().rstrip().endswith("jane 27.4 5/8 (3 s)")
        True
        """
        if self.marks:
            manual.apply(result, self.marks)
        self.done += 1
        self._say(progress_line(result, self.done, self.total))
        if self.bar is not None:
            self.bar.update(1)

    def finish(self, results: Sequence[dict[str, Any]]) -> list[Path]:
        """Write the review pages, the manual.csv and the gradebooks that were asked for, and
        note marks of the manual.csv that match no notebook graded in this run.

        Parameters
        ----------
        results : sequence of dict
            Every result of the run.

        Returns
        -------
        list of pathlib.Path
            The files written.

        Examples
        --------
        >>> import argparse, io, tempfile
        >>> from types import SimpleNamespace
        >>> mat = SimpleNamespace(EXERCISES={})             # the instructor package's exercises
        >>> stream = io.StringIO()
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     args = argparse.Namespace(paths=[folder], roster=None, lms=None, gradebook=[], review=None,
        ...                               manual=None, exercise=None)
        ...     run = Course(args, mat, stream)
        ...     run.on_start([SimpleNamespace(path="jane.ipynb", exercise="27.4", error=None)])
        ...     run.on_result({"student": "jane", "exercise": "27.4", "score": 5.0, "max_score": 8.0, "seconds": 3})
        ...     run.finish([])
        []
        """
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        written = []
        if self.marks:
            ids = {(r.get("student_id", r["student"]), w["part"]) for r in results for w in r.get("written", [])}
            for (student, part), mark in sorted(self.marks.items(), key=lambda kv: kv[1].line):
                if (student, part) not in ids:
                    self._say(f"note: {self.args.manual}, line {mark.line}: {student} / {part} matches no notebook "
                              "graded in this run")
        if self.args.review:
            from labkit.grading import review
            written += review.write(results, self.args.review, self.mat.EXERCISES)
        written += gradebook.write_requested(self.args, results, self.mat.EXERCISES, self.roots)
        for path in written:
            self._say(f"wrote {path}")
        return written

    def _say(self, line):
        from labkit.grading.report import clean
        line = "labkit-grade: " + clean(line, 400)
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)


def progress_line(result: dict[str, Any], done: int, total: int) -> str:
    """``[3/8] ann 27.4 5/5 (12 s)``: one finished notebook, with its score.

    Parameters
    ----------
    result : dict
        The notebook's result.
    done, total : int
        How many notebooks are finished, of how many.

    Returns
    -------
    str
        With the written parts' points (or "by hand" while they are pending), "flagged", or
        why the notebook was not gradable.

    Examples
    --------
    >>> progress_line({"student": "ann", "exercise": "27.4", "score": 5, "max_score": 5, "seconds": 12}, 3, 8)
    '[3/8] ann 27.4 5/5 (12 s)'
    >>> progress_line({"student": "bo", "status": "not gradable", "error": "not a notebook"}, 4, 8)
    '[4/8] bo ? not gradable: not a notebook'
    """
    from labkit.grading.report import clean
    width = len(str(total))
    head = f"[{done:0{width}}/{total}] {clean(result.get('student_id', result['student']), 60)}"
    seconds = f"({result.get('seconds', 0):.0f} s)"
    if result.get("grader_failed"):
        return f"{head} grader failed: {clean(result.get('error'), 200)} {seconds}"
    if result.get("status") == "not gradable" or result.get("error"):
        return f"{head} {result.get('exercise') or '?'} not gradable: {clean(result.get('error'), 200)}"
    total_points, total_max = manual.totals(result)
    line = f"{head} {result['exercise']} {result['score']:g}/{result['max_score']:g}"
    if result.get("written"):
        line += f" (+ written {result.get('written_score', 0):g}/{total_max - result['max_score']:g}" \
                + (")" if "written_score" in result and not result.get("manual_pending") else ", by hand)")
    if result.get("status") == "flagged":
        line += " flagged"
    return f"{line} {seconds}"
