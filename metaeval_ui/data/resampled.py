"""Cached resampled results: confidence intervals and pairwise significance tables, with the size guards
that refuse, with what to change, a table that would run for minutes.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from typing import Any, Callable

import numpy as np
import streamlit as st

from metaeval_core.stats import budget as _budget, resampling as _resampling, significance as _significance
from metaeval_core.data.dataset import Dataset
from metaeval_ui.data.datasets import DatasetKey


MAX_RESAMPLES = 10_000  # k beyond this takes minutes at the global level and shifts percentiles by < 0.005
# Global-level intervals computed together (sharing draws and the human's side), between two deadline checks.
_GLOBAL_GROUP = 7


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
    """One interval as a plain dict (``ConfidenceInterval.to_dict()`` plus the metric and human), kept per metric
    with :func:`confidence_intervals`."""
    return confidence_intervals(_dataset, key, (metric,), human, level, coefficient, method, pool, systems,
                                confidence_level, n_resamples, seed)[0]


def intervals_deadline(n_intervals: int, method: str, n_resamples: int, *,
                       started: float | None = None) -> Callable[[float], None]:
    """A progress callback that stops a page's intervals past :data:`MAX_TABLE_SECONDS` (they have no estimate;
    each finished interval stays cached, so a rerun continues where the stop left off)."""
    decision = _budget.unpriced(
        f"{n_intervals} {method.upper()} intervals with {n_resamples:,} resamples", budget_seconds=MAX_TABLE_SECONDS,
        advice="fewer metrics or resamples, or the system level", where=f"the page stops at {MAX_TABLE_SECONDS:.0f} s")
    return _budget.deadline(decision, started=started)


@st.cache_resource
def _interval_store() -> "_ResultStore":
    return _ResultStore(max_entries=4096)  # one interval (a small dict) per entry


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
    *,
    progress: Callable[[float], None] | None = None,
) -> list[dict]:
    """:func:`confidence_interval` for several metrics (the same dicts, in the metrics' order).

    Each metric's interval is kept on its own small key (dataset id and version, metric, settings), so a changed
    selection computes only the new metrics and the single-metric :func:`confidence_interval` reuses them. The
    missing ones are computed together at the system level, where ``dataset_confidence_intervals`` shares the
    draws and the human's side, in groups of :data:`_GLOBAL_GROUP` at the global level, elsewhere one at a time;
    ``progress`` is called after each group, so a page's deadline stops between two groups and a rerun continues
    from the finished ones.
    """
    settings = (key, human, level, coefficient, method, pool, systems, float(confidence_level), int(n_resamples),
                int(seed))
    store = _interval_store()
    found = {m: store.get(settings + (m,)) for m in metrics}
    missing = [m for m in dict.fromkeys(metrics) if found[m] is None]
    for metric in missing:  # a kept interval passed the check with these settings
        check_interval_size(_dataset, metric, human, coefficient, method, pool, systems, n_resamples)
    if level == "system" and missing:
        groups = [missing]
    elif level == "global":
        # Several at a time: they share the draws and the human's side (about 0.2 s per WMT22 metric with 1,000
        # resamples), and the deadline still stops between groups.
        groups = [missing[i:i + _GLOBAL_GROUP] for i in range(0, len(missing), _GLOBAL_GROUP)]
    else:
        groups = [[m] for m in missing]
    done = len(metrics) - len(missing)
    for group in groups:
        intervals = _resampling.dataset_confidence_intervals(
            _dataset, group, human, level=level, coefficient=coefficient, method=method, pool=pool,
            systems=systems or None, confidence_level=confidence_level, n_resamples=n_resamples, rng=seed,
        )
        for metric, ci in zip(group, intervals):
            row = ci.to_dict()
            row.update(metric=metric, human=human)
            store.put(settings + (metric,), row)
            found[metric] = row
        done += len(group)
        if progress is not None:
            progress(done / max(len(metrics), 1))
    return [dict(found[m]) for m in metrics]


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

    def items(self) -> list[tuple[tuple, Any]]:
        """A snapshot of the entries, most recently used last."""
        with self._lock:
            return list(self._items.items())

    def put(self, key: tuple, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)


@st.cache_resource
def _store() -> _ResultStore:
    return _ResultStore(max_entries=96)  # a table and its systems per entry


def pairwise_is_cached(key: tuple) -> bool:
    return _store().get(key) is not None


def pairwise_key(dataset_key: DatasetKey, metrics: tuple[str, ...], human: str, level: str, coefficient: str,
                 method: str, alternative: str, pool: str, systems: str, n_resamples: int, seed: int) -> tuple:
    return ("pairs", dataset_key, metrics, human, level, coefficient, method, alternative, pool, systems,
            n_resamples, seed)


# What a page promises: a table is decided against this budget before it starts (run it, run it with sequential
# stopping, or refuse it with what fits; metaeval_core.stats.budget) and stopped when it runs past it.
MAX_TABLE_SECONDS = 60.0


def check_table_size(shape: tuple[int, int], n_metrics: int, **options) -> _budget.CostDecision:
    """The cost decision for a table of ``shape`` (the systems x inputs it uses); raise
    :class:`~metaeval_core.stats.budget.BudgetError` (a ValueError) naming the cost and what fits when refused."""
    return _budget.table_decision(
        shape[0], shape[1], n_metrics, level=options["level"], coefficient=options["coefficient"],
        method=options["method"], n_resamples=options["n_resamples"], budget_seconds=MAX_TABLE_SECONDS,
        where=f"the page stops at {MAX_TABLE_SECONDS:.0f} s").check()


def _used_systems(dataset: Dataset, metrics: tuple[str, ...], human: str, systems: str) -> Dataset:
    # The systems compare_all_pairs uses (rated by the human measure and scored by every metric): the size and the
    # refusal name those, not every system of the selection.
    return dataset.select_systems(systems or None).scored_by([human, *metrics])


def _sub_table(table: _significance.PairwiseTable, metrics: tuple[str, ...]) -> _significance.PairwiseTable:
    index = [table.metrics.index(m) for m in metrics]
    cells = np.ix_(index, index)
    return dataclasses.replace(
        table, metrics=tuple(metrics), estimates=table.estimates[index], delta=table.delta[cells],
        pvalue=table.pvalue[cells], pvalue_corrected=table.pvalue_corrected[cells],
        significant=table.significant[cells], significant_corrected=table.significant_corrected[cells],
        n_defined=table.n_defined[cells])


def _decision_and_systems(dataset: Dataset, key: tuple, spent: float = 0.0
                          ) -> tuple[_budget.CostDecision, tuple[str, ...]]:
    (_, _, metrics, human, level, coefficient, method, _, _, systems, n_resamples, _) = key
    used = _used_systems(dataset, metrics, human, systems)
    z = used.matrix(human)
    where = f"the page stops at {MAX_TABLE_SECONDS:.0f} s"
    if spent >= 1:
        where += f", {spent:.0f} s of it for the intervals"
    left = max(MAX_TABLE_SECONDS - spent, 1e-3 * MAX_TABLE_SECONDS)  # a budget must be positive
    decision = _budget.table_decision(
        *z.shape, len(metrics), level=level, coefficient=coefficient, method=method, n_resamples=n_resamples,
        budget_seconds=left, human_distinct=_budget.human_distinct_values(z), where=where)
    return decision, tuple(used.systems)


def pairwise_decision(_dataset: Dataset, key: tuple, *, spent: float = 0.0) -> _budget.CostDecision:
    """The cost decision of :func:`pairwise_uncorrected` for ``key``, for the page to state before it starts (a
    refusal with its lighter settings, the estimate of its progress bar, the stopping rule). ``spent``: seconds of
    the page's budget that its other work (the Overview's intervals) takes first."""
    return _decision_and_systems(_dataset, key, spent)[0]


def intervals_seconds(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, level: str,
                      coefficient: str, method: str, pool: str, systems: str, confidence_level: float,
                      n_resamples: int, seed: int) -> float:
    """The cost model's estimate of the :func:`confidence_intervals` not yet kept (0 when all are), for a page
    whose intervals and table share one budget."""
    settings = (key, human, level, coefficient, method, pool, systems, float(confidence_level), int(n_resamples),
                int(seed))
    missing = [m for m in dict.fromkeys(metrics) if _interval_store().get(settings + (m,)) is None]
    if not missing:
        return 0.0
    z = _used_systems(_dataset, tuple(missing), human, systems).matrix(human)
    return _significance.estimated_table_seconds(
        *z.shape, len(missing), level=level, coefficient=coefficient, method=method, n_resamples=n_resamples,
        human_distinct=_budget.human_distinct_values(z))


def _cached_superset(key: tuple, systems_used: tuple[str, ...], stopping: str):
    """A cached table of more metrics with the same settings, systems and stopping rule, cut to ``key``'s metrics.

    Every cell of a table is drawn from the same seed whatever the other metrics (common random numbers:
    ``compare_all_pairs`` with an int seed gives ``compare_metrics`` for each cell), so its sub-table is the
    table of fewer metrics: deselecting metrics reuses the pairs already tested."""
    metrics = key[2]
    for other, table in _store().items():
        if (other[0] == "pairs" and other[:2] == key[:2] and other[3:] == key[3:] and set(metrics) <= set(other[2])
                and table.stopping == stopping and _store().get(("systems",) + other) == systems_used):
            return _sub_table(table, metrics)
    return None


def pairwise_uncorrected(_dataset: Dataset, key: tuple, *, progress: Callable[[float], None] | None = None,
                         started: float | None = None):
    """``compare_all_pairs`` without correction (alpha/correction/family are applied afterwards, cheaply).

    ``key`` comes from :func:`pairwise_key`; results are cached in a bounded LRU shared by sessions. The run is
    decided before it starts (:func:`check_table_size`: run, run with sequential stopping, or refuse) and stopped
    with the reason once it runs past :data:`MAX_TABLE_SECONDS` (counted from ``started``, a
    ``time.perf_counter()`` value, when the table is one part of a page's work); a cached table of more metrics is
    reused.
    """
    found = _store().get(key)
    if found is not None:
        return found
    (_, _, metrics, human, level, coefficient, method, alternative, pool, systems, n_resamples, seed) = key
    # With ``started``, the table has what is left of the page's budget (the Overview's intervals came first).
    spent = 0.0 if started is None else time.perf_counter() - started
    decision, systems_used = _decision_and_systems(_dataset, key, spent)
    decision.check()
    table = _cached_superset(key, systems_used, decision.stopping)
    if table is None:
        table = _significance.compare_all_pairs(
            _dataset, list(metrics), human, level=level, coefficient=coefficient, method=method,
            alternative=alternative, correction="none", family="none", alpha=0.05, n_resamples=n_resamples,
            rng=seed, pool=pool, systems=systems or None, progress=_budget.deadline(decision, progress, started=started),
            stopping=decision.stopping,
        )
    _store().put(key, table)
    _store().put(("systems",) + key, systems_used)
    return table
