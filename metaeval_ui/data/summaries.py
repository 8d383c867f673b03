"""Cached descriptive tables: correlations without intervals, system means, distributions, missing values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from metaeval_core.stats.correlation import correlate
from metaeval_core.stats.montecarlo import finite_or_none  # noqa: F401 - re-exported: the one NaN-to-None helper
from metaeval_core.data.dataset import Dataset
from metaeval_ui import tables
from metaeval_ui.data.datasets import DatasetKey


@st.cache_data(max_entries=256, show_spinner=False)
def correlation_table(
    _dataset: Dataset,
    key: DatasetKey,
    metrics: tuple[str, ...],
    humans: tuple[str, ...],
    level: str,
    coefficient: str,
    pool: str,
    systems: str,
) -> pd.DataFrame:
    """One row per (metric, human) with the correlation, how many points / undefined pieces it used and, for the
    tie-calibrated accuracy, the tie threshold epsilon it chose (docs/methods.md sec. 11.2)."""
    rows = []
    for human in humans:
        for metric in metrics:
            result = correlate(
                _dataset, metric, human, level=level, coefficient=coefficient, pool=pool, systems=systems or None
            )
            rows.append(result.to_dict())
    frame = pd.DataFrame(
        rows, columns=["metric", "human", "level", "coefficient", "pool", "estimate", "n", "n_undefined", "systems",
                       "epsilon"]
    )
    frame["estimate"] = frame["estimate"].astype(float)
    frame["epsilon"] = frame["epsilon"].astype(float)  # NaN except for the tie-calibrated accuracy
    return frame


@st.cache_data(max_entries=64, show_spinner=False)
def unscored_systems(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, pool: str,
                     systems: str) -> dict[str, tuple[str, ...]]:
    """Per metric, the systems of the correlation's system set (rated by ``human``) with no metric score in the
    pool: the reason a system-level ``n`` is smaller for that metric (docs/methods.md sec. 0.2, 0.6)."""
    subset = _subset(_dataset, systems).rated_by(human)
    found = {}
    for metric in metrics:
        scored = np.isfinite(subset.matrix(metric, pool=pool)).any(axis=1)
        found[metric] = tuple(s for s, ok in zip(subset.systems, scored) if not ok)
    return found


@st.cache_data(max_entries=64, show_spinner=False)
def system_means(_dataset: Dataset, key: DatasetKey, measures: tuple[str, ...], pool: str, systems: str) -> pd.DataFrame:
    return tables.system_means(_subset(_dataset, systems), measures, pool=pool)


@st.cache_data(max_entries=64, show_spinner=False)
def distribution_stats(_dataset: Dataset, key: DatasetKey, measures: tuple[str, ...], pool: str, bins: int) -> pd.DataFrame:
    return tables.histograms(_dataset, measures, pool=pool, bins=bins)


@st.cache_data(max_entries=64, show_spinner=False)
def box_stats(_dataset: Dataset, key: DatasetKey, measures: tuple[str, ...], pool: str) -> pd.DataFrame:
    return tables.box_stats(_dataset, measures, pool=pool)


@st.cache_data(max_entries=32, show_spinner=False)
def missing_summary(_dataset: Dataset, key: DatasetKey) -> pd.DataFrame:
    return tables.missing_summary(_dataset)


def _subset(dataset: Dataset, systems: str) -> Dataset:
    return dataset.select_systems(systems or None)


