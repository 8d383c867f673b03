"""Finished pieces are reused (issue 33): per-metric intervals and per-pair tests, keyed on small keys, so a change
of the selected metrics computes only what is new (metaeval_ui/data/resampled.py). Counted kernel calls, no timing."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit as st

from metaeval_core.data.synthetic import synthetic_dataset
from metaeval_core.stats import resampling, significance
from metaeval_ui.data import resampled
from metaeval_ui.data.datasets import dataset_key

METRICS = ("metric.strong", "metric.good", "metric.fair", "metric.weak", "metric.noise")
HUMAN = "human.quality"


@pytest.fixture
def fresh_store(monkeypatch):
    store = resampled._ResultStore(max_entries=96)
    monkeypatch.setattr(resampled, "_store", lambda: store)
    return store


def _counting(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args[1] if len(args) > 1 else args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("level,coefficient,method", [
    ("system", "kendall", "perm-both"), ("input", "kendall", "perm-both"), ("global", "pearson", "perm-inputs"),
    ("global", "kendall", "boot-both"), ("system", "pearson", "williams"),
])
def test_fewer_metrics_reuse_the_pairs_already_tested(fresh_store, monkeypatch, level, coefficient, method):
    ds = synthetic_dataset()
    calls = _counting(monkeypatch, significance, "compare_all_pairs")
    args = (HUMAN, level, coefficient, method, "greater", "judged", "", 100, 7)
    resampled.pairwise_uncorrected(ds, resampled.pairwise_key(dataset_key(ds), METRICS, *args))
    chosen = ("metric.noise", "metric.strong", "metric.weak")  # another order, fewer metrics
    part = resampled.pairwise_uncorrected(ds, resampled.pairwise_key(dataset_key(ds), chosen, *args))
    assert len(calls) == 1 and part.metrics == chosen
    # The cut is the table of those metrics: each cell is drawn from the same seed whatever the others.
    fresh = significance.compare_all_pairs(ds, list(chosen), HUMAN, level=level, coefficient=coefficient,
                                           method=method, correction="none", family="none", n_resamples=100, rng=7)
    for field in ("estimates", "delta", "pvalue", "n_defined"):
        np.testing.assert_array_equal(getattr(part, field), getattr(fresh, field), err_msg=field)
    other = ("metric.strong", "metric.good")
    resampled.pairwise_uncorrected(ds, resampled.pairwise_key(dataset_key(ds), other, *args[:-1], 8))
    assert len(calls) == 3  # the fresh table above, then another seed: another table


def test_a_superset_with_other_systems_is_not_cut(fresh_store, monkeypatch):
    ds = synthetic_dataset()
    calls = _counting(monkeypatch, significance, "compare_all_pairs")
    args = (HUMAN, "system", "kendall", "perm-both", "greater", "judged", "", 100, 3)
    resampled.pairwise_uncorrected(ds, resampled.pairwise_key(dataset_key(ds), METRICS, *args))
    # Same metrics, fewer systems: a different key (the selection is part of it), computed afresh.
    systems = ",".join(ds.systems[:-2])
    resampled.pairwise_uncorrected(ds, resampled.pairwise_key(dataset_key(ds), METRICS[:3], *args[:6], systems,
                                                              *args[7:]))
    assert len(calls) == 2


def _counting_metrics(monkeypatch):
    """The metrics each call of the several-metric interval kernel computes, flattened."""
    calls = []
    original = resampling.dataset_confidence_intervals

    def counted(dataset, metrics, *args, **kwargs):
        calls.extend(metrics)
        return original(dataset, metrics, *args, **kwargs)

    monkeypatch.setattr(resampling, "dataset_confidence_intervals", counted)
    return calls


@pytest.fixture
def fresh_intervals(monkeypatch):
    store = resampled._ResultStore(max_entries=96)
    monkeypatch.setattr(resampled, "_interval_store", lambda: store)
    return store


@pytest.mark.parametrize("level", ["system", "input", "global"])
def test_changing_the_metrics_reuses_each_metrics_interval(fresh_intervals, monkeypatch, level):
    ds = synthetic_dataset()
    calls = _counting_metrics(monkeypatch)
    key = dataset_key(ds)

    def intervals(metrics):
        return resampled.confidence_intervals(ds, key, tuple(metrics), HUMAN, level, "kendall", "boot-both",
                                              "judged", "", 0.95, 100, 11)

    first = intervals(METRICS[:3])
    second = intervals(METRICS[1:4])  # two already computed, one new
    assert calls == [*METRICS[:3], METRICS[3]]
    assert second[:2] == first[1:]
    # The single-metric wrapper reads the same pieces, and equals the core's one-metric interval.
    one = resampled.confidence_interval(ds, key, METRICS[2], HUMAN, level, "kendall", "boot-both", "judged", "",
                                        0.95, 100, 11)
    assert calls == [*METRICS[:3], METRICS[3]] and one == first[2]
    alone = resampling.dataset_confidence_interval(ds, METRICS[2], HUMAN, level=level, coefficient="kendall",
                                                   method="boot-both", n_resamples=100, rng=11)
    assert (one["low"], one["high"]) == (alone.low, alone.high)


def test_a_table_over_the_page_budget_is_refused_with_what_fits(fresh_store, monkeypatch):
    ds = synthetic_dataset()
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", 1e-6)
    calls = _counting(monkeypatch, significance, "compare_all_pairs")
    key = resampled.pairwise_key(dataset_key(ds), METRICS, HUMAN, "input", "kendall", "perm-both", "greater",
                                 "judged", "", 1000, 0)
    with pytest.raises(ValueError, match=rf"PERM-BOTH on 10 pairs of {ds.n_systems} systems x [\d,]+ inputs with "
                                         r"1,000 resamples would take .* \(the page stops at 0 s\)"):
        resampled.pairwise_uncorrected(ds, key)
    assert calls == []


def test_the_overview_stops_at_its_budget_and_keeps_the_intervals_it_finished(fresh_store, fresh_intervals,
                                                                               monkeypatch):
    from metaeval_ui.data import ranking

    ds = synthetic_dataset()
    calls = _counting_metrics(monkeypatch)
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", 1e-9)
    # At the input level the intervals run one metric at a time (the system level computes them in one call).
    with pytest.raises(ValueError, match=r"^stopped after .* at 20% of 5 BOOT-BOTH intervals with 100 resamples "
                                         r"\(the page stops at 0 s\): use fewer metrics or resamples"):
        ranking.metrics_board(ds, dataset_key(ds), METRICS, HUMAN, "input", "kendall", "judged", "", 100, 12)
    assert calls == [METRICS[0]]
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", 60.0)
    board = ranking.metrics_board(ds, dataset_key(ds), METRICS, HUMAN, "input", "kendall", "judged", "", 100, 12)
    assert calls == list(METRICS) and board.table is not None  # the first interval was not computed again


def test_the_overviews_table_has_what_its_intervals_leave(fresh_store, monkeypatch):
    # One clock for the Overview (issue 33): its intervals come first, so the table is decided against what they
    # leave of the page's 60 s, before it starts (priced by the cost model) and again when it starts (measured).
    from metaeval_ui.data import ranking

    interval_store = resampled._ResultStore(max_entries=96)
    monkeypatch.setattr(resampled, "_interval_store", lambda: interval_store)
    ds = synthetic_dataset()
    key = dataset_key(ds)
    options = (HUMAN, "global", "kendall", "judged", "", 1000, 0)
    expected = resampled.intervals_seconds(ds, key, METRICS, HUMAN, "global", "kendall", "boot-both", "judged", "",
                                           0.95, 1000, 0)
    assert expected > 0
    spent = []
    original = resampled.pairwise_decision

    def recorded(*args, spent_seconds=0.0, **kwargs):
        spent.append(kwargs.get("spent", spent_seconds))
        return original(*args, **kwargs)

    monkeypatch.setattr(ranking, "pairwise_decision", recorded)
    ranking.leaderboard_decision(ds, key, METRICS, *options)
    assert spent == [pytest.approx(expected)]
    resampled.confidence_intervals(ds, key, METRICS, HUMAN, "global", "kendall", "boot-both", "judged", "", 0.95,
                                   1000, 0)
    assert resampled.intervals_seconds(ds, key, METRICS, HUMAN, "global", "kendall", "boot-both", "judged", "",
                                       0.95, 1000, 0) == 0.0
    ranking.leaderboard_decision(ds, key, METRICS, *options)
    assert spent[-1] == 0.0
    # Less budget, other decision: a table that runs in full with the whole minute is refused with none of it left.
    pkey = resampled.pairwise_key(key, METRICS, HUMAN, "global", "kendall", "perm-both", "greater", "judged", "",
                                  1000, 0)
    assert resampled.pairwise_decision(ds, pkey).action == "run"
    late = resampled.pairwise_decision(ds, pkey, spent=resampled.MAX_TABLE_SECONDS)
    assert late.action == "refuse" and "of it for the intervals" in late.sentence
