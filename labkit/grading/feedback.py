"""The feedback a student reads: per part their own code, the verdict, the points and the hints.

`feedback_html` writes one self-contained page (the style sheet of `labkit.grading.render`, no
script, nothing loaded from elsewhere): the total, a table of the parts, then one box per part
with the verdict, the points, the student's answer cells in monospace, the hints, and for a
written part the student's text with its math rendered and, once merged, the points and comment
of the hand grading. `feedback_markdown` says the same in Markdown that reads as written: code in
fenced blocks and backticks kept as backticks; only ``<`` in text a student controls is written as
an entity, so that no HTML of theirs reaches a page that renders the Markdown.

Neither names another student: a similarity finding ("same answers as ...") is for the
instructor's outputs only and is left out here.
"""
from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from labkit.grading import render

PRIVATE_FLAGS = ("same answers as",)         # instructor-only findings: never in a student's feedback


def code_by_part(exercise: Any, answers: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """{part: [source of each answer cell]} from a notebook's answers {slot: [sources]}.

    Parameters
    ----------
    exercise : Exercise
        Its ``cells`` (``role``, ``slot``, ``part``) map answer slots to parts.
    answers : mapping {slot: list of str}
        The notebook's answer cells; a slot of no answer cell keeps its own name.

    Returns
    -------
    dict {part: list of str}

    Examples
    --------
    >>> from types import SimpleNamespace as Cell
    >>> exercise = Cell(cells=[Cell(role="answer", slot="27.4(a) code", part="27.4(a)")])
    >>> code_by_part(exercise, {"27.4(a) code": ["x = 1"], "extra": ["y = 2"]})
    {'27.4(a)': ['x = 1'], 'extra': ['y = 2']}
    """
    slot_part = {c.slot: c.part for c in exercise.cells if c.role == "answer"}
    out: dict[str, list[str]] = {}
    for slot, sources in answers.items():
        out.setdefault(slot_part.get(slot, slot), []).extend(sources)
    return out


def student_flags(result: Mapping[str, Any]) -> list[str]:
    """The notes on a result that its student may read (`PRIVATE_FLAGS` left out).

    Parameters
    ----------
    result : dict
        A graded result.

    Returns
    -------
    list of str

    Examples
    --------
    >>> student_flags({"flags": ["same answers as bob", "handed in late"]})
    ['handed in late']
    """
    return [f for f in result.get("flags", []) if not any(p in f for p in PRIVATE_FLAGS)]


def _counts(result):
    return result.get("status") != "not gradable" and not result.get("error")


def _fmt(x):
    return "-" if x is None else f"{x:g}"


def _clean(text, limit=1000):
    from labkit.grading.report import clean
    return clean(text, limit)


def _written_points(w):
    if "points" in w:
        return f"{_fmt(w['points'])} / {_fmt(w.get('max_points'))}"
    return f"- / {_fmt(w.get('max_points'))}"


def _total_line(result):
    from labkit.grading.manual import totals
    total, total_max = totals(result)
    line = f"{_fmt(result['score'])} / {_fmt(result['max_score'])} points checked by the grader"
    written = result.get("written", [])
    if written:
        pending = result.get("manual_pending", len(written))
        if "written_score" in result:
            line += (f"; {_fmt(result['written_score'])} / {_fmt(result['written_max'])} for the written parts"
                     + (f" ({pending} not graded yet)" if pending else ""))
            line += f"; total {_fmt(total)} / {_fmt(total_max)}"
        else:
            line += f"; the written parts ({_fmt(total_max - result['max_score'])} points) are graded by hand"
    return line


# ------------------------------------------------------------ HTML


def feedback_html(result: Mapping[str, Any]) -> str:
    """The student's feedback as one HTML page (module docstring).

    Parameters
    ----------
    result : dict
        A result, graded or not.

    Returns
    -------
    str
        A self-contained page; the student's own text is escaped and no other student is named.

    Examples
    --------
    >>> result = {"student": "jane", "exercise": "27.4", "score": 1.0, "max_score": 2.0,
    ...           "parts": [{"part": "27.4(a)", "verdict": "pass", "points": 1.0, "max_points": 1.0, "hints": []},
    ...                     {"part": "27.4(b)", "verdict": "fail", "points": 0.0, "max_points": 1.0,
    ...                      "hints": ["check <b>the sum</b>"]}],
    ...           "code": {"27.4(a)": ["x = 1"]}, "flags": ["same answers as bob", "late"]}
    >>> page = feedback_html(result)
    >>> "check &lt;b&gt;the sum&lt;/b&gt;" in page, "bob" in page, "late" in page
    (True, False, True)
    """

    def esc(t: Any, n: int = 1000) -> str:
        return html.escape(_clean(t, n))

    title = f"Feedback: {_clean(result['student'], 120)}"
    body = [f"<h1>{html.escape(title)}</h1>"]
    if not _counts(result):
        body += [f"<p class=\"lead\">Exercise {esc(result.get('exercise') or '?')}: <strong>not graded</strong>.</p>",
                 f"<p class=\"note\">{esc(result.get('error') or result.get('reason'))}</p>",
                 "<p>Fix the notebook and hand it in again; nothing was scored.</p>"]
        return render.page(title, "\n".join(body))
    body.append(f"<p class=\"lead\">Exercise {esc(result['exercise'])}: {html.escape(_total_line(result))}.</p>")
    rows = [f"<tr><td><a href=\"#{_anchor(p['part'])}\">{esc(p['part'])}</a></td>"
            f"<td><span class=\"verdict {_css(p['verdict'])}\">{esc(p['verdict'])}</span></td>"
            f"<td class=\"num\">{_fmt(p['points'])} / {_fmt(p['max_points'])}</td></tr>" for p in result["parts"]]
    rows += [f"<tr><td><a href=\"#{_anchor(w['part'])}\">{esc(w['part'])}</a></td>"
             f"<td><span class=\"verdict hand\">{'graded' if 'points' in w else 'by hand'}</span></td>"
             f"<td class=\"num\">{_written_points(w)}</td></tr>" for w in result.get("written", [])]
    body.append("<table><thead><tr><th>part</th><th>result</th><th>points</th></tr></thead><tbody>\n"
                + "\n".join(rows) + "\n</tbody></table>")
    code = result.get("code", {})
    written = {w["part"].split(" ")[0]: w for w in result.get("written", [])}
    for p in result["parts"]:
        box = [f"<section class=\"part\" id=\"{_anchor(p['part'])}\"><header><h3>{esc(p['part'])}</h3>"
               f"<span class=\"verdict {_css(p['verdict'])}\">{esc(p['verdict'])}</span>"
               f"<span class=\"points\">{_fmt(p['points'])} / {_fmt(p['max_points'])} points</span></header>"]
        sources = [s for s in code.get(p["part"], []) if s.strip()]
        box.append("\n".join(render.code(s) for s in sources) if sources
                   else "<p class=\"lead\">No code in the answer cell.</p>")
        if p["hints"]:
            box.append("<ul class=\"hints\">" + "".join(f"<li>{_hint_html(h)}</li>" for h in p["hints"]) + "</ul>")
        box.append("</section>")
        body.append("\n".join(box))
        w = written.pop(p["part"], None)
        if w is not None:
            body.append(_written_html(w))
    body += [_written_html(w) for w in written.values()]
    notes = [f"<li>{esc(f)}</li>" for f in student_flags(result)]
    if notes:
        body.append("<h2>Notes</h2><ul>" + "".join(notes) + "</ul>")
    return render.page(title, "\n".join(body))


def _written_html(w):
    esc = lambda t: html.escape(_clean(t))        # noqa: E731
    state = "graded" if "points" in w else "by hand"
    out = [f"<section class=\"part\" id=\"{_anchor(w['part'])}\"><header><h3>{esc(w['part'])}</h3>"
           f"<span class=\"verdict hand\">{state}</span>"
           f"<span class=\"points\">{_written_points(w)} points</span></header>"]
    out.append(f"<div class=\"answer\">{render.markdown(w.get('text', ''))}</div>" if w.get("answered")
               else "<p class=\"lead\">Left blank.</p>")
    if w.get("comment"):
        out.append(f"<p class=\"note\">{esc(w['comment'])}</p>")
    elif "points" not in w:
        out.append("<p class=\"lead\">Your instructor grades this part by hand.</p>")
    out.append("</section>")
    return "\n".join(out)


_BACKTICKS = re.compile(r"`([^`]+)`")


def _hint_html(hint):
    """A hint with its `code` spans in monospace (the rest escaped)."""
    text = _clean(hint)
    parts = _BACKTICKS.split(text)
    return "".join(f"<code>{html.escape(x)}</code>" if k % 2 else html.escape(x) for k, x in enumerate(parts))


def _anchor(part):
    return "part-" + re.sub(r"[^A-Za-z0-9]+", "-", part).strip("-")


def _css(verdict):
    return re.sub(r"[^a-z-]", "", str(verdict).lower())


# ------------------------------------------------------------ Markdown


def _md(text, limit=1000):
    """Text a student may control, safe in Markdown: one line, ``<`` as an entity (no HTML tag
    can open)."""
    return _clean(text, limit).replace("<", "&lt;")


def _fence(source):
    """A fenced code block whose fence is longer than any run of backticks inside."""
    longest = max((len(m) for m in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}python\n{source.rstrip()}\n{fence}"


def feedback_markdown(result: Mapping[str, Any]) -> str:
    """The student's feedback as Markdown (code fenced, nothing escaped with backslashes).

    Parameters
    ----------
    result : dict
        A result, graded or not.

    Returns
    -------
    str
        Markdown in which ``<`` of text the student controls is an entity.

    Examples
    --------
    >>> result = {"student": "jane", "exercise": "27.4", "score": 1.0, "max_score": 2.0,
    ...           "parts": [{"part": "27.4(a)", "verdict": "pass", "points": 1.0, "max_points": 1.0, "hints": []},
    ...                     {"part": "27.4(b)", "verdict": "fail", "points": 0.0, "max_points": 1.0,
    ...                      "hints": ["check <b>the sum</b>"]}],
    ...           "code": {"27.4(a)": ["x = 1"]}, "flags": ["same answers as bob", "late"]}
    >>> print(feedback_markdown(result))
    # Feedback: jane
    <BLANKLINE>
    Exercise 27.4: 1 / 2 points checked by the grader.
    <BLANKLINE>
    | part | result | points |
    |---|---|---|
    | 27.4(a) | pass | 1 / 1 |
    | 27.4(b) | fail | 0 / 1 |
    <BLANKLINE>
    ## 27.4(a): pass, 1 / 1
    <BLANKLINE>
    ```python
    x = 1
    ```
    <BLANKLINE>
    ## 27.4(b): fail, 0 / 1
    <BLANKLINE>
    No code in the answer cell.
    <BLANKLINE>
    - check &lt;b>the sum&lt;/b>
    <BLANKLINE>
    ## Notes
    <BLANKLINE>
    - late
    <BLANKLINE>
    """
    lines = [f"# Feedback: {_md(result['student'], 120)}", ""]
    if not _counts(result):
        lines += [f"Exercise {_md(result.get('exercise') or '?')}: **not graded**.", "",
                  f"Why: {_md(result.get('error') or result.get('reason'))}", "",
                  "Fix the notebook and hand it in again; nothing was scored.", ""]
        return "\n".join(lines)
    lines += [f"Exercise {result['exercise']}: {_total_line(result)}.", "",
              "| part | result | points |", "|---|---|---|"]
    lines += [f"| {p['part']} | {p['verdict']} | {_fmt(p['points'])} / {_fmt(p['max_points'])} |"
              for p in result["parts"]]
    lines += [f"| {w['part']} | {'graded' if 'points' in w else 'by hand'} | {_written_points(w)} |"
              for w in result.get("written", [])]
    lines.append("")
    code = result.get("code", {})
    written = {w["part"].split(" ")[0]: w for w in result.get("written", [])}
    for p in result["parts"]:
        lines += [f"## {p['part']}: {p['verdict']}, {_fmt(p['points'])} / {_fmt(p['max_points'])}", ""]
        sources = [s for s in code.get(p["part"], []) if s.strip()]
        lines += [_fence(s) + "\n" for s in sources] or ["No code in the answer cell.", ""]
        lines += [f"- {_md(h)}" for h in p["hints"]]
        if p["hints"]:
            lines.append("")
        w = written.pop(p["part"], None)
        if w is not None:
            lines += _written_markdown(w)
    for w in written.values():
        lines += _written_markdown(w)
    notes = student_flags(result)
    if notes:
        lines += ["## Notes", ""] + [f"- {_md(f)}" for f in notes] + [""]
    return "\n".join(lines).rstrip() + "\n"


def _written_markdown(w):
    lines = [f"## {w['part']}: {_written_points(w)} (graded by hand)", ""]
    if not w.get("answered"):
        lines += ["Left blank.", ""]
    else:
        lines += ["> " + line if line.strip() else ">" for line in _md_block(w.get("text", "")).splitlines()] + [""]
    if w.get("comment"):
        lines += [f"Comment: {_md(w['comment'])}", ""]
    return lines


def _md_block(text):
    """A student's Markdown quoted as it is, but with no raw HTML."""
    return (text or "").replace("<", "&lt;")
