"""Widgets that keep working on the static website: precomputed frames switched in the browser.

A widget whose choices are few (a handful of parameter values, a method selector, an iteration
scrubber) does not need a kernel. Draw every frame once, when the notebook is executed, store the
frames as PNG images in a ``Stack``, and link the control to the stack with ``jslink``: the link
runs in the browser, so the page published by Jupyter Book switches frames without Python, and the
same cell works unchanged in JupyterLab::

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
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets
from matplotlib.figure import Figure


def png_frame(draw: Callable[[Any], Any], figsize: tuple[float, float] = (6.4, 4.0), dpi: float = 100) -> bytes:
    r"""Render one frame: call ``draw(ax)`` on a new Figure and return its PNG bytes.

    Parameters
    ----------
    draw : callable
        Receives a matplotlib ``Axes``; may use ``ax.figure`` for colour bars or extra axes.
    figsize : (float, float)
        (width, height) in inches; the PNG is figsize * dpi pixels.
    dpi : float

    Returns
    -------
    bytes
        The PNG, the same bytes for the same drawing (no "Software" metadata).

    Raises
    ------
    TypeError
        If `draw` is not callable.

    Examples
    --------
    >>> png = png_frame(lambda ax: ax.plot([0, 1], [1, 0]), figsize=(2, 1), dpi=50)
    >>> png[:8], png == png_frame(lambda ax: ax.plot([0, 1], [1, 0]), figsize=(2, 1), dpi=50)
    (b'\x89PNG\r\n\x1a\n', True)
    """
    if not callable(draw):
        raise TypeError(f"draw must be a function of a matplotlib Axes, got {type(draw).__name__}")
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    draw(fig.subplots())
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _as_png(frame: Any, figsize: tuple[float, float], dpi: float) -> bytes:
    if isinstance(frame, (bytes, bytearray)):
        return bytes(frame)
    return png_frame(frame, figsize=figsize, dpi=dpi)


def _alt_texts(alt: Any, n: int) -> list[Any]:
    """One description per frame: None, one string for all frames, or a list of n strings."""
    if alt is None:
        return [None] * n
    if isinstance(alt, str):
        return [alt] * n
    alt = list(alt)
    if len(alt) != n or not all(isinstance(a, str) and a.strip() for a in alt):
        raise ValueError(f"alt must be a string or a list of {n} non-empty strings, one per frame")
    return alt


def _described_frame(png: bytes, alt: str) -> widgets.HTML:
    """A frame that carries its alt text: an HTML widget holding the PNG as a data: URL.

    (An Image widget has no alt text, and giving it a tooltip breaks its view in the browser's
    widget manager, which reads the missing ``description`` of the Image model.)
    """
    source = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return widgets.HTML(f'<img src="{source}" alt="{html.escape(alt, quote=True)}" '
                        'style="max-width: 100%; height: auto">')


def image_stack(frames: Sequence[Any], figsize: tuple[float, float] = (6.4, 4.0), dpi: float = 100,
                selected: int = 0, alt: str | Sequence[str] | None = None) -> widgets.Stack:
    """A ``Stack`` of images, one per frame (PNG bytes, or a draw function to render).

    ``alt`` describes the frames for a reader who cannot see them: one string for every frame, or a
    list with one string per frame. With it the frames are ``HTML`` widgets holding an ``<img>``
    with that alt text; without it they are ``Image`` widgets (the book's site then describes a
    frame by its control's label and value).

    Parameters
    ----------
    frames : list of PNG bytes or draw functions (see `png_frame`)
    figsize : (float, float)
        For the frames drawn here.
    dpi : float
    selected : int
        Index of the frame shown first.
    alt : str or list of str, optional

    Returns
    -------
    ipywidgets.Stack

    Raises
    ------
    ValueError
        For no frames, a selected index out of range, or alt texts of the wrong number.

    Examples
    --------
    >>> stack = image_stack([lambda ax, k=k: ax.plot([0, k]) for k in range(3)], figsize=(2, 1), selected=2,
    ...                     alt="a line")
    >>> len(stack.children), stack.selected_index
    (3, 2)
    """
    frames = list(frames)
    if not frames:
        raise ValueError("image_stack needs at least one frame")
    if isinstance(selected, bool) or not isinstance(selected, int) or not 0 <= selected < len(frames):
        raise ValueError(f"selected must be a frame index in 0..{len(frames) - 1}, got {selected}")
    pngs = [_as_png(f, figsize, dpi) for f in frames]
    if alt is None:
        images = [widgets.Image(value=png, format="png") for png in pngs]
    else:
        texts = _alt_texts(alt, len(pngs))
        images = [_described_frame(png, text) for png, text in zip(pngs, texts, strict=True)]
    return widgets.Stack(images, selected_index=selected)


def _check_labels(labels: Any, n: int) -> list[str]:
    if isinstance(labels, str):
        raise ValueError(f"labels must be a list of {n} strings, one per frame, not one string")
    labels = [str(label) for label in labels]
    if len(labels) != n:
        raise ValueError(f"{n} frames need {n} labels, got {len(labels)}")
    if len(set(labels)) != n:
        raise ValueError(f"labels must be distinct, got {labels}")
    return labels


def _box(control: Any, stack: widgets.Stack, top: Any = None) -> widgets.VBox:
    box = widgets.VBox([top if top is not None else control, stack])   # control first: see module doc
    box.control, box.stack = control, stack
    return box


def slider_stack(frames: Sequence[Any], labels: Sequence[str] | None = None, description: str = "", value: int = 0,
                 figsize: tuple[float, float] = (6.4, 4.0), dpi: float = 100,
                 alt: str | Sequence[str] | None = None) -> widgets.VBox:
    """A slider over precomputed frames, working without a kernel.

    Parameters
    ----------
    frames : list of PNG bytes or draw functions (see `png_frame`)
    labels : list of str, optional
        Shown as the slider's readout (a ``SelectionSlider``); default: the frame numbers 0, 1, ...
    description : str
        The slider's label.
    value : int
        Index of the frame shown first.
    figsize : (float, float)
    dpi : float
    alt : str or list of str, optional
        What the frames show, for a reader who cannot see them (see `image_stack`).

    Returns
    -------
    VBox
        ``[slider, stack]``; also available as ``box.control`` and ``box.stack``. The slider's
        ``index`` (``value`` for an ``IntSlider``) is linked in the browser to ``stack.selected_index``.

    Raises
    ------
    ValueError
        As `image_stack`, and for labels that are not one distinct label per frame.

    Examples
    --------
    >>> box = slider_stack([lambda ax, w=w: ax.plot([0, w]) for w in (1, 2)], labels=["w = 1", "w = 2"],
    ...                    figsize=(2, 1))
    >>> type(box.control).__name__, box.control.index, box.stack.selected_index
    ('SelectionSlider', 0, 0)
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


def dropdown_stack(frames: Sequence[Any], labels: Sequence[str], description: str = "", value: int = 0,
                   buttons: bool = False, figsize: tuple[float, float] = (6.4, 4.0), dpi: float = 100,
                   alt: str | Sequence[str] | None = None) -> widgets.VBox:
    """A method selector (``Dropdown``, or ``ToggleButtons`` with ``buttons=True``) over precomputed frames.

    The control's ``index`` is linked to the stack (its ``value`` is the label string, not a number).

    Parameters
    ----------
    frames : list of PNG bytes or draw functions
    labels : list of str
        One distinct label per frame.
    description : str
    value : int
        Index of the frame shown first.
    buttons : bool
        ToggleButtons instead of a Dropdown.
    figsize : (float, float)
    dpi : float
    alt : str or list of str, optional
        Describes the frames (see `image_stack`).

    Returns
    -------
    VBox
        ``[control, stack]``, also as ``box.control`` and ``box.stack``.

    Raises
    ------
    ValueError
        As `slider_stack`.

    Examples
    --------
    >>> box = dropdown_stack([b"frame-1", b"frame-2"], ["CFR", "CFR+"], value=1, buttons=True)
    >>> box.control.value, box.stack.selected_index
    ('CFR+', 1)
    """
    stack = image_stack(frames, figsize, dpi, selected=value, alt=alt)
    labels = _check_labels(labels, len(stack.children))
    kind = widgets.ToggleButtons if buttons else widgets.Dropdown
    control = kind(options=labels, index=value, description=description)
    widgets.jslink((control, "index"), (stack, "selected_index"))
    return _box(control, stack)


def play_stack(frames: Sequence[Any], interval: int = 200, description: str = "",
               figsize: tuple[float, float] = (6.4, 4.0), dpi: float = 100,
               alt: str | Sequence[str] | None = None) -> widgets.VBox:
    """An animation: a ``Play`` button driving a slider driving the stack, all linked in the browser.

    On the Jupyter Book site the Play button needs the book's ``site-fixes.js`` and ``widgets-fix.css``
    (served from ``book/_vendor``), which keep the theme's icon library from breaking it.

    Parameters
    ----------
    frames : list of PNG bytes or draw functions
    interval : int
        Milliseconds per frame.
    description : str
    figsize : (float, float)
    dpi : float
    alt : str or list of str, optional

    Returns
    -------
    VBox
        ``[HBox([play, slider]), stack]``; ``box.control`` is the slider.

    Raises
    ------
    ValueError
        For an interval that is not positive, or as `image_stack`.

    Examples
    --------
    >>> box = play_stack([b"a", b"b", b"c"], interval=100)
    >>> box.control.max, box.children[0].children[0].interval
    (2, 100)
    """
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval > 0:
        raise ValueError(f"interval is in milliseconds and must be positive, got {interval}")
    stack = image_stack(frames, figsize, dpi, alt=alt)
    n = len(stack.children)
    slider = widgets.IntSlider(value=0, min=0, max=n - 1, description=description)
    play = widgets.Play(value=0, min=0, max=n - 1, step=1, interval=interval, repeat=True)
    widgets.jslink((play, "value"), (slider, "value"))
    widgets.jslink((slider, "value"), (stack, "selected_index"))
    return _box(slider, stack, top=widgets.HBox([play, slider]))


def policy_slider(checkpoints: Sequence[int], probs: Any, infosets: Sequence[str], action_names: Sequence[str],
                  nash_conv: Sequence[float] | None = None, unit: str = "iterations", method: str | None = None,
                  figsize: tuple[float, float] = (7.4, 3.6), dpi: float = 100) -> widgets.VBox:
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
    figsize : (float, float)
    dpi : float

    Returns
    -------
    VBox
        As `slider_stack`, showing the last checkpoint first.

    Raises
    ------
    ValueError
        For probs of another shape, checkpoints that do not increase, a NashConv curve of another
        length, or rows that are not distributions.

    Examples
    --------
    The cached NFSP run on Leduc hold'em (chapter 4; the record holds one curve per seed):

    >>> import labkit as lk
    >>> record = lk.data.read_json("deep", "nfsp_leduc_widget.json")["policies"]
    >>> box = policy_slider(record["episodes"][:2], record["probs"][0][:2], record["infosets"],
    ...                     record["action_names"], nash_conv=record["nash_conv"][0][:2], unit="hands",
    ...                     method="NFSP", figsize=(4, 2), dpi=40)
    >>> box.control.options
    ('1,000', '3,000')
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
    if any(b <= a for a, b in zip(checkpoints, checkpoints[1:], strict=False)):
        raise ValueError(f"checkpoints must increase, got {checkpoints}")
    curve_values = None
    if nash_conv is not None:
        curve_values = np.asarray(nash_conv, dtype=float)
        if curve_values.shape != (T,):
            raise ValueError(f"nash_conv needs one value per checkpoint ({T}), got shape {curve_values.shape}")
    color = plot.method_color(method) if method is not None else "black"

    def frame(t: int) -> Callable[[Any], None]:
        def draw(ax: Any) -> None:
            title = f"{unit} {checkpoints[t]:,}"
            if curve_values is not None:
                title += f": NashConv {curve_values[t]:.3f}"
            if curve_values is not None:               # two panels: the policy, and the curve beside it
                fig = ax.figure
                fig.delaxes(ax)
                grid = fig.add_gridspec(1, 2, width_ratios=[2.3, 1])
                ax, curve = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
            plot.policy_bars(ax, probs[t], infosets, action_names, title=title)
            if curve_values is not None:
                curve.plot(checkpoints, curve_values, color=color, linewidth=1.5)
                curve.plot([checkpoints[t]], [curve_values[t]], "o", color=color)
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
