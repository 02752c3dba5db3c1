#!/usr/bin/env python
"""Turn the MyST of the book's notebooks into plain Jupyter Markdown, for the copies readers take away.

    python scripts/plain_markdown.py --site _build/html --config _build/config/_config.yml
    python scripts/plain_markdown.py chapters/02_learning_dynamics.ipynb --out /tmp/plain
    python scripts/plain_markdown.py --check PATH.ipynb ...     # exit 1 if MyST is left
    python scripts/plain_markdown.py --captions chapters/*.ipynb   # write the figures' caption cells

The book's Markdown cells are MyST: Jupyter Book renders its roles and directives on the website,
and JupyterLab renders most of them with the jupyterlab-myst extension, but a notebook downloaded
from the site, opened in Colab or in another Jupyter would show them as text. ``--site DIR``
rewrites the site's downloadable copies (``DIR/_sources/**.ipynb``, what the download button
serves) and scripts/build_lite.py does the same for the browser copies. What becomes what:

- ``{term}`text <entry>``` -> the text, linked to the glossary entry on the published site;
- ``{doc}`page``` -> the page's title (or the role's text), linked to the page;
- ``{numref}`fig-name``` -> "Figure 2.1", numbered as on the site, linked to the figure;
- ``{cite:t}`key``` -> "Brown (1951)", ``{cite:p}`a,b``` -> "(Brown, 1951; Robinson, 1951)",
  and a last cell lists the works cited;
- admonitions -> a blockquote with the title in bold;
- a figure (a code cell whose output myst-nb places as a figure, by the ``mystnb.figure`` name and
  caption in its metadata) is followed by its caption cell, "Figure 2.1." first in bold, converted
  like any other cell. ``--captions`` writes these cells into the book's notebooks themselves (MyST,
  tagged ``remove-cell``: JupyterLab shows them under the figure, Jupyter Book leaves them out and
  captions the figure from the metadata); a copy without them gets them here;
- ``(label)=`` targets are dropped; anything else in braces keeps its text.

Links go to the published site when the book's config names it (``html.baseurl``, e.g.
https://org.github.io/book/); without it the text stays, unlinked, and links between notebooks
stay relative (they work in the browser copy, and between notebooks downloaded side by side).
Code cells and outputs are never changed (the caption cells are added beside them).
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
ADMONITIONS = ("admonition", "note", "tip", "warning", "important", "hint", "caution", "attention",
               "danger", "error", "seealso")
FIGURES = ("figure",)
# what is left of MyST if a conversion missed something: a role, a directive fence, its options
LEFTOVER = re.compile(r"\{[a-z][\w:-]*\}`|^\s*(?:`{3,}|:{3,})\s*\{|^\s*:(?:class|name|alt|label):|^:::",
                      re.M)
ROLE = re.compile(r"\{(?P<role>[a-z][\w:-]*)\}`(?P<content>[^`]+)`")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|:{3,})\s*(?:\{(?P<name>[^}]+)\})?\s*(?P<arg>.*)$")
TARGET = re.compile(r"^\((?P<label>[^)\s]+)\)=\s*$")
CAPTION_ID = "-caption"       # the id of the caption cell after a figure: the figure cell's id + this
CAPTION_TAGS = ["remove-cell"]   # the book captions the figure itself, from the cell's metadata
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")


@dataclass
class Book:
    """What the conversion needs to know about the whole book: page titles and chapter numbers
    (from _toc.yml), figure numbers, glossary entries, the bibliography and the site's address."""
    titles: dict = field(default_factory=dict)        # docname -> title
    figures: dict = field(default_factory=dict)       # figure name -> (docname, "2.1")
    terms: dict = field(default_factory=dict)         # lower-case entry -> the glossary's spelling
    bibliography: dict = field(default_factory=dict)  # key -> pybtex Entry
    site_url: str = ""                                # "https://.../" or ""

    def page_url(self, docname: str, anchor: str = "") -> str:
        if not self.site_url:
            return ""
        return f"{self.site_url}{docname}.html" + (f"#{anchor}" if anchor else "")


def _link(text: str, url: str) -> str:
    return f"[{text}]({url})" if url else text


def _markdown_title(text: str) -> str:
    found = re.search(r"^#\s+(.+?)\s*$", text, re.M)
    return found.group(1) if found else ""


def _page_source(root: Path, docname: str) -> str:
    for suffix in (".ipynb", ".md"):
        path = root / f"{docname}{suffix}"
        if path.is_file():
            if suffix == ".md":
                return path.read_text(encoding="utf-8")
            nb = nbformat.read(path, as_version=4)
            return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return ""


def figure_options(cell) -> dict:
    """The myst-nb figure options of a code cell (``metadata.mystnb.figure``: name, caption), or {}."""
    if cell.get("cell_type") != "code":
        return {}
    options = ((cell.get("metadata") or {}).get("mystnb") or {}).get("figure")
    return dict(options) if isinstance(options, dict) else {}


def caption_source(cell, book: Book) -> str:
    """The MyST of a figure cell's caption cell: "**Figure 2.1.**" and the caption ("" if not a figure)."""
    options = figure_options(cell)
    if not options:
        return ""
    _, number = book.figures.get(str(options.get("name", "")), (None, None))
    head = f"**Figure {number}.**" if number else ""
    return f"{head} {str(options.get('caption', '')).strip()}".strip()


def _caption_cell(figure_cell, source: str, k: int):
    cell = nbformat.v4.new_markdown_cell(source, metadata={"tags": list(CAPTION_TAGS)})
    cell.id = (figure_cell.get("id") or f"cell-{k}")[:64 - len(CAPTION_ID)] + CAPTION_ID
    return cell


def _is_caption_of(cell, figure_cell) -> bool:
    return cell.get("cell_type") == "markdown" and cell.get("id", "") == \
        (figure_cell.get("id") or "")[:64 - len(CAPTION_ID)] + CAPTION_ID


def with_caption_cells(nb, book: Book) -> bool:
    """Put the caption cell (MyST, tagged remove-cell) right after every figure cell of `nb`, new or
    brought up to date with the metadata; drop caption cells whose figure is gone. True if `nb` changed."""
    cells, changed = [], False
    for k, cell in enumerate(nb.cells):
        if cell.get("id", "").endswith(CAPTION_ID) and not (cells and figure_options(cells[-1])
                                                             and _is_caption_of(cell, cells[-1])):
            changed = True                                    # a caption cell away from its figure
            continue
        cells.append(cell)
        source = caption_source(cell, book)
        if not source:
            continue
        following = nb.cells[k + 1] if k + 1 < len(nb.cells) else {}
        if not _is_caption_of(following, cell):
            cells.append(_caption_cell(cell, source, k))
            changed = True
        elif following.source != source or following.metadata.get("tags") != CAPTION_TAGS:
            following.source, following.metadata["tags"] = source, list(CAPTION_TAGS)
            changed = True
    nb.cells = cells
    return changed


def _page_figures(root: Path, docname: str) -> list:
    """The names of a page's numbered figures in the order they appear: ``{figure}`` directives in
    Markdown, and code cells whose output is a named figure (myst-nb's ``mystnb.figure``)."""
    directive = re.compile(r"^\s*(?:`{3,}|:{3,})\s*\{figure\}[^\n]*\n(?:\s*:[\w-]+:.*\n)*?\s*:name:\s*(\S+)", re.M)
    for suffix in (".ipynb", ".md"):
        path = root / f"{docname}{suffix}"
        if path.is_file() and suffix == ".md":
            return directive.findall(path.read_text(encoding="utf-8"))
        if path.is_file():
            names = []
            for cell in nbformat.read(path, as_version=4).cells:
                if cell.cell_type == "markdown":
                    names += directive.findall(cell.source + "\n")
                elif figure_options(cell).get("name"):
                    names.append(str(figure_options(cell)["name"]))
            return names
    return []


def _toc_parts(toc: dict):
    """(docname, numbered) for every page of a Jupyter Book table of contents, in order."""
    def walk(node, numbered):
        if isinstance(node, dict):
            numbered = node.get("numbered", numbered)
            if "file" in node:
                yield str(node["file"]), numbered
            for key in ("parts", "chapters", "sections"):
                for child in node.get(key) or []:
                    yield from walk(child, numbered)
    yield str(toc["root"]), False
    yield from walk(toc, False)


def glossary_terms(text: str) -> dict:
    """Entries of the ``{glossary}`` directive in a MyST page: lower-case -> as written."""
    terms, inside = {}, False
    for line in text.splitlines():
        if re.match(r"^\s*(`{3,}|:{3,})\s*\{glossary\}", line):
            inside = True
        elif inside and re.match(r"^\s*(`{3,}|:{3,})\s*$", line):
            inside = False
        elif inside and line.strip() and not line[0].isspace() and not line.startswith(":"):
            terms[line.strip().lower()] = line.strip()
    return terms


def load_book(root: Path = ROOT, config: Path | None = None, site_url: str | None = None) -> Book:
    """Read the table of contents, every page's title and figures, the glossary and the bibliography."""
    config = yaml.safe_load(Path(config or root / "_config.yml").read_text(encoding="utf-8")) or {}
    if site_url is None:
        site_url = str((config.get("html") or {}).get("baseurl") or "").strip()
    site_url = site_url.rstrip("/") + "/" if site_url else ""
    book = Book(site_url=site_url)
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    chapter = 0
    for docname, numbered in _toc_parts(toc):
        text = _page_source(root, docname)
        book.titles[docname] = _markdown_title(text) or docname.rsplit("/", 1)[-1]
        chapter += bool(numbered)
        for k, name in enumerate(_page_figures(root, docname), start=1):
            book.figures[name] = (docname, f"{chapter}.{k}" if numbered else str(k))
    glossary = root / "book" / "glossary.md"
    if glossary.is_file():
        book.terms = glossary_terms(glossary.read_text(encoding="utf-8"))
    for bib in config.get("bibtex_bibfiles") or []:
        from pybtex.database import parse_file
        book.bibliography.update(parse_file(str(root / bib), bib_format="bibtex").entries)
    return book


# ------------------------------------------------------------------ citations
def _plain(latex: str) -> str:
    """BibTeX's LaTeX as text: accents as letters (latexcodec, which pybtex uses), no braces."""
    import codecs

    import latexcodec  # noqa: F401  (registers the codec)
    return re.sub(r"[{}]", "", codecs.decode(latex, "ulatex+utf8"))


def _surnames(entry) -> str:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_plain(" ".join(p.prelast_names + p.last_names)) for p in people]
    if len(names) > 2:
        return f"{names[0]} et al."
    return " and ".join(names) or "Anonymous"


def _year(entry) -> str:
    return entry.fields.get("year", "n.d.")


def reference(entry) -> str:
    """One entry of the bibliography as plain text: authors, year, title, where it appeared."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    authors = ", ".join(" ".join(p.first_names + p.middle_names + p.prelast_names + p.last_names)
                        for p in people)
    fields = entry.fields
    venue = next((fields[k] for k in ("journal", "booktitle", "publisher", "howpublished", "school",
                                      "institution") if k in fields), "")
    parts = [f"{authors} ({_year(entry)}).", f"*{fields.get('title', '')}*."]
    if venue:
        parts.append(f"{venue}.")
    return _plain(" ".join(parts))


# ------------------------------------------------------------------ conversion
class Converter:
    """Converts the Markdown cells of one page (`docname`) of `book`."""

    def __init__(self, book: Book, docname: str, notebook_links: str = "keep"):
        self.book, self.docname = book, docname
        self.notebook_links = notebook_links       # "keep" (relative .ipynb) or "site"
        self.cited = []

    # ---- inline roles
    def _role(self, match) -> str:
        role, content = match["role"], " ".join(match["content"].split())
        text, target = content, content
        found = re.match(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", content, re.S)
        if found and role not in ("math",):
            text, target = found["text"].strip(), found["target"].strip()
        if role == "term":
            entry = self.book.terms.get(target.lower(), target)
            return _link(text, self.book.page_url("book/glossary", "term-" + _sphinx_id(entry)))
        if role == "doc":
            docname = _resolve(self.docname, target)
            title = text if found else self.book.titles.get(docname, target.rsplit("/", 1)[-1])
            return _link(title, self._page_link(docname))
        if role == "numref":
            docname, number = self.book.figures.get(target, (None, None))
            if number is None:
                return text
            label = text.replace("%s", number).replace("{number}", number) if found else f"Figure {number}"
            return _link(label, self.book.page_url(docname, target))
        if role.startswith("cite"):
            keys = [k.strip() for k in target.split(",") if k.strip()]
            self.cited += [k for k in keys if k not in self.cited]
            entries = [self.book.bibliography.get(k) for k in keys]
            if role in ("cite:t", "cite:ct"):
                return "; ".join(f"{_surnames(e)} ({_year(e)})" if e else k for k, e in zip(keys, entries))
            return "(" + "; ".join(f"{_surnames(e)}, {_year(e)}" if e else k
                                   for k, e in zip(keys, entries)) + ")"
        if role == "math":
            return f"${content}$"
        return text

    def _page_link(self, docname: str) -> str:
        if self.notebook_links == "keep" and docname.startswith(("chapters/", "exercises/", "solutions/")):
            return _relative(self.docname, docname) + ".ipynb"
        return self.book.page_url(docname)

    def _markdown_link(self, match) -> str:
        text, url = match.group(1), match.group(2)
        if re.match(r"^[a-z]+:", url) or url.startswith("#"):
            return match.group(0)
        path, _, anchor = url.partition("#")
        if not path.endswith((".ipynb", ".md")):
            return match.group(0)
        docname = _resolve(self.docname, path.rsplit(".", 1)[0])
        if path.endswith(".ipynb") and self.notebook_links == "keep":
            return match.group(0)
        return _link(text, self.book.page_url(docname, anchor))

    def inline(self, text: str) -> str:
        """Roles and links in running text (a role may run over a line break); inline code
        spans keep their Markdown links as they are."""
        text = ROLE.sub(self._role, text)
        parts = re.split(r"(`[^`\n]*`)", text)
        return "".join(p if p.startswith("`") else re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", self._markdown_link, p)
                       for p in parts)

    # ---- blocks
    def _directive(self, name: str, argument: str, body: list) -> list:
        options, k = {}, 0
        while k < len(body) and OPTION.match(body[k]):
            option = OPTION.match(body[k])
            options[option["key"]] = option["value"]
            k += 1
        content = self.convert("\n".join(body[k:]).strip("\n")).splitlines()
        if name in ADMONITIONS:
            title = argument.strip() or name.capitalize()
            quoted = [f"> **{self.inline(title)}**", ">"] + [f"> {line}".rstrip() for line in content]
            return quoted
        if name in FIGURES:
            label = options.get("name", "")
            _, number = self.book.figures.get(label, (None, None))
            head = f"**Figure {number}.**" if number else ""
            lines = []
            if name == "figure" and argument.strip():
                lines += [f"![{options.get('alt', '')}]({argument.strip()})", ""]
            if content:
                content[0] = f"{head} {content[0]}".strip()
                return lines + content
            return lines + ([head] if head else [])
        if name in ("math",):
            return ["$$"] + content + ["$$"]
        return content

    def convert(self, text: str) -> str:
        """Plain Markdown for one cell's MyST source."""
        lines, out, prose, k = text.splitlines(), [], [], 0

        def flush():
            if prose:
                out.extend(self.inline("\n".join(prose)).split("\n"))
                prose.clear()
        while k < len(lines):
            line = lines[k]
            fence = FENCE.match(line)
            if TARGET.match(line):
                k += 1
            elif fence:
                flush()
                marker = fence["fence"]
                end = k + 1
                closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$")
                while end < len(lines) and not closing.match(lines[end]):
                    end += 1
                body = lines[k + 1:end]
                if fence["name"]:
                    out += self._directive(fence["name"].strip(), fence["arg"], body)
                else:                                   # a code block: exactly as written
                    out += lines[k:end + 1]
                k = end + 1
            else:
                prose.append(line)
                k += 1
        flush()
        return "\n".join(out)

    def references_cell(self) -> str:
        entries = [self.book.bibliography[k] for k in self.cited if k in self.book.bibliography]
        if not entries:
            return ""
        items = "\n".join(f"- {reference(e)}" for e in entries)
        link = self.book.page_url("book/references")
        where = f" ([all the book's references]({link}))" if link else ""
        return f"### Works cited in this notebook{where}\n\n{items}"


def _sphinx_id(term: str) -> str:
    """The HTML id Sphinx gives a glossary entry (without the "term-" prefix)."""
    from sphinx.util.nodes import _make_id
    return _make_id(term)


def _resolve(docname: str, target: str) -> str:
    """A document path relative to `docname` (or absolute from the book root with a leading /)."""
    if target.startswith("/"):
        return target.lstrip("/")
    parts = docname.split("/")[:-1]
    for piece in target.split("/"):
        if piece == "..":
            parts = parts[:-1]
        elif piece not in ("", "."):
            parts.append(piece)
    return "/".join(parts)


def _relative(source: str, target: str) -> str:
    """The relative path from the page `source` to the page `target` (docnames)."""
    import posixpath
    return posixpath.relpath(target, posixpath.dirname(source) or ".")


def docname_of(path: Path, root: Path = ROOT) -> str:
    """chapters/02_x.ipynb -> "chapters/02_x" (also for a copy under DIR/_sources/)."""
    parts = Path(path).with_suffix("").parts
    for folder in ("chapters", "exercises", "solutions", "book"):
        if folder in parts:
            return "/".join(parts[len(parts) - parts[::-1].index(folder) - 1:])
    return Path(path).stem


def plain_notebook(nb, book: Book, docname: str, notebook_links: str = "keep"):
    """`nb` with every Markdown cell in plain Markdown (and a last cell listing the works cited)."""
    converter = Converter(book, docname, notebook_links)
    with_caption_cells(nb, book)                 # a copy made without them gets them
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = converter.convert(cell.source)
    references = converter.references_cell()
    if references and not any(c.cell_type == "markdown" and c.source.startswith("### Works cited")
                              for c in nb.cells):
        cell = nbformat.v4.new_markdown_cell(references)
        cell.id = "works-cited"
        nb.cells.append(cell)
    return nb


def leftovers(nb) -> list:
    """(cell index, text) of what looks like MyST in the Markdown cells."""
    found = []
    for k, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for match in LEFTOVER.finditer(cell.source):
                found.append((k, cell.source[max(0, match.start() - 30):match.end() + 30]))
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks to convert (with --out) or check")
    parser.add_argument("--site", type=Path, help="convert the built site's downloadable notebooks in place")
    parser.add_argument("--out", type=Path, help="folder for the converted copies of PATHS")
    parser.add_argument("--check", action="store_true", help="only report MyST left in PATHS")
    parser.add_argument("--captions", action="store_true",
                        help="write the caption cell after every figure of PATHS (in place)")
    parser.add_argument("--config", type=Path, default=ROOT / "_config.yml",
                        help="the book config (html.baseurl: the published site's address)")
    parser.add_argument("--site-url", default=None, help="the published site's address (overrides the config)")
    sys.path.insert(0, str(ROOT))
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    if not args.config.is_file():
        parser.error(f"--config: no such file {args.config}")
    missing = [p for p in args.paths if not p.is_file()]
    if missing:
        parser.error("no such notebook: " + ", ".join(map(str, missing)))
    if args.check:
        bad = [(p, k, text) for p in args.paths for k, text in leftovers(nbformat.read(p, as_version=4))]
        for path, k, text in bad:
            print(f"{path}: cell {k}: {text!r}")
        return 1 if bad else 0
    book = load_book(ROOT, args.config, args.site_url)
    if args.captions:
        for path in args.paths:
            nb = nbformat.read(path, as_version=4)
            if with_caption_cells(nb, book):
                nbformat.write(nb, path)
                print(f"{path}: caption cells written")
        return 0
    if args.site is not None:
        if not (args.site / "_sources").is_dir():
            parser.error(f"--site: {args.site} has no _sources folder (build the book first)")
        paths = sorted(args.site.glob("_sources/**/*.ipynb"))
        for path in paths:
            nb = nbformat.read(path, as_version=4)
            nbformat.write(plain_notebook(nb, book, docname_of(path), "site" if book.site_url else "keep"), path)
        print(f"{len(paths)} downloadable notebooks in plain Markdown"
              + (f", linked to {book.site_url}" if book.site_url else " (no html.baseurl: links left out)"))
        return 0
    if args.out is None or not args.paths:
        parser.error("give --site DIR, or notebooks with --out DIR (or --check)")
    args.out.mkdir(parents=True, exist_ok=True)
    for path in args.paths:
        nb = nbformat.read(path, as_version=4)
        nbformat.write(plain_notebook(nb, book, docname_of(path.resolve())), args.out / path.name)
    print(f"{len(args.paths)} notebooks written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
