"""The examples panel (metaeval_ui/examples.py): from a correlation or a judge to the items behind it, kept in
the URL, in the report, with texts where the dataset has them."""

from __future__ import annotations

import pytest

from ui_helpers import assert_clean, new_app, plotly_specs


def _panel_open(at) -> bool:
    return any(m.value.startswith("#### Examples") for m in at.markdown)


def test_correlations_panel_on_the_demo_from_the_url(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "ex": "metric.weak"})
    at.run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert at.selectbox(key="w:ex_metric").value == "metric.weak"
    assert _panel_open(at)
    captions = " ".join(c.value for c in at.caption)
    assert "system pairs are ordered unlike people" in captions
    assert any("has no texts" in i.value for i in at.info)  # the demo has no texts: numbers only
    # the first listed pair is discordant (discordant first)
    items = [d.value for d in at.dataframe if "discordant" in d.value.columns]
    assert items and bool(items[0]["discordant"].iloc[0]) == (items[0]["discordant"].any())
    assert at.query_params["ex"] == "metric.weak"
    assert at.query_params["ex_item"]  # the shown pair is in the URL


def test_choosing_opens_and_closes_the_panel(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good"]}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert not _panel_open(at)  # nothing chosen: no panel
    at.selectbox(key="w:ex_metric").set_value("metric.good").run()
    assert_clean(at)
    assert _panel_open(at)
    at.sidebar.radio(key="w:level").set_value("input").run()
    assert_clean(at)
    assert "the mean of" in " ".join(c.value for c in at.caption)
    pick = at.selectbox(key="w:ex_item")
    second = pick.options[1].split(" (")[0]  # options are labels: "input (its value)"
    pick.set_value(second).run()
    assert_clean(at)
    assert at.query_params["ex_item"] == second
    at.toggle[0].set_value(True).run()  # the meeting view: items laid out, nothing folded
    assert_clean(at)
    assert any("The first 10 of" in c.value for c in at.caption)
    assert any(m.value.startswith("**1.**") for m in at.markdown)


def test_report_collects_the_examples_and_the_link(demo_env):
    from metaeval_ui import exports

    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good"], "ex": "metric.good",
                  "level": "global"}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert "rank" in " ".join(c.value for c in at.caption)
    snap = at.session_state["_export_snapshot"]
    titles = [item.title for item in snap["items"]]
    assert "Examples: metric.good (global, kendall)" in titles
    page = exports.report_html(snap)
    assert "Examples: metric.good" in page and "rank_gap" in page
    assert "ex=metric.good" in page  # the report's shareable link reopens the examples


def test_summeval_panel_shows_texts(real_env):
    at = new_app({"dataset": "summeval", "human": "expert.relevance", "metric": ["rouge-1.f1"], "ex": "rouge-1.f1",
                  "level": "input"}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert _panel_open(at)
    assert not any("has no texts" in i.value for i in at.info)
    text = " ".join(m.value for m in at.markdown)
    assert "**Source**" in text and "**Reference**" in text
    outputs = [d.value for d in at.dataframe if "output" in d.value.columns]
    assert outputs and outputs[0]["output"].notna().any()


def test_wmt_system_pair_shows_both_translations(real_env):
    at = new_app({"dataset": "wmt22-zhen", "metric": ["COMET-22-refA"], "ex": "COMET-22-refA"}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert _panel_open(at)
    pair = at.selectbox(key="w:ex_item").value
    a, b = pair.split(" | ")
    text = " ".join(m.value for m in at.markdown)
    assert f"**{a}**" in text and f"**{b}**" in text and "**Source**" in text


def test_hanna_says_there_are_no_texts(real_env):
    at = new_app({"dataset": "hanna", "human": "Coherence", "metric": ["BLEU"], "ex": "BLEU"}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert any("has no texts" in i.value for i in at.info)


@pytest.mark.parametrize("dataset", ["pandalm", "llmbar"])
def test_judges_leaderboard_panel(real_env, dataset):
    at = new_app({"jdataset": dataset}).run()
    at.switch_page("pages/judges_leaderboard.py").run()
    assert_clean(at)
    judges = at.selectbox(key="w:ex_metric").options
    at.selectbox(key="w:ex_metric").set_value(judges[1]).run()
    assert_clean(at)
    assert _panel_open(at)
    text = " ".join(m.value for m in at.markdown)
    assert "**Instruction**" in text and "**Response A" in text and "**Response B" in text
    assert at.query_params["ex"] == judges[1]
    next(t for t in at.toggle if t.label == "Text view for a meeting").set_value(True).run()
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "*Instruction:*" in text and "*A" in text and "*B" in text


def test_significance_cell_lists_where_two_metrics_differ(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "sig_k": "200"}).run()
    at.switch_page("pages/significance.py").run()
    assert_clean(at)
    assert not _panel_open(at)
    at.selectbox(key="w:ex_metric").set_value("metric.good vs metric.weak").run()
    assert_clean(at)
    assert _panel_open(at)
    assert "where the two differ" in " ".join(c.value for c in at.caption)
    assert at.query_params["ex"] == "metric.good vs metric.weak"


def test_realistic_pairs_band_lists_its_pairs(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "dk": "200"}).run()
    at.switch_page("pages/pairs.py").run()
    assert_clean(at)
    band = [t for t in at.toggle if t.key == "ex_band"]
    assert band
    band[0].set_value(True).run()
    assert_clean(at)
    assert _panel_open(at)
    captions = " ".join(c.value for c in at.caption)
    assert "metric difference" in captions
    shown = [m.value for m in at.metric if m.label == "Pairs in band"]
    assert shown and f"({shown[0]} of" in captions  # the panel lists exactly the band's pairs


def test_an_examples_choice_of_another_page_closes_silently(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good"], "ex": "GPT-4/Vanilla",
                  "ex_item": "nowhere"}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert not _panel_open(at)
    shown = " ".join(x.value for x in [*at.caption, *at.warning, *at.info])
    assert "GPT-4/Vanilla" not in shown and "nowhere" not in shown
    at.selectbox(key="w:ex_metric").set_value("metric.good").run()
    assert_clean(at)
    assert _panel_open(at) and "nowhere" not in " ".join(x.value for x in [*at.caption, *at.warning])


def test_an_uploaded_file_with_a_text_column_shows_its_texts(demo_env):
    rows = ["system,input,measure,score,text,source,reference"]
    for s, bias in (("A", 0.1), ("B", 0.3), ("C", 0.2)):
        for j in range(4):
            rows.append(f"{s},d{j},human.q,{(j * 7 + int(10 * bias)) % 5 + 1},{s} wrote {j},source {j},reference {j}")
            rows.append(f"{s},d{j},bleu,{bias + j / 10:.2f},,,")
    at = new_app().run()
    at.file_uploader(key="w:upload_file").upload("texts.csv", ("\n".join(rows) + "\n").encode(), "text/csv")
    at.run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    at.sidebar.radio(key="w:level").set_value("input").run()
    at.selectbox(key="w:ex_metric").set_value("bleu").run()
    assert_clean(at)
    assert _panel_open(at)
    assert not any("has no texts" in i.value for i in at.info)
    text = " ".join(m.value for m in at.markdown)
    assert "**Source**" in text and "source " in text and "**Reference**" in text
    outputs = [d.value for d in at.dataframe if "output" in d.value.columns]
    assert outputs and outputs[0]["output"].str.contains("wrote").all()


# -- every headline opens its examples (issue 31): the Overview's links, Confidence intervals, all dimensions ---------
def _link(at, label: str) -> dict:
    """The query parameters of the Overview's page link ``label`` (as AppTest.query_params takes them)."""
    from urllib.parse import parse_qs

    found = [p for p in at.get("page_link") if p.proto.label == label]
    assert found, [p.proto.label for p in at.get("page_link")]
    params = parse_qs(found[0].proto.query_string, keep_blank_values=True)
    return {k: v[0] if len(v) == 1 else v for k, v in params.items()}


def test_overview_rows_open_their_examples_on_correlations(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "level": "input", "ex_h": "elsewhere", "ex_item": "an item of another list"}).run()
    assert_clean(at)
    assert any(c.value == "Examples behind a row:" for c in at.caption)
    params = _link(at, "metric.weak")
    assert params["ex"] == "metric.weak" and params["dataset"] == "demo" and params["level"] == "input"
    assert "ex_h" not in params and "ex_item" not in params  # against the Overview's human, from the first item
    assert params["human"] == "human.quality" and params["link"] == "1"
    at.query_params = params  # the click: Streamlit opens the page with the link's parameters, in this session
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert _panel_open(at) and at.selectbox(key="w:ex_metric").value == "metric.weak"
    assert at.sidebar.radio(key="w:level").value == "input"
    assert "link" not in at.query_params and at.query_params["ex"] == "metric.weak"  # the shareable URL
    assert "the mean of" in " ".join(c.value for c in at.caption)  # the input level's items
    # the picker still works after the link (the link's choice is adopted once, not on every run)
    at.selectbox(key="w:ex_metric").set_value("metric.good").run()
    assert_clean(at)
    assert at.query_params["ex"] == "metric.good"


def test_overview_headline_opens_the_close_pairs_examples(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good"], "dk": "200"}).run()
    assert_clean(at)
    everything = next(p.proto.label for p in at.get("page_link") if p.proto.label.startswith("all ")
                      and p.proto.label.endswith(" pairs"))
    params = _link(at, everything)  # rSYS on all pairs: the system-level Kendall examples
    assert params["ex"] == "metric.good" and params["level"] == "system" and params["coef"] == "kendall"
    params = _link(at, "the closest 20%")
    assert params["ex"] == "band:metric.good" and params["dmetric"] == "metric.good" and float(params["l"]) == 0
    at.query_params = params
    at.switch_page("pages/pairs.py").run()
    assert_clean(at)
    assert _panel_open(at) and next(t for t in at.toggle if t.key == "ex_band").value
    shown = [m.value for m in at.metric if m.label == "Pairs in band"]
    assert shown and f"({shown[0]} of" in " ".join(c.value for c in at.caption)


def test_confidence_intervals_open_their_examples(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "ci_k": "200"}).run()
    at.switch_page("pages/confidence.py").run()
    assert_clean(at)
    assert not _panel_open(at)
    forest = plotly_specs(at)["forest"]
    assert {"metric.good", "metric.weak"} <= {c for t in forest["data"] for c in (t.get("customdata") or [])}
    at.selectbox(key="w:ex_metric").set_value("metric.good").run()
    assert_clean(at)
    assert _panel_open(at) and at.query_params["ex"] == "metric.good"


TWO_HUMANS = "\n".join(["system,input,measure,score"] + [
    f"{s},d{j},{m},{v}" for s, base in (("A", 1), ("B", 2), ("C", 3), ("D", 4)) for j in range(5)
    for m, v in (("fluency", (base * 3 + j) % 5 + 1), ("coherence", (base + 2 * j) % 5 + 1),
                 ("bleu", round(base / 10 + j / 100, 3)))]) + "\n"


def test_all_dimensions_open_examples_against_the_chosen_dimension(demo_env):
    at = new_app().run()
    at.file_uploader(key="w:upload_file").upload("two.csv", TWO_HUMANS.encode(), "text/csv")
    at.run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    human = at.sidebar.selectbox(key="w:human").value
    other = next(h for h in ("fluency", "coherence") if h != human)
    at.radio(key="w:corr_layout").set_value("all").run()
    at.selectbox(key="w:ex_metric").set_value("bleu").run()
    assert_clean(at)
    assert at.selectbox(key="w:ex_human").value == human
    at.selectbox(key="w:ex_human").set_value(other).run()
    assert_clean(at)
    assert f"bleu vs {other}" in " ".join(c.value for c in at.caption)
    assert at.query_params["ex_h"] == other
    dots = [t for t in plotly_specs(at)["correlation_bar"]["data"] if t.get("customdata")]
    assert {tuple(c) for t in dots for c in t["customdata"]} == {("bleu", "fluency"), ("bleu", "coherence")}
    at.switch_page("pages/confidence.py").run()  # a page with one human measure: ex_h is not its
    assert_clean(at)
    assert "ex_h" not in at.query_params and at.query_params["ex"] == "bleu"
    at.switch_page("pages/correlations.py").run()
    at.selectbox(key="w:ex_human").set_value(other).run()
    assert at.query_params["ex_h"] == other
    at.radio(key="w:corr_layout").set_value("chosen").run()  # one dimension: the examples are against it
    assert_clean(at)
    assert f"bleu vs {human}" in " ".join(c.value for c in at.caption) and "ex_h" not in at.query_params


def test_all_dimensions_from_the_url(real_env):
    at = new_app({"dataset": "summeval", "human": "expert.relevance", "metric": ["rouge-1.f1"], "layout": "all",
                  "ex": "rouge-1.f1", "ex_h": "expert.coherence"}).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert _panel_open(at)
    assert "rouge-1.f1 vs expert.coherence:" in " ".join(c.value for c in at.caption).replace("\\", "")
    assert at.selectbox(key="w:ex_human").value == "expert.coherence"


def test_clicked_points_name_metric_and_dimension():
    from metaeval_ui import examples

    event = {"selection": {"points": [{"x": 0.3, "y": 1, "customdata": ["bleu", "coherence"]}]}}
    assert examples.clicked_pair(event, ["bleu"], ["fluency", "coherence"]) == ("bleu", "coherence")
    assert examples.clicked_pair({"selection": {"points": [{"x": "bleu", "y": 0.4}]}}, ["bleu"], ["fluency"]) == (
        "bleu", "fluency")
    assert examples.clicked_pair({"selection": {"points": [{"x": "bleu"}]}}, ["bleu"], ["a", "b"]) is None
    forest = {"selection": {"points": [{"x": 0.2, "y": 2.1, "customdata": "metric.weak"}]}}
    assert examples.clicked_label(forest, ["metric.good", "metric.weak"]) == "metric.weak"


def test_a_capped_panel_says_so_and_the_downloads_hold_every_item(demo_env, monkeypatch):
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_ui import examples

    monkeypatch.setattr(examples, "KEPT", 7)
    examples.correlation_examples.clear()
    try:
        at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good"], "level": "global",
                      "ex": "metric.good"}).run()
        at.switch_page("pages/correlations.py").run()
        assert_clean(at)
        note = next(c.value for c in at.caption if c.value.startswith("The panel lists the first 7 of"))
        total = int(note.split(" of ")[1].split(" ")[0].replace(",", ""))
        assert total > 7 and f"the downloads hold all {total:,}" in note
        ds = synthetic_dataset()
        every = examples.all_correlation_records(ds, (ds.id, ds.fingerprint()), "metric.good", "human.quality",
                                                 "global", "kendall", "judged", "")
        assert len(every) == total
        next(t for t in at.toggle if t.label == "Text view for a meeting").set_value(True).run()
        assert_clean(at)
        assert any(f"The first 7 of {total:,} items" in c.value for c in at.caption)
    finally:
        examples.correlation_examples.clear()


def test_an_overview_link_keeps_an_uploaded_dataset_open(demo_env):
    at = new_app().run()
    at.file_uploader(key="w:upload_file").upload("two.csv", TWO_HUMANS.encode(), "text/csv")
    at.run()
    assert_clean(at)
    dataset = at.sidebar.selectbox(key="w:dataset").value
    at.query_params = _link(at, "bleu")
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value == dataset  # the session's upload, not the demo
    assert _panel_open(at) and at.query_params["ex"] == "bleu"
