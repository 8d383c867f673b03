"""Eight people at once on different pages (issue 33): 8 browser contexts on one server, each opening its own
dataset on a resampling page (Overview, Significance, Confidence intervals: the shared caches of finished tables and
intervals) and then a second page, all at the same time. No session may show an error, a traceback or a page that
never finishes. Few pages per session, small resample counts: under 2 min on the 2-core machine.
"""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest

from tests.browser import harness as h

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMEOUT = 150.0
# (dataset, first page, second page, query): the demo stands in for every dataset without the mirror.
MIRROR = [
    ("summeval", "", "significance", {"sig_k": "200"}),
    ("realsumm", "significance", "confidence", {"sig_k": "200", "ci_k": "200"}),
    ("frank-cnndm", "confidence", "", {"ci_k": "200"}),
    ("hanna", "correlations", "significance", {"sig_k": "200"}),
    ("summeval", "confidence", "correlations", {"ci_k": "200"}),
    ("xsum-hallucination", "", "pairs", {}),
    ("realsumm", "significance", "", {"sig_k": "200"}),  # the same table as session 2, computed or reused
    ("frank-xsum", "dataset", "confidence", {"ci_k": "200"}),
]


def specs(server) -> list[tuple[str, str, str, dict]]:
    if not server.demo:
        return MIRROR
    return [("demo", first, second, query) for _, first, second, query in MIRROR]


def test_eight_sessions_on_different_pages_show_no_error(playwright_browser, server):
    plan = specs(server)
    assert len(plan) == 8
    contexts = [h.new_context(playwright_browser) for _ in plan]
    pages = [c.new_page() for c in contexts]
    started = time.monotonic()
    failures, times = [], {}
    try:
        for step in (1, 2):  # every session opens its page at once, waits, then its second page at once
            for page, (dataset, first, second, query) in zip(pages, plan):
                path = first if step == 1 else second
                url = f"{server.url}/{path}?{urlencode({'dataset': dataset, **query})}"
                page.goto(url, wait_until="commit")
            for i, (page, (dataset, first, second, _)) in enumerate(zip(pages, plan)):
                where = f"session {i} ({dataset} /{first if step == 1 else second})"
                try:
                    h.wait_idle(page, timeout=TIMEOUT)
                except Exception as error:  # noqa: BLE001 - report every session
                    failures.append(f"{where}: did not finish: {str(error)[:200]}")
                    continue
                times[where] = round(time.monotonic() - started, 1)
                failures += [f"{where}: {p}" for p in h.problems(page)]
                failures += [f"{where}: error box: {e.strip()[:300]}" for e in h.error_alerts(page)]
    finally:
        for context in contexts:
            context.close()
    print(f"\n8 sessions on different pages: {round(time.monotonic() - started, 1)} s; done at {times}")
    assert not failures, "\n".join(failures)
