"""Full-page screenshots of every page on SummEval, REALSumm and the demo, for a person to look at.

Saved to ``artifacts/screenshots/<dataset>/<page>.png`` (git-ignored; CI keeps ``artifacts/`` as its artifacts).
Each page is opened from a fresh URL (``/<page>?dataset=<id>``), as a shared link would be, and must render
without an exception, a traceback or an error box. SummEval and REALSumm need the real-data mirror
(``METAEVAL_DATA_DIR``) and skip with the reason without it; the demo always runs.
"""

from __future__ import annotations

import pytest

from tests.browser import harness as h
from tests.browser.test_browser import PAGE_TIMEOUT, act, open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DATASETS = ("summeval", "realsumm", "demo")
MAX_HEIGHT = 16_000  # px: Chromium's screenshots get unreliable beyond this

# Streamlit scrolls inside its main block, so a "full page" screenshot of the window shows one screen only: the
# window is made as tall as the content first.
_CONTENT_HEIGHT = """() => {
  const heights = ['[data-testid="stMain"]', '[data-testid="stMainBlockContainer"]', '[data-testid="stSidebarContent"]']
    .map(s => document.querySelector(s)).filter(Boolean).map(el => el.scrollHeight);
  return Math.max(document.documentElement.clientHeight, ...heights);
}"""


# Multiselects whose chips do not all show (Streamlit caps the height and scrolls or fades them out sideways).
_CLIPPED_PICKERS = """() => Array.from(document.querySelectorAll('[data-testid="stMultiSelect"]')).filter(box => {
  return Array.from(box.querySelectorAll('div')).some(el =>
    el.querySelector(':scope > span > span > button') &&
    (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1));
}).map(box => box.innerText.split('\\n')[0])"""


def full_page_screenshot(page, name: str):
    height = min(int(page.evaluate(_CONTENT_HEIGHT)) + 80, MAX_HEIGHT)
    page.set_viewport_size({"width": h.VIEWPORT["width"], "height": height})
    page.wait_for_timeout(600)  # plotly redraws on resize
    try:
        return h.screenshot(page, name)
    finally:
        page.set_viewport_size(h.VIEWPORT)


def page_paths(page, server) -> list[str]:
    open_page(page, server, "", "dataset=demo")
    paths = [h.url_path(href) for _, href in h.nav_links(page)]
    assert len(paths) >= 2, f"navigation not found: {paths}"
    return paths


@pytest.mark.parametrize("dataset", DATASETS)
def test_screenshot_every_page(page, server, dataset):
    if server.demo and dataset != "demo":
        pytest.skip(f"{dataset} needs the real-data mirror (METAEVAL_DATA_DIR=/work/shared/datasets)")
    failures = []
    for path in page_paths(page, server):
        try:
            open_page(page, server, "" if path == "overview" else path, f"dataset={dataset}")
        except Exception as error:  # noqa: BLE001 - keep walking, report every page at the end
            failures.append(f"/{path}: did not finish rendering: {error}")
            h.screenshot(page, f"{dataset}/{path}-FAILED")
            continue
        shot = full_page_screenshot(page, f"{dataset}/{path}")
        assert shot.stat().st_size > 10_000, f"{shot} looks empty"
        failures += [f"/{path}: {p}" for p in h.problems(page)]
        failures += [f"/{path}: chips cut off in the picker {label!r}" for label in page.evaluate(_CLIPPED_PICKERS)]
        failures += [f"/{path}: error box: {e.strip()[:300]}" for e in h.error_alerts(page)]
        chosen = h.selectbox_value(h.sidebar_selectbox(page, "Dataset"))
        if f"[{dataset}]" not in chosen:
            failures.append(f"/{path}: opened with dataset={dataset} but the sidebar shows {chosen!r}")
    assert not failures, "\n".join(failures)


def test_screenshot_simulations_after_a_run(page, server):
    """The Simulations page with finished runs (coverage and power), as it looks once a presenter pressed Run."""
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
        shots.append(full_page_screenshot(page, f"demo/simulations-after-{button.split()[-1]}-run"))
    assert all(shot.stat().st_size > 10_000 for shot in shots)
