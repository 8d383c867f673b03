"""Result objects as pandas tables (``to_frame()`` and :func:`metaeval_core.to_frame`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metaeval_core as me

METRICS = ["metric.strong", "metric.weak"]


def test_correlation_result_is_a_one_row_frame_with_its_fields(demo):
    result = me.correlate(demo, "metric.strong", "human.quality", level="system", coefficient="kendall")
    frame = result.to_frame()
    assert frame.shape[0] == 1
    assert frame.loc[0, "estimate"] == pytest.approx(result.estimate)
    assert list(frame.columns) == list(result.to_dict())


def test_intervals_of_several_metrics_stack_into_one_table_indexed_by_metric(demo):
    intervals = [me.dataset_confidence_interval(demo, m, "human.quality", level="system", coefficient="kendall",
                                                method="boot-both", n_resamples=200, rng=0) for m in METRICS]
    table = me.to_frame(intervals, index=METRICS)
    assert list(table.index) == METRICS
    for metric, ci in zip(METRICS, intervals):
        assert table.loc[metric, "low"] == pytest.approx(ci.low)
        assert table.loc[metric, "high"] == pytest.approx(ci.high)


def test_pairwise_table_gives_one_row_per_ordered_pair(demo):
    metrics = list(demo.metric_measures)[:3]
    table = me.compare_all_pairs(demo, metrics, "human.quality", level="system", coefficient="kendall", method="perm-both",
                                 n_resamples=100, rng=0)
    frame = table.to_frame()
    k = len(table.metrics)
    assert len(frame) == k * (k - 1)
    assert set(frame.columns) >= {"x", "y", "delta", "pvalue", "significant"}
    assert not (frame["x"] == frame["y"]).any()


def test_undefined_values_are_nan_in_the_frame(demo):
    result = me.correlate(demo, "metric.strong", "human.quality", level="system", coefficient="kendall")
    undefined = type(result)(**{**result.__dict__, "estimate": float("nan")})
    assert np.isnan(undefined.to_frame().loc[0, "estimate"])


def test_to_frame_names_what_it_cannot_table():
    with pytest.raises(TypeError, match="results"):
        me.to_frame(3)
    with pytest.raises(TypeError, match="has no to_frame"):
        me.to_frame([object()])
    assert me.to_frame([]).empty
    with pytest.raises(ValueError, match="index has 1 labels"):
        me.to_frame([], index=["a"])


def test_readme_api_example_runs():
    """The README's Python example, verbatim in spirit: load, correlate with intervals, a DataFrame."""
    ds = me.load_dataset("demo")
    metrics = list(ds.metric_measures)[:3]
    table = me.to_frame([me.dataset_confidence_interval(ds, m, "human.quality", level="system",
                                                        coefficient="kendall", method="boot-both",
                                                        n_resamples=200, rng=0) for m in metrics], index=metrics)
    assert isinstance(table, pd.DataFrame) and len(table) == len(metrics)
