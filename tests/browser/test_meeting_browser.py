"""Issue 14 in a real browser: '/overview' opened first on a fresh server, nothing fetched from outside the server
(favicon included), and the Overview's cold render (leaderboard included) timed."""

from __future__ import annotations

import time

import pytest

from tests.browser import harness as h
from tests.conftest import mirror_dir

pytestmark = pytest.mark.browser


@pytest.fixture
def fresh_server(tmp_path, playwright_browser):
    """A server no session has visited yet: the deep link is its very first request."""
    try:
        srv = h.start_server(data_dir=mirror_dir(), work_dir=tmp_path)
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield srv
    srv.stop()


def test_overview_deep_link_local_assets_and_cold_render(playwright_browser, fresh_server, record_property):
    context = h.new_context(playwright_browser)  # a cold browser: no cached JavaScript
    try:
        page = context.new_page()
        outside: list[str] = []
        page.on("request", lambda request: outside.append(request.url)
                if not request.url.startswith((fresh_server.url, "data:", "blob:", "about:")) else None)
        start = time.perf_counter()
        page.goto(f"{fresh_server.url}/overview")
        h.wait_idle(page, timeout=240.0)
        cold_ms = 1000 * (time.perf_counter() - start)
        text = h.main_text(page)
        assert "Page not found" not in page.content()
        assert "can I trust this evaluation metric?" in text and "Leaderboard" in text, text[:500]
        assert not h.problems(page) and not h.error_alerts(page)
        icon = page.evaluate("() => [...document.querySelectorAll('link[rel~=icon]')].map(l => l.href)")
        assert icon and all(href.startswith((fresh_server.url, "data:")) for href in icon), icon
        assert not outside, f"fetched from outside the server: {outside[:5]}"
        record_property("overview_cold_render_ms", round(cold_ms))
        print(f"\nOverview cold render (fresh server, cold browser, {'mirror' if fresh_server.data_dir else 'demo'}):"
              f" {cold_ms:.0f} ms")
    finally:
        context.close()


@pytest.mark.parametrize("launcher", ["serve", "streamlit run app.py"])
def test_overview_url_paths_open_the_overview_on_a_fresh_server(playwright_browser, tmp_path, launcher):
    """'/home' (the Overview's url path in app.py) and '/overview' (its name) open the Overview, also as a server's
    very first request, under `python -m metaeval_ui.serve` and a plain `streamlit run app.py` (which looks the first
    deep link up by file name in pages/)."""
    from tests.browser.page_checks import page_not_found

    script = None if launcher == "serve" else h.REPO / "app.py"
    try:
        srv = h.start_server(data_dir=None, work_dir=tmp_path, script=script)
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    context = h.new_context(playwright_browser)
    try:
        page = context.new_page()
        failures = []
        for path in ("overview", "home", "overview", ""):
            page.goto(f"{srv.url}/{path}?dataset=demo")
            h.wait_idle(page, timeout=240.0)
            page.wait_for_timeout(300)  # the dialog arrives with the first script run's messages
            text = h.main_text(page)
            if page_not_found(page) or "can I trust this evaluation metric?" not in text:
                failures.append(f"/{path}: {page_not_found(page) or text[:120]}")
        assert not failures, failures
    finally:
        context.close()
        srv.stop()
