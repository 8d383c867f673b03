"""Unit tests of the NAACL 2022 figure builders (metaeval_ui/figures/pairs.py) and pure helpers (metaeval_ui/data/pairs.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from metaeval_core.stats import pairs
from metaeval_ui.data import pairs as dp
from metaeval_ui.figures import colours as colours_module
from metaeval_ui.figures import pairs as fp


def means(n=16, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    return z + rng.normal(scale=0.7, size=n), z


# -- pure helpers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 3, 12, 24, 60, 119, 120])
def test_nice_cut_selects_exactly_the_closest_pairs_and_is_round(count):
    x, z = means()
    adx = pairs.system_pairs(x, z).abs_dx
    u = dp.nice_cut(adx, count)
    assert int((adx <= u).sum()) == count
    assert len(f"{u:g}") <= len(f"{np.sort(adx)[count - 1]:.17g}")
    # survives the URL's 6-significant-digit formatting
    assert int((adx <= float(f"{u:g}")).sum()) == count


def test_nice_cut_keeps_ties_together_and_prefers_short_numbers():
    adx = np.array([0.1234, 0.37, 0.37, 0.9, 2.0])
    assert dp.nice_cut(adx, 2) == 0.4 and int((adx <= 0.4).sum()) == 3  # the tie at 0.37 comes along
    assert dp.nice_cut(adx, 1) == 0.2  # the roundest value in [0.1234, 0.37)
    assert dp.nice_cut(adx, 5) == 2.0
    assert dp.nice_cut(np.array([]), 3) == 0.0


def test_steps_counts_and_matching_cell():
    assert dp.slider_step(16.98) == pytest.approx(0.01)
    assert dp.slider_step(0.084) == pytest.approx(1e-5)
    assert dp.slider_step(0.0) == 0.01
    assert [pairs.closest_count(120, k / 10) for k in (1, 2, 10)] == [12, 24, 120]
    assert [pairs.closest_count(6, k / 10) for k in (1, 2, 9)] == [1, 2, 6]
    assert pairs.closest_count(45, 0.2) == 10  # HANNA's 10 systems: b = 5, the closest 20% are 10 pairs
    with pytest.raises(ValueError, match="multiple of 0.1"):
        pairs.closest_count(45, 0.25)
    x, z = means()
    grid = pairs.decile_grid(x, z)
    adx = pairs.system_pairs(x, z).abs_dx
    assert dp.matching_cell(grid, adx, 0.0, dp.nice_cut(adx, 24)) == (0, 1)
    assert dp.matching_cell(grid, adx, 0.0, float(adx.max())) == (0, 9)
    assert dp.matching_cell(grid, adx, 0.0, dp.nice_cut(adx, 30)) is None


def test_fmt_percent():
    assert fp.fmt_percent(0.987) == "99%"
    assert fp.fmt_percent(-0.2, signed=True) == "-20%" and fp.fmt_percent(0.07, signed=True) == "+7%"
    assert fp.fmt_percent(float("nan")) == "undefined" and fp.fmt_percent(None) == "undefined"


# -- figures ------------------------------------------------------------------------------------------------


def curve_frame():
    x, z = means()
    c = pairs.delta_curve(x, z)
    return pd.DataFrame({"upper": c.upper, "share": c.share_of_pairs, "n_pairs": c.n_pairs, "tau": c.tau})


def test_delta_curve_marks_the_chosen_u_and_the_full_rsys():
    frame = curve_frame()
    u = float(frame["upper"].iloc[29])
    fig = fp.delta_curve_figure(frame, upper=u, full=0.5, metric="m<1>")
    (line,) = fig.data
    assert len(line.x) == len(frame) and line.x[-1] == pytest.approx(100.0)
    kinds = sorted((s.type, s.x0 if s.x0 is not None else s.y0) for s in fig.layout.shapes)
    vline = next(s for s in fig.layout.shapes if s.x0 == s.x1)
    assert vline.x0 == pytest.approx(100 * frame["share"].iloc[29])
    assert any(s.y0 == s.y1 == 0.5 for s in fig.layout.shapes), kinds
    texts = [a.text for a in fig.layout.annotations]
    assert any(t.startswith("u = ") and "% of pairs" in t for t in texts) and any("all pairs" in t for t in texts)
    assert "m&lt;1&gt;" in fig.layout.title.text
    assert fp.delta_curve_figure(frame.iloc[:0]).layout.annotations[0].text.startswith("No system pairs")


def test_decile_heatmap_annotates_existing_cells_and_blanks_the_rest():
    x, z = means()
    grid = pairs.decile_grid(x, z, min_pairs=5)
    fig = fp.decile_heatmap(grid, metric="ROUGE-1", selected=(0, 1))
    (heat,) = fig.data
    assert len(heat.x) == 10 and len(heat.y) == 10 and len(set(heat.x)) == 10 and len(set(heat.y)) == 10
    for r in range(10):
        for c in range(10):
            if grid.exists[r, c]:
                assert f"n={grid.n_pairs[r, c]}" in heat.text[r][c]
            else:
                assert heat.text[r][c] == "" and heat.z[r][c] is None
    assert heat.text[0][9].endswith(f"n={grid.total_pairs}")
    # Fixed margins wide enough for the row labels (no automargin redraw on the hot path of the band slider).
    assert fig.layout.yaxis.automargin is False and fig.layout.margin.l >= 7 * max(len(y) for y in heat.y)
    (outline,) = fig.layout.shapes
    assert (outline.x0, outline.x1, outline.y0, outline.y1) == (0.5, 1.5, -0.5, 0.5)
    assert heat.zmin == -1 and heat.zmax == 1


def test_decile_heatmap_empty_state_for_four_systems():
    grid = pairs.decile_grid([0.1, 0.2, 0.4, 0.8], [1, 3, 2, 4], min_pairs=10)
    fig = fp.decile_heatmap(grid)
    assert not fig.data and "No cell holds at least 10 pairs (6 pairs in all)" in fig.layout.annotations[0].text


def pair_frame():
    return pd.DataFrame({
        "winner": ["<b>A</b>", "B", "C", "D"], "loser": ["B", "C", "D", "A"],
        "abs_dx": [0.1, 0.3, 1.0, 2.0], "dz": [0.5, -0.2, 0.0, 1.0],
        "agreement": ["concordant", "discordant", "tie", "concordant"],
    })


def test_pair_scatter_colours_agreement_and_highlights_the_band():
    fig = fp.pair_scatter(pair_frame(), lower=0.0, upper=0.5, metric="rouge", human="rel")
    names = [t.name for t in fig.data]
    assert names == ["concordant (1 in band)", "discordant (1 in band)", "tie (0 in band)"]
    concordant = fig.data[0]
    assert list(concordant.marker.opacity) == [0.95, 0.3] and list(concordant.marker.size) == [10, 6]
    assert concordant.marker.color == fp.CONCORDANT and fig.data[1].marker.color == fp.DISCORDANT
    band = next(s for s in fig.layout.shapes if s.type == "rect")
    assert (band.x0, band.x1) == (0.0, 0.5)
    assert any(a.text == "[l, u]: 2 pairs" for a in fig.layout.annotations)
    assert "&lt;b&gt;A&lt;/b&gt;" in concordant.hovertext[0]
    assert fp.pair_scatter(pair_frame().iloc[:0], lower=0, upper=1).layout.annotations


def test_stability_figure_small_multiples_one_panel_per_measure():
    frame = pd.DataFrame({"measure": ["m"] * 3 + ["h"] * 3, "m": [10, 100, 1000] * 2,
                          "mean": [0.5, 0.7, 0.9, 0.4, 0.6, 0.7], "std": [0.2, 0.1, 0.05, 0.2, 0.15, 0.1]})
    fig = fp.stability_figure(frame, log_x=True, title="all", human="h")
    # per panel: the other measure's mean (grey context), the band, the line
    assert len(fig.data) == 6 and fig.layout.xaxis.type == "log"
    assert [a.text for a in fig.layout.annotations][:2] == ["m", "h (human)"]  # one titled panel each
    context, band, line = fig.data[0], fig.data[1], fig.data[2]
    assert context.line.color == fp.MUTED and context.xaxis == band.xaxis == line.xaxis == "x"
    assert band.fill == "toself" and list(band.y[:3]) == pytest.approx([0.7, 0.8, 0.95])
    assert line.name == "m" and fig.data[5].name == "h (human)" and fig.data[5].line.color == fp.HUMAN_COLOUR
    assert fig.data[5].line.dash == "dash" and fig.data[5].xaxis == "x2"
    assert fp.stability_figure(frame, log_x=False).layout.xaxis.type == "linear"
    many = pd.concat([frame.assign(measure=f"m{k}") for k in range(5)] + [frame[frame["measure"] == "h"]])
    colours_module.use_measures([f"m{k}" for k in range(5)], ["h"], chosen=[f"m{k}" for k in range(5)])
    try:
        six = fp.stability_figure(many, human="h")
    finally:
        colours_module.reset_measures()
    colours = [t.line.color for t in six.data if t.mode == "lines+markers"]
    assert colours.count(fp.HUMAN_COLOUR) == 1 and colours[-1] == fp.HUMAN_COLOUR
    assert len(set(colours)) == 6  # six measures, six colours (no two panels alike)
    assert six.layout.height > fig.layout.height  # two rows of panels: the figure grows


def test_log_ticks_are_written_in_full():
    ticks, text = fp.log_ticks(10, 1000)
    assert text == ["10", "20", "50", "100", "200", "500", "1,000"] and ticks[0] == 10
    ticks, text = fp.log_ticks(2, 100_000)
    assert text == ["10", "100", "1,000", "10,000", "100,000"]  # a long range: powers of ten only
    assert fp.log_ticks(0, 10) == ([], [])
    fig = fp.stability_figure(pd.DataFrame({"measure": ["m"] * 3, "m": [10, 100, 1000], "mean": [0.5, 0.6, 0.7],
                                            "std": [0.1] * 3}), log_x=True)
    assert list(fig.layout.xaxis.ticktext) == ["10", "20", "50", "100", "200", "500", "1,000"]


def test_score_interval_and_width_figures():
    frame = pd.DataFrame({"system": ["s1", "s2", "s1", "s2"], "pool": ["judged", "judged", "all", "all"],
                          "mean": [2.0, 1.0, 2.1, 1.1], "low": [1.5, 0.5, 2.0, 1.0], "high": [2.5, 1.5, 2.2, 1.2]})
    fig = fp.score_interval_figure(frame, metric="m", pool_names={"judged": "J", "all": "A"})
    assert [t.name for t in fig.data] == ["J", "A"] and fig.layout.scattermode == "group"
    assert list(fig.data[0].x) == ["s2", "s1"]  # ordered by the judged mean
    assert list(fig.data[0].error_y.array) == pytest.approx([0.5, 0.5])
    widths = pd.DataFrame({"method": ["boot-systems", "boot-inputs"], "width_judged": [0.8, 0.4],
                           "width_all": [0.4, 0.5], "reduction_percent": [50.0, -25.0]})
    fig = fp.width_figure(widths)
    assert [t.type for t in fig.data] == ["bar", "bar"] and list(fig.data[0].x) == ["BOOT-SYSTEMS", "BOOT-INPUTS"]
    assert [a.text for a in fig.layout.annotations] == ["50% narrower", "25% wider"]
    nan = widths.assign(reduction_percent=[math.nan, 1.0])
    assert fp.width_figure(nan).layout.annotations[0].text == "undefined"
    assert fp.width_change_words(0.3) == "no change (< 0.5%)" and fp.width_change_words(-19.6) == "20% wider"
    assert isinstance(fp.width_figure(widths.iloc[:0]), go.Figure)


# -- the page's cached figures ------------------------------------------------------------------------------


def test_band_and_decile_figures_are_built_once_per_band_and_equal_the_builders(demo_env):
    from metaeval_ui import data

    ds = data.load_registered(data.DEMO_ID, data.data_dir_key())
    args = (ds, (ds.id, "test-version"), "metric.strong", "human.quality", "judged", "")
    table = dp.pair_table(*args)
    lo, hi = 0.0, float(table["abs_dx"].iloc[23])
    curve, scatter = dp.band_figures(*args, lo, hi)
    # The same objects on a revisit (no rebuilding), and what the builders make from the cached data.
    assert dp.band_figures(*args, lo, hi)[0] is curve
    full = dp.delta(*args, 0.0, math.inf)["estimate"]
    assert curve == fp.delta_curve_figure(dp.curve(*args), upper=hi, full=full, metric="metric.strong")
    assert scatter == fp.pair_scatter(table, lower=lo, upper=hi, metric="metric.strong", human="human.quality")
    heatmap, grid = dp.decile_figure(*args, lo, hi, 5)
    assert dp.decile_figure(*args, lo, hi, 5)[0] is heatmap
    assert heatmap == fp.decile_heatmap(grid, metric="metric.strong",
                                        selected=dp.matching_cell(grid, table["abs_dx"], lo, hi))
    # Another band is another figure.
    assert dp.band_figures(*args, lo, float(table["abs_dx"].iloc[59]))[0] is not curve


@pytest.mark.parametrize("n_systems, ties", [(10, False), (11, False), (16, True)])
def test_decile_grid_words_and_labels_match_the_counts(n_systems, ties):
    """Issue 24: 'each column adds 10% of pairs' while columns held other counts, and 'skip the closest' rows skipped
    one pair fewer than labelled. Labels and the sentence now state the grid's own counts."""
    from metaeval_ui import text
    from metaeval_ui.figures import pairs as fpairs

    rng = np.random.default_rng(n_systems)
    x = np.round(rng.normal(size=n_systems), 1 if ties else 6)
    z = x + rng.normal(size=n_systems)
    grid = pairs.decile_grid(x, z)
    adx = np.sort(pairs.system_pairs(x, z).abs_dx)
    columns, rows = fpairs.decile_labels(grid)
    for c, label in enumerate(columns):
        assert label.endswith(f"{int((adx <= grid.upper[c]).sum())} pairs")
    for r, label in enumerate(rows[1:], start=1):
        skipped = int((adx < grid.lower[r]).sum())
        assert label.endswith(f"skips {skipped}") and skipped <= r * grid.bucket_size - 1
        # the row really leaves out exactly those pairs: its full-width cell holds the rest
        if grid.lower[r] < grid.upper[-1]:
            assert grid.pairs_in_range[r, -1] == adx.size - skipped
    sentence = text.decile_grid_sentence(grid)
    assert f"b = ⌈10% of {adx.size}⌉ = {grid.bucket_size}" in sentence
    assert ", ".join(str(int(v)) for v in grid.skipped[1:]) in sentence
    assert "10% of pairs" not in sentence
    title = fpairs.decile_heatmap(grid, metric="m").layout.title.text
    assert f"k·{grid.bucket_size} closest pairs" in title and "10% of pairs" not in title


def test_decile_labels_count_one_pair_in_the_singular():
    """FRANK's 5 systems give 10 pairs and buckets of one pair: the first column reads '1 pair', not '1 pairs'."""
    from metaeval_core.stats.pairs import decile_grid
    from metaeval_ui.figures.pairs import decile_labels

    rng = np.random.default_rng(3)
    x, z = rng.normal(size=5), rng.normal(size=5)
    columns, _ = decile_labels(decile_grid(x, z))
    assert columns[0].endswith("<br>1 pair") and all(not c.endswith("<br>1 pairs") for c in columns)


def test_decile_labels_tell_close_thresholds_apart():
    from metaeval_ui.figures.pairs import _distinct_texts

    assert _distinct_texts([0.00104, 0.00134, 0.5]) == ["0.0010", "0.0013", "0.5000"]
    assert _distinct_texts([0.25, 0.25, 0.5]) == ["0.250", "0.250", "0.500"]  # tied thresholds stay alike
