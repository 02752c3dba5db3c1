"""The paper's experiments, on one machine or a cluster.

    >>> import labkit as lk
    >>> result = lk.experiments.efr_tournament("kuhn_poker", ["cf", "bps"], ["cf", "bps"],
    ...                                         rounds=10, executor="serial", progress=False)
    >>> result.mean["cf"]["cf"]
    0.0

`efr_tournament` plays EFR variants against each other (Morrill et al., 2021: fixed and
simultaneous regimes, Figure E.5 and Table 2); the result prints as a table in the paper's
units, writes CSV/JSON and draws a heatmap. The command line does the same:

    python -m labkit.experiments efr --game leduc_poker --regime fixed --rounds 500

`PAPER_GAMES` lists the nine games of the paper's Appendix E with the rows of their tables;
`curves` draws one game's panels of its Figures E.1-E.4 (`plot.appendix_figure` all games at
once) and `claims` measures its qualitative statements. Cached runs live in the repository's
labkit/data/efr/; `load_cached` reads them, and `labkit.experiments.authors` compares one with
the authors' own per-round data files (not shipped with labkit).
"""
from labkit.experiments import claims
from labkit.experiments.games import PAPER_GAMES, paper_game
from labkit.experiments.plot import curves, heatmap
from labkit.experiments.results import UNITS, TournamentResult, convert, default_units, load_cached
from labkit.experiments.tournament import (FIGURE_E5_VARIANTS, REGIMES, TABLE_2_VARIANTS, efr_learner,
                                           efr_tournament, load_game, seat_values)

__all__ = ["efr_tournament", "TournamentResult", "load_cached", "heatmap", "curves", "PAPER_GAMES", "paper_game",
           "claims", "seat_values", "efr_learner", "load_game",
           "convert", "default_units", "UNITS", "REGIMES", "FIGURE_E5_VARIANTS", "TABLE_2_VARIANTS"]
