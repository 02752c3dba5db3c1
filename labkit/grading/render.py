"""Student text as safe, readable HTML: Markdown with math, code in monospace, one style sheet.

The review pages (`labkit.grading.review`) and the feedback files (`labkit.grading.feedback`)
show what students wrote, which is hostile input: it must read as they meant it and must never
run. So

* Markdown is rendered by markdown-it-py (CommonMark) **with raw HTML off**: ``<script>`` in an
  answer shows as text. Links keep markdown-it's own check (no ``javascript:`` or ``data:``); images
  are shown as their alt text, so a page never loads anything from elsewhere.
* Math between ``$...$`` or ``$$...$$`` becomes MathML (latex2mathml), which browsers draw without
  any script, and which is rebuilt element by element from an allow-list of MathML elements and
  attributes (latex2mathml copies ``\\text{...}`` verbatim and turns ``\\href`` into an attribute).
  Where latex2mathml is missing or fails, the TeX is shown as it was written, in a math font.
* Code goes in ``<pre><code>``, escaped.

Everything is self-contained: one ``<style>`` block (`STYLE`), no script, no external file.
"""
from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

MATHML = "http://www.w3.org/1998/Math/MathML"
MATH_ELEMENTS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup", "mfrac",
                 "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded",
                 "mphantom", "menclose", "mfenced", "merror", "mmultiscripts", "mprescripts", "none", "semantics"}
MATH_ATTRIBUTES = {"display", "mathvariant", "displaystyle", "scriptlevel", "stretchy", "fence", "separator",
                   "lspace", "rspace", "accent", "accentunder", "columnalign", "rowalign", "columnspacing",
                   "rowspacing", "linethickness", "width", "height", "depth", "notation", "minsize", "maxsize",
                   "movablelimits", "symmetric", "largeop", "form", "mathsize", "columnlines", "rowlines", "frame",
                   "open", "close", "separators", "mathcolor", "mathbackground"}
SAFE_VALUE = re.compile(r"^[\w .%#+-]{0,64}$")
MAX_TEX = 2000

STYLE = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa; --pass: #1a7f37;
        --partial: #9a6700; --fail: #cf222e; --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1.5rem 2rem 4rem; color: var(--ink); background: #fff;
       font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 1.6rem; margin: 0 0 .3rem; } h2 { font-size: 1.25rem; margin: 2rem 0 .6rem;
     padding-bottom: .3rem; border-bottom: 1px solid var(--line); } h3 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
.lead { color: var(--muted); margin: 0 0 1rem; }
code, pre, .tex { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
                  font-size: .88em; }
code { background: var(--soft); padding: .1em .3em; border-radius: 4px; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: .8rem 1rem;
      overflow-x: auto; line-height: 1.45; white-space: pre; }
pre code { background: none; padding: 0; }
.tex { color: #3b2e7e; }
math { font-size: 1.08em; } math[display="block"] { margin: .6rem 0; }
.math.block { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .6rem 0 1rem; } th, td { border: 1px solid var(--line);
        padding: .35rem .7rem; text-align: left; vertical-align: top; } th { background: var(--soft); }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.verdict { font-weight: 600; text-transform: uppercase; font-size: .8rem; letter-spacing: .03em;
           padding: .15rem .5rem; border-radius: 999px; border: 1px solid currentColor; white-space: nowrap; }
.pass { color: var(--pass); } .partial { color: var(--partial); } .fail, .error, .timeout, .missing,
.kernel-died, .output-flood, .out-of-memory, .budget, .tampered { color: var(--fail); }
.hand { color: var(--accent); }
.part { border: 1px solid var(--line); border-radius: 8px; padding: .9rem 1.1rem; margin: 1rem 0; }
.part header { display: flex; gap: .8rem; align-items: baseline; flex-wrap: wrap; }
.part header h3 { margin: 0; } .points { margin-left: auto; font-variant-numeric: tabular-nums; }
ul.hints { margin: .5rem 0 0; padding-left: 1.2rem; } ul.hints li { margin: .2rem 0; }
.note { background: #fff8c5; border: 1px solid #d4a72c66; border-radius: 6px; padding: .6rem .9rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(22rem, 1fr)); gap: 1rem; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; background: #fff;
        overflow-wrap: anywhere; }
.card h4 { margin: 0; font-size: .95rem; } .card .row { margin: 0 0 .5rem; color: var(--muted); font-size: .85rem; }
.card.blank { background: var(--soft); color: var(--muted); }
details.model { background: #ddf4ff; border: 1px solid #54aeff66; border-radius: 8px; padding: .6rem 1rem;
                margin: .6rem 0 1rem; }
.prompt { border-left: 3px solid var(--line); padding-left: 1rem; color: var(--muted); }
.answer { overflow-wrap: anywhere; }
"""


def page(title: str, body: str) -> str:
    """A whole HTML page: `title` (plain text) and `body` (HTML), with `STYLE` and nothing else.

    Parameters
    ----------
    title : str
        Plain text (escaped).
    body : str
        HTML, put in as it is: the caller builds it from `markdown`, `code` and `tex`.

    Returns
    -------
    str
        The page, with no script and no external file.

    Examples
    --------
    >>> html_page = page("Ann & Bo", "<p>hello</p>")
    >>> "<title>Ann &amp; Bo</title>" in html_page, "<script" in html_page
    (True, False)
    """
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head><body>\n{body}\n</body></html>\n")


def code(source: str | None) -> str:
    """Source code as an escaped ``<pre><code>`` block.

    Parameters
    ----------
    source : str or None
        The code (None is shown as an empty block).

    Returns
    -------
    str
        HTML.

    Examples
    --------
    >>> code("if a < b:")
    '<pre><code>if a &lt; b:</code></pre>'
    """
    return f"<pre><code>{html.escape(source or '')}</code></pre>"


def tex(text: str | None, display: bool = False) -> str:
    r"""TeX as MathML when it converts, else as the TeX itself in a math font (escaped).

    The MathML is rebuilt from an allow-list of elements and attributes (`MATH_ELEMENTS`,
    `MATH_ATTRIBUTES`); TeX longer than `MAX_TEX` characters is shown as TeX.

    Parameters
    ----------
    text : str or None
        TeX without its dollar signs.
    display : bool, default False
        A displayed formula (a block) instead of inline maths.

    Returns
    -------
    str
        HTML: a ``<math>`` element, or a ``span`` (``div`` when displayed) of class ``tex``.

    Examples
    --------
    >>> tex(r"\frac{1}{", display=True)                    # TeX that does not convert
    '<div class="tex">$$\\frac{1}{$$</div>'
    >>> tex("x^2").startswith(('<math xmlns="http://www.w3.org/1998/Math/MathML"', '<span class="tex">'))
    True
    """
    text = (text or "").strip()
    mathml = _mathml(text, display) if len(text) <= MAX_TEX else None
    if mathml is not None:
        return mathml
    delimiter = "$$" if display else "$"
    element = "div" if display else "span"
    return f'<{element} class="tex">{html.escape(delimiter + text + delimiter)}</{element}>'


def _mathml(text, display):
    try:
        from latex2mathml.converter import convert
        raw = convert(text, display="block" if display else "inline")
        tree = ET.fromstring(raw)
    except Exception:               # not installed, or TeX it cannot read: the TeX is shown instead
        return None
    out = _rebuild(tree)
    return out


def _rebuild(element):
    """An allow-listed copy of a MathML tree as text (unknown elements and attributes dropped,
    text escaped)."""
    tag = element.tag.split("}")[-1]
    if tag not in MATH_ELEMENTS:
        return html.escape("".join(element.itertext()))
    attributes = "".join(f' {name}="{html.escape(value)}"' for name, value in sorted(element.attrib.items())
                         if name in MATH_ATTRIBUTES and SAFE_VALUE.match(value))
    if tag == "math":
        attributes = f' xmlns="{MATHML}"' + attributes
    inner = html.escape(element.text or "")
    for child in element:
        inner += _rebuild(child) + html.escape(child.tail or "")
    return f"<{tag}{attributes}>{inner}</{tag}>"


_markdown = None


def _parser():
    global _markdown
    if _markdown is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.dollarmath import dollarmath_plugin
        md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
        dollarmath_plugin(md, allow_space=True, allow_digits=True, double_inline=True,
                          renderer=lambda content, options: tex(content, options.get("display_mode", False)))

        def image(renderer, tokens, idx, options, env):      # alt text, never a request for a file
            return f'<span class="tex">[image: {html.escape(tokens[idx].content)}]</span>'
        md.add_render_rule("image", image)
        _markdown = md
    return _markdown


def markdown(text: str | None) -> str:
    """A student's (or the exercise's) Markdown as safe HTML, math included.

    CommonMark with tables, raw HTML off (it shows as text), images as their alt text, and
    ``$...$`` / ``$$...$$`` through `tex`. Without markdown-it-py the text is shown as it is, in
    a ``<pre>``.

    Parameters
    ----------
    text : str or None
        The Markdown.

    Returns
    -------
    str
        HTML that runs nothing and loads nothing.

    Examples
    --------
    >>> answer = markdown("**yes** <script>alert(1)</script>")
    >>> "<script>" in answer, "&lt;script&gt;" in answer
    (False, True)
    """
    try:
        return _parser().render(text or "")
    except ImportError:                 # markdown-it-py missing: the text as it is, readable
        return f'<pre class="answer">{html.escape(text or "")}</pre>'
