"""The JupyterLite site beside the book (scripts/build_lite.py, book/_ext/lite_links.py), checked
without a browser: the built files, labkit's wheel and what Pyodide would make of the install cell.

The lite site is built once into a temporary "book site" (offline, ~30 s). With BOOK_SITE set
(e.g. BOOK_SITE=_build/html after `make book`) the built book's own pages and lite site are
checked too: every chapter and exercise page links to a notebook that the lite site serves.
"""
import asyncio
import concurrent.futures
import ast
import json
import os
import re
import sys
import types
import zipfile
from email.parser import Parser
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlparse

import nbformat
import pytest
import yaml

from _grading_support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import book_config  # noqa: E402
import build_lite  # noqa: E402
import install_cell  # noqa: E402
import lite_links  # noqa: E402

# what Pyodide provides itself, or installs from pure-Python wheels: never pyzmq and what needs it
CORE_DEPENDENCIES = {"numpy", "scipy", "matplotlib", "ipywidgets", "tqdm"}
NEEDS_A_SERVER = {"pyzmq", "jupyter-client", "nbclient", "ipykernel", "tornado"}
PYODIDE_PYPI = Path(sys.prefix) / "share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension/static/pypi"



def _run(coroutine):
    """asyncio.run in a thread of its own: a test that ran before in this xdist worker may have left
    an event loop running in the main thread, where asyncio.run refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()

def _toc_pages():
    """Every chapter and exercise page of the table of contents (docnames)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [f for f in book_config.toc_files(toc) if f.startswith(lite_links.LITE_FOLDERS)]


@pytest.fixture(scope="module")
def lite(tmp_path_factory):
    pytest.importorskip("jupyterlite_core")
    pytest.importorskip("jupyterlite_pyodide_kernel")
    site = tmp_path_factory.mktemp("site")
    return build_lite.build(site)


pytestmark = pytest.mark.slow


def test_the_lite_site_has_its_app_config_and_widgets(lite):
    assert (lite / "index.html").is_file() and (lite / "notebooks" / "index.html").is_file()
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    urls = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]["pipliteUrls"]
    assert any(u.startswith("./pypi/all.json") for u in urls)
    extensions = {e["name"] for e in config["federated_extensions"]}
    assert "@jupyter-widgets/jupyterlab-manager" in extensions          # sliders work live
    assert "@jupyterlite/pyodide-kernel-extension" in extensions


def test_labkit_wheel_is_served_and_indexed_for_piplite(lite):
    (wheel,) = (lite / "pypi").glob("labkit_marl-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")                     # pure Python: Pyodide takes it
    # every reader of the browser copy downloads it: at most 2 MB (8.8 MB with the EFR curves inside)
    assert wheel.stat().st_size <= 2_000_000, wheel.stat().st_size
    index = json.loads((lite / "pypi" / "all.json").read_text())
    assert wheel.name in {release["filename"] for r in index["labkit-marl"]["releases"].values() for release in r}
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = Parser().parsestr(zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode())
    # the cached results travel inside the wheel (labkit.data), so the live chapters can read them;
    # the EFR per-round values and heatmap pictures are left to their own wheel
    assert any(n.startswith("labkit/data/efr/") and n.endswith(".json") for n in names)
    assert not [n for n in names if n.startswith("labkit/data/efr/") and n.endswith((".npz", ".png"))]
    core = {re.split(r"[ ;<>=!~\[]", r, maxsplit=1)[0].lower() for r in metadata.get_all("Requires-Dist")
            if "extra ==" not in r}
    assert core == CORE_DEPENDENCIES and not core & NEEDS_A_SERVER


def test_the_efr_per_round_values_are_a_wheel_of_their_own(lite):
    (wheel,) = (lite / "pypi").glob("labkit_marl_efr_rounds-*.whl")
    index = json.loads((lite / "pypi" / "all.json").read_text())
    assert wheel.name in {release["filename"] for r in index["labkit-marl-efr-rounds"]["releases"].values()
                          for release in r}
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        record = zf.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
        import hashlib
        import base64
        for line in record.splitlines():              # RECORD's hashes are those of the files
            path, digest, size = line.split(",")
            if digest:
                data = zf.read(path)
                assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                assert int(size) == len(data)
    expected = {f"labkit/data/efr/{p.name}" for p in (ROOT / "labkit" / "data" / "efr").glob("*.npz")}
    assert {n for n in names if not ".dist-info/" in n} == expected and len(expected) >= 19


def test_every_chapter_and_exercise_is_served_with_its_install_cell_first(lite):
    import plain_markdown
    expected = [str(p) for p in build_lite.lite_notebooks()]
    served = sorted(str(p.relative_to(lite / "files")) for p in (lite / "files").rglob("*.ipynb"))
    assert served == expected and len(served) >= 20
    url, branch = install_cell.repository_setting()
    for rel in served:
        nb = nbformat.read(lite / "files" / rel, as_version=4)
        original = nbformat.read(ROOT / rel, as_version=4)
        extras = [install_cell.ROUNDS_DISTRIBUTION] if install_cell.reads_efr_rounds(original) else []
        assert nb.cells[0].source == install_cell.cell_source(url, branch, extras=extras), rel
        kept = [c for c in original.cells if not install_cell.is_install_cell(c)]
        # code and outputs unchanged; the Markdown in plain Jupyter Markdown, with the works cited
        code = [c for c in nb.cells[1:] if c.cell_type == "code"]
        assert [c.source for c in code] == [c.source for c in kept if c.cell_type == "code"]
        assert [c.get("outputs") for c in code] == [c.get("outputs") for c in kept if c.cell_type == "code"]
        assert plain_markdown.leftovers(nb) == [], rel
    chapter6 = nbformat.read(lite / "files" / "chapters" / "06_hindsight_rationality.ipynb", as_version=4)
    assert "labkit-marl-efr-rounds" in chapter6.cells[0].source


def test_the_pages_that_start_python_explain_a_failed_runtime_download(lite):
    url = build_lite.pyodide_url(lite)
    assert url.startswith("https://") and url.endswith(("/pyodide.js", "/pyodide.mjs"))
    for page in ("lab", "notebooks"):
        html = (lite / page / "index.html").read_text()
        assert f'src="../{build_lite.RUNTIME_CHECK}" data-pyodide-url="{url}"' in html
    assert (lite / build_lite.RUNTIME_CHECK).is_file()


def test_jupyterlab_myst_is_part_of_the_lite_app(lite):
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert "jupyterlab-myst" in {e["name"] for e in config["federated_extensions"]}
    assert (lite / "extensions" / "jupyterlab-myst").is_dir()


def test_every_chapter_link_resolves_to_a_served_notebook(lite):
    pages = _toc_pages()
    assert "chapters/01_many_learners" in pages and "exercises/27_1_no_regret_minimax" in pages
    site = lite.parent
    for docname in pages:
        target = urlparse(urljoin(f"file://{site}/{docname}.html", lite_links.lite_href(docname)))
        assert Path(target.path).is_file(), docname
        (path,) = parse_qs(target.query)["path"]
        assert (lite / "files" / path).is_file(), docname


def test_the_extension_puts_the_link_under_the_title():
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser as RstParser
    from docutils.utils import new_document

    class App:
        class config:
            labkit_lite = "lite"

    def page(text):
        doc = new_document("page", get_default_settings(RstParser))
        RstParser().parse(text, doc)
        return doc

    doc = page("Title\n=====\n\nFirst paragraph.\n")
    lite_links.add_lite_link(App, doc, "chapters/01_many_learners")
    section = next(iter(doc.findall(nodes.section)))
    assert isinstance(section[0], nodes.title) and isinstance(section[1], nodes.raw)
    assert 'href="../lite/notebooks/index.html?path=chapters/01_many_learners.ipynb"' in section[1].astext()
    other = page("Title\n=====\n\nText.\n")
    lite_links.add_lite_link(App, other, "book/running")                 # not a notebook page
    App.config.labkit_lite = ""
    lite_links.add_lite_link(App, doc2 := page("T\n=\n\nx\n"), "chapters/x")  # turned off
    assert not list(other.findall(nodes.raw)) and not list(doc2.findall(nodes.raw))


@pytest.mark.skipif(not os.environ.get("BOOK_SITE"), reason="set BOOK_SITE=_build/html after `make book`")
def test_the_built_book_links_every_chapter_to_its_live_copy():
    site = Path(os.environ["BOOK_SITE"]).resolve()
    for docname in _toc_pages():
        html = (site / f"{docname}.html").read_text(encoding="utf-8")
        (href,) = re.findall(rf'class="{lite_links.CLASS}"><a href="([^"]+)"', html)
        target = urlparse(urljoin(f"file://{site}/{docname}.html", href.replace("&amp;", "&")))
        assert Path(target.path).is_file()
        assert (site / "lite" / "files" / parse_qs(target.query)["path"][0]).is_file(), docname


# ------------------------------------------------------------------ the install cell under Pyodide
@pytest.mark.skipif(not PYODIDE_PYPI.is_dir(), reason="jupyterlite-pyodide-kernel is not installed")
@pytest.mark.parametrize("url", ["", "https://github.com/example-org/marl-book"])
def test_pyodide_turns_the_install_cell_into_one_piplite_install(url, monkeypatch):
    """The Pyodide kernel's own cell transformer (pyodide_kernel.litetransform, from the wheel the
    lite site ships) rewrites %pip into piplite calls; the result must compile, and run one
    ``piplite.install(["labkit-marl"])`` when labkit is missing."""
    calls = []

    def module_from_wheel(pattern, path, name):
        """One module of a shipped wheel, alone (the packages' __init__ need the browser)."""
        with zipfile.ZipFile(next(PYODIDE_PYPI.glob(pattern))) as zf:
            source = zf.read(path).decode()
        module = types.ModuleType(name)
        exec(compile(source, path, "exec"), module.__dict__)
        return module

    async def install(**kwargs):
        calls.append(kwargs)

    piplite = types.ModuleType("piplite")          # the kernel's piplite: records its installs
    piplite.install = install
    piplite.cli = module_from_wheel("piplite-*.whl", "piplite/cli.py", "piplite.cli")
    monkeypatch.setitem(sys.modules, "piplite", piplite)
    monkeypatch.setitem(sys.modules, "piplite.cli", piplite.cli)
    litetransform = module_from_wheel("pyodide_kernel-*.whl", "pyodide_kernel/litetransform.py", "litetransform")
    code = _run(litetransform.LiteTransformerManager().transform_cell(install_cell.cell_source(url, "main")))

    import importlib.util
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    compiled = compile(code, "install-cell", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)

    async def run():
        result = eval(compiled, {"__name__": "__main__"})
        if asyncio.iscoroutine(result):
            await result
    _run(run())
    assert calls == [{"requirements": ["labkit-marl"]}]


# ------------------------------------------------------------------ which notebooks run live
def test_the_browser_blockers_are_found():
    def code(*sources):
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    assert build_lite.browser_blockers(code("import numpy as np\nimport labkit as lk", "from pathlib import Path",
                                            "import ipywidgets as widgets\nfrom scipy.optimize import linprog")) == []
    assert build_lite.browser_blockers(install_cell.with_install_cell(code("1"))) == []   # its %pip is fine
    found = build_lite.browser_blockers(code("import jax.numpy as jnp", "lk.EFR(g, fixed_point='paper')",
                                             "from concurrent.futures import ProcessPoolExecutor"))
    assert found == ["imports jax, which the browser kernel lacks",
                     "compiles the EFR authors' C++ numerics (fixed_point=\"paper\")", "starts worker processes"]


def test_only_the_pages_running_md_names_cannot_run_in_the_browser():
    blocked = {str(rel) for rel in build_lite.lite_notebooks()
               if build_lite.browser_blockers(nbformat.read(ROOT / rel, as_version=4))}
    # book/running.md ("In your browser") tells readers that the appendix does not run there
    assert blocked == {"chapters/appendix_efr_reproduction.ipynb"}
    running = (ROOT / "book" / "running.md").read_text(encoding="utf-8")
    assert "chapters 1–9 and every exercise" in running
    assert "the appendix on the EFR paper's digits" in running


def test_running_md_links_the_wheels_the_site_hosts(lite):
    """book/running.md names the wheels by file name (with labkit's version): they must be the ones
    the lite build serves, so that a version bump without updating the page fails here."""
    running = (ROOT / "book" / "running.md").read_text(encoding="utf-8")
    for name in (install_cell.wheel_name(), install_cell.wheel_name(install_cell.ROUNDS_DISTRIBUTION)):
        assert f'href="../lite/pypi/{name}"' in running, name
        assert (lite / "pypi" / name).is_file(), name
    assert "python -m http.server -d _build/html" in running
