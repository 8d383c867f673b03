"""metaeval core: meta-evaluation of automatic evaluation metrics against human judgments.

Pure numpy/scipy/pandas; never imports streamlit or plotly.
"""

from .coefficients import COEFFICIENTS, kendall, pearson, spearman
from .correlation import LEVELS, CorrelationResult, correlate, correlate_many, correlate_matrices
from .dataset import POOLS, Dataset, DatasetError, Measure
from .synthetic import SyntheticSpec, synthetic_dataset

__all__ = [
    "COEFFICIENTS", "LEVELS", "POOLS", "CorrelationResult", "Dataset", "DatasetError", "Measure",
    "SyntheticSpec", "correlate", "correlate_many", "correlate_matrices", "kendall", "pearson",
    "spearman", "synthetic_dataset",
]
