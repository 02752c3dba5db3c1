"""Sphinx extension of the book: small fixes to what the theme puts on every page.

1. sphinx-thebe's configuration script (``const THEBE_JS_URL = ...``) is registered twice by Jupyter
   Book 1, and the second copy throws "Identifier 'THEBE_JS_URL' has already been declared" in every
   page's console (and sphinx-togglebutton's setup runs twice). Keep the first copy of every inline or
   linked script.
2. The widget manager (``_static/widgets/embed-amd.js``) finds its icon fonts (Font Awesome 5, which its
   own stylesheets ask for) next to the AMD modules it defines (``@jupyter-widgets/html-manager/dist/
   libembed-amd``, ``@jupyter-widgets/controls``, ...), and RequireJS places those beside the page, so
   a page with a widget asked for ``<page folder>/@jupyter-widgets/.../*.woff2`` and got 404s. RequireJS
   ``paths`` entries, set before require.js loads, move the modules into ``_static/widgets/fonts/``,
   where the book ships the fonts (book/_vendor/widgets/fonts, from the same npm release). The modules
   are defined inside embed-amd.js, so nothing is ever fetched from those paths but the fonts.
3. The theme writes ``localStorage.getItem("mode") || "{{ default_mode }}"`` into every page, and
   Jupyter Book leaves ``default_mode`` empty, so a first visit logged "Got invalid theme mode: .
   Resetting to auto." as a console error. Give it the value the theme falls back to anyway, "auto".
"""
import json

WIDGET_FONTS = "_static/widgets/fonts"
# module id prefix -> where RequireJS should place it, under WIDGET_FONTS (the fonts are found in
# the folder of each module's address)
WIDGET_MODULES = {
    "@jupyter-widgets/html-manager/dist": "",
    "@jupyter-widgets/html-manager": "/html-manager",
    "@jupyter-widgets/controls": "/controls",
    "@jupyter-widgets/controls7": "/controls7",
    "@jupyter-widgets/base": "/base",
    "@jupyter-widgets/base7": "/base7",
}


def _script_key(script):
    attributes = getattr(script, "attributes", {}) or {}
    # an inline script is registered with filename None by one extension and "" by another
    return getattr(script, "filename", str(script)) or None, tuple(sorted(attributes.items()))


def _require_config(context):
    """An inline script that tells RequireJS where the widget manager's fonts are, for this page."""
    from sphinx.builders.html._assets import _JavaScript

    fonts = context["pathto"](WIDGET_FONTS, 1)
    paths = {module: fonts + place for module, place in WIDGET_MODULES.items()}
    body = "var require = " + json.dumps({"paths": paths}) + ";"
    return _JavaScript(None, body=body)


def _fix_page(app, pagename, templatename, context, doctree):
    if not context.get("default_mode"):
        context["default_mode"] = "auto"
    scripts = context.get("script_files", [])
    seen, kept = set(), []
    for script in scripts:
        key = _script_key(script)
        if key in seen:
            continue
        seen.add(key)
        if str(getattr(script, "filename", "") or "").endswith("widgets/require.js"):
            kept.append(_require_config(context))
        kept.append(script)
    # in place: the builder renders its own list (and restores it after each page). Handlers that
    # return a value stop later html-page-context handlers, so this one returns nothing.
    scripts[:] = kept


def setup(app):
    app.connect("html-page-context", _fix_page, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
