"""Pages whose numbers combine correlations (Judged vs all, Ranking stability, Overall average) link to the items
behind them: each link opens Correlations with the examples panel on the right view (issue 31)."""

from __future__ import annotations

from ui_helpers import assert_clean, link_params, new_app, open_link

_links, _open = link_params, open_link


def test_judged_vs_all_opens_the_system_pairs_of_each_pool(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "pools_k": "100"}).run()
    at.switch_page("pages/pools.py").run()
    assert_clean(at)
    links = {label: p for label, p in _links(at).items() if p.get("ex") == "metric.good"}
    assert links, list(_links(at))
    pools = sorted(p["pool"] for p in links.values())
    assert pools in (["judged"], ["all", "judged"])  # both pools where the dataset has unjudged inputs
    params = next(p for p in links.values() if p["pool"] == pools[0])
    assert params["level"] == "system" and params["coef"] == "kendall" and params["link"] == "1"
    at = _open(at, params)
    assert at.selectbox(key="w:ex_metric").value == "metric.good"
    assert at.sidebar.radio(key="w:level").value == "system"
    assert "system pairs are ordered unlike people" in " ".join(c.value for c in at.caption)


def test_ranking_stability_links_each_metric_to_its_system_pairs(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "stab_k": "20", "level": "input"}).run()
    at.switch_page("pages/stability.py").run()
    assert_clean(at)
    assert any(c.value.startswith("System pairs behind") for c in at.caption)
    params = _links(at)["metric.weak"]
    assert params["ex"] == "metric.weak" and params["level"] == "system" and params["pool"] == "judged"
    at = _open(at, params)
    assert at.selectbox(key="w:ex_metric").value == "metric.weak"
    assert at.sidebar.radio(key="w:level").value == "system"


def test_overall_average_links_each_task_value_to_its_examples(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "avg_lv": ["system", "input"], "avg_k": "50"}).run()
    at.switch_page("pages/average.py").run()
    assert_clean(at)
    links = {label: p for label, p in _links(at).items() if p.get("ex") == "metric.weak"}
    assert sorted(p["level"] for p in links.values()) == ["input", "system"]  # one per task
    label, params = next((label, p) for label, p in links.items() if p["level"] == "input")
    assert label.startswith("metric.weak ")  # the task's value beside the metric
    assert params["human"] == "human.quality" and params["dataset"] == "demo"
    at = _open(at, params)
    assert at.selectbox(key="w:ex_metric").value == "metric.weak"
    assert at.sidebar.radio(key="w:level").value == "input"
    assert "the mean of" in " ".join(c.value for c in at.caption)  # the input level's items


def test_a_task_on_another_dataset_opens_that_datasets_examples(real_env):
    at = new_app({"dataset": "summeval", "metric": ["rouge-1.f1"], "avg_h": ["expert.coherence"],
                  "avg_ds": ["realsumm"], "avg_t": ["realsumm:litepyramid.recall"], "avg_k": "50"}).run()
    at.switch_page("pages/average.py").run()
    assert_clean(at)
    params = next(p for p in _links(at).values() if p.get("dataset") == "realsumm")
    assert params["ex"] == "rouge-1.f1" and params["metric"] == "rouge-1.f1"  # alone: the session's may not exist
    assert params["human"] == "litepyramid.recall" and "lp" not in params
    at = _open(at, params)
    assert at.selectbox(key="w:ex_metric").value == "rouge-1.f1"
    assert at.query_params["dataset"] == "realsumm" and at.query_params["human"] == "litepyramid.recall"


def test_the_wmt23_suite_links_each_task_to_its_pairs_examples(real_env):
    from metaeval_core.analyses.suites import load_suite_data

    at = new_app({"dataset": "wmt23", "suite": "wmt23", "suite_k": "0"}).run()
    at.switch_page("pages/average.py").run()
    assert_clean(at)
    links = _links(at)
    by_task = {(p["lp"], p["level"], p["coef"]) for p in links.values()}
    for lp in ("en-de", "he-en", "zh-en"):  # system Pearson, segment Pearson, acc23, the pair's part of accuracy
        assert {(lp, "system", "pearson"), (lp, "global", "pearson"), (lp, "input", "tie-calibrated-accuracy"),
                (lp, "system", "pairwise-accuracy")} <= by_task, by_task
    assert all(p["dataset"] == "wmt23" and p["human"] == "mqm" and p["pool"] == "judged" for p in links.values())
    metric = at.selectbox(key="ex_suite_metric").value
    ids = {lp: pair.metrics[metric] for lp, pair in load_suite_data("wmt23").items()}
    for p in links.values():  # that pair's metric, listed (alone on another pair than the one open)
        assert p["ex"] == ids[p["lp"]] and ids[p["lp"]] in ([p["metric"]] if isinstance(p["metric"], str)
                                                           else p["metric"]), p
    label, params = next((label, p) for label, p in links.items() if p["lp"] == "he-en" and p["level"] == "global")
    assert label.startswith("he-en seg pearson ")  # the task's value beside its name
    # he-en's human translations are systems (WMT23's convention); en-de's Pearson tasks leave them out
    assert all(p.get("human_translations") == "true" for p in links.values() if p["lp"] == "he-en")
    assert not any(p.get("human_translations") for p in links.values()
                   if p["lp"] == "en-de" and p["coef"] == "pearson")
    at = _open(at, params)
    assert at.selectbox(key="w:ex_metric").value == ids["he-en"]
    assert at.query_params["lp"] == "he-en" and at.sidebar.radio(key="w:level").value == "global"
    assert at.sidebar.toggle(key="w:human_translations").value  # the suite's system set on he-en


def test_the_wmt24_suite_links_each_spa_task_to_its_pairs_p_values(real_env):
    from metaeval_core.analyses.suites import load_suite_data

    at = new_app({"dataset": "wmt23", "suite": "wmt24", "suite_k": "0"}).run()
    at.switch_page("pages/average.py").run()
    assert_clean(at)
    links = _links(at)
    assert {(p["lp"], p["coef"]) for p in links.values()} == {
        (lp, c) for lp in ("en-de", "he-en", "zh-en") for c in ("soft-pairwise-accuracy", "tie-calibrated-accuracy")}
    assert not any(c.value.startswith("No examples behind") for c in at.caption)
    metric = at.selectbox(key="ex_suite_metric").value
    label, params = next((label, p) for label, p in links.items()
                         if p["lp"] == "zh-en" and p["coef"] == "soft-pairwise-accuracy")
    assert label.startswith("zh-en spa ") and params["level"] == "system" and params["pool"] == "judged"
    value = float(label.rsplit(" ", 1)[1])
    at = _open(at, params)
    assert at.selectbox(key="w:ex_metric").value == load_suite_data("wmt23")["zh-en"].metrics[metric]
    sentence = next(c.value for c in at.caption if "mean gap" in c.value).replace("\\", "")
    shown = float(sentence.split("soft pairwise accuracy ", 1)[1].split(" ", 1)[0])
    assert round(shown, 3) == value and "largest gaps first" in sentence  # the suite's value, its pairs behind it


def test_the_wmt23_suites_system_tasks_open_the_pairs_of_the_sys_score_files(real_env):
    from metaeval_core.analyses.suites import load_suite_data, run_suite

    at = new_app({"dataset": "wmt23", "suite": "wmt23", "suite_k": "0"}).run()
    at.switch_page("pages/average.py").run()
    assert_clean(at)
    links = _links(at)
    system = [p for p in links.values() if p["level"] == "system"]  # system Pearson and each pair's accuracy
    assert system and all(p.get("ex_scores") == "sys" for p in system)
    assert not any(p.get("ex_scores") for p in links.values() if p["level"] != "system")
    metric = at.selectbox(key="ex_suite_metric").value
    params = next(p for p in system if p["lp"] == "zh-en" and p["coef"] == "pearson")
    at = _open(at, params)
    assert at.toggle(key="ex_scores:wmt23:zh-en").value  # the link's choice, kept in the URL
    assert at.query_params["ex_scores"] == "sys"
    suite = run_suite(load_suite_data("wmt23"), "wmt23")
    t = next(t for t, task in enumerate(suite.tasks) if task.short == "zh-en sys pearson")
    value = suite.values[list(suite.metrics).index(metric), t]
    sentence = next(c for c in (c.value.replace("\\", "") for c in at.caption) if ".sys.score" in c)
    assert f"system-level pearson {value:.4g}" in sentence, (sentence, value)
    at.toggle(key="ex_scores:wmt23:zh-en").set_value(False).run()  # back to the means of the segment scores
    assert_clean(at)
    assert "ex_scores" not in at.query_params
    assert not any(".sys.score" in c.value.replace("\\", "") for c in at.caption)


def _link_opens(params: dict, page: str, metric: str, **expected: str) -> None:
    """``page`` (on the demo, with ``params``) links ``metric`` to Correlations with ``expected`` parameters, and
    the link opens its examples."""
    at = new_app({"dataset": "demo", "human": "human.quality", **params}).run()
    at.switch_page(page).run()
    assert_clean(at)
    link = _links(at)[metric]
    assert link["ex"] == metric and link["human"] == "human.quality", link
    assert {k: link.get(k) for k in expected} == expected, link
    at = _open(at, link)
    assert at.selectbox(key="w:ex_metric").value == metric
    assert at.sidebar.radio(key="w:level").value == expected.get("level", "system")


def test_leave_one_out_links_the_items_behind_its_value_at_its_level(demo_env):
    _link_opens({"lmetric": "metric.good", "level": "input"}, "pages/influence.py", "metric.good", level="input")


def test_is_my_improvement_real_links_the_system_pairs_behind_its_curve(demo_env):
    _link_opens({"imetric": "metric.good", "imp_k": "50"}, "pages/improvement.py", "metric.good", level="system",
                coef="pairwise-accuracy")
