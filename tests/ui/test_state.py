"""URL query parameters <-> view state (metaeval_ui/state.py)."""

from __future__ import annotations

import pytest

from metaeval_ui import state

from ui_helpers import assert_clean, new_app


def test_parse_and_format_round_trip():
    f = state.FIELDS
    assert state.parse_param(f["metrics"], ["a", "b,c"]) == ["a", "b", "c"]
    assert state.parse_param(f["metrics"], "") == []
    assert state.format_param(f["metrics"], []) == ""
    assert state.parse_param(f["ci_k"], "200") == 200
    assert state.parse_param(f["ci_conf"], "0.9") == 0.9
    with pytest.raises(ValueError):
        state.parse_param(f["ci_k"], "lots")
    with pytest.raises(ValueError):
        state.parse_param(f["ci_conf"], "nan")
    assert state.format_param(f["ci_conf"], 0.95) == "0.95"
    params = state.url_params({"dataset": "demo", "metrics": ["x", "y"], "level": "input"})
    assert params == {"dataset": "demo", "metric": ["x", "y"], "level": "input"}


def test_url_sets_the_initial_view(demo_env):
    at = new_app({
        "dataset": "demo", "human": "human.quality", "metric": ["metric.weak", "metric.strong"],
        "level": "global", "coef": "spearman", "pool": "all", "systems": "type=ext",
    })
    at.run()
    assert_clean(at)
    assert at.sidebar.multiselect(key="w:metrics").value == ["metric.weak", "metric.strong"]
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert at.sidebar.radio(key="w:level").value == "global"
    assert at.sidebar.radio(key="w:coefficient").value == "spearman"
    assert at.sidebar.radio(key="w:pool").value == "all"
    assert at.sidebar.selectbox(key="w:systems").value == "type=ext"
    table = at.dataframe[0].value
    assert list(table["metric"]) == ["metric.weak", "metric.strong"]
    assert (table["n"] == 4 * 100).all()  # global level: 4 extractive systems x 100 judged inputs
    # The URL written back reproduces the same view.
    assert at.query_params["metric"] == ["metric.weak", "metric.strong"]
    assert at.query_params["level"] == "global" and at.query_params["coef"] == "spearman"


def test_choices_survive_a_page_switch(demo_env):
    at = new_app({"dataset": "demo"}).run()
    at.switch_page("pages/correlations.py").run()
    at.sidebar.radio(key="w:coefficient").set_value("pearson").run()
    at.sidebar.multiselect(key="w:metrics").set_value(["metric.fair"]).run()
    at.switch_page("pages/home.py").run()
    assert_clean(at)
    at.switch_page("pages/correlations.py").run()
    assert at.sidebar.radio(key="w:coefficient").value == "pearson"
    assert list(at.dataframe[0].value["metric"]) == ["metric.fair"]


def test_bad_url_values_are_ignored_with_a_note(demo_env):
    at = new_app({"dataset": "demo", "metric": ["metric.good", "no-such-metric"], "level": "galaxy",
                  "ci_k": "many"})
    at.run()
    assert_clean(at)
    notes = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert "no-such-metric" in notes and "ci_k" in notes
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert at.sidebar.radio(key="w:level").value == "system"
    assert list(at.dataframe[0].value["metric"]) == ["metric.good"]


def test_unknown_dataset_in_url_falls_back_to_the_default(demo_env):
    at = new_app({"dataset": "no-such-dataset"}).run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value == "demo"
    assert any("no-such-dataset" in c.value.replace("\\", "") for c in at.caption)
