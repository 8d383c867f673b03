"""Cached access to datasets and core computations, keyed on small keys only.

* Datasets from the registry are ``st.cache_resource`` objects keyed on (dataset id, data directory);
  uploaded datasets live in the session's own state, keyed by the sha256 of their content (never global).
* Computations are ``st.cache_data`` functions taking the dataset as ``_dataset`` (leading underscore:
  never hashed) plus its small :data:`DatasetKey` ``(id, version)`` and frozen option tuples, with
  bounded ``max_entries``.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from metaeval_core.data import registry as _registry, upload as _upload
from metaeval_core.stats import resampling as _resampling, significance as _significance
from metaeval_core.stats.correlation import correlate
from metaeval_core.data.dataset import Dataset
from metaeval_core.data.synthetic import synthetic_dataset

from metaeval_ui import tables

DatasetKey = tuple[str, str]  # (dataset id, version)
DEMO_ID = "demo"
UPLOAD_PREFIX = "upload:"
MAX_UPLOADS_PER_SESSION = 3
MAX_UPLOAD_MB = 50  # the core's UploadLimits default; checked again (also after gunzip) by the reader








@dataclass(frozen=True)
class DatasetChoice:
    """One entry of the dataset picker (a registry DatasetInfo, the demo, or an upload)."""

    id: str
    title: str
    available: bool = True
    reason: str = ""
    description: str = ""
    citation: str = ""
    licence: str = ""


def data_dir_key() -> str:
    """The data directory as a string (part of cache keys: another directory is another catalogue)."""
    try:
        return str(_registry.data_dir())
    except Exception:  # noqa: BLE001 - a misconfigured directory must not break the app
        return os.environ.get("METAEVAL_DATA_DIR", "")


@st.cache_data(max_entries=8, ttl=300, show_spinner=False)
def list_choices(data_dir: str) -> tuple[DatasetChoice, ...]:
    """The datasets the picker offers for ``data_dir`` (the demo first)."""
    demo = DatasetChoice(DEMO_ID, "Synthetic demo (offline)", description="Generated data with a known truth.")
    # Score-matrix datasets only: pairwise-verdict datasets (kind 'pairwise') are the judges pages' own.
    infos = _registry.list_datasets(data_dir=Path(data_dir) if data_dir else None, kind="scores")
    out = [
        DatasetChoice(
            id=str(info.id),
            title=str(getattr(info, "title", "") or info.id),
            available=bool(getattr(info, "available", True)),
            reason=str(getattr(info, "reason", "") or ""),
            description=str(getattr(info, "description", "") or ""),
            citation=str(getattr(info, "citation", "") or ""),
            licence=str(getattr(info, "licence", "") or ""),
        )
        for info in infos
    ]
    if not any(c.id == DEMO_ID for c in out):
        out.insert(0, demo)
    return tuple(out)


@st.cache_resource(max_entries=6, show_spinner="Loading dataset…")
def load_registered(dataset_id: str, data_dir: str) -> Dataset:
    """A built-in dataset, loaded once per process and shared (read-only arrays) by every session."""
    if dataset_id == DEMO_ID:
        return synthetic_dataset()
    return _registry.load_dataset(dataset_id, data_dir=Path(data_dir) if data_dir else None)


def fetch(dataset_id: str, data_dir: str) -> list[Path]:
    """Download a registry dataset's files (clears the catalogue cache so it shows as available)."""
    paths = _registry.fetch_dataset(dataset_id, data_dir=Path(data_dir) if data_dir else None)
    list_choices.clear()
    return paths


def content_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_upload(data: bytes, name: str, *, human_measures: Sequence[str] | None = None) -> Dataset:
    """Parse an uploaded file with the core reader (raises UploadError/DatasetError on bad files)."""
    digest = content_sha256(data)
    options: dict[str, Any] = {"name": name, "dataset_id": f"{UPLOAD_PREFIX}{digest[:12]}",
                               "limits": _upload.UploadLimits.from_environment()}
    if human_measures:
        options["human_measures"] = list(human_measures)
    return _upload.read_user_file(data, **options)


def dataset_key(dataset: Dataset) -> DatasetKey:
    return (dataset.id, dataset.version)


# -- computations ------------------------------------------------------------------------------------------


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


def finite_or_none(value: float) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


# -- resampling: confidence intervals and significance ------------------------------------------------------

MAX_RESAMPLES = 10_000  # k beyond this takes minutes at the global level and shifts percentiles by < 0.005


@st.cache_data(max_entries=512, show_spinner=False)
def confidence_interval(
    _dataset: Dataset,
    key: DatasetKey,
    metric: str,
    human: str,
    level: str,
    coefficient: str,
    method: str,
    pool: str,
    systems: str,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> dict:
    """One interval as a plain dict (``ConfidenceInterval.to_dict()`` plus the metric and human)."""
    check_interval_size(_dataset, metric, human, coefficient, method, pool, systems, n_resamples)
    ci = _resampling.dataset_confidence_interval(
        _dataset, metric, human, level=level, coefficient=coefficient, method=method, pool=pool,
        systems=systems or None, confidence_level=confidence_level, n_resamples=n_resamples, rng=seed,
    )
    out = ci.to_dict()
    out.update(metric=metric, human=human)
    return out


def check_interval_size(dataset: Dataset, metric: str, human: str, coefficient: str, method: str, pool: str,
                        systems: str, n_resamples: int) -> None:
    """Refuse, with what to change, a soft-pairwise-accuracy interval that would run for minutes: resampled
    inputs recompute every p-value of the metric and the humans on every resample (docs/methods.md sec. 11.3)."""
    if coefficient != "soft-pairwise-accuracy" or method not in ("boot-inputs", "boot-both"):
        return
    from metaeval_core.stats.spa import estimated_spa_seconds

    subset = dataset.select_systems(systems or None)
    n_systems = subset.n_systems
    x, z = subset.matrix(metric, pool=pool), subset.matrix(human)
    seconds = (estimated_spa_seconds(n_systems, x.shape[1], n_resamples, complete=not np.isnan(x).any())
               + estimated_spa_seconds(n_systems, z.shape[1], n_resamples, complete=not np.isnan(z).any()))
    if seconds > MAX_TABLE_SECONDS:
        raise ValueError(
            f"a {method} interval of soft-pairwise-accuracy on {n_systems} systems x {subset.n_judged} inputs with "
            f"{n_resamples:,} resamples would take about {seconds / 60:.0f} min here (the page stops at "
            f"{MAX_TABLE_SECONDS:.0f} s): use BOOT-SYSTEMS (the p-values are then computed once) or fewer resamples, "
            "or the command line (metaeval correlate --ci)"
        )


class _ResultStore:
    """A small thread-safe LRU shared by all sessions, for results computed with a progress callback.

    (``st.cache_data`` would record the progress-bar updates made inside the cached call and try to replay
    them on the bar of a later run.) Keys are small tuples that include the dataset's (id, version).
    """

    def __init__(self, max_entries: int) -> None:
        self._items: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def get(self, key: tuple) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: tuple, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)


@st.cache_resource
def _store() -> _ResultStore:
    return _ResultStore(max_entries=48)


def pairwise_is_cached(key: tuple) -> bool:
    return _store().get(key) is not None


def pairwise_key(dataset_key: DatasetKey, metrics: tuple[str, ...], human: str, level: str, coefficient: str,
                 method: str, alternative: str, pool: str, systems: str, n_resamples: int, seed: int) -> tuple:
    return ("pairs", dataset_key, metrics, human, level, coefficient, method, alternative, pool, systems,
            n_resamples, seed)


# A pairwise table estimated to take longer than this is refused with the reason instead of freezing the page.
MAX_TABLE_SECONDS = 60.0


def check_table_size(shape: tuple[int, int], n_metrics: int, **options) -> None:
    """Raise ValueError naming the size and what to change when a table would run for minutes."""
    seconds = _significance.estimated_table_seconds(shape[0], shape[1], n_metrics, **options)
    if seconds > MAX_TABLE_SECONDS:
        advice = ("PERM-SYSTEMS or BOOT-SYSTEMS (soft pairwise accuracy's p-values are then computed once)"
                  if options.get("coefficient") == "soft-pairwise-accuracy"
                  else "Kendall or pairwise accuracy at the input level, or the system level")
        raise ValueError(
            f"{options['method']} on {n_metrics * (n_metrics - 1) // 2} pairs of {shape[0]} systems x {shape[1]} "
            f"inputs with {options['n_resamples']:,} resamples would take about {seconds / 60:.0f} min here "
            f"(the page stops at {MAX_TABLE_SECONDS:.0f} s): use fewer metrics or resamples, {advice}"
        )


def pairwise_uncorrected(_dataset: Dataset, key: tuple, *, progress: Callable[[float], None] | None = None):
    """``compare_all_pairs`` without correction (alpha/correction/family are applied afterwards, cheaply).

    ``key`` comes from :func:`pairwise_key`; results are cached in a bounded LRU shared by sessions.
    """
    found = _store().get(key)
    if found is not None:
        return found
    (_, _, metrics, human, level, coefficient, method, alternative, pool, systems, n_resamples, seed) = key
    check_table_size(_dataset.select_systems(systems or None).matrix(human).shape, len(metrics), level=level,
                     coefficient=coefficient, method=method, n_resamples=n_resamples)
    table = _significance.compare_all_pairs(
        _dataset, list(metrics), human, level=level, coefficient=coefficient, method=method,
        alternative=alternative, correction="none", family="none", alpha=0.05, n_resamples=n_resamples, rng=seed,
        pool=pool, systems=systems or None, progress=progress,
    )
    _store().put(key, table)
    return table


@st.cache_data(max_entries=4, show_spinner=False)
def reproduction(data_dir: str) -> pd.DataFrame:
    """Every published number of metaeval_core.analyses.reproduce recomputed on ``data_dir``'s datasets (~1 s)."""
    from metaeval_core.analyses.reproduce import reproduce, reproduction_records

    def load(dataset_id: str) -> Dataset:
        return load_registered(dataset_id, data_dir)

    return pd.DataFrame(reproduction_records(reproduce(load)))


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
