"""Review pages for hand grading: every student's written answers side by side, and a manual.csv to fill in.

``labkit-grade ... --review DIR`` writes, per exercise of the class, ``DIR/<exercise file name>.html``:
for each written part, the question as the students read it, the model answer (folded), then one
card per student with their answer rendered -- Markdown and math, as they wrote it, never run
(`labkit.grading.render`) -- headed by the ``student_id`` and ``part`` of its row in
``DIR/manual.csv`` (`labkit.grading.manual`), where the points and a comment go. A manual.csv
already in DIR is never overwritten: the new one is written beside it as ``manual-2.csv`` (and so on).
"""
from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from labkit.grading import manual, render


def _prompts(exercise):
    """{written slot: the Markdown of the question just before it}."""
    out, last = {}, ""
    for cell in exercise.cells:
        if cell.role == "markdown":
            last = cell.source
        elif cell.role == "written":
            out[cell.slot] = last
    return out


def _graded(result):
    return result.get("status") != "not gradable" and not result.get("error")


def exercise_page(exercise: Any, results: Sequence[Mapping[str, Any]]) -> str:
    r"""The review page of one exercise (HTML) from its graded results.

    Parameters
    ----------
    exercise : Exercise
        The instructor's exercise (``number``, ``title``, ``cells``, ``written_points``).
    results : sequence of dict
        Its graded results; those not gradable are left out.

    Returns
    -------
    str
        A whole page (`labkit.grading.render.page`): per written part the question, the model
        answer folded, and one card per student, the answers rendered and never run.

    Examples
    --------
    >>> from types import SimpleNamespace as Cell
    >>> exercise = Cell(number="27.4", title="Regret", slug="27_4-regret", written_points={"27.4(a) written": 2},
    ...                 cells=[Cell(role="markdown", source="Why does $R_T / T \\to 0$?", slot=None, solution=None),
    ...                        Cell(role="written", source="", slot="27.4(a) written", solution="Sublinear regret.")])
    >>> result = {"student": "jane", "exercise": "27.4", "score": 5.0,
    ...           "written": [{"part": "27.4(a) written", "answered": True, "text": "<b>Because</b>"}]}
    >>> page = exercise_page(exercise, [result])
    >>> "<b>Because</b>" in page, "&lt;b&gt;Because&lt;/b&gt;" in page, "1 of 1 answered" in page
    (False, True, True)
    """

    def esc(t: Any, n: int = 200) -> str:
        return html.escape(_clean(t, n))

    graded = sorted((r for r in results if _graded(r)), key=lambda r: str(r.get("student_id", r["student"])).lower())
    title = f"Review: exercise {exercise.number}, {exercise.title}"
    body = [f"<h1>{html.escape(title)}</h1>",
            f"<p class=\"lead\">{len(graded)} graded notebooks. Enter the points of each written part in "
            "<code>manual.csv</code> (the row named on each card), then run <code>labkit-grade merge GRADES.csv "
            "manual.csv</code>, or grade again with <code>--manual manual.csv</code>.</p>"]
    prompts = {c.slot: c for c in exercise.cells if c.role == "written"}
    questions = _prompts(exercise)
    for slot, points in exercise.written_points.items():
        answers = [(r, next((w for w in r.get("written", []) if w["part"] == slot), None)) for r in graded]
        count = sum(1 for _, w in answers if w is not None and w.get("answered"))
        body.append(f"<h2 id=\"{html.escape(_anchor(slot))}\">{html.escape(slot)}: {points:g} "
                    f"point{'s' if points != 1 else ''} <span class=\"lead\">({count} of {len(graded)} answered)"
                    "</span></h2>")
        body.append(f"<div class=\"prompt\">{render.markdown(questions.get(slot, ''))}</div>")
        body.append("<details class=\"model\"><summary>Model answer</summary>"
                    f"{render.markdown(prompts[slot].solution or '')}</details>")
        cards = []
        for r, w in answers:
            student = r.get("student_id", r["student"])
            answered = w is not None and w.get("answered")
            mark = ""
            if w is not None and "points" in w:
                mark = f" &middot; {w['points']:g}/{points:g}" + (f": {esc(w.get('comment'), 300)}" if w.get("comment")
                                                                    else "")
            head = (f"<h4>{esc(student)}</h4><p class=\"row\">manual.csv row: {html.escape(slot)}{mark}</p>")
            text = render.markdown(w.get("text", "")) if answered and w is not None else "<p>Left blank.</p>"
            cards.append(f"<article class=\"card{'' if answered else ' blank'}\">{head}<div class=\"answer\">{text}"
                         "</div></article>")
        body.append("<div class=\"grid\">" + "\n".join(cards) + "</div>")
    if not exercise.written_points:
        body.append("<p>This exercise has no written parts.</p>")
    return render.page(title, "\n".join(body))


def _clean(text, limit):
    from labkit.grading.report import clean
    return clean(text, limit)


def _anchor(slot):
    return "".join(ch if ch.isalnum() else "-" for ch in slot).strip("-")


def write(results: Sequence[Mapping[str, Any]], folder: str | Path, exercises: Mapping[str, Any]) -> list[Path]:
    r"""Write the review pages and the manual.csv into `folder` (created if missing); a file
    already there is never overwritten (a free name beside it is used).

    Parameters
    ----------
    results : sequence of dict
        The graded results of a class.
    folder : str or Path
        Where to write.
    exercises : mapping {number: Exercise}
        The instructor's exercises; one page per exercise with graded results.

    Returns
    -------
    list of pathlib.Path
        The files written.

    Examples
    --------
    >>> from types import SimpleNamespace as Cell
    >>> exercise = Cell(number="27.4", title="Regret", slug="27_4-regret", written_points={"27.4(a) written": 2},
    ...                 cells=[Cell(role="markdown", source="Why does $R_T / T \\to 0$?", slot=None, solution=None),
    ...                        Cell(role="written", source="", slot="27.4(a) written", solution="Sublinear regret.")])
    >>> result = {"student": "jane", "exercise": "27.4", "score": 5.0,
    ...           "written": [{"part": "27.4(a) written", "answered": True, "text": "<b>Because</b>"}]}
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     print([path.name for path in write([result], folder, {"27.4": exercise})])
    ['27_4-regret.html', 'manual.csv']
    """
    from labkit.grading.gradebook import write_new
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    numbers = sorted({r["exercise"] for r in results if _graded(r) and r.get("exercise") in exercises},
                     key=list(exercises).index)
    written = []
    for number in numbers:
        ex = exercises[number]
        page = exercise_page(ex, [r for r in results if r.get("exercise") == number])
        written.append(write_new(folder / f"{ex.slug}.html", page))
    written.append(manual.write_template(results, folder / "manual.csv"))
    return written
