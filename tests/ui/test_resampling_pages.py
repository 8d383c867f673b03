"""Confidence-interval and significance pages (small k to keep them fast)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_ui import data, figures, tables
from ui_helpers import assert_clean, new_app, plotly_specs

DEMO_METRICS = ["metric.strong", "metric.good", "metric.fair", "metric.weak", "metric.noise"]


def open_ci(query):
    at = new_app({"dataset": "demo", **query}).run()
    at.switch_page("pages/confidence.py").run()
    assert_clean(at)
    return at


def test_ci_page_forest_plot_table_and_methods(demo_env):
    at = open_ci({"ci": ["fisher", "boot-both"], "ci_k": "60", "ci_seed": "7"})
    table = at.dataframe[0].value
    ceiling = table["metric"].str.startswith("human ceiling: ")
    # The demo's human measure keeps three annotators: three human-ceiling rows per method, after the metrics.
    assert ceiling.sum() == 2 * 3 and not ceiling[: 2 * len(DEMO_METRICS)].any()
    table = table[~ceiling]
    assert len(table) == 2 * len(DEMO_METRICS)
    boot = table[table["method"] == "BOOT-BOTH"]
    # shown as text (FISHER rows are empty, not a grey 'None'): tests/ui/test_missing_cells.py
    assert (boot["n_resamples"].astype(int) == 60).all() and (boot["n_defined"].astype(int) <= 60).all()
    assert (table.loc[table["method"] == "FISHER", "n_resamples"] == "").all()
    assert (table["low"] <= table["estimate"]).all() and (table["estimate"] <= table["high"]).all()
    forest = plotly_specs(at)["forest"]
    # One legend entry per method; each metric's whiskers are drawn in that metric's colour under it.
    legend = [t["name"] for t in forest["data"] if t.get("showlegend", True)]
    assert sorted(legend) == ["BOOT-BOTH", "FISHER", figures.CHANCE_NAME]
    drawn = [t for t in forest["data"] if t.get("showlegend") is False]
    assert len(drawn) == 2 * (len(DEMO_METRICS) + 3)
    ticks = forest["layout"]["yaxis"]["ticktext"]
    assert ticks[-3:] == [f"human ceiling: annotator {a}" for a in (1, 2, 3)]  # references, never sorted in
    assert all(t["marker"]["color"] == figures.HUMAN_CEILING_COLOUR for t in drawn if "ceiling" in t["hovertext"][0])
    assert any("*human ceiling* rows" in c.value for c in at.caption)
    hover = drawn[0]["hovertext"][0]
    assert "interval = [" in hover and "estimate = " in hover
    assert at.download_button
    # Same seed, same numbers: a fresh session reproduces the table exactly.
    again = open_ci({"ci": ["fisher", "boot-both"], "ci_k": "60", "ci_seed": "7"}).dataframe[0].value
    np.testing.assert_allclose(again["low"][: len(table)], table["low"])
    # Another seed moves the bootstrap bounds, never the estimates.
    at.number_input(key="w:ci_seed").set_value(8).run()
    other = at.dataframe[0].value[: len(table)]
    np.testing.assert_allclose(other["estimate"], table["estimate"])
    assert not np.allclose(other[other["method"] == "BOOT-BOTH"]["low"], boot["low"])


def test_ci_forest_plot_draws_the_chance_baseline(demo_env):
    """docs/methods.md sec. 12: Kendall of continuous metrics has one chance baseline, one line across the plot."""
    at = open_ci({"ci": "boot-both", "ci_k": "60", "ci_seed": "3"})
    forest = plotly_specs(at)["forest"]
    line = next(t for t in forest["data"] if t["name"] == figures.CHANCE_NAME)
    from metaeval_core.analyses.chance import chance_baseline
    from metaeval_core.data.synthetic import synthetic_dataset

    core = chance_baseline(synthetic_dataset(), "metric.noise", "human.quality", n_resamples=60, rng=3)
    assert [x for x in line["x"] if x is not None] == pytest.approx([core.estimate] * 2)
    assert line["y"][:2] == [3 - 0.5, 3 + len(DEMO_METRICS) - 0.5]  # across every metric's row (ceilings below)
    band = [s for s in forest["layout"]["shapes"] if s.get("x0") == pytest.approx(core.low)]
    assert len(band) == 1 and band[0]["x1"] == pytest.approx(core.high)
    assert any("Chance level" in c.value and "for every metric here" in c.value for c in at.caption)
    # Pearson's baselines differ a little with the values, within Monte Carlo error here: still one line.
    at.sidebar.radio(key="w:coefficient").set_value("pearson").run()
    assert_clean(at)
    line = next(t for t in plotly_specs(at)["forest"]["data"] if t["name"] == figures.CHANCE_NAME)
    assert sum(x is None for x in line["x"]) == 1


def test_ci_sort_order_and_cap(demo_env):
    at = open_ci({"ci": "fisher", "metric": ["metric.noise", "metric.strong"], "ci_k": "50000", "sort": "name"})
    assert at.number_input(key="w:ci_k").value == data.MAX_RESAMPLES
    assert any("capped" in c.value for c in at.caption)
    ticks = plotly_specs(at)["forest"]["layout"]["yaxis"]["ticktext"]
    assert ticks[:2] == ["metric.noise", "metric.strong"] and all(t.startswith("human ceiling") for t in ticks[2:])
    at.radio(key="w:ci_sort").set_value("estimate").run()  # a fragment rerun
    assert_clean(at)
    assert plotly_specs(at)["forest"]["layout"]["yaxis"]["ticktext"][:2] == ["metric.strong", "metric.noise"]
    assert at.query_params["sort"] == "estimate"


def test_ci_empty_state(demo_env):
    at = open_ci({"ci": ""})
    assert any("at least one CI method" in i.value for i in at.info)
    assert not at.dataframe


def open_sig(query):
    at = new_app({"dataset": "demo", **query}).run()
    at.switch_page("pages/significance.py").run()
    assert_clean(at)
    return at


def test_significance_heatmap_fill_outline_and_words(demo_env):
    at = open_sig({"sig_k": "99", "test": "perm-both", "correction": "bonferroni", "family": "row"})
    records = at.dataframe[0].value
    assert len(records) == 5 * 4
    heat = plotly_specs(at)["heatmap"]
    shapes = heat["layout"].get("shapes", [])
    assert len(shapes) == int(records["significant corrected"].sum()) > 0
    words = heat["data"][0]["customdata"][0][1]
    assert words.startswith("H1: metric.strong correlates better with human.quality than metric.good")
    assert "PERM-BOTH, 99 resamples" in words
    # The page's correction equals the core's own corrected table.
    from metaeval_core.stats.significance import compare_all_pairs
    from metaeval_core.data.synthetic import synthetic_dataset

    core = compare_all_pairs(synthetic_dataset(), DEMO_METRICS, "human.quality", level="system",
                             coefficient="kendall", method="perm-both", n_resamples=99, rng=0,
                             correction="bonferroni", family="row")
    expected = [r["pvalue_corrected"] for r in core.to_records()]
    np.testing.assert_allclose(records["p corrected"], expected)
    # The chance level sits beside the metrics' estimates (the clusters chart), not on the p-value heatmap.
    assert any(t["name"] == figures.CHANCE_NAME for t in plotly_specs(at)["clusters"]["data"])
    assert any("Chance level" in c.value for c in at.caption)

    at.selectbox(key="w:sig_correction").set_value("none").run()
    assert_clean(at)
    none = at.dataframe[0].value
    np.testing.assert_allclose(none["p corrected"], none["p"])
    assert int(none["significant corrected"].sum()) >= int(records["significant corrected"].sum())
    assert at.query_params["correction"] == "none"
    # No correction: nothing is "still below alpha after no correction" (the caption used to say so)
    captions = " ".join(c.value for c in at.caption)
    assert "after no correction" not in captions and "the same cells (no multiple-comparison" in captions
    hover = plotly_specs(at)["heatmap"]["data"][0]["customdata"]
    assert not any("after no correction" in cell or "over none" in cell for row in hover for cell in row)
    assert not any("after correction" in m.value for m in at.markdown)
    assert any(m.value.startswith("**Significant (no correction):**") for m in at.markdown)


def test_significance_williams_only_where_defined_and_empty_state(demo_env):
    at = open_sig({"test": "williams", "level": "input", "sig_k": "20"})
    assert "williams" not in at.selectbox(key="w:sig_method").options
    assert at.selectbox(key="w:sig_method").value == "default"  # the dataset default: PERM-BOTH here
    at.sidebar.radio(key="w:level").set_value("system").run()
    at.selectbox(key="w:sig_method").set_value("williams").run()
    assert_clean(at)
    assert at.number_input(key="w:sig_k").disabled
    assert any("approximate" in c.value for c in at.caption)  # Kendall: Williams is approximate
    at.sidebar.multiselect(key="w:metrics").set_value(["metric.good"]).run()
    assert any("at least two metrics" in i.value for i in at.info)


def test_correct_table_families():
    p = np.array([[np.nan, 0.01, 0.04], [0.02, np.nan, 0.5], [0.3, 0.01, np.nan]])
    row = tables.correct_table(p, "bonferroni", "row")
    np.testing.assert_allclose(row[0, 1:], [0.02, 0.08])
    table = tables.correct_table(p, "bonferroni", "table")
    assert table[0, 1] == pytest.approx(0.06)
    assert np.isnan(table[1, 1])
    np.testing.assert_allclose(tables.correct_table(p, "holm", "none"), p)
    with pytest.raises(ValueError):
        tables.correct_table(p, "holm", "galaxy")


def test_pairwise_accuracy_is_a_coefficient_on_the_resampling_pages(demo_env):
    """The accuracies are offered wherever a coefficient is; Fisher is skipped for them, with the true reason, and
    comes back (still selected) with a correlation; Williams is not offered for them."""
    at = open_ci({"ci": ["fisher", "boot-both"], "ci_k": "40", "coef": "pairwise-accuracy"})
    assert at.multiselect(key="w:ci_methods").value == ["fisher", "boot-both"]
    assert any("FISHER is skipped" in i.value and "pairwise accuracy" in i.value for i in at.info)
    assert not any("not in this dataset" in str(c.value) for c in at.caption)
    table = at.dataframe[0].value
    assert set(table["method"]) == {"BOOT-BOTH"}
    assert ((0 <= table["low"]) & (table["high"] <= 1)).all()
    at.radio(key="w:coefficient").set_value("pearson").run()
    assert set(at.dataframe[0].value["method"]) == {"FISHER", "BOOT-BOTH"}
    assert not any("FISHER is skipped" in i.value for i in at.info)
    at = open_sig({"test": "williams", "coef": "tie-calibrated-accuracy", "sig_k": "20"})
    assert "williams" not in at.selectbox(key="w:sig_method").options
    assert_clean(at)


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_significance_says_better_only_for_a_one_sided_test(demo_env, alternative):
    """Issue 24: with a two-sided test the title, axis, table column, H1 and the significant list say 'differ',
    never 'better'; with alternative='greater' they ask 'is X better than Y?'."""
    at = open_sig({"sig_k": "99", "alternative": alternative, "alpha": "0.2", "correction": "none"})
    heat = plotly_specs(at)["heatmap"]
    records = at.dataframe[0].value
    h1 = next(c.value for c in at.caption if c.value.startswith("Cell (X, Y)")).replace("\\", "")
    listed = next(m.value for m in at.markdown
                  if m.value.startswith("**Significant (no correction):**")).replace("\\", "")
    if alternative == "two-sided":
        assert "better" not in heat["layout"]["title"]["text"] + heat["layout"]["yaxis"]["title"]["text"]
        assert "X" in records.columns and "X (better?)" not in records.columns
        assert "H1: X and Y correlate differently with human.quality (kendall, system level), two-sided" in h1
        assert " > " not in listed and " ≠ " in listed
        # each unordered pair once, the higher correlation first
        sig = records[records["significant corrected"]]
        assert listed.count("≠") == len(sig) // 2
        for _, row in sig[sig["delta"] > 0].iterrows():
            assert f"{row['X']} ≠ {row['Y']}" in listed
    else:
        assert "better" in heat["layout"]["title"]["text"] and "X (better?)" in records.columns
        assert "H1: X correlates better with human.quality than Y does (kendall, system level), one-sided" in h1
        assert " > " in listed and "≠" not in listed
    assert "better" not in at.title[0].value
