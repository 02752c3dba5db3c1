#!/usr/bin/env python
"""Build the book as a PDF with Jupyter Book's LaTeX builder (`make pdf`).

    python scripts/build_pdf.py                               # the whole book: _build/pdf/book.pdf
    python scripts/build_pdf.py --no-solutions                # a course's PDF, without the worked solutions
    python scripts/build_pdf.py --pages chapters/01_many_learners --out /tmp/one   # one chapter

The book is typeset by ``jupyter-book build --builder pdflatex`` (sphinx-jupyterbook-latex, xelatex,
latexmk) from the same _config.yml and _toc.yml as the website, in its own build folder
(``OUT/work``), so the website's build is never touched. Two extensions of the book act on LaTeX
builds only: book/_ext/widget_frames.py (each widget shows its first frame) and
book/_ext/pdf_numbering.py (chapters and figures numbered as on the website).

With ``--pages``, the PDF holds the book's opening page, the pages named and the References page
(which the citations point to), each in its part; links to other pages become plain text, and Sphinx's
warnings about them do not stop the build (a warning stops the whole book's build).

Writes ``OUT/book.pdf`` and ``OUT/book.json`` (pages, solutions included or not, the pages built,
the build's wall and CPU seconds). Needs xelatex, latexmk, xindy and the FreeFont fonts (Debian:
texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended texlive-plain-generic
texlive-xetex latexmk xindy fonts-freefont-otf; .ci/run installs them).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from book_config import absolute_extension_paths, launch_settings, toc_files, without_solutions  # noqa: E402

TEX_PROGRAMS = ("xelatex", "latexmk", "xindy")
FONT = "FreeSerif"                   # Sphinx's xelatex fonts: GNU FreeFont (Debian's fonts-freefont-otf)
REFERENCES = "book/references"
DEBIAN_PACKAGES = ("texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended "
                   "texlive-plain-generic texlive-xetex latexmk xindy fonts-freefont-otf")


def missing_tex() -> list:
    """What the build needs and cannot find: TeX programs not on PATH, or the FreeFont fonts."""
    missing = [name for name in TEX_PROGRAMS if shutil.which(name) is None]
    fonts = subprocess.run(["fc-list", FONT], capture_output=True, text=True).stdout \
        if shutil.which("fc-list") else ""
    if not fonts.strip():
        missing.append(f"the {FONT} font")
    return missing


def only_pages(toc: dict, keep) -> dict:
    """The table of contents with only the pages in ``keep`` (and the root); empty parts dropped."""
    keep = set(keep)

    def prune(entries):
        kept = []
        for entry in entries:
            entry = dict(entry)
            for key in ("sections", "chapters"):
                if key in entry:
                    entry[key] = prune(entry[key])
                    if not entry[key]:
                        del entry[key]
            if entry.get("file") in keep or (not entry.get("file") and entry.get("chapters")) \
                    or entry.get("sections"):
                kept.append(entry)
        return kept

    toc = dict(toc)
    toc["parts"] = prune(toc.get("parts", []))
    return toc


def pdf_config(pages=None, solutions=True) -> tuple[dict, dict]:
    """The Jupyter Book configuration and table of contents of the PDF."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    config = absolute_extension_paths(launch_settings(config, None))
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx["latex_additional_files"] = [str((ROOT / f).resolve()) for f in sphinx.get("latex_additional_files", [])]
    if not solutions:
        toc = without_solutions(toc)
    if pages:
        known = set(toc_files(toc))
        unknown = [p for p in pages if p not in known]
        if unknown:
            raise ValueError(f"not pages of the book (see _toc.yml): {', '.join(unknown)}")
        toc = only_pages(toc, list(pages) + [REFERENCES])
    return config, toc


def page_count(latex_log: Path) -> int:
    """The page count LaTeX reports at the end of its log ("Output written on book.pdf (306 pages")."""
    found = re.findall(r"Output written on \S+ \((\d+) pages?", latex_log.read_text(errors="replace"))
    if not found:
        raise RuntimeError(f"{latex_log} does not say how many pages were written")
    return int(found[-1])


def build(out: Path, pages=None, solutions=True, strict=True) -> dict:
    """Typeset the book (or ``pages`` of it) into ``out/book.pdf``; return what ``out/book.json`` records."""
    missing = missing_tex()
    if missing:
        raise RuntimeError(f"cannot build the PDF: {', '.join(missing)} not found. Install Debian's "
                           f"{DEBIAN_PACKAGES} (.ci/run does)")
    config, toc = pdf_config(pages, solutions)
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)          # a fresh build: no LaTeX or Sphinx state carried over
    (work / "config").mkdir(parents=True)
    (work / "config" / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
                                                 encoding="utf-8")
    (work / "config" / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False, allow_unicode=True),
                                              encoding="utf-8")
    command = [str(Path(sys.executable).parent / "jupyter-book"), "build", "--builder", "pdflatex",
               "--path-output", str(work), "--config", str(work / "config" / "_config.yml"),
               "--toc", str(work / "config" / "_toc.yml")]
    if strict:
        command += ["-W", "--keep-going"]
    # TeX never waits for an answer on an error; it stops and latexmk reports it
    env = dict(os.environ, LATEXOPTS="-interaction=nonstopmode -halt-on-error")
    start, cpu_start = time.perf_counter(), _children_cpu()
    result = subprocess.run(command + [str(ROOT)], cwd=ROOT, env=env)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu_start
    latex = work / "_build" / "latex"
    if result.returncode != 0 or not (latex / "book.pdf").is_file():
        raise RuntimeError(f"the PDF build failed (exit code {result.returncode}); see the output above "
                           f"and {latex / 'book.log'}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(latex / "book.pdf", out / "book.pdf")
    record = {"pages": page_count(latex / "book.log"), "solutions": bool(solutions),
              "contents": [toc["root"], *toc_files(toc)], "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1)}
    (out / "book.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="_build/pdf", help="folder for book.pdf and book.json")
    parser.add_argument("--pages", nargs="+", metavar="PAGE",
                        help="only these pages of _toc.yml (e.g. chapters/01_many_learners)")
    parser.add_argument("--no-solutions", action="store_true", help="leave the solution pages out")
    sys.path.insert(0, str(ROOT))
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    out = (ROOT / args.out).resolve()
    if args.pages:
        try:
            pdf_config(args.pages, solutions=not args.no_solutions)
        except ValueError as err:
            parser.error(f"--pages: {err}")
    try:
        # a warning fails the whole book's build; a few pages warn about every link to a page left out
        record = build(out, args.pages, solutions=not args.no_solutions, strict=not args.pages)
    except (RuntimeError, ValueError) as err:
        print(f"build_pdf: {err}", file=sys.stderr)
        return 1
    print(f"{out / 'book.pdf'}: {record['pages']} pages, built in {record['wall_seconds']:.0f} s "
          f"({record['cpu_seconds']:.0f} s CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
