"""Issue 31 in a real browser: clicking a table row opens the examples behind the number (SummEval, WMT22 zh-en,
PandaLM), the texts show, and the URL written back reopens the same examples in a new tab."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.browser import harness as h
from tests.conftest import mirror_dir

pytestmark = pytest.mark.browser

TIMEOUT = 240.0


@pytest.fixture(autouse=True)
def _needs_mirror():
    if mirror_dir() is None:
        pytest.skip("the examples browser test needs the real-data mirror (METAEVAL_DATA_DIR)")


def _click_first_row(page, table_index: int = 0) -> None:
    """Select the first body row of the n-th dataframe by clicking its row marker (left edge of the grid)."""
    grid = page.locator('[data-testid="stDataFrame"]').nth(table_index)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    before = h.runs(page)
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)  # header row ~35 px, first row ~35 px high
    h.wait_idle(page, since=before, timeout=TIMEOUT)


def _open(page, server, path: str, params: dict) -> None:
    page.goto(f"{server.url}/{path}?{urlencode(params, doseq=True)}")
    h.wait_idle(page, timeout=TIMEOUT)


def _clean(page) -> None:
    assert not h.problems(page), h.problems(page)
    assert not h.error_alerts(page), h.error_alerts(page)


@pytest.mark.parametrize("dataset, params, texts", [
    ("summeval", {"human": "expert.relevance", "metric": ["rouge-1.f1", "rouge-2.f1"], "level": "input"},
     ("Source", "Reference")),
    ("wmt22-zhen", {"metric": ["COMET-22-refA", "BLEU-refA"]}, ("Source", "Reference")),
])
def test_correlation_row_opens_its_examples_and_the_link_reopens_them(browser_context, server, dataset, params,
                                                                      texts):
    page = browser_context.new_page()
    try:
        _open(page, server, "correlations", {"dataset": dataset, **params})
        _clean(page)
        assert "Examples behind the number" not in h.main_text(page)
        _click_first_row(page)
        _clean(page)
        text = h.main_text(page)
        assert "Examples behind the number" in text, text[-1500:]
        for word in texts:
            assert word in text
        shared = page.url
        query = h.query(page)
        assert query.get("ex") == [params["metric"][0]], query
        assert query.get("ex_item"), query
        h.screenshot(page, f"examples-{dataset}")
    finally:
        page.close()
    other = browser_context.new_page()  # the shared link, in another tab (another session)
    try:
        other.goto(shared)
        h.wait_idle(other, timeout=TIMEOUT)
        _clean(other)
        again = h.main_text(other)
        assert "Examples behind the number" in again
        assert h.query(other).get("ex_item") == query["ex_item"]
    finally:
        other.close()


def test_judges_leaderboard_row_opens_wrong_items_on_pandalm(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "judges", {"jdataset": "pandalm", "jk": "200"})
        _clean(page)
        tables = page.locator('[data-testid="stDataFrame"]')
        assert tables.count() >= 1
        _click_first_row(page, 0)
        _clean(page)
        text = h.main_text(page)
        assert "Examples behind the number" in text, text[-1500:]
        assert "Instruction" in text and "Response A" in text and "Response B" in text
        assert h.query(page).get("ex"), h.query(page)
        h.screenshot(page, "examples-pandalm")
    finally:
        page.close()


def test_clicking_a_bar_opens_that_metrics_examples(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "correlations", {"dataset": "summeval", "human": "expert.relevance",
                                             "metric": ["rouge-1.f1", "rouge-2.f1"]})
        _clean(page)
        bars = page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot .bars path')
        assert bars.count() >= 2
        bars.nth(1).scroll_into_view_if_needed()
        before = h.runs(page)
        bars.nth(1).click(force=True)
        h.wait_idle(page, since=before, timeout=TIMEOUT)
        _clean(page)
        assert "Examples behind the number" in h.main_text(page)
        assert h.query(page).get("ex") == ["rouge-2.f1"], h.query(page)
    finally:
        page.close()


def _click_in_plot(page, chart_index: int, fx: float, fy: float) -> None:
    """Click at the fractions (fx, fy) of the n-th chart's plotting area (plotly's drag layer)."""
    area = page.locator('[data-testid="stPlotlyChart"]').nth(chart_index).locator(".nsewdrag").first
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    before = h.runs(page)
    page.mouse.click(box["x"] + fx * box["width"], box["y"] + fy * box["height"])
    h.wait_idle(page, since=before, timeout=TIMEOUT)


def test_significance_cell_click_lists_where_two_metrics_differ(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "significance", {"dataset": "summeval", "human": "expert.relevance",
                                             "metric": ["rouge-1.f1", "rouge-2.f1"], "sig_k": "200"})
        _clean(page)
        _click_in_plot(page, 0, 0.75, 0.25)  # an off-diagonal cell of the 2 x 2 heatmap
        _clean(page)
        assert "where rouge-" in h.main_text(page)
        assert h.query(page).get("ex", [""])[0] in ("rouge-1.f1 vs rouge-2.f1", "rouge-2.f1 vs rouge-1.f1")
    finally:
        page.close()


def test_decile_cell_click_sets_the_band_and_lists_its_pairs(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "pairs", {"dataset": "summeval", "human": "expert.relevance", "dmetric": "rouge-1.f1",
                                      "dk": "200"})
        _clean(page)
        before = dict(h.query(page))
        charts = page.locator('[data-testid="stPlotlyChart"]')
        _click_in_plot(page, charts.count() - 1, 0.95, 0.05)  # the top-right cell: l = 0, u = t10 (every pair)
        h.wait_idle(page, timeout=TIMEOUT)
        _clean(page)
        after = h.query(page)
        assert after.get("u") != before.get("u") or after.get("l") != before.get("l"), (before, after)
        toggle = page.get_by_text("Examples: the system pairs in this band")
        toggle.scroll_into_view_if_needed()
        mark = h.runs(page)
        toggle.click()
        h.wait_idle(page, since=mark, timeout=TIMEOUT)
        _clean(page)
        assert "Examples: the pairs in the band" in h.main_text(page)
    finally:
        page.close()


def test_overview_row_link_opens_its_examples_and_the_address_reopens_them(browser_context, server):
    """The Overview stays light (page links, no dataframe): a leaderboard row's link opens Correlations on that
    metric's examples in the same session, and the address it lands on, shared, opens them again."""
    page = browser_context.new_page()
    try:
        _open(page, server, "", {"dataset": "summeval", "human": "expert.relevance",
                                 "metric": ["rouge-1.f1", "rouge-2.f1"], "level": "input"})
        _clean(page)
        assert "Examples behind a row" in h.main_text(page)
        h.screenshot(page, "examples-overview")
        link = page.locator('[data-testid="stPageLink"] a').filter(has_text="rouge-2.f1").first
        link.scroll_into_view_if_needed()
        before = h.runs(page)
        link.click()
        page.wait_for_url("**/correlations?**", timeout=TIMEOUT * 1000)
        h.wait_idle(page, since=before, timeout=TIMEOUT)
        _clean(page)
        text = h.main_text(page)
        assert "Examples behind the number" in text, text[-1500:]
        assert "Source" in text and "Reference" in text
        query = h.query(page)
        assert query.get("ex") == ["rouge-2.f1"] and query.get("level") == ["input"], query
        assert "link" not in query, query
        shared = page.url
        h.screenshot(page, "examples-overview-link")
    finally:
        page.close()
    other = browser_context.new_page()
    try:
        other.goto(shared)
        h.wait_idle(other, timeout=TIMEOUT)
        _clean(other)
        assert "Examples behind the number" in h.main_text(other)
        assert h.query(other).get("ex") == ["rouge-2.f1"]
    finally:
        other.close()


def test_all_dimensions_dot_opens_the_examples_against_its_dimension(browser_context, server):
    """With every human dimension shown (small multiples), a click on a panel's dot opens the examples against that
    panel's dimension (not the sidebar's), and the URL records it (ex_h)."""
    page = browser_context.new_page()
    try:
        _open(page, server, "correlations", {"dataset": "summeval", "human": "expert.relevance",
                                             "metric": ["rouge-1.f1", "rouge-2.f1"], "layout": "all"})
        _clean(page)
        chart = page.locator('[data-testid="stPlotlyChart"]').last
        dots = chart.locator(".scatterlayer .trace")
        assert dots.count() >= 2
        point = dots.nth(0).locator(".points path").first
        point.scroll_into_view_if_needed()
        before = h.runs(page)
        point.click(force=True)
        h.wait_idle(page, since=before, timeout=TIMEOUT)
        _clean(page)
        query = h.query(page)
        assert query.get("ex") in (["rouge-1.f1"], ["rouge-2.f1"]), query
        human = query.get("ex_h", ["expert.relevance"])[0]
        assert human != "expert.relevance", query  # the first panel's dimension, not the sidebar's
        assert f"vs {human}:" in h.main_text(page)
    finally:
        page.close()
