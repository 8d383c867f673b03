"""Top-k systems and Confidence intervals open the examples behind their numbers (issue 31): the top-k link lists
the pairs among the top k systems only (the systems named in the link, so a shared link reopens them), and a row of
the intervals table opens its metric's examples as a click on its interval does."""

from __future__ import annotations

from test_examples_links_ui import _links, _open as _follow
from ui_helpers import assert_clean, new_app

from metaeval_core.data.selection import parse_selection


def _topk(query: dict):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  **query}).run()
    at.switch_page("pages/topk.py").run()
    assert_clean(at)
    ranking = next(d.value for d in at.dataframe if "system" in d.value.columns)["system"].tolist()
    by_k = next(d.value for d in at.dataframe if "metric.weak" in d.value.columns)
    return at, ranking, by_k


def _pairs_sentence(at) -> str:
    """The panel's sentence about the system pairs, unescaped."""
    return next(c.value for c in at.caption if "system pairs are ordered unlike" in c.value).replace("\\", "")


def test_top_k_link_opens_the_pairs_among_the_top_k_systems_only(demo_env):
    at, ranking, by_k = _topk({"coef": "pearson", "topk_k": "3"})
    assert len(ranking) > 3
    assert at.selectbox(key="w:topk_k").value == 3
    label, link = next((label, p) for label, p in _links(at).items() if p.get("ex") == "metric.weak")
    value = float(by_k.loc[3, "metric.weak"])
    assert label == f"metric.weak {value:.3f}"  # the value at k beside the metric
    assert link["level"] == "system" and link["coef"] == "pearson" and link["human"] == "human.quality"
    assert parse_selection(link["systems"]).names == tuple(ranking[:3]), link["systems"]
    at = _follow(at, link)
    assert at.selectbox(key="w:ex_metric").value == "metric.weak"
    assert at.query_params["systems"] == link["systems"]  # the shareable address keeps the top 3
    sentence = _pairs_sentence(at)
    assert " of 3 system pairs" in sentence, sentence  # 3 systems: 3 pairs, not all systems' pairs
    assert f"pearson {value:.4g}." in sentence, (sentence, value)  # the value the top-k page shows at k = 3


def test_top_k_at_all_systems_keeps_the_session_selection(demo_env):
    at, ranking, _ = _topk({})
    assert at.selectbox(key="w:topk_k").value == len(ranking)
    link = next(p for p in _links(at).values() if p.get("ex") == "metric.good")
    assert not link.get("systems")  # every system: the page's own (empty) selection, not a list of names
    at.selectbox(key="w:topk_k").set_value(4).run()
    assert_clean(at)
    assert at.query_params["topk_k"] == "4"
    link = next(p for p in _links(at).values() if p.get("ex") == "metric.good")
    assert parse_selection(link["systems"]).names == tuple(ranking[:4])


def test_a_confidence_intervals_row_opens_its_metrics_examples(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "ci_k": "200"}).run()
    at.switch_page("pages/confidence.py").run()
    assert_clean(at)
    assert not any(m.value.startswith("#### Examples") for m in at.markdown)
    table = next(d for d in at.dataframe if "width" in d.value.columns)
    row = table.value["metric"].tolist().index("metric.weak")
    at.session_state["ci_table"] = {"selection": {"rows": [row], "columns": []}}  # what a click on the row sets
    at.run()
    assert_clean(at)
    assert at.selectbox(key="w:ex_metric").value == "metric.weak" and at.query_params["ex"] == "metric.weak"
    assert any(m.value.startswith("#### Examples") for m in at.markdown)
    assert "system pairs are ordered unlike people" in " ".join(c.value for c in at.caption)
    at.selectbox(key="w:ex_metric").set_value("metric.good").run()  # the picker still wins over a kept row
    assert_clean(at)
    assert at.query_params["ex"] == "metric.good"
    at.run()
    assert at.selectbox(key="w:ex_metric").value == "metric.good"


def test_judged_vs_all_asks_for_enough_resamples_for_its_intervals(demo_env):
    """Its 95% percentile intervals need one resample per tail (40): the box starts there, and a smaller k from the
    URL is raised to it rather than ending in an error."""
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good"], "pools_k": "20"}).run()
    at.switch_page("pages/pools.py").run()
    assert_clean(at)
    box = next(n for n in at.number_input if n.label == "Resamples (k)")
    assert box.min == 40 and box.value == 40
    assert any(p["ex"] == "metric.good" for p in _links(at).values())


def test_top_k_on_wmt22_lists_the_k_systems_pairs_with_its_value(real_env):
    """WMT22 zh-en (the standard reference left out, metrics over every segment): the link's k systems are the
    human ranking's first k, and the examples' value and discordant count are the top-k page's at that k."""
    at = new_app({"dataset": "wmt22-zhen", "metric": ["COMET-22-refA", "BLEU-refA"], "topk_k": "6"}).run()
    at.switch_page("pages/topk.py").run()
    assert_clean(at)
    ranking = next(d.value for d in at.dataframe if "system" in d.value.columns)["system"].tolist()
    tau = float(next(d.value for d in at.dataframe if "BLEU-refA" in d.value.columns).loc[6, "BLEU-refA"])
    link = next(p for p in _links(at).values() if p.get("ex") == "BLEU-refA")
    assert parse_selection(link["systems"]).names == tuple(ranking[:6])
    at = _follow(at, link)
    sentence = _pairs_sentence(at)
    discordant = round((1 - tau) / 2 * 15)  # Kendall without ties: (1 - tau) / 2 of the 15 pairs
    assert f"kendall {tau:.4g}. {discordant} of 15 system pairs" in sentence, (sentence, tau)


def test_clicking_a_top_k_point_chooses_its_k(demo_env):
    at, ranking, _ = _topk({})
    at.session_state["topk"] = {"selection": {"points": [{"x": 4.15, "y": 0.3, "curve_number": 1}],
                                              "point_indices": [], "box": [], "lasso": []}}
    at.run()
    assert_clean(at)
    assert at.selectbox(key="w:topk_k").value == 4 and at.query_params["topk_k"] == "4"
    link = next(p for p in _links(at).values() if p.get("ex") == "metric.good")
    assert parse_selection(link["systems"]).names == tuple(ranking[:4])
    at.selectbox(key="w:topk_k").set_value(6).run()  # the picker still changes k while the point stays selected
    assert at.selectbox(key="w:topk_k").value == 6
