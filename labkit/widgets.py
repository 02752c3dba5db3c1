"""Widgets that keep working on the static website: precomputed frames switched in the browser.

A widget whose choices are few (a handful of parameter values, a method selector, an iteration
scrubber) does not need a kernel. Draw every frame once, when the notebook is executed, store the
frames as PNG images in a ``Stack``, and link the control to the stack with ``jslink``: the link
runs in the browser, so the page published by Jupyter Book switches frames without Python, and the
same cell works unchanged in JupyterLab.

    import labkit as lk
    def draw(w):
        return lambda ax: ax.plot(range(10), [w * k for k in range(10)])
    lk.widgets.slider_stack([draw(w) for w in (1, 2, 3)], labels=["w = 1", "w = 2", "w = 3"])

Frames are drawn on a fresh `matplotlib.figure.Figure` (not pyplot), so nothing appears inline by
accident and no figure has to be closed. PNGs are written without the "Software" metadata, so the
same drawing gives the same bytes.
"""
from __future__ import annotations

import base64
import html
import io

import ipywidgets as widgets
from matplotlib.figure import Figure


def png_frame(draw, figsize=(6.4, 4.0), dpi=100) -> bytes:
    """Render one frame: call ``draw(ax)`` on a new Figure and return its PNG bytes.

    Parameters
    ----------
    draw : callable
        Receives a matplotlib ``Axes``; may use ``ax.figure`` for colour bars or extra axes.
    figsize : (width, height) in inches; the PNG is figsize * dpi pixels.
    """
    if not callable(draw):
        raise TypeError(f"draw must be a function of a matplotlib Axes, got {type(draw).__name__}")
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    draw(fig.subplots())
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _as_png(frame, figsize, dpi):
    if isinstance(frame, (bytes, bytearray)):
        return bytes(frame)
    return png_frame(frame, figsize=figsize, dpi=dpi)


def _alt_texts(alt, n):
    """One description per frame: None, one string for all frames, or a list of n strings."""
    if alt is None:
        return [None] * n
    if isinstance(alt, str):
        return [alt] * n
    alt = list(alt)
    if len(alt) != n or not all(isinstance(a, str) and a.strip() for a in alt):
        raise ValueError(f"alt must be a string or a list of {n} non-empty strings, one per frame")
    return alt


def _described_frame(png, alt):
    """A frame that carries its alt text: an HTML widget holding the PNG as a data: URL.

    (An Image widget has no alt text, and giving it a tooltip breaks its view in the browser's
    widget manager, which reads the missing ``description`` of the Image model.)
    """
    source = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return widgets.HTML(f'<img src="{source}" alt="{html.escape(alt, quote=True)}" '
                        'style="max-width: 100%; height: auto">')


def image_stack(frames, figsize=(6.4, 4.0), dpi=100, selected=0, alt=None) -> widgets.Stack:
    """A ``Stack`` of images, one per frame (PNG bytes, or a draw function to render).

    ``alt`` describes the frames for a reader who cannot see them: one string for every frame, or a
    list with one string per frame. With it the frames are ``HTML`` widgets holding an ``<img>``
    with that alt text; without it they are ``Image`` widgets (the book's site then describes a
    frame by its control's label and value).
    """
    frames = list(frames)
    if not frames:
        raise ValueError("image_stack needs at least one frame")
    if not 0 <= selected < len(frames):
        raise ValueError(f"selected must be a frame index in 0..{len(frames) - 1}, got {selected}")
    pngs = [_as_png(f, figsize, dpi) for f in frames]
    if alt is None:
        images = [widgets.Image(value=png, format="png") for png in pngs]
    else:
        texts = _alt_texts(alt, len(pngs))
        images = [_described_frame(png, text) for png, text in zip(pngs, texts)]
    return widgets.Stack(images, selected_index=selected)


def _check_labels(labels, n):
    labels = [str(label) for label in labels]
    if len(labels) != n:
        raise ValueError(f"{n} frames need {n} labels, got {len(labels)}")
    if len(set(labels)) != n:
        raise ValueError(f"labels must be distinct, got {labels}")
    return labels


def _box(control, stack, top=None):
    box = widgets.VBox([top if top is not None else control, stack])   # control first: see module doc
    box.control, box.stack = control, stack
    return box


def slider_stack(frames, labels=None, description="", value=0, figsize=(6.4, 4.0), dpi=100,
                 alt=None) -> widgets.VBox:
    """A slider over precomputed frames, working without a kernel.

    Parameters
    ----------
    frames : list of PNG bytes or draw functions (see `png_frame`)
    labels : list of str, optional
        Shown as the slider's readout (a ``SelectionSlider``); default: the frame numbers 0, 1, ...
    value : int
        Index of the frame shown first.
    alt : str or list of str, optional
        What the frames show, for a reader who cannot see them (see `image_stack`).

    Returns
    -------
    VBox
        ``[slider, stack]``; also available as ``box.control`` and ``box.stack``. The slider's
        ``index`` (``value`` for an ``IntSlider``) is linked in the browser to ``stack.selected_index``.
    """
    stack = image_stack(frames, figsize, dpi, selected=value, alt=alt)
    n = len(stack.children)
    if labels is None:
        slider = widgets.IntSlider(value=value, min=0, max=n - 1, description=description,
                                   continuous_update=True)
        widgets.jslink((slider, "value"), (stack, "selected_index"))
    else:
        labels = _check_labels(labels, n)
        slider = widgets.SelectionSlider(options=labels, index=value, description=description,
                                         continuous_update=True)
        widgets.jslink((slider, "index"), (stack, "selected_index"))
    return _box(slider, stack)


def dropdown_stack(frames, labels, description="", value=0, buttons=False, figsize=(6.4, 4.0),
                   dpi=100, alt=None) -> widgets.VBox:
    """A method selector (``Dropdown``, or ``ToggleButtons`` with ``buttons=True``) over precomputed frames.

    The control's ``index`` is linked to the stack (its ``value`` is the label string, not a number).
    ``alt`` describes the frames (see `image_stack`).
    """
    stack = image_stack(frames, figsize, dpi, selected=value, alt=alt)
    labels = _check_labels(labels, len(stack.children))
    kind = widgets.ToggleButtons if buttons else widgets.Dropdown
    control = kind(options=labels, index=value, description=description)
    widgets.jslink((control, "index"), (stack, "selected_index"))
    return _box(control, stack)


def play_stack(frames, interval=200, description="", figsize=(6.4, 4.0), dpi=100,
               alt=None) -> widgets.VBox:
    """An animation: a ``Play`` button driving a slider driving the stack, all linked in the browser.

    On the Jupyter Book site the Play button needs the book's ``site-fixes.js`` and ``widgets-fix.css``
    (served from ``book/_vendor``), which keep the theme's icon library from breaking it.
    """
    if interval <= 0:
        raise ValueError(f"interval is in milliseconds and must be positive, got {interval}")
    stack = image_stack(frames, figsize, dpi, alt=alt)
    n = len(stack.children)
    slider = widgets.IntSlider(value=0, min=0, max=n - 1, description=description)
    play = widgets.Play(value=0, min=0, max=n - 1, step=1, interval=interval, repeat=True)
    widgets.jslink((play, "value"), (slider, "value"))
    widgets.jslink((slider, "value"), (stack, "selected_index"))
    return _box(slider, stack, top=widgets.HBox([play, slider]))
