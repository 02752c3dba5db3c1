r"""Hand-graded parts: their point values, the ``manual.csv`` an instructor fills in, and the totals.

Every written part of an exercise states its points (``written(part, ..., points=2)`` in the
instructor's definition, `labkit.grading.notebooks.Exercise.written_points`). A graded result
lists each written part with the student's text, whether it was answered, and its maximum
(`written_entries`). ``labkit-grade ... --review DIR`` writes, beside the review pages
(`labkit.grading.review`), a ``manual.csv`` with one row per student and written part::

    student_id,part,points,comment,max_points,exercise,answered
    jane,27.4(a) written,,,2,27.4,yes
    bob,27.4(a) written,0,left blank,2,27.4,no

The instructor fills in ``points`` (a number from 0 to ``max_points``) and ``comment``; the
columns after ``comment`` are there to read and are ignored. `read_marks` checks every row and
says which line is wrong; `apply` adds the points to a result:

.. math:: \text{total} = \text{score} + \text{written\_score}, \qquad
          \text{total\_max} = \text{max\_score} + \text{written\_max},

where ``score`` and ``max_score`` are the automatically graded points and ``written_max`` the sum of
the exercise's written points -- the maximum nbgrader's export of the same exercise gives
(`labkit.grading.nbgrader_export`). A written part with no points entered yet counts 0 and is
counted in ``manual_pending``. ``labkit-grade merge GRADES.csv manual.csv`` does this to a grades
CSV already written (`merge_main`); ``--manual manual.csv`` does it during a run.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labkit.grading.notebooks import WRITTEN_PLACEHOLDER

COLUMNS = ["student_id", "part", "points", "comment"]          # what the instructor fills in
INFO_COLUMNS = ["max_points", "exercise", "answered"]           # beside them, to read
TOTAL_COLUMNS = ["written_score", "written_max", "manual_pending", "total", "total_max", "percent"]
MAX_COMMENT = 2000


class ManualError(ValueError):
    r"""A manual.csv that cannot be used; the message names the file, the line and what is wrong.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = Path(folder, "manual.csv").write_text("student_id,part,points,comment\n"
    ...                                               "jane,27.4(a) written,3,\n")
    ...     try:
    ...         read_marks(Path(folder, "manual.csv"), {"27.4(a) written": 2})
    ...     except ManualError as error:
    ...         print(str(error).split(", ", 1)[1])
    line 2: points 3 for 27.4(a) written must be between 0 and 2
    """


@dataclass
class Mark:
    """The hand-graded points of one written part, as a manual.csv gives them.

    Attributes
    ----------
    points : float
        Between 0 and the part's maximum.
    comment : str
        The instructor's comment (at most `MAX_COMMENT` characters).
    line : int
        The line of the file, for messages.

    Examples
    --------
    >>> Mark(1.5, "good", 2).points
    1.5
    """
    points: float
    comment: str
    line: int


# ------------------------------------------------------------ written parts of a result


def answered(text: str | None) -> bool:
    """Whether a written cell holds more than the placeholder.

    Parameters
    ----------
    text : str or None
        The cell's Markdown.

    Returns
    -------
    bool

    Examples
    --------
    >>> answered("*Write your answer here.*"), answered("  "), answered("Because the regret is sublinear.")
    (False, False, True)
    """
    text = (text or "").strip()
    return bool(text) and text != WRITTEN_PLACEHOLDER


def written_entries(exercise: Any, texts: Mapping[str, str]) -> list[dict[str, Any]]:
    """The written parts of a graded notebook, in the exercise's order.

    Parameters
    ----------
    exercise : Exercise
        Its ``written_points`` ({part: points}) are used.
    texts : mapping {part: markdown}
        As the notebook holds them.

    Returns
    -------
    list of dict
        ``{"part", "answered", "max_points", "text"}`` per written part (text empty when not
        answered).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercise = SimpleNamespace(written_points={"27.4(a) written": 2, "27.4(b) written": 1})
    >>> written_entries(exercise, {"27.4(a) written": "It converges."})
    [{'part': '27.4(a) written', 'answered': True, 'max_points': 2, 'text': 'It converges.'},
     {'part': '27.4(b) written', 'answered': False, 'max_points': 1, 'text': ''}]
    """
    return [{"part": slot, "answered": answered(texts.get(slot)), "max_points": points,
             "text": texts.get(slot, "") if answered(texts.get(slot)) else ""}
            for slot, points in exercise.written_points.items()]


def exercise_of(part: object) -> str:
    """The exercise number of a part id: "27.4(a) written" -> "27.4", "L15(k) written" -> "L15".

    Parameters
    ----------
    part : object
        A part id (made a string).

    Returns
    -------
    str

    Examples
    --------
    >>> exercise_of("27.4(a) written"), exercise_of("L15(k) written")
    ('27.4', 'L15')
    """
    return str(part).split("(")[0].strip()


def written_columns(exercises: Iterable[Any]) -> list[str]:
    """The written parts' column names for a CSV of the given exercises, in order.

    Parameters
    ----------
    exercises : iterable of Exercise
        Their ``written_points`` are used.

    Returns
    -------
    list of str
        Each part once.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> written_columns([SimpleNamespace(written_points={"27.4(a) written": 2}),
    ...                  SimpleNamespace(written_points={"L15(k) written": 3})])
    ['27.4(a) written', 'L15(k) written']
    """
    names = []
    for ex in exercises:
        names += [slot for slot in ex.written_points if slot not in names]
    return names


# ------------------------------------------------------------ manual.csv


def template_rows(results: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """One row per graded result and written part: points and comment empty, except for a part
    left blank (0, "left blank"), which the instructor may still change.

    Parameters
    ----------
    results : iterable of dict
        Graded results (those not gradable are left out).

    Returns
    -------
    list of dict
        The cells of `COLUMNS` and `INFO_COLUMNS`.

    Examples
    --------
    >>> result = {"student": "jane", "exercise": "27.4", "score": 5.0,
    ...           "written": [{"part": "27.4(a) written", "answered": False, "max_points": 2}]}
    >>> template_rows([result])
    [{'student_id': 'jane', 'part': '27.4(a) written', 'points': '0', 'comment': 'left blank', 'max_points': '2',
      'exercise': '27.4', 'answered': 'no'}]
    """
    rows = []
    for r in results:
        if r.get("status") == "not gradable" or r.get("error"):
            continue
        for w in r.get("written", []):
            blank = not w.get("answered")
            rows.append({"student_id": r.get("student_id", r["student"]), "part": w["part"],
                         "points": "0" if blank else "", "comment": "left blank" if blank else "",
                         "max_points": f"{w.get('max_points', 1):g}", "exercise": r.get("exercise") or "",
                         "answered": "no" if blank else "yes"})
    return rows


def free_name(path: str | Path) -> Path:
    """`path` if nothing is there, else the first of ``stem-2.ext``, ``stem-3.ext``, ... that is
    free: a file an instructor may have filled in is never overwritten.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = Path(folder, "manual.csv").write_text("")
    ...     print(free_name(Path(folder, "manual.csv")).name)
    manual-2.csv
    """
    path = Path(path)
    candidate, k = path, 2
    while candidate.exists() or candidate.is_symlink():
        candidate, k = path.with_name(f"{path.stem}-{k}{path.suffix}"), k + 1
    return candidate


def write_template(results: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Write the manual.csv to fill in at `path`, or at a free name beside it when `path` is
    taken (`free_name`).

    Parameters
    ----------
    results : iterable of dict
        Graded results (`template_rows`).
    path : str or Path
        Where to write.

    Returns
    -------
    pathlib.Path
        The file written.

    Examples
    --------
    >>> import tempfile
    >>> result = {"student": "jane", "exercise": "27.4", "score": 5.0,
    ...           "written": [{"part": "27.4(a) written", "answered": True, "max_points": 2}]}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     print(write_template([result], Path(folder, "manual.csv")).read_text())
    student_id,part,points,comment,max_points,exercise,answered
    jane,27.4(a) written,,,2,27.4,yes
    """
    from labkit.grading.report import csv_cell
    target = free_name(path)
    with open(target, "x", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS + INFO_COLUMNS)
        for row in template_rows(results):
            writer.writerow([csv_cell(row[c]) if c in ("student_id", "comment") else row[c]
                             for c in COLUMNS + INFO_COLUMNS])
    return target


def read_marks(path: str | Path, maxima: Mapping[str, float]) -> dict[tuple[str, str], Mark]:
    r"""The marks of a filled-in manual.csv.

    Rows with an empty ``points`` are skipped (not graded yet); a decimal comma is read as a point.

    Parameters
    ----------
    path : str or Path
        The manual.csv (UTF-8).
    maxima : dict {part: max points}
        The written parts that exist (e.g. from `maxima_of`); any other part is an error.

    Returns
    -------
    dict {(student_id, part): Mark}

    Raises
    ------
    ManualError
        Naming the line when a row has an unknown part, points that are not a number between 0
        and the part's maximum, or repeats a (student_id, part) given before; or when the file
        cannot be read or lacks a column of `COLUMNS`.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = Path(folder, "manual.csv").write_text("student_id,part,points,comment\n"
    ...                                               "jane,27.4(a) written,\"1,5\",clear\n"
    ...                                               "bob,27.4(a) written,,\n")
    ...     read_marks(Path(folder, "manual.csv"), {"27.4(a) written": 2})
    {('jane', '27.4(a) written'): Mark(points=1.5, comment='clear', line=2)}
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ManualError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ManualError(f"{path} is not UTF-8 text (save it as CSV UTF-8)") from None
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ManualError(f"{path}: the header must have the columns {', '.join(COLUMNS)}; "
                          f"{', '.join(missing)} missing (found: {', '.join(header) or 'nothing'})")
    marks: dict[tuple[str, str], Mark] = {}
    for line, raw in enumerate(reader, start=2):
        row = {k.strip(): (v or "").strip() for k, v in raw.items() if k is not None}
        student, part, points = row["student_id"].lstrip("'"), row["part"], row["points"]
        where = f"{path}, line {line}"
        if not student and not part and not points:
            continue
        if part not in maxima:
            raise ManualError(f"{where}: unknown written part {part!r}; the written parts are "
                              f"{', '.join(sorted(maxima)) or 'none'}")
        if not student:
            raise ManualError(f"{where}: the student_id is empty")
        if points == "":
            continue
        try:
            value = float(points.replace(",", ".")) if points.count(",") == 1 and "." not in points else float(points)
        except ValueError:
            raise ManualError(f"{where}: points {points!r} is not a number") from None
        if not math.isfinite(value) or value < 0 or value > maxima[part] + 1e-9:
            raise ManualError(f"{where}: points {points} for {part} must be between 0 and {maxima[part]:g}")
        key = (student, part)
        if key in marks:
            raise ManualError(f"{where}: {student} / {part} was already given on line {marks[key].line}")
        marks[key] = Mark(value, row.get("comment", "")[:MAX_COMMENT], line)
    return marks


def maxima_of(exercises: Iterable[Any]) -> dict[str, float]:
    """{written part: max points} over the given exercises.

    Parameters
    ----------
    exercises : iterable of Exercise
        Their ``written_points`` are used.

    Returns
    -------
    dict {part: points}

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> maxima_of([SimpleNamespace(written_points={"27.4(a) written": 2})])
    {'27.4(a) written': 2}
    """
    return {slot: points for ex in exercises for slot, points in ex.written_points.items()}


# ------------------------------------------------------------ totals


def apply(result: dict[str, Any], marks: Mapping[tuple[str, str], Mark]) -> dict[str, Any]:
    """Add the hand-graded points of `marks` to `result` (in place) and compute its totals
    (`TOTAL_COLUMNS`, the module's formula); a result that was not graded gets none.

    Parameters
    ----------
    result : dict
        A graded result; its written parts get ``points`` and ``comment``.
    marks : mapping {(student_id, part): Mark}
        As `read_marks` gives them; a written part without a mark counts 0 and is pending.

    Returns
    -------
    dict
        `result` itself.

    Examples
    --------
    >>> result = {"student": "jane", "score": 5.0, "max_score": 8.0,
    ...           "written": [{"part": "27.4(a) written", "max_points": 2},
    ...                       {"part": "27.4(b) written", "max_points": 1}]}
    >>> done = apply(result, {("jane", "27.4(a) written"): Mark(1.5, "clear", 2)})
    >>> done["written_score"], done["manual_pending"], done["total"], done["total_max"]
    (1.5, 1, 6.5, 11.0)
    """
    if result.get("status") == "not gradable" or result.get("error") or result.get("score") is None:
        return result
    student = result.get("student_id", result["student"])
    written_score, pending = 0.0, 0
    for w in result.get("written", []):
        mark = marks.get((student, w["part"]))
        if mark is None:
            w.pop("points", None)
            pending += 1
            continue
        w["points"], w["comment"] = mark.points, mark.comment
        written_score += mark.points
    written_max = sum(w.get("max_points", 0) for w in result.get("written", []))
    result["written_score"], result["written_max"], result["manual_pending"] = written_score, written_max, pending
    result["total"] = result["score"] + written_score
    result["total_max"] = result["max_score"] + written_max
    return result


def totals(result: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(total, total_max) of a result: with hand-graded points when they were applied, else the
    automatic score and the maximum including the written parts; (None, max) when not graded.

    Parameters
    ----------
    result : dict
        A result, graded or not.

    Returns
    -------
    (float or None, float or None)

    Examples
    --------
    >>> totals({"score": 5.0, "max_score": 8.0, "written": [{"part": "27.4(a) written", "max_points": 2}]})
    (5.0, 10.0)
    >>> totals({"status": "not gradable", "error": "not a notebook", "max_score": 8.0})
    (None, 8.0)
    """
    written_max = sum(w.get("max_points", 0) for w in result.get("written", []))
    if result.get("status") == "not gradable" or result.get("error") or result.get("score") is None:
        maximum = result.get("max_score")
        return None, (maximum + written_max if maximum is not None else None)
    if "total" in result:
        return result["total"], result["total_max"]
    return result["score"], result["max_score"] + written_max


def _points(x):
    return "" if x is None else f"{x:g}"


def csv_cells(result: Mapping[str, Any], columns: Sequence[str]) -> list[str]:
    """The CSV cells of the written parts (`columns`) and the totals (`TOTAL_COLUMNS`) of one result.

    Parameters
    ----------
    result : dict
        A result, after `apply` if hand-graded points were given.
    columns : sequence of str
        The written parts' columns (`written_columns`).

    Returns
    -------
    list of str
        One cell per column of `csv_columns`.

    Examples
    --------
    >>> result = apply({"student": "jane", "score": 5.0, "max_score": 8.0,
    ...                 "written": [{"part": "27.4(a) written", "max_points": 2}]},
    ...                {("jane", "27.4(a) written"): Mark(2.0, "", 2)})
    >>> dict(zip(csv_columns(["27.4(a) written"]), csv_cells(result, ["27.4(a) written"]), strict=True))
    {'27.4(a) written': '2', 'written_score': '2', 'written_max': '2', 'manual_pending': '0', 'total': '7',
     'total_max': '10', 'percent': '70.0'}
    """
    graded = not (result.get("status") == "not gradable" or result.get("error") or result.get("score") is None)
    by_part = {w["part"]: w for w in result.get("written", [])}
    cells = [_points(by_part[c].get("points")) if graded and c in by_part else "" for c in columns]
    total, total_max = totals(result)
    if not graded:
        return cells + ["", _points(total_max - result["max_score"]) if total_max is not None else "", "", "",
                        _points(total_max), ""]
    assert total is not None and total_max is not None       # graded: totals gives numbers
    written_max = total_max - result["max_score"]
    percent = f"{100 * total / total_max:.1f}" if total_max else ""
    return cells + [_points(result.get("written_score")), _points(written_max),
                    str(result.get("manual_pending", len(by_part))), _points(total), _points(total_max), percent]


def csv_columns(columns: Iterable[str]) -> list[str]:
    """The written parts' columns followed by `TOTAL_COLUMNS`.

    Parameters
    ----------
    columns : iterable of str
        The written parts' columns.

    Returns
    -------
    list of str

    Examples
    --------
    >>> csv_columns(["27.4(a) written"])
    ['27.4(a) written', 'written_score', 'written_max', 'manual_pending', 'total', 'total_max', 'percent']
    """
    return list(columns) + TOTAL_COLUMNS


# ------------------------------------------------------------ labkit-grade merge


def rows_to_results(rows: Iterable[Mapping[str, str]], exercises: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Result dicts (enough for totals and gradebooks) from the rows of a grades CSV.

    Parameters
    ----------
    rows : iterable of dict
        The rows as `csv.DictReader` reads them.
    exercises : mapping {number: Exercise}
        Their ``parts`` and ``written_points`` are used.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"27.4": SimpleNamespace(parts=["27.4(a)"], written_points={"27.4(b) written": 2})}
    >>> row = {"student_id": "jane", "student": "jane", "exercise": "27.4", "status": "graded", "score": "5",
    ...        "max_score": "8", "27.4(a)": "5"}
    >>> result = rows_to_results([row], exercises)[0]
    >>> result["score"], [p["part"] for p in result["parts"]], [w["part"] for w in result["written"]]
    (5.0, ['27.4(a)'], ['27.4(b) written'])
    """
    results = []
    for row in rows:
        number = row.get("exercise", "")
        ex = exercises.get(number)
        graded = row.get("status") in ("graded", "flagged") and row.get("score", "") != ""
        result = {"student": row.get("student", ""), "student_id": row.get("student_id", "").lstrip("'"),
                  "path": row.get("path", "").lstrip("'"), "exercise": number or None,
                  "status": row.get("status", ""), "reason": row.get("reason") or None,
                  "error": None if graded else (row.get("reason") or "not graded"),
                  "score": float(row["score"]) if graded else None,
                  "max_score": float(row["max_score"]) if row.get("max_score") else None,
                  "parts": [{"part": p, "points": float(row[p]), "max_points": None, "verdict": "", "hints": []}
                            for p in (ex.parts if ex else []) if row.get(p, "") != ""],
                  "written": [{"part": slot, "answered": True, "max_points": pts, "text": ""}
                              for slot, pts in (ex.written_points.items() if ex else [])]}
        results.append(result)
    return results


def merge(grades_path: str | Path, manual_path: str | Path, out_path: str | Path,
          exercises: Mapping[str, Any]) -> list[dict[str, Any]]:
    r"""Write `out_path`: the grades CSV at `grades_path` with the hand-graded points of
    `manual_path` in its written-part columns and its totals recomputed.

    Parameters
    ----------
    grades_path : str or Path
        A CSV written by ``labkit-grade --csv``.
    manual_path : str or Path
        A filled-in manual.csv.
    out_path : str or Path
        Where to write; an existing file is never overwritten.
    exercises : mapping {number: Exercise}
        The instructor's exercises (``parts``, ``written_points``).

    Returns
    -------
    list of dict
        The results, with their totals.

    Raises
    ------
    ManualError
        When the grades CSV lacks a column, the manual.csv has a bad row (`read_marks`), or a
        mark names a part no graded notebook has.
    FileExistsError
        When `out_path` exists.

    Examples
    --------
    >>> import tempfile
    >>> from types import SimpleNamespace
    >>> exercises = {"27.4": SimpleNamespace(parts=["27.4(a)"], written_points={"27.4(b) written": 2})}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     grades, manual, out = (Path(folder, name) for name in ("grades.csv", "manual.csv", "merged.csv"))
    ...     _ = grades.write_text("student_id,student,path,exercise,status,reason,score,max_score,27.4(a)\n"
    ...                           "jane,jane,jane.ipynb,27.4,graded,,5,8,5\n")
    ...     _ = manual.write_text("student_id,part,points,comment\njane,27.4(b) written,2,\n")
    ...     results = merge(grades, manual, out, exercises)
    ...     print(out.read_text().splitlines()[1])
    jane,jane,jane.ipynb,27.4,graded,,5,8,5,2,2,2,0,7,10,70.0
    """
    from labkit.grading.report import CSV_HEAD, CSV_TAIL, csv_cell
    with open(grades_path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header, rows = list(reader.fieldnames or []), list(reader)
    missing = [c for c in ("student_id", "exercise", "status", "score", "max_score") if c not in header]
    if missing:
        raise ManualError(f"{grades_path} is not a grades CSV written by labkit-grade --csv "
                          f"({', '.join(missing)} missing)")
    numbers = sorted({r["exercise"] for r in rows if r.get("exercise") in exercises}, key=list(exercises).index)
    used = [exercises[n] for n in numbers]
    marks = read_marks(manual_path, maxima_of(used))
    known = {(r["student_id"].lstrip("'"), slot) for r in rows for slot in
             (exercises[r["exercise"]].written_points if r.get("exercise") in exercises else {})}
    unknown = sorted({k for k in marks if k not in known}, key=lambda k: marks[k].line)
    if unknown:
        student, part = unknown[0]
        raise ManualError(f"{manual_path}, line {marks[unknown[0]].line}: no graded notebook of {student!r} has "
                          f"the part {part!r} in {grades_path}")
    results = [apply(r, marks) for r in rows_to_results(rows, exercises)]
    columns = written_columns(used)
    tail = [h for h in CSV_TAIL if h in header]          # the submission's id, similar_to, final: kept last
    parts = [h for h in header if h not in CSV_HEAD and h not in columns and h not in TOTAL_COLUMNS and h not in tail]
    with open(out_path, "x", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_HEAD + parts + csv_columns(columns) + tail)
        for row, result in zip(rows, results, strict=True):
            writer.writerow([row.get(h, "") for h in CSV_HEAD + parts]
                            + [csv_cell(c) for c in csv_cells(result, columns)]
                            + [row.get(h, "") for h in tail])
    return results


def merge_main(argv: Sequence[str] | None) -> int:
    """``labkit-grade merge GRADES.csv manual.csv [-o OUT.csv] [--gradebook FORMAT FILE]
    [--roster FILE] [--lms canvas|moodle] [--instructor DIR]``: `merge`, then the gradebooks asked
    for, with the instructor's exercises.

    Parameters
    ----------
    argv : sequence of str or None
        The arguments after ``merge`` (None: ``sys.argv``).

    Returns
    -------
    int
        The exit status: 0, or 2 with a message on standard error (no instructor package, an
        output that exists, a bad manual.csv or gradebook request).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:                # no labkit_instructor in it
    ...     merge_main(["grades.csv", "manual.csv", "--instructor", folder])
    2
    """
    p = argparse.ArgumentParser(prog="labkit-grade merge",
                                description="Add the hand-graded points of a manual.csv to a grades CSV.")
    p.add_argument("grades", metavar="GRADES.csv", help="the CSV written by labkit-grade --csv")
    p.add_argument("manual", metavar="manual.csv", help="the manual.csv written by --review, filled in")
    p.add_argument("-o", "--out", metavar="OUT.csv", help="where to write (default: GRADES-merged.csv beside it; "
                   "an existing file is never overwritten)")
    p.add_argument("--instructor", metavar="DIR", help="folder containing labkit_instructor")
    from labkit.grading import gradebook
    gradebook.add_arguments(p, grading=False)
    args = p.parse_args(argv)
    from labkit.grading.material import MaterialError, load
    try:
        mat = load(args.instructor)
    except MaterialError as exc:
        print(f"labkit-grade merge: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(args.grades).with_name(Path(args.grades).stem + "-merged.csv")
    if out.exists() or out.is_symlink():
        print(f"labkit-grade merge: {out} exists; give another name with -o (nothing is overwritten)",
              file=sys.stderr)
        return 2
    problem = gradebook.usage_error(args)
    if problem:
        print(f"labkit-grade merge: {problem}", file=sys.stderr)
        return 2
    try:
        results = merge(args.grades, args.manual, out, mat.EXERCISES)
    except (ManualError, OSError) as exc:
        print(f"labkit-grade merge: {exc}", file=sys.stderr)
        return 2
    pending = sum(r.get("manual_pending", 0) for r in results)
    print(f"wrote {out}: {len(results)} rows" + (f"; {pending} written parts still without points" if pending else ""))
    try:
        for path in gradebook.write_requested(args, results, mat.EXERCISES, roots=None):
            print(f"wrote {path}")
    except gradebook.GradebookError as exc:
        print(f"labkit-grade merge: {exc}", file=sys.stderr)
        return 2
    return 0
