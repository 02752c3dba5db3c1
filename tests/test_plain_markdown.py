"""The downloadable and browser copies of the notebooks are in plain Jupyter Markdown
(scripts/plain_markdown.py): every MyST role and directive the book uses becomes readable text.

Each construct is converted on a small example; then every notebook of the book (chapters,
exercises, solutions) is converted and searched for what is left of MyST. With BOOK_SITE set
(BOOK_SITE=_build/html after `make book`), the site's own downloads are searched, and every figure
number is compared with the number the site prints in the figure's caption.
"""
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

from _grading_support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import install_cell  # noqa: E402
import plain_markdown  # noqa: E402

SITE = "https://example-org.github.io/marl-book/"


@pytest.fixture(scope="module")
def book():
    return plain_markdown.load_book(ROOT, site_url=SITE)


@pytest.fixture(scope="module")
def offline_book():
    return plain_markdown.load_book(ROOT, site_url="")


def convert(book, text, docname="chapters/02_learning_dynamics", links="site"):
    return plain_markdown.Converter(book, docname, links).convert(text)


def test_roles_become_text_linked_to_the_published_pages(book):
    text = ("{term}`best responses <best response>`, {term}`NashConv`, the {doc}`../book/notation` "
            "page, {doc}`chapter 1 <01_many_learners>`, {numref}`fig-magnet-paths`.")
    out = convert(book, text)
    assert out == (f"[best responses]({SITE}book/glossary.html#term-best-response), "
                   f"[NashConv]({SITE}book/glossary.html#term-NashConv), the "
                   f"[Notation]({SITE}book/notation.html) page, "
                   f"[chapter 1]({SITE}chapters/01_many_learners.html), "
                   f"[Figure 2.1]({SITE}chapters/02_learning_dynamics.html#fig-magnet-paths).")


def test_without_a_site_address_roles_are_plain_text_and_notebook_links_stay(offline_book):
    out = convert(offline_book, "{term}`regret` and {doc}`../book/glossary`, [next](03_counterfactual_regret.ipynb)",
                  links="keep")
    assert out == "regret and Glossary, [next](03_counterfactual_regret.ipynb)"
    assert convert(offline_book, "{doc}`chapter 3 <03_counterfactual_regret>`", links="keep") == \
        "[chapter 3](03_counterfactual_regret.ipynb)"


def test_citations_read_as_author_and_year_and_are_listed_at_the_end(book):
    converter = plain_markdown.Converter(book, "chapters/02_learning_dynamics", "site")
    out = converter.convert("{cite:t}`brown1951` and a role that wraps {cite:p}`hart2000,\nrobinson1951`.")
    assert out == "Brown (1951) and a role that wraps (Hart and Mas-Colell, 2000; Robinson, 1951)."
    cited = converter.references_cell()
    assert cited.startswith("### Works cited in this notebook")
    assert "George W. Brown (1951). *Iterative Solution of Games by Fictitious Play*." in cited
    assert cited.index("Brown") < cited.index("Hart") < cited.index("Robinson")


def test_an_admonition_becomes_a_blockquote_with_a_bold_title(book):
    text = "```{admonition} In this chapter\n:class: tip\n\n**You will learn** about {term}`regret`.\n\nMore.\n```"
    assert convert(book, text, links="keep").splitlines() == [
        "> **In this chapter**", ">", f"> **You will learn** about [regret]({SITE}book/glossary.html#term-regret).",
        ">", "> More."]
    assert convert(book, ":::{note}\nA note.\n:::") == "> **Note**\n>\n> A note."


def _figure_notebook():
    figure = nbformat.v4.new_code_cell("lk.plot.publish(fig, 'fig-neural-mmd')", metadata={"mystnb": {
        "figure": {"name": "fig-neural-mmd", "caption": "The NashConv of the {term}`current policy <policy>`."},
        "image": {"alt": "Two panels."}}})
    figure.id = "c02-fig"
    return nbformat.v4.new_notebook(cells=[figure, nbformat.v4.new_markdown_cell("After.")])


def test_a_figure_cell_gets_its_numbered_caption_in_a_markdown_cell_after_it(book):
    nb = _figure_notebook()
    plain = plain_markdown.plain_notebook(nb, book, "chapters/02_learning_dynamics", "site")
    assert [c.cell_type for c in plain.cells] == ["code", "markdown", "markdown"]
    assert plain.cells[1].source == ("**Figure 2.2.** The NashConv of the "
                                     f"[current policy]({SITE}book/glossary.html#term-policy).")
    assert plain.cells[1].id == "c02-fig-caption" and plain.cells[2].source == "After."
    again = plain_markdown.plain_notebook(plain, book, "chapters/02_learning_dynamics", "site")
    assert [c.source for c in again.cells] == [c.source for c in plain.cells]      # converted once


def test_the_books_caption_cells_are_myst_left_out_of_the_site_and_follow_the_metadata(book):
    nb = _figure_notebook()
    assert plain_markdown.with_caption_cells(nb, book) is True
    caption = nb.cells[1]
    assert caption.source == "**Figure 2.2.** The NashConv of the {term}`current policy <policy>`."
    assert caption.metadata["tags"] == ["remove-cell"] and caption.id == "c02-fig-caption"
    assert plain_markdown.with_caption_cells(nb, book) is False                   # nothing to do
    nb.cells[0].metadata["mystnb"]["figure"]["caption"] = "A new caption."
    assert plain_markdown.with_caption_cells(nb, book) is True
    assert [c.source for c in nb.cells[1:]] == ["**Figure 2.2.** A new caption.", "After."]
    del nb.cells[0].metadata["mystnb"]                                           # no longer a figure
    assert plain_markdown.with_caption_cells(nb, book) is True
    assert [c.source for c in nb.cells[1:]] == ["After."]


@pytest.mark.parametrize("path", sorted((ROOT / "chapters").glob("*.ipynb")), ids=lambda p: p.name)
def test_every_figure_of_the_chapters_has_its_caption_cell_up_to_date(path, offline_book):
    """JupyterLab shows the caption cell under the figure; `plain_markdown.py --captions` writes them."""
    nb = nbformat.read(path, as_version=4)
    assert plain_markdown.with_caption_cells(nb, offline_book) is False, \
        f"run: python scripts/plain_markdown.py --captions {path.relative_to(ROOT)}"


def test_figures_are_numbered_in_page_order_from_the_cells_metadata(book):
    nb = nbformat.read(ROOT / "chapters" / "02_learning_dynamics.ipynb", as_version=4)
    names = [plain_markdown.figure_options(c)["name"] for c in nb.cells if plain_markdown.figure_options(c)]
    assert len(names) >= 3
    assert [book.figures[n] for n in names] == [("chapters/02_learning_dynamics", f"2.{k}")
                                                for k in range(1, len(names) + 1)]


def test_code_blocks_targets_and_inline_code_are_kept_or_dropped_as_they_should(book):
    text = "(sec-x)=\n## Title\n\n```python\nx = '{term}`not a role`'\n```\n\nUse `[a](b.ipynb)` here."
    assert convert(book, text, links="keep") == \
        "## Title\n\n```python\nx = '{term}`not a role`'\n```\n\nUse `[a](b.ipynb)` here."


def test_the_leftover_check_finds_myst():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("see {term}`x`"),
                                         nbformat.v4.new_markdown_cell("```{tip}\n:class: x\n```"),
                                         nbformat.v4.new_code_cell("'{term}`x`'")])
    assert [k for k, _ in plain_markdown.leftovers(nb)] == [0, 1, 1]


def _book_notebooks():
    return install_cell.book_notebooks()


@pytest.mark.parametrize("path", _book_notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_notebook_of_the_book_converts_to_plain_markdown(path, book, offline_book):
    for which, links in ((book, "site"), (offline_book, "keep")):
        nb = nbformat.read(path, as_version=4)
        code = [(c.source, c.get("outputs")) for c in nb.cells if c.cell_type == "code"]
        plain = plain_markdown.plain_notebook(nb, which, plain_markdown.docname_of(path), links)
        assert plain_markdown.leftovers(plain) == []
        assert [(c.source, c.get("outputs")) for c in plain.cells if c.cell_type == "code"] == code
        words = "\n".join(c.source for c in plain.cells if c.cell_type == "markdown")
        assert not re.search(r"\{(term|doc|numref|cite:[pt]|glue:figure)\}|:class:|^:::", words, re.M)
        figures = [k for k, c in enumerate(plain.cells) if plain_markdown.figure_options(c)]
        for k in figures:                                  # every figure is followed by its caption
            assert re.match(r"\*\*Figure [\d.]+\.\*\* \S", plain.cells[k + 1].source), plain.cells[k + 1].source


def test_site_mode_rewrites_the_downloads(tmp_path):
    source = ROOT / "chapters" / "02_learning_dynamics.ipynb"
    target = tmp_path / "_sources" / "chapters" / source.name
    target.parent.mkdir(parents=True)
    target.write_bytes(source.read_bytes())
    assert plain_markdown.main(["--site", str(tmp_path), "--site-url", SITE]) == 0
    nb = nbformat.read(target, as_version=4)
    assert plain_markdown.leftovers(nb) == []
    assert f"({SITE}chapters/01_many_learners.html)" in nb.cells[1].source   # a download links the site
    assert plain_markdown.main(["--check", str(target)]) == 0
    assert plain_markdown.main(["--check", str(source)]) == 1


@pytest.mark.skipif(not os.environ.get("BOOK_SITE"), reason="set BOOK_SITE=_build/html after `make book`")
def test_the_built_sites_downloads_are_plain_and_its_figure_numbers_match():
    site = Path(os.environ["BOOK_SITE"]).resolve()
    downloads = sorted(site.glob("_sources/**/*.ipynb"))
    assert len(downloads) >= 30
    for path in downloads:
        assert plain_markdown.leftovers(nbformat.read(path, as_version=4)) == [], path
    book = plain_markdown.load_book(ROOT)
    for label, (docname, number) in book.figures.items():
        html = (site / f"{docname}.html").read_text(encoding="utf-8")
        caption = re.compile(r'caption-number">Fig\. ([\d.]+)').search(html, html.index(f'id="{label}"'))
        assert caption.group(1) == number, label
