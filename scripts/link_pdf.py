#!/usr/bin/env python
"""Offer the book's PDF on the built website, when there is one that matches the site.

    python scripts/link_pdf.py --site _build/html --pdf _build/pdf/book.pdf

`make book` runs this after Jupyter Book, and `make pdf` after the PDF when a site is built, so the
order of the two does not matter. When the PDF exists (`make pdf`, scripts/build_pdf.py) and holds
the same pages as the site (a site built with SOLUTIONS=0 is never offered a PDF with the worked
solutions), it is copied to ``SITE/book.pdf`` and linked

- from every page's download menu (the header's download button), as "Whole book (.pdf)";
- from the opening page, in a sentence under its first paragraph.

Otherwise any copy and links an earlier run made are removed. Running it twice changes nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "labkit-book-pdf"                  # class of everything this script adds, so it can take it out
SITE_PDF = "book.pdf"
OPENING_PAGE = "book/intro.html"
DOWNLOAD_MENU = re.compile(r'<div class="dropdown dropdown-download-buttons">.*?(?=\s*</ul>)', re.S)
ADDED = re.compile(rf'\s*<(li|p) class="{MARK}">.*?</\1>', re.S)
FIRST_PARAGRAPH = re.compile(r'<article class="bd-article">.*?</p>', re.S)


def menu_item(href: str) -> str:
    return (f'\n<li class="{MARK}"><a href="{href}" download class="btn btn-sm dropdown-item" '
            'title="Download the whole book as a PDF" data-bs-placement="left" data-bs-toggle="tooltip">'
            '<span class="btn__icon-container"><i class="fas fa-book"></i></span>'
            f'<span class="btn__text-container">Whole book (.pdf)</span></a></li>')


def opening_sentence(href: str, record: dict) -> str:
    contents = "chapters, appendix and exercises" + (" with their solutions" if record.get("solutions") else "")
    pages = f", {record['pages']} pages" if record.get("pages") else ""
    return (f'\n<p class="{MARK}">The whole book ({contents}) is also a PDF to download and print: '
            f'<a href="{href}" download>book.pdf</a>{pages}.</p>')


def unlink(html: str) -> str:
    """The page without anything an earlier run added."""
    return ADDED.sub("", html)


def link(html: str, page: str, record: dict) -> str:
    """The page with the PDF in its download menu (and, on the opening page, in its first paragraph)."""
    href = os.path.relpath(SITE_PDF, os.path.dirname(page) or ".")
    html = DOWNLOAD_MENU.sub(lambda m: m.group(0) + menu_item(href), unlink(html), count=1)
    if page == OPENING_PAGE:
        html = FIRST_PARAGRAPH.sub(lambda m: m.group(0) + opening_sentence(href, record), html, count=1)
    return html


def site_has_solutions(site: Path) -> bool:
    return any((site / "solutions").glob("*.html"))


def matching_pdf(site: Path, pdf: Path):
    """The PDF's record (book.json beside it) if the PDF exists and holds what the site holds, else None."""
    if not pdf.is_file():
        return None, f"no PDF at {pdf} (make pdf builds it)"
    record_file = pdf.with_suffix(".json")
    record = json.loads(record_file.read_text(encoding="utf-8")) if record_file.is_file() else {}
    if record.get("solutions", True) and not site_has_solutions(site):
        return None, f"{pdf} holds the worked solutions and this site does not (make pdf SOLUTIONS=0)"
    return record, None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default="_build/html", help="the built website")
    parser.add_argument("--pdf", default="_build/pdf/book.pdf", help="the PDF that scripts/build_pdf.py built")
    sys.path.insert(0, str(ROOT))
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    site, pdf = (ROOT / args.site).resolve(), (ROOT / args.pdf).resolve()
    if not (site / "index.html").is_file():
        parser.error(f"{site} is not a built site (make book builds it)")
    record, reason = matching_pdf(site, pdf)
    if record is not None:
        shutil.copyfile(pdf, site / SITE_PDF)
    else:
        (site / SITE_PDF).unlink(missing_ok=True)
    linked = removed = 0
    for path in sorted(site.rglob("*.html")):
        page = path.relative_to(site).as_posix()
        if page.startswith(("lite/", "_static/", "_sources/")):
            continue
        html = path.read_text(encoding="utf-8")
        new = link(html, page, record) if record is not None else unlink(html)
        linked += MARK in new
        removed += MARK in html and MARK not in new
        if new != html:
            path.write_text(new, encoding="utf-8")
    if record is not None:
        print(f"book.pdf ({record.get('pages', '?')} pages) linked from {linked} pages of {site}")
    else:
        print(f"no book.pdf on the site: {reason}" + (f"; links removed from {removed} pages" if removed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
