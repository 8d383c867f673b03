"""AppTest of the visual conventions on the pages (issue 14): intervals on Correlations, the coefficient on the
Matrix colour bar, the same colour for a metric on every page, stability small multiples and SVG exports."""

from __future__ import annotations

import json

import pytest

from test_pages_pairs import open_page  # small k for speed
from ui_helpers import assert_clean, plotly_specs


def test_correlation_bars_carry_the_overviews_intervals(demo_env):
    at = open_page("pages/correlations.py", {"metric": "metric.strong,metric.good"})
    bars = [t for t in plotly_specs(at)["correlation_bar"]["data"] if t["type"] == "bar"]
    assert bars and "error_y" in bars[0] and "BOOT-BOTH" in bars[0]["hovertext"][0]
    assert any("95% BOOT-BOTH interval" in c.value.replace("\\", "") for c in at.caption)
    at.sidebar.radio(key="w:coefficient").set_value("pearson").run()
    assert_clean(at)
    assert "error_y" in [t for t in plotly_specs(at)["correlation_bar"]["data"] if t["type"] == "bar"][0]


def test_a_metric_keeps_its_colour_from_page_to_page(demo_env):
    at = open_page("pages/correlations.py", {"metric": "metric.strong,metric.good"})
    bar = [t for t in plotly_specs(at)["correlation_bar"]["data"] if t["type"] == "bar"][0]
    colour = dict(zip(bar["x"], bar["marker"]["color"]))
    assert colour["metric.strong"] != colour["metric.good"]
    at.switch_page("pages/topk.py").run()
    assert_clean(at)
    lines = {t["name"]: t["line"]["color"] for t in plotly_specs(at)["topk"]["data"]}
    assert lines == colour
    at.switch_page("pages/stability.py").run()
    assert_clean(at)
    drawn = {t["name"]: t["line"]["color"] for t in plotly_specs(at)["stability_judged"]["data"]
             if t.get("mode") == "lines+markers"}
    assert {m: drawn[m] for m in colour} == colour
    human = next(v for k, v in drawn.items() if k.endswith("(human)"))
    assert human not in colour.values()


def test_stability_is_small_multiples_with_readable_log_ticks(demo_env):
    at = open_page("pages/stability.py", {"metric": "metric.strong,metric.good"})
    specs = plotly_specs(at)
    judged, everything = specs["stability_judged"], specs["stability_all"]
    titles = [a["text"] for a in judged["layout"]["annotations"]]
    assert "metric.strong" in titles and any(t.endswith("(human)") for t in titles)  # one panel per measure
    assert everything["layout"]["xaxis"]["type"] == "log"
    assert everything["layout"]["xaxis"]["ticktext"][:3] == ["10", "20", "50"]


def test_matrix_colour_bar_is_titled_by_the_coefficient(demo_env):
    at = open_page("pages/matrix.py", {"coef": "spearman"})
    heat = plotly_specs(at)["matrix"]["data"][0]
    assert heat["colorbar"]["title"]["text"] == "Spearman ρ" and heat["colorscale"][-1][1] == "rgb(5,48,97)"


def test_the_camera_button_can_save_svg(demo_env):
    at = open_page("pages/correlations.py")
    configs = [json.loads(c.proto.config)["toImageButtonOptions"] for c in at.get("plotly_chart")]
    assert configs and all(c["format"] == "png" for c in configs)
    at.session_state["w:figure_format"] = "svg"
    at.run()
    assert_clean(at)
    configs = [json.loads(c.proto.config)["toImageButtonOptions"] for c in at.get("plotly_chart")]
    assert configs and all(c["format"] == "svg" and c["width"] == 1280 and c["height"] for c in configs)


def test_pages_without_the_metric_picker_use_the_same_colours(demo_env):
    at = open_page("pages/correlations.py")  # the default metrics
    bar = [t for t in plotly_specs(at)["correlation_bar"]["data"] if t["type"] == "bar"][0]
    colour = dict(zip(bar["x"], bar["marker"]["color"]))
    fresh = open_page("pages/pairs.py")  # a fresh session opened on Realistic pairs (no metric picker there)
    metric = fresh.sidebar.selectbox(key="w:delta_metric").value
    assert plotly_specs(fresh)["delta_curve"]["data"][0]["line"]["color"] == colour[metric]


def test_all_human_dimensions_are_small_multiples_and_the_table_fits(real_env):
    at = open_page("pages/correlations.py", {"dataset": "summeval", "layout": "all"})
    fig = plotly_specs(at)["correlation_bar"]
    assert len(fig["data"]) == 8 and all(t["mode"] == "markers" and "error_x" in t for t in fig["data"])
    pivot = at.dataframe[1].value  # human dimensions as rows, the 5 metrics as columns: nothing off the right edge
    assert len(pivot) == 8 and list(pivot.columns) == ["rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.recall",
                                                       "qa-eval.f1"]


@pytest.mark.parametrize("dataset", ["demo", "hanna", "summeval"])
def test_overview_and_correlations_give_one_interval(request, dataset):
    """Issue 24: HANNA's BLEU read 0.556 [-0.026, 1.000] (bootstrap) on the Overview and had Fisher whiskers
    excluding 0 on Correlations, unexplained. Both pages now show the same BOOT-BOTH interval, name it, and name any
    metric on which Fisher's interval disagrees about zero."""
    import re

    from test_meeting import leaderboard_rows
    request.getfixturevalue("demo_env" if dataset == "demo" else "real_env")
    at = open_page("pages/home.py", {"dataset": dataset})
    _, rows = leaderboard_rows(at)
    overview = {r[1].removesuffix(" ⚠"): r[3] for r in rows if r[0].isdigit()}  # ⚠: a doubt marker
    assert any("Interval: BOOT-BOTH 95%" in c.value.replace("\\", "") for c in at.caption)
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    bar = [t for t in plotly_specs(at)["correlation_bar"]["data"] if t["type"] == "bar"][0]
    for metric, hover in zip(bar["x"], bar["hovertext"]):
        shown = re.search(r"95% BOOT-BOTH interval: (\[[^]]*\])", hover).group(1)
        assert shown == overview[metric], (metric, shown, overview[metric])
    note = next(c.value.replace("\\", "") for c in at.caption if "Whiskers" in c.value)
    claims = re.findall(r"([^;:]+): the BOOT-BOTH interval (includes|excludes) 0 but the Fisher one",
                        note.split("disagrees about zero for ", 1)[-1]) if "disagrees about zero" in note else []
    for names, verdict in claims:
        for name in names.split(", "):
            low, high = (float(v) for v in overview[name.strip()].strip("[]").split(", "))
            assert (low <= 0 <= high) == (verdict == "includes"), (name, overview[name.strip()], note)
    if dataset == "hanna":  # the case: BLEU's bootstrap interval includes 0, Fisher's does not
        assert any("BLEU" in names.split(", ") for names, verdict in claims if verdict == "includes"), note
