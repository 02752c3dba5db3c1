"""Hand-graded parts: their point values, the ``manual.csv`` an instructor fills in, and the totals.

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

    total = score + written_score,    total_max = max_score + written_max,

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
from dataclasses import dataclass
from pathlib import Path

from labkit.grading.notebooks import WRITTEN_PLACEHOLDER

COLUMNS = ["student_id", "part", "points", "comment"]          # what the instructor fills in
INFO_COLUMNS = ["max_points", "exercise", "answered"]           # beside them, to read
TOTAL_COLUMNS = ["written_score", "written_max", "manual_pending", "total", "total_max", "percent"]
MAX_COMMENT = 2000


class ManualError(ValueError):
    """A manual.csv that cannot be used; the message names the file, the line and what is wrong."""


@dataclass
class Mark:
    points: float
    comment: str
    line: int


# ------------------------------------------------------------ written parts of a result


def answered(text):
    """Whether a written cell holds more than the placeholder."""
    text = (text or "").strip()
    return bool(text) and text != WRITTEN_PLACEHOLDER


def written_entries(exercise, texts):
    """The written parts of a graded notebook: ``[{"part", "answered", "max_points", "text"}]``,
    in the exercise's order (`texts` is {slot: markdown} as the notebook holds it)."""
    return [{"part": slot, "answered": answered(texts.get(slot)), "max_points": points,
             "text": texts.get(slot, "") if answered(texts.get(slot)) else ""}
            for slot, points in exercise.written_points.items()]


def exercise_of(part):
    """The exercise number of a part id: "27.4(a) written" -> "27.4", "L15(k) written" -> "L15"."""
    return str(part).split("(")[0].strip()


def written_columns(exercises):
    """The written parts' column names for a CSV of the given exercises, in order."""
    names = []
    for ex in exercises:
        names += [slot for slot in ex.written_points if slot not in names]
    return names


# ------------------------------------------------------------ manual.csv


def template_rows(results):
    """One row per graded result and written part: points and comment empty, except for a part
    left blank (0, "left blank"), which the instructor may still change."""
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


def free_name(path):
    """`path` if nothing is there, else the first of ``stem-2.ext``, ``stem-3.ext``, ... that is
    free: a file an instructor may have filled in is never overwritten."""
    path = Path(path)
    candidate, k = path, 2
    while candidate.exists() or candidate.is_symlink():
        candidate, k = path.with_name(f"{path.stem}-{k}{path.suffix}"), k + 1
    return candidate


def write_template(results, path):
    """Write the manual.csv to fill in at `path`, or at a free name beside it when `path` is
    taken (`free_name`); returns the path written."""
    from labkit.grading.report import csv_cell
    target = free_name(path)
    with open(target, "x", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS + INFO_COLUMNS)
        for row in template_rows(results):
            writer.writerow([csv_cell(row[c]) if c in ("student_id", "comment") else row[c]
                             for c in COLUMNS + INFO_COLUMNS])
    return target


def read_marks(path, maxima):
    """{(student_id, part): Mark} from a filled-in manual.csv.

    Parameters
    ----------
    path : str or Path
    maxima : dict {part: max points}
        The written parts that exist (e.g. from `maxima_of`); any other part is an error.

    Rows with an empty ``points`` are skipped (not graded yet). Raises `ManualError` naming the
    line when a row has an unknown part, points that are not a number between 0 and the part's
    maximum, or repeats a (student_id, part) given before.
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
    marks = {}
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


def maxima_of(exercises):
    """{written part: max points} over the given exercises."""
    return {slot: points for ex in exercises for slot, points in ex.written_points.items()}


# ------------------------------------------------------------ totals


def apply(result, marks):
    """Add the hand-graded points of `marks` to `result` (in place) and compute its totals
    (`TOTAL_COLUMNS`); a result that was not graded gets none. Returns `result`."""
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


def totals(result):
    """(total, total_max) of a result: with hand-graded points when they were applied, else the
    automatic score and the maximum including the written parts; (None, max) when not graded."""
    written_max = sum(w.get("max_points", 0) for w in result.get("written", []))
    if result.get("status") == "not gradable" or result.get("error") or result.get("score") is None:
        maximum = result.get("max_score")
        return None, (maximum + written_max if maximum is not None else None)
    if "total" in result:
        return result["total"], result["total_max"]
    return result["score"], result["max_score"] + written_max


def _points(x):
    return "" if x is None else f"{x:g}"


def csv_cells(result, columns):
    """The CSV cells of the written parts (`columns`) and the totals of one result."""
    graded = not (result.get("status") == "not gradable" or result.get("error") or result.get("score") is None)
    by_part = {w["part"]: w for w in result.get("written", [])}
    cells = [_points(by_part[c].get("points")) if graded and c in by_part else "" for c in columns]
    total, total_max = totals(result)
    if not graded:
        return cells + ["", _points(total_max - result["max_score"]) if total_max is not None else "", "", "",
                        _points(total_max), ""]
    written_max = total_max - result["max_score"]
    percent = f"{100 * total / total_max:.1f}" if total_max else ""
    return cells + [_points(result.get("written_score")), _points(written_max),
                    str(result.get("manual_pending", len(by_part))), _points(total), _points(total_max), percent]


def csv_columns(columns):
    return list(columns) + TOTAL_COLUMNS


# ------------------------------------------------------------ labkit-grade merge


def rows_to_results(rows, exercises):
    """Result dicts (enough for totals and gradebooks) from the rows of a grades CSV."""
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


def merge(grades_path, manual_path, out_path, exercises):
    """Write `out_path`: the grades CSV at `grades_path` with the hand-graded points of
    `manual_path` in its written-part columns and its totals recomputed. Returns the results."""
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
        for row, result in zip(rows, results):
            writer.writerow([row.get(h, "") for h in CSV_HEAD + parts] + [csv_cell(c) for c in csv_cells(result, columns)]
                            + [row.get(h, "") for h in tail])
    return results


def merge_main(argv):
    """``labkit-grade merge GRADES.csv manual.csv [-o OUT.csv] [--gradebook FORMAT FILE]
    [--roster FILE] [--lms canvas|moodle] [--instructor DIR]``."""
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
