"""Screenshots of states a fresh URL does not reach: the Simulations page after a presenter pressed Run.

Every page on every dataset is screenshotted (and checked) by tests/browser/test_every_page.py; this adds the
Simulations page with finished runs (coverage and power), saved to ``artifacts/screenshots/demo/`` (git-ignored;
CI keeps ``artifacts/`` as its artifacts), and checks the power chart as drawn: no chart text below 11 px.
"""

from __future__ import annotations

import pytest

from tests.browser import harness as h
from tests.browser import page_checks as checks
from tests.browser.test_browser import PAGE_TIMEOUT, act, open_page
from tests.browser.test_every_page import LARGE, full_page_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_screenshot_simulations_after_a_run(page, server):
    """The Simulations page with finished runs (coverage and power), as it looks once a presenter pressed Run."""
    page.set_viewport_size(LARGE)
    open_page(page, server, "simulations", "dataset=demo&trials=10&sim_k=40&ptrials=5&sim_ci=boot-both&sim_ci=fisher")
    shots = []
    for tab, button, done in (("CI coverage", "Run coverage", "trials; halves"),
                              ("Power", "Run power", "r(X, human) =")):
        act(page, page.get_by_role("tab", name=tab).click)
        act(page, page.get_by_role("button", name=button).click)
        # The run polls once a second until it finishes; its summary caption means it did.
        page.get_by_text(done, exact=False).first.wait_for(timeout=PAGE_TIMEOUT * 1000)
        h.wait_idle(page, timeout=PAGE_TIMEOUT)
        assert not h.problems(page), h.problems(page)
        assert not h.error_alerts(page), h.error_alerts(page)
        assert not checks.small_chart_text(page), checks.small_chart_text(page)
        assert not checks.leaks(page), checks.leaks(page)
        shots.append(full_page_screenshot(page, f"demo/simulations-after-{button.split()[-1]}-run", LARGE))
    assert all(shot.stat().st_size > 10_000 for shot in shots)
