"""Chance baselines in the dashboard's pure helpers: grouping, the sentence, the reference line (sec. 12)."""

from __future__ import annotations

import pandas as pd
import pytest

from metaeval_ui import figures, tables, text
from metaeval_ui.figures.practice import clusters_figure


def _rows(values, se=0.0003):
    return pd.DataFrame([{"metric": m, "estimate": e, "low": lo, "high": hi, "mc_se": se, "n_resamples": 1000}
                         for m, (e, lo, hi) in values.items()])


def test_metrics_share_a_row_only_when_their_shown_baselines_agree():
    same = tables.chance_groups(_rows({"a": (0.0001, -0.38, 0.38), "b": (0.0002, -0.38, 0.38)}))
    assert len(same) == 1 and same.iloc[0]["metrics"] == ("a", "b")
    assert same.iloc[0]["label"] == "random scores (permuted)"
    split = tables.chance_groups(_rows({"a": (0.44, 0.42, 0.46), "b": (0.41, 0.39, 0.43), "c": (0.44, 0.42, 0.46)}))
    assert list(split["metrics"]) == [("a", "c"), ("b",)] and list(split["label"]) == ["a, c permuted", "b permuted"]
    assert tables.chance_groups(pd.DataFrame()).empty
    # Within Monte Carlo error (Pearson's range depends a little on the values): one line, the members' mean.
    close = tables.chance_groups(_rows({"a": (0.0004, -0.051, 0.052), "b": (0.0, -0.048, 0.050)}, se=0.0008))
    assert len(close) == 1 and close.iloc[0]["low"] == -0.0495
    far = tables.chance_groups(_rows({"a": (0.0004, -0.051, 0.052), "b": (0.0, -0.030, 0.030)}, se=0.0008))
    assert len(far) == 2
    undefined = tables.chance_groups(_rows({"a": (None, None, None), "b": (None, None, None)}))
    assert len(undefined) == 1


def test_the_sentence_says_the_level_or_why_there_is_none():
    one = tables.chance_groups(_rows({"a": (0.0, -0.38, 0.38), "b": (0.0, -0.38, 0.38)}))
    sentence = text.chance_sentence(one, symbol="kendall")
    assert "kendall = 0.000, 95% range [-0.380, 0.380] for every metric here" in sentence and "1,000" in sentence
    two = tables.chance_groups(_rows({"a": (0.44, 0.42, 0.46), "b": (0.41, 0.39, 0.43)}))
    assert "a: kendall = 0.440" in text.chance_sentence(two, symbol="kendall")
    assert text.chance_sentence(None, symbol="τ", note="too many cells").startswith("No chance baseline: too many")


def test_one_line_across_the_forest_plot_or_one_per_metric():
    frame = pd.DataFrame({"metric": ["a", "b"], "method": "BOOT-BOTH", "estimate": [0.8, 0.5], "low": [0.7, 0.3],
                          "high": [0.9, 0.6]})
    shared = tables.chance_groups(_rows({"a": (0.0, -0.3, 0.3), "b": (0.0, -0.3, 0.3)}))
    fig = figures.forest_plot(frame, chance=shared)
    line = next(t for t in fig.data if t.name == figures.CHANCE_NAME)
    assert list(line.x) == [0.0, 0.0, None] and list(line.y) == [-0.5, 1.5, None]
    assert [(s.x0, s.x1) for s in fig.layout.shapes if s.fillcolor == figures._CHANCE_BAND] == [(-0.3, 0.3)]
    apart = tables.chance_groups(_rows({"a": (0.44, 0.42, 0.46), "b": (0.41, 0.39, 0.43)}))
    fig = figures.forest_plot(frame, chance=apart)
    line = next(t for t in fig.data if t.name == figures.CHANCE_NAME)
    assert list(line.x) == [0.44, 0.44, None, 0.41, 0.41, None] and list(line.y)[:2] == [0.5, 1.5]
    assert not any(t.name == figures.CHANCE_NAME for t in figures.forest_plot(frame).data)


def test_the_clusters_chart_widens_to_show_the_chance_band():
    ranks = pd.DataFrame({"cluster": [1, 2], "metric": ["a", "b"], "estimate": [0.8, 0.5]})
    chance = tables.chance_groups(_rows({"a": (0.0, -0.3, 0.3), "b": (0.0, -0.3, 0.3)}))
    fig = clusters_figure(ranks, coefficient="kendall", chance=chance)
    assert any(t.name == figures.CHANCE_NAME for t in fig.data)
    assert fig.layout.xaxis.range[0] < -0.3


def test_the_cached_groups_say_why_there_is_no_baseline_and_raise_a_too_small_k():
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_ui import data

    demo = synthetic_dataset()
    key = data.dataset_key(demo)
    groups, note = data.chance_groups(demo, key, ("metric.strong",), "human.quality", "system",
                                      "soft-pairwise-accuracy", "judged", "", 0.95, 100, 0)
    assert groups.empty and "system-level statistic" in note and ";" not in note
    groups, note = data.chance_groups(demo, key, ("metric.strong", "metric.noise"), "human.quality", "system",
                                      "kendall", "judged", "", 0.95, 20, 0)
    assert note == "" and list(groups["n_resamples"]) == [40] and groups.iloc[0]["metrics"] == ("metric.strong",
                                                                                                 "metric.noise")


@pytest.mark.parametrize("level", ["system", "input", "global"])
def test_several_metrics_chance_in_one_call_equals_each_alone(level):
    # The Overview and the chance table compute every metric's baseline in one call (issue 33: at the global level
    # the permutations' shared work done once per metric made WMT22 zh-en's Overview run ~150 s past its 60 s).
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_ui.data import ranking
    from metaeval_ui.data.datasets import dataset_key

    ds = synthetic_dataset()
    metrics = ("metric.strong", "metric.noise", "metric.fair")
    key = dataset_key(ds)
    together = ranking.chance_rows(ds, key, metrics, "human.quality", level, "kendall", "judged", "", 0.95, 60, 3)
    alone = [ranking.chance_baseline(ds, key, m, "human.quality", level, "kendall", "judged", "", 0.95, 60, 3)
             for m in metrics]
    assert together == alone
