"""metaeval core: meta-evaluation of automatic evaluation metrics against human judgments.

Pure numpy/scipy/pandas; never imports streamlit or plotly. The main entry points of every
analysis module are re-exported here; the modules hold the rest (result types, helpers).
"""

try:  # the core's dependencies first: run as a command without them, one line (metaeval_core._missing)
    import numpy, pandas, scipy  # noqa: E401, F401
except ImportError as _error:
    from metaeval_core._missing import exit_when_run_as_a_command

    exit_when_run_as_a_command(_error)
    raise

from metaeval_core._frames import to_frame
from metaeval_core.analyses.papers import (
    annotator_agreement,
    correlation_matrix,
    high_range,
    normality_table,
    pairwise_f1,
    topk_correlations,
)
from metaeval_core.stats.coefficients import COEFFICIENTS, kendall, pearson, spearman
from metaeval_core.stats.correlation import LEVELS, CorrelationResult, correlate, correlate_many, correlate_matrices
from metaeval_core.data.dataset import POOLS, Dataset, DatasetError, Measure
from metaeval_core.stats.pairs import (
    dataset_delta_confidence_interval,
    dataset_rsys_delta,
    decile_grid,
    delta_confidence_interval,
    delta_curve,
    rsys_delta,
)
from metaeval_core.stats.pools import rsys_width_comparison, simulate_labelled_subset, system_score_intervals, variance_reduction
from metaeval_core.analyses.practice import improvement_probability, plan_judgments, significance_clusters, system_influence
from metaeval_core.data.registry import dataset_info, fetch_dataset, list_datasets, load_dataset
from metaeval_core.stats.resampling import CI_METHODS, ConfidenceInterval, confidence_interval, dataset_confidence_interval
from metaeval_core.stats.significance import (
    TEST_METHODS,
    PairwiseTable,
    compare_all_pairs,
    compare_metrics,
    correct_pvalues,
    correct_table,
)
from metaeval_core.analyses.simulations import ci_coverage, power_curve
from metaeval_core.analyses.chance import ChanceBaseline, chance_baseline, chance_baselines
from metaeval_core.stats.stability import dataset_ranking_stability, default_sizes, ranking_stability
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset
from metaeval_core import judges  # noqa: F401 - pairwise judges: the subpackage holds the rest (its chance/ceiling)
from metaeval_core.judges import (
    agreement_by_subset,
    close_pair_agreement,
    compare_judges,
    judge_agreement,
    judge_leaderboard,
    length_preference,
    load_pairwise,
    positional_bias,
    ranking_agreement,
    rater_alpha,
    read_verdict_file,
    score_accuracy,
    system_ranking,
)

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
