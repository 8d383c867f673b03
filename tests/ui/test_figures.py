"""Unit tests of the pure figure builders (metaeval_ui/figures/: the shared modules) and summaries (metaeval_ui/tables.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from metaeval_ui import figures, tables


def corr_frame(estimates, humans=("human.q",)):
    rows = []
    for human in humans:
        for k, est in enumerate(estimates):
            rows.append({"metric": f"m{k}", "human": human, "estimate": est, "n": 16, "n_undefined": 0})
    return pd.DataFrame(rows)


def test_correlation_bar_one_bar_per_metric_and_undefined_is_labelled_not_zeroed():
    fig = figures.correlation_bar(corr_frame([0.5, float("nan"), -0.2]), title="kendall")
    assert isinstance(fig, go.Figure)
    bar, labels = fig.data  # the bars and their value labels (a text trace above each bar)
    assert list(bar.x) == ["m0", "m1", "m2"]
    assert labels.text[1] == "undefined"
    assert bar.marker.opacity[1] == 0.0  # no visible bar for an undefined value
    assert "estimate = 0.500" in bar.hovertext[0]
    assert fig.layout.yaxis.range == (-1.05, 1.15)


def test_correlation_bar_groups_by_human_and_handles_empty():
    fig = figures.correlation_bar(corr_frame([0.1, 0.2], humans=("a", "b")))
    assert [t.name for t in fig.data] == ["a", "b"]  # one panel per human measure (small multiples)
    assert [a.text for a in fig.layout.annotations] == ["a", "b"] and fig.data[1].xaxis == "x2"
    empty = figures.correlation_bar(pd.DataFrame())
    assert empty.layout.annotations[0].text == "No correlations to show"


def test_names_are_html_escaped():
    frame = corr_frame([0.3])
    frame.loc[0, "metric"] = "<script>x</script>"
    fig = figures.correlation_bar(frame)
    assert fig.data[0].x[0] == "&lt;script&gt;x&lt;/script&gt;"
    assert "<script>" not in fig.data[0].hovertext[0]


def test_histogram_and_box_grids(demo):
    measures = ("human.quality", "metric.strong")
    hist = tables.histograms(demo, measures, bins=20)
    assert set(hist["measure"]) == set(measures)
    # Likert-scale human scores are averaged over 3 annotators: at most 13 distinct means -> one bar per value.
    assert hist[hist["measure"] == "metric.strong"]["count"].sum() == demo.n_systems * demo.n_judged
    fig = figures.histogram_grid(hist)
    assert len(fig.data) == 2 and all(isinstance(t, go.Bar) for t in fig.data)
    stats = tables.box_stats(demo, measures)
    assert (stats["q1"] <= stats["median"]).all() and (stats["median"] <= stats["q3"]).all()
    box = figures.box_grid(stats)
    assert len(box.data) == 2 and box.data[0].q1[0] == pytest.approx(stats["q1"][0])
    assert figures.histogram_grid(pd.DataFrame()).layout.annotations


def ci_frame():
    return pd.DataFrame([
        {"metric": "a", "method": "BOOT-BOTH", "estimate": 0.2, "low": 0.0, "high": 0.4, "n_defined": 99,
         "n_resamples": 100, "confidence_level": 0.95},
        {"metric": "b", "method": "BOOT-BOTH", "estimate": 0.6, "low": 0.5, "high": 0.7, "n_defined": 100,
         "n_resamples": 100, "confidence_level": 0.95},
        {"metric": "c", "method": "BOOT-BOTH", "estimate": float("nan"), "low": float("nan"),
         "high": float("nan"), "n_defined": 0, "n_resamples": 100, "confidence_level": 0.95},
        {"metric": "a", "method": "FISHER", "estimate": 0.2, "low": 0.1, "high": 0.3, "n_defined": None,
         "n_resamples": None, "confidence_level": 0.95},
        {"metric": "b", "method": "FISHER", "estimate": 0.6, "low": 0.5, "high": 0.7, "n_defined": None,
         "n_resamples": None, "confidence_level": 0.95},
    ])


def test_order_metrics_by_estimate_name_width_with_undefined_last():
    frame = ci_frame()
    assert figures.order_metrics(frame, "estimate") == ["b", "a", "c"]
    assert figures.order_metrics(frame, "name") == ["a", "b", "c"]
    assert figures.order_metrics(frame, "width") == ["b", "a", "c"]  # mean widths 0.2 < 0.3, undefined last
    with pytest.raises(ValueError):
        figures.order_metrics(frame, "colour")


def test_forest_plot_offsets_methods_and_hover_has_exact_values():
    fig = figures.forest_plot(ci_frame(), sort="estimate")
    assert [t.name for t in fig.data if t.showlegend is not False] == ["BOOT-BOTH", "FISHER"]  # legend: methods
    drawn = {(t.name, t.hovertext[0].split("</b>")[0][3:]): t for t in fig.data if t.hovertext}
    boot_a, fisher_a, boot_b, boot_c = (drawn[k] for k in (("BOOT-BOTH", "a"), ("FISHER", "a"), ("BOOT-BOTH", "b"),
                                                            ("BOOT-BOTH", "c")))
    # Same metric, different methods: different y (offset markers), both near the metric's row.
    assert boot_a.y[0] != fisher_a.y[0] and abs(boot_a.y[0] - fisher_a.y[0]) < 1
    assert boot_a.marker.color == fisher_a.marker.color != boot_b.marker.color  # the metric's colour
    assert boot_a.marker.symbol != fisher_a.marker.symbol  # the method's symbol
    assert list(fig.layout.yaxis.ticktext) == ["b", "a", "c"]
    assert boot_b.error_x.array[0] == pytest.approx(0.1) and boot_b.error_x.arrayminus[0] == pytest.approx(0.1)
    assert "defined resamples: 99 of 100" in boot_a.hovertext[0]
    assert "interval = [0.0000, 0.4000] (95%)" in boot_a.hovertext[0]
    assert math.isnan(boot_c.x[0])  # undefined: no marker, never a fake 0


def test_pvalue_heatmap_fills_significant_and_outlines_corrected():
    metrics = ["x", "y", "z"]
    p = np.array([[np.nan, 0.01, 0.2], [0.6, np.nan, 0.04], [0.9, 0.5, np.nan]])
    sig = p < 0.05
    cor = np.zeros_like(sig)
    cor[0, 1] = True
    hover = [[f"{a} vs {b}" for b in metrics] for a in metrics]
    fig = figures.pvalue_heatmap(metrics, p, sig, cor, hover=hover, alpha=0.05)
    heat = fig.data[0]
    z = np.array(heat.z, dtype=float)
    assert z[0, 1] == pytest.approx(0.01) and z[1, 2] == pytest.approx(0.04)
    assert np.isnan(z[0, 2]) and np.isnan(z[1, 0])  # not significant: not filled
    shapes = fig.layout.shapes
    assert len(shapes) == 1 and (shapes[0].x0, shapes[0].y0) == (0.5, -0.5)
    assert heat.customdata[0][1] == "x vs y"
    assert list(fig.layout.xaxis.ticktext) == metrics


def test_comparison_sentence_reads_like_the_spec():
    text = figures.comparison_sentence(
        "rouge-2.f1", "rouge-1.f1", "expert.relevance", delta=0.12, pvalue=0.003, method="PERM-BOTH",
        n_resamples=1000, significant=True, significant_corrected=True, alpha=0.05, correction="bonferroni",
        family="row")
    assert text.startswith("H1: rouge-2.f1 correlates better with expert.relevance than rouge-1.f1: "
                           "delta = 0.120, p = 0.003 (PERM-BOTH, 1000 resamples).")
    assert "still significant after Bonferroni over the row family" in text
    no = figures.comparison_sentence("a", "b", "h", delta=-0.1, pvalue=0.7, method="WILLIAMS", n_resamples=None,
                                     significant=False, significant_corrected=False, alpha=0.05,
                                     correction="holm", family="table")
    assert "Not significant at alpha = 0.05" in no and "resamples" not in no


def test_tables_overview_missing_and_means(demo):
    counts = tables.overview_counts(demo)
    assert counts["systems"] == 16 and counts["judged inputs"] == 100 and counts["unjudged inputs"] == 2000
    assert counts["human measures"] == 1 and counts["metric measures"] == 5
    attrs = tables.attribute_summary(demo)
    assert attrs.loc[0, "values"] == "ext (4), abs (12)"
    missing = tables.missing_summary(demo).set_index("measure")
    assert missing.loc["human.quality", "missing (judged)"] == 0
    assert missing.loc["metric.strong", "scored unjudged inputs"] == 2000
    assert missing.loc["human.quality", "annotators"] == 3
    means = tables.system_means(demo, ["metric.strong"], pool="all")
    expected = demo.measures["metric.strong"].scores.mean(axis=1)
    np.testing.assert_allclose(means["metric.strong"], expected)
    assert list(means["type"])[:4] == ["ext"] * 4


def test_doubts_flag_intervals_through_zero_and_estimates_inside_chance():
    import pandas as pd
    from metaeval_ui import tables, text

    ranks = pd.DataFrame({"cluster": [1, 1, 2], "metric": ["a", "b", "c"], "estimate": [0.6, 0.4, 0.1],
                          "low": [0.2, -0.1, -0.3], "high": [0.9, 0.8, 0.5], "kind": "metric"})
    groups = pd.DataFrame({"metrics": [("a", "b", "c")], "label": ["random"], "estimate": [0.0], "low": [-0.45],
                           "high": [0.45], "n_resamples": [100]})
    ranks["doubt"] = tables.doubts(ranks, groups)
    assert list(ranks["doubt"]) == ["", "its interval includes 0 and its estimate lies inside the chance range "
                                        "[-0.450, 0.450]", "its interval includes 0 and its estimate lies inside "
                                        "the chance range [-0.450, 0.450]"]
    markdown = tables.leaderboard_markdown(ranks, "kendall")
    assert "**a**" in markdown and "**b ⚠**" in markdown and "c ⚠" not in markdown  # bold rank 1 only
    sentence = text.doubt_sentence(ranks)
    assert sentence.startswith("⚠ Rank 1 is not evidence of a good metric here: b (") and "c (" not in sentence
    assert text.doubt_sentence(ranks.assign(doubt="")) == ""


def test_pvalue_heatmap_text_stays_legible_in_big_tables():
    """Beyond 12 metrics the cells are narrow: the p-values shorten (".05", "<.01") instead of shrinking below the
    11 px the browser walk asks of chart text (WMT22's 21 metrics: "0.04995" at 7 px)."""
    import numpy as np

    from metaeval_ui.figures.significance import pvalue_heatmap

    for n, cell in ((5, "0.04995"), (21, ".05")):
        p = np.full((n, n), 0.04995)
        p[0, 1] = 0.003
        fig = pvalue_heatmap([f"m{k}" for k in range(n)], p, p < 0.05, p < 0.01)
        assert fig.data[1].textfont.size == 11
        texts = list(fig.data[1].text)
        assert texts[2] == cell  # row 0, column 2
        if n > 12:
            assert texts[1] == "<.01" and max(len(t) for t in texts) <= 4
