"""Sphinx extension of the book: the PDF's layout, numbered as on the website.

Jupyter Book's LaTeX builder (with sphinx-jupyterbook-latex) turns every part of the table of
contents into a LaTeX ``\\part`` and every page into a ``\\chapter``, and LaTeX numbers them all, one
after another: the five pages of "Using this book" became chapters 1-5, chapter 1 became chapter 6,
and its first figure "Fig. 6.1" where the website, and every cross-reference in the text, says 1.1.
The website numbers only the parts marked ``numbered: true`` in _toc.yml; so does the PDF now:

- parts carry no number; the chapters of a numbered part are numbered from 1 (sections and
  subsections too, as 1.4.1), and their figures, tables and equations by chapter (Fig. 1.1);
- every other page is an unnumbered chapter, and its figures are numbered 1, 2, ... in book order
  (the website's "Fig. 1" of the appendix).

And three things a reader of the PDF would otherwise trip over:

- the book's opening page gets a chapter heading ("Introduction") instead of running on from the
  table of contents;
- the bibliography continues the References chapter instead of opening a chapter of its own after
  a blank page;
- a figure is scaled to leave room for its caption on the page (Sphinx only keeps an image within
  the page's full height, and a tall figure's caption then ran into the footer).

LaTeX builds only; the HTML builder never reads any of it.
"""
from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

INTRODUCTION = "Introduction"

# \labkitnumbered / \labkitunnumbered switch between the two kinds of chapter. The figure, table and
# equation counters of the unnumbered pages run through the whole book, so leaving a numbered part
# brings back their count (the chapters of a numbered part reset them, chapter by chapter).
PREAMBLE = r"""
% The PDF's layout (book/_ext/pdf_layout.py): numbering as on the website
\makeatletter
\newif\iflabkit@numbered
\newcommand{\labkit@keep}[1]{\newcounter{labkit@#1}}
\labkit@keep{figure}\labkit@keep{table}\labkit@keep{equation}
\newcommand{\labkitunnumbered}{%
  \iflabkit@numbered
    \setcounter{figure}{\value{labkit@figure}}%
    \setcounter{table}{\value{labkit@table}}%
    \setcounter{equation}{\value{labkit@equation}}%
  \fi
  \global\labkit@numberedfalse
  \setcounter{secnumdepth}{-2}%
  \renewcommand{\thefigure}{\arabic{figure}}\renewcommand{\theHfigure}{unnumbered.\arabic{figure}}%
  \renewcommand{\thetable}{\arabic{table}}\renewcommand{\theHtable}{unnumbered.\arabic{table}}%
  \renewcommand{\theequation}{\arabic{equation}}\renewcommand{\theHequation}{unnumbered.\arabic{equation}}}
\newcommand{\labkitnumbered}{%
  \iflabkit@numbered\else
    \setcounter{labkit@figure}{\value{figure}}%
    \setcounter{labkit@table}{\value{table}}%
    \setcounter{labkit@equation}{\value{equation}}%
  \fi
  \global\labkit@numberedtrue
  \setcounter{secnumdepth}{2}%
  \renewcommand{\thefigure}{\thechapter.\arabic{figure}}\renewcommand{\theHfigure}{\thechapter.\arabic{figure}}%
  \renewcommand{\thetable}{\thechapter.\arabic{table}}\renewcommand{\theHtable}{\thechapter.\arabic{table}}%
  \renewcommand{\theequation}{\thechapter.\arabic{equation}}\renewcommand{\theHequation}{\thechapter.\arabic{equation}}}
% a figure and its caption fit on one page
\AtBeginDocument{\spx@image@maxheight=0.8\textheight}
% the bibliography goes on under the heading of the page that holds it (References)
\renewenvironment{sphinxthebibliography}[1]%
  {\let\chapter\@gobbletwo\let\@mkboth\@gobbletwo\begin{thebibliography}{#1}}%
  {\end{thebibliography}}
\makeatother
"""


def _raw(latex: str) -> nodes.raw:
    return nodes.raw("", latex + "\n", format="latex")


def _part_numbering(app):
    """{part caption: numbered?} from the table of contents (sphinx-external-toc's site map)."""
    site_map = getattr(app.config, "external_site_map", None)
    if site_map is None:
        return {}
    return {tree.caption: bool(tree.numbered) for tree in site_map.root.subtrees if tree.caption}


class NumberLikeTheSite(SphinxPostTransform):
    """Mark where numbering starts and stops, in the one doctree the LaTeX builder assembles."""

    default_priority = 750          # after sphinx-jupyterbook-latex has made the parts (700)
    formats = ("latex",)

    def run(self, **kwargs):
        if self.app.project.path2doc(self.document.get("source", "")) != self.config.root_doc:
            return
        parts = _part_numbering(self.app)
        self.document.insert(0, _raw(r"\labkitunnumbered" + "\n" + rf"\chapter{{{INTRODUCTION}}}"))
        for start in list(self.document.findall(addnodes.start_of_file)):
            caption = start.get("docname")
            if caption not in parts or not start.children or not isinstance(start[0], nodes.section):
                continue
            part = start.parent          # the compound sphinx-jupyterbook-latex made for this part
            part.parent.insert(part.parent.index(part), _raw(r"\labkitunnumbered"))
            if parts[caption]:
                section = start[0]
                section.insert(1, _raw(r"\labkitnumbered"))   # after the part's title: \part stays unnumbered


def _add_preamble(app, config):
    # config-inited: the LaTeX builder reads latex_elements before builder-inited; other builders
    # never read it
    elements = config.latex_elements
    elements["preamble"] = elements.get("preamble", "") + PREAMBLE


def setup(app):
    app.connect("config-inited", _add_preamble, priority=600)   # after sphinx-jupyterbook-latex's (500)
    app.add_post_transform(NumberLikeTheSite)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
