"""The dashboard on a data directory filled by `fetch` (no MANIFEST.json, only the datasets fetched)."""

from __future__ import annotations

import pytest

from metaeval_core.data.registry import dataset_info, fetch_dataset
from tests.localhttp import serve
from tests.ui.ui_helpers import assert_clean, new_app

FETCHED = "summeval-naacl2022"


@pytest.fixture
def fetched_env(data_dir, tmp_path, monkeypatch):
    """A folder holding only FETCHED, downloaded with fetch_dataset from the mirror served on 127.0.0.1."""
    if not dataset_info(FETCHED, data_dir=data_dir).available:
        pytest.skip(f"{FETCHED} is not in the data directory {data_dir} to serve it from")
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    target = tmp_path / "cache"
    with serve(data_dir) as base:
        fetch_dataset(FETCHED, data_dir=target, base_url=base)
    monkeypatch.setenv("METAEVAL_DATA_DIR", str(target))
    return target


@pytest.mark.realdata
def test_the_dashboard_opens_a_fetched_dataset_and_the_demo_when_summeval_is_absent(fetched_env):
    assert not (fetched_env / "MANIFEST.json").exists()
    at = new_app().run()
    assert_clean(at)
    picker = at.sidebar.selectbox(key="w:dataset")
    assert picker.value == "demo"  # the default, SummEval, was not fetched
    at = new_app({"dataset": FETCHED}).run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value == FETCHED
    assert not [w for w in at.warning if "not available" in w.value]
    at = new_app({"dataset": "summeval"}).run()
    assert any("not available" in w.value for w in at.warning)
