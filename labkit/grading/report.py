"""Reports of a graded class: the text table, the CSV for a gradebook, JSON lines, feedback per student.

Everything a student controls (file and folder names, exception messages in hints) is passed
through `clean` before it reaches a report: ANSI escape sequences and control characters
(newlines, carriage returns, tabs, bidirectional overrides) become spaces, so a message cannot
forge a line of the table or recolour the terminal; `csv_cell` also prefixes a cell that a
spreadsheet would read as a formula (``= + - @``) with a quote.

The CSV has one row per student: ``student_id`` (the file's stem, or the student's folder),
``student``, ``path``, ``exercise``, ``status`` (graded / flagged / not gradable), ``reason``,
``score`` (the points the grader checked), ``max_score`` (their maximum), one column per part, one
per hand-graded (written) part, and the totals with the written parts (`labkit.grading.manual`:
``written_score``, ``written_max``, ``manual_pending``, ``total``, ``total_max``, ``percent``). A notebook that
could not be graded has an empty score and empty parts, never 0 (its result has ``"score":
None``, ``null`` in JSON, and the exercise's ``max_score`` when that is known). `CsvLog` and `JsonLinesLog`
append one row per result as results arrive, so a crash of the grader loses nothing graded.
"""
from __future__ import annotations

import csv
import json
import re
import unicodedata
from pathlib import Path

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


def csv_row(result, parts):
    ok = counts(result)
    points = {p["part"]: p["points"] for p in result["parts"]} if ok else {}
    reason = result.get("reason") or result.get("error") or ""
    return [csv_cell(result.get("student_id", result["student"])), csv_cell(result["student"]),
            csv_cell(result["path"]), csv_cell(result.get("exercise") or ""), result.get("status", ""),
            csv_cell(reason), _points(result["score"]) if ok else "",
            _points(result["max_score"]) if ok or result["max_score"] else "",
            *(_points(points[n]) if n in points else "" for n in parts)]


def write_csv(results, path, exercises=None):
    """One row per submission (see the module's docstring), written at once."""
    from labkit.grading import manual
    written = manual.written_columns(exercises or [])
    written += [w["part"] for r in results for w in r.get("written", []) if w["part"] not in written]
    log = CsvLog(path, part_columns(results, exercises), list(dict.fromkeys(written)))
    for r in results:
        log.add(r)
    log.close()


class CsvLog:
    """A CSV file written row by row as results arrive (flushed after each row). ``written``
    names the hand-graded parts' columns, which come after the parts with the totals
    (`labkit.grading.manual.TOTAL_COLUMNS`)."""

    def __init__(self, path, parts, written=()):
        from labkit.grading import manual
        self.parts, self.written = list(parts), list(written)
        self._file = open(path, "w", newline="", encoding="utf-8")
        self._writer = csv.writer(self._file)
        self._writer.writerow(CSV_HEAD + self.parts + manual.csv_columns(self.written))
        self._file.flush()

    def add(self, result):
        from labkit.grading import manual
        self._writer.writerow(csv_row(result, self.parts) + [csv_cell(c) for c in manual.csv_cells(result, self.written)])
        self._file.flush()

    def close(self):
        self._file.close()


class JsonLinesLog:
    """One JSON object per result, appended as results arrive."""

    def __init__(self, path):
        self._file = open(path, "w", encoding="utf-8")

    def add(self, result):
        self._file.write(json.dumps(result, ensure_ascii=True) + "\n")
        self._file.flush()

    def close(self):
        self._file.close()


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


class FeedbackWriter:
    """Writes ``DIR/<student>.md`` and ``DIR/<student>.html`` per result (names made safe and unique)."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._used = set()

    def _stem(self, student):
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", clean(student, 80)).lstrip(".") or "student"
        candidate, k = stem, 2
        while candidate.lower() in self._used:
            candidate, k = f"{stem}-{k}", k + 1
        self._used.add(candidate.lower())
        return candidate

    def add(self, result):
        stem = self._stem(result["student"])
        (self.folder / f"{stem}.md").write_text(feedback_markdown(result), encoding="utf-8")
        (self.folder / f"{stem}.html").write_text(feedback_html(result), encoding="utf-8")
        return stem

    def close(self):
        pass
