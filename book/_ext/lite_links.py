"""Sphinx extension of the book: a link from every chapter and exercise page to its live copy.

The JupyterLite site (scripts/build_lite.py, built by `make book` after Jupyter Book) serves the
notebooks of chapters/ and exercises/ at ``<site>/lite/``; under each such page's title this
extension puts a line that opens the same notebook there, running in the reader's browser.
``labkit_lite`` in the Sphinx config names the lite site's folder relative to the site's root
(default "lite"); "" turns the links off.

JupyterLite needs the site to be served over HTTP: opened from disk (file://, as when one opens
_build/html/index.html), the browser refuses to load its parts and the link would open a blank
tab. There the link shows instead how to serve the site (`FILE_NOTE`).
"""
import json

from docutils import nodes

LITE_FOLDERS = ("chapters/", "exercises/")
CLASS = "labkit-lite-link"
NOTE_CLASS = "labkit-lite-file-note"
SERVE_COMMAND = "python -m http.server -d _build/html"
FILE_NOTE = ("The in-browser copy cannot start from a page opened as a file (file://): the browser "
             "does not let it load its parts from disk. Serve the book instead: in its folder run "
             "{command} and open http://localhost:8000/ (then this link works).")
# on file:// pages, a click on the link shows FILE_NOTE under it instead of opening a blank tab
FILE_SCRIPT = """document.addEventListener("click", function (event) {
  if (location.protocol !== "file:" || !event.target.closest) { return; }
  var link = event.target.closest(".%(cls)s a");
  if (!link) { return; }
  event.preventDefault();
  var line = link.parentNode;
  if (line.querySelector(".%(note)s")) { return; }
  var note = document.createElement("span");
  note.className = "%(note)s";
  note.setAttribute("role", "note");
  note.style.display = "block";
  var parts = %(parts)s;
  var command = document.createElement("code");
  command.textContent = %(command)s;
  note.append(parts[0], command, parts[1]);
  line.appendChild(note);
});""" % {"cls": CLASS, "note": NOTE_CLASS, "parts": json.dumps(FILE_NOTE.split("{command}")),
         "command": json.dumps(SERVE_COMMAND)}


def lite_href(docname: str, lite: str = "lite") -> str:
    """The relative URL, from `docname`'s page, of its notebook in the lite site."""
    up = "../" * docname.count("/")
    return f"{up}{lite}/notebooks/index.html?path={docname}.ipynb"


def _html(href: str) -> str:
    return (f'<p class="{CLASS}"><a href="{href}" target="_blank" rel="noopener">'
            "Run this page in your browser</a> (JupyterLite: Python in the browser, nothing to install; "
            "the first start takes a minute)</p>")


def add_lite_link(app, doctree, docname):
    lite = app.config.labkit_lite
    if not lite or not docname.startswith(LITE_FOLDERS):
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return
    link = nodes.raw("", _html(lite_href(docname, lite)), format="html")
    titles = [k for k, child in enumerate(section.children) if isinstance(child, nodes.title)]
    section.insert(titles[0] + 1 if titles else 0, link)


def setup(app):
    app.add_config_value("labkit_lite", "lite", "html")
    app.connect("doctree-resolved", add_lite_link)
    app.add_js_file(None, body=FILE_SCRIPT)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
