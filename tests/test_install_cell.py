"""The first cell of every notebook installs labkit where it is missing (scripts/install_cell.py).

The cell is run here as IPython would run it (its ``%pip`` lines transformed by IPython itself),
with a stand-in shell that records the magic instead of calling pip: in a kernel that has labkit it
does nothing; without labkit it installs the distribution from the repository setting (a valid
PEP 508 direct reference, checked with `packaging`), or in Pyodide from the lite site's wheel;
with no repository set it stops with a message that says how to install labkit.
"""
import importlib.util
import sys

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager
from packaging.requirements import Requirement

from _grading_support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import install_cell  # noqa: E402

URL = "https://github.com/example-org/marl-book"
WHEEL = "https://example-org.github.io/marl-book/lite/pypi/labkit_marl-0.2.0-py3-none-any.whl"


class RecordingShell:
    """Stands in for IPython: records the magics; `installs` says whether %pip makes labkit appear."""

    def __init__(self, installs=True):
        self.magics, self.installs, self.installed = [], installs, False

    def run_line_magic(self, name, line):
        self.magics.append((name, line))
        self.installed = self.installs


def _run(source, monkeypatch, *, labkit_present, platform="linux", shell=None):
    """Execute the cell's code; returns the magics it called."""
    shell = shell or RecordingShell()
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: (real_find_spec(name, *a)
                                          if labkit_present or shell.installed or name != "labkit" else None))
    monkeypatch.setattr(sys, "platform", platform)
    code = TransformerManager().transform_cell(source)
    exec(compile(code, "install-cell", "exec"), {"get_ipython": lambda: shell})
    return shell.magics


def test_the_cell_does_nothing_where_labkit_is_installed(monkeypatch, capsys):
    for url in (URL, ""):
        assert _run(install_cell.cell_source(url, "main"), monkeypatch, labkit_present=True) == []
    assert capsys.readouterr() == ("", "")


def test_without_labkit_the_cell_installs_from_the_repository(monkeypatch):
    magics = _run(install_cell.cell_source(URL, "main"), monkeypatch, labkit_present=False)
    assert len(magics) == 1 and magics[0][0] == "pip"
    words = magics[0][1].split(maxsplit=2)
    assert words[:2] == ["install", "-q"]
    requirement = Requirement(words[2].strip('"'))
    assert requirement.name == "labkit-marl"
    assert requirement.url == f"git+{URL}@main"


def test_in_pyodide_the_cell_installs_the_served_wheel(monkeypatch):
    for url in (URL, ""):
        magics = _run(install_cell.cell_source(url), monkeypatch, labkit_present=False, platform="emscripten")
        assert magics == [("pip", "install -q labkit-marl")]
    extra = install_cell.cell_source("", extras=["labkit-marl-efr-rounds"])
    magics = _run(extra, monkeypatch, labkit_present=False, platform="emscripten")
    assert magics == [("pip", "install -q labkit-marl labkit-marl-efr-rounds")]


def test_a_download_installs_the_sites_wheels_or_says_where_they_are(monkeypatch):
    magics = _run(install_cell.cell_source(wheels=[WHEEL]), monkeypatch, labkit_present=False)
    assert magics == [("pip", f"install -q {WHEEL}")]
    with pytest.raises(ModuleNotFoundError, match=r"website hosts it: download "
                       r"labkit_marl-\d[\w.]*-py3-none-any\.whl from its page 'Running the notebooks'"):
        _run(install_cell.cell_source(site_hint=True), monkeypatch, labkit_present=False)
    rounds = install_cell.cell_source(site_hint=True, extras=[install_cell.ROUNDS_DISTRIBUTION])
    with pytest.raises(ModuleNotFoundError, match=r"labkit_marl-\S+\.whl and labkit_marl_efr_rounds-\S+\.whl"):
        _run(rounds, monkeypatch, labkit_present=False)
    for bad in ("http://example.org/x.whl", "https://example.org/x y.whl"):
        with pytest.raises(ValueError, match="wheel URL"):
            install_cell.cell_source(wheels=[bad])


def test_without_a_repository_the_cell_says_how_to_install(monkeypatch):
    with pytest.raises(ModuleNotFoundError, match=r"pip install \./.*pip install labkit_marl-\*\.whl"):
        _run(install_cell.cell_source(""), monkeypatch, labkit_present=False)


def test_when_pip_fails_the_cell_stops_with_a_clear_error(monkeypatch):
    for source in (install_cell.cell_source(URL, "main"), install_cell.cell_source(wheels=[WHEEL])):
        with pytest.raises(ModuleNotFoundError, match=r"installing labkit failed .*network"):
            _run(source, monkeypatch, labkit_present=False, shell=RecordingShell(installs=False))


def test_an_upgrade_of_a_package_the_kernel_had_loaded_asks_for_a_restart(monkeypatch):
    import importlib.metadata

    import ipywidgets  # noqa: F401  (loaded, as in a Colab kernel)
    shell = RecordingShell()
    real_version = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: (
        "8.1.9" if name == "ipywidgets" and shell.installed else
        "7.7.1" if name == "ipywidgets" else real_version(name)))
    with pytest.raises(RuntimeError, match=r"upgraded ipywidgets.*Restart the kernel.*Runtime > Restart"):
        _run(install_cell.cell_source(URL, "main"), monkeypatch, labkit_present=False, shell=shell)
    assert len(shell.magics) == 1
    monkeypatch.setattr(importlib.metadata, "version", real_version)     # nothing upgraded: no restart
    _run(install_cell.cell_source(URL, "main"), monkeypatch, labkit_present=False)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["repository", "wheel"])
def test_a_real_pip_failure_stops_the_cell(kind, tmp_path):
    """The cell in a real IPython, whose %pip runs pip: from an address nothing answers at (and an
    index that does not exist), pip fails and the cell raises the error that says so."""
    import subprocess
    dead = "https://127.0.0.1:9"
    source = (install_cell.cell_source(f"{dead}/org/repo", "main") if kind == "repository"
              else install_cell.cell_source(wheels=[f"{dead}/lite/pypi/{install_cell.wheel_name()}"]))
    program = (
        "import importlib.util\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: None if name == 'labkit' else real(name, *a)\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        f"result = InteractiveShell.instance().run_cell({source!r})\n"
        "error = result.error_in_exec\n"
        "print('RAISED', type(error).__name__, error)\n")
    env = {**__import__("os").environ, "PIP_RETRIES": "0", "PIP_TIMEOUT": "5", "PIP_NO_INPUT": "1",
           "PIP_INDEX_URL": f"{dead}/simple", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "GIT_TERMINAL_PROMPT": "0", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert "RAISED ModuleNotFoundError installing labkit failed" in done.stdout, done.stdout[-2000:]


def test_each_download_installs_what_its_page_reads():
    chapter6 = nbformat.read(ROOT / "chapters" / "06_hindsight_rationality.ipynb", as_version=4)
    chapter1 = nbformat.read(ROOT / "chapters" / "01_many_learners.ipynb", as_version=4)
    site = "https://example-org.github.io/marl-book/"
    assert install_cell.reads_efr_rounds(chapter6) and not install_cell.reads_efr_rounds(chapter1)
    assert install_cell.download_options(chapter6, URL, site) == {}               # the repository
    wheels = install_cell.download_options(chapter6, "", site)["wheels"]
    assert [w.rsplit("/", 1)[1].split("-")[0] for w in wheels] == ["labkit_marl", "labkit_marl_efr_rounds"]
    assert all(w.startswith(site + "lite/pypi/") for w in wheels)
    assert len(install_cell.download_options(chapter1, "", site)["wheels"]) == 1
    assert install_cell.download_options(chapter1, "", "") == {"site_hint": True, "extras": []}


def test_a_url_that_would_break_the_command_is_refused():
    for bad in ("http://example.org/a/b", 'https://github.com/a/b" ; rm -rf ~', "github.com/a/b"):
        with pytest.raises(ValueError, match="repository URL"):
            install_cell.cell_source(bad)


def test_every_notebook_has_exactly_one_install_cell_first():
    url, branch = install_cell.repository_setting()
    paths = install_cell.book_notebooks()
    assert len(paths) >= 30
    problems = {str(p.relative_to(ROOT)): install_cell.problem(nbformat.read(p, as_version=4), url, branch)
                for p in paths}
    assert {p: why for p, why in problems.items() if why} == {}, "run python scripts/install_cell.py --write"


def test_every_code_line_of_the_cell_fits_88_columns():
    variants = [install_cell.cell_source(URL, "main"), install_cell.cell_source(""),
                install_cell.cell_source(wheels=[WHEEL]), install_cell.cell_source(site_hint=True),
                install_cell.cell_source(site_hint=True, extras=[install_cell.ROUNDS_DISTRIBUTION])]
    for source in variants:  # all but the line with the URL, as long as the URL is
        lines = [line for line in source.splitlines() if "https://" not in line]
        assert max(map(len, lines)) <= 88


def test_write_inserts_one_cell_and_leaves_the_rest_byte_for_byte(tmp_path):
    source = ROOT / "chapters" / "01_many_learners.ipynb"
    nb = nbformat.read(source, as_version=4)
    nb.cells = [c for c in nb.cells if not install_cell.is_install_cell(c)]
    path = tmp_path / "chapter.ipynb"
    nbformat.write(nb, path)
    before = nbformat.read(path, as_version=4)
    assert install_cell.write([path], URL, "main") == [path]
    after = nbformat.read(path, as_version=4)
    assert after.cells[1:] == before.cells and after.metadata == before.metadata
    assert install_cell.problem(after, URL, "main") is None
    assert install_cell.problem(after, "", "") is not None          # the setting changed: stale
    text = path.read_text(encoding="utf-8")
    assert install_cell.write([path], URL, "main") == []             # idempotent
    assert path.read_text(encoding="utf-8") == text
    install_cell.write([path], "", "")                               # refreshed, still one cell
    assert sum(map(install_cell.is_install_cell, nbformat.read(path, as_version=4).cells)) == 1


def test_check_exits_1_and_names_the_notebook(tmp_path, capsys):
    path = tmp_path / "bare.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]), path)
    assert install_cell.main(["--check", str(path)]) == 1
    assert "bare.ipynb: 0 install cells" in capsys.readouterr().out
    assert install_cell.main(["--write", str(path)]) == 0
    assert install_cell.main(["--check", str(path)]) == 0


def test_the_site_downloads_follow_a_one_build_override(tmp_path):
    sources = tmp_path / "_sources" / "chapters"
    sources.mkdir(parents=True)
    nb = install_cell.with_install_cell(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]))
    nbformat.write(nb, sources / "one.ipynb")
    assert install_cell.main(["--site", str(tmp_path), "--repository", URL]) == 0
    assert f"git+{URL}" in nbformat.read(sources / "one.ipynb", as_version=4).cells[0].source


def test_bad_arguments_are_argparse_errors(tmp_path, capsys):
    for argv in (["--check", "--repository", "ftp://x/y/z"], ["--site", str(tmp_path)],
                 ["--check", str(tmp_path / "missing.ipynb")]):
        with pytest.raises(SystemExit) as exit_info:
            install_cell.main(argv)
        assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err
