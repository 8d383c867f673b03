"""Unit tests of the practitioner's figure builders and table helpers (no streamlit runtime)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metaeval_core.analyses import practice
from metaeval_ui.figures import practice as fp


@pytest.fixture(scope="module")
def improvement(demo):
    return practice.improvement_probability(demo, "metric.fair", "human.quality", delta=1.0, n_resamples=50, rng=0)


def traces(fig, name_part: str) -> list:
    return [t for t in fig.data if t.name and name_part in t.name]


def test_improvement_figure_has_band_curve_pairs_and_marked_delta(improvement):
    r = improvement
    labels = [f"<S{a}> vs S{b}" for a, b in zip(r.pair_first, r.pair_second)]
    fig = fp.improvement_figure(r.grid, r.curve, r.curve_low, r.curve_high, r.pair_abs_dx, r.pair_agreement,
                                delta=-1.0, probability=r.probability, low=r.low, high=r.high, pair_labels=labels,
                                metric="metric.fair", human="human.quality")
    band = traces(fig, "band")[0]
    assert band.fill == "toself" and len(band.x) == 2 * r.grid.size
    curve = traces(fig, "fitted")[0]
    assert np.allclose(np.asarray(curve.y, dtype=float), r.curve, equal_nan=True)
    points = [t for t in fig.data if t.name and t.name.startswith("pair:")]
    assert sum(len(t.x) for t in points) == r.pair_abs_dx.size
    for t in points:  # jittered around 0, 0.5 or 1
        assert np.all(np.abs(np.asarray(t.y) - np.round(np.asarray(t.y) * 2) / 2) <= 0.035 + 1e-12)
    assert all("&lt;S" in h for t in points for h in t.hovertext)  # names are escaped
    marker = traces(fig, "your d")[0]
    assert marker.x == (1.0,) and marker.y == (pytest.approx(r.probability),)
    assert marker.error_y.array[0] == pytest.approx(max(r.high - r.probability, 0.0))
    assert any(s.x0 == 1.0 for s in fig.layout.shapes)  # the vertical line at |d|
    assert not traces(fig, "extrapolated")


def test_improvement_figure_extends_beyond_the_data_and_handles_empty(improvement):
    r = improvement
    top = float(r.grid[-1])
    fig = fp.improvement_figure(r.grid, r.curve, r.curve_low, r.curve_high, r.pair_abs_dx, r.pair_agreement,
                                delta=2 * top, probability=r.curve[-1], low=np.nan, high=np.nan)
    dotted = traces(fig, "extrapolated")[0]
    assert dotted.x == (top, 2 * top)
    empty = fp.improvement_figure([], [], [], [], [], [], delta=1.0, probability=np.nan, low=np.nan, high=np.nan)
    assert "No usable system pair" in empty.layout.annotations[0].text


def plan_table() -> pd.DataFrame:
    rows = []
    for n in (8, 16):
        for m, w in ((10, 0.9), (50, 0.6), (100, 0.45)):
            rows.append({"n_inputs": m, "n_systems": n, "width_mean": w - (0.1 if n == 16 else 0),
                         "width_sd": 0.05, "power": 0.5 + m / 250 + (0.1 if n == 16 else 0)})
    return pd.DataFrame(rows)


def test_plan_figure_lines_per_system_size_targets_and_star():
    fig = fp.plan_figure(plan_table(), target_width=0.5, target_power=0.8, recommended=(50, 16))
    lines = [t for t in fig.data if t.name and t.name.endswith("systems")]
    assert [t.name for t in lines] == ["8 systems", "8 systems", "16 systems", "16 systems"]
    assert lines[0].xaxis == "x" and lines[1].xaxis == "x2"
    assert list(lines[2].y) == pytest.approx([0.8, 0.5, 0.35])
    stars = [t for t in fig.data if t.marker is not None and t.marker.symbol == "star"]
    assert len(stars) == 2 and stars[0].x == (50,) and stars[0].y == (pytest.approx(0.5),)
    assert {s.y0 for s in fig.layout.shapes} >= {0.5, 0.8}


def test_plan_figure_without_power_and_empty():
    table = plan_table().assign(power=None)
    fig = fp.plan_figure(table, target_width=0.5)
    assert {t.xaxis for t in fig.data} == {"x"}
    assert "No design" in fp.plan_figure(pd.DataFrame()).layout.annotations[0].text


def influence_frame(intervals: bool = False) -> pd.DataFrame:
    return pd.DataFrame({
        "system": ["<b>A</b>", "B", "C"], "without": [0.8, 0.55, np.nan], "change": [0.3, 0.05, np.nan],
        "low_without": [0.6, 0.3, np.nan] if intervals else [np.nan] * 3,
        "high_without": [0.95, 0.8, np.nan] if intervals else [np.nan] * 3,
        "flagged": [True, False, False], "reason": ["|change| > 0.1", "", ""]})


def test_influence_figure_highlights_flagged_and_keeps_undefined_visible():
    fig = fp.influence_figure(influence_frame(), estimate=0.5, threshold=0.1, coefficient="kendall")
    bar = fig.data[0]
    assert list(bar.y) == ["C", "B", "&lt;b&gt;A&lt;/b&gt;"]  # largest change at the top, names escaped
    assert bar.marker.color[-1] == fp.FLAG_COLOUR and bar.marker.color[0] == fp.PLAIN_COLOUR
    assert bar.text[0] == "undefined" and bar.marker.opacity[0] == 0.0
    assert {s.x0 for s in fig.layout.shapes} >= {-0.1, 0.1, 0}
    assert bar.error_x.array is None


def test_influence_figure_with_intervals():
    fig = fp.influence_figure(influence_frame(True), estimate=0.5, threshold=0.1, low=0.3, high=0.7,
                              intervals=True)
    bar = fig.data[0]
    assert bar.error_x.array[-1] == pytest.approx(0.95 - 0.5 - 0.3)
    assert bar.error_x.arrayminus[-1] == pytest.approx(0.3 - (0.6 - 0.5))
    assert any(s.type == "rect" and s.x0 == pytest.approx(-0.2) for s in fig.layout.shapes)
    assert "No system" in fp.influence_figure(pd.DataFrame(), estimate=0.5, threshold=0.1).layout.annotations[0].text


def test_clusters_figure_groups_by_cluster():
    frame = pd.DataFrame({"cluster": [1, 1, 2, 3], "metric": ["a", "<b>", "c", "d"],
                          "estimate": [0.9, 0.85, 0.5, np.nan]})
    fig = fp.clusters_figure(frame, coefficient="kendall", human="h")
    assert [t.name for t in fig.data] == ["cluster 1", "cluster 2", "cluster 3"]
    assert list(fig.data[0].y) == [3, 2] and fig.data[2].x == (None,)
    assert list(fig.layout.yaxis.ticktext) == ["a", "&lt;b&gt;", "c", "d"]
    assert len([s for s in fig.layout.shapes if s.type == "rect"]) == 3
    assert "No clusters" in fp.clusters_figure(pd.DataFrame()).layout.annotations[0].text


def test_data_helpers_are_consistent_with_the_core(demo, improvement):
    from metaeval_ui.data import practice as dp

    assert dp.nice(0.04216) == 0.042 and dp.nice(4.6654) == 4.7 and dp.nice(0.0) == 0.0
    assert dp.default_input_sizes(249) == [10, 20, 50, 100, 249]
    assert dp.default_system_sizes(4) == [3, 4] and dp.default_system_sizes(16) == [8, 12, 16]
    assert dp.input_size_options(100)[-1] == 100 and min(dp.input_size_options(100)) >= 2
    pairs = dp.pair_frame(improvement)
    assert len(pairs) == improvement.pair_abs_dx.size and pairs["|dx|"].is_monotonic_decreasing
    assert set(pairs["humans"]) <= {"agree", "disagree", "humans tied"}
    infl = practice.system_influence(demo, "metric.weak", "human.quality", threshold=0.02)
    frame = dp.influence_frame(infl)
    assert frame["change"].abs().is_monotonic_decreasing and frame["system"].iloc[0] == infl.most_influential


def test_plan_by_design_merges_like_the_core(demo):
    from metaeval_ui.data import practice as dp

    key = dp.plan_key(("demo", demo.version), "metric.good", "human.quality", [10, 40], [6, 16], 0.6, 0.5, "",
                      1.0, "kendall", "boot-inputs", 50, 3, 7, "")
    seen = []
    result = dp.plan(demo, key, progress=seen.append)
    assert seen == [0.25, 0.5, 0.75, 1.0]
    assert [(r["n_inputs"], r["n_systems"]) for r in result.table] == [(10, 6), (40, 6), (10, 16), (40, 16)]
    expected = practice._recommend(list(result.table), 0.6, 0.5, (10, 40), (6, 16))
    assert result.recommendation == expected
    assert dp.plan_is_cached(key) and dp.plan(demo, key) is result
    unreachable = dp.plan_key(("demo", demo.version), "metric.good", "human.quality", [10, 40], [6, 16], 0.05, None,
                              "", 1.0, "kendall", "boot-inputs", 50, 3, 7, "")
    missed = dp.plan(demo, unreachable).recommendation
    assert not missed.reached and "up to 40 judged inputs x 16 systems" in missed.message
    assert missed == practice._recommend(list(dp.plan(demo, unreachable).table), 0.05, None, (10, 40), (6, 16))


def test_plan_figure_draws_equal_power_lines_side_by_side():
    table = plan_table().assign(power=0.0)  # every design has power 0: the lines would hide behind each other
    fig = fp.plan_figure(table, target_width=0.5, target_power=0.8)
    power = [t for t in fig.data if t.xaxis == "x2" and t.name and t.name.endswith("systems")]
    assert len({tuple(t.x) for t in power}) == 2
    assert [tuple(t.customdata) for t in power] == [(10, 50, 100)] * 2  # hover: the true number of inputs
    assert fig.layout.yaxis2.range[0] < 0
