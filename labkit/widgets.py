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


def policy_slider(checkpoints, probs, infosets, action_names, nash_conv=None, unit="iterations",
                  method=None, figsize=(7.4, 3.6), dpi=100) -> widgets.VBox:
    """A slider over training checkpoints showing a policy at a few information sets.

    Each frame draws the policy at ``infosets`` (`labkit.plot.policy_bars`) and, with ``nash_conv``,
    the NashConv curve beside it with the frame's checkpoint marked, so a reader scrubs through
    training and sees which decisions settle first. Works without a kernel (see the module doc).

    Parameters
    ----------
    checkpoints : list of int
        The training step of each frame (hands, iterations, ...), increasing.
    probs : (T, k, A) array-like
        The policy at each checkpoint: T checkpoints, k infosets, A actions.
    infosets : list of k str
    action_names : list of A str
    nash_conv : list of T float, optional
        The exact NashConv at each checkpoint (drawn on log-log axes).
    unit : str
        What the checkpoints count, for the labels.
    method : str, optional
        Colours the NashConv curve (`labkit.plot.method_color`).

    Examples
    --------
    The cached NFSP run on Leduc hold'em (chapter 4; the record holds one curve per seed)::

        record = lk.data.read_json("deep", "nfsp_leduc_widget.json")["policies"]
        lk.widgets.policy_slider(record["episodes"], record["probs"][0], record["infosets"],
                                 record["action_names"], nash_conv=record["nash_conv"][0],
                                 unit="hands", method="NFSP")
    """
    import numpy as np
    from matplotlib.ticker import FuncFormatter

    from labkit import plot

    checkpoints = [int(c) for c in checkpoints]
    probs = np.asarray(probs, dtype=float)
    T = len(checkpoints)
    if T == 0 or probs.ndim != 3 or probs.shape[0] != T:
        raise ValueError(f"probs must have shape (checkpoints, infosets, actions) with {T} checkpoints, "
                         f"got {probs.shape}")
    if any(b <= a for a, b in zip(checkpoints, checkpoints[1:])):
        raise ValueError(f"checkpoints must increase, got {checkpoints}")
    if nash_conv is not None:
        nash_conv = np.asarray(nash_conv, dtype=float)
        if nash_conv.shape != (T,):
            raise ValueError(f"nash_conv needs one value per checkpoint ({T}), got shape {nash_conv.shape}")
    color = plot.method_color(method) if method is not None else "black"

    def frame(t):
        def draw(ax):
            title = f"{unit} {checkpoints[t]:,}"
            if nash_conv is not None:
                title += f": NashConv {nash_conv[t]:.3f}"
            if nash_conv is not None:               # two panels: the policy, and the curve beside it
                fig = ax.figure
                fig.delaxes(ax)
                grid = fig.add_gridspec(1, 2, width_ratios=[2.3, 1])
                ax, curve = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
            plot.policy_bars(ax, probs[t], infosets, action_names, title=title)
            if nash_conv is not None:
                curve.plot(checkpoints, nash_conv, color=color, linewidth=1.5)
                curve.plot([checkpoints[t]], [nash_conv[t]], "o", color=color)
                curve.set_xscale("log")
                curve.set_yscale("log")
                plain = FuncFormatter(lambda v, _: f"{v:g}")          # 2, not 2 x 10^0
                curve.yaxis.set_major_formatter(plain)
                curve.yaxis.set_minor_formatter(plain)
                curve.set_xlabel(unit, fontsize=9)
                curve.set_ylabel("exact NashConv", fontsize=9)
                curve.tick_params(labelsize=8)
        return draw

    labels = [f"{c:,}" for c in checkpoints]
    return slider_stack([frame(t) for t in range(T)], labels=labels, description=unit, value=T - 1,
                        figsize=figsize, dpi=dpi)
