"""AppTest smoke and interaction tests of the dashboard pages (demo and, when present, the real mirror)."""

from __future__ import annotations

import pandas as pd
import pytest

from ui_helpers import LANDING, all_page_files, assert_clean, new_app


def open_page(at, page: str):
    if page != LANDING:
        at.switch_page(page)
    return at.run()


@pytest.mark.parametrize("page", all_page_files())
def test_every_page_opens_on_the_demo(demo_env, page):
    at = new_app().run()
    assert_clean(at)
    open_page(at, page)
    assert_clean(at)
    assert at.title, "every page has a title"
    assert at.sidebar.selectbox(key="w:dataset").value == "demo"
    assert at.query_params["dataset"] == "demo"


def test_overview_shows_counts_and_links_to_the_details(demo_env):
    at = new_app().run()
    assert_clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["systems"] == "16" and metrics["judged inputs"] == "100" and metrics["unjudged inputs"] == "2,000"
    assert metrics["human measures"] == "1" and metrics["metric measures"] == "5"
    assert "Where to go next" in [h.value for h in at.subheader]
    links = [link.proto.label for link in at.get("page_link")]
    assert any(label.startswith("**Dataset**") for label in links), links
    assert any(label.startswith("**Correlations**") for label in links), links


def test_overview_links_only_to_registered_pages(demo_env):
    at = new_app().run()
    assert_clean(at)
    links = [link.proto.label for link in at.get("page_link")]
    assert any(label.startswith("**Dataset**") for label in links), links


def heavy_elements(at) -> dict[str, int]:
    """Elements whose JavaScript is loaded on first use and is large (plotly, arrow tables, code, downloads)."""
    found = {"plotly_chart": len(at.get("plotly_chart")), "download_button": len(at.get("download_button")),
             "dataframe": len(at.dataframe), "data_editor": len(at.data_editor), "table": len(at.table),
             "code": len(at.code)}
    return {kind: n for kind, n in found.items() if n}


def test_overview_draws_no_heavy_element_on_the_demo(demo_env):
    """The landing page must not pull the plotly, dataframe or code bundles on a cold browser."""
    at = new_app().run()
    assert_clean(at)
    assert at.metric, "the counts are drawn"
    assert heavy_elements(at) == {}
    assert not at.session_state["_export_snapshot"]["items"], "nothing collected: no report button"


@pytest.mark.realdata
def test_overview_draws_no_heavy_element_on_summeval(real_env):
    at = new_app().run()
    assert_clean(at)
    if at.sidebar.selectbox(key="w:dataset").value != "summeval":
        pytest.skip("summeval is not available in this mirror")
    assert any(m.label.startswith("rSYS, all") for m in at.metric), "the headline is drawn"
    assert heavy_elements(at) == {}


def test_dataset_page_shows_means_distributions_and_missing_data(demo_env):
    at = new_app().run()
    at.switch_page("pages/dataset.py").run()
    assert_clean(at)
    assert at.title[0].value == "Dataset"
    headers = [h.value for h in at.subheader]
    assert headers == ["Per-system means", "Score distributions", "Missing data"]
    means = next(df.value for df in at.dataframe if "metric.strong" in df.value.columns)
    assert len(means) == 16
    assert any("measure" in df.value.columns and len(df.value) == 6 for df in at.dataframe), "missing-data table"
    assert len(at.get("plotly_chart")) == 1
    labels = [b.proto.label for b in at.get("download_button")]
    assert {"Download CSV", "Figure (HTML)", "Download report (HTML)"} <= set(labels), labels
    titles = [item.title for item in at.session_state["_export_snapshot"]["items"]]
    assert {"Per-system means", "Score distributions (histogram)", "Missing data"} <= set(titles), titles
    at.radio(key="w:dist_kind").set_value("box").run()
    assert_clean(at)
    assert at.query_params["dist"] == "box"


def test_dataset_page_pool_and_distribution_kind_follow_the_url(demo_env):
    at = new_app({"dataset": "demo", "pool": "all", "dist": "box"}).run()
    at.switch_page("pages/dataset.py").run()
    assert_clean(at)
    assert at.radio(key="w:pool").value == "all" and at.radio(key="w:dist_kind").value == "box"
    assert any("all pool (2100 inputs)" in c.value for c in at.caption)
    all_means = next(df.value for df in at.dataframe if "metric.strong" in df.value.columns)
    at.radio(key="w:pool").set_value("judged").run()
    assert_clean(at)
    assert at.query_params["pool"] == "judged" and at.query_params["dist"] == "box"
    judged_means = next(df.value for df in at.dataframe if "metric.strong" in df.value.columns)
    assert not judged_means["metric.strong"].equals(all_means["metric.strong"])
    assert judged_means["human.quality"].equals(all_means["human.quality"]), "human measures: judged inputs only"


def test_registry_datasets_without_files_are_listed_with_their_reason(demo_env):
    at = new_app().run()
    picker = at.sidebar.selectbox(key="w:dataset")
    if len(picker.options) == 1:
        pytest.skip("no registry in this build: only the demo is offered")
    assert any("unavailable" in label for label in picker.options)
    unavailable = next(opt for opt in ("summeval", "realsumm") if any(f"[{opt}]" in o for o in picker.options))
    picker.set_value(unavailable).run()
    assert not at.exception
    assert at.warning and "not available" in at.warning[0].value
    assert any("METAEVAL_DATA_DIR" in c.value for c in at.caption)


def correlations(at) -> pd.DataFrame:
    return at.dataframe[0].value


def test_correlation_table_follows_coefficient_and_level(demo_env):
    at = new_app({"dataset": "demo"}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    first = correlations(at)
    assert list(first["metric"]) == ["metric.strong", "metric.good", "metric.fair", "metric.weak", "metric.noise"]
    assert (first["n"] == 16).all()
    # Stronger metrics correlate better on the synthetic truth.
    assert first["estimate"].iloc[0] > first["estimate"].iloc[-1]

    at.sidebar.radio(key="w:coefficient").set_value("pearson").run()
    assert_clean(at)
    pearson = correlations(at)
    assert not pearson["estimate"].equals(first["estimate"])
    assert at.query_params["coef"] == "pearson"

    at.sidebar.radio(key="w:level").set_value("input").run()
    assert_clean(at)
    per_input = correlations(at)
    assert (per_input["n"] + per_input["skipped"] == 100).all()  # inputs used + skipped = judged inputs
    assert any("mean of the defined per-input correlations" in c.value for c in at.caption)
    assert at.query_params["level"] == "input"

    at.sidebar.radio(key="w:level").set_value("global").run()
    assert (correlations(at)["n"] == 1600).all()


def test_pool_and_system_subset_and_download(demo_env):
    at = new_app({"dataset": "demo"}).run()
    at.switch_page("pages/correlations.py").run()
    judged = correlations(at)
    pool = at.sidebar.radio(key="w:pool")
    assert not pool.disabled
    pool.set_value("all").run()
    assert_clean(at)
    assert not correlations(at)["estimate"].equals(judged["estimate"])
    at.sidebar.selectbox(key="w:systems").set_value("type=abs").run()
    assert_clean(at)
    table = correlations(at)
    assert (table["n"] == 12).all() and (table["systems"] == "type=abs").all()
    assert at.download_button, "CSV download present"
    assert at.query_params["systems"] == "type=abs" and at.query_params["pool"] == "all"


def test_empty_metric_choice_shows_an_empty_state(demo_env):
    at = new_app({"dataset": "demo"}).run()
    at.switch_page("pages/correlations.py").run()
    at.sidebar.multiselect(key="w:metrics").set_value([]).run()
    assert_clean(at)
    assert any("at least one metric" in i.value for i in at.info)
    assert not at.dataframe


def test_all_human_dimensions_layout(demo_env):
    at = new_app({"dataset": "demo", "layout": "all"}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert set(correlations(at)["human"]) == {"human.quality"}


@pytest.mark.realdata
@pytest.mark.parametrize("page", all_page_files())
def test_every_page_opens_on_summeval(real_env, page):
    at = new_app().run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value == "summeval", "summeval is the default when present"
    assert at.sidebar.selectbox(key="w:human").value == "expert.relevance"
    assert at.sidebar.multiselect(key="w:metrics").value == [
        "rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.recall", "qa-eval.f1"]
    open_page(at, page)
    assert_clean(at)


@pytest.mark.realdata
def test_summeval_pool_is_disabled_with_a_reason(real_env):
    at = new_app({"dataset": "summeval"}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert at.sidebar.radio(key="w:pool").disabled
    assert any("no unjudged inputs" in c.value for c in at.sidebar.caption)
    table = correlations(at).set_index("metric")
    # Deutsch et al. (TACL 2021) Table 2 territory: system-level Kendall of QAEval-F1 above ROUGE-2.
    assert table.loc["qa-eval.f1", "estimate"] > table.loc["rouge-2.f1", "estimate"]
    at.sidebar.radio(key="w:level").set_value("input").run()
    assert_clean(at)
    assert (correlations(at)["n"] + correlations(at)["skipped"] == 100).all()


@pytest.mark.realdata
def test_a_dataset_without_metrics_explains_itself(real_env):
    at = new_app({"dataset": "rose"}).run()
    assert_clean(at)
    if at.sidebar.selectbox(key="w:dataset").value != "rose":
        pytest.skip("rose not available in this mirror")
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert any("no automatic-metric scores" in i.value for i in at.info)


@pytest.mark.realdata
def test_pool_all_in_a_link_to_a_dataset_without_unjudged_inputs_is_noted(real_env):
    at = new_app({"dataset": "summeval", "pool": "all"}).run()
    # The Overview reads the correlation settings too (its leaderboard), so the note shows where the link lands.
    landing = [c.value.replace("\\", "") for c in at.caption]
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert at.sidebar.radio(key="w:pool").value == "judged"
    shown = landing + [c.value.replace("\\", "") for c in at.caption]
    assert any("pool=all is not available" in c for c in shown)


def test_first_open_shows_the_close_pairs_headline(demo_env):
    """The NAACL 2022 headline is on the landing page: rSYS on all pairs vs the closest 20%."""
    at = new_app({"dataset": "demo"}).run()
    assert_clean(at)
    labels = [m.label for m in at.metric]
    assert any(label.startswith("rSYS, all 120 pairs") for label in labels), labels
    assert any("closest 20%" in label for label in labels), labels


def test_the_dataset_picker_shows_short_names_and_the_details_below(demo_env):
    """The sidebar picker is narrow: options carry the short name and id, the chosen one's details follow."""
    from metaeval_ui.widgets import _label, _short_title
    from metaeval_ui.data import DatasetChoice

    long = DatasetChoice("hanna", "HANNA story generation (WritingPrompts, 11 systems x 96 prompts, LLM judges)")
    assert _label(long, "hanna") == "HANNA story generation [hanna]"
    assert _short_title("REALSumm (CNN/DM)") == "REALSumm" and _short_title("Plain name") == "Plain name"
    assert _short_title("Odd (unclosed") == "Odd (unclosed"
    at = new_app().run()
    picker = at.sidebar.selectbox(key="w:dataset")
    assert picker.format_func(picker.value) == "Synthetic demo [demo]"
    assert "Synthetic demo (offline)" in [c.value for c in at.sidebar.caption]
