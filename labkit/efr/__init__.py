"""Extensive-form regret minimization (EFR) with every deviation type of Morrill et al. (2021).

    import labkit as lk
    efr = lk.EFR("leduc_poker", deviations="tips")
    efr.run(100)
    efr.current_policy(), efr.average_policy(), efr.profiles

Modules: `deviations` (the deviation types as (infoset, transformation sequence) rows),
`fixed_point` (exact regret matching over action transformations), `learner` (the `EFR` class),
and, for ``EFR(..., fixed_point="paper")``, which replays the authors' floating-point arithmetic,
`paper_numerics` (their order of every sum) and `eigen` (their least-squares solver, compiled on
first use). The independent hindsight-rationality check is `labkit.hindsight`.
"""
from labkit.efr.deviations import (DEVIATION_NAMES, DeviationStructure, DeviationType, deviation_structure,
                                   parse_deviation_type)
from labkit.efr.fixed_point import min_norm_stationary, transformation_fixed_point
from labkit.efr.learner import EFR

__all__ = ["EFR", "DeviationType", "DEVIATION_NAMES", "DeviationStructure", "deviation_structure",
           "parse_deviation_type", "transformation_fixed_point", "min_norm_stationary"]
