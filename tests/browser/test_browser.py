"""The dashboard in a real browser (headless Chromium via Playwright), on the real mirror or the demo.

The interactions a person makes: the l/u band slider of the realistic-pairs page, a dataset change, a shared URL,
a broken upload. Every page on every dataset is opened and checked by tests/browser/test_every_page.py.
"""

from __future__ import annotations

import re

import pytest

from tests.browser import harness as h

pytestmark = pytest.mark.browser

BAD = h.REPO / "tests" / "data" / "bad_uploads"
GOOD = h.REPO / "tests" / "data" / "good_uploads"
PAGE_TIMEOUT = 240.0  # a cold page on SummEval (bootstrap/permutation caches empty) on 2 cores


def open_page(page, server, path: str = "", query: str = "") -> None:
    page.goto(f"{server.url}/{path.lstrip('/')}" + (f"?{query}" if query else ""))
    h.wait_idle(page, timeout=PAGE_TIMEOUT)


def act(page, action, *, timeout: float = PAGE_TIMEOUT) -> None:
    """Do ``action`` and wait for the rerun it triggers to finish and draw."""
    before = h.runs(page)
    action()
    h.wait_idle(page, since=before, timeout=timeout)


def assert_clean(page, where: str) -> None:
    found = h.problems(page)
    assert not found, f"{where}: {found}"


def band_metrics(page) -> tuple[str, str, str]:
    """(rSYS-Delta label, its value, pairs-in-band value) on the realistic-pairs page."""
    shown = h.metrics(page)
    delta = next((k for k in shown if k.startswith("rSYS-Δ")), None)
    pairs = next((k for k in shown if k.lower().startswith("pairs")), None)
    assert delta and pairs, f"rSYS-Δ / pairs metrics not found: {shown}"
    return delta, shown[delta], shown[pairs]


def thumbs(page):
    """The slider thumbs (react-aria range inputs; role=slider in older Streamlit versions)."""
    found = page.locator('[data-testid="stSlider"] input[type="range"]')
    return found if found.count() else page.locator('[data-testid="stSlider"] [role="slider"]')


def test_pairs_band_slider_moves_rsys_delta(page, server):
    open_page(page, server)
    if "pairs" not in [h.url_path(href) for _, href in h.nav_links(page)]:
        pytest.skip("no realistic-pairs page (/pairs) in this build")
    open_page(page, server, "pairs")
    assert_clean(page, "/pairs")
    handles = thumbs(page)
    assert handles.count() == 2, "the band slider has two thumbs (l and u)"
    start = band_metrics(page)
    start_u = handles.nth(1).input_value()
    # widen u by three steps: the band holds at least as many pairs, and the label shows the new u
    handles.nth(1).focus()
    act(page, lambda: [page.keyboard.press("ArrowRight") for _ in range(3)])
    wider = band_metrics(page)
    assert handles.nth(1).input_value() != start_u
    assert wider[0] != start[0], (start, wider)
    assert int(wider[2].replace(",", "")) >= int(start[2].replace(",", "")), (start, wider)
    # raise l: the closest pairs leave the band
    handles.nth(0).focus()
    act(page, lambda: [page.keyboard.press("ArrowRight") for _ in range(3)])
    narrower = band_metrics(page)
    assert float(handles.nth(0).input_value()) > 0
    assert narrower[0] != wider[0], (wider, narrower)
    assert (narrower[1], narrower[2]) != (wider[1], wider[2]), (wider, narrower)
    assert int(narrower[2].replace(",", "")) <= int(wider[2].replace(",", "")), (wider, narrower)
    assert_clean(page, "/pairs after moving the band")
    # the band moves in share of pairs; the URL keeps it in metric units (l > 0 once the closest pairs are left out)
    q = h.query(page)
    assert float(q["l"][0]) > 0 and float(q["u"][0]) > float(q["l"][0]), q
    h.screenshot(page, ("demo" if server.demo else "mirror") + "-pairs-band-moved")


def test_changing_the_dataset_updates_the_figures(page, server):
    open_page(page, server, "correlations")
    assert_clean(page, "/correlations")
    box = h.sidebar_selectbox(page, "Dataset")
    if server.demo:  # a second dataset: a good upload (selected automatically), then back to the demo
        act(page, lambda: page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
            str(GOOD / "long_with_annotators.csv")))
        assert "Uploaded" in h.selectbox_value(box), h.selectbox_value(box)
        first, target = h.plotly_state(page), "[demo]"
    else:
        assert "[summeval]" in h.selectbox_value(box)
        first, target = h.plotly_state(page), "[realsumm]"
    assert first, "no plotly figure on /correlations"
    act(page, lambda: h.choose(page, box, target))
    assert target in h.selectbox_value(box)
    assert_clean(page, f"/correlations on {target}")
    second = h.plotly_state(page)
    assert second and page.locator('.js-plotly-plot').count() >= 1
    assert second != first, "the figure did not change with the dataset"
    assert h.query(page)["dataset"] == [target.strip("[]")]
    # the traces now name the new dataset's metrics
    metrics = h.multiselect_values(h.sidebar_widget(page, "stMultiSelect", "Metrics"))
    assert metrics and all(m in second[0] for m in metrics), (metrics, second[0][:300])


def test_a_shared_url_reproduces_the_view(page, server):
    if server.demo:
        dataset, metric = "demo", "metric.good"
    else:
        dataset, metric = "summeval", "rouge-2.f1"
    open_page(page, server, "correlations", f"dataset={dataset}&metric={metric}&level=input&coef=pearson")
    assert_clean(page, "/correlations from a shared URL")
    assert f"[{dataset}]" in h.selectbox_value(h.sidebar_selectbox(page, "Dataset"))
    assert h.multiselect_values(h.sidebar_widget(page, "stMultiSelect", "Metrics")) == [metric]
    assert h.radio_value(page, "Level") == "input"
    assert h.radio_value(page, "Coefficient") == "pearson"
    figure = h.plotly_state(page)
    assert figure and re.search(r"pearson correlation, input level", figure[0], re.I), figure[:1]
    assert metric in figure[0]
    q = h.query(page)
    assert q["dataset"] == [dataset] and q["metric"] == [metric] and q["level"] == ["input"] and q["coef"] == [
        "pearson"], q
    # the same URL in a fresh browser context (another person) shows the same figure
    other = h.new_page(page.context)
    try:
        other.goto(page.url)
        h.wait_idle(other, timeout=PAGE_TIMEOUT)
        assert h.plotly_state(other) == figure
    finally:
        other.close()


UPLOADED = ["decimal_comma.csv", "garbage.parquet", "corrupt.csv.gz", "broken_line.jsonl", "one_system.csv",
            "control_char_name.csv", "scores.xlsx"]


def test_broken_uploads_show_the_reason_not_a_traceback(page, server):
    """A few broken files through the real file uploader (the whole corpus: tests/ui/test_bad_uploads_ui.py)."""
    from metaeval_core.data.upload import UploadError, read_user_file

    open_page(page, server, "correlations")
    box = h.sidebar_selectbox(page, "Dataset")
    before = h.selectbox_value(box)
    upload = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"]').filter(has_text="Upload")
    if upload.count():
        upload.first.locator("summary").click()
    failures = []
    for name in UPLOADED:
        with pytest.raises(UploadError) as info:
            read_user_file(BAD / name)
        act(page, lambda: page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
            str(BAD / name)))
        h.screenshot(page, f"{'demo' if server.demo else 'mirror'}-upload-{name.replace('.', '_')}")
        failures += [f"{name}: {p}" for p in h.problems(page)]
        shown = " ".join(page.locator('[data-testid="stAlertContentError"]').all_text_contents())
        core = str(info.value).split(": ", 1)[-1]  # after "file 'x.csv'"
        if not ("Upload rejected" in shown and name in shown and f"({info.value.kind})" in shown):
            failures.append(f"{name}: expected an 'Upload rejected' error naming the file and ({info.value.kind}), "
                            f"got {shown!r}")
        elif core[:50] not in shown.replace("\n", " "):
            failures.append(f"{name}: the core's message {core[:80]!r} is not shown: {shown!r}")
        if h.selectbox_value(box) != before:
            failures.append(f"{name}: a rejected file replaced the dataset ({h.selectbox_value(box)})")
    assert not failures, "\n".join(failures)
