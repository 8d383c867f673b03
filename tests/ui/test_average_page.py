"""AppTest of the Overall average page (docs/methods.md sec. 13) on the demo and, when present, SummEval."""

from __future__ import annotations

from ui_helpers import assert_clean, new_app, plotly_specs


def open_page(query: dict | None = None, dataset: str = "demo"):
    at = new_app({"dataset": dataset, **(query or {})}).run()
    at.switch_page("pages/average.py").run()
    assert_clean(at)
    return at


def texts(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def test_average_on_the_demo_over_two_levels(demo_env):
    at = open_page({"avg_k": "100", "avg_lv": ["system", "input"],
                    "metric": ["metric.strong", "metric.weak", "metric.noise"]})
    assert at.title[0].value == "Overall average"
    table = at.dataframe[0].value
    assert list(table["metric"])[0] == "metric.strong" and table["cluster"].iloc[0] == 1
    assert {"demo:human.quality:system:kendall", "demo:human.quality:input:kendall"} <= set(table.columns)
    assert (table["low"] <= table["average"]).all() and (table["average"] <= table["high"]).all()
    assert "average" in plotly_specs(at)
    assert "share their resamples" in texts(at.caption)
    # The demo is not WMT data: the plain mean by default, WMT's rescaled average by name, each said in words.
    assert at.selectbox(key="w:avg_rule").value == "default" and "plain mean" in texts(at.caption)
    average = table.set_index("metric")["average"]
    at.selectbox(key="w:avg_rule").set_value("rescaled").run()
    assert_clean(at)
    rescaled = at.dataframe[0].value.set_index("metric")["average"]
    assert ((rescaled - (average + 1) / 2).abs() < 1e-12).all()  # Kendall's range [-1, 1] mapped onto [0, 1]
    assert "rescaled to [0, 1]" in texts(at.caption) and at.query_params["avg_rule"] == "rescaled"
    at.selectbox(key="w:avg_rule").set_value("default").run()
    # One level only: one task, said so; the URL keeps the choice.
    at.multiselect(key="w:avg_levels").set_value(["system"]).run()
    assert_clean(at)
    assert "One task" in texts(at.info) and at.query_params["avg_lv"] == "system"
    at.multiselect(key="w:avg_levels").set_value([]).run()
    assert "Pick at least one human dimension and one level" in texts(at.info)


def test_summeval_four_expert_dimensions(real_env):
    experts = ["expert.coherence", "expert.consistency", "expert.fluency", "expert.relevance"]
    at = open_page({"avg_k": "100", "avg_h": experts, "metric": ["rouge-1.f1", "rouge-2.f1", "bertscore.f1"]},
                   dataset="summeval")
    table = at.dataframe[0].value
    assert len(table) == 3 and table["average"].notna().all()
    tasks = at.dataframe[1].value
    assert len(tasks) == 4 and set(tasks["draw group"]) == {1}
    # A second dataset that lacks the metrics: they are listed without an average, never averaged over fewer.
    at.multiselect(key="w:avg_datasets").set_value(["demo"]).run()
    at.multiselect(key="w:avg_other").set_value(["demo:human.quality"]).run()
    assert_clean(at)
    assert "No average" in texts(at.warning) and "not in dataset demo" in texts(at.warning)


def test_a_run_of_minutes_is_refused_with_what_to_change(real_env):
    experts = ["expert.coherence", "expert.consistency", "expert.fluency", "expert.relevance"]
    at = new_app({"dataset": "summeval", "avg_k": "5000", "avg_lv": ["global"], "avg_h": experts,
                  # 10 metrics (45 pairs) x 4 tasks x 5,000 resamples at the global level: minutes, even with the
                  # O(n log K) pair counts (5 metrics now fit the page's 60 s).
                  "metric": ["rouge-1.f1", "rouge-2.f1", "bertscore.f1", "qa-eval.f1", "METEOR", "rouge-l.f1",
                             "rouge-3.f1", "rouge-su4.f1", "MoverScore", "s3.pyr"]}).run()
    at.switch_page("pages/average.py").run()
    assert at.error and "would take about" in at.error[0].value and "fewer metrics" in at.error[0].value


def test_wmt23_offers_the_suites_named_as_mt_metrics_eval_names_them(real_env):
    # The sidebar's language pair is in the URL; the suite spans every pair whatever the sidebar shows.
    at = open_page({"lp": "he-en"}, dataset="wmt23")
    assert at.selectbox(key="w:lp").value == "he-en" and at.query_params["lp"] == "he-en"
    assert at.radio(key="w:avg_suite").value == "wmt23"
    table = at.dataframe[0].value
    assert list(table["metric"])[:3] == ["XCOMET-Ensemble", "XCOMET-QE-Ensemble[noref]", "MetricX-23"]
    assert abs(table["average"].iloc[0] - 0.8246) < 1e-4 and "all accuracy" in table.columns
    tasks = at.dataframe[1].value
    assert tasks["mt-metrics-eval task"].iloc[0] == "lang=en-de,he-en,zh-en level=sys corr_fcn=accuracy"
    assert tasks["weight"].iloc[0] == 0.25
    at.radio(key="w:avg_suite").set_value("wmt24").run()
    assert_clean(at)
    assert at.dataframe[0].value["metric"].iloc[0] == "GEMBA-MQM[noref]"
    assert "corr_fcn=pce" in " ".join(at.dataframe[1].value["mt-metrics-eval task"])


def test_wmt23_suite_clusters_default_to_mt_metrics_evals_test(real_env):
    """With resamples, WMT23's clusters come from mt-metrics-eval's AverageCorrMatrix procedure by default (issue
    30); the paired bootstrap is the other choice, and the default for WMT24 (its SPA permutation test is slow)."""
    at = open_page({"suite_k": "10"}, dataset="wmt23")
    assert at.radio(key="w:avg_suite_test").value == "wmt-perm"
    table = at.dataframe[0].value
    assert table["cluster"].iloc[0] == 1 and table["cluster"].notna().all()
    assert "mt-metrics-eval's (AverageCorrMatrix" in texts(at.caption)
    at.radio(key="w:avg_suite").set_value("wmt24").run()  # switching suites: back to that suite's default
    assert_clean(at)
    assert at.radio(key="w:avg_suite_test").value == "paired-bootstrap"
    assert "paired bootstrap on the averages" in texts(at.caption)
    assert at.dataframe[0].value["cluster"].iloc[0] == 1


def test_wmt22_defaults_to_the_gold_alone_and_pool_all(real_env):
    at = open_page({"avg_k": "100", "metric": ["COMET-22-refA", "MEE4-refA"]}, dataset="wmt22-zhen")
    assert at.multiselect(key="w:avg_humans").value == ["mqm"]
    assert at.radio(key="w:pool").value == "all"
    assert "datasets are resampled independently" not in texts(at.caption)


def test_wmt23_dataset_page_names_its_licence_and_pool_all(real_env):
    at = new_app({"dataset": "wmt23", "lp": "en-de"}).run()
    at.switch_page("pages/dataset.py").run()
    assert_clean(at)
    captions = texts(at.caption)
    assert "GPL-3.0" in captions and "WMT23's terms" in captions
    assert at.radio(key="w:pool").value == "all"


def test_wmt23_zh_en_raters_are_ceiling_rows_on_the_overview(real_env):
    # WMT25-style human rows: each of the 8 raters against the other 7, on the 288 cells they all rated.
    at = new_app({"dataset": "wmt23", "lp": "zh-en", "human": "mqm.raters", "level": "input", "coef": "pearson",
                  "ci_k": "100", "metric": ["XCOMET-Ensemble-refA", "BLEU-refA"]}).run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:human").value == "mqm.raters"
    assert "*human ceiling*: each annotator scored against the mean of the others" in texts(at.caption)
