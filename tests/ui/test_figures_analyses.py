"""Unit tests of the paper-analysis figure builders (pure plotly, no streamlit)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from metaeval_ui.figures import analyses as fa

EVIL = "<b>x</b>&y"


def _annotation_texts(fig: go.Figure) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def topk_frame() -> pd.DataFrame:
    rows = []
    for metric, base in (("m1", 0.9), (EVIL, 0.5)):
        for k in (6, 5, 4, 3):
            rows.append({"metric": metric, "k": k, "estimate": base - 0.1 * (6 - k) if k != 3 or metric == "m1"
                         else math.nan, "n": k})
    return pd.DataFrame(rows)


def test_topk_one_line_per_metric_reversed_axis_and_gaps():
    fig = fa.topk_figure(topk_frame(), coefficient="kendall", human="h")
    assert [t.name for t in fig.data] == ["m1", "&lt;b&gt;x&lt;/b&gt;&amp;y"]
    assert [round(x) for x in fig.data[0].x] == [6, 5, 4, 3]  # spread by < 0.5 so whiskers do not overlap
    assert fig.data[0].x[0] != fig.data[1].x[0]
    assert fig.data[1].y[-1] is None  # undefined: a gap, never 0
    assert tuple(fig.layout.xaxis.range) == (6.6, 2.4)  # reversed: all systems on the left
    assert "top 3: undefined" in fig.data[1].hovertext[-1]
    assert "<b>" not in fig.data[1].hovertext[0]


def test_topk_empty():
    fig = fa.topk_figure(pd.DataFrame(columns=["metric", "k", "estimate", "n"]))
    assert _annotation_texts(fig) and not fig.data


def test_f1_bar_sorted_selected_and_undefined():
    frame = pd.DataFrame({"metric": ["a", "b", EVIL], "f1": [0.4, 0.8, math.nan]})
    fig = fa.f1_bar(frame, selected="a")
    bar = fig.data[0]
    assert list(bar.y) == ["&lt;b&gt;x&lt;/b&gt;&amp;y", "a", "b"]  # ascending: best at the top
    assert list(bar.text) == ["undefined", "0.400", "0.800"]
    assert list(bar.marker.opacity) == [0.0, 1.0, 1.0]
    # the selected metric keeps its own colour and an outline, the others are muted (no red "best")
    assert bar.marker.color[1] == fa.measure_colour("a") and bar.marker.color[2] == fa.MUTED
    assert list(bar.marker.line.width)[1] > 0 == list(bar.marker.line.width)[2]
    assert fa.f1_bar(frame.iloc[:0]).layout.annotations


def test_matrix_heatmap_values_blanks_and_humans_bold():
    m = np.array([[1.0, 0.5, np.nan], [0.5, 1.0, -0.2], [np.nan, -0.2, 1.0]])
    fig = fa.matrix_heatmap(["a", "h", EVIL], m, n=np.full((3, 3), 7), humans=["h"], title="t")
    heat = fig.data[0]
    assert heat.zmin == -1 and heat.zmax == 1 and heat.zmid == 0
    assert heat.z[0][2] is None and heat.text[0][2] == ""
    assert heat.text[0][1] == "0.50"
    assert list(heat.x)[1] == "<b>h</b>" and list(heat.x)[2] == "&lt;b&gt;x&lt;/b&gt;&amp;y"
    assert "undefined (n = 7)" in heat.hovertext[0][2]
    many = fa.matrix_heatmap([f"m{i}" for i in range(25)], np.eye(25))
    assert many.data[0].text is None  # no cell labels on big matrices
    assert fa.matrix_heatmap([], np.zeros((0, 0))).layout.annotations


def test_alpha_and_group_bars():
    alphas = pd.DataFrame({"group": ["expert", "expert", "turker", "turker"],
                           "dimension": ["all", "coherence", "coherence", "all"],
                           "alpha": [0.7, 0.6, math.nan, 0.4], "n_units": [10, 5, 5, 10],
                           "n_values": [30, 15, 15, 30], "n_annotators": [3, 3, 5, 5]})
    fig = fa.alpha_bar(alphas)
    assert [t.name for t in fig.data] == ["expert", "turker"]
    assert list(fig.data[0].x) == ["coherence", "all"]  # 'all' last
    assert list(fig.data[1].y) == [None, 0.4]
    assert fig.data[1].text[0] == "undefined"
    corr = pd.DataFrame({"dimension": ["coherence"] * 4, "group_a": ["expert"] * 4, "group_b": ["turker"] * 4,
                         "level": ["system", "global", "system", "global"],
                         "coefficient": ["kendall", "kendall", "pearson", "pearson"],
                         "estimate": [0.5, 0.3, 0.6, 0.4], "n": [16, 1600, 16, 1600], "n_undefined": [0] * 4})
    bars = fa.group_correlation_bar(corr, coefficient="pearson")
    assert [t.name for t in bars.data] == ["system", "global"]
    assert list(bars.data[0].y) == [0.6]
    assert fa.group_correlation_bar(corr.iloc[:0], coefficient="kendall").layout.annotations
    assert fa.alpha_bar(alphas.iloc[:0]).layout.annotations


def test_dumbbell_and_disagreement_curve():
    taus = pd.DataFrame({"metric_a": ["a", "a"], "metric_b": ["b", EVIL], "tau_all": [0.6, 0.5],
                         "tau_top": [0.2, math.nan], "n_inputs_all": [100, 100], "n_inputs_top": [90, 0]})
    fig = fa.dumbbell(taus)
    names = [t.name for t in fig.data]
    assert names[1:] == ["all outputs", "high-scoring range"]  # the dataset's word when given (issue 24)
    assert fa.dumbbell(taus, outputs="stories").data[1].name == "all stories"
    assert "story pair" in fa.disagreement_figure(pd.DataFrame({
        "metric_a": ["a"], "metric_b": ["b"], "bin_low": [0.0], "bin_high": [1.0], "disagreement": [0.1],
        "n_pairs": [3]}), output="story").layout.xaxis.title.text
    assert list(fig.data[0].x) == [0.6, 0.2, None]  # a connector only where both ends exist
    assert list(fig.data[2].y) == ["a · b", "a · &lt;b&gt;x&lt;/b&gt;&amp;y"]
    curve = pd.DataFrame({"metric_a": ["a"] * 2 + ["a"] * 2, "metric_b": ["b"] * 2 + ["c"] * 2,
                          "bin_low": [0.0, 0.5] * 2, "bin_high": [0.5, 1.0] * 2,
                          "disagreement": [0.1, 0.4, 0.3, math.nan], "n_pairs": [10, 10, 30, 0]})
    fig = fa.disagreement_figure(curve)
    pooled = fig.data[-1]
    assert pooled.name == "all metric pairs"
    assert list(pooled.x) == [0.25, 0.75]
    np.testing.assert_allclose(pooled.y, [(0.1 * 10 + 0.3 * 30) / 40, 0.4])  # weighted by pairs
    assert fig.data[1].y[1] is None
    assert fa.dumbbell(taus.iloc[:0]).layout.annotations and fa.disagreement_figure(curve.iloc[:0]).layout.annotations


def test_normality_coverage_and_power():
    frame = pd.DataFrame({"measure": ["m", "h"], "kind": ["metric", "human"], "input_share": [0.3, math.nan],
                          "input_tested": [100, 0]})
    fig = fa.normality_bar(frame, alpha=0.05)
    assert list(fig.data[0].marker.color) == [fa.measure_colour("m"), fa.HUMAN_COLOUR]
    assert list(fig.data[0].marker.opacity) == [1.0, 0.0]
    assert fig.layout.shapes[0].y0 == 0.05
    cov = fa.coverage_figure(pd.DataFrame({"method": ["FISHER", "BOOT-BOTH"], "coverage": [0.7, 0.93]}))
    assert list(cov.data[0].text) == ["0.700", "0.930"] and cov.layout.shapes[0].y0 == 0.95
    power = fa.power_figure(pd.DataFrame({"test": ["PERM-BOTH", "PERM-BOTH", "WILLIAMS"], "k": [0.5, 0.1, 0.1],
                                          "power": [0.9, 0.2, math.nan]}))
    assert [t.name for t in power.data] == ["PERM-BOTH", "WILLIAMS"]
    assert list(power.data[0].x) == [0.1, 0.5] and power.data[1].y[0] is None
    assert fa.coverage_figure(None).layout.annotations and fa.power_figure(pd.DataFrame()).layout.annotations


def test_power_axis_names_the_degradation_and_hover_shows_se():
    frame = pd.DataFrame({"test": ["PERM-BOTH"] * 2, "k": [10, 50], "power": [1.0, 0.4], "se": [0.0, 0.1]})
    tokens = fa.power_figure(frame, degrade="tokens")
    assert "tokens kept" in tokens.layout.xaxis.title.text
    line = next(t for t in tokens.data if t.hovertext)
    assert line.hovertext[1] == "PERM-BOTH, k = 50: power 0.400 ± 0.100 (Monte Carlo se)"
    assert "noise sd" in fa.power_figure(frame, degrade="noise").layout.xaxis.title.text


def test_equal_power_curves_are_drawn_side_by_side_above_the_axis():
    """Three tests all at power 0 (a weak degradation) were three lines on top of each other, hidden in the x axis at
    y = 0: now each is shifted sideways (hover keeps the true k) and the axis starts below 0."""
    frame = pd.DataFrame({"test": ["PERM-BOTH"] * 2 + ["WILLIAMS"] * 2 + ["BOOT-BOTH"] * 2, "k": [10, 50] * 3,
                          "power": [0.0, 0.0, 0.0, 0.0, 0.0, 0.4]})
    fig = fa.power_figure(frame, degrade="tokens")
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    xs = [tuple(t.x) for t in lines]
    assert len(set(xs)) == 3, xs  # no two curves drawn at the same x
    assert all(abs(a - b) < 0.05 * 40 for x in xs for a, b in zip(x, (10, 50)))  # a small shift, not a new k
    assert [h.split(":")[0] for h in lines[0].hovertext] == ["PERM-BOTH, k = 10", "PERM-BOTH, k = 50"]
    assert fig.layout.yaxis.range[0] < 0
    # curves that never coincide are drawn where they are
    apart = fa.power_figure(frame.assign(power=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]))
    assert [tuple(t.x) for t in apart.data if t.mode == "lines+markers"] == [(10, 50)] * 3


def test_dodge_shifts_only_coinciding_series_and_keeps_log_axes_positive():
    from metaeval_ui.figures import dodge

    assert dodge([([1, 2], [0.1, 0.2]), ([1, 2], [0.3, 0.4])]) == [[1, 2], [1, 2]]
    left, right = dodge([([10, 100], [0.0, 0.5]), ([10, 100], [0.0, 0.7])], log=True)
    assert left[0] < 10 < right[0] and all(v > 0 for v in left + right)
    assert right[0] / left[0] == pytest.approx(right[1] / left[1])  # the same factor at every size


def test_disagreement_lines_built_from_dicts_equal_the_scatter_per_line():
    from metaeval_ui.figures import esc, fmt

    rng = np.random.default_rng(0)
    rows = [{"metric_a": a, "metric_b": b, "bin_low": lo, "bin_high": lo + 0.25,
             "disagreement": math.nan if rng.random() < 0.1 else float(rng.random()), "n_pairs": int(rng.integers(0, 9))}
            for a, b in [("a", "b"), ("a", "<c>"), ("b", "<c>")] for lo in (0.0, 0.25, 0.5, 0.75)]
    curve = pd.DataFrame(rows)
    fig = fa.disagreement_figure(curve)
    old = go.Figure()
    curve = curve.assign(mid=(curve["bin_low"] + curve["bin_high"]) / 2.0)
    for (a, b), part in curve.groupby(["metric_a", "metric_b"], sort=False):  # the earlier builder, line by line
        old.add_trace(go.Scatter(
            x=part["mid"].tolist(), y=[None if math.isnan(v) else v for v in part["disagreement"]], mode="lines",
            name=f"{esc(a)} · {esc(b)}", line=dict(width=1, color="rgba(100,100,100,0.35)"), showlegend=False,
            hoverinfo="text", hovertext=[f"{esc(a)} · {esc(b)}<br>score {lo:.2f}–{hi:.2f}: {fmt(d)} of {n} pairs"
                                         for lo, hi, d, n in zip(part["bin_low"], part["bin_high"],
                                                                 part["disagreement"], part["n_pairs"])]))
    assert fig.to_dict()["data"][:-1] == old.to_dict()["data"] and len(old.data) == 3
