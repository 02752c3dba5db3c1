"""Sphinx extension of the book: in the PDF, every widget shows the frame the website shows first.

A widget's output cell holds only a reference (``application/vnd.jupyter.widget-view+json``) to the
widget state saved in the notebook's metadata; the website's widget manager draws it, but LaTeX has
nothing to draw it with, and myst-nb would print the widget's text repr ("VBox(children=...").
For LaTeX builds, and only for them, this extension rewrites each notebook's text as Sphinx reads it
(the ``source-read`` event; the file itself is never touched):

- every widget output gets an ``image/png``: the picture the widget shows before a reader touches it
  (the selected child of a Stack or Tab, every child of a Box, side by side for an HBox and one
  under the other otherwise, the plots an Output widget such as ``interact`` captured), which the
  LaTeX builder prefers to the text repr while the HTML builder still prefers the widget;
- a line under it names the setting shown and the other choices the online version offers.

HTML builds never run this code, so the website is unchanged.
"""
from __future__ import annotations

import base64
import io
import json
import re

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_REF = "IPY_MODEL_"
BOXES = {"VBoxModel", "BoxModel", "GridBoxModel", "HBoxModel"}
SELECTIONS = {"StackModel", "TabModel", "AccordionModel"}
DATA_IMAGE = re.compile(r"""<img\b[^>]*?\bsrc=["']data:image/(?:png|jpeg);base64,([A-Za-z0-9+/=\s]+)["']""")
GAP = 8            # pixels between the pictures of a composed frame
MAX_CHOICES = 8    # the line under a frame lists at most this many choices of a control


class WidgetState:
    """The saved widget models of one notebook, and what each widget shows before it is touched."""

    def __init__(self, notebook: dict):
        saved = notebook.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {})
        self.models = saved.get("state", {})

    def model(self, ref):
        model_id = ref[len(MODEL_REF):] if str(ref).startswith(MODEL_REF) else ref
        return self.models.get(model_id)

    def _hidden(self, state):
        layout = self.model(state.get("layout", "")) or {}
        style = layout.get("state", {})
        return style.get("display") == "none" or style.get("visibility") == "hidden"

    def pictures(self, ref):
        """The PIL image a widget shows first, or None when it shows no picture."""
        model = self.model(ref)
        if model is None:
            return None
        name, state = model.get("model_name", ""), model.get("state", {})
        if self._hidden(state):
            return None
        children = state.get("children", [])
        if name in SELECTIONS:
            index = state.get("selected_index")
            if index is None and name != "StackModel":   # a Tab shows its first child when none is selected
                index = 0
            return self.pictures(children[index]) if index is not None and 0 <= index < len(children) else None
        if name in BOXES:
            parts = [p for p in (self.pictures(child) for child in children) if p is not None]
            return compose(parts, across=(name == "HBoxModel"))
        if name == "ImageModel":
            return _open([_buffer(model, "value") or state.get("value")])
        if name == "HTMLModel":
            return _open(DATA_IMAGE.findall(str(state.get("value", ""))))
        if name == "OutputModel":
            found = [out.get("data", {}).get(kind) for out in state.get("outputs", [])
                     for kind in ("image/png", "image/jpeg")]
            return _open([f for f in found if f])
        return None

    def settings(self, ref):
        """One "description = shown choice (choices: ...)" phrase per control the widget holds."""
        model = self.model(ref)
        if model is None:
            return []
        name, state = model.get("model_name", ""), model.get("state", {})
        if name in BOXES or name in SELECTIONS:
            found = []
            for child in state.get("children", []):
                found += self.settings(child)
            return found
        label = (state.get("description") or "").strip() or "frame"
        labels = state.get("_options_labels")
        if labels and state.get("index") is not None:
            shown = labels[state["index"]]
            if len(labels) > MAX_CHOICES:
                return [f"{label} = {shown} (one of {len(labels)} choices, from {labels[0]} to {labels[-1]})"]
            comma = any("," in str(choice) for choice in labels)
            return [f"{label} = {shown} (choices: {(' / ' if comma else ', ').join(labels)})"]
        if name.endswith("SliderModel") and isinstance(state.get("value"), (int, float)):
            return [f"{label} = {state['value']:g} (from {state['min']:g} to {state['max']:g})"]
        return []


def _buffer(model, key):
    """A binary widget field (an Image's ``value``) that the saved state keeps base64-encoded."""
    for buffer in model.get("buffers", []):
        if buffer.get("path") == [key] and buffer.get("encoding", "base64") == "base64":
            return buffer.get("data")
    return None


def _open(encoded):
    from PIL import Image

    images = []
    for data in encoded:
        if isinstance(data, list):                       # nbformat may split long strings into lines
            data = "".join(data)
        if not data:
            continue
        images.append(Image.open(io.BytesIO(base64.b64decode(re.sub(r"\s", "", data)))))
    return compose(images, across=False)


def compose(images, across=False):
    """Several pictures as one: side by side (``across``) or one under another, on white."""
    from PIL import Image

    images = [i for i in images if i is not None]
    if len(images) <= 1:
        return images[0] if images else None
    images = [i.convert("RGB") for i in images]
    if across:
        size = (sum(i.width for i in images) + GAP * (len(images) - 1), max(i.height for i in images))
    else:
        size = (max(i.width for i in images), sum(i.height for i in images) + GAP * (len(images) - 1))
    sheet = Image.new("RGB", size, "white")
    at = 0
    for image in images:
        sheet.paste(image, (at, 0) if across else (0, at))
        at += (image.width if across else image.height) + GAP
    sheet.info["dpi"] = images[0].info.get("dpi", (100, 100))
    return sheet


def png_bytes(image) -> bytes:
    buffer = io.BytesIO()
    dpi = tuple(round(d) for d in image.info.get("dpi", (100, 100)))
    image.save(buffer, format="PNG", dpi=dpi)
    return buffer.getvalue()


def _markdown_text(text: str) -> str:
    """Plain text that Markdown (MyST) shows as written: its special characters escaped."""
    return re.sub(r"([\\`*_{}\[\]<>()#+!|$~^-])", r"\\\1", text)


def settings_line(settings) -> str:
    if not settings:
        return "*Interactive in the online version of the book.*"
    return ("*Interactive in the online version of the book; shown here: "
            + _markdown_text("; ".join(settings)) + ".*")


def add_frames(notebook: dict) -> int:
    """Give every widget output of ``notebook`` its first frame as image/png (in place).

    Returns the number of widget outputs found. A widget that shows no picture keeps its text repr,
    with the line saying it is interactive online.
    """
    state = WidgetState(notebook)
    found = 0
    for cell in notebook.get("cells", []):
        outputs = cell.get("outputs")
        if not outputs:
            continue
        rewritten = []
        for output in outputs:
            rewritten.append(output)
            view = output.get("data", {}).get(WIDGET_VIEW)
            if not view:
                continue
            found += 1
            picture = state.pictures(view.get("model_id", ""))
            if picture is not None:
                output["data"]["image/png"] = base64.b64encode(png_bytes(picture)).decode("ascii")
            rewritten.append({"output_type": "display_data", "metadata": {},
                              "data": {"text/markdown": settings_line(state.settings(view.get("model_id", "")))}})
        cell["outputs"] = rewritten
    return found


def _on_source_read(app, docname, source):
    if app.builder.format != "latex" or not str(app.env.doc2path(docname)).endswith(".ipynb"):
        return
    notebook = json.loads(source[0])
    if add_frames(notebook):
        source[0] = json.dumps(notebook)


def setup(app):
    app.connect("source-read", _on_source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
