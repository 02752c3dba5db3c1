"""Gradebook files an LMS imports as they are: one row per student, one column per exercise.

``labkit-grade ... --gradebook FORMAT FILE`` (repeatable) writes, after grading:

* ``canvas``: Canvas's gradebook import (Grades > Import). The header is ``Student, ID,
  SIS User ID, SIS Login ID, Section``, then one column per exercise; the second row is
  ``Points Possible``. Canvas finds the student by ``ID`` (the user id in its download names, or
  the class list's), else by the SIS ids, else by name. An assignment column keeps the header of
  the gradebook export given as ``--roster`` (``Lab 15 (12345)``: Canvas fills assignment 12345);
  without one it is headed by the exercise's title, which Canvas offers to create as a new
  assignment.
* ``moodle``: Moodle's gradebook import (Grades > Import > CSV file): ``Full name, Email address,
  ID number, Username``, then per exercise a grade column and a feedback column. In the import,
  map one of the three identifiers to the same field of Moodle's users, and each grade and
  feedback column to its grade item (whose maximum should be the exercise's, printed in the
  generic file). The identifiers come from the class list (``--roster``, e.g. Moodle's own
  gradebook export).
* ``moodle-worksheet``: the grading worksheet of one Moodle assignment (assignment > Upload grading
  worksheet): ``Identifier`` ("Participant 12345", from the download's folder names), ``Full
  name``, ``Email address``, ``Grade``, ``Maximum Grade``, ``Last modified (grade)``, ``Feedback
  comments``; no class list needed. One file per exercise (``FILE`` itself when there is one).
* ``generic``: ``student_id, name, id, email, login, section``, then per exercise its points, its
  maximum and its percent, then the same over all exercises.

A score is the automatic points plus the hand-graded ones merged in (`labkit.grading.manual`); the
maximum includes the written parts. A notebook that could not be graded leaves its cell empty (an
empty cell changes nothing in Canvas or Moodle; a 0 would be a failing grade), and so does a student
of the class list who handed nothing in. When one student has several notebooks of one exercise, the
best graded one counts (and the command line says so).
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labkit.grading import lms as _lms
from labkit.grading import manual as _manual

if TYPE_CHECKING:
    from labkit.grading.roster import Person

FORMATS = ("canvas", "moodle", "moodle-worksheet", "generic")
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["Full name", "Email address", "ID number", "Username"]
WORKSHEET_COLUMNS = ["Identifier", "Full name", "Email address", "Grade", "Maximum Grade", "Last modified (grade)",
                     "Feedback comments"]
GENERIC_COLUMNS = ["student_id", "name", "id", "email", "login", "section"]


class GradebookError(ValueError):
    """A gradebook that cannot be written as asked; the message says why and what to give.

    Examples
    --------
    >>> try:
    ...     write("generic", "grades.csv", [], {})
    ... except GradebookError as error:
    ...     print(error)
    no notebook of a known exercise was found, so there is nothing to put in a gradebook
    """


# ------------------------------------------------------------ options


def add_arguments(parser: argparse.ArgumentParser, grading: bool = True) -> None:
    """The options of rosters, LMS names and gradebooks (on the grading command and on merge):
    ``--roster FILE``, ``--lms {canvas,moodle}``, ``--gradebook FORMAT FILE`` (repeatable).

    Parameters
    ----------
    parser : argparse.ArgumentParser
    grading : bool, default True
        Whether the command grades (the grading command) or merges (``labkit-grade merge``);
        the options are the same.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["--gradebook", "canvas", "canvas.csv", "--lms", "canvas"])
    Namespace(roster=None, lms='canvas', gradebook=[['canvas', 'canvas.csv']])
    """
    parser.add_argument("--roster", metavar="FILE", help="the class list: a Canvas or Moodle export as it is, or a "
                        "CSV with name and id, email or login columns")
    parser.add_argument("--lms", choices=_lms.LMS_NAMES, help="read the file and folder names as this LMS's "
                        "download gives them (default: detected)")
    parser.add_argument("--gradebook", nargs=2, action="append", metavar=("FORMAT", "FILE"), default=[],
                        help=f"also write a gradebook FILE in FORMAT ({', '.join(FORMATS)}); repeatable")


def usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the gradebook options of a command line, or None: an unknown format, a
    folder given as the file, a file in a folder that does not exist, a missing class list.

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
    >>> usage_error(parser.parse_args(["--gradebook", "excel", "grades.xlsx"]))
    '--gradebook excel: unknown format; choose from canvas, moodle, moodle-worksheet, generic'
    """
    for fmt, path in args.gradebook:
        if fmt not in FORMATS:
            return f"--gradebook {fmt}: unknown format; choose from {', '.join(FORMATS)}"
        if os.path.isdir(path):
            return f"--gradebook {fmt} {path} is a folder; give a file name"
        if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            return f"--gradebook {fmt} {path}: the folder {os.path.dirname(os.path.abspath(path))} does not exist"
    if getattr(args, "roster", None) and not os.path.isfile(args.roster):
        return f"--roster {args.roster}: no such file"
    return None


# ------------------------------------------------------------ students


@dataclass
class StudentRow:
    """One student of the gradebook: who, and their result per exercise.

    Attributes
    ----------
    key : str
        ``roster:<line>``, ``canvas:<user id>``, ``moodle:<participant id>`` or ``id:<student id>``.
    identity : labkit.grading.lms.Identity or None
        What the name of their (first) notebook says.
    person : labkit.grading.roster.Person or None
        Their entry in the class list, when it has them.
    student_id : str
        The grader's id of their first notebook.
    results : dict {exercise: result}
        The result that counts, per exercise.
    notes : list of str
        For the instructor (several notebooks of one exercise, a notebook of no exercise).

    Examples
    --------
    >>> StudentRow("id:jane", student_id="jane").name
    'jane'
    """
    key: str
    identity: _lms.Identity | None = None          # labkit.grading.lms.Identity of their (first) notebook
    person: Person | None = None            # labkit.grading.roster.Person, when the class list has them
    student_id: str = ""
    results: dict[str, Any] = field(default_factory=dict)      # {exercise: result}
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The name the gradebook shows: the class list's, else the LMS's (Moodle's full name,
        Canvas's squashed sortable name), else the student id.

        Examples
        --------
        >>> from labkit.grading.roster import Person
        >>> StudentRow("roster:2", person=Person(name="Jane Smith"), student_id="jsmith").name
        'Jane Smith'
        """
        if self.person is not None and self.person.name:
            return self.person.name
        if self.identity is not None and self.identity.lms is not None and self.identity.name:
            return self.identity.name          # Moodle's full name, Canvas's squashed sortable name
        return self.student_id


def _better(a, b):
    """Whether result `a` should count rather than `b` (graded beats not gradable, then more points)."""
    ta, tb = _manual.totals(a)[0], _manual.totals(b)[0]
    if ta is None:
        return False
    return tb is None or ta > tb


def student_rows(results: Iterable[Mapping[str, Any]], roots: Mapping[str, str | None] | None = None,
                 lms: str | None = None, roster: Any = None) -> tuple[list[StudentRow], list[Mapping[str, Any]]]:
    """The results grouped by student.

    A student is the class list's person when the list names them, else the LMS user (Canvas
    user id, Moodle participant id), else the submission's id. With several notebooks of one
    exercise the best counts (graded beats not gradable, then more points). The class list's
    students who handed in nothing get a row without results.

    Parameters
    ----------
    results : iterable of dict
        The results of a run (``path``, ``student``, ``exercise``, scores).
    roots : mapping {path: root folder or None}, optional
        The folder each notebook was found under (`labkit.grading.lms.identity`).
    lms : {"canvas", "moodle"} or None
        How to read the download names.
    roster : labkit.grading.roster.Roster, optional
        The class list.

    Returns
    -------
    (list of StudentRow, list of dict)
        The rows, and the results the class list does not name.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"27.4": SimpleNamespace(number="27.4", title="Regret", written_points={})}
    >>> results = [{"student": "jane", "path": "smithjane_4321_999_27_4.ipynb", "exercise": "27.4", "score": 6.0,
    ...             "max_score": 8.0, "parts": [{"part": "27.4(b)", "points": 0.0, "max_points": 2.0}]},
    ...            {"student": "bo", "path": "bo.ipynb", "exercise": "27.4", "status": "not gradable",
    ...             "error": "not a notebook", "score": None, "max_score": 8.0}]
    >>> students, unmatched = student_rows(results)
    >>> [(s.key, s.name) for s in students], unmatched
    ([('canvas:4321', 'smithjane'), ('id:bo', 'bo')], [])
    """
    roots = roots or {}
    rows: dict[str, StudentRow] = {}
    unmatched: list[Mapping[str, Any]] = []
    for r in results:
        ident = _lms.identity(r["path"], roots.get(r["path"]), lms)
        person = roster.match(ident, r.get("student_id", r["student"])) if roster is not None else None
        if roster is not None and person is None:
            unmatched.append(r)
        if person is not None:
            key = f"roster:{person.row}"
        elif ident.user_id:
            key = f"canvas:{ident.user_id}"
        elif ident.participant:
            key = f"moodle:{ident.participant}"
        else:
            key = f"id:{r.get('student_id', r['student'])}"
        row = rows.setdefault(key, StudentRow(key, ident, person, r.get("student_id", r["student"])))
        number = r.get("exercise")
        if number is None:
            row.notes.append(f"{r['path']}: not an exercise notebook")
            continue
        if number in row.results:
            keep = r if _better(r, row.results[number]) else row.results[number]
            row.notes.append(f"{row.name} has several notebooks of {number}; the best one counts ({keep['path']})")
            row.results[number] = keep
        else:
            row.results[number] = r
    if roster is not None:                  # the class list's students who handed in nothing
        present = {row.person.row for row in rows.values() if row.person is not None}
        for person in roster.people:
            if person.row not in present:
                rows[f"roster:{person.row}"] = StudentRow(f"roster:{person.row}", None, person, "")
    return list(rows.values()), unmatched


def exercise_numbers(results: Iterable[Mapping[str, Any]], exercises: Mapping[str, Any]) -> list[str]:
    """The exercises the results are of, in the order of `exercises`.

    Parameters
    ----------
    results : iterable of dict
    exercises : mapping {number: Exercise}

    Returns
    -------
    list of str

    Examples
    --------
    >>> exercise_numbers([{"exercise": "L15"}, {"exercise": None}, {"exercise": "27.4"}],
    ...                  {"27.4": None, "L15": None})
    ['27.4', 'L15']
    """
    return sorted({r["exercise"] for r in results if r.get("exercise") in exercises}, key=list(exercises).index)


def _score(result):
    """(points, maximum) of a result, points None when it was not graded."""
    if result is None:
        return None, None
    return _manual.totals(result)


def _fmt(x):
    return "" if x is None else f"{x:g}"


def summary(result: Mapping[str, Any] | None) -> str:
    """One line of feedback on a result, for an LMS's feedback column (no other student named).

    Parameters
    ----------
    result : dict or None
        None for an exercise the student did not hand in.

    Returns
    -------
    str
        At most 600 characters.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"27.4": SimpleNamespace(number="27.4", title="Regret", written_points={})}
    >>> results = [{"student": "jane", "path": "smithjane_4321_999_27_4.ipynb", "exercise": "27.4", "score": 6.0,
    ...             "max_score": 8.0, "parts": [{"part": "27.4(b)", "points": 0.0, "max_points": 2.0}]},
    ...            {"student": "bo", "path": "bo.ipynb", "exercise": "27.4", "status": "not gradable",
    ...             "error": "not a notebook", "score": None, "max_score": 8.0}]
    >>> print(summary(results[0]))
    Exercise 27.4: 6/8 points (6/8 checked by the grader). Parts to look at again: 27.4(b).
    >>> print(summary(results[1]))
    Not graded: not a notebook
    """
    if result is None:
        return ""
    from labkit.grading.report import clean
    if result.get("status") == "not gradable" or result.get("error") or result.get("score") is None:
        return clean(f"Not graded: {result.get('error') or result.get('reason')}", 600)
    total, total_max = _manual.totals(result)
    assert total is not None and total_max is not None       # graded: totals gives numbers
    failed = [p["part"] for p in result.get("parts", [])
              if p.get("max_points") is not None and (p.get("points") or 0) < p["max_points"]]
    text = (f"Exercise {result['exercise']}: {total:g}/{total_max:g} points "
            f"({result['score']:g}/{result['max_score']:g} checked by the grader")
    if result.get("written"):
        pending = result.get("manual_pending", len(result["written"]))
        text += f", {result.get('written_score', 0):g}/{result.get('written_max', 0):g} for the written parts" \
            + (f", {pending} not graded yet" if pending else "")
    text += ")."
    if failed:
        text += f" Parts to look at again: {', '.join(failed)}."
    return clean(text, 600)


# ------------------------------------------------------------ writers


def _csv_text(rows):
    from labkit.grading.report import csv_cell
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for row in rows:
        writer.writerow([csv_cell(c) if isinstance(c, str) else _fmt(c) for c in row])
    return out.getvalue()


def write_new(path: str | Path, data: str | bytes) -> Path:
    """Write `data` (text or bytes) to `path` through a new file renamed into place: a link or a
    file already at `path` is replaced, never written through.

    Parameters
    ----------
    path : str or Path
        The file; its folder must exist.
    data : str or bytes
        Text is written as UTF-8.

    Returns
    -------
    pathlib.Path
        `path`.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = Path(folder, "page.html")
    ...     _ = Path(folder, "elsewhere.html").write_text("keep me")
    ...     target.symlink_to(Path(folder, "elsewhere.html"))
    ...     _ = write_new(target, "<p>new</p>")
    ...     print(target.is_symlink(), Path(folder, "elsewhere.html").read_text())
    False keep me
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def canvas_rows(students: Sequence[StudentRow], numbers: Sequence[str], exercises: Mapping[str, Any],
                maxima: Mapping[str, float], roster: Any = None) -> list[list[Any]]:
    """The rows of a Canvas gradebook import (header, Points Possible, one per student).

    Parameters
    ----------
    students : sequence of StudentRow
        As `student_rows` gives them.
    numbers : sequence of str
        The exercises, one column each (`exercise_numbers`).
    exercises : mapping {number: Exercise}
        Their ``number`` and ``title`` head new columns.
    maxima : mapping {number: float}
        The points possible.
    roster : labkit.grading.roster.Roster, optional
        Its assignment columns are kept (`labkit.grading.roster.Roster.column_for`).

    Returns
    -------
    list of list
        Cells; None for a score left empty.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"27.4": SimpleNamespace(number="27.4", title="Regret", written_points={})}
    >>> results = [{"student": "jane", "path": "smithjane_4321_999_27_4.ipynb", "exercise": "27.4", "score": 6.0,
    ...             "max_score": 8.0, "parts": [{"part": "27.4(b)", "points": 0.0, "max_points": 2.0}]},
    ...            {"student": "bo", "path": "bo.ipynb", "exercise": "27.4", "status": "not gradable",
    ...             "error": "not a notebook", "score": None, "max_score": 8.0}]
    >>> students, _ = student_rows(results)
    >>> for row in canvas_rows(students, ["27.4"], exercises, {"27.4": 8.0}):
    ...     print(row)
    ['Student', 'ID', 'SIS User ID', 'SIS Login ID', 'Section', 'Exercise 27.4: Regret']
    ['Points Possible', '', '', '', '', 8.0]
    ['bo', '', '', '', '', None]
    ['smithjane', '4321', '', '', '', 6.0]
    """
    headers = []
    for n in numbers:
        ex = exercises[n]
        column = roster.column_for(n, exercises) if roster is not None else None
        headers.append(column or f"Exercise {ex.number}: {ex.title}")
    rows = [CANVAS_COLUMNS + headers, ["Points Possible", "", "", "", ""] + [maxima[n] for n in numbers]]
    for s in sorted(students, key=lambda s: (s.person.sortable_name if s.person else s.name).lower()):
        p, ident = s.person, s.identity
        rows.append([p.sortable_name if p is not None and p.sortable_name else s.name,
                     (p.id if p is not None and p.id else "") or (ident.user_id if ident is not None else "") or "",
                     p.sis_user_id if p is not None else "", p.sis_login_id if p is not None else "",
                     p.section if p is not None else ""]
                    + [_score(s.results.get(n))[0] for n in numbers])
    return rows


def moodle_rows(students: Sequence[StudentRow], numbers: Sequence[str], exercises: Mapping[str, Any],
                roster: Any = None) -> list[list[Any]]:
    """The rows of a Moodle gradebook import: the identifiers, then a grade and a feedback
    column (`summary`) per exercise.

    Parameters
    ----------
    students : sequence of StudentRow
    numbers : sequence of str
    exercises : mapping {number: Exercise}
    roster : labkit.grading.roster.Roster, optional
        Its grade items' columns are kept.

    Returns
    -------
    list of list

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"27.4": SimpleNamespace(number="27.4", title="Regret", written_points={})}
    >>> results = [{"student": "jane", "path": "smithjane_4321_999_27_4.ipynb", "exercise": "27.4", "score": 6.0,
    ...             "max_score": 8.0, "parts": [{"part": "27.4(b)", "points": 0.0, "max_points": 2.0}]},
    ...            {"student": "bo", "path": "bo.ipynb", "exercise": "27.4", "status": "not gradable",
    ...             "error": "not a notebook", "score": None, "max_score": 8.0}]
    >>> students, _ = student_rows(results)
    >>> moodle_rows(students, ["27.4"], exercises)[:2]
    [['Full name', 'Email address', 'ID number', 'Username', 'Exercise 27.4: Regret',
      'Exercise 27.4: Regret (feedback)'], ['bo', '', '', '', None, 'Not graded: not a notebook']]
    """
    headers = []
    for n in numbers:
        ex = exercises[n]
        column = roster.column_for(n, exercises) if roster is not None else None
        item = column or f"Exercise {ex.number}: {ex.title}"
        headers += [item, f"{item} (feedback)"]
    rows = [MOODLE_COLUMNS + headers]
    for s in sorted(students, key=lambda s: s.name.lower()):
        p = s.person
        row = [s.name, p.email if p else "", p.idnumber if p else "", p.username if p else ""]
        for n in numbers:
            row += [_score(s.results.get(n))[0], summary(s.results.get(n))]
        rows.append(row)
    return rows


def worksheet_rows(students: Sequence[StudentRow], number: str, maximum: float) -> list[list[Any]]:
    """The rows of a Moodle grading worksheet for one exercise: students with a participant id
    only, stamped with the current time.

    Parameters
    ----------
    students : sequence of StudentRow
    number : str
        The exercise.
    maximum : float
        Its maximum grade.

    Returns
    -------
    list of list

    Examples
    --------
    >>> students, _ = student_rows([{"student": "jane", "path": "Jane Smith_12345_assignsubmission_file_/a.ipynb",
    ...                              "exercise": "27.4", "score": 6.0, "max_score": 8.0}])
    >>> rows = worksheet_rows(students, "27.4", 8.0)
    >>> rows[1][:5]
    ['Participant 12345', 'Jane Smith', '', 6.0, 8.0]
    """
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    rows: list[list[Any]] = [list(WORKSHEET_COLUMNS)]
    for s in sorted(students, key=lambda s: s.name.lower()):
        participant = (s.identity.participant if s.identity is not None else None) or \
                      (s.person.participant if s.person is not None else "")
        if not participant:
            continue
        result = s.results.get(number)
        rows.append([f"Participant {participant}", s.name, s.person.email if s.person else "",
                     _score(result)[0], maximum, stamp, summary(result)])
    return rows


def generic_rows(students: Sequence[StudentRow], numbers: Sequence[str]) -> list[list[Any]]:
    r"""The rows of the generic gradebook: identifiers, then per exercise its points, maximum and
    percent, then the same over all exercises graded, :math:`100 \sum_e p_e / \sum_e m_e`.

    Parameters
    ----------
    students : sequence of StudentRow
    numbers : sequence of str

    Returns
    -------
    list of list

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"27.4": SimpleNamespace(number="27.4", title="Regret", written_points={})}
    >>> results = [{"student": "jane", "path": "smithjane_4321_999_27_4.ipynb", "exercise": "27.4", "score": 6.0,
    ...             "max_score": 8.0, "parts": [{"part": "27.4(b)", "points": 0.0, "max_points": 2.0}]},
    ...            {"student": "bo", "path": "bo.ipynb", "exercise": "27.4", "status": "not gradable",
    ...             "error": "not a notebook", "score": None, "max_score": 8.0}]
    >>> students, _ = student_rows(results)
    >>> for row in generic_rows(students, ["27.4"]):
    ...     print(row[:2], row[6:])
    ['student_id', 'name'] ['27.4 points', '27.4 max', '27.4 percent', 'points', 'max', 'percent']
    ['bo', 'bo'] [None, 8.0, '', None, None, '']
    ['jane', 'smithjane'] [6.0, 8.0, '75.0', 6.0, 8.0, '75.0']
    """
    head = list(GENERIC_COLUMNS)
    for n in numbers:
        head += [f"{n} points", f"{n} max", f"{n} percent"]
    head += ["points", "max", "percent"]
    rows = [head]
    for s in sorted(students, key=lambda s: s.name.lower()):
        p, ident = s.person, s.identity
        row: list[Any] = [
            s.student_id, s.name, (p.id if p else "") or (ident.user_id if ident and ident.user_id else "")
            or (ident.participant if ident and ident.participant else ""),
            p.email if p else "", (p.sis_login_id or p.username) if p else (ident.login or "" if ident else ""),
            p.section if p else ""]
        got, top = 0.0, 0.0
        any_score = False
        for n in numbers:
            points, maximum = _score(s.results.get(n))
            row += [points, maximum, f"{100 * points / maximum:.1f}" if points is not None and maximum else ""]
            if points is not None:
                got, top, any_score = got + points, top + maximum, True
        row += [got if any_score else None, top if any_score else None,
                f"{100 * got / top:.1f}" if any_score and top else ""]
        rows.append(row)
    return rows


def write(fmt: str, path: str | Path, results: Sequence[Mapping[str, Any]], exercises: Mapping[str, Any],
          roots: Mapping[str, str | None] | None = None, lms: str | None = None, roster: Any = None) -> list[Path]:
    """Write one gradebook in `fmt` (module docstring).

    Parameters
    ----------
    fmt : {"canvas", "moodle", "moodle-worksheet", "generic"}
    path : str or Path
        The file (moodle-worksheet with several exercises: one file per exercise beside it).
    results : sequence of dict
    exercises : mapping {number: Exercise}
    roots, lms, roster
        As for `student_rows`.

    Returns
    -------
    list of pathlib.Path
        The files written.

    Raises
    ------
    GradebookError
        No result of a known exercise, a Moodle import without any identifier, a worksheet
        without participant ids, or an unknown format.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"27.4": SimpleNamespace(number="27.4", title="Regret", written_points={})}
    >>> results = [{"student": "jane", "path": "smithjane_4321_999_27_4.ipynb", "exercise": "27.4", "score": 6.0,
    ...             "max_score": 8.0, "parts": [{"part": "27.4(b)", "points": 0.0, "max_points": 2.0}]},
    ...            {"student": "bo", "path": "bo.ipynb", "exercise": "27.4", "status": "not gradable",
    ...             "error": "not a notebook", "score": None, "max_score": 8.0}]
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     [path] = write("canvas", Path(folder, "canvas.csv"), results, exercises)
    ...     print(path.read_text(), end="")
    Student,ID,SIS User ID,SIS Login ID,Section,Exercise 27.4: Regret
    Points Possible,,,,,8
    bo,,,,,
    smithjane,4321,,,,6
    """
    numbers = exercise_numbers(results, exercises)
    if not numbers:
        raise GradebookError("no notebook of a known exercise was found, so there is nothing to put in a gradebook")
    students, _ = student_rows(results, roots, lms, roster)
    maxima = {n: max(_manual.totals(r)[1] or 0 for r in results if r.get("exercise") == n) for n in numbers}
    if fmt == "canvas":
        return [write_new(path, _csv_text(canvas_rows(students, numbers, exercises, maxima, roster)))]
    if fmt == "moodle":
        if not any(s.person is not None and (s.person.email or s.person.idnumber or s.person.username)
                   for s in students):
            raise GradebookError("Moodle's gradebook import finds students by email address, ID number or username, "
                                 "and no student has one: give --roster (Moodle's gradebook export or participants "
                                 "list), or write --gradebook moodle-worksheet FILE for the assignment's grading "
                                 "worksheet")
        return [write_new(path, _csv_text(moodle_rows(students, numbers, exercises, roster)))]
    if fmt == "moodle-worksheet":
        written: list[Path] = []
        for n in numbers:
            target = Path(path) if len(numbers) == 1 else Path(path).with_name(
                f"{Path(path).stem}-{n.replace('.', '_')}{Path(path).suffix}")
            rows = worksheet_rows(students, n, maxima[n])
            if len(rows) == 1:
                raise GradebookError("a Moodle grading worksheet needs participant ids: the folder names of Moodle's "
                                     "download (Full Name_12345_assignsubmission_file_) or a worksheet as --roster")
            written.append(write_new(target, _csv_text(rows)))
        return written
    if fmt == "generic":
        return [write_new(path, _csv_text(generic_rows(students, numbers)))]
    raise GradebookError(f"unknown gradebook format {fmt!r}; choose from {', '.join(FORMATS)}")


def write_requested(args: argparse.Namespace, results: Sequence[Mapping[str, Any]], exercises: Mapping[str, Any],
                    roots: Mapping[str, str | None] | None = None) -> list[Path]:
    """Write every ``--gradebook FORMAT FILE`` of `args`, and print to standard error the notes an
    instructor needs (unmatched students, several notebooks of one exercise).

    Parameters
    ----------
    args : argparse.Namespace
        With the options of `add_arguments`.
    results : sequence of dict
    exercises : mapping {number: Exercise}
    roots : mapping {path: root folder or None}, optional

    Returns
    -------
    list of pathlib.Path
        The files written.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"27.4": SimpleNamespace(number="27.4", title="Regret", written_points={})}
    >>> results = [{"student": "jane", "path": "smithjane_4321_999_27_4.ipynb", "exercise": "27.4", "score": 6.0,
    ...             "max_score": 8.0, "parts": [{"part": "27.4(b)", "points": 0.0, "max_points": 2.0}]},
    ...            {"student": "bo", "path": "bo.ipynb", "exercise": "27.4", "status": "not gradable",
    ...             "error": "not a notebook", "score": None, "max_score": 8.0}]
    >>> import argparse, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     args = argparse.Namespace(gradebook=[["generic", str(Path(folder, "grades.csv"))]], roster=None, lms=None)
    ...     print([path.name for path in write_requested(args, results, exercises)])
    ['grades.csv']
    """
    if not args.gradebook:
        return []
    from labkit.grading import roster as _roster
    roster = _roster.read(args.roster) if getattr(args, "roster", None) else None
    lms = args.lms or _lms.detect([(r["path"], (roots or {}).get(r["path"])) for r in results])
    written: list[Path] = []
    for fmt, path in args.gradebook:
        written += write(fmt, path, results, exercises, roots, lms, roster)
    students, unmatched = student_rows(results, roots, lms, roster)
    for note in sorted({n for s in students for n in s.notes}):
        print(f"labkit-grade: note: {note}", file=sys.stderr)
    for r in unmatched:
        print(f"labkit-grade: note: the class list names nobody for {r['path']} (kept as {r.get('student_id')})",
              file=sys.stderr)
    return written
