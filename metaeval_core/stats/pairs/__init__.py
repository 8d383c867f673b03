"""Realistic system pairs: rSYS-Delta(l, u), its decile grid and curve, and its bootstrap interval.

The standard system-level Kendall tau counts every one of the ``N (N - 1) / 2``
system pairs. rSYS-Delta(l, u) keeps only the pairs whose metric difference
``|dx|`` lies in ``[l, u]`` (metric units), so it measures how well the metric
orders systems that are as close as those researchers actually compare.

Parts: ``_delta`` (pairs, rSYS-Delta, the decile grid and curve, the system bound, validation) and
``intervals`` (the bootstrap interval, with the resampling kernels the practitioner tools share).

References: docs/methods.md sec. 1 and 4; Deutsch, Dror & Roth (NAACL 2022) sec. 4, Fig. 6 and 10.
"""

from metaeval_core.stats.pairs._delta import (  # noqa: F401 - the package's names
    DELTA_METHODS, MAX_PAIR_SYSTEMS, N_DECILES, PAIR_SYSTEMS_VARIABLE, DecileGrid, DeltaCurve, DeltaMethod,
    DeltaResult, SystemPairs, _dataset_matrices, _GATHER_BUDGET, _PAIR_BUDGET, _validate_bounds, _validate_matrices,
    _validate_means, check_pair_systems, closest_count, closest_upper, dataset_means,
    dataset_rsys_delta, decile_grid, decile_thresholds, delta_curve, max_pair_systems, rsys_delta, system_pairs,
)
from metaeval_core.stats.pairs.intervals import (  # noqa: F401
    DeltaInterval, DeltaResamples, _default_batch, _index_dtype, dataset_delta_confidence_interval,
    delta_confidence_interval, delta_taus_from_means, draw_delta_resamples, percentile_interval, resampled_means,
    resampled_system_means,
)

__all__ = [
    "DELTA_METHODS",
    "MAX_PAIR_SYSTEMS",
    "N_DECILES",
    "PAIR_SYSTEMS_VARIABLE",
    "DecileGrid",
    "DeltaCurve",
    "DeltaMethod",
    "DeltaResult",
    "SystemPairs",
    "closest_count",
    "closest_upper",
    "_dataset_matrices",
    "_GATHER_BUDGET",
    "_PAIR_BUDGET",
    "_validate_bounds",
    "_validate_matrices",
    "_validate_means",
    "check_pair_systems",
    "dataset_means",
    "dataset_rsys_delta",
    "decile_grid",
    "decile_thresholds",
    "delta_curve",
    "max_pair_systems",
    "rsys_delta",
    "system_pairs",
    "DeltaInterval",
    "DeltaResamples",
    "_default_batch",
    "_index_dtype",
    "dataset_delta_confidence_interval",
    "delta_confidence_interval",
    "delta_taus_from_means",
    "draw_delta_resamples",
    "percentile_interval",
    "resampled_means",
    "resampled_system_means",
]
