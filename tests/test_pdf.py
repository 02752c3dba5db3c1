"""The book as a PDF: `make pdf` (scripts/build_pdf.py), the widgets' first frames, the site's link.

The first tests need no TeX: how a widget's first frame is found in the saved widget state
(book/_ext/widget_frames.py), which pages a partial PDF holds, and how the site links the PDF
(scripts/link_pdf.py). The last ones typeset chapter 1 with Debian's TeX (xelatex, latexmk) and read
the PDF back with poppler (pdftotext, pdfimages); without those programs they are skipped, saying so.
"""
import base64
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import build_pdf  # noqa: E402
import link_pdf  # noqa: E402
import widget_frames  # noqa: E402
from PIL import Image, ImageChops  # noqa: E402

CHAPTER = "chapters/01_many_learners"
# the chapter, and two pages that come before it in an unnumbered part: chapter 1 must stay chapter 1
PAGES = ["book/notation", "book/glossary", CHAPTER]
VIEW = widget_frames.WIDGET_VIEW


def _notebook(page=CHAPTER):
    return json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))


def _png(encoded) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(encoded))).convert("RGB")


def _same_pixels(a: Image.Image, b: Image.Image) -> bool:
    return a.size == b.size and ImageChops.difference(a.convert("RGB"), b.convert("RGB")).getbbox() is None


def _widget_outputs(notebook, shown=False):
    """The widget outputs of a notebook (with ``shown``, only those the book does not hide)."""
    hidden = {"remove-cell", "remove-output", "hide-output"}
    return [out for cell in notebook["cells"] for out in cell.get("outputs", []) if VIEW in out.get("data", {})
            and not (shown and hidden & set(cell.get("metadata", {}).get("tags", [])))]


def _shown_frame(notebook, output) -> Image.Image:
    """The frame a slider_stack/dropdown_stack widget shows on the site before it is touched, read
    straight from the saved state: the Stack's selected Image (written here, not by widget_frames)."""
    state = notebook["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    box = state[output["data"][VIEW]["model_id"]]["state"]
    stacks = [state[c.replace("IPY_MODEL_", "")] for c in box["children"]]
    stack = next(m["state"] for m in stacks if m["model_name"] == "StackModel")
    image = state[stack["children"][stack["selected_index"]].replace("IPY_MODEL_", "")]
    assert image["model_name"] == "ImageModel"
    return _png(image["buffers"][0]["data"])


# -- the first frame of a widget, without TeX --------------------------------------------------------

def test_every_widget_of_the_chapters_gets_the_frame_the_site_shows_first():
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        notebook = _notebook(f"chapters/{path.stem}")
        widgets = _widget_outputs(notebook)
        assert widget_frames.add_frames(notebook) == len(widgets), path.name
        for output in widgets:
            assert "image/png" in output["data"], f"{path.name}: a widget got no frame"
            frame = _png(output["data"]["image/png"])
            assert frame.width >= 300 and frame.height >= 200, f"{path.name}: {frame.size}"
    notebook = _notebook()
    for output in _widget_outputs(notebook):
        original = _shown_frame(notebook, output)
        widget_frames.add_frames({"cells": [{"outputs": [output]}], "metadata": notebook["metadata"]})
        assert _same_pixels(_png(output["data"]["image/png"]), original)


def test_the_line_under_a_frame_names_the_setting_shown_and_the_choices():
    notebook = _notebook()
    widget_frames.add_frames(notebook)
    for cell in notebook["cells"]:
        outputs = cell.get("outputs", [])
        for k, output in enumerate(outputs):
            if VIEW not in output.get("data", {}):
                continue
            line = outputs[k + 1]["data"]["text/markdown"]
            state = notebook["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
            control = state[state[output["data"][VIEW]["model_id"]]["state"]["children"][0][10:]]["state"]
            shown = control["_options_labels"][control["index"]]
            assert f"{control['description']} = {shown}" in line.replace("\\", "")
            assert line.startswith("*Interactive in the online version")


def _state_notebook(models, view):
    return {"metadata": {"widgets": {widget_frames.WIDGET_STATE: {"state": models}}},
            "cells": [{"cell_type": "code", "outputs": [
                {"output_type": "display_data", "data": {VIEW: {"model_id": view}, "text/plain": "VBox()"}}]}]}


def _image_model(width, height, colour):
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return {"model_name": "ImageModel", "state": {},
            "buffers": [{"path": ["value"], "encoding": "base64",
                         "data": base64.b64encode(buffer.getvalue()).decode()}]}


def test_boxes_are_composed_and_only_the_selected_child_of_a_stack_is_shown():
    models = {
        "red": _image_model(40, 30, "red"), "blue": _image_model(20, 50, "blue"),
        "green": _image_model(10, 10, "green"),
        "stack": {"model_name": "StackModel", "state": {"selected_index": 1,
                                                         "children": ["IPY_MODEL_green", "IPY_MODEL_blue"]}},
        "row": {"model_name": "HBoxModel", "state": {"children": ["IPY_MODEL_red", "IPY_MODEL_stack"]}},
    }
    notebook = _state_notebook(models, "row")
    assert widget_frames.add_frames(notebook) == 1
    frame = _png(notebook["cells"][0]["outputs"][0]["data"]["image/png"])
    assert frame.size == (40 + widget_frames.GAP + 20, 50)          # red beside blue, not green
    assert frame.getpixel((5, 5)) == (255, 0, 0) and frame.getpixel((frame.width - 5, 45)) == (0, 0, 255)
    models["stack"]["state"]["selected_index"] = None                # an empty Stack shows nothing
    notebook = _state_notebook(models, "stack")
    widget_frames.add_frames(notebook)
    outputs = notebook["cells"][0]["outputs"]
    assert "image/png" not in outputs[0]["data"] and "online version" in outputs[1]["data"]["text/markdown"]


def test_html_builds_are_left_alone():
    class Builder:
        format = "html"

    class App:
        builder = Builder()

    source = [json.dumps(_notebook())]
    before = source[0]
    widget_frames._on_source_read(App(), CHAPTER, source)
    assert source[0] is before


# -- which pages a partial PDF holds; how the site links the PDF --------------------------------------

def test_a_partial_pdf_holds_the_opening_page_the_pages_asked_for_and_the_references():
    config, toc = build_pdf.pdf_config([CHAPTER])
    assert toc["root"] == "book/intro"
    assert build_pdf.toc_files(toc) == [CHAPTER, "book/references"]
    assert [part["caption"] for part in toc["parts"]] == ["Multi-agent RL and self-play", "Back matter"]
    assert toc["parts"][0].get("numbered") is True
    with pytest.raises(ValueError, match="chapters/nope"):
        build_pdf.pdf_config(["chapters/nope"])
    with pytest.raises(ValueError, match="solutions/27_1"):      # a course's PDF has no solutions
        build_pdf.pdf_config(["solutions/27_1_no_regret_minimax"], solutions=False)
    _, toc = build_pdf.pdf_config(["solutions/27_1_no_regret_minimax"])
    assert "exercises/27_1_no_regret_minimax" in build_pdf.toc_files(toc)    # a solution keeps its exercise
    _, whole = build_pdf.pdf_config()
    assert len(build_pdf.toc_files(whole)) > 40


@pytest.mark.parametrize("script", ["build_pdf.py", "link_pdf.py"])
def test_the_scripts_have_version_and_refuse_bad_arguments(script, tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], capture_output=True,
                              text=True, cwd=ROOT)
    done = run("--version")
    assert done.returncode == 0 and done.stdout.startswith(f"{script} (labkit ")
    bad = {"build_pdf.py": (["--pages", "chapters/nope", "--out", str(tmp_path)], "--pages: not pages of the book"),
           "link_pdf.py": (["--site", str(tmp_path)], "is not a built site")}
    done = run(*bad[script][0])
    assert done.returncode == 2 and bad[script][1] in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "book.pdf").exists()


PAGE = """<html><body><div class="dropdown dropdown-download-buttons">
  <ul class="dropdown-menu">
      <li><a href="../_sources/book/intro.md">.md</a></li>
  </ul>
</div><main><article class="bd-article"><h1>Title</h1><p>First paragraph.</p><p>Second.</p></article></main></body></html>"""


def test_the_site_links_a_pdf_once_and_unlinks_it_when_it_is_gone(tmp_path):
    site = tmp_path / "html"
    (site / "book").mkdir(parents=True)
    (site / "solutions").mkdir()
    (site / "index.html").write_text("<html></html>")
    (site / "book" / "intro.html").write_text(PAGE)
    (site / "solutions" / "x.html").write_text(PAGE)
    pdf = tmp_path / "pdf" / "book.pdf"
    pdf.parent.mkdir()
    pdf.write_bytes(b"%PDF-1.5 stand-in")
    pdf.with_suffix(".json").write_text(json.dumps({"pages": 12, "solutions": True}))
    for _ in range(2):                                    # a second run changes nothing
        assert link_pdf.main(["--site", str(site), "--pdf", str(pdf)]) == 0
        intro = (site / "book" / "intro.html").read_text()
        assert intro.count('href="../book.pdf"') == 2       # the download menu and the opening page
        assert intro.index("First paragraph.") < intro.index("is also a PDF") < intro.index("Second.")
        assert "12 pages" in intro and "with their solutions" in intro
        assert (site / "solutions" / "x.html").read_text().count('href="../book.pdf"') == 1
        assert (site / "book.pdf").read_bytes() == pdf.read_bytes()
    shutil.rmtree(site / "solutions")                      # a course's site without the solutions
    assert link_pdf.main(["--site", str(site), "--pdf", str(pdf)]) == 0
    assert not (site / "book.pdf").exists()
    assert (site / "book" / "intro.html").read_text() == PAGE


# -- the PDF of one chapter, typeset (needs TeX and poppler) ------------------------------------------

POPPLER = ("pdftotext", "pdfimages", "pdfinfo")


@pytest.fixture(scope="module")
def chapter_pdf(tmp_path_factory):
    missing = build_pdf.missing_tex() + [name for name in POPPLER if shutil.which(name) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (Debian: {build_pdf.DEBIAN_PACKAGES} poppler-utils; "
                    ".ci/run installs them)")
    out = tmp_path_factory.mktemp("pdf")
    record = build_pdf.build(out, PAGES, strict=False)
    text = subprocess.run(["pdftotext", "-layout", str(out / "book.pdf"), "-"], capture_output=True,
                          text=True, check=True).stdout
    return out, record, text


@pytest.mark.slow
def test_the_chapter_pdf_has_its_pages_and_no_unresolved_reference(chapter_pdf):
    out, record, text = chapter_pdf
    info = subprocess.run(["pdfinfo", str(out / "book.pdf")], capture_output=True, text=True, check=True).stdout
    assert record["pages"] == int(re.search(r"Pages:\s+(\d+)", info).group(1))
    assert record["pages"] > 20                      # the opening pages, the chapter, the references
    assert "??" not in text                          # LaTeX's mark of a reference it could not resolve
    assert "[?]" not in text
    assert record["solutions"] is True and record["contents"] == ["book/intro", *PAGES, "book/references"]


@pytest.mark.slow
def test_the_chapter_and_its_figures_are_numbered_as_on_the_site(chapter_pdf):
    _, _, text = chapter_pdf
    cells = _notebook()["cells"]
    source = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    # figures: code cells whose output myst-nb places as a named figure, and {figure} directives
    figures = [c["metadata"]["mystnb"]["figure"] for c in cells
               if c["cell_type"] == "code" and "figure" in c["metadata"].get("mystnb", {})]
    figures += [{"caption": ""}] * len(re.findall(r"```\{figure\}", source))
    assert figures, "chapter 1 has numbered figures"
    for k, figure in enumerate(figures, start=1):
        assert f"Fig. 1.{k}" in text
        words = " ".join(re.sub(r"[$`{}]", " ", figure["caption"]).split()[:3])
        typeset = " ".join(text.replace("\u2019", "'").split())         # LaTeX's curly apostrophe
        assert words in typeset, f"Fig. 1.{k}: its caption ({words!r}) is not typeset"
    assert f"Fig. 1.{len(figures) + 1}" not in text
    assert re.search(r"1\.1\s+From one agent to many", text)      # sections numbered 1.1, ...
    assert re.search(r"CHAPTER\s+ONE\s+MANY LEARNERS", text)
    assert "Fig. 3." not in text and "Chapter 3" not in text      # what LaTeX alone would number it
    assert not re.search(r"CHAPTER\s+\w+\s+(NOTATION|GLOSSARY)", text)  # unnumbered, as on the site


@pytest.mark.slow
def test_the_notation_tables_labkit_names_fit_their_column(chapter_pdf):
    """No name in the labkit column of the notation table runs past the column (LaTeX reports an
    overfull box with the line's text; a code span only breaks at spaces and some dots)."""
    out, _, _ = chapter_pdf
    table = [line for line in (ROOT / "book" / "notation.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("| ")]
    names = {code for line in table for code in re.findall(r"`([^`]+)`", line.split(" | ")[-1])}
    assert "lk.zero_sum_equilibrium(game)" in " ".join(names)
    log = (out / "work" / "_build" / "latex" / "book.log").read_text(encoding="utf-8", errors="replace")
    overfull = re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)[^\n]*\n(.*)", log)   # size, text
    wide = [(pt, line) for pt, line in overfull
            if any(piece in line for name in names for piece in name.split() if len(piece) > 6)]
    assert not wide, wide


@pytest.mark.slow
def test_the_chapter_pdf_shows_each_widget_as_its_first_frame(chapter_pdf, tmp_path):
    out, _, text = chapter_pdf
    assert "VBox(children" not in text and "SelectionSlider(" not in text
    notebook = _notebook()
    widgets = _widget_outputs(notebook, shown=True)
    assert widgets, "chapter 1 shows widgets"
    assert text.count("Interactive in the online version") == len(widgets)
    subprocess.run(["pdfimages", "-png", str(out / "book.pdf"), str(tmp_path / "image")], check=True)
    embedded = [Image.open(p) for p in sorted(tmp_path.glob("image-*.png"))]
    for output in widgets:
        frame = _shown_frame(notebook, output)
        assert any(_same_pixels(image, frame) for image in embedded), "a widget's first frame is not in the PDF"
