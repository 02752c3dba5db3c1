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
import re
import unicodedata
from pathlib import Path

from labkit.grading.outputs import open_new, write_new

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|\x9b[0-?]*[ -/]*[@-~]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
MAX_TEXT = 1000


def clean(text, limit=MAX_TEXT):
    """`text` as one safe line: no ANSI sequences, no control or format characters, at most
    `limit` characters."""
    text = _ANSI.sub("", "" if text is None else str(text))
    out = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn") else ch
                  for ch in text)
    out = " ".join(out.split())
    return out if len(out) <= limit else out[:limit - 3] + "..."


def csv_cell(text):
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    raw = "" if text is None else str(text)
    out = clean(raw)
    if raw[:1] in FORMULA_START or out[:1] in FORMULA_START:
        out = "'" + out
    return out


def _points(x):
    return "-" if x is None else f"{x:g}"


def counts(result):
    """Whether a result's score goes into a gradebook."""
    return result.get("status") != "not gradable" and not result.get("error")


# -------------------------------------------------------------------- the table


def format_table(results):
    """A text table: one block per submission, one line per part, then the total."""
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


def part_columns(results=(), exercises=None):
    """The part columns: those of the exercises given, else those found in the results."""
    names = []
    for ex in exercises or []:
        names += [p for p in ex.parts if p not in names]
    for r in results:
        names += [p["part"] for p in r["parts"] if p["part"] not in names]
    return names


CSV_HEAD = ["student_id", "student", "path", "exercise", "status", "reason", "score", "max_score"]
CSV_TAIL = ["submission_id", "similar_to", "final"]


def csv_row(result, parts):
    ok = counts(result)
    points = {p["part"]: p["points"] for p in result["parts"]} if ok else {}
    reason = result.get("reason") or result.get("error") or ""
    return [csv_cell(result.get("student_id", result["student"])), csv_cell(result["student"]),
            csv_cell(result["path"]), csv_cell(result.get("exercise") or ""), result.get("status", ""),
            csv_cell(reason), _points(result["score"]) if ok else "",
            _points(result["max_score"]) if ok or result["max_score"] else "",
            *(_points(points[n]) if n in points else "" for n in parts)]


def csv_tail(result):
    """The row's last cells (`CSV_TAIL`): its submission id, the similar submissions, final."""
    return [csv_cell(result.get("submission_id", "")), csv_cell(" ".join(result.get("similar_to") or [])),
            "yes" if result.get("final", True) else "no"]


def full_row(result, parts, written=()):
    """A whole CSV row: `csv_row`, the hand-graded parts' cells and totals, `csv_tail`."""
    from labkit.grading import manual
    return (csv_row(result, parts) + [csv_cell(c) for c in manual.csv_cells(result, list(written))]
            + csv_tail(result))


def written_columns(results, exercises=None):
    """The hand-graded parts' columns: the exercises', then any other a result holds."""
    from labkit.grading import manual
    columns = manual.written_columns(exercises or [])
    columns += [w["part"] for r in results for w in r.get("written", []) if w["part"] not in columns]
    return list(dict.fromkeys(columns))


def _csv_line(cells):
    buffer = io.StringIO()
    csv.writer(buffer).writerow(cells)
    return buffer.getvalue()


def csv_text(results, exercises=None):
    """The whole CSV (see the module's docstring) as text."""
    from labkit.grading import manual
    parts, written = part_columns(results, exercises), written_columns(results, exercises)
    return (_csv_line(CSV_HEAD + parts + manual.csv_columns(written) + CSV_TAIL)
            + "".join(_csv_line(full_row(r, parts, written)) for r in results))


def write_csv(results, path, exercises=None):
    """One row per submission (see the module's docstring), written at once as a new file."""
    write_new(path, csv_text(results, exercises))


class CsvLog:
    """A CSV file written row by row as results arrive (a new file; each row one write).
    ``written`` names the hand-graded parts' columns, which come after the parts with the
    totals (`labkit.grading.manual.TOTAL_COLUMNS`)."""

    def __init__(self, path, parts, written=()):
        from labkit.grading import manual
        self.parts, self.written = list(parts), list(written)
        self._file = open_new(path)
        self._file.write_line(_csv_line(CSV_HEAD + self.parts + manual.csv_columns(self.written) + CSV_TAIL))

    def add(self, result):
        self._file.write_line(_csv_line(full_row(result, self.parts, self.written)))

    def close(self):
        self._file.close()


class JsonLinesLog:
    """One JSON object per result, appended as results arrive (a new file; each line one write)."""

    def __init__(self, path):
        self._file = open_new(path)

    def add(self, result):
        self._file.write_line(json.dumps(result, ensure_ascii=True))

    def close(self):
        self._file.close()


def jsonl_text(results):
    return "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in results)


SIMILARITY_HEAD = ["group", "exercise", "submission_id", "student", "path", "score"]


def similarity_rows(results):
    """Rows of the instructor's similarity report: one per submission that has the same answers
    as another, numbered by group."""
    rows, seen = [], {}
    for r in results:
        if not r or not r.get("similar_to"):
            continue
        key = tuple(sorted([r["submission_id"], *r["similar_to"]]))
        group = seen.setdefault(key, len(seen) + 1)
        rows.append([str(group), r.get("exercise") or "", csv_cell(r["submission_id"]), csv_cell(r["student"]),
                     csv_cell(r["path"]), _points(r.get("score"))])
    return rows


def similarity_text(results):
    return _csv_line(SIMILARITY_HEAD) + "".join(_csv_line(row) for row in similarity_rows(results))


def json_ready(results):
    """The machine-readable form: one dict for one submission, a list for several."""
    return results[0] if len(results) == 1 else results


# -------------------------------------------------------------------- feedback per student

def feedback_markdown(result):
    """The feedback a student reads, in Markdown (`labkit.grading.feedback`)."""
    from labkit.grading import feedback
    return feedback.feedback_markdown(result)


def feedback_html(result):
    """The feedback a student reads, as one styled, self-contained page (`labkit.grading.feedback`)."""
    from labkit.grading import feedback
    return feedback.feedback_html(result)


def feedback_stem(result):
    """The feedback files' name (without .md or .html): the submission's id, a function of its
    path alone (`labkit.grading.identity`), so the same notebook always gets the same file."""
    from labkit.grading.identity import make_id
    stem = result.get("submission_id") or make_id(result.get("student_id") or result["student"])
    return stem if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+~-]*(?: [A-Za-z0-9._+~-]+)*", stem) else make_id(stem)


class FeedbackWriter:
    """Writes ``DIR/<submission id>.md`` and ``DIR/<submission id>.html`` per result, each as a
    new file (never through a link planted in DIR)."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def add(self, result):
        stem = feedback_stem(result)
        write_new(self.folder / f"{stem}.md", feedback_markdown(result))
        write_new(self.folder / f"{stem}.html", feedback_html(result))
        return stem

    def close(self):
        pass
