"""Figures for slides, in a real browser: the camera button saves an SVG (or a PNG) drawn by plotly.js at a slide's
width, with no kaleido and no server-side Chromium."""

from __future__ import annotations

import pytest

from tests.browser import harness as h
from tests.browser.test_browser import act, assert_clean, open_page

pytestmark = pytest.mark.browser


def camera_download(page):
    """Click the first chart's camera button; the downloaded file's name and bytes."""
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.scroll_into_view_if_needed()
    chart.hover()
    button = chart.locator('.modebar-btn[data-title^="Download plot"]').first
    button.wait_for(state="attached", timeout=10_000)
    with page.expect_download(timeout=30_000) as info:
        button.click(force=True)
    download = info.value
    return download.suggested_filename, open(download.path(), "rb").read()


def test_camera_button_saves_svg_and_png_at_slide_width(page, server):
    dataset = "demo" if server.demo else "summeval"
    open_page(page, server, "correlations", f"dataset={dataset}")
    assert_clean(page, "/correlations")
    name, data = camera_download(page)
    assert name.endswith(".png") and data[:8] == b"\x89PNG\r\n\x1a\n", name
    width = int.from_bytes(data[16:20], "big")
    assert width == 2 * 1280, width  # a slide's width at scale 2
    svg = page.locator('[data-testid="stSidebar"] button').filter(has_text="SVG").first
    act(page, svg.click)
    assert_clean(page, "/correlations with SVG downloads")
    name, data = camera_download(page)
    text = data.decode("utf-8", errors="replace")
    assert name.endswith(".svg") and text.lstrip().startswith("<svg"), (name, text[:80])
    assert 'width="1280"' in text[:500] and "correlation" in text
    h.screenshot(page, f"{dataset}/export-svg-chosen")
