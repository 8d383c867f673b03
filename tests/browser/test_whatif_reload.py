"""What if… in a real browser (issue 24): a reload keeps the modified dataset, and a link whose draft is not on
this machine says so at the top of the page, not ~1,800 px down."""

from __future__ import annotations


import pytest

from tests.browser import harness


@pytest.fixture
def demo_server(playwright_browser, tmp_path):
    try:
        srv = harness.start_server(data_dir=None, work_dir=tmp_path / "dashboard")
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield srv
    srv.stop()


def _draft(store, monkeypatch) -> str:
    """A modified demo (one metric cell edited) autosaved as the What if… page does, in the server's store."""
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_core.data.whatif import edit_scores, with_identity
    from metaeval_ui import userdata

    monkeypatch.setenv("METAEVAL_STORE_DIR", str(store))
    demo = synthetic_dataset()
    edited = edit_scores(demo, [(demo.systems[0], demo.inputs[0], "metric.strong", 1000.0)])
    found = userdata.WhatIf(base_id="demo", base_title=demo.title, base_version=demo.version,
                            full=with_identity(edited, "whatif:demo"), steps=["edited 1 score(s)"], base=demo)
    userdata.save_draft(found)
    return found.token


def test_a_reload_keeps_the_modified_dataset_and_a_dead_link_warns_at_the_top(playwright_browser, demo_server,
                                                                           monkeypatch):
    token = _draft(demo_server.store_dir, monkeypatch)
    page = harness.new_page(playwright_browser)
    page.goto(f"{demo_server.url}/?dataset=whatif:demo&draft={token}")
    harness.wait_idle(page)
    for _ in range(2):  # the link, then a real reload of the same page
        text = harness.main_text(page)
        assert "A modified dataset is active" in text and "Restored from its autosaved draft" in text, text[:600]
        page.reload()
        harness.wait_idle(page)
    page.goto(f"{demo_server.url}/?dataset=whatif:demo&draft=0123456789ab")
    harness.wait_idle(page)
    notice = page.get_by_text("the numbers below are the ORIGINAL dataset's", exact=False).first
    box = notice.bounding_box()
    assert box is not None and box["y"] < 400, box  # above the fold, before any number
    assert "A modified dataset is active" not in harness.main_text(page)
