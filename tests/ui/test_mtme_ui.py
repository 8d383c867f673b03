"""The dashboard reads an mt-metrics-eval test set from a directory path or a zip (tests/mtme_replica.py)."""

from __future__ import annotations

import re

import pytest

from tests.mtme_replica import write_replica, zip_replica
from tests.ui.ui_helpers import REPO, assert_clean, new_app

PAGE_FILES = sorted(p for p in re.findall(r'\("(pages/[a-z_]+\.py)"', (REPO / "app.py").read_text(encoding="utf-8"))
                    if (REPO / p).is_file())
SMALL = {"f1_k": "100", "ci_k": "100", "sig_k": "100", "stab_k": "20", "pools_k": "100", "trials": "5",
         "sim_k": "20", "imp_k": "100", "plan_trials": "5", "plan_k": "20", "infl_k": "100", "dk": "100"}


def read_test_set(at, path: str = "", *, lp: str = "en-de", level: str = "seg"):
    at.sidebar.text_input(key="w:mtme_path").set_value(path)
    at.sidebar.text_input(key="w:mtme_lp").set_value(lp)
    at.sidebar.radio(key="w:mtme_level").set_value(level)
    at.sidebar.button(key="mtme_read").click()
    return at.run()


@pytest.fixture
def replica(tmp_path):
    return write_replica(tmp_path)


def test_directory_path_becomes_the_dataset(demo_env, replica):
    at = read_test_set(new_app(SMALL).run(), str(replica.test_set))
    assert_clean(at)
    chosen = at.sidebar.selectbox(key="w:dataset").value
    assert chosen.startswith("upload:mtme-")
    assert "mqm" in at.sidebar.selectbox(key="w:human").options
    at.sidebar.selectbox(key="w:human").set_value("mqm")
    at.sidebar.multiselect(key="w:metrics").set_value(["BLEU-refA", "COMET-22-refB"]).run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    table = at.dataframe[0].value.set_index("metric")
    # WMT's conventions: refB, a human translation, is a system only when asked (docs/methods.md sec. 0.6).
    assert table.loc["BLEU-refA", "n"] == 3 and table.loc["COMET-22-refB", "n"] == 3
    at.sidebar.toggle(key="w:human_translations").set_value(True).run()
    table = at.dataframe[0].value.set_index("metric")
    assert table.loc["BLEU-refA", "n"] == 4 and table.loc["COMET-22-refB", "n"] == 3  # refB is its reference
    # The same directory again: the same dataset (keyed by content), nothing duplicated.
    at = read_test_set(at, str(replica.test_set))
    assert at.sidebar.selectbox(key="w:dataset").value == chosen


@pytest.mark.parametrize("level", ["seg", "sys"])
@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_opens_on_an_mtme_test_set(demo_env, replica, page, level):
    at = read_test_set(new_app(SMALL).run(), str(replica.test_set), level=level)
    assert at.sidebar.selectbox(key="w:dataset").value.startswith("upload:mtme-")
    at.switch_page(page).run()
    if level == "seg":
        assert_clean(at)
    else:
        # One pseudo-input: pages that resample or split inputs say so in one line, never with a traceback.
        assert not at.exception, [e.value for e in at.exception]
        assert all("\n" not in e.value for e in at.error)
        if at.error:
            print(page, [e.value for e in at.error])


def test_zip_upload_and_errors(demo_env, replica, tmp_path):
    at = new_app().run()
    at = read_test_set(at, "", lp="")
    assert not at.exception and "give the test set's directory" in " ".join(e.value for e in at.error)
    at = read_test_set(at, str(replica.test_set), lp="")
    assert not at.exception and "choose one" in " ".join(e.value for e in at.error)
    assert at.sidebar.selectbox(key="w:dataset").value == "demo"
    data = zip_replica(replica, tmp_path / "wmt99.zip").read_bytes()
    at.sidebar.file_uploader(key="w:mtme_zip").upload("wmt99.zip", data, "application/zip")
    at = read_test_set(at.run(), "", lp="zh-en")
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value.startswith("upload:mtme-")
    assert at.sidebar.selectbox(key="w:human").options == ["da"]


def test_domain_subset_applies_to_every_page(demo_env, replica):
    at = read_test_set(new_app().run(), str(replica.test_set))
    box = at.sidebar.selectbox(key="w:inputs")
    assert box.options[:3] == ["all inputs", "domain=news", "domain=social"]
    assert "document=doc2" in box.options  # three documents: few enough to offer
    box.set_value("domain=social").run()
    assert_clean(at)
    counts = {m.label: m.value for m in at.metric}
    assert counts["judged inputs"] == "1"  # segments 4 and 5 are social; 5 has no human score
    assert at.query_params["inputs"] == "domain=social"
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
