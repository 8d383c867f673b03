"""Issue 14 (content): pages say only true things and lead with the answer (AppTest)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ui_helpers import REPO, assert_clean, new_app


def open_page(page, query=None):
    at = new_app({"dataset": "demo", **(query or {})}).run()
    at.switch_page(page).run()
    assert_clean(at)
    return at


def texts(at, kind):
    return [str(e.value) for e in getattr(at, kind)]


# -- Reproduce the papers ----------------------------------------------------------------------------------------
def test_reproduce_page_without_data_says_how_to_get_it(demo_env):
    at = open_page("pages/reproduce.py")
    info = " ".join(texts(at, "info"))
    assert "not available here" in info and "METAEVAL_DATA_DIR" in info and "fetch --dataset summeval" in info
    assert at.metric[0].value.startswith("0 of 0")


def test_reproduce_page_on_real_data_ticks_every_reproducible_number(real_env):
    at = open_page("pages/reproduce.py")
    frames = [d.value for d in at.dataframe]
    rows = sum(len(f) for f in frames)
    from metaeval_core.analyses.reproduce import PUBLISHED

    assert rows == len(PUBLISHED)
    verdicts = [v for f in frames for v in f[""]]
    reproducible = sum(1 for item in PUBLISHED if not item.reason)
    assert verdicts.count("✅") == reproducible and "❌" not in verdicts
    assert verdicts.count("— (see why)") == len(PUBLISHED) - reproducible
    assert at.metric[0].value == f"{reproducible} of {reproducible}"
    why = [v for f in frames for v in f["why not"] if v]
    assert all("whole test set" in v for v in why)


# -- navigation and local assets ----------------------------------------------------------------------------------
def test_overview_has_a_deep_link_alias_and_a_local_favicon():
    """'/overview' is a registered (hidden) url path of the Overview; the favicon is a local file, never a Material
    icon or emoji (which browsers fetch from an outside server)."""
    source = (REPO / "app.py").read_text(encoding="utf-8")
    assert 'url_path="overview"' in source and 'visibility="hidden"' in source
    tree = ast.parse(source)
    config = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") ==
                  "set_page_config")
    icon = next(k.value for k in config.keywords if k.arg == "page_icon")
    assert not isinstance(icon, ast.Constant)  # a path, not ':material/...' or an emoji
    favicon = REPO / "metaeval_ui" / "assets" / "favicon.png"
    assert favicon.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_overview_url_path_resolves(demo_env):
    at = new_app({"dataset": "demo"}).run()
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx  # noqa: F401

    at.switch_page("pages/home.py").run()
    assert_clean(at)
    assert at.title[0].value.startswith("metaeval")


# -- Overview leaderboard ------------------------------------------------------------------------------------------
def leaderboard_rows(at):
    table = next(m.value for m in at.markdown if m.value.startswith("| rank |"))
    rows = [line.strip("| ").split(" | ") for line in table.splitlines()[2:]]
    return table, [[cell.strip("*").replace("\\", "") for cell in row] for row in rows]


def test_overview_leads_with_a_leaderboard_and_the_naacl_headline(demo_env):
    at = new_app({"dataset": "demo"}).run()
    assert_clean(at)
    table, rows = leaderboard_rows(at)
    assert table.splitlines()[0] == "| rank | metric | τ | 95% interval |"
    assert [r[1] for r in rows][0] == "metric.strong" and len(rows) == 5
    ranks = [int(r[0]) for r in rows]
    assert ranks == sorted(ranks) and ranks[0] == 1 and ranks[-1] > 1  # metric.noise is separated from the best
    for rank, metric, estimate, interval in rows:
        low, high = (float(v) for v in interval.strip("[]").split(", "))
        assert low <= float(estimate) <= high
    labels = [m.label for m in at.metric]
    assert any(label.startswith("rSYS, all") for label in labels) and any("closest 20%" in label for label in labels)
    assert "text generation" in at.markdown[0].value
    assert not at.get("arrow_data_frame") and not at.get("plotly_chart")  # still light
    at.radio(key="w:coefficient").set_value("pearson").run()
    assert leaderboard_rows(at)[0].splitlines()[0] == "| rank | metric | r | 95% interval |"


def test_overview_leaderboard_on_summeval_matches_tacl2021(real_env):
    """TACL 2021 sec. 6: at the system level only QAEval and BERTScore are significantly better than others."""
    at = new_app({"dataset": "summeval"}).run()
    assert_clean(at)
    _, rows = leaderboard_rows(at)
    top = {r[1] for r in rows if r[0] == "1"}
    assert top == {"qa-eval.f1", "bertscore.recall"}
    assert {r[1] for r in rows if r[0] == "2"} == {"rouge-1.f1", "rouge-2.f1", "rouge-l.f1"}


# -- Judged vs all --------------------------------------------------------------------------------------------------
def test_judged_vs_all_on_the_demo_narrows_and_explains_when_it_would_not(demo_env):
    at = open_page("pages/pools.py", {"pools_k": "200"})
    change = next(m for m in at.metric if m.label == "rSYS CI width change")
    assert change.value.startswith("−") or change.value.startswith("-")  # narrower, as in NAACL 2022
    pooled = next(m for m in at.metric if m.label == "Pooled reduction")
    assert "share of per-system score variance" in pooled.help
    expander = next(e for e in at.expander if "wider" in e.label)
    text = " ".join(m.value for m in expander.markdown)
    assert "same** inputs" in text and "separately" in text and "simulation" not in at.caption[-1].value.lower()
