"""Issue 31 in a real browser, the pages whose numbers combine correlations: Judged vs all, Ranking stability,
Overall average (per task, and a WMT suite's tasks), Top-k systems, Leave one system out and Is my improvement real?
link to the items behind them on Correlations, and the Confidence intervals table's rows open their examples. Each
test clicks the link (or row) on SummEval or WMT (texts), checks the panel lists the right metric, level and items
with their texts, and that the address it lands on, opened in a fresh tab (another session), reopens them."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from tests.browser import harness as h
from tests.conftest import mirror_dir

pytestmark = pytest.mark.browser

TIMEOUT = 240.0
PANEL = "Examples behind the number"
SUMMEVAL = {"dataset": "summeval", "human": "expert.relevance", "metric": ["rouge-1.f1", "rouge-2.f1"]}


@pytest.fixture(autouse=True)
def _needs_mirror():
    if mirror_dir() is None:
        pytest.skip("the example-link browser tests need the real-data mirror (METAEVAL_DATA_DIR) for SummEval's "
                    "and WMT's texts")


def _open(page, server, path: str, params: dict) -> None:
    page.goto(f"{server.url}/{path}?{urlencode(params, doseq=True)}")
    h.wait_idle(page, timeout=TIMEOUT)
    _clean(page)


def _clean(page) -> None:
    assert not h.problems(page), h.problems(page)
    assert not h.error_alerts(page), h.error_alerts(page)


def _expand(page, title: str) -> None:
    """Open the expander whose summary reads ``title`` (its links are drawn, hidden, inside it)."""
    summary = page.locator('[data-testid="stExpander"] summary').filter(has_text=title).first
    summary.scroll_into_view_if_needed()
    summary.click()
    page.wait_for_timeout(300)


def _label(link) -> str:
    """A page link's text without its icon's name (material icons are ligatures: their name is the text)."""
    return link.inner_text().strip().splitlines()[-1].strip()


def _follow(page, text: str) -> dict[str, list[str]]:
    """Click the page link whose label contains ``text``; wait for Correlations with the panel open; its query."""
    link = page.locator('[data-testid="stPageLink"] a').filter(has_text=text).first
    before = h.runs(page)
    for attempt in range(3):  # a click that lands while the page is drawn again can be lost: click once more
        link.scroll_into_view_if_needed()
        link.click()
        try:
            page.wait_for_url("**/correlations?**", timeout=30_000 if attempt < 2 else TIMEOUT * 1000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            if "/correlations" in page.url:  # navigated, still loading: wait_idle below waits for it
                break
            if attempt == 2:
                raise
    h.wait_idle(page, since=before, timeout=TIMEOUT)
    _clean(page)
    assert PANEL in h.main_text(page), h.main_text(page)[-1500:]
    query = h.query(page)
    assert "link" not in query, query  # the address is the shareable one
    return query


def _panel(page) -> str:
    """The examples panel's text (the bordered container under its heading)."""
    box = page.locator('[data-testid="stVerticalBlock"]').filter(has_text=PANEL).last
    return box.inner_text()


def _reopens(browser_context, url: str, query: dict, *, words: tuple[str, ...] = ()) -> str:
    """The address opened in a fresh tab shows the same examples (metric, item, systems); the panel's text."""
    other = browser_context.new_page()
    try:
        other.goto(url)
        h.wait_idle(other, timeout=TIMEOUT)
        _clean(other)
        again = h.query(other)
        for name in ("ex", "level", "coef", "pool", "systems", "lp", "human", "ex_scores"):
            assert again.get(name) == query.get(name), (name, again, query)
        assert again.get("ex_item") == query.get("ex_item"), (again, query)
        text = _panel(other)
        for word in words:
            assert word in text, (word, text[-1500:])
        return text
    finally:
        other.close()


def _check(page, query: dict, *, metric: str, level: str = "system", coefficient: str = "kendall",
           words: tuple[str, ...] = ("Source", "Reference")) -> str:
    assert query.get("ex") == [metric], query
    assert query.get("level", ["system"]) == [level], query
    assert query.get("coef", ["kendall"]) == [coefficient], query
    assert query.get("ex_item"), query  # the item shown is in the address
    text = _panel(page)
    for word in words:
        assert word in text, (word, text[-1500:])
    return text


def test_judged_vs_all_link_opens_the_pairs_behind_tau(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "pools", {**SUMMEVAL, "dmetric": "rouge-2.f1", "pools_k": "40"})
        assert "System pairs behind τ" in h.main_text(page)
        query = _follow(page, "judged inputs")  # SummEval has no unjudged inputs: the simulation's whole pool
        text = _check(page, query, metric="rouge-2.f1")
        assert query.get("pool", ["judged"]) == ["judged"] and "of 120 system pairs" in text, text[:600]
        h.screenshot(page, "example-links-pools")
        _reopens(browser_context, page.url, query, words=("Source", "Reference"))
    finally:
        page.close()


def test_ranking_stability_link_opens_a_metrics_system_pairs(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "stability", {**SUMMEVAL, "stab_k": "10", "level": "input"})
        query = _follow(page, "rouge-1.f1")
        _check(page, query, metric="rouge-1.f1")  # the system level, whatever the session's level was
        _reopens(browser_context, page.url, query, words=("Source", "Reference"))
    finally:
        page.close()


def test_overall_average_task_link_opens_that_tasks_items(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "average", {**SUMMEVAL, "avg_h": ["expert.relevance"], "avg_lv": ["system", "input"],
                                         "avg_k": "40"})
        _expand(page, "Examples behind each task's value")
        link = page.locator('[data-testid="stPageLink"] a').filter(has_text="rouge-2.f1 ")
        assert link.count() == 2, link.all_inner_texts()  # one per task (system, input level)
        hrefs = [link.nth(i).get_attribute("href") for i in range(2)]
        index = next(i for i, href in enumerate(hrefs) if "level=input" in href)
        label = _label(link.nth(index))
        query = _follow(page, label)
        text = _check(page, query, metric="rouge-2.f1", level="input")
        shown = re.search(r"input-level kendall (-?\d+(?:\.\d+)?)", text)
        assert shown and abs(float(shown[1]) - float(label.split()[-1])) <= 5e-4, (label, text[:600])  # its value
        _reopens(browser_context, page.url, query, words=("Source", "Reference"))
    finally:
        page.close()


@pytest.mark.parametrize("suite, task, level, coefficient, scores", [
    ("wmt23", "zh-en acc23", "input", "tie-calibrated-accuracy", None),  # each segment's accuracy
    ("wmt23", "zh-en sys pearson", "system", "pearson", "sys"),  # the system pairs of the .sys.score files
    ("wmt24", "zh-en spa", "system", "soft-pairwise-accuracy", None),  # each pair's two p-values (segments)
])
def test_a_wmt_suite_task_link_opens_its_items_on_wmt23(browser_context, server, suite, task, level, coefficient,
                                                         scores):
    """A WMT suite's task on zh-en opens its items on Correlations at that language pair (with the source and the
    translations), and the value the panel states is the suite's."""
    page = browser_context.new_page()
    try:
        _open(page, server, "average", {"dataset": "wmt23", "suite": suite, "suite_k": "0"})
        _expand(page, "Examples behind each task's value")
        link = page.locator('[data-testid="stPageLink"] a').filter(has_text=task + " ")
        assert link.count() == 1, page.locator('[data-testid="stPageLink"] a').all_inner_texts()
        label = _label(link.first)
        query = _follow(page, label)
        assert query.get("lp") == ["zh-en"] and query.get("dataset") == ["wmt23"], query
        assert query.get("ex_scores") == ([scores] if scores else None), query
        text = _check(page, query, metric=query["ex"][0], level=level, coefficient=coefficient, words=())
        named = coefficient.replace("-", "[- ]")  # soft pairwise accuracy is written out
        shown = re.search(rf"{level}-level {named} (-?\d+(?:\.\d+)?)", text)
        assert shown, text[:600]
        assert abs(float(shown[1]) - float(label.split()[-1])) <= 5e-4, (label, text[:600])  # the suite's value
        h.screenshot(page, f"example-links-{suite}-{task.replace(' ', '-')}")
        _reopens(browser_context, page.url, query)
    finally:
        page.close()


def test_top_k_link_opens_the_pairs_among_the_top_k_only(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "topk", {**SUMMEVAL, "topk_k": "5"})
        assert "System pairs among the top 5" in h.main_text(page)
        query = _follow(page, "rouge-1.f1 ")
        text = _check(page, query, metric="rouge-1.f1")
        assert query.get("systems") and len(query["systems"][0].split(",")) == 5, query
        assert "of 10 system pairs" in text, text[:600]  # 5 systems: 10 pairs, not all 16 systems' 120
        h.screenshot(page, "example-links-topk")
        again = _reopens(browser_context, page.url, query, words=("Source", "Reference"))
        assert "of 10 system pairs" in again
    finally:
        page.close()


def test_leave_one_out_link_opens_the_items_at_its_level(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "influence", {**SUMMEVAL, "lmetric": "rouge-2.f1", "level": "input"})
        query = _follow(page, "rouge-2.f1")
        text = _check(page, query, metric="rouge-2.f1", level="input")
        assert "input-level kendall" in text and "the mean of" in text, text[:600]
        _reopens(browser_context, page.url, query, words=("Source", "Reference"))
    finally:
        page.close()


def test_is_my_improvement_real_link_opens_the_pairs_behind_the_curve(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "improvement", {**SUMMEVAL, "imetric": "rouge-1.f1", "imp_k": "50"})
        _expand(page, "system pairs behind the curve")
        query = _follow(page, "rouge-1.f1")
        text = _check(page, query, metric="rouge-1.f1", coefficient="pairwise-accuracy")
        assert "system-level pairwise-accuracy" in text, text[:600]
        _reopens(browser_context, page.url, query, words=("Source", "Reference"))
    finally:
        page.close()


def test_a_confidence_intervals_table_row_opens_its_examples(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "confidence", {**SUMMEVAL, "ci_k": "100"})
        assert PANEL not in h.main_text(page)
        grid = page.locator('[data-testid="stDataFrame"]').last  # the intervals table (after the forest plot)
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        before = h.runs(page)
        page.mouse.click(box["x"] + 12, box["y"] + 35 + 35 + 17)  # the second body row's marker: rouge-2.f1
        h.wait_idle(page, since=before, timeout=TIMEOUT)
        _clean(page)
        assert PANEL in h.main_text(page)
        query = h.query(page)
        _check(page, query, metric="rouge-2.f1")
        h.screenshot(page, "example-links-confidence-row")
        _reopens(browser_context, page.url, query, words=("Source", "Reference"))
    finally:
        page.close()


def test_clicking_a_top_k_point_chooses_its_k(browser_context, server):
    page = browser_context.new_page()
    try:
        _open(page, server, "topk", SUMMEVAL)
        assert "System pairs among the top 16" in h.main_text(page)
        points = page.locator('[data-testid="stPlotlyChart"] .scatterlayer .trace').first.locator(".points path")
        assert points.count() == 14  # k = 16 down to 3
        point = points.nth(16 - 7)  # k = 7
        point.scroll_into_view_if_needed()
        before = h.runs(page)
        point.click(force=True)
        h.wait_idle(page, since=before, timeout=TIMEOUT)
        _clean(page)
        assert h.query(page).get("topk_k") == ["7"], h.query(page)
        assert "System pairs among the top 7" in h.main_text(page)
        query = _follow(page, "rouge-2.f1 ")
        assert len(query["systems"][0].split(",")) == 7 and "of 21 system pairs" in _panel(page)
    finally:
        page.close()


def test_a_link_on_hanna_lists_the_numbers_and_says_there_are_no_texts(browser_context, server):
    """HANNA's mirror has scores but no stories: the link opens the pairs all the same, with the numbers."""
    page = browser_context.new_page()
    try:
        _open(page, server, "influence", {"dataset": "hanna", "human": "Coherence", "lmetric": "BLEU"})
        query = _follow(page, "BLEU")
        text = _check(page, query, metric="BLEU", words=("has no texts", "system pairs are ordered unlike people"))
        assert "Source" not in text
        _reopens(browser_context, page.url, query, words=("has no texts",))
    finally:
        page.close()
