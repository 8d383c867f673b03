"""metaeval core: meta-evaluation of automatic evaluation metrics against human judgments.

Pure numpy/scipy/pandas; never imports streamlit or plotly. The main entry points of every
analysis module are re-exported here; the modules hold the rest (result types, helpers).

The re-exports are resolved on first use (PEP 562 module ``__getattr__``), so importing the package, or
running ``metaeval --help``, does not import numpy, scipy or pandas (the command line starts in < 0.5 s;
benchmarks/bench_cli_startup.py).
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module that defines it
_EXPORTS: dict[str, str] = {
    name: module
    for module, names in {
        "metaeval_core._frames": ("to_frame",),
        "metaeval_core.analyses.papers": ("annotator_agreement", "correlation_matrix", "high_range",
                                          "normality_table", "pairwise_f1", "topk_correlations"),
        "metaeval_core.stats.coefficients": ("COEFFICIENTS", "kendall", "pearson", "spearman"),
        "metaeval_core.stats.correlation": ("LEVELS", "CorrelationResult", "correlate", "correlate_many",
                                            "correlate_matrices"),
        "metaeval_core.data.dataset": ("POOLS", "Dataset", "DatasetError", "Measure"),
        "metaeval_core.stats.pairs": ("dataset_delta_confidence_interval", "dataset_rsys_delta", "decile_grid",
                                      "delta_confidence_interval", "delta_curve", "rsys_delta"),
        "metaeval_core.stats.pools": ("rsys_width_comparison", "simulate_labelled_subset", "system_score_intervals",
                                      "variance_reduction"),
        "metaeval_core.analyses.practice": ("improvement_probability", "plan_judgments", "significance_clusters",
                                            "system_influence"),
        "metaeval_core.data.registry": ("dataset_info", "fetch_dataset", "list_datasets", "load_dataset"),
        "metaeval_core.stats.resampling": ("CI_METHODS", "ConfidenceInterval", "confidence_interval",
                                           "dataset_confidence_interval"),
        "metaeval_core.stats.significance": ("TEST_METHODS", "PairwiseTable", "compare_all_pairs", "compare_metrics",
                                             "correct_pvalues", "correct_table"),
        "metaeval_core.analyses.simulations": ("ci_coverage", "power_curve"),
        "metaeval_core.analyses.chance": ("ChanceBaseline", "chance_baseline", "chance_baselines"),
        "metaeval_core.stats.stability": ("dataset_ranking_stability", "default_sizes", "ranking_stability"),
        "metaeval_core.data.synthetic": ("SyntheticSpec", "synthetic_dataset"),
        # pairwise ("A or B?") judges: the subpackage holds the rest (its chance baseline and human ceiling)
        "metaeval_core.judges": ("agreement_by_subset", "close_pair_agreement", "compare_judges", "judge_agreement",
                                 "judge_leaderboard", "length_preference", "load_pairwise", "positional_bias",
                                 "ranking_agreement", "rater_alpha", "read_verdict_file", "score_accuracy",
                                 "system_ranking"),
    }.items()
    for name in names
}
_SUBPACKAGES = ("judges",)


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    # data
    "POOLS", "Dataset", "DatasetError", "Measure", "SyntheticSpec", "synthetic_dataset",
    "dataset_info", "fetch_dataset", "list_datasets", "load_dataset",
    # correlations
    "COEFFICIENTS", "LEVELS", "CorrelationResult", "correlate", "correlate_many", "correlate_matrices", "kendall",
    "pearson", "spearman",
    # confidence intervals and significance
    "CI_METHODS", "ConfidenceInterval", "confidence_interval", "dataset_confidence_interval",
    "TEST_METHODS", "PairwiseTable", "compare_metrics", "compare_all_pairs", "correct_pvalues", "correct_table",
    # system pairs (rSYS-Delta), pools, stability
    "rsys_delta", "dataset_rsys_delta", "decile_grid", "delta_curve", "delta_confidence_interval",
    "dataset_delta_confidence_interval", "system_score_intervals", "variance_reduction", "rsys_width_comparison",
    "simulate_labelled_subset", "ranking_stability", "dataset_ranking_stability", "default_sizes",
    # further analyses
    "topk_correlations", "pairwise_f1", "correlation_matrix", "annotator_agreement", "high_range",
    "normality_table",
    # practitioner tools and simulations
    "improvement_probability", "plan_judgments", "significance_clusters", "system_influence",
    "ci_coverage", "power_curve",
    # chance baselines
    "ChanceBaseline", "chance_baseline", "chance_baselines",
    # pairwise ("A or B?") judges (metaeval_core.judges: its chance baseline and human ceiling too)
    "judges", "load_pairwise", "read_verdict_file", "judge_agreement", "judge_leaderboard", "agreement_by_subset",
    "rater_alpha", "compare_judges", "positional_bias", "length_preference", "system_ranking", "ranking_agreement",
    "close_pair_agreement", "score_accuracy",
    # results as pandas tables
    "to_frame",
]
