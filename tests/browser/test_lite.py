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
    title = page.locator(".jp-RenderedMarkdown h1").first        # the chapter's title, rendered
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
