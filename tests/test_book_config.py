"""The configuration `make book` builds with: launch buttons only with a repository, a course build
without solutions, and the theme fixes registered."""
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import book_config  # noqa: E402


def committed(name):
    return yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))


def test_committed_config_has_no_dead_launch_button():
    """While repository.url is empty no Binder, Colab or JupyterHub button may point anywhere."""
    config = book_config.launch_settings(committed("_config.yml"), None)
    assert config["repository"]["url"] == ""
    assert not any(config["launch_buttons"][k] for k in ("binderhub_url", "colab_url", "jupyterhub_url"))
    assert config["html"]["use_repository_button"] is False


def test_repository_url_turns_binder_and_colab_on():
    config = book_config.launch_settings(committed("_config.yml"), "https://github.com/someone/labkit/")
    assert config["repository"]["url"] == "https://github.com/someone/labkit"
    assert config["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert config["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert config["launch_buttons"]["jupyterhub_url"] == ""       # only when the course names its hub
    assert config["html"]["use_repository_button"] is True


@pytest.mark.parametrize("bad", ["github.com/a/b", "https://hub.example.org", "ftp://x/a/b", "https://x/a/b c"])
def test_a_malformed_repository_url_is_refused(bad):
    with pytest.raises(ValueError, match="repository URL"):
        book_config.launch_settings(committed("_config.yml"), bad)


def test_course_build_leaves_out_every_solution_page_and_keeps_the_rest():
    def files(node):
        if isinstance(node, dict):
            return ([node["file"]] if "file" in node else []) + [f for v in node.values() for f in files(v)]
        if isinstance(node, list):
            return [f for v in node for f in files(v)]
        return []

    full = files(committed("_toc.yml"))
    course = files(book_config.without_solutions(committed("_toc.yml")))
    assert any(f.startswith("solutions/") for f in full)
    assert not any(f.startswith("solutions/") for f in course)
    assert course == [f for f in full if not f.startswith("solutions/")]


def test_script_writes_both_files_and_names_them(tmp_path, capsys):
    out = tmp_path / "cfg"
    assert book_config.main(["--out", str(out), "--no-solutions"]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == ["--config", str(out / "_config.yml"), "--toc", str(out / "_toc.yml")]
    config = yaml.safe_load((out / "_config.yml").read_text())
    extensions = config["sphinx"]["local_extensions"]
    assert all(Path(p).is_absolute() and (Path(p) / f"{name}.py").exists() for name, p in extensions.items())


def test_page_fixes_drop_repeated_inline_scripts():
    """The theme registers sphinx-thebe's inline configuration twice (filename None, then ""): each page
    would throw "Identifier 'THEBE_JS_URL' has already been declared"."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import page_fixes
    from sphinx.builders.html._assets import _JavaScript

    body = 'const THEBE_JS_URL = "x";'
    scripts = [_JavaScript("a.js"), _JavaScript(None, body=body), _JavaScript("", priority=501, body=body),
               _JavaScript("a.js"), _JavaScript(None, body="other")]
    context = {"script_files": scripts, "pathto": lambda uri, resource=0: "../" + uri}
    page_fixes._fix_page(None, "p", "page.html", context, None)
    assert [(s.filename, s.attributes.get("body")) for s in context["script_files"]] == \
        [("a.js", None), (None, body), (None, "other")]
    assert context["default_mode"] == "auto"       # the theme logs a console error for ""


def test_page_fixes_place_the_widget_manager_beside_its_fonts():
    """embed-amd.js asks for its Font Awesome files in the folder of its AMD modules: RequireJS must be
    told, before require.js loads, that those modules live in _static/widgets/fonts, which must hold
    every .woff2 file the vendored widget manager names."""
    import json
    import re
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import page_fixes
    from sphinx.builders.html._assets import _JavaScript

    scripts = [_JavaScript("_static/widgets/require.js"), _JavaScript("_static/widgets/embed-amd.js")]
    context = {"script_files": scripts, "pathto": lambda uri, resource=0: "../" + uri}
    page_fixes._fix_page(None, "chapters/x", "page.html", context, None)
    config, require, embed = context["script_files"]
    assert (require.filename, embed.filename) == ("_static/widgets/require.js", "_static/widgets/embed-amd.js")
    paths = json.loads(config.attributes["body"].removeprefix("var require = ").rstrip(";"))["paths"]
    assert paths["@jupyter-widgets/html-manager/dist"] == "../_static/widgets/fonts"
    assert paths["@jupyter-widgets/controls"] == "../_static/widgets/fonts/controls"
    vendored = (ROOT / "book" / "_vendor" / "widgets" / "embed-amd.js").read_text(encoding="utf-8")
    named = set(re.findall(r'\.p\+"([0-9a-f]{20}\.woff2)"', vendored))
    assert len(named) == 3
    shipped = {f.name for f in (ROOT / "book" / "_vendor" / "widgets" / "fonts").glob("*.woff2")}
    assert named == shipped
