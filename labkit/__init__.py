"""labkit: games, solvers and exact evaluation for the book on multi-agent RL and self-play.

    import labkit as lk
    game = lk.games.load("kuhn_poker")
    lk.nash_conv(game, lk.uniform_policy(game))     # 11/12

The solvers (CFR, CFRPlus, DCFR, MCCFR, MMD, PSRO, EFR) and the modules `dynamics`,
`experiments`, `grading` and the others are imported on first use, and scipy and numba only by the
functions that need them, so ``import labkit`` costs about a third of ``import numpy``
(benchmarks/bench_import.py). ``python -m labkit`` says what is installed and which commands there
are.
"""
from __future__ import annotations

import importlib
from typing import Any

from labkit import games
from labkit.evaluate import (best_response, counterfactual_values, expected_payoffs, exploitability,
                             history_values, nash_conv, reach_probabilities, terminal_reach_probabilities)
from labkit.lp import zero_sum_equilibrium
from labkit.policy import TabularPolicy, uniform_policy

__version__ = "0.2.0"

# public name -> module that defines it (loaded lazily)
_LAZY = {
    "CFR": "labkit.cfr", "CFRPlus": "labkit.cfr", "DCFR": "labkit.cfr",
    "MCCFR": "labkit.mccfr",
    "MMD": "labkit.mmd",
    "PSRO": "labkit.psro",
    "EFR": "labkit.efr", "DeviationType": "labkit.efr",
}
_LAZY_MODULES = {"data", "deep", "kernels", "dynamics", "regret", "solver", "cooperative", "social", "experiments",
                 "grading", "plot", "widgets", "hindsight", "cfr", "mccfr", "mmd", "psro", "efr"}

__all__ = ["games", "TabularPolicy", "uniform_policy", "expected_payoffs", "best_response", "nash_conv",
           "exploitability", "counterfactual_values", "reach_probabilities", "terminal_reach_probabilities",
           "history_values", "zero_sum_equilibrium", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _LAZY_MODULES:
        return importlib.import_module(f"labkit.{name}")
    raise AttributeError(f"module 'labkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _LAZY_MODULES)
