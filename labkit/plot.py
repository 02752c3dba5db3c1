r"""Figures shared by the chapters: one colour per method, the probability simplex, convergence curves.

Every function draws on a matplotlib ``Axes`` that the caller made, so the same drawing code serves a
static figure (``fig, ax = plt.subplots()``) and the frames of a widget (`labkit.widgets.png_frame`).

    import matplotlib.pyplot as plt
    import labkit as lk
    fig, ax = plt.subplots()
    lk.plot.draw_simplex(ax, ["rock", "paper", "scissors"])
    lk.plot.simplex_path(ax, trajectory, method="fictitious play")
    lk.plot.mark_point(ax, [0.25, 0.5, 0.25], "Nash equilibrium")

Colours come from `method_color`, so a method keeps its colour on every page of the book.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# The Okabe-Ito palette (distinguishable with the common colour-vision deficiencies), plus greys.
_ORANGE, _SKY, _GREEN, _YELLOW = "#E69F00", "#56B4E9", "#009E73", "#F0E442"
_BLUE, _VERMILLION, _PURPLE, _BLACK = "#0072B2", "#D55E00", "#CC79A7", "#000000"
_GREY, _BROWN, _TEAL = "#777777", "#8C564B", "#17BECF"
# Paul Tol's darker tones, for the learners with networks (distinct from the tabular methods they
# approximate, which they are drawn beside)
_INDIGO, _WINE, _DARK_GREEN = "#332288", "#882255", "#117733"

METHOD_COLORS = {
    # self-play dynamics on matrix games
    "best response": _GREY,
    "fictitious play": _ORANGE,
    "mirror descent": _SKY,              # Hedge: mirror descent with the entropy
    "optimistic mirror descent": _BLUE,
    "regret matching": _BROWN,
    "replicator dynamics": _TEAL,
    "regularized, fixed magnet": _PURPLE,
    "regularized, moving magnet": _GREEN,
    # extensive-form solvers
    "CFR": _BLUE,
    "CFR+": _VERMILLION,
    "DCFR": _TEAL,
    "MCCFR (outcome sampling)": _ORANGE,
    "MCCFR (external sampling)": _SKY,
    "MMD": _GREEN,
    "PSRO": _PURPLE,
    "EFR": _BROWN,
    # learners with networks (labkit.deep), drawn beside the tabular methods above
    "Deep CFR": _INDIGO,
    "NFSP": _WINE,
    "neural MMD": _DARK_GREEN,
    # cooperative learners (drawn together in one figure, so pairwise distinct)
    "independent Q-learning": _ORANGE,
    "VDN": _SKY,
    "QMIX": _BLUE,
    "COMA": _VERMILLION,
    "MAPPO": _GREEN,
    # zero-sum stochastic games
    "value iteration": _BLUE,
    "minimax-Q": _VERMILLION,
    # reference points and rates
    "Nash equilibrium": _BLACK,
    "reference rate": _GREY,
}

# other spellings the chapters use for the same method
_ALIASES = {
    "hedge": "mirror descent",
    "optimistic hedge": "optimistic mirror descent",
    "shapley value iteration": "value iteration",
    "magnetic mirror descent": "MMD",
    "r-nad": "regularized, moving magnet",
    "mccfr": "MCCFR (external sampling)",
    "external sampling": "MCCFR (external sampling)",
    "outcome sampling": "MCCFR (outcome sampling)",
    "independent q": "independent Q-learning",
    "iql": "independent Q-learning",
    "deepcfr": "Deep CFR",
    "cfr plus": "CFR+",
    "equilibrium": "Nash equilibrium",
}
_BY_LOWER = {name.lower(): name for name in METHOD_COLORS}


def method_color(method: str) -> str:
    """The book's colour for `method` (case-insensitive; a few aliases such as "Hedge" are accepted).

    Parameters
    ----------
    method : str
        A key of `METHOD_COLORS` or one of its aliases.

    Returns
    -------
    str
        A hex colour.

    Raises
    ------
    TypeError
        If `method` is not a string.
    ValueError
        If the method has no colour yet; the message lists the known names.

    Examples
    --------
    >>> method_color("CFR+"), method_color("hedge") == method_color("mirror descent")
    ('#D55E00', True)
    """
    if not isinstance(method, str):
        raise TypeError(f"method must be a string, got {type(method).__name__}")
    key = method.strip().lower()
    name = _BY_LOWER.get(key) or _ALIASES.get(key)
    if name is None:
        raise ValueError(f"no colour for method {method!r}; known methods: {', '.join(METHOD_COLORS)} "
                         f"(aliases: {', '.join(_ALIASES)})")
    return METHOD_COLORS[name]


# --------------------------------------------------------------------------- the simplex of 3 actions
_CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])


def simplex_xy(p: Any) -> np.ndarray:
    r"""Cartesian coordinates of distributions over three actions.

    The point :math:`p = (p_1, p_2, p_3)` lands at :math:`\sum_k p_k c_k`, where the corners
    :math:`c_k` form an equilateral triangle with action 1 bottom left, action 2 bottom right and
    action 3 at the top.

    Parameters
    ----------
    p : (..., 3) array of probabilities

    Returns
    -------
    (..., 2) array

    Raises
    ------
    ValueError
        For a last axis other than 3 or values that are not finite.

    Examples
    --------
    >>> simplex_xy([[1, 0, 0], [0, 1, 0], [1 / 3, 1 / 3, 1 / 3]]).round(4).tolist()
    [[0.0, 0.0], [1.0, 0.0], [0.5, 0.2887]]
    """
    p = np.asarray(p, dtype=float)
    if p.shape[-1:] != (3,):
        raise ValueError(f"simplex_xy needs distributions over 3 actions (last axis 3), got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError("simplex_xy needs finite probabilities; got a NaN or an infinity")
    return p @ _CORNERS


def simplex_grid(resolution: int = 60) -> np.ndarray:
    """Evenly spaced points of the simplex: every (i, j, k) / resolution with i + j + k = resolution.

    Parameters
    ----------
    resolution : int
        Grid steps per edge, >= 1.

    Returns
    -------
    (N, 3) float array
        N = (resolution + 1)(resolution + 2) / 2 points.

    Raises
    ------
    ValueError
        For a resolution that is not a positive integer.

    Examples
    --------
    >>> simplex_grid(2).tolist()
    [[0.0, 0.0, 1.0], [0.0, 0.5, 0.5], [0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]
    """
    if isinstance(resolution, (bool, np.bool_)) or not isinstance(resolution, (int, np.integer)) or resolution < 1:
        raise ValueError(f"resolution must be a positive integer, got {resolution!r}")
    i, j = np.meshgrid(np.arange(resolution + 1), np.arange(resolution + 1), indexing="ij")
    keep = i + j <= resolution
    i, j = i[keep], j[keep]
    return np.stack([i, j, resolution - i - j], axis=1) / resolution


def draw_simplex(ax: Any, labels: Sequence[str] = ("1", "2", "3"), fontsize: float = 11) -> Any:
    """Outline the simplex on `ax`, name its corners, and hide the Cartesian axes.

    Parameters
    ----------
    ax : matplotlib Axes
    labels : three str
        The corners' names: action 1 bottom left, 2 bottom right, 3 at the top.
    fontsize : float

    Returns
    -------
    matplotlib Axes
        `ax`.

    Raises
    ------
    ValueError
        For another number of labels.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> [t.get_text() for t in draw_simplex(ax, ["rock", "paper", "scissors"]).texts]
    ['rock', 'paper', 'scissors']
    """
    if isinstance(labels, str) or len(labels) != 3:
        raise ValueError(f"a simplex of 3 actions needs 3 labels, got {len(labels)}")
    ax.plot(*np.vstack([_CORNERS, _CORNERS[:1]]).T, color="black", linewidth=1)
    offsets = [(-0.04, -0.05, "right"), (0.04, -0.05, "left"), (0.0, 0.04, "center")]
    for (x, y), (dx, dy, ha), label in zip(_CORNERS, offsets, labels, strict=True):
        ax.text(x + dx, y + dy, label, ha=ha, va="center", fontsize=fontsize)
    ax.set_aspect("equal")
    ax.set_xlim(-0.15, 1.15)
    ax.set_ylim(-0.12, np.sqrt(3) / 2 + 0.1)
    ax.axis("off")
    return ax


def simplex_heatmap(ax: Any, values: Callable[[np.ndarray], Any], resolution: int = 60, **kwargs: Any) -> Any:
    """Colour the simplex by a function of the distribution.

    Parameters
    ----------
    values : callable
        Maps an (N, 3) array of distributions to N numbers (vectorized).
    resolution : int
        Grid points per edge (see `simplex_grid`).
    kwargs : passed to ``ax.tripcolor`` (e.g. ``cmap``, ``vmin``, ``vmax``).

    Returns
    -------
    matplotlib artist
        The ``TriMesh``/``PolyCollection`` artist, for a colour bar.

    Raises
    ------
    ValueError
        If `values` does not return one number per point.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> mesh = simplex_heatmap(ax, lambda p: p[:, 0], resolution=10)
    >>> len(mesh.get_array())
    66
    """
    points = simplex_grid(resolution)
    z = np.asarray(values(points), dtype=float)
    if z.shape != (len(points),):
        raise ValueError(f"values must return one number per point ({len(points)}), got shape {z.shape}")
    xy = simplex_xy(points)
    kwargs.setdefault("shading", "gouraud")
    kwargs.setdefault("rasterized", True)
    return ax.tripcolor(xy[:, 0], xy[:, 1], z, **kwargs)


def simplex_path(ax: Any, points: Any, method: str | None = None, label: str | None = None, **kwargs: Any) -> Any:
    """Draw a trajectory of distributions on the simplex in the method's colour.

    Parameters
    ----------
    ax : matplotlib Axes
    points : (T, 3) array of probabilities
    method : str, optional
        Sets the colour (`method_color`) and, without `label`, the legend entry.
    label : str, optional
    **kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    list of Line2D

    Raises
    ------
    ValueError
        For points of another shape, or a method without a colour.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> [line] = simplex_path(ax, [[1, 0, 0], [0.5, 0.5, 0]], method="fictitious play")
    >>> line.get_color(), line.get_label()
    ('#E69F00', 'fictitious play')
    """
    xy = simplex_xy(points)
    if xy.ndim != 2:
        raise ValueError(f"a path needs shape (T, 3), got {np.shape(points)}")
    if method is not None:
        kwargs.setdefault("color", method_color(method))
    kwargs.setdefault("linewidth", 1.2)
    return ax.plot(xy[:, 0], xy[:, 1], label=label if label is not None else method, **kwargs)


def mark_point(ax: Any, p: Any, label: str | None = None, method: str = "Nash equilibrium", marker: str = "*",
               size: float = 180, **kwargs: Any) -> Any:
    """Mark one distribution on the simplex, by default as the Nash equilibrium's black star.

    Parameters
    ----------
    ax : matplotlib Axes
    p : (3,) array of probabilities
    label : str, optional
    method : str
        Its colour (`method_color`).
    marker : str
    size : float
    **kwargs
        Passed to ``ax.scatter``.

    Returns
    -------
    matplotlib PathCollection

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> mark_point(ax, [1 / 3, 1 / 3, 1 / 3], "Nash equilibrium").get_offsets().round(4).tolist()
    [[0.5, 0.2887]]
    """
    x, y = simplex_xy(p)
    kwargs.setdefault("color", method_color(method))
    kwargs.setdefault("zorder", 5)
    return ax.scatter([x], [y], s=size, marker=marker, label=label, edgecolors="white", linewidths=0.8,
                      **kwargs)


# --------------------------------------------------------------------------- convergence curves
def convergence_curve(ax: Any, iterations: Any, values: Any, method: str, loglog: bool = True,
                      label: str | None = None, **kwargs: Any) -> Any:
    r"""Plot a NashConv / exploitability curve in the method's colour, on log scales by default.

    Convergence to zero is easiest to read on a logarithmic vertical axis; with ``loglog`` the
    iterations are logarithmic too, so a rate :math:`T^{-1/2}` is a straight line of slope -1/2.
    Zero values are drawn at the bottom of the axis instead of disappearing.

    Parameters
    ----------
    ax : matplotlib Axes
    iterations, values : (T,) arrays
    method : str
        Its colour (`method_color`) and, without `label`, the legend entry.
    loglog : bool
        Logarithmic iterations too.
    label : str, optional
    **kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    list of Line2D

    Raises
    ------
    ValueError
        For arrays of different lengths or more than one dimension, or a method without a colour.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> _ = convergence_curve(ax, [1, 10, 100], [1.0, 0.3, 0.0], "CFR")
    >>> ax.get_xscale(), ax.get_yscale(), ax.lines[0].get_ydata().tolist()
    ('log', 'log', [1.0, 0.3, 1e-16])
    """
    iterations = np.asarray(iterations, dtype=float)
    values = np.asarray(values, dtype=float)
    if iterations.shape != values.shape or iterations.ndim != 1:
        raise ValueError(f"iterations and values must be 1-d of one length, got {iterations.shape} and {values.shape}")
    kwargs.setdefault("color", method_color(method))
    line = ax.plot(iterations, np.maximum(values, 1e-16), label=label if label is not None else method, **kwargs)
    ax.set_yscale("log")
    if loglog:
        ax.set_xscale("log")
    return line


def reference_rate(ax: Any, iterations: Any, start_value: float, power: float = -0.5, label: str | None = None,
                   **kwargs: Any) -> Any:
    r"""A dashed guide line :math:`c\, T^{p}` through (iterations[0], start_value).

    e.g. the :math:`T^{-1/2}` rate of CFR.

    Parameters
    ----------
    ax : matplotlib Axes
    iterations : (T,) array
        Positive.
    start_value : float
    power : float
        p.
    label : str, optional
        Default :math:`\propto T^{p}`.
    **kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    list of Line2D

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> [line] = reference_rate(ax, [1, 4, 16], 1.0)
    >>> line.get_ydata().tolist(), line.get_label()
    ([1.0, 0.5, 0.25], '$\\propto T^{-0.5}$')
    """
    t = np.asarray(iterations, dtype=float)
    kwargs.setdefault("color", method_color("reference rate"))
    kwargs.setdefault("linestyle", "--")
    kwargs.setdefault("linewidth", 1)
    if label is None:
        label = f"$\\propto T^{{{power:g}}}$"
    return ax.plot(t, start_value * (t / t[0]) ** power, label=label, **kwargs)


# --------------------------------------------------------------------------- policies at infosets
# fold / pass, call / check, raise / bet: the same three colours in every policy figure
ACTION_COLORS = (_GREY, _SKY, _VERMILLION, _GREEN, _ORANGE, _PURPLE)


def policy_bars(ax: Any, probs: Any, infosets: Sequence[str], action_names: Sequence[str],
                title: str | None = None) -> Any:
    """Draw a policy at a few information sets as horizontal stacked bars, one bar per infoset.

    Parameters
    ----------
    probs : (k, A) array-like
        Row j is the distribution over the A actions at ``infosets[j]`` (illegal actions 0).
    infosets : list of k str
        The bar labels (e.g. infoset keys), top to bottom.
    action_names : list of A str
        The legend; action a is drawn in ``ACTION_COLORS[a]``.
    title : str, optional

    Returns
    -------
    matplotlib Axes
        `ax`.

    Raises
    ------
    ValueError
        For probs of another shape, more actions than colours, or rows that are not distributions.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> _ = policy_bars(ax, [[0.0, 0.25, 0.75], [0.5, 0.5, 0.0]], ["Js|||", "Kh||r|"], ["fold", "call", "raise"])
    >>> [t.get_text() for t in ax.get_yticklabels()]               # top to bottom
    ['Js|||', 'Kh||r|']
    """
    probs = np.asarray(probs, dtype=float)
    k = len(infosets)
    if probs.ndim != 2 or probs.shape != (k, len(action_names)):
        raise ValueError(f"probs must have shape ({k}, {len(action_names)}) for {k} infosets and "
                         f"{len(action_names)} actions, got {probs.shape}")
    if len(action_names) > len(ACTION_COLORS):
        raise ValueError(f"policy_bars draws at most {len(ACTION_COLORS)} actions, got {len(action_names)}")
    if not np.all(np.isfinite(probs)) or np.any(probs < -1e-9) or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("every row of probs must be a probability distribution")
    y = np.arange(k)[::-1]
    left = np.zeros(k)
    for a, name in enumerate(action_names):
        ax.barh(y, probs[:, a], left=left, color=ACTION_COLORS[a], label=name, height=0.7)
        for j in np.flatnonzero(probs[:, a] >= 0.12):          # print the larger shares in the bar
            ax.text(left[j] + probs[j, a] / 2, y[j], f"{probs[j, a]:.2f}", ha="center", va="center",
                    fontsize=8, color="white" if a != 1 else "black")
        left += probs[:, a]
    ax.set_yticks(y, [str(i) for i in infosets])
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability")
    ax.legend(ncol=len(action_names), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False, fontsize=9)
    if title:
        ax.set_title(title, fontsize=10, loc="left", pad=22)
    return ax


def publish(fig: Any, name: str, *, native_size: bool = False) -> None:
    """Show a finished figure as the output of its cell, the numbered figure `name` of the book.

    The cell that calls it carries the figure's name, caption and alt text in its metadata, which
    Jupyter Book (myst-nb) reads to place the output as a numbered, captioned figure::

        "mystnb": {"figure": {"name": "fig-name", "caption": "The caption."},
                   "image": {"alt": "what the figure shows, for readers who cannot see it"}}

    and the prose cites it as ``{numref}`fig-name```. JupyterLab, JupyterLite and Colab show the
    same output as it is, with the caption in a Markdown cell under it (written from the metadata
    by ``scripts/plain_markdown.py --captions``). The figure is closed afterwards, so pyplot does
    not show it a second time at the end of the cell.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    name : str
        The figure's name, as in the cell's ``mystnb.figure.name`` (the book checks they agree).
    native_size : bool, default False
        By default the notebook renders the figure as it renders any figure: cropped to what is
        drawn plus a margin (``bbox_inches="tight"``), so the picture is a few pixels larger or
        smaller than ``figsize x dpi``. With ``native_size=True`` the figure is shown as a PNG of
        exactly ``figsize x dpi`` pixels instead (``fig.savefig`` without cropping). Use it for
        figures whose text was sized for the column, such as heatmaps of printed numbers: at
        7.4 in and 100 dpi the page shrinks the picture only to its 714 px column, and 7.5 pt
        digits stay 10 px high.

    Raises
    ------
    TypeError
        If `name` is not a non-empty string.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> fig = Figure()
    >>> _ = fig.add_subplot().plot([0, 1])
    >>> publish(fig, "a-line")          # outside Jupyter, display() prints the figure as text
    Figure(640x480)
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"name must be a non-empty string (the figure's name), got {name!r}")
    from IPython.display import display
    display(_native_png(fig) if native_size else fig)
    import matplotlib.pyplot as plt
    plt.close(fig)


def _native_png(fig: Any) -> Any:
    """`fig` as an IPython PNG image of exactly figsize x dpi pixels (no cropping, no timestamp)."""
    import io

    import matplotlib as mpl
    from IPython.display import Image
    buffer = io.BytesIO()
    with mpl.rc_context({"savefig.bbox": "standard"}):    # whatever the reader's rcParams say
        fig.savefig(buffer, format="png", dpi=fig.dpi, metadata={"Software": None})
    return Image(data=buffer.getvalue(), format="png")
