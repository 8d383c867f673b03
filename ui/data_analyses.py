"""Cached core calls of the paper-analysis pages (METHODS sec. 7-8: top-k, pairwise F1, correlation matrix,
annotators, high-scoring range, normality).

Same pattern as :mod:`ui.data`: the dataset is passed as ``_dataset`` (leading underscore: never hashed)
with its small :data:`ui.data.DatasetKey` ``(id, version)`` and plain option values (tuples, str, int);
``max_entries`` bounds every cache. Results are the core's frozen dataclasses or small DataFrames.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from metaeval_core import analyses
from metaeval_core.coefficients import COEFFICIENTS
from metaeval_core.correlation import LEVELS
from metaeval_core.dataset import Dataset

from .data import DatasetKey

# Pairwise F1: one bootstrap over the judged inputs shared by all pairs and measures; the time grows
# linearly in k (1,000 resamples of 26 metrics x 276 pairs take about a second) while the 95% labels of
# all but borderline pairs are settled long before 5,000.
MAX_F1_RESAMPLES = 5_000
MAX_BINS = 50


def _subset(systems: str) -> str | None:
    return systems or None


def n_systems(dataset: Dataset, systems: str) -> int:
    return dataset.select_systems(_subset(systems)).n_systems if systems else dataset.n_systems


@st.cache_data(max_entries=64, show_spinner=False)
def topk(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, coefficient: str, pool: str,
         systems: str) -> tuple[pd.DataFrame, tuple[str, ...], tuple[str, ...]]:
    """(top-k curves as a long frame: metric, k, estimate (NaN when undefined), n; ranking; unranked)."""
    result = analyses.topk_correlations(_dataset, list(metrics), human, coefficient=coefficient, pool=pool,
                                        systems=_subset(systems))
    frame = pd.DataFrame(result.to_records(), columns=["metric", "k", "estimate"])
    frame["estimate"] = frame["estimate"].astype(float)
    frame["n"] = result.n.ravel().astype(int)
    return frame, result.ranking, result.unranked


@st.cache_data(max_entries=32, show_spinner=False)
def pairwise(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, systems: str,
             n_resamples: int, seed: int) -> analyses.PairwiseF1Result:
    return analyses.pairwise_f1(_dataset, list(metrics), human, n_resamples=int(n_resamples),
                                systems=_subset(systems), rng=int(seed))


LABEL_NAMES = {0: "no difference", 1: "A better", 2: "B better"}  # 0: not significant at 95%


def label_frame(result: analyses.PairwiseF1Result, metric: str) -> pd.DataFrame:
    """The per-pair labels of one metric with readable labels and an ``agree`` column."""
    frame = pd.DataFrame(result.label_records(metric))
    if frame.empty:
        return frame
    frame["agree"] = frame["human_label"] == frame["metric_label"]
    for column in ("human_label", "metric_label"):
        frame[column] = frame[column].map(LABEL_NAMES)
    return frame[["system_a", "system_b", "human_label", "metric_label", "agree", "human_share", "human_share_b",
                  "metric_share", "metric_share_b"]]


@st.cache_data(max_entries=64, show_spinner=False)
def matrix(_dataset: Dataset, key: DatasetKey, measures: tuple[str, ...], level: str, coefficient: str, pool: str,
           systems: str, order: str) -> analyses.CorrelationMatrix:
    return analyses.correlation_matrix(_dataset, list(measures), level=level, coefficient=coefficient, pool=pool,
                                       systems=_subset(systems), order=order)


def has_annotators(dataset: Dataset) -> bool:
    return any(dataset.measure(h).annotators is not None for h in dataset.human_measures)


@st.cache_data(max_entries=32, show_spinner=False)
def annotators(_dataset: Dataset, key: DatasetKey, systems: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """(alpha rows, group-correlation rows at every level and coefficient, the alpha note)."""
    result = analyses.annotator_agreement(_dataset, levels=LEVELS, coefficients=COEFFICIENTS,
                                          systems=_subset(systems))
    alphas = pd.DataFrame(result.to_records(),
                          columns=["group", "dimension", "alpha", "n_units", "n_values", "n_annotators"])
    alphas["alpha"] = alphas["alpha"].astype(float)
    corr = pd.DataFrame(result.correlation_records(), columns=["dimension", "group_a", "group_b", "level",
                                                               "coefficient", "estimate", "n", "n_undefined"])
    corr["estimate"] = corr["estimate"].astype(float)
    return alphas, corr, result.note


@st.cache_data(max_entries=32, show_spinner=False)
def high_range(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], baseline: str, n_bins: int,
               normalise: str, pool: str, systems: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(tau rows all vs top, disagreement-curve rows, summary: mean kept per input, mean taus, inputs)."""
    result = analyses.high_range(_dataset, list(metrics), baseline=baseline, n_bins=int(n_bins),
                                 normalise=normalise, pool=pool, systems=_subset(systems))
    taus = pd.DataFrame(result.to_records(), columns=["metric_a", "metric_b", "tau_all", "tau_top", "n_inputs_all",
                                                      "n_inputs_top"])
    curve = pd.DataFrame(result.curve_records(), columns=["metric_a", "metric_b", "bin_low", "bin_high",
                                                          "disagreement", "n_pairs"])
    for frame, columns in ((taus, ("tau_all", "tau_top")), (curve, ("disagreement",))):
        for column in columns:
            frame[column] = frame[column].astype(float)
    summary = {"mean_kept": result.mean_kept, "mean_tau_all": result.mean_tau_all,
               "mean_tau_top": result.mean_tau_top, "n_inputs": len(result.input_names),
               "n_systems": len(result.system_names)}
    return taus, curve, summary


@st.cache_data(max_entries=64, show_spinner=False)
def normality(_dataset: Dataset, key: DatasetKey, measures: tuple[str, ...], pool: str, systems: str,
              alpha: float) -> pd.DataFrame:
    table = analyses.normality_table(_dataset, list(measures), pool=pool, systems=_subset(systems), alpha=alpha)
    frame = pd.DataFrame(table.to_records(), columns=["measure", "kind", "pool", "system_p", "system_n",
                                                      "input_share", "input_tested", "input_skipped"])
    return frame.astype({"system_p": float, "input_share": float})


def default_baseline(dataset: Dataset, systems: str) -> str | None:
    """SummEval's Lead-3 (M0) or a system named like a lead baseline, else the first system."""
    names = list(dataset.select_systems(_subset(systems)).systems) if systems else list(dataset.systems)
    if not names:
        return None
    for name in names:
        if name == "M0" or "lead" in name.lower():
            return name
    return names[0]
