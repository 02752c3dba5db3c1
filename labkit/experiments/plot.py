r"""Figures of tournament tables: the heatmap of the paper's Figure E.5 (rows are the learners,
columns the opponents, with the avg column and avg row set apart by white lines) and the learning
curves of its Figures E.1-E.4, each variant's payoff averaged over its partners,

.. math:: \bar u_r(t) = \frac{1}{C} \sum_{c=1}^{C} u_{r,c}(t)
          \quad\text{or its running mean}\quad \frac{1}{t+1} \sum_{s=0}^{t} \bar u_r(s).

matplotlib is imported only when a figure is drawn.
"""
from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from labkit.experiments.results import DEFAULT_DIGITS, UNITS, TournamentResult, _label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.image import AxesImage


HEATMAP_FONT_SIZE = 7.5    # points: 10.4 px at 100 dpi, legible when the figure is shown at its size


def cell_digits(values: Any, units: str) -> int:
    """Decimals that keep every cell at most six characters wide: the paper's for mbb and win %,
    for raw payoffs as many as the largest magnitude leaves room for (3, 2 or 1).

    Parameters
    ----------
    values : array_like of float
        The table's cells.
    units : {"mbb", "win%", "chips", "raw"}
        Their units.

    Returns
    -------
    int
        The number of decimals.

    Examples
    --------
    >>> cell_digits([[0.5, -12.25]], "raw"), cell_digits([[0.5, -1.25]], "raw"), cell_digits([[1.0]], "mbb")
    (2, 3, 1)
    """
    if units != "raw":
        return DEFAULT_DIGITS.get(units, 3)
    largest = float(np.max(np.abs(values))) if np.size(values) else 0.0
    return 3 if largest < 10 else 2 if largest < 100 else 1


def save_heatmap(result: TournamentResult, path: str | os.PathLike[str], units: str | None = None,
                 dpi: int = 100) -> None:
    """Write `result`'s heatmap to `path` (PNG) at the size it is meant to be shown.

    Parameters
    ----------
    result : TournamentResult
        The table.
    path : str or path
        The PNG file to write (no timestamp or software in its metadata, so the bytes depend only
        on the table and matplotlib's version).
    units : {"mbb", "win%", "chips", "raw"}, optional
        Default the table's (the paper's for the game).
    dpi : int, default 100
        Pixels per inch.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from labkit.experiments import load_cached
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     save_heatmap(load_cached("tiny_hanabi_fixed"), Path(folder, "table.png"))
    ...     print(Path(folder, "table.png").read_bytes()[1:4])
    b'PNG'
    """
    from matplotlib.figure import Figure     # no pyplot: leaves the caller's backend alone
    figure = Figure(figsize=heatmap_figsize(result), dpi=dpi, layout="constrained")
    heatmap(result, ax=figure.subplots(), units=units)
    figure.savefig(path, dpi=dpi, metadata={"Software": None})


def heatmap_figsize(result: TournamentResult, averages: bool = True, width: float = 7.4) -> tuple[float, float]:
    r"""(width, height) in inches for a heatmap of `result` shown at its size (at most 740 px wide
    at 100 dpi, the text column of the book's pages).

    Parameters
    ----------
    result : TournamentResult
        The table.
    averages : bool, default True
        Whether the avg row and column are drawn.
    width : float, default 7.4
        The largest width: :math:`\min(\text{width}, 1.9 + 0.52\,\text{columns})` by
        :math:`1.75 + 0.3\,\text{rows}`.

    Returns
    -------
    (float, float)
        Width and height in inches.

    Examples
    --------
    >>> from labkit.experiments import load_cached
    >>> heatmap_figsize(load_cached("leduc_fixed"))                 # 11 variants and the averages
    (7.4, 5.35)
    """
    rows = len(result.rows) + bool(averages)
    cols = len(result.columns) + bool(averages)
    width = min(width, 1.9 + 0.52 * cols)
    return width, 1.75 + 0.3 * rows


def heatmap(result: TournamentResult, ax: Axes | None = None, units: str | None = None, averages: bool = True,
            annotate: bool = True, digits: int | None = None, cmap: str | None = None, spread: float | None = None,
            fontsize: float = HEATMAP_FONT_SIZE, title: str | None = None) -> AxesImage:
    """Draw `result` (a TournamentResult) on `ax` and return the AxesImage.

    Parameters
    ----------
    result : TournamentResult
        The table: rows are the learners, columns their opponents.
    ax : matplotlib Axes, optional
        Drawn on if given; else a new pyplot figure of `heatmap_figsize`.
    units : {"mbb", "win%", "chips", "raw"}, optional
        Default the paper's units for the game.
    averages : bool
        Append the avg column (row means) and avg row (column means).
    annotate : bool
        Print each value in its cell with `digits` decimals.
    cmap : str, optional
        Colour map. Zero-sum units (mbb, chips, win %): default "RdBu", centred on the break-even
        value (0, or 50 for win %). Raw payoffs of a game that is not zero-sum have no break-even
        point: default "viridis" from the smallest to the largest value.
    spread : float, optional
        Zero-sum units: distance from the centre at which the colours saturate. Default: the
        90th percentile of the distances, so that one extreme column (every variant against
        ACT_IN in Leduc) does not wash out the rest; the printed numbers are exact either way.
    digits : int, optional
        Decimals of the printed values; default `cell_digits`.
    fontsize : float, default `HEATMAP_FONT_SIZE`
        Points, for the cells (the labels and title are a little larger).
    title : str, optional
        Default the game, regime, number of rounds and units.

    Returns
    -------
    matplotlib.image.AxesImage
        The image (a colour bar is drawn beside it).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from labkit.experiments import load_cached
    >>> figure = Figure()
    >>> image = heatmap(load_cached("leduc_fixed"), ax=figure.subplots())
    >>> image.get_array().shape, len(figure.axes[0].texts)           # 11 variants and the averages
    ((12, 12), 144)
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize, TwoSlopeNorm

    units = units or result.units
    values = result.with_averages(units) if averages else result.matrix(units)
    digits = cell_digits(values, units) if digits is None else digits
    if ax is None:
        _, ax = plt.subplots(figsize=heatmap_figsize(result, averages), layout="constrained")
    if units == "raw":
        low, high = float(values.min()), float(values.max())
        norm = Normalize(vmin=low, vmax=high if high > low else low + 1.0)
        cmap = cmap or "viridis"

        def dark_cell(v: float) -> bool:
            return bool(norm(v) < 0.45)           # viridis is dark at its low end
    else:
        centre = 50.0 if units == "win%" else 0.0
        if spread is None:
            spread = float(np.percentile(np.abs(values - centre), 90))
        spread = float(spread) or 1.0
        norm = TwoSlopeNorm(vcenter=centre, vmin=centre - spread, vmax=centre + spread)
        cmap = cmap or "RdBu"

        def dark_cell(v: float) -> bool:
            return bool(abs(v - centre) > 0.6 * spread)
    image = ax.imshow(values, cmap=cmap, norm=norm, aspect="auto")
    rows = [_label(r) for r in result.rows] + (["avg"] if averages else [])
    cols = [_label(c) for c in result.columns] + (["avg"] if averages else [])
    ax.set_xticks(range(len(cols)), cols, rotation=60, ha="right", fontsize=fontsize + 0.5)
    ax.set_yticks(range(len(rows)), rows, fontsize=fontsize + 0.5)
    ax.set_xlabel("opponent (column variant)", fontsize=fontsize + 1)
    ax.set_ylabel("learner (row variant)", fontsize=fontsize + 1)
    if title is None:
        title = textwrap.fill(f"{_short_name(result.game)}, {result.regime} regime, {result.rounds} rounds "
                              f"({UNITS[units][1]})", 70)
    ax.set_title(title, fontsize=fontsize + 2)
    if averages:
        ax.axvline(len(cols) - 1.5, color="white", linewidth=3)
        ax.axhline(len(rows) - 1.5, color="white", linewidth=3)
    if annotate:
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                dark = dark_cell(values[i, j])
                ax.text(j, i, f"{np.round(values[i, j], digits) + 0.0:.{digits}f}", ha="center", va="center",
                        fontsize=fontsize, color="white" if dark else "black")
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label(UNITS[units][1], fontsize=fontsize + 1)
    bar.ax.tick_params(labelsize=fontsize)
    return image


def _short_name(game):
    """"goofspiel(num_cards=4,players=3,points_order=ascending,imp_info=True)" -> "goofspiel(num_cards=4,
    players=3, points_order=ascending)": the parameters that tell the paper's games apart."""
    from labkit.games import parse_spec
    try:
        name, params = parse_spec(str(game).removeprefix("openspiel:"))
    except ValueError:
        return str(game)
    shown = [f"{k}={v}" for k, v in params.items() if k not in ("imp_info", "returns_type")]
    return f"{name}({', '.join(shown)})" if shown else name


# ---------------------------------------------------------------------- curves over the rounds
# one colour and line style per variant, the same in every figure (Okabe-Ito colours where the
# chapters already use them for these learners)
VARIANT_STYLES = {
    "act_in": ("0.55", ":"), "cf": ("#0072B2", "-"), "cf_in": ("#009E73", "-."), "cf_ex+in": ("#332288", "--"),
    "bps": ("#56B4E9", "--"), "cfps": ("#E69F00", "--"), "cfps_ex+in": ("#882255", ":"), "csps": ("#CC79A7", "-"),
    "tips": ("#D55E00", "-"), "tips_ex+in": ("#8C564B", "-."), "bhv": ("black", "-"),
}
# the paper's three panels per game (Figures E.1-E.4): action and counterfactual types; the
# partial sequence types against behavioral; internal against external-and-internal
PANELS = (("act_in", "cf", "cf_in", "cf_ex+in"), ("bps", "cfps", "csps", "tips", "bhv"),
          ("cfps", "cfps_ex+in", "tips", "tips_ex+in"))
CURVE_KINDS = ("running", "instantaneous")


def partner_average(result: TournamentResult, units: str | None = None, running: bool = True) -> NDArray[np.float64]:
    r"""Each row variant's payoff averaged over all column variants (itself included), round by
    round, :math:`\bar u_r(t) = \frac{1}{C} \sum_c u_{r,c}(t)` (``running=False``, Figures
    E.2/E.4), or its running mean :math:`\frac{1}{t+1} \sum_{s \le t} \bar u_r(s)`
    (``running=True``, Figures E.1/E.3).

    Parameters
    ----------
    result : TournamentResult
        A table with its per-round payoffs.
    units : {"mbb", "win%", "chips", "raw"}, optional
        Default the paper's for the game.
    running : bool, default True
        The running mean instead of each round's value.

    Returns
    -------
    (rows, rounds) float array

    Examples
    --------
    >>> from labkit.experiments import load_cached
    >>> leduc = load_cached("leduc_fixed")
    >>> partner_average(leduc).shape
    (11, 500)
    >>> partner_average(leduc, running=False)[0, :3].round(1)         # ACT_IN's first rounds, mbb
    array([    0. ,  -402.5, -1480.9])
    """
    values = result.per_round_array(units or result.units).mean(axis=1)
    if running:
        values = np.cumsum(values, axis=1) / np.arange(1, result.rounds + 1)
    return values


def panels_for(rows: Sequence[str]) -> list[tuple[str, ...]]:
    """The paper's panels (`PANELS`) restricted to `rows`.

    Parameters
    ----------
    rows : sequence of str
        The variants of a table.

    Returns
    -------
    list of tuple of str
        Empty panels dropped; a game whose rows fit none (tiny Hanabi's three, which fit only
        part of the first) gets one panel of all its rows.

    Examples
    --------
    >>> panels_for(["cf", "cf_in", "bhv"])
    [('cf', 'cf_in'), ('bhv',)]
    >>> panels_for(["cf", "cf_in", "cf_ex+in"])
    [('cf', 'cf_in', 'cf_ex+in')]
    """
    chosen = [tuple(n for n in panel if n in rows) for panel in PANELS]
    chosen = [panel for panel in chosen if panel]
    covered = {n for panel in chosen for n in panel}
    if not chosen or covered != set(rows) and len(chosen) == 1:
        return [tuple(rows)]
    return chosen


def curves(result: TournamentResult, axes: Any = None, kind: str = "running", units: str | None = None,
           title: str | None = None, legend: bool = True) -> list[Axes]:
    """Draw the paper's Figure E.1-E.4 panels for one game and regime (`partner_average`).

    Parameters
    ----------
    result : TournamentResult
        A table with its per-round payoffs.
    axes : sequence or array of matplotlib Axes, optional
        One per panel (`panels_for`); a new pyplot row of subplots if None.
    kind : {"running", "instantaneous"}
        The running mean of the partner-averaged payoff (Figures E.1/E.3) or the
        partner-averaged payoff of each round (E.2/E.4).
    units : {"mbb", "win%", "chips", "raw"}, optional
        Default the paper's for the game.
    title : str, optional
        The figure's title.
    legend : bool, default True
        Draw a legend in every panel.

    Returns
    -------
    list of matplotlib Axes
        The panels, all on one y scale.

    Raises
    ------
    ValueError
        For an unknown `kind`, or when the number of axes is not the number of panels.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from labkit.experiments import load_cached
    >>> axes = curves(load_cached("leduc_fixed"), axes=Figure().subplots(1, 3))
    >>> [len(ax.get_lines()) for ax in axes]
    [4, 5, 4]
    """
    import matplotlib.pyplot as plt

    if kind not in CURVE_KINDS:
        raise ValueError(f"kind must be one of {CURVE_KINDS}, got {kind!r}")
    units = units or result.units
    values = dict(zip(result.rows, partner_average(result, units, running=kind == "running"), strict=True))
    panels = panels_for(result.rows)
    if axes is None:
        _, axes = plt.subplots(1, len(panels), figsize=(2.5 * len(panels) + 0.6, 2.6), sharey=True,
                               layout="constrained", squeeze=False)
        axes = axes[0]
    axes = list(np.ravel(axes))
    if len(axes) != len(panels):
        raise ValueError(f"{result.game} has {len(panels)} panels; got {len(axes)} axes")
    label = UNITS[units][1] if units != "raw" else "payoff"
    t = np.arange(result.rounds)
    for ax, panel in zip(axes, panels, strict=True):
        for name in panel:
            color, style = VARIANT_STYLES.get(name, ("0.3", "-"))
            ax.plot(t, values[name], linestyle=style, color=color, linewidth=1.3 if kind == "running" else 0.8,
                    label=_label(name))
        ax.set_xlabel("round t")
        ax.grid(alpha=0.25, linewidth=0.5)
    low, high = _robust_limits(np.array([values[n] for panel in panels for n in panel]), kind)
    for ax in axes:
        ax.set_ylim(low, high)           # the same scale in every panel of the game
        if legend:
            ax.legend(fontsize=7.5, frameon=False, handlelength=2.2)
    axes[0].set_ylabel(("running mean, " if kind == "running" else "") + label)
    if title is not None:
        axes[0].figure.suptitle(title, fontsize=10)
    return axes


# the paper's axis labels (Figures E.1-E.4): running means are "avg." values
AXIS_LABELS = {"mbb": "payoff (mbb)", "win%": "win %", "chips": "payoff (chips)", "raw": "payoff"}
FIGURE_FONT_SIZE = 7.5     # points: 10 px at the column's width, like the heatmaps


def panel_columns(rows: Sequence[str]) -> list[tuple[int, tuple[str, ...]]]:
    """The paper's panels for a table's rows, each with the column it takes in Figures E.1-E.4.

    Parameters
    ----------
    rows : list of str
        The variants of a table (`TournamentResult.rows`).

    Returns
    -------
    list of (int, tuple of str)
        ``(column, variants)`` per panel of `panels_for`, column k being the k-th of `PANELS`;
        a panel that is part of none (tiny Hanabi's three learners) sits in the first column, as
        in the paper.

    Examples
    --------
    >>> panel_columns(["cf", "cf_in", "cf_ex+in"])                # tiny Hanabi's rows
    [(0, ('cf', 'cf_in', 'cf_ex+in'))]
    >>> [column for column, _ in panel_columns(PANELS[0] + PANELS[1] + ("cfps_ex+in", "tips_ex+in"))]
    [0, 1, 2]
    """
    placed = []
    for panel in panels_for(rows):
        column = next((k for k, full in enumerate(PANELS) if set(panel) <= set(full)), 0)
        placed.append((column, panel))
    return placed


def appendix_figure(results: Sequence[TournamentResult], titles: Sequence[str], kind: str = "running",
                    figure: Figure | None = None, row_height: float = 1.45, width: float = 7.4) -> Figure:
    """The layout of the paper's Figures E.1-E.4: one row per game, three columns of panels
    (`PANELS`: action and counterfactual learners; partial sequence learners with BHV; internal
    against EX+IN), each variant's payoff averaged over all its partners, every round t = 0..T-1.

    Parameters
    ----------
    results : list of TournamentResult
        One per game, all of one regime, in the order of the rows.
    titles : list of str
        The games' names, written beside their rows ("Leduc hold'em (N = 2)").
    kind : {"running", "instantaneous"}
        The running mean over rounds 0..t (Figures E.1 and E.3) or the payoff of round t (E.2
        and E.4).
    figure : matplotlib Figure, optional
        Drawn into if given.
    row_height, width : float
        The new figure's size in inches: `width` by `row_height` per game plus room for the
        legends.

    Returns
    -------
    matplotlib.figure.Figure
        Each column has one legend, above it, in the paper's order; each row shares one y scale,
        chosen to show the curves after the first rounds' swing (`_robust_limits`: the first
        rounds may leave the frame).

    Raises
    ------
    ValueError
        For an unknown `kind`, or when there are not as many titles as results.

    Examples
    --------
    >>> from labkit.experiments import load_cached
    >>> runs = [load_cached("leduc_fixed"), load_cached("tiny_hanabi_fixed")]
    >>> figure = appendix_figure(runs, ["Leduc hold'em", "tiny Hanabi"], "instantaneous")
    >>> [len(ax.get_lines()) for ax in figure.axes]         # tiny Hanabi's row: one panel
    [4, 5, 4, 3, 0, 0]
    >>> figure.axes[0].get_ylabel()
    "Leduc hold'em\\npayoff (mbb)"
    """
    from matplotlib.figure import Figure

    if kind not in CURVE_KINDS:
        raise ValueError(f"kind must be one of {CURVE_KINDS}, got {kind!r}")
    if len(results) != len(titles):
        raise ValueError(f"{len(results)} results but {len(titles)} titles")
    if figure is None:
        figure = Figure(figsize=(width, row_height * len(results) + 0.9), dpi=100, layout="constrained")
    axes = figure.subplots(len(results), len(PANELS), sharex=True, squeeze=False)
    handles: list[dict[str, Any]] = [{} for _ in PANELS]            # column -> variant -> line, for the legends
    font = FIGURE_FONT_SIZE
    for row, result, title in zip(axes, results, titles, strict=True):
        values = dict(zip(result.rows, partner_average(result, running=kind == "running"), strict=True))
        placed = panel_columns(result.rows)
        t = np.arange(result.rounds)
        for column, panel in placed:
            ax = row[column]
            for name in panel:
                color, style = VARIANT_STYLES.get(name, ("0.3", "-"))
                line, = ax.plot(t, values[name], linestyle=style, color=color,
                                linewidth=1.1 if kind == "running" else 0.7, label=_label(name))
                handles[column].setdefault(name, line)
        low, high = _robust_limits(np.array([values[n] for _, panel in placed for n in panel]), kind)
        used = {column for column, _ in placed}
        for column, ax in enumerate(row):
            if column not in used:
                ax.set_axis_off()
                continue
            ax.set_ylim(low, high)
            ax.grid(alpha=0.25, linewidth=0.5)
            ax.tick_params(labelsize=font)
            ax.yaxis.get_offset_text().set_fontsize(font)
        label = ("avg. " if kind == "running" else "") + AXIS_LABELS.get(result.units, "payoff")
        row[0].set_ylabel(f"{title}\n{label}", fontsize=font)
    for column in axes.T:                      # the lowest panel drawn in each column
        shown = [ax for ax in column if ax.axison]
        if shown:
            shown[-1].set_xlabel("round t", fontsize=font)
            shown[-1].tick_params(labelbottom=True)
    for column, ax in enumerate(axes[0]):
        # the panel's own order; a variant outside the paper's panels after it
        order = [n for n in PANELS[column] if n in handles[column]]
        order += [n for n in handles[column] if n not in order]
        if order:
            ax.legend([handles[column][n] for n in order], [_label(n) for n in order], loc="lower center",
                      bbox_to_anchor=(0.5, 1.02), ncol=2, fontsize=font, frameon=False, handlelength=2.2,
                      columnspacing=1.0)
    return figure


def _robust_limits(values, kind):
    """y limits that show the learning curves rather than the first rounds' transient: the range
    after the first 4 % of the rounds (running means), or the 1st-99th percentiles (per round)."""
    if kind == "running":
        low, high = values[:, values.shape[1] // 25:].min(), values[:, values.shape[1] // 25:].max()
    else:
        low, high = np.percentile(values, [1, 99])
    pad = 0.08 * (high - low) or 0.05 * max(abs(high), 1e-9)
    return float(low - pad), float(high + pad)
