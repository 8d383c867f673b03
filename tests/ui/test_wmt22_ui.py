"""The dashboard on the built-in WMT22 zh-en dataset: WMT's conventions by default, named on the pages, the
human-translations toggle and system expressions in the sidebar and the URL (docs/methods.md sec. 0.3, 0.6)."""

from __future__ import annotations

import re

import pytest

from tests.ui.ui_helpers import REPO, assert_clean, new_app

SMALL = {"ci_k": "100", "sig_k": "100"}
PAGE_FILES = sorted(p for p in re.findall(r'\("(pages/[a-z_]+\.py)"', (REPO / "app.py").read_text(encoding="utf-8"))
                    if (REPO / p).is_file())
TINY = {"f1_k": "100", "stab_k": "20", "pools_k": "100", "trials": "5", "sim_k": "20", "imp_k": "100",
        "plan_trials": "5", "plan_k": "20", "infl_k": "100", "dk": "100", "avg_k": "100",
        "metric": "COMET-22-refA,BLEU-refA,COMETKiwi-src"}


def open_wmt(page: str, query: dict | None = None):
    at = new_app({"dataset": "wmt22-zhen", **SMALL, **(query or {})}).run()
    if at.sidebar.selectbox(key="w:dataset").value != "wmt22-zhen":
        pytest.skip("wmt22-zhen is not available in this data mirror")
    at.switch_page(page).run()
    assert_clean(at)
    return at


def _captions(at) -> str:
    return " ".join(c.value.replace("\\", "") for c in at.caption)


@pytest.mark.realdata
@pytest.mark.parametrize("page", ["pages/home.py", "pages/correlations.py", "pages/significance.py"])
def test_pages_say_which_conventions_they_use(real_env, page):
    at = open_wmt(page, {"metric": "SEScore-refA,COMETKiwi-src"})
    assert at.sidebar.selectbox(key="w:human").value == "mqm"  # WMT's gold
    assert at.sidebar.radio(key="w:pool").value == "all"
    assert "WMT conventions" in _captions(at) and "references (refA, refB) not systems" in _captions(at)


@pytest.mark.realdata
def test_defaults_toggle_and_expression(real_env):
    at = open_wmt("pages/correlations.py", {"level": "system", "coef": "pearson"})
    assert list(at.sidebar.multiselect(key="w:metrics").value)[:3] == ["BERTScore-refA", "BLEU-refA",
                                                                      "BLEURT-20-refA"]  # the primary metrics
    at.sidebar.multiselect(key="w:metrics").set_value(["SEScore-refA", "COMETKiwi-src"]).run()
    table = at.dataframe[0].value.set_index("metric")
    assert (table["n"] == 14).all()
    at.sidebar.toggle(key="w:human_translations").set_value(True).run()
    assert_clean(at)
    table = at.dataframe[0].value.set_index("metric")
    assert (table["n"] == 15).all() and table.loc["SEScore-refA", "estimate"] == pytest.approx(0.920, abs=5e-4)
    assert at.query_params.get("human_translations") in ("true", ["true"])
    assert "human translations refB included" in _captions(at)
    at.sidebar.toggle(key="w:human_translations").set_value(False).run()
    at.sidebar.toggle(key="w:all_systems").set_value(True).run()
    at.sidebar.selectbox(key="w:systems").set_value("expression…").run()
    at.sidebar.text_input(key="w:systems_expr").set_value("!refB").run()
    assert_clean(at)
    table = at.dataframe[0].value.set_index("metric")
    assert table.loc["SEScore-refA", "estimate"] == pytest.approx(0.6458, abs=5e-4)  # refA kept as a system
    assert at.query_params.get("systems") in ("!refB", ["!refB"])
    at.sidebar.text_input(key="w:systems_expr").set_value("!refX").run()
    assert any("did you mean" in e.value for e in at.sidebar.error)


@pytest.mark.realdata
def test_a_url_expression_is_restored(real_env):
    at = open_wmt("pages/correlations.py", {"systems": "kind=mt,-Online-A", "metric": "SEScore-refA"})
    assert at.sidebar.selectbox(key="w:systems").value == "expression…"
    assert at.sidebar.text_input(key="w:systems_expr").value == "kind=mt,-Online-A"
    assert at.dataframe[0].value.set_index("metric").loc["SEScore-refA", "n"] == 13


@pytest.mark.realdata
def test_leaving_wmt_data_restores_the_next_datasets_pool(real_env):
    at = open_wmt("pages/correlations.py")
    assert at.sidebar.radio(key="w:pool").value == "all"
    at.sidebar.selectbox(key="w:dataset").set_value("summeval").run()
    assert_clean(at)
    assert at.sidebar.radio(key="w:pool").value == "judged"
    assert not any("pool=all" in c.value for c in at.caption)


@pytest.mark.realdata
@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_opens_on_wmt22(real_env, page):
    # A smoke test of the wiring with WMT's conventions (systems MQM never scored removed, pool all): small counts.
    open_wmt(page, TINY)


@pytest.mark.realdata
def test_keep_every_system_names_the_metrics_evaluated_on_fewer_systems(real_env):
    """Issue 25: with every system kept, a reference-based metric has no score for its own reference, so its n is
    smaller; the page states the system set once and names those metrics and why (docs/methods.md sec. 0.6)."""
    at = open_wmt("pages/correlations.py", {"level": "system", "coef": "pearson",
                                            "metric": "BLEU-refA,COMETKiwi-src,BLEU-refB"})
    assert "Metrics evaluated on fewer systems" not in _captions(at)  # WMT's set: every metric scores every system
    at.sidebar.toggle(key="w:all_systems").set_value(True).run()
    assert_clean(at)
    n = at.dataframe[0].value.set_index("metric")["n"]
    assert (n["BLEU-refA"], n["BLEU-refB"], n["COMETKiwi-src"]) == (15, 15, 16)
    captions = _captions(at)
    assert "System set: 16 systems. Metrics evaluated on fewer systems:" in captions
    assert "BLEU-refA (15 of 16: no score for refA)" in captions
    assert "BLEU-refB (15 of 16: no score for refB)" in captions
    assert "COMETKiwi-src (" not in captions


@pytest.mark.realdata
def test_judged_vs_all_leaves_out_the_systems_without_mqm(real_env):
    at = open_wmt("pages/pools.py", {"pools_k": "100", "dmetric": "COMET-22-refA"})
    shown = set()
    for chart in at.get("plotly_chart"):
        import json

        for trace in json.loads(chart.proto.spec).get("data", []):
            shown |= {str(v) for v in (trace.get("x") or []) if isinstance(v, str)}
    assert shown and not shown & {"DLUT", "NiuTrans", "QUARTZ_TuneReranking", "chrf_bestmbr"}
