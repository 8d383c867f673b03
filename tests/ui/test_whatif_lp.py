"""A what-if draft made on a language pair other than the default one (WMT23 he-en) reopens on that pair: its base
(the data check's comparison) and, after a revert, the sidebar's pair (issue 30: it came back on zh-en)."""

from __future__ import annotations

import pytest

from ui_helpers import assert_clean, new_app


@pytest.mark.realdata
def test_a_he_en_draft_reopens_and_reverts_on_he_en(real_env, tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_STORE_DIR", str(tmp_path / "store"))
    at = new_app({"dataset": "wmt23", "lp": "he-en"}).run()
    assert_clean(at)
    at.switch_page("pages/whatif.py")
    at.run()
    box = next(m for m in at.multiselect if m.label == "Excluded systems")
    box.set_value([box.options[0]]).run()
    at.button(key="whatif_exclude").click().run()
    assert_clean(at)
    params = {k: at.query_params[k] for k in at.query_params}
    assert params["dataset"] == "whatif:wmt23" and params.get("draft")
    assert at.session_state["_whatif"].base_lp == "he-en"

    from metaeval_ui import data

    loaded = []
    original = data.load_registered

    def recording(dataset_id, data_dir, lp=None):
        loaded.append((dataset_id, lp))
        return original(dataset_id, data_dir, lp)

    monkeypatch.setattr(data, "load_registered", recording)
    again = new_app({"dataset": params["dataset"], "draft": params["draft"]}).run()  # a reload: no lp in the link
    assert_clean(again)
    found = again.session_state["_whatif"]
    assert found.restored and found.base_lp == "he-en"
    # The base is WMT's system subset (not the whole test set, whose version differs): the data check compares with it.
    assert found.base is not None and found.base.version == found.base_version
    assert loaded and loaded[0] == ("wmt23", "he-en")  # the base the data check compares with: he-en's, not zh-en's
    again.checkbox(key="whatif_revert_confirm").check().run()
    again.button(key="whatif_revert").click().run()
    assert_clean(again)
    assert again.sidebar.selectbox(key="w:dataset").value == "wmt23"
    assert again.sidebar.selectbox(key="w:lp").value == "he-en"
