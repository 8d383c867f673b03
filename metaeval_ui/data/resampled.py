"""Cached resampled results: confidence intervals and pairwise significance tables, with the size guards
that refuse, with what to change, a table that would run for minutes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

import numpy as np
import streamlit as st

from metaeval_core.stats import resampling as _resampling, significance as _significance
from metaeval_core.data.dataset import Dataset
from metaeval_ui.data.datasets import DatasetKey


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


@st.cache_data(max_entries=128, show_spinner=False)
def confidence_intervals(
    _dataset: Dataset,
    key: DatasetKey,
    metrics: tuple[str, ...],
    human: str,
    level: str,
    coefficient: str,
    method: str,
    pool: str,
    systems: str,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> list[dict]:
    """:func:`confidence_interval` for several metrics (the same dicts, in the metrics' order), computed together:
    at the system level the draws and the human's side are shared (``dataset_confidence_intervals``). The Overview,
    Correlations and Confidence intervals pages ask for the sidebar's metrics with this one key."""
    for metric in metrics:
        check_interval_size(_dataset, metric, human, coefficient, method, pool, systems, n_resamples)
    intervals = _resampling.dataset_confidence_intervals(
        _dataset, list(metrics), human, level=level, coefficient=coefficient, method=method, pool=pool,
        systems=systems or None, confidence_level=confidence_level, n_resamples=n_resamples, rng=seed,
    )
    out = []
    for metric, ci in zip(metrics, intervals):
        row = ci.to_dict()
        row.update(metric=metric, human=human)
        out.append(row)
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
    # The systems compare_all_pairs uses (rated by the human measure and scored by every metric): the size and the
    # refusal name those, not every system of the selection.
    used = _dataset.select_systems(systems or None).scored_by([human, *metrics])
    check_table_size(used.matrix(human).shape, len(metrics), level=level, coefficient=coefficient, method=method,
                     n_resamples=n_resamples)
    table = _significance.compare_all_pairs(
        _dataset, list(metrics), human, level=level, coefficient=coefficient, method=method,
        alternative=alternative, correction="none", family="none", alpha=0.05, n_resamples=n_resamples, rng=seed,
        pool=pool, systems=systems or None, progress=progress,
    )
    _store().put(key, table)
    return table
