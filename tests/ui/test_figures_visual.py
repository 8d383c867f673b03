"""The dashboard's visual conventions (issue 14): one colour per measure on every figure, one diverging scale for
every correlation heatmap, figures that grow with their content, uncertainty on every estimate, slide exports, and
a band slider that moves in share of pairs."""

from __future__ import annotations

import json
import threading

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from metaeval_ui import exports, figures
from metaeval_ui.figures import analyses as fa
from metaeval_ui.figures import colours
from metaeval_ui.figures import pairs as fp
from metaeval_ui.figures import practice as fpr
from metaeval_ui.widgets import pairs as wp

METRICS = ["rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.recall", "qa-eval.f1"]
ALL = METRICS + ["bleu", "meteor", "chrf"]


@pytest.fixture
def declared():
    colours.use_measures(ALL, ["expert.relevance", "expert.coherence"], chosen=METRICS)
    yield
    colours.reset_measures()


def _is_reddish(colour: str) -> bool:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return r > 180 and g < 80 and b < 80


# -- one colour per measure -------------------------------------------------------------------------------------


def test_palette_has_no_red_and_humans_have_their_own_colour():
    assert not any(_is_reddish(c) for c in colours.METRIC_PALETTE)
    assert colours.HUMAN_COLOUR not in colours.METRIC_PALETTE and colours.MUTED not in colours.METRIC_PALETTE
    assert len(set(colours.METRIC_PALETTE)) == len(colours.METRIC_PALETTE)
    # things that are not measures (CI methods, clusters, groups) never borrow a measure's hue
    assert not set(figures.PALETTE) & set(colours.METRIC_PALETTE)
    conditions = {fp.JUDGED_COLOUR, fp.ALL_COLOUR, fa.ALL_COLOUR, fa.TOP_COLOUR}  # input pools, summary ranges
    assert not conditions & set(colours.METRIC_PALETTE) and colours.HUMAN_COLOUR not in conditions


def test_chosen_metrics_get_distinct_colours_independent_of_selection_order(declared):
    first = {m: colours.measure_colour(m) for m in METRICS}
    assert len(set(first.values())) == len(METRICS)
    colours.use_measures(ALL, ["expert.relevance"], chosen=list(reversed(METRICS)))
    assert {m: colours.measure_colour(m) for m in METRICS} == first  # the ids decide, not the clicks
    assert colours.measure_colour("expert.relevance") == colours.HUMAN_COLOUR
    assert colours.measure_style("expert.relevance") == {"color": colours.HUMAN_COLOUR, "dash": "dash",
                                                         "symbol": "diamond"}


def test_colour_is_a_function_of_the_metric_id(declared):
    """Issue 24: "each metric in its own colour, the same on every page" was false, a metric's colour followed the
    order of the current selection. Now a metric that collides with no other shown metric has its id's colour
    whatever else is selected; collisions within a view are resolved by the ids alone."""
    import itertools
    import zlib

    def slot(name):
        return zlib.crc32(name.encode()) % len(colours.METRIC_PALETTE)

    pool = ALL + [f"metric.{k}" for k in range(12)]
    for size in (1, 2, 3, 5):
        for chosen in itertools.islice(itertools.combinations(pool, size), 0, None, 7):
            colours.use_measures(pool, [], chosen=chosen)
            shown = {m: colours.measure_colour(m) for m in chosen}
            assert len(set(shown.values())) == len(chosen)  # never two alike in a view
            for m in chosen:
                if sum(slot(o) == slot(m) for o in chosen) == 1:
                    assert shown[m] == colours.base_colour(m)  # no collision: the id's own colour
            colours.use_measures(pool, [], chosen=list(reversed(chosen)))
            assert {m: colours.measure_colour(m) for m in chosen} == shown  # order never matters
    # the case of the issue: dropping the first chosen metric recoloured all the others
    colours.use_measures(ALL, [], chosen=METRICS)
    before = {m: colours.measure_colour(m) for m in METRICS}
    colours.use_measures(ALL, [], chosen=METRICS[1:])
    for m in METRICS[1:]:
        if slot(m) != slot(METRICS[0]):
            assert colours.measure_colour(m) == before[m]
    # a collision: the smaller hash keeps its colour, the other takes the next free one
    a, b = next((x, y) for x, y in itertools.combinations(pool, 2) if slot(x) == slot(y))
    first, second = sorted((a, b), key=lambda n: (zlib.crc32(n.encode()), n))
    assert colours.resolve_collisions([b, a]) == {
        first: colours.base_colour(first),
        second: colours.METRIC_PALETTE[(slot(second) + 1) % len(colours.METRIC_PALETTE)]}


def test_without_a_declaration_the_colour_is_a_stable_hash():
    colours.reset_measures()
    assert colours.measure_colour("rouge-1.f1") == colours.measure_colour("rouge-1.f1")
    assert colours.measure_colour("rouge-1.f1") in colours.METRIC_PALETTE
    assert colours.measure_colour("h", human=True) == colours.HUMAN_COLOUR


def test_declarations_are_per_thread(declared):
    seen = {}

    def other():
        seen["colour"] = colours.measure_colour("expert.relevance")

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen["colour"] != colours.HUMAN_COLOUR  # another session's thread knows nothing of this view
    assert colours.measure_colour("expert.relevance") == colours.HUMAN_COLOUR


def _correlations(metrics, humans=("expert.relevance",)):
    rows = [{"metric": m, "human": h, "estimate": 0.1 * (k + 1), "n": 16, "n_undefined": 0,
             "low": 0.1 * k - 0.2, "high": 0.1 * k + 0.3} for h in humans for k, m in enumerate(metrics)]
    return pd.DataFrame(rows)


def test_a_metric_has_the_same_colour_in_every_figure(declared):
    metric = "bertscore.recall"
    want = colours.measure_colour(metric)
    found = []
    bar = figures.correlation_bar(_correlations(METRICS)).data[0]
    found.append(bar.marker.color[METRICS.index(metric)])
    forest = figures.forest_plot(pd.DataFrame([{"metric": m, "method": "FISHER", "estimate": 0.3, "low": 0.1,
                                                "high": 0.5} for m in METRICS]))
    found += [t.marker.color for t in forest.data if t.hovertext and metric in t.hovertext[0]]
    topk = fa.topk_figure(pd.DataFrame([{"metric": m, "k": k, "estimate": 0.5, "n": k} for m in METRICS
                                        for k in (5, 4, 3)]))
    found += [t.line.color for t in topk.data if t.name == metric]
    normality = fa.normality_bar(pd.DataFrame({"measure": METRICS, "kind": "metric", "input_share": 0.2,
                                               "input_tested": 10}))
    found.append(normality.data[0].marker.color[METRICS.index(metric)])
    f1 = fa.f1_bar(pd.DataFrame({"metric": METRICS, "f1": np.linspace(0.5, 0.9, 5)}), selected=metric)
    found.append(f1.data[0].marker.color[list(f1.data[0].y).index(metric)])
    stability = fp.stability_figure(pd.DataFrame({"measure": metric, "m": [10, 20], "mean": 0.5, "std": 0.1}))
    found += [t.line.color for t in stability.data if t.name == metric]
    clusters = fpr.clusters_figure(pd.DataFrame({"cluster": [1] * 5, "metric": METRICS, "estimate": 0.5}))
    found.append(clusters.data[0].marker.color[METRICS.index(metric)])
    curve = fp.delta_curve_figure(pd.DataFrame({"upper": [0.1], "share": [1.0], "n_pairs": [3], "tau": [0.5]}),
                                  colour=colours.measure_colour(metric))
    found.append(curve.data[0].line.color)
    assert found and all(c == want for c in found), found
    # humans: near-black, never a metric's colour and never the "selected" highlight
    hist = figures.histogram_grid(pd.DataFrame({"measure": ["expert.relevance"], "kind": ["human"], "left": [0.0],
                                                "right": [1.0], "count": [3], "share": [1.0]}))
    assert hist.data[0].marker.color == colours.HUMAN_COLOUR


def test_the_selected_metric_is_highlighted_without_red(declared):
    f1 = fa.f1_bar(pd.DataFrame({"metric": METRICS, "f1": np.linspace(0.5, 0.9, 5)}), selected="rouge-2.f1")
    marker = f1.data[0].marker
    assert not any(_is_reddish(c) for c in marker.color)
    assert sorted(marker.color).count(colours.MUTED) == 4
    for figure in (fa.dumbbell(pd.DataFrame({"metric_a": ["a"], "metric_b": ["b"], "tau_all": [0.2], "tau_top": [0.1],
                                             "n_inputs_all": [5], "n_inputs_top": [5]})),):
        assert not any(_is_reddish(t.marker.color) for t in figure.data if t.mode == "markers")


# -- one diverging convention for correlation heatmaps ----------------------------------------------------------


def test_matrix_and_decile_heatmaps_share_the_scale_and_title_the_colour_bar():
    matrix = fa.matrix_heatmap(["a", "b"], np.array([[1.0, 0.3], [0.3, 1.0]]), coefficient="kendall").data[0]
    from metaeval_core.stats import pairs

    grid = pairs.decile_grid(np.arange(6.0), np.arange(6.0) ** 1.5, min_pairs=1)
    decile = fp.decile_heatmap(grid).data[0]
    for heat in (matrix, decile):
        assert heat.zmin == -1 and heat.zmax == 1 and heat.zmid == 0
        assert not heat.reversescale  # blue = positive on both (the Matrix page was reversed)
        assert heat.colorbar.title.text == "Kendall τ"
    assert matrix.colorscale == decile.colorscale
    assert "blue" in str(matrix.colorscale[-1]).lower() or matrix.colorscale[-1][1].startswith("rgb(5")
    pearson = fa.matrix_heatmap(["a", "b"], np.eye(2), coefficient="pearson").data[0]
    assert pearson.colorbar.title.text == "Pearson r"


# -- charts grow with their content; labels that do not collide --------------------------------------------------


def _forest(n_metrics, n_methods):
    return pd.DataFrame([{"metric": f"m{i}", "method": f"M{j}", "estimate": 0.5, "low": 0.3, "high": 0.7}
                         for j in range(n_methods) for i in range(n_metrics)])


def test_forest_plot_grows_with_metrics_times_methods_and_rows_do_not_overlap():
    small, big = figures.forest_plot(_forest(5, 1)), figures.forest_plot(_forest(5, 4))
    assert big.layout.height > small.layout.height
    assert figures.forest_plot(_forest(10, 4)).layout.height > big.layout.height
    # every marker stays inside its own metric's row (|offset| < 0.5) and the methods of a row are >= 0.15 apart
    ys = {}
    for trace in big.data:
        if trace.hovertext:
            metric = trace.hovertext[0].split("</b>")[0][3:]
            ys.setdefault(metric, []).append(trace.y[0])
    for metric, values in ys.items():
        centre = round(np.mean(values))
        assert all(abs(v - centre) < 0.5 for v in values)
        assert min(np.diff(sorted(values))) >= 0.15
    pixels_per_method = big.layout.height / (5 * 4)
    assert pixels_per_method >= 15


def test_correlation_bar_labels_sit_above_the_interval_and_several_humans_are_small_multiples(declared):
    one = figures.correlation_bar(_correlations(METRICS))
    bar, labels = one.data
    assert bar.error_y.array is not None and labels.mode == "text"
    assert list(labels.y) == pytest.approx(list(_correlations(METRICS)["high"] + 0.02))  # above the whisker
    assert "95% interval: [" in bar.hovertext[0]
    eight = [f"h{k}" for k in range(8)]
    many = figures.correlation_bar(_correlations(METRICS, eight))
    # several human measures: small multiples (one panel each, dots with whiskers), not a thicket of hatched bars
    assert len(many.data) == 8 and all(t.mode == "markers" and t.error_x.array is not None for t in many.data)
    assert [a.text for a in many.layout.annotations] == eight and not many.layout.showlegend
    assert list(many.data[3].marker.color) == [colours.measure_colour(m) for m in METRICS]
    assert many.layout.height > one.layout.height  # two rows of panels: the figure grows


def test_fisher_bounds_for_correlations_only():
    frame = pd.DataFrame({"estimate": [0.5, np.nan, 1.0], "n": [16, 16, 9]})
    out = figures.fisher_bounds(frame, "kendall")
    assert out["low"][0] < 0.5 < out["high"][0] and np.isnan(out["low"][1])
    assert np.isnan(out["low"][2])  # r = 1: no zero-width "certain" whisker
    assert figures.fisher_bounds(frame, "pairwise-accuracy")["low"].isna().all()


# -- uncertainty on simulations ---------------------------------------------------------------------------------


def test_coverage_and_power_show_their_monte_carlo_error():
    cov = fa.coverage_figure(pd.DataFrame({"method": ["FISHER", "BOOT"], "coverage": [0.9, 0.99], "se": [0.02, 0.01]}))
    error = cov.data[0].error_y
    assert list(error.array) == pytest.approx([1.96 * 0.02, 0.01])  # clipped at 1
    assert list(error.arrayminus) == pytest.approx([1.96 * 0.02, 1.96 * 0.01])
    power = fa.power_figure(pd.DataFrame({"test": ["PERM"] * 2, "k": [1, 2], "power": [0.5, 0.8], "se": [0.1, 0.05]}))
    band = power.data[0]
    assert band.fill == "toself" and max(band.y) == pytest.approx(0.8 + 1.96 * 0.05)


# -- exports for slides -----------------------------------------------------------------------------------------


def test_camera_button_saves_png_or_svg_at_slide_size():
    fig = go.Figure(layout={"height": 640})
    png = exports.chart_config("x", fig=fig)["toImageButtonOptions"]
    svg = exports.chart_config("x", fig=fig, image_format="svg")["toImageButtonOptions"]
    assert png["format"] == "png" and png["scale"] == 2 and png["width"] == exports.SLIDE_WIDTH
    assert svg["format"] == "svg" and svg["height"] == 640
    with pytest.raises(ValueError):
        exports.chart_config("x", image_format="pdf")


def test_html_download_has_png_and_svg_buttons():
    page = exports.figure_html(go.Figure(go.Bar(x=["a"], y=[1])), "fig")
    assert "Plotly.downloadImage" in page and "['png', 'svg']" in page
    assert f"width: {exports.SLIDE_WIDTH}" in page


# -- the band slider of Realistic pairs -------------------------------------------------------------------------


def test_band_moves_in_share_of_pairs_and_every_decile_is_a_slider_position():
    rng = np.random.default_rng(0)
    abs_dx = np.sort(rng.exponential(0.01, 120))  # metric differences crowded near 0, as on SummEval
    abs_dx[-1] = 5.0  # one far pair: on a metric-units slider the 20% band sat in the first 2% of the track
    n = abs_dx.size
    step = wp.share_step(n)
    for decile in range(1, 11):
        share = wp.to_share(round(n * decile / 10), n)
        assert share == pytest.approx(10 * decile, abs=step)  # reachable: a slider position (one pair per step)
        assert 0 <= share / step - round(share / step) < 1e-6
    lower, upper = wp.band_from_counts(abs_dx, 12, 24)
    assert wp.band_counts(abs_dx, lower, upper) == (12, 24)  # the band in metric units selects those pairs
    assert ((abs_dx >= lower) & (abs_dx <= upper)).sum() == 12
    assert wp.band_from_counts(abs_dx, 0, n) == (0.0, pytest.approx(5.0))
    assert wp.to_count(wp.to_share(37, n), n) == 37
    big = 5000
    assert wp.share_step(big) == pytest.approx(0.25)  # at most 400 positions


def test_lower_cut_is_round_and_keeps_ties_together():
    values = np.array([0.1, 0.2, 0.2, 0.35])
    assert wp.lower_cut(values, 1) == pytest.approx(0.2)  # (0.1, 0.2]: leaves out the closest pair only
    assert wp.lower_cut(values, 2) == pytest.approx(0.3)  # a tie at 0.2: both pairs are left out together
    assert wp.lower_cut(values, 0) == 0.0
    assert wp.band_counts(values, wp.lower_cut(values, 2), 1.0) == (3, 4)


def test_figure_specs_are_json(declared):
    # builders hand plain JSON to the browser (no numpy objects that the frontend cannot read)
    json.loads(figures.correlation_bar(_correlations(METRICS)).to_json())


def test_planning_power_has_monte_carlo_whiskers():
    table = pd.DataFrame({"n_inputs": [10, 50], "n_systems": [8, 8], "width_mean": [0.6, 0.4], "width_sd": [0.1, 0.1],
                          "power": [0.5, 1.0], "n_trials": [20, 20]})
    fig = fpr.plan_figure(table)
    power = [t for t in fig.data if t.xaxis == "x2"][0]
    assert list(power.error_y.array) == pytest.approx([1.96 * np.sqrt(0.25 / 20), 0.0])  # p = 1: no spread
    up, down = fpr.power_error([0.02], [20])
    assert down[0] == pytest.approx(0.02)  # clipped at 0


def test_legends_below_a_plot_hang_below_the_axis_title(declared):
    """A legend under the plot is anchored at its top, so it grows away from the axis title, never over it."""
    figures_with_legends = [
        fa.topk_figure(pd.DataFrame([{"metric": m, "k": k, "estimate": 0.5, "n": k} for m in METRICS
                                     for k in (5, 4, 3)])),
        fp.pair_scatter(pd.DataFrame({"abs_dx": [0.1, 0.2], "dz": [0.1, -0.1], "winner": ["a", "b"], "loser": ["b", "a"],
                                      "agreement": ["concordant", "discordant"]}), lower=0, upper=0.15),
        fp.width_figure(pd.DataFrame({"method": ["boot-both"], "width_judged": [0.4], "width_all": [0.3],
                                      "reduction_percent": [25.0]})),
        fpr.plan_figure(pd.DataFrame({"n_inputs": [10, 50], "n_systems": [8, 8], "width_mean": [0.6, 0.4],
                                      "width_sd": [0.1, 0.1], "power": [0.5, 0.9], "n_trials": [20, 20]})),
    ]
    for fig in figures_with_legends:
        legend = fig.layout.legend
        assert legend.y < 0 and legend.yanchor == "top", (legend.y, legend.yanchor)


def test_twenty_one_wmt_metrics_shown_together_get_twenty_distinct_colours():
    # WMT22 zh-en's 21 primary metrics: the palette's ten, then its ten light companions, then one repeat.
    names = [f"metric-{k}" for k in range(21)]
    got = colours.resolve_collisions(names)
    assert len(set(got.values())) == 20 and set(got.values()) <= set(colours.METRIC_PALETTE + colours.EXTRA_PALETTE)
    assert not any(_is_reddish(c) for c in colours.EXTRA_PALETTE)
    assert not set(figures.PALETTE) & set(colours.EXTRA_PALETTE)
    assert len(set(colours.resolve_collisions(names[:20]).values())) == 20
