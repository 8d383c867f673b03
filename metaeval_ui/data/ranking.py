"""The Overview's leaderboard and its reference rows: chance baselines and the human ceiling.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from metaeval_core.stats import significance as _significance
from metaeval_core.data.dataset import Dataset
from metaeval_ui import tables
from metaeval_ui.data.datasets import DatasetKey
from metaeval_ui.data.resampled import confidence_interval, pairwise_key, pairwise_uncorrected
from metaeval_ui.data.summaries import correlation_table


# The test is the dataset's default (PERM-BOTH, TACL 2021; WMT-PERM-SYS at the system level on WMT data), as on
# Significance; then one-sided, Bonferroni per row metric, alpha 0.05.
LEADERBOARD_TEST = ("greater", "bonferroni", "row", 0.05)


def leaderboard(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, level: str,
                coefficient: str, pool: str, systems: str, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """The Overview's table: each metric's correlation, its BOOT-BOTH 95% interval and its significance cluster.

    Built from the same cached calls as the Confidence intervals and Significance pages (same keys, so opening one
    fills the others' caches): the dataset's default test (``attrs['test']``: PERM-BOTH, or WMT-PERM-SYS at the
    system level on WMT data), one-sided, Bonferroni per row metric, alpha 0.05; metrics no test
    separates share a cluster (metaeval_core.analyses.practice.significance_clusters). Columns: cluster, metric,
    estimate, low, high, kind: 'metric', then 'chance' (a metric with permuted scores, docs/methods.md sec. 12: one
    row, or one per distinct baseline) and 'human ceiling' rows, never ranked. ``attrs['chance_note']`` says why
    there is no chance row, or is ''. With the tie-calibrated accuracy an ``epsilon`` column holds each metric's tie
    threshold (NaN on the other rows). ``doubt`` says why a metric's rank means little ('' when it does not: see
    :func:`metaeval_ui.tables.doubts`).
    """
    from metaeval_ui import tables
    from metaeval_ui.data import practice as practice_data

    intervals = {m: confidence_interval(_dataset, key, m, human, level, coefficient, "boot-both", pool, systems,
                                        0.95, n_resamples, seed) for m in metrics}
    alternative, correction, family, alpha = LEADERBOARD_TEST
    method = _significance.default_test(_dataset, level, coefficient)
    if len(metrics) >= 2:
        pkey = pairwise_key(key, tuple(metrics), human, level, coefficient, method, alternative, pool, systems,
                            n_resamples, seed)
        table = pairwise_uncorrected(_dataset, pkey)
        still = np.nan_to_num(tables.correct_table(table.pvalue, correction, family), nan=1.0) < alpha
        ranks = practice_data.cluster_frame(practice_data.clusters(table, still, alpha, correction))
    else:
        ranks = pd.DataFrame({"cluster": [1] * len(metrics), "metric": list(metrics),
                              "estimate": [intervals[m]["estimate"] for m in metrics]})
    ranks["low"] = [intervals[m]["low"] for m in ranks["metric"]]
    ranks["high"] = [intervals[m]["high"] for m in ranks["metric"]]
    ranks["kind"] = "metric"
    if coefficient == "tie-calibrated-accuracy":
        # The value is only meaningful with its tie threshold (docs/methods.md sec. 11.2).
        chosen = correlation_table(_dataset, key, tuple(metrics), (human,), level, coefficient, pool, systems)
        ranks["epsilon"] = ranks["metric"].map(dict(zip(chosen["metric"], chosen["epsilon"]))).astype(float)
    groups, note = chance_groups(_dataset, key, tuple(metrics), human, level, coefficient, pool, systems, 0.95,
                                 n_resamples, seed)
    chance = pd.DataFrame({"cluster": np.nan, "metric": groups["label"], "estimate": groups["estimate"],
                           "low": groups["low"], "high": groups["high"], "kind": "chance"})
    ranks["doubt"] = tables.doubts(ranks, groups)
    ceiling = human_ceiling(_dataset, key, human, level, coefficient, systems, n_resamples, seed)
    board = pd.concat([part for part in (ranks, chance, ceiling) if not part.empty], ignore_index=True)
    board.attrs["chance_note"] = note
    board.attrs["test"] = method
    return board


@st.cache_data(max_entries=512, show_spinner=False)
def chance_baseline(_dataset: Dataset, key: DatasetKey, metric: str, human: str, level: str, coefficient: str,
                    pool: str, systems: str, confidence_level: float = 0.95, n_resamples: int = 1000,
                    seed: int = 0) -> dict:
    """One metric's chance baseline (docs/methods.md sec. 12) as ``ChanceBaseline.to_dict()``; with one seed every
    metric sees the same permutations, so a metric's entry is the same whichever metrics are shown with it."""
    from metaeval_core.analyses.chance import chance_baseline as compute

    return compute(_dataset, metric, human, level=level, coefficient=coefficient, pool=pool,
                   systems=systems or None, confidence_level=confidence_level, n_resamples=n_resamples,
                   rng=seed).to_dict()


def chance_groups(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, level: str,
                  coefficient: str, pool: str, systems: str, confidence_level: float = 0.95,
                  n_resamples: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, str]:
    """The chance baselines of ``metrics`` grouped for display (:func:`metaeval_ui.tables.chance_groups`), and a
    note saying why there are none (e.g. tie-calibrated accuracy on too many cells at the global level) or ''."""
    from metaeval_core._checks import min_resamples_for

    # A page's k may be below what a percentile range needs (40 at 95%); the range then uses that many instead.
    n_resamples = max(int(n_resamples), min_resamples_for(confidence_level))
    try:
        rows = [chance_baseline(_dataset, key, m, human, level, coefficient, pool, systems, confidence_level,
                                n_resamples, seed) for m in metrics]
    except ValueError as error:
        return tables.chance_groups(pd.DataFrame()), str(error).split(";")[0]
    return tables.chance_groups(pd.DataFrame(rows)), ""


@st.cache_data(max_entries=32, show_spinner=False)
def ceiling_intervals(_dataset: Dataset, key: DatasetKey, human: str, level: str, coefficient: str, method: str,
                      systems: str, confidence_level: float, n_resamples: int, seed: int) -> tuple[list[dict], str]:
    """Human-ceiling rows for the forest plot (docs/methods.md sec. 14), in :func:`confidence_interval`'s format:
    each annotator of ``human`` against the mean of the others with the metrics' interval method, and why there
    are none ('' when the measure keeps fewer than two annotators' scores: nothing to say)."""
    from metaeval_core.analyses.ceilings import human_ceiling as compute

    measure = _dataset.measure(human)
    if measure.annotators is None or measure.annotators.shape[0] < 2:
        return [], ""
    try:
        result = compute(_dataset, human, level=level, coefficient=coefficient, method=method,
                         confidence_level=confidence_level, n_resamples=n_resamples, rng=seed,
                         systems=systems or None)
    except ValueError as error:  # e.g. a coefficient or size the ceiling's resampling refuses: say why
        return [], str(error).split(";")[0]
    return [{"metric": f"human ceiling: {r.annotator}", "human": human, "method": method, "estimate": r.estimate,
             "low": r.low, "high": r.high, "n_defined": r.n_defined,
             "n_resamples": 0 if method == "fisher" else n_resamples, "confidence_level": confidence_level,
             "kind": "human ceiling"} for r in result.rows], ""


@st.cache_data(max_entries=32, show_spinner=False)
def human_ceiling(_dataset: Dataset, key: DatasetKey, human: str, level: str, coefficient: str, systems: str,
                  n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """The leaderboard's human-ceiling rows (docs/methods.md sec. 14): each annotator of ``human`` against the mean
    of the others, BOOT-BOTH 95% interval like the metrics' rows; empty when the measure keeps fewer than two
    annotators' scores. Columns as :func:`leaderboard` (kind 'human ceiling', no cluster)."""
    from metaeval_core.analyses.ceilings import human_ceiling as compute

    measure = _dataset.measure(human)
    if measure.annotators is None or measure.annotators.shape[0] < 2:
        return pd.DataFrame()
    result = compute(_dataset, human, level=level, coefficient=coefficient, method="boot-both",
                     n_resamples=n_resamples, rng=seed, systems=systems or None)
    others = "the others" if result.annotators == "persons" else "the other slots"
    return pd.DataFrame({"cluster": np.nan, "metric": [f"{r.annotator} vs {others}" for r in result.rows],
                         "estimate": [r.estimate for r in result.rows], "low": [r.low for r in result.rows],
                         "high": [r.high for r in result.rows], "kind": "human ceiling"})
