"""The JupyterLite site in Chromium: a chapter opens as a notebook, with its stored outputs, and the
only requests that leave the site are the Pyodide runtime's (fetched from Pyodide's CDN by design).

The lite site is built into a scratch folder (scripts/build_lite.py, offline) and served over HTTP on
127.0.0.1 (JupyterLite needs HTTP, not file://). Outside requests are answered with an error, so
the kernel cannot start here: this test checks what a reader sees before running a cell.
"""
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

sys.path.insert(0, str(ROOT / "scripts"))
import build_lite  # noqa: E402

PYODIDE_CDN = "https://cdn.jsdelivr.net/pyodide/"
CHAPTER = "chapters/01_many_learners.ipynb"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lite_server(tmp_path_factory):
    pytest.importorskip("jupyterlite_core")
    site = tmp_path_factory.mktemp("litesite")
    build_lite.build(site)
    port = _free_port()      # never LAB_PORT: the session's JupyterLab (conftest.lab_server) may hold it
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=site,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while True:
        try:
            urllib.request.urlopen(f"{base}/lite/index.html", timeout=2)
            break
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("the HTTP server for the lite site did not start")
            time.sleep(0.3)
    yield base
    proc.terminate()
    proc.wait(timeout=10)


@pytest.mark.browser
@pytest.mark.slow
def test_a_chapter_opens_in_jupyterlite_with_its_outputs(lite_server, browser, artifacts):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90_000)
    outside = []

    def route(r):
        url = r.request.url
        if url.startswith((lite_server, "blob:", "data:")):
            r.continue_()
        else:
            outside.append(url)
            r.abort()
    page.route("**/*", route)
    page.goto(f"{lite_server}/lite/notebooks/index.html?path={CHAPTER}")
    page.locator(".jp-Notebook").first.wait_for()
    # the chapter's title, rendered (by jupyterlab-myst, which the lite app includes, or by JupyterLab)
    title = page.locator(".jp-MarkdownCell :is(.jp-RenderedMarkdown, .myst) h1").first
    title.wait_for()
    assert "Many learners" in title.text_content()
    # the stored outputs show before any cell runs
    # (JupyterLab renders only the cells in view, so one is enough)
    output = page.locator(".jp-OutputArea-output").first
    output.wait_for()
    assert output.text_content().strip() or output.locator("img").count()
    page.screenshot(path=str(artifacts / "lite_chapter1.png"))
    assert all(url.startswith(PYODIDE_CDN) for url in outside), sorted(set(outside))[:5]
    page.close()


# ------------------------------------------------------------------ MyST, read in Jupyter
# the text a reader would see if a MyST role or directive were not rendered
RAW_MYST = ("{term}", "{doc}", "{numref}", "{cite", ":class:", ":::")

# the rendered Markdown of every cell, whether JupyterLab's own renderer or jupyterlab-myst's made
# it (never the cell's hidden editor, which holds the source)
COLLECT_MARKDOWN = """() => {
  const found = {};
  for (const cell of document.querySelectorAll('.jp-MarkdownCell')) {
    const shown = cell.querySelector('.jp-RenderedMarkdown') || cell.querySelector('.myst');
    if (shown) { found[cell.getAttribute('data-windowed-list-index')] = shown.textContent; }
  }
  return found;
}"""


# {cell index: [width, height]} of the PNG outputs of the code cells in view, as the browser decoded them
COLLECT_IMAGES = """() => {
  const found = {};
  for (const cell of document.querySelectorAll('.jp-CodeCell')) {
    const img = cell.querySelector('.jp-OutputArea-output[data-mime-type="image/png"] img');
    if (img && img.complete && img.naturalWidth > 0) {
      found[cell.getAttribute('data-windowed-list-index')] = [img.naturalWidth, img.naturalHeight];
    }
  }
  return found;
}"""


def rendered_markdown(page, expected, images=None):
    """{cell index: rendered text} of the Markdown cells, scrolling the notebook from top to bottom
    (JupyterLab renders only the cells near the view) until `expected` cells were seen, or three
    passes (a loaded machine renders slowly). A dict passed as `images` collects the code cells'
    PNG outputs seen on the way ({cell index: [width, height]})."""
    page.locator(".jp-MarkdownCell").first.wait_for()
    scroller = page.locator(".jp-WindowedPanel-outer").first
    texts = {}

    def collect():
        texts.update(page.evaluate(COLLECT_MARKDOWN))
        if images is not None:
            images.update({int(k): v for k, v in page.evaluate(COLLECT_IMAGES).items()})
    for _ in range(3):
        scroller.evaluate("el => { el.scrollTop = 0; }")
        for _ in range(400):
            page.wait_for_timeout(250)
            collect()
            at_end = scroller.evaluate("el => { const top = el.scrollTop; "
                                       "el.scrollTop += el.clientHeight * 0.6; return el.scrollTop === top; }")
            if at_end:
                page.wait_for_timeout(500)
                collect()
                break
        if len(texts) >= expected:
            break
    return texts


def _figure_cells(nb):
    """Indexes of the cells whose output is a numbered figure (myst-nb's mystnb.figure metadata)."""
    return [k for k, c in enumerate(nb.cells) if c.cell_type == "code" and "figure" in c.metadata.get("mystnb", {})]


def _markdown_cells(path):
    import nbformat
    return sum(c.cell_type == "markdown" for c in nbformat.read(path, as_version=4).cells)


def _offline_page(browser, base):
    """A page whose requests outside `base` fail, as without the network (the CDN is unreachable)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90_000)
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith((base, "blob:", "data:"))
               else r.abort())
    return page


@pytest.mark.browser
@pytest.mark.slow
def test_chapter2_reads_as_plain_markdown_in_jupyterlite(lite_server, browser, artifacts):
    page = _offline_page(browser, lite_server)
    page.goto(f"{lite_server}/lite/notebooks/index.html?path=chapters/02_learning_dynamics.ipynb")
    import nbformat
    # the notebook the lite site serves (plain Markdown, an install cell first, the caption cell
    # after each figure)
    with urllib.request.urlopen(f"{lite_server}/lite/files/chapters/02_learning_dynamics.ipynb") as served:
        lite_nb = nbformat.reads(served.read().decode("utf-8"), as_version=4)
    shown = _figure_cells(lite_nb)
    assert len(shown) == len(_figure_cells(nbformat.read(ROOT / "chapters" / "02_learning_dynamics.ipynb", 4)))
    expected = sum(c.cell_type == "markdown" for c in lite_nb.cells)
    images = {}
    texts = rendered_markdown(page, expected, images)
    text = "\n".join(texts.values())
    assert len(texts) == expected                # every Markdown cell of the chapter was seen rendered
    assert not [raw for raw in RAW_MYST + (":name:", ":alt:", "Unknown Directive") if raw in text]
    assert "In this chapter" in text and "Figure 2.1." in text and "(Hart and Mas-Colell, 2000)" in text
    # each figure is drawn, and its numbered caption is the cell right after it
    assert shown and [k for k in shown if k in images] == shown, (shown, sorted(images))
    assert [texts.get(str(k + 1), "")[:12] for k in shown] == [f"Figure 2.{n}. " for n in range(1, len(shown) + 1)]
    assert "Works cited in this notebook" in text
    page.locator(".jp-WindowedPanel-outer").first.evaluate("el => { el.scrollTop = 0; }")
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts / "lite_chapter2.png"))
    page.close()


@pytest.mark.browser
@pytest.mark.slow
def test_without_the_runtime_the_lite_page_says_why_and_what_to_do(lite_server, browser, artifacts):
    page = _offline_page(browser, lite_server)
    page.goto(f"{lite_server}/lite/notebooks/index.html?path={CHAPTER}")
    message = page.locator("#labkit-runtime-message")
    message.wait_for()
    text = message.inner_text()
    assert "Python could not be started" in text
    assert PYODIDE_CDN in text                                  # what failed
    assert "needs the network once" in text                    # why, and that once is enough
    assert "on your own machine" in text                       # what to do instead
    link = message.get_by_role("link", name="Running the notebooks")
    assert link.get_attribute("href") == "../../book/running.html"
    page.locator(".jp-Notebook").first.wait_for()               # the notebook is still there to read
    page.screenshot(path=str(artifacts / "lite_no_runtime.png"))
    message.get_by_role("button", name="Close").click()
    assert page.locator("#labkit-runtime-message").count() == 0
    page.close()


@pytest.mark.browser
def test_on_file_pages_the_lite_link_explains_how_to_serve_the_site(site, browser, artifacts):
    import sys as _sys
    _sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import lite_links
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = []
    context.on("page", lambda p: opened.append(p))
    page = context.new_page()
    opened.clear()
    page.goto((site / "chapters" / "01_many_learners.html").as_uri())
    link = page.locator(f".{lite_links.CLASS} a")
    link.click()
    note = page.locator(f".{lite_links.NOTE_CLASS}")
    note.wait_for()
    assert lite_links.SERVE_COMMAND in note.inner_text() and "file://" in note.inner_text()
    page.wait_for_timeout(500)
    assert opened == []                                          # no blank tab
    page.screenshot(path=str(artifacts / "file_lite_link.png"))
    context.close()


@pytest.mark.browser
@pytest.mark.slow
def test_chapter2_renders_its_myst_in_jupyterlab(lab_server, browser, artifacts):
    """The notebook as committed (MyST), in JupyterLab with jupyterlab-myst (requirements.txt)."""
    import shutil
    shutil.copy(ROOT / "chapters" / "02_learning_dynamics.ipynb", lab_server["root"] / "myst_chapter2.ipynb")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90_000)
    page.goto(f"{lab_server['base']}/lab/tree/myst_chapter2.ipynb?token={lab_server['token']}")
    expected = _markdown_cells(ROOT / "chapters" / "02_learning_dynamics.ipynb")
    import nbformat
    figures = _figure_cells(nbformat.read(ROOT / "chapters" / "02_learning_dynamics.ipynb", as_version=4))
    images = {}
    texts = rendered_markdown(page, expected, images)
    text = "\n".join(texts.values())
    assert len(texts) == expected
    assert not [raw for raw in RAW_MYST + ("Unknown Directive", "{glue") if raw in text]
    assert "best responses" in text and "NashConv" in text      # the terms read as words
    # every numbered figure is drawn, as the output of its own cell (no glue directive to render),
    # and its numbered caption is the cell under it
    assert figures and [k for k in figures if k in images] == figures, (figures, sorted(images))
    assert all(images[k][0] >= 400 and images[k][1] >= 150 for k in figures), images
    assert [texts.get(str(k + 1), "")[:12] for k in figures] == \
        [f"Figure 2.{n}. " for n in range(1, len(figures) + 1)]
    page.locator(".jp-WindowedPanel-outer").first.evaluate("el => { el.scrollTop = 0; }")
    # the "In this chapter" tip is drawn as an admonition box, under its title
    tip = page.locator(".jp-MarkdownCell aside.myst-admonition-tip").first
    tip.wait_for()
    assert tip.text_content().startswith("In this chapter")
    page.screenshot(path=str(artifacts / "lab_myst_chapter2.png"))
    page.close()
