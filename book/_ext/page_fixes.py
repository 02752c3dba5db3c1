"""Sphinx extension of the book: small fixes to what the theme puts on every page.

1. sphinx-thebe's configuration script (``const THEBE_JS_URL = ...``) is registered twice by Jupyter
   Book 1, and the second copy throws "Identifier 'THEBE_JS_URL' has already been declared" in every
   page's console (and sphinx-togglebutton's setup runs twice). Keep the first copy of every inline or
   linked script.
"""


def _drop_repeated_scripts(app, pagename, templatename, context, doctree):
    seen, kept = set(), []
    for script in context.get("script_files", []):
        attributes = getattr(script, "attributes", {}) or {}
        # an inline script is registered with filename None by one extension and "" by another
        key = (getattr(script, "filename", str(script)) or None, tuple(sorted(attributes.items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    # in place: the builder renders its own list (and restores it after each page). This handler
    # runs early: Sphinx stops calling html-page-context handlers at the first that returns a value.
    context["script_files"][:] = kept


def setup(app):
    app.connect("html-page-context", _drop_repeated_scripts, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
