"""AppTest of the paper-analysis pages (docs/methods.md sec. 7-8) on the demo and, when present, the real mirror."""

from __future__ import annotations

import importlib.util

import pytest

from metaeval_ui.data import analyses as da
from ui_helpers import assert_clean, new_app, plotly_specs

PAGES = ["pages/topk.py", "pages/pairwise.py", "pages/matrix.py", "pages/annotators.py", "pages/highrange.py",
         "pages/normality.py"]
DEMO_METRICS = ["metric.strong", "metric.good", "metric.fair", "metric.weak", "metric.noise"]


def open_page(page: str, query: dict | None = None):
    at = new_app({"dataset": "demo", **(query or {})}).run()
    at.switch_page(page).run()
    assert_clean(at)
    return at


def texts(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


@pytest.mark.parametrize("page", PAGES)
def test_every_analysis_page_opens_on_the_demo(demo_env, page):
    at = open_page(page, {"f1_k": "100"})
    assert at.title
    assert at.query_params["dataset"] == "demo"
    assert at.get("plotly_chart"), "every page draws at least one figure"


def test_topk_curves_follow_coefficient_and_subset(demo_env):
    at = open_page("pages/topk.py", {"coef": "pearson"})
    fig = plotly_specs(at)["topk"]
    assert [t["name"] for t in fig["data"]] == DEMO_METRICS
    assert round(fig["data"][0]["x"][0]) == 16 and round(fig["data"][0]["x"][-1]) == 3
    assert "error_y" in fig["data"][0] and "Fisher" in fig["layout"]["yaxis"]["title"]["text"]  # intervals
    table = at.dataframe[0].value
    assert list(table.index)[:2] == [16, 15] and len(table) == 14
    before = table["metric.strong"].tolist()
    at.sidebar.radio(key="w:coefficient").set_value("kendall").run()
    assert_clean(at)
    assert at.query_params["coef"] == "kendall"
    assert at.dataframe[0].value["metric.strong"].tolist() != before
    at.sidebar.selectbox(key="w:systems").set_value("type=abs").run()
    assert_clean(at)
    assert len(at.dataframe[0].value) == 12 - 2  # k = 12 .. 3
    assert at.query_params["systems"] == "type=abs"


def test_topk_subset_too_small_is_an_empty_state(demo_env):
    at = open_page("pages/topk.py", {"systems": "type=ext"})  # 4 systems: k = 4, 3
    assert len(at.dataframe[0].value) == 2


def test_pairwise_f1_bars_drilldown_and_cap(demo_env):
    at = open_page("pages/pairwise.py", {"f1_k": "50000", "f1_seed": "3", "metric": DEMO_METRICS[:3]})
    assert at.sidebar.number_input(key="w:f1_k").value == da.MAX_F1_RESAMPLES
    assert "capped" in texts(at.caption)
    bar = plotly_specs(at)["f1_bar"]["data"][0]
    assert sorted(bar["y"]) == sorted(DEMO_METRICS[:3])
    labels = at.dataframe[0].value
    assert len(labels) == 16 * 15 // 2
    assert {"system_a", "system_b", "human_label", "metric_label", "agree"} <= set(labels.columns)
    at.sidebar.number_input(key="w:f1_k").set_value(100).run()
    assert_clean(at)
    chosen = at.selectbox(key="w:f1_metric")
    other = next(m for m in DEMO_METRICS[:3] if m != chosen.value)
    chosen.set_value(other).run()
    assert_clean(at)
    assert at.query_params["f1_metric"] == other
    assert other in texts(at.caption)
    at.toggle(key="w:f1_only").set_value(True).run()
    assert_clean(at)
    if at.dataframe:
        assert not at.dataframe[0].value["agree"].any()
    else:
        assert "No pair is labelled differently" in texts(at.info)


def test_matrix_includes_humans_and_clusters(demo_env):
    at = open_page("pages/matrix.py")
    heat = plotly_specs(at)["matrix"]["data"][0]
    assert len(heat["x"]) == len(DEMO_METRICS) + 1
    assert "<b>human.quality</b>" in heat["x"]
    given = list(heat["x"])
    at.radio(key="w:mx_order").set_value("clustered").run()
    assert_clean(at)
    assert at.query_params["order"] == "clustered"
    clustered = list(plotly_specs(at)["matrix"]["data"][0]["x"])
    assert sorted(clustered) == sorted(given) and clustered != given
    at.sidebar.multiselect(key="w:mx_humans").set_value([]).run()
    assert_clean(at)
    assert len(plotly_specs(at)["matrix"]["data"][0]["x"]) == len(DEMO_METRICS)
    at.sidebar.multiselect(key="w:metrics").set_value(["metric.strong"]).run()
    assert "at least two measures" in texts(at.info)


def test_annotators_on_the_demo(demo_env):
    at = open_page("pages/annotators.py")
    alphas = at.dataframe[0].value
    assert set(alphas["dimension"]) == {"quality", "all"} and (alphas["n_annotators"] == 3).all()
    assert 0 < alphas["alpha"].iloc[0] <= 1
    assert "so there is no comparison between groups" in texts(at.info)


def test_high_range_baseline_and_bins(demo_env):
    at = open_page("pages/highrange.py", {"baseline": "S16"})
    assert at.selectbox(key="w:hr_baseline").value == "S16"
    taus = at.dataframe[0].value
    assert len(taus) == 10  # 5 metrics: 10 pairs
    specs = plotly_specs(at)
    assert {"dumbbell", "disagreement"} <= set(specs)
    at.selectbox(key="w:hr_baseline").set_value("S01").run()
    assert_clean(at)
    assert at.query_params["baseline"] == "S01"
    assert at.dataframe[0].value["tau_top"].tolist() != taus["tau_top"].tolist()
    at.number_input(key="w:hr_bins").set_value(5).run()
    assert_clean(at)
    assert len(plotly_specs(at)["disagreement"]["data"][-1]["x"]) == 5
    at.sidebar.multiselect(key="w:metrics").set_value(["metric.strong"]).run()
    assert "at least two metrics" in texts(at.info)


def test_normality_table_and_alpha(demo_env):
    at = open_page("pages/normality.py")
    table = at.dataframe[0].value
    assert list(table["measure"]) == DEMO_METRICS + ["human.quality"]
    assert (table["input_tested"] + table["input_skipped"] == 100).all()
    at.sidebar.radio(key="w:norm_alpha").set_value(0.1).run()
    assert_clean(at)
    assert at.query_params["norm_alpha"] == "0.1"
    assert (at.dataframe[0].value["input_share"] >= table["input_share"]).all()


# -- real data ------------------------------------------------------------------------------------------------


def open_real(dataset: str, page: str, query: dict | None = None):
    at = new_app({"dataset": dataset, **(query or {})}).run()
    if at.sidebar.selectbox(key="w:dataset").value != dataset:
        pytest.skip(f"{dataset} not available in this mirror")
    at.switch_page(page).run()
    assert_clean(at)
    return at


@pytest.mark.realdata
@pytest.mark.parametrize("dataset", ["summeval", "realsumm"])
@pytest.mark.parametrize("page", PAGES)
def test_every_analysis_page_opens_on_real_data(real_env, dataset, page):
    at = open_real(dataset, page, {"f1_k": "200"})
    assert at.title


@pytest.mark.realdata
def test_summeval_annotators_reproduce_the_paper(real_env):
    at = open_real("summeval", "pages/annotators.py")
    alphas = at.dataframe[0].value.set_index(["group", "dimension"])["alpha"]
    assert alphas[("expert", "all")] == pytest.approx(0.7187, abs=5e-5)
    assert alphas[("turker", "all")] == pytest.approx(0.4920, abs=5e-5)
    groups = at.dataframe[1].value
    assert set(groups["dimension"]) == {"coherence", "consistency", "fluency", "relevance"}
    before = groups["global"].tolist()
    at.radio(key="w:ann_coef").set_value("pearson").run()
    assert_clean(at)
    assert at.dataframe[1].value["global"].tolist() != before


@pytest.mark.realdata
def test_realsumm_topk_abs_subset_and_no_annotators(real_env):
    at = open_real("realsumm", "pages/topk.py", {"systems": "type=abs"})
    table = at.dataframe[0].value
    assert table.index[0] == 13  # the 13 abstractive systems of this mirror
    at = open_real("realsumm", "pages/annotators.py")
    assert "only the mean human score" in texts(at.info)


@pytest.mark.realdata
def test_summeval_high_range_defaults_to_lead3(real_env):
    at = open_real("summeval", "pages/highrange.py")
    assert at.selectbox(key="w:hr_baseline").value == "M0"


# -- simulations ----------------------------------------------------------------------------------------------

needs_sim = pytest.mark.skipif(importlib.util.find_spec("metaeval_core.analyses.simulations") is None,
                               reason="metaeval_core.analyses.simulations not in this build")


def finish_job(at, kind: str, timeout: float = 120):
    job = at.session_state["_simulation_jobs"][kind]
    job.thread.join(timeout)
    assert job.done
    at.run()
    assert_clean(at)
    return job


@needs_sim
def test_simulations_run_only_on_click_then_show_tables(demo_env):
    at = open_page("pages/simulations.py", {"trials": "20", "sim_k": "50", "ptrials": "5", "level": "system"})
    assert not at.dataframe and "Nothing runs until you press" in texts(at.info)
    at.button(key="run_coverage").click().run()
    assert_clean(at)
    job = finish_job(at, "coverage")
    assert not job.stopped and not job.error
    table = at.dataframe[0].value
    assert list(table["method"]) == ["FISHER", "BOOT-SYSTEMS", "BOOT-INPUTS", "BOOT-BOTH"]
    assert ((table["coverage"] >= 0) & (table["coverage"] <= 1)).all() and (table["n_valid"] <= 20).all()
    assert "coverage" in plotly_specs(at)
    # A rerun does not start anything: the same job object stays.
    at.run()
    assert at.session_state["_simulation_jobs"]["coverage"] is job
    at.button(key="run_power").click().run()
    finish_job(at, "power")
    power = plotly_specs(at)["power"]
    assert sorted(t["name"] for t in power["data"] if "name" in t) == ["BOOT-BOTH", "PERM-BOTH", "WILLIAMS"]
    assert any(t.get("fill") == "toself" for t in power["data"])  # the Monte Carlo band
    assert "error_y" in plotly_specs(at)["coverage"]["data"][0]  # coverage ± its Monte Carlo error
    assert "noise sd" in power["layout"]["xaxis"]["title"]["text"]
    # Both finished runs are exported like every chart and table (tests/ui/test_page_exports.py).
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("Figure (HTML)") == 2 and labels.count("Download CSV") == 2
    assert "Download report (HTML)" in labels
    reported = {item.title for item in at.session_state["_export_snapshot"]["items"]}
    assert {"Coverage of the intervals", "Power per k"} <= reported
    # Another seed is another config: its result is not shown until run.
    at.sidebar.number_input(key="w:sim_seed").set_value(5).run()
    assert_clean(at)
    assert "Nothing runs until you press" in texts(at.info)


@needs_sim
def test_simulations_stop_keeps_the_trials_done(demo_env):
    at = open_page("pages/simulations.py", {"trials": "1000", "sim_k": "1000", "sim_ci": "boot-both"})
    at.button(key="run_coverage").click().run()
    assert_clean(at)
    job = at.session_state["_simulation_jobs"]["coverage"]
    assert at.button(key="stop_coverage")
    at.button(key="stop_coverage").click().run()
    assert job.stop_requested
    finish_job(at, "coverage", timeout=60)
    assert job.stopped and 0 <= job.summary["meta"]["n_completed"] < 1000
    assert "Stopped after" in texts(at.warning)


@needs_sim
def test_simulations_caps_and_input_level_tests(demo_env):
    at = open_page("pages/simulations.py", {"trials": "99999", "ptrials": "5000", "level": "input"})
    assert at.number_input(key="w:sim_trials").value == da.MAX_COVERAGE_TRIALS
    assert at.number_input(key="w:sim_ptrials").value == da.MAX_POWER_TRIALS
    assert "capped" in texts(at.caption)
    assert "williams" not in at.multiselect(key="w:sim_tests").options
    degrade = at.radio(key="w:sim_degrade")
    assert degrade.value == "noise" and len(degrade.options) == 1  # the demo has no texts
    assert "only SummEval ships them" in texts(at.caption)


@needs_sim
@pytest.mark.realdata
def test_summeval_power_offers_token_sampling(real_env):
    at = open_real("summeval", "pages/simulations.py", {"smetric": "rouge-1.f1"})
    assert at.radio(key="w:sim_degrade").value == "tokens" and len(at.radio(key="w:sim_degrade").options) == 2
    at.sidebar.selectbox(key="w:sim_metric").set_value("rouge-2.f1").run()
    assert_clean(at)
    assert at.radio(key="w:sim_degrade").value == "noise"
    assert "not a ROUGE-1 variant" in texts(at.caption)
