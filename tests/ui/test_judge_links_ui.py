"""The judges pages' headlines open the items behind them (issue 31): a judge's position bias its flipped items,
its length bias the items where it chose the longer response, on the Judge biases page's own examples panel (the
Judges leaderboard's, reused), the choice kept in the URL (``ex=``, ``ex_view=``)."""

from __future__ import annotations

import re

from ui_helpers import assert_clean, link_params, new_app, open_link


def _panel_caption(at, judge: str) -> str:
    plain = [c.value.replace("\\", "") for c in at.caption]  # the page escapes markdown
    return next(c for c in plain if c.startswith(judge + ":"))


def _bias_page(params: dict):
    at = new_app({"jdataset": "llmbar", "jk": "40", **params}).run()
    at.switch_page("pages/judges_bias.py").run()
    assert_clean(at)
    return at


def test_position_bias_opens_the_flipped_items(real_env):
    at = _bias_page({})
    judges = at.selectbox(key="w:ex_metric").options
    judge = "GPT-4/Vanilla"
    assert judge in judges
    at.selectbox(key="w:ex_metric").set_value(judge).run()
    assert_clean(at)
    assert at.radio(key="w:ex_view").value == "flips"
    assert at.query_params["ex"] == judge and at.query_params["ex_view"] == "flips"
    n, total = map(int, re.search(r"(\d+) of (\d+) items judged in both orders change verdict",
                                  _panel_caption(at, judge)).groups())
    # the page's number: the share with the same winner in both orders, over the same items
    from metaeval_core.judges import load_pairwise, positional_bias

    data = load_pairwise("llmbar", data_dir=real_env)
    bias = positional_bias(data, judges=[judge], n_resamples=40, rng=0)[0]
    assert total == bias.consistency.n and n == round((1 - bias.consistency.estimate) * total)
    table = next(d.value for d in at.dataframe if "same winner in both orders" in d.value.columns)
    shown = table.set_index("judge").loc[judge, "same winner in both orders"]
    assert str(round(1 - n / total, 3))[:4] in str(shown)
    text = " ".join(m.value for m in at.markdown)
    assert "**Instruction**" in text and "**Response A" in text and "**Response B" in text


def test_length_bias_opens_the_items_choosing_the_longer_response(real_env):
    judge = "GPT-4/Vanilla"
    at = _bias_page({"ex": judge, "ex_view": "longer", "jlorder": "original"})  # a shared link
    assert at.selectbox(key="w:ex_metric").value == judge
    assert at.radio(key="w:ex_view").value == "longer"
    hits, verdicts, n = map(int, re.search(r"(\d+) of its (\d+) verdicts naming a winner choose the longer response"
                                           r".* on (\d+) of", _panel_caption(at, judge)).groups())
    from metaeval_core.judges import length_preference, load_pairwise

    data = load_pairwise("llmbar", data_dir=real_env)
    pref = length_preference(data, judges=[judge], order="original", n_resamples=40, rng=0)[0]
    assert verdicts == pref.judge_longer.n and hits / verdicts == pref.judge_longer.estimate
    assert n == hits  # one order: one verdict per listed item
    table = next(d.value for d in at.dataframe if "judge: longer chosen" in d.value.columns)
    assert f"{hits / verdicts:.3f}"[:4] in str(table.set_index("judge").loc[judge, "judge: longer chosen"])


def test_pairwise_f1_links_each_metric_to_its_system_pairs(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "f1_k": "100"}).run()
    at.switch_page("pages/pairwise.py").run()
    assert_clean(at)
    n_pairs = int(re.search(r"For each of the ([\d,]+) system pairs", " ".join(c.value for c in at.caption))
                  .group(1).replace(",", ""))
    links = {label: p for label, p in link_params(at).items() if p.get("ex") in ("metric.good", "metric.weak")}
    assert sorted(p["ex"] for p in links.values()) == ["metric.good", "metric.weak"]
    label, params = next((label, p) for label, p in links.items() if p["ex"] == "metric.weak")
    assert label.startswith("metric.weak 0.") or label.startswith("metric.weak 1.")  # its F1 beside it
    assert params["level"] == "system" and params["pool"] == "judged"
    at = open_link(at, params)
    assert at.selectbox(key="w:ex_metric").value == "metric.weak"
    captions = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert "system pairs are ordered unlike people" in captions
    assert re.search(rf"\b{n_pairs}\b", captions), captions  # the same system pairs as the page's labels


def test_ranking_agreement_opens_the_system_pairs_behind_it(real_env):
    at = new_app({"jdataset": "pandalm", "jk": "40"}).run()
    at.switch_page("pages/judges_systems.py").run()
    assert_clean(at)
    judges = at.selectbox(key="w:ex_metric").options
    judge = judges[1]
    at.selectbox(key="w:ex_metric").set_value(judge).run()
    assert_clean(at)
    assert at.query_params["ex"] == judge
    d, n, tau = re.search(r"(\d+) of (\d+) system pairs ordered unlike .*Kendall tau-b (-?[\d.]+) from these pairs",
                          _panel_caption(at, judge)).groups()
    table = next(t.value for t in at.dataframe if "agreement" in t.value.columns)
    assert len(table) == int(n) and (table["agreement"] == "discordant").sum() == int(d)
    assert (table["agreement"].iloc[:int(d)] == "discordant").all()  # unlike people first
    shown = next(t.value for t in at.dataframe if "judge" in t.value.columns and len(t.value.columns) > 2
                 and "agreement" not in t.value.columns)
    assert tau[:4] in " ".join(str(v) for v in shown.set_index("judge").loc[judge])  # the page's number
    # a shared link reopens the same judge's pairs
    again = new_app({"jdataset": "pandalm", "jk": "40", "ex": judge}).run()
    again.switch_page("pages/judges_systems.py").run()
    assert_clean(again)
    assert _panel_caption(again, judge) == _panel_caption(at, judge)


def test_a_row_click_opens_its_tables_view():
    from metaeval_ui.examples import clicked_view

    views, tables = ("flips", "longer"), ("flips", "longer")
    assert clicked_view(("j1", None), (None, None), tables, views) == "flips"
    assert clicked_view(("j1", "j2"), ("j1", None), tables, views) == "longer"
    assert clicked_view(("j1", "j1"), (None, None), tables, views) is None  # both tables echo the picker's judge
    assert clicked_view(("j1", "j1"), None, tables, views) is None  # first run: the URL's view stays
    assert clicked_view(("j1", "j1"), ("j1", "j1"), tables, views) is None  # nothing changed
    assert clicked_view((None, "j2"), (None, None), tables, ("flips",)) is None  # a view the page does not offer
