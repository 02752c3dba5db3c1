"""The course around a grading run: class lists, LMS downloads, hand grading, gradebooks, progress.

`labkit.grading.__main__` calls into this module at four points of a run::

    add_arguments(parser)        --roster --lms --gradebook --review --manual
    run = Course(args, mat)      reads the class list and the manual.csv first (bad files stop here);
                                 the LMS of the download (from the notebooks' paths)
    run.on_start(entries)        the notebooks found (not yet read): the progress line starts
    run.on_read(intakes)         only when ``run.reads_first`` (folders that name an exercise, or an LMS
                                 download): every notebook as read; those handed in for another
                                 exercise earn nothing there (labkit.grading.lms)
    run.on_result(result)        hand-graded points merged (labkit.grading.manual); one line per notebook
    run.finish(results)          review pages and manual.csv (labkit.grading.review), gradebooks
                                 (labkit.grading.gradebook)
    run.close()                  the progress bar ends (also when the run was stopped)

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
    """Add the course options to ``labkit-grade``'s parser: those of `labkit.grading.gradebook`
    (``--roster``, ``--lms``, ``--gradebook``), ``--review DIR`` and ``--manual FILE``.

    Parameters
    ----------
    parser : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["--review", "pages"]).review
    'pages'
    """
    gradebook.add_arguments(parser)
    parser.add_argument("--review", metavar="DIR", help="write a review page per exercise with every student's "
                        "written answers side by side, and a manual.csv to fill in, into DIR")
    parser.add_argument("--manual", metavar="FILE", help="a filled-in manual.csv: add its hand-graded points to "
                        "the totals, the CSV, the feedback and the gradebooks")


def usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the course options, for the command line (None: nothing).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed with the options of `add_arguments`.

    Returns
    -------
    str or None
        The message, naming the option.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> usage_error(parser.parse_args([])) is None
    True
    >>> usage_error(parser.parse_args(["--manual", "no-such-manual.csv"]))
    '--manual no-such-manual.csv: no such file'
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
        ``labkit-grade``'s arguments: the options of `add_arguments`, ``paths`` and ``exercise``.
    mat : module
        The instructor's material (`labkit.grading.material`); its ``EXERCISES``.
    stream : text file, optional
        Where progress goes (default standard error).

    Raises
    ------
    ValueError
        With a message for the command line, when the class list or the manual.csv cannot be used.

    Examples
    --------
    >>> import argparse, io, types
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> _ = parser.add_argument("paths", nargs="*"), parser.add_argument("--exercise")
    >>> materials = types.SimpleNamespace(EXERCISES={})            # the instructor's material: no exercise
    >>> run = Course(parser.parse_args([]), materials, stream=io.StringIO())
    >>> run.on_start(["ann.ipynb", "bob.ipynb"])
    >>> run.on_result({"student": "ann", "exercise": "27.4", "score": 5, "max_score": 5, "seconds": 12})
    >>> run.stream.getvalue()
    'labkit-grade: [1/2] ann 27.4 5/5 (12 s)\\n'
    >>> run.finish([])                                   # no review or gradebook asked for
    []
    """

    def __init__(self, args: argparse.Namespace, mat: Any, stream: TextIO | None = None):
        from labkit.grading import roster as _roster
        from labkit.grading.intake import find_notebooks
        self.args, self.mat = args, mat
        self.stream = stream if stream is not None else sys.stderr
        self.roster = _roster.read(args.roster) if args.roster else None
        self.marks = manual.read_marks(args.manual, manual.maxima_of(mat.EXERCISES.values())) if args.manual else {}
        found = find_notebooks(args.paths) if args.paths else []
        self.roots = {str(p): (str(r) if r is not None else None) for p, r in found}
        self.lms = args.lms if args.lms is not None else lms.detect(found)
        self.bar, self.done, self.total, self.start = None, 0, 0, time.monotonic()

    @property
    def reads_first(self) -> bool:
        """Whether the run must know every notebook's exercise before grading any: some notebook
        was handed in for an assignment -- under a folder that names an exercise, or in an LMS
        download, which is one assignment, the exercise most of it is
        (`labkit.grading.lms.assignments`) -- and one of another exercise earns nothing there.
        Otherwise (and with --exercise, which take_in enforces) each notebook is read as it is graded.

        Examples
        --------
        >>> import argparse, io, types
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> _ = parser.add_argument("paths", nargs="*"), parser.add_argument("--exercise")
        >>> materials = types.SimpleNamespace(EXERCISES={})            # the instructor's material: no exercise
        >>> Course(parser.parse_args([]), materials, stream=io.StringIO()).reads_first   # no notebook
        False
        """
        if self.args.exercise is not None:
            return False
        for path, root in self.roots.items():
            if root is None:
                continue
            if lms.assignment_folder(path, root, self.mat.EXERCISES)[1] is not None:
                return True
            if self.lms is not None and lms.identity(path, root, self.lms).lms == self.lms:
                return True
        return False

    # -------------------------------------------------------- the run

    def on_start(self, entries: Sequence[Any]) -> None:
        """The notebooks found, not yet read (`labkit.grading.grader.listing`): the count the
        progress lines show, and on a terminal the progress bar.

        Parameters
        ----------
        entries : sequence
            One entry per notebook.

        Examples
        --------
        >>> import argparse, io, types
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> _ = parser.add_argument("paths", nargs="*"), parser.add_argument("--exercise")
        >>> materials = types.SimpleNamespace(EXERCISES={})            # the instructor's material: no exercise
        >>> run = Course(parser.parse_args([]), materials, stream=io.StringIO())
        >>> run.on_start(["ann.ipynb", "bob.ipynb", "cy.ipynb"])
        >>> run.total, run.bar is None                   # not a terminal: no bar
        (3, True)
        """
        self.total = len(entries)
        if self.stream.isatty() and self.total:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=self.total, desc="grading", unit="notebook", file=self.stream)

    def on_read(self, intakes: list[Any]) -> None:
        """Every notebook as read, before any is graded: those handed in for another exercise
        are made not gradable (in place), with a note on the progress stream.

        Parameters
        ----------
        intakes : list of labkit.grading.intake.Intake

        Examples
        --------
        >>> import argparse, io, types
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> _ = parser.add_argument("paths", nargs="*"), parser.add_argument("--exercise")
        >>> materials = types.SimpleNamespace(EXERCISES={})            # the instructor's material: no exercise
        >>> run = Course(parser.parse_args([]), materials, stream=io.StringIO())
        >>> run.on_read([])
        >>> run.stream.getvalue()
        ''
        """
        handed_in_for = lms.assignments(intakes, self.roots, self.mat.EXERCISES, self.lms, self.args.exercise)
        for intake in lms.refuse_wrong_exercise(intakes, handed_in_for, self.mat.EXERCISES):
            self._say(f"note: {intake.path} is a notebook of another exercise, handed in for {intake.exercise}: "
                      "it earns nothing there")

    def on_result(self, result: dict[str, Any]) -> None:
        """One notebook graded: its hand-graded points merged (``--manual``), its progress line
        written, the bar moved on.

        Parameters
        ----------
        result : dict
            The notebook's result (`labkit.grading.grader`); changed in place by the marks.

        Examples
        --------
        >>> import argparse, io, types
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> _ = parser.add_argument("paths", nargs="*"), parser.add_argument("--exercise")
        >>> materials = types.SimpleNamespace(EXERCISES={})            # the instructor's material: no exercise
        >>> run = Course(parser.parse_args([]), materials, stream=io.StringIO())
        >>> run.on_start(["ann.ipynb"])
        >>> run.on_result({"student": "ann", "exercise": "27.4", "score": 3, "max_score": 5, "seconds": 4})
        >>> run.done, run.stream.getvalue()
        (1, 'labkit-grade: [1/1] ann 27.4 3/5 (4 s)\\n')
        """
        if self.marks:
            manual.apply(result, self.marks)
        self.done += 1
        self._say(progress_line(result, self.done, self.total))
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        """End the progress bar, if there is one (also when the run was stopped); idempotent.

        Examples
        --------
        >>> import argparse, io, types
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> _ = parser.add_argument("paths", nargs="*"), parser.add_argument("--exercise")
        >>> materials = types.SimpleNamespace(EXERCISES={})            # the instructor's material: no exercise
        >>> run = Course(parser.parse_args([]), materials, stream=io.StringIO())
        >>> run.close()
        >>> run.close()
        >>> run.bar is None
        True
        """
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def finish(self, results: list[dict[str, Any]]) -> list[Path]:
        """Write the review pages, the manual.csv and the gradebooks that were asked for, and note
        the marks of ``--manual`` that match no notebook of the run.

        Parameters
        ----------
        results : list of dict
            Every notebook's result.

        Returns
        -------
        list of pathlib.Path
            The paths written.

        Examples
        --------
        >>> import tempfile, os
        >>> import argparse, io, types
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> _ = parser.add_argument("paths", nargs="*"), parser.add_argument("--exercise")
        >>> materials = types.SimpleNamespace(EXERCISES={})            # the instructor's material: no exercise
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     run = Course(parser.parse_args(["--review", os.path.join(folder, "review")]), materials,
        ...                  stream=io.StringIO())
        ...     written = run.finish([])
        ...     print([os.path.relpath(path, folder) for path in written])
        ['review/manual.csv']
        """
        self.close()
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
        The notebook's result (`labkit.grading.grader`).
    done : int
        How many notebooks are finished, this one included.
    total : int
        How many the run has.

    Returns
    -------
    str

    Examples
    --------
    >>> progress_line({"student": "ann", "exercise": "27.4", "score": 5, "max_score": 5, "seconds": 12}, 3, 8)
    '[3/8] ann 27.4 5/5 (12 s)'
    >>> progress_line({"student": "bob", "exercise": None, "status": "not gradable",
    ...                "error": "not a notebook"}, 4, 8)
    '[4/8] bob ? not gradable: not a notebook'
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
