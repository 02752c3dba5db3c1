"""Fixtures for the browser tests: Debian's Chromium driven by Playwright, a private JupyterLab, the built site.

The browser is /usr/bin/chromium from Debian (``apt-get install chromium``), never a Playwright download.
Without it, or without the playwright package, every test here is skipped with a reason saying so.
Screenshots are kept in tests/artifacts/ for a human to look at.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]

# A tiny hash of the bytes behind an <img> (blob: or file: URL), computed in the page: the widget
# Stack makes a new blob: URL whenever a frame is shown again, so only the bytes tell frames apart.
IMAGE_HASH_JS = """async (img) => {
    const bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
    let h = 2166136261;
    for (let k = 0; k < bytes.length; k++) { h ^= bytes[k]; h = Math.imul(h, 16777619) >>> 0; }
    return bytes.length + ":" + h.toString(16);
}"""


def pytest_collection_modifyitems(config, items):
    """Skip the tests marked `browser` (pytest.ini) when Chromium or Playwright is missing, saying why."""
    reason = None
    if not Path(CHROMIUM).exists():
        reason = f"Debian's chromium is not installed ({CHROMIUM} missing): apt-get install chromium"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "the playwright package is not installed (pip install -r requirements-test.txt)"
    if reason:
        for item in items:
            if "browser" in item.keywords and item.get_closest_marker("browser"):
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def image_hash():
    """image_hash(locator) -> "length:fnv1a" of the bytes the <img> shows."""
    return lambda locator: locator.evaluate(IMAGE_HASH_JS)


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def browser():
    # one Chromium per test module, not per session: while Playwright's synchronous API is open, its
    # event loop counts as running in this thread, and a later test of the same worker that calls
    # asyncio.run (the kernel_polling doctests) would fail
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield b
        b.close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def strip_outputs(src, dst):
    """Copy a notebook without outputs and widget state, so that what the test sees was made by its own run."""
    nb = json.loads(Path(src).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    nb["metadata"].pop("widgets", None)
    Path(dst).write_text(json.dumps(nb, indent=1), encoding="utf-8")


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """JupyterLab on 127.0.0.1 serving a scratch folder with chapter 1 (outputs stripped).

    Settings: no news toast, and the default kernel starts without the "Select Kernel" dialog (which
    otherwise appears now and then and blocks Run All). The server is stopped by its own PID.
    """
    root = tmp_path_factory.mktemp("labroot")
    strip_outputs(ROOT / "chapters" / "01_many_learners.ipynb", root / "01_many_learners.ipynb")
    home = tmp_path_factory.mktemp("jupyterhome")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), PYTHONHASHSEED="0")
    settings = home / "settings" / "@jupyterlab"
    (settings / "apputils-extension").mkdir(parents=True)
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    (settings / "notebook-extension").mkdir(parents=True)
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text('{"autoStartDefaultKernel": true}')
    port = int(os.environ.get("LAB_PORT") or _free_port())
    token = secrets.token_hex(16)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.port_retries=0",
           "--ip=127.0.0.1", f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}", "--allow-root",
           "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log_path = home / "lab.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except Exception:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                proc.wait()
                log.close()
                raise RuntimeError("JupyterLab did not start:\n" + log_path.read_text())
            time.sleep(0.3)
    try:
        yield {"base": base, "token": token, "root": root}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


WIDGET_CHECK_CELLS = [
    "import labkit as lk\n"
    "def bar(k):\n"
    "    return lambda ax: (ax.bar([0], [k + 1], color=lk.plot.method_color('CFR')), ax.set_ylim(0, 5),\n"
    "                       ax.set_title(f'frame {k}'))\n"
    "frames = [lk.widgets.png_frame(bar(k), figsize=(3, 2), dpi=60) for k in range(4)]",
    "lk.widgets.play_stack(frames, interval=150, description='frame')",
    "lk.widgets.dropdown_stack(frames[:3], ['CFR', 'CFR+', 'MCCFR'], description='method', buttons=True)",
]


def _widget_check_notebook(path):
    """A small page with the two other kinds of static widget (Play and a method selector), executed
    by the book's own script so that the test also covers how outputs and widget state are made."""
    import importlib.util

    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
    nb = new_notebook(cells=[new_markdown_cell("# Widget check")] + [new_code_cell(c) for c in WIDGET_CHECK_CELLS])
    nbformat.write(nb, path)
    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / "scripts" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _, seconds, error = module.execute(path, timeout=120)
    if error:
        raise RuntimeError(f"scripts/execute_notebooks.py failed on the widget check page: {error}")


TEST_REPOSITORY = "https://github.com/example-course/labkit-book"


def _build_site(tmp):
    """Build the front pages, chapter 1 and a widget check page with the book's own _config.yml.

    The sources are copied to tmp/src, so the build sees exactly these pages whatever else the
    repository holds, and it runs with -W like `make book`.
    """
    src = tmp / "src"
    (src / "chapters").mkdir(parents=True)
    # the launch buttons exist only once repository.url is set: build the test site as a course would
    sys.path.insert(0, str(ROOT / "scripts"))
    import book_config
    config = book_config.launch_settings(yaml.safe_load((ROOT / "_config.yml").read_text()), TEST_REPOSITORY)
    # the exercises copied below name the other chapters they go with, which this small site leaves
    # out; `make book` builds every page with -W and checks those links
    sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx_config["suppress_warnings"] = [*sphinx_config.get("suppress_warnings", []), "myst.xref_missing"]
    (src / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    shutil.copytree(ROOT / "book", src / "book", ignore=shutil.ignore_patterns("instructors.md"))
    shutil.copy(ROOT / "chapters" / "01_many_learners.ipynb", src / "chapters")
    _widget_check_notebook(src / "chapters" / "widget_check.ipynb")
    # the pages chapter 1 links to must be built too (-W fails on a link to a page that is not)
    chapter = (ROOT / "chapters" / "01_many_learners.ipynb").read_text(encoding="utf-8")
    linked = sorted(set(re.findall(r"\.\./(exercises/[\w.]+)\.ipynb", chapter)))
    (src / "exercises").mkdir()
    for page in linked:
        shutil.copy(ROOT / f"{page}.ipynb", src / "exercises")
    pages = ["book/running", "book/notation", "book/glossary", "chapters/01_many_learners", *linked,
             "chapters/widget_check", "book/references"]
    (src / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n"
                                  + "".join(f"  - file: {page}\n" for page in pages))
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", "-W", "--path-output", str(tmp), str(src)]
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    print(f"built the test site in {time.perf_counter() - start:.1f} s")
    return tmp / "_build" / "html"


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The built website: a fresh build of the front pages, chapter 1 and a widget check page into a
    temporary folder (10-20 s), or $BOOK_SITE if set (e.g. BOOK_SITE=_build/html after `make book`;
    the widget check page is then skipped)."""
    given = os.environ.get("BOOK_SITE")
    if given:
        path = Path(given).resolve()
        if not (path / "chapters" / "01_many_learners.html").exists():
            pytest.fail(f"BOOK_SITE={given} has no chapters/01_many_learners.html")
        return path
    return _build_site(tmp_path_factory.mktemp("site"))
