"""Reports of a graded class: the text table, the CSV for a gradebook, JSON lines, feedback per student.

Everything a student controls (file and folder names, exception messages in hints) is passed
through `clean` before it reaches a report: ANSI escape sequences and control characters
(newlines, carriage returns, tabs, bidirectional overrides) become spaces, so a message cannot
forge a line of the table or recolour the terminal; `csv_cell` also prefixes a cell that a
spreadsheet would read as a formula (``= + - @``) with a quote.

The CSV has one row per notebook: ``student_id`` (the file's stem, or the student's folder,
made a stable file-name-safe id: `labkit.grading.identity`), ``student`` (the name, readable),
``path``, ``exercise``, ``status`` (graded / flagged / not gradable), ``reason``, ``score``
(the points the grader checked), ``max_score`` (their maximum), one column per part, one per
hand-graded (written) part and the totals with the written parts (`labkit.grading.manual`:
``written_score``, ``written_max``, ``manual_pending``, ``total``, ``total_max``, ``percent``),
then ``submission_id`` (the notebook's own id, which names its feedback files), ``similar_to``
(the ids of submissions with the same answers: for the instructor only) and ``final`` ("no"
when a part could not be timed fairly on a busy machine: ``labkit-grade --resume`` grades it
again). A notebook that could not be graded has an empty score and empty parts, never 0 (its
result has ``"score": None``, ``null`` in JSON, and the exercise's ``max_score`` when that is
known).

What a student reads (`feedback_markdown`, `feedback_html`: `labkit.grading.feedback`) holds
their own results only: no other student is ever named there (similar submissions are reported
to the instructor: ``similar_to`` in the CSV and JSON lines, and `similarity_rows` for a report
of their own).

Every file is written as a new file (`labkit.grading.outputs`), never through a link found at
its place; `CsvLog` and `JsonLinesLog` add one row per result as results arrive. The run
journal (`labkit.grading.journal`) is what keeps finished work safe across a crash.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from labkit.grading.outputs import open_new, write_new

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|\x9b[0-?]*[ -/]*[@-~]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
MAX_TEXT = 1000

# a graded result and one that could not be graded, as the grader returns them (the examples read them)
_GRADED: dict[str, Any] = {"student": "Jane Smith", "student_id": "jane", "path": "jane/27_4.ipynb", "exercise": "27.4",
           "status": "graded", "score": 3.0, "max_score": 4.0,
           "parts": [{"part": "27.4(a)", "verdict": "pass", "points": 3.0, "max_points": 3.0, "hints": []},
                     {"part": "27.4(b)", "verdict": "fail", "points": 0.0, "max_points": 1.0,
                      "hints": ["expected 0.5, got 1"]}],
           "written": [{"part": "27.4(c) written", "answered": True, "max_points": 2.0}],
           "submission_id": "jane", "similar_to": []}
_NOT_GRADABLE: dict[str, Any] = {"student": "bob", "path": "bob.ipynb", "exercise": None, "status": "not gradable",
                 "error": "bob.ipynb is not a Jupyter notebook", "score": None, "max_score": 4.0, "parts": [],
                 "written": [], "submission_id": "bob"}


def clean(text: object, limit: int = MAX_TEXT) -> str:
    r"""`text` as one safe line: no ANSI sequences, no control or format characters, at most
    `limit` characters.

    Parameters
    ----------
    text : object
        Turned into a string (None: the empty string).
    limit : int, default `MAX_TEXT`
        Longer text is cut, ending in ``...``.

    Returns
    -------
    str

    Examples
    --------
    A hint that clears the screen and forges a line of the table becomes one plain line:

    >>> clean("ok\x1b[2J\n  27.4(a)   pass   3/3")
    'ok 27.4(a) pass 3/3'
    >>> clean("x" * 20, limit=10)
    'xxxxxxx...'
    """
    text = _ANSI.sub("", "" if text is None else str(text))
    out = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn") else ch
                  for ch in text)
    out = " ".join(out.split())
    return out if len(out) <= limit else out[:limit - 3] + "..."


def csv_cell(text: object) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula: `clean` text, with a
    quote before a first character in `FORMULA_START`.

    Parameters
    ----------
    text : object
        Turned into a string (None: the empty string).

    Returns
    -------
    str

    Examples
    --------
    >>> csv_cell("=1+2"), csv_cell("-3"), csv_cell("Jane Smith")
    ("'=1+2", "'-3", 'Jane Smith')
    """
    raw = "" if text is None else str(text)
    out = clean(raw)
    if raw[:1] in FORMULA_START or out[:1] in FORMULA_START:
        out = "'" + out
    return out


def _points(x):
    return "-" if x is None else f"{x:g}"


def counts(result: Mapping[str, Any]) -> bool:
    """Whether a result's score goes into a gradebook (not so for a notebook that could not be graded).

    Parameters
    ----------
    result : dict
        One submission's result, as the grader returns it.

    Returns
    -------
    bool

    Examples
    --------
    >>> counts(_GRADED), counts(_NOT_GRADABLE)
    (True, False)
    """
    return result.get("status") != "not gradable" and not result.get("error")


# -------------------------------------------------------------------- the table


def format_table(results: Sequence[Mapping[str, Any]]) -> str:
    """A text table: one block per submission, one line per part, then the total; for several
    submissions a last line with how many were graded and their mean share of the points.

    Parameters
    ----------
    results : list of dict
        The grader's results.

    Returns
    -------
    str

    Examples
    --------
    >>> print(format_table([_GRADED, _NOT_GRADABLE]))
    Jane Smith  (jane/27_4.ipynb)
      exercise 27.4
      27.4(a)   pass            3/3
      27.4(b)   fail            0/1
          expected 0.5, got 1
      27.4(c) written    answered     -/2 (graded by hand)
      total  3/4
    <BLANKLINE>
    bob  (bob.ipynb)
      not graded: bob.ipynb is not a Jupyter notebook
      total  -/4 (not gradable: no score)
    <BLANKLINE>
    2 notebooks: 1 graded (mean 75% of the points; 0 flagged), 1 not gradable
    <BLANKLINE>
    """
    lines = []
    for r in results:
        lines.append(f"{clean(r['student'], 120)}  ({clean(r['path'], 200)})")
        if not counts(r):
            lines.append(f"  not graded: {clean(r['error'] or r.get('reason'))}")
            lines.append(f"  total  -/{_points(r['max_score'])} (not gradable: no score)")
            lines.append("")
            continue
        lines.append(f"  exercise {r['exercise']}")
        for p in r["parts"]:
            lines.append(f"  {p['part']:<9} {p['verdict']:<12} {p['points']:>4g}/{p['max_points']:<4g}")
            for hint in p["hints"]:
                lines.append(f"      {clean(hint)}")
        for w in r["written"]:
            mark = f"{w['points']:g}/{w['max_points']:g}" if "points" in w else f"-/{w.get('max_points', 1):g}"
            lines.append(f"  {w['part']:<18} {'answered' if w['answered'] else 'blank':<12} {mark} (graded by hand)")
        for flag in r.get("flags", []):
            lines.append(f"  flagged: {clean(flag)}")
        if r.get("similar_to"):
            lines.append(f"  flagged: same answers as {clean(', '.join(r['similar_to']))} (instructor only)")
        lines.append(f"  total  {_points(r['score'])}/{_points(r['max_score'])}")
        lines.append("")
    if len(results) > 1:
        graded = [r for r in results if counts(r)]
        share = sum(r["score"] / r["max_score"] for r in graded if r["max_score"]) / max(len(graded), 1)
        flagged = sum(1 for r in graded if r.get("status") == "flagged")
        lines.append(f"{len(results)} notebooks: {len(graded)} graded (mean {100 * share:.0f}% of the points; "
                     f"{flagged} flagged), {len(results) - len(graded)} not gradable")
    return "\n".join(lines).rstrip() + "\n"


# -------------------------------------------------------------------- CSV and JSON lines


def part_columns(results: Iterable[Mapping[str, Any]] = (), exercises: Iterable[Any] | None = None) -> list[str]:
    """The part columns: those of the exercises given, then any other found in the results.

    Parameters
    ----------
    results : iterable of dict, optional
    exercises : iterable of labkit.grading.notebooks.Exercise, optional

    Returns
    -------
    list of str

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> part_columns([_GRADED])
    ['27.4(a)', '27.4(b)']
    >>> part_columns([_GRADED], [SimpleNamespace(parts=["27.4(a)", "27.4(b)", "27.4(d)"])])
    ['27.4(a)', '27.4(b)', '27.4(d)']
    """
    names: list[str] = []
    for ex in exercises or []:
        names += [p for p in ex.parts if p not in names]
    for r in results:
        names += [p["part"] for p in r["parts"] if p["part"] not in names]
    return names


CSV_HEAD = ["student_id", "student", "path", "exercise", "status", "reason", "score", "max_score"]
CSV_TAIL = ["submission_id", "similar_to", "final"]


def csv_row(result: Mapping[str, Any], parts: Iterable[str]) -> list[str]:
    """The first cells of a result's CSV row: `CSV_HEAD`, then the points of each part in `parts`
    (empty for a part the result does not have, and all empty when it was not graded).

    Parameters
    ----------
    result : dict
    parts : iterable of str
        The part columns (`part_columns`).

    Returns
    -------
    list of str

    Examples
    --------
    >>> csv_row(_GRADED, ["27.4(a)", "27.4(b)"])
    ['jane', 'Jane Smith', 'jane/27_4.ipynb', '27.4', 'graded', '', '3', '4', '3', '0']
    >>> csv_row(_NOT_GRADABLE, ["27.4(a)", "27.4(b)"])
    ['bob', 'bob', 'bob.ipynb', '', 'not gradable', 'bob.ipynb is not a Jupyter notebook', '', '4', '', '']
    """
    ok = counts(result)
    points = {p["part"]: p["points"] for p in result["parts"]} if ok else {}
    reason = result.get("reason") or result.get("error") or ""
    return [csv_cell(result.get("student_id", result["student"])), csv_cell(result["student"]),
            csv_cell(result["path"]), csv_cell(result.get("exercise") or ""), result.get("status", ""),
            csv_cell(reason), _points(result["score"]) if ok else "",
            _points(result["max_score"]) if ok or result["max_score"] else "",
            *(_points(points[n]) if n in points else "" for n in parts)]


def csv_tail(result: Mapping[str, Any]) -> list[str]:
    """The row's last cells (`CSV_TAIL`): its submission id, the similar submissions, final.

    Parameters
    ----------
    result : dict

    Returns
    -------
    list of str

    Examples
    --------
    >>> csv_tail(_GRADED)
    ['jane', '', 'yes']
    >>> csv_tail({"submission_id": "s1", "similar_to": ["s7", "s9"], "final": False})
    ['s1', 's7 s9', 'no']
    """
    return [csv_cell(result.get("submission_id", "")), csv_cell(" ".join(result.get("similar_to") or [])),
            "yes" if result.get("final", True) else "no"]


def full_row(result: Mapping[str, Any], parts: Iterable[str], written: Sequence[str] = ()) -> list[str]:
    """A whole CSV row: `csv_row`, the hand-graded parts' cells and totals, `csv_tail`.

    Parameters
    ----------
    result : dict
    parts : iterable of str
        The part columns (`part_columns`).
    written : sequence of str, optional
        The hand-graded parts' columns (`written_columns`).

    Returns
    -------
    list of str

    Examples
    --------
    Jane's written part is not marked yet: one part is pending, and her total so far is the checked 3 of 6.

    >>> from labkit.grading import manual
    >>> head = CSV_HEAD + ["27.4(a)", "27.4(b)"] + manual.csv_columns(["27.4(c) written"]) + CSV_TAIL
    >>> row = full_row(_GRADED, ["27.4(a)", "27.4(b)"], ["27.4(c) written"])
    >>> {column: cell for column, cell in zip(head, row, strict=True) if column in manual.TOTAL_COLUMNS}
    {'written_score': '', 'written_max': '2', 'manual_pending': '1', 'total': '3', 'total_max': '6', 'percent': '50.0'}
    """
    from labkit.grading import manual
    return (csv_row(result, parts) + [csv_cell(c) for c in manual.csv_cells(result, list(written))]
            + csv_tail(result))


def written_columns(results: Iterable[Mapping[str, Any]], exercises: Iterable[Any] | None = None) -> list[str]:
    """The hand-graded parts' columns: the exercises', then any other a result holds.

    Parameters
    ----------
    results : iterable of dict
    exercises : iterable of labkit.grading.notebooks.Exercise, optional

    Returns
    -------
    list of str

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> written_columns([_GRADED], [SimpleNamespace(written_points={"27.4(d) written": 1})])
    ['27.4(d) written', '27.4(c) written']
    """
    from labkit.grading import manual
    columns = manual.written_columns(exercises or [])
    columns += [w["part"] for r in results for w in r.get("written", []) if w["part"] not in columns]
    return list(dict.fromkeys(columns))


def _csv_line(cells):
    buffer = io.StringIO()
    csv.writer(buffer).writerow(cells)
    return buffer.getvalue()


def csv_text(results: Sequence[Mapping[str, Any]], exercises: Sequence[Any] | None = None) -> str:
    """The whole CSV (see the module's docstring) as text: a header, then one `full_row` per result.

    Parameters
    ----------
    results : list of dict
    exercises : list of labkit.grading.notebooks.Exercise, optional
        Their parts get columns even where no result has them.

    Returns
    -------
    str

    Examples
    --------
    >>> lines = csv_text([_GRADED, _NOT_GRADABLE]).splitlines()
    >>> lines[0].split(",")
    ['student_id', 'student', 'path', 'exercise', 'status', 'reason', 'score', 'max_score', '27.4(a)', '27.4(b)',
     '27.4(c) written', 'written_score', 'written_max', 'manual_pending', 'total', 'total_max', 'percent',
     'submission_id', 'similar_to', 'final']
    >>> for line in lines[1:]:
    ...     print(line)
    jane,Jane Smith,jane/27_4.ipynb,27.4,graded,,3,4,3,0,,,2,1,3,6,50.0,jane,,yes
    bob,bob,bob.ipynb,,not gradable,bob.ipynb is not a Jupyter notebook,,4,,,,,0,,,4,,bob,,yes
    """
    from labkit.grading import manual
    parts, written = part_columns(results, exercises), written_columns(results, exercises)
    return (_csv_line(CSV_HEAD + parts + manual.csv_columns(written) + CSV_TAIL)
            + "".join(_csv_line(full_row(r, parts, written)) for r in results))


def write_csv(results: Sequence[Mapping[str, Any]], path: str | os.PathLike[str],
              exercises: Sequence[Any] | None = None) -> None:
    """One row per submission (see the module's docstring), written at once as a new file (`csv_text`).

    Parameters
    ----------
    results : list of dict
    path : str or path
    exercises : list of labkit.grading.notebooks.Exercise, optional

    Raises
    ------
    labkit.grading.outputs.OutputError
        Where the file cannot be written (its folder is missing, say). A file or link already at
        `path` is replaced, never followed.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_csv([_GRADED, _NOT_GRADABLE], os.path.join(folder, "grades.csv"))
    ...     with open(os.path.join(folder, "grades.csv"), encoding="utf-8") as f:
    ...         print(len(f.read().splitlines()))
    3
    """
    write_new(path, csv_text(results, exercises))


class CsvLog:
    """A CSV file written row by row as results arrive (a new file; each row one write).
    ``written`` names the hand-graded parts' columns, which come after the parts with the
    totals (`labkit.grading.manual.TOTAL_COLUMNS`).

    Parameters
    ----------
    path : str or path
        The CSV to create; its header is written at once.
    parts : iterable of str
        The part columns (`part_columns`).
    written : iterable of str, optional
        The hand-graded parts' columns (`written_columns`).

    Raises
    ------
    labkit.grading.outputs.OutputError
        Where the file cannot be created (what was at `path`, a link included, is removed first,
        never followed).

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     log = CsvLog(os.path.join(folder, "grades.csv"), ["27.4(a)", "27.4(b)"], ["27.4(c) written"])
    ...     log.add(_GRADED)
    ...     log.close()
    ...     with open(os.path.join(folder, "grades.csv"), encoding="utf-8") as f:
    ...         print(f.read().splitlines()[1])
    jane,Jane Smith,jane/27_4.ipynb,27.4,graded,,3,4,3,0,,,2,1,3,6,50.0,jane,,yes
    """

    def __init__(self, path: str | os.PathLike[str], parts: Iterable[str], written: Iterable[str] = ()) -> None:
        from labkit.grading import manual
        self.parts, self.written = list(parts), list(written)
        self._file = open_new(path)
        self._file.write_line(_csv_line(CSV_HEAD + self.parts + manual.csv_columns(self.written) + CSV_TAIL))

    def add(self, result: Mapping[str, Any]) -> None:
        """Write the result's row (`full_row`).

        Parameters
        ----------
        result : dict

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     log = CsvLog(os.path.join(folder, "grades.csv"), ["27.4(a)", "27.4(b)"])
        ...     log.add(_NOT_GRADABLE)
        ...     log.close()
        ...     with open(os.path.join(folder, "grades.csv"), encoding="utf-8") as f:
        ...         print(f.read().splitlines()[1])
        bob,bob,bob.ipynb,,not gradable,bob.ipynb is not a Jupyter notebook,,4,,,,0,,,4,,bob,,yes
        """
        self._file.write_line(_csv_line(full_row(result, self.parts, self.written)))

    def close(self) -> None:
        """Close the file (each row was written as it came: nothing is lost without it).

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     log = CsvLog(os.path.join(folder, "grades.csv"), ["27.4(a)"])
        ...     log.close()
        ...     with open(os.path.join(folder, "grades.csv"), encoding="utf-8") as f:
        ...         print(f.read().splitlines()[0].split(",")[:2])
        ['student_id', 'student']
        """
        self._file.close()


class JsonLinesLog:
    """One JSON object per result, appended as results arrive (a new file; each line one write).

    Parameters
    ----------
    path : str or path
        The file to create.

    Raises
    ------
    labkit.grading.outputs.OutputError
        Where the file cannot be created (what was at `path`, a link included, is removed first,
        never followed).

    Examples
    --------
    >>> import json, os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     log = JsonLinesLog(os.path.join(folder, "grades.jsonl"))
    ...     log.add(_GRADED)
    ...     log.add(_NOT_GRADABLE)
    ...     log.close()
    ...     with open(os.path.join(folder, "grades.jsonl"), encoding="utf-8") as f:
    ...         print([json.loads(line)["score"] for line in f])
    [3.0, None]
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._file = open_new(path)

    def add(self, result: Mapping[str, Any]) -> None:
        """Write the result as one line of JSON (ASCII only).

        Parameters
        ----------
        result : dict

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     log = JsonLinesLog(os.path.join(folder, "grades.jsonl"))
        ...     log.add({"student": "Zoë", "score": 1.0})
        ...     log.close()
        ...     with open(os.path.join(folder, "grades.jsonl"), encoding="utf-8") as f:
        ...         print(f.read(), end="")
        {"student": "Zo\\u00eb", "score": 1.0}
        """
        self._file.write_line(json.dumps(result, ensure_ascii=True))

    def close(self) -> None:
        """Close the file (each line was written as it came: nothing is lost without it).

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     log = JsonLinesLog(os.path.join(folder, "grades.jsonl"))
        ...     log.close()
        ...     print(os.path.getsize(os.path.join(folder, "grades.jsonl")))
        0
        """
        self._file.close()


def jsonl_text(results: Iterable[Any]) -> str:
    """The results as JSON lines (what `JsonLinesLog` writes), as text.

    Parameters
    ----------
    results : iterable of dict

    Returns
    -------
    str

    Examples
    --------
    >>> print(jsonl_text([{"student": "jane", "score": 3.0}, {"student": "bob", "score": None}]), end="")
    {"student": "jane", "score": 3.0}
    {"student": "bob", "score": null}
    """
    return "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in results)


SIMILARITY_HEAD = ["group", "exercise", "submission_id", "student", "path", "score"]


def similarity_rows(results: Iterable[Mapping[str, Any] | None]) -> list[list[str]]:
    """Rows of the instructor's similarity report: one per submission that has the same answers
    as another, numbered by group (columns `SIMILARITY_HEAD`).

    Parameters
    ----------
    results : iterable of dict
        Results with ``similar_to`` (the other submissions' ids); None and those without are skipped.

    Returns
    -------
    list of list of str

    Examples
    --------
    >>> same = {"exercise": "27.4", "path": "x.ipynb", "score": 3.0}
    >>> similarity_rows([{**same, "submission_id": "s1", "student": "ann", "similar_to": ["s2"]},
    ...                  {**same, "submission_id": "s2", "student": "ben", "similar_to": ["s1"]}, _GRADED])
    [['1', '27.4', 's1', 'ann', 'x.ipynb', '3'], ['1', '27.4', 's2', 'ben', 'x.ipynb', '3']]
    """
    rows: list[list[str]] = []
    seen: dict[tuple[str, ...], int] = {}
    for r in results:
        if not r or not r.get("similar_to"):
            continue
        key = tuple(sorted([r["submission_id"], *r["similar_to"]]))
        group = seen.setdefault(key, len(seen) + 1)
        rows.append([str(group), r.get("exercise") or "", csv_cell(r["submission_id"]), csv_cell(r["student"]),
                     csv_cell(r["path"]), _points(r.get("score"))])
    return rows


def similarity_text(results: Iterable[Mapping[str, Any] | None]) -> str:
    """The instructor's similarity report as CSV text: `SIMILARITY_HEAD`, then `similarity_rows`.

    Parameters
    ----------
    results : iterable of dict

    Returns
    -------
    str

    Examples
    --------
    >>> print(similarity_text([_GRADED]), end="")
    group,exercise,submission_id,student,path,score
    """
    return _csv_line(SIMILARITY_HEAD) + "".join(_csv_line(row) for row in similarity_rows(results))


def json_ready(results: Sequence[Any]) -> Any:
    """The machine-readable form: one dict for one submission, a list for several.

    Parameters
    ----------
    results : list of dict

    Returns
    -------
    dict or list of dict

    Examples
    --------
    >>> json_ready([_GRADED])["student"], len(json_ready([_GRADED, _NOT_GRADABLE]))
    ('Jane Smith', 2)
    """
    return results[0] if len(results) == 1 else results


# -------------------------------------------------------------------- feedback per student

def feedback_markdown(result: Mapping[str, Any]) -> str:
    """The feedback a student reads, in Markdown (`labkit.grading.feedback`).

    Parameters
    ----------
    result : dict

    Returns
    -------
    str

    Examples
    --------
    >>> print(feedback_markdown(_GRADED).splitlines()[0])
    # Feedback: Jane Smith
    """
    from labkit.grading import feedback
    return feedback.feedback_markdown(result)


def feedback_html(result: Mapping[str, Any]) -> str:
    """The feedback a student reads, as one styled, self-contained page (`labkit.grading.feedback`).

    Parameters
    ----------
    result : dict

    Returns
    -------
    str

    Examples
    --------
    >>> page = feedback_html(_GRADED)
    >>> "Jane Smith" in page, "expected 0.5, got 1" in page
    (True, True)
    """
    from labkit.grading import feedback
    return feedback.feedback_html(result)


def feedback_stem(result: Mapping[str, Any]) -> str:
    """The feedback files' name (without .md or .html): the submission's id, a function of its
    path alone (`labkit.grading.identity`), so the same notebook always gets the same file.

    Parameters
    ----------
    result : dict

    Returns
    -------
    str
        A safe file name; an id that is not one is made one (`labkit.grading.identity.make_id`).

    Examples
    --------
    >>> feedback_stem(_GRADED)
    'jane'
    >>> "/" in feedback_stem({"student": "eve", "submission_id": "../../evil"})
    False
    """
    from labkit.grading.identity import make_id
    stem = result.get("submission_id") or make_id(result.get("student_id") or result["student"])
    return stem if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+~-]*(?: [A-Za-z0-9._+~-]+)*", stem) else make_id(stem)


class FeedbackWriter:
    """Writes ``DIR/<submission id>.md`` and ``DIR/<submission id>.html`` per result, each as a
    new file (never through a link planted in DIR).

    Parameters
    ----------
    folder : str or path
        DIR; made if missing.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     writer = FeedbackWriter(folder)
    ...     stem = writer.add(_GRADED)
    ...     writer.close()
    ...     print(stem, sorted(os.listdir(folder)))
    jane ['jane.html', 'jane.md']
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def add(self, result: Mapping[str, Any]) -> str:
        """Write the result's feedback in Markdown and HTML.

        Parameters
        ----------
        result : dict

        Returns
        -------
        str
            The files' name without the suffix (`feedback_stem`).

        Raises
        ------
        labkit.grading.outputs.OutputError
            Where a file cannot be written.

        Examples
        --------
        A link planted where the feedback goes is replaced; the file it pointed to is left alone.

        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     precious = os.path.join(folder, "precious.txt")
        ...     with open(precious, "w", encoding="utf-8") as f:
        ...         _ = f.write("keep me")
        ...     os.mkdir(os.path.join(folder, "feedback"))
        ...     os.symlink(precious, os.path.join(folder, "feedback", "jane.md"))
        ...     stem = FeedbackWriter(os.path.join(folder, "feedback")).add(_GRADED)
        ...     with open(precious, encoding="utf-8") as f:
        ...         print(stem, f.read(), os.path.islink(os.path.join(folder, "feedback", "jane.md")))
        jane keep me False
        """
        stem = feedback_stem(result)
        write_new(self.folder / f"{stem}.md", feedback_markdown(result))
        write_new(self.folder / f"{stem}.html", feedback_html(result))
        return stem

    def close(self) -> None:
        """Nothing to do (each file is complete when `add` returns); there for symmetry with the logs.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     FeedbackWriter(folder).close()
        """
        pass
