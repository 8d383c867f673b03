"""Fixtures for the real-browser tests: one dashboard server and one headless Chromium per test session.

Skips (with the reason) when the playwright package or a Chromium executable is missing; never runs
``playwright install``. The server reads the real-data mirror when present (tests.conftest.mirror_dir) and runs
on the demo otherwise.
"""

from __future__ import annotations

import pytest

from tests.browser import harness
from tests.conftest import mirror_dir


@pytest.fixture(scope="session")
def playwright_browser():
    try:
        harness.chromium_path()
        sync_playwright = harness.require_playwright()
    except harness.BrowserUnavailable as error:
        pytest.skip(f"browser tests need Chromium and playwright: {error}")
    manager = sync_playwright().start()
    try:
        try:
            browser = harness.launch_browser(manager)
        except Exception as error:  # a clear failure, not a skip: Chromium is there but does not start
            pytest.fail(f"Chromium at {harness.chromium_path()} did not start under playwright: {error}",
                        pytrace=False)
        yield browser
        browser.close()
    finally:
        manager.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory, playwright_browser):
    """The dashboard on a free port (mirror if present, else the demo); stopped at the end of the session."""
    mirror = mirror_dir()
    try:
        srv = harness.start_server(data_dir=mirror, work_dir=tmp_path_factory.mktemp("dashboard"))
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def browser_context(playwright_browser, server):
    """One context for the single-user tests: the JS bundles are fetched and compiled once (a tab is still one
    Streamlit session of its own)."""
    context = harness.new_context(playwright_browser)
    yield context
    context.close()


@pytest.fixture
def page(browser_context):
    pg = browser_context.new_page()
    yield pg
    pg.close()
