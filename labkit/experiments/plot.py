"""Heatmap of a tournament table, drawn like the paper's Figure E.5: rows are the learners,
columns the opponents, with the avg column and avg row set apart by white lines."""
from __future__ import annotations

import textwrap

import numpy as np

from labkit.experiments.results import DEFAULT_DIGITS, UNITS, _label


def heatmap(result, ax=None, units=None, averages=True, annotate=True, digits=None, cmap="RdBu", spread=None):
    """Draw `result` (a TournamentResult) on `ax` and return the AxesImage.

    Parameters
    ----------
    units : "mbb", "win%", "chips" or "raw"; default the paper's units for the game.
    averages : bool
        Append the avg column (row means) and avg row (column means).
    annotate : bool
        Print each value in its cell with `digits` decimals.
    cmap : str
        Colour map; it is centred on the break-even value (0, or 50 for win %).
    spread : float, optional
        Distance from the centre at which the colours saturate. Default: the 90th percentile of
        the distances, so that one extreme column (every variant against ACT_IN in Leduc) does
        not wash out the rest; the printed numbers are exact either way.
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    units = units or result.units
    digits = DEFAULT_DIGITS.get(units, 3) if digits is None else digits
    values = result.with_averages(units) if averages else result.matrix(units)
    if ax is None:
        size = 0.55 * values.shape[1] + 2.5
        _, ax = plt.subplots(figsize=(size, 0.5 * values.shape[0] + 1.8))
    centre = 50.0 if units == "win%" else 0.0
    if spread is None:
        spread = float(np.percentile(np.abs(values - centre), 90))
    spread = float(spread) or 1.0
    norm = TwoSlopeNorm(vcenter=centre, vmin=centre - spread, vmax=centre + spread)
    image = ax.imshow(values, cmap=cmap, norm=norm, aspect="auto")
    rows = [_label(r) for r in result.rows] + (["avg"] if averages else [])
    cols = [_label(c) for c in result.columns] + (["avg"] if averages else [])
    ax.set_xticks(range(len(cols)), cols, rotation=60, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel("opponent (column variant)")
    ax.set_ylabel("learner (row variant)")
    ax.set_title(textwrap.fill(f"{_short_name(result.game)}, {result.regime} regime, {result.rounds} rounds "
                               f"({UNITS[units][1]})", 70))
    if averages:
        ax.axvline(len(cols) - 1.5, color="white", linewidth=3)
        ax.axhline(len(rows) - 1.5, color="white", linewidth=3)
    if annotate:
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                dark = abs(values[i, j] - centre) > 0.6 * spread
                ax.text(j, i, f"{np.round(values[i, j], digits) + 0.0:.{digits}f}", ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
    ax.figure.colorbar(image, ax=ax, label=UNITS[units][1])
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
