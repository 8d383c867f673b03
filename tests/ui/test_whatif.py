"""The What if… page: merge a file, edit a cell, exclude a system, the local store across restarts, revert."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.data.synthetic import synthetic_dataset
from metaeval_core.data.upload import read_user_file
from metaeval_ui import data
from ui_helpers import assert_clean, new_app


DEMO = synthetic_dataset()
HUMAN = DEMO.human_measures[0]


@pytest.fixture
def store_env(demo_env, tmp_path, monkeypatch):
    store = tmp_path / "store"
    monkeypatch.setenv("METAEVAL_STORE_DIR", str(store))
    return store


def judgments_csv(n_inputs=3) -> bytes:
    """New human judgments for the first unjudged inputs of the demo (human-only: a partial file)."""
    unjudged = [DEMO.inputs[j] for j in np.flatnonzero(~DEMO.judged)[:n_inputs]]
    lines = [f"system,input,{HUMAN}"] + [f"{s},{j},{(k % 5) + 1}" for k, s in enumerate(DEMO.systems)
                                         for j in unjudged]
    return ("\n".join(lines) + "\n").encode()


def goto(at, page):
    at.switch_page(page)
    return at.run()


def upload_extra(at, content: bytes, name="extra.csv"):
    uploader = next(u for u in at.get("file_uploader") if u.proto.id.rsplit("-", 1)[-1].startswith("whatif_file_"))
    key = uploader.proto.id.rsplit("-", 1)[-1]
    at.file_uploader(key=key).upload(name, content, "text/csv")
    return at.run()


def counts(at) -> dict:
    return {m.label: m.value for m in at.metric}


def banner(at) -> bool:
    return any("modified dataset is active" in w.value for w in at.warning)


def estimate(at, metric: str) -> float:
    table = at.dataframe[0].value
    return float(table.loc[table["metric"] == metric, "estimate"].iloc[0])


def has_whatif_option(at) -> bool:
    return any("[whatif:demo]" in label for label in at.sidebar.selectbox(key="w:dataset").options)


def merged_app():
    at = new_app().run()
    goto(at, "pages/whatif.py")
    assert_clean(at)
    upload_extra(at, judgments_csv())
    assert_clean(at)
    shown = counts(at)
    assert shown["cells filled"] == "48" and shown["conflicting cells"] == "0" and shown["new inputs"] == "0"
    at.button(key="whatif_merge").click().run()
    assert_clean(at)
    return at


def test_merge_extra_judgments_becomes_the_current_dataset(store_env):
    at = merged_app()
    assert at.sidebar.selectbox(key="w:dataset").value == "whatif:demo"
    assert at.query_params["dataset"] == "whatif:demo"
    assert any("merged extra" in s.value for s in at.success)
    goto(at, "pages/home.py")
    assert_clean(at)
    assert banner(at)
    assert counts(at)["judged inputs"] == "103" and counts(at)["systems"] == "16"
    # Every page computes on it, with a banner.
    goto(at, "pages/correlations.py")
    assert_clean(at)
    assert banner(at)


def test_an_edit_beyond_the_score_limit_is_named_and_cannot_be_applied(store_env):
    at = new_app().run()
    goto(at, "pages/whatif.py")
    at.selectbox(key="whatif_edit_measure").set_value("metric.strong").run()
    editor = at.data_editor[0]
    first_system = editor.value.columns[0]
    at.session_state[editor.key] = {"edited_rows": {0: {first_system: 1e200}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert_clean(at)
    assert at.button(key="whatif_apply_edits").disabled
    assert any("cannot be applied" in w.value and "150" in w.value for w in at.warning), [w.value for w in at.warning]


def test_edit_a_cell_changes_the_correlation_and_pending_edits_survive_page_switches(store_env):
    at = new_app({"level": "global", "coef": "pearson"}).run()
    goto(at, "pages/correlations.py")
    before = estimate(at, "metric.strong")
    goto(at, "pages/whatif.py")
    at.selectbox(key="whatif_edit_measure").set_value("metric.strong").run()
    editor = at.data_editor[0]
    first_system = editor.value.columns[0]
    assert editor.value.index[0] == DEMO.inputs[int(np.flatnonzero(DEMO.judged)[0])]
    at.session_state[editor.key] = {"edited_rows": {0: {first_system: 1000.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert any("1 pending edit" in m.value for m in at.markdown)
    # Not applied yet: the correlation is unchanged, and the pending edit is kept across pages.
    goto(at, "pages/correlations.py")
    assert estimate(at, "metric.strong") == pytest.approx(before)
    goto(at, "pages/whatif.py")
    assert any("1 pending edit" in m.value for m in at.markdown)
    at.button(key="whatif_apply_edits").click().run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value == "whatif:demo"
    assert not any("pending edit" in m.value for m in at.markdown)
    assert at.data_editor[0].value.iloc[0][first_system] == 1000.0
    goto(at, "pages/correlations.py")
    after = estimate(at, "metric.strong")
    assert after != pytest.approx(before, abs=1e-3)
    # Invalid values never get in: the core validates (tested in tests/core); the page keeps the old dataset.


def test_conflicting_cells_ask_keep_or_replace(store_env):
    at = new_app().run()
    goto(at, "pages/whatif.py")
    system, input_id = DEMO.systems[0], DEMO.inputs[0]
    old = float(DEMO.measures["metric.strong"].scores[0, 0])
    upload_extra(at, f"system,input,metric.strong\n{system},{input_id},{old + 1:.6f}\n".encode())
    assert_clean(at)
    assert counts(at)["conflicting cells"] == "1"
    assert at.radio(key="whatif_conflict").value == "keep"
    at.radio(key="whatif_conflict").set_value("replace").run()
    at.button(key="whatif_merge").click().run()
    assert_clean(at)
    modified = at.session_state["_whatif"].dataset
    assert modified.measures["metric.strong"].scores[0, 0] == pytest.approx(old + 1)
    assert modified.id == "whatif:demo" and modified.version == modified.fingerprint()


def test_a_rejected_file_is_explained(store_env):
    at = new_app().run()
    goto(at, "pages/whatif.py")
    upload_extra(at, b"just,some\nwords,here\n")
    assert not at.exception and at.error
    assert at.sidebar.selectbox(key="w:dataset").value == "demo"


def test_exclude_save_restart_load_rename_delete(store_env):
    from metaeval_core.data.store import store_key

    saved, renamed = store_key("My <b>what-if</b>"), store_key("Renamed one")  # slug + hash of the exact name
    at = merged_app()
    excluded = DEMO.systems[2]
    box = next(m for m in at.multiselect if m.label == "Excluded systems")
    box.set_value([excluded]).run()
    at.button(key="whatif_exclude").click().run()
    assert_clean(at)
    goto(at, "pages/home.py")
    assert counts(at)["systems"] == "15" and counts(at)["judged inputs"] == "103"
    # Issue 14: the banner and the description give the counts after the exclusion, never the base's "16 systems".
    assert any("now 15 systems" in w.value for w in at.warning if "modified dataset is active" in w.value)
    shown = " ".join(m.value.replace("\\", "") for m in at.markdown)
    assert "Now 15 systems" in shown and not shown.startswith("16 systems")

    goto(at, "pages/whatif.py")
    at.text_input(key="store_name").set_value("My <b>what-if</b>").run()
    at.button(key="store_save").click().run()
    assert_clean(at)
    assert (store_env / f"{saved}.npz").is_file()
    assert any("Saved" in s.value for s in at.success)

    # A restart: a new session sees the stored dataset in the picker and can load it.
    at2 = new_app().run()
    picker = at2.sidebar.selectbox(key="w:dataset")
    assert f"Stored: My <b>what-if</b> [user:{saved}]" in picker.options
    assert not any("[whatif:demo]" in label for label in picker.options)
    picker.set_value(f"user:{saved}").run()
    assert_clean(at2)
    assert counts(at2)["systems"] == "15" and counts(at2)["judged inputs"] == "103"
    assert not banner(at2)
    assert any("My <b>what-if</b>" in h.value.replace("\\", "") for h in at2.header)  # escaped title

    goto(at2, "pages/whatif.py")
    listing = next(df.value for df in at2.dataframe if "saved" in df.value.columns)
    assert listing["id"].tolist() == [f"user:{saved}"]
    at2.text_input(key="store_new_name").set_value("Renamed one").run()
    at2.button(key="store_rename").click().run()
    assert_clean(at2)
    assert (store_env / f"{renamed}.npz").is_file() and not (store_env / f"{saved}.npz").exists()
    assert at2.sidebar.selectbox(key="w:dataset").value == f"user:{renamed}"
    # A link written before the rename still opens it, under its new id (issue 24: it broke).
    old_link = new_app({"dataset": f"user:{saved}"}).run()
    assert_clean(old_link)
    assert old_link.sidebar.selectbox(key="w:dataset").value == f"user:{renamed}"

    assert at2.button(key="store_delete").disabled  # a second confirmation is needed
    at2.checkbox(key="store_delete_confirm").check().run()
    at2.button(key="store_delete").click().run()
    assert_clean(at2)
    assert not (store_env / f"{renamed}.npz").exists()
    assert at2.sidebar.selectbox(key="w:dataset").value == "demo"
    assert not any(f"[user:{renamed}]" in label for label in at2.sidebar.selectbox(key="w:dataset").options)


def captured_downloads(monkeypatch) -> dict:
    """Each deferred download's callable by file name (AppTest's runtime, which holds them, ends with the run)."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    found = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        found[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return found


def test_download_the_modified_dataset_and_upload_it_back(store_env, monkeypatch):
    downloads = captured_downloads(monkeypatch)
    at = merged_app()
    at.selectbox(key="whatif_edit_measure").set_value("metric.strong").run()
    editor = at.data_editor[0]
    at.session_state[editor.key] = {"edited_rows": {0: {editor.value.columns[0]: 1000.0}}, "added_rows": [],
                                    "deleted_rows": []}
    at.run()
    at.button(key="whatif_apply_edits").click().run()
    excluded_system, excluded_input = DEMO.systems[2], DEMO.inputs[int(np.flatnonzero(DEMO.judged)[1])]
    next(m for m in at.multiselect if m.label == "Excluded systems").set_value([excluded_system])
    next(m for m in at.multiselect if m.label == "Excluded inputs").set_value([excluded_input]).run()
    at.button(key="whatif_exclude").click().run()
    assert_clean(at)
    modified = at.session_state["_whatif"].dataset
    assert modified.n_systems == 15 and excluded_input not in modified.inputs and modified.n_judged == 102

    button = next(b for b in at.get("download_button") if b.proto.label == "Download this dataset (CSV, long format)")
    assert button.proto.deferred_file_id and not button.proto.url  # built only when clicked
    name = "whatif-demo_scores-long.csv"
    assert name in downloads
    raw = downloads[name]()
    back = read_user_file(raw, name=name)  # the core upload, as the sidebar does
    assert back.systems == modified.systems and back.inputs == modified.inputs
    assert back.human_measures == modified.human_measures and back.metric_measures == modified.metric_measures
    for measure, expected in modified.measures.items():
        np.testing.assert_array_equal(back.measures[measure].scores, expected.scores, err_msg=measure)
    assert back.fingerprint() == modified.fingerprint() and 1000.0 in back.measures["metric.strong"].scores
    assert any("Upload your own scores" in c.value.replace("\\", "") for c in at.caption)
    # Not in the page report (it would be the whole dataset).
    snap = at.session_state["_export_snapshot"]
    assert not any(item.table is not None and {"measure", "score"} <= set(item.table.columns) for item in snap["items"])

    # Uploaded again in the sidebar ("Upload your own scores"), it is the same dataset.
    at.file_uploader(key="w:upload_file").upload(name, raw, "text/csv")
    at.run()
    assert_clean(at)
    chosen = at.sidebar.selectbox(key="w:dataset").value
    assert chosen.startswith(data.UPLOAD_PREFIX)
    assert at.session_state["_uploads"][chosen].fingerprint() == modified.fingerprint()


def test_revert_needs_confirmation(store_env):
    at = merged_app()
    goto(at, "pages/correlations.py")
    assert banner(at)
    assert at.button(key="whatif_revert").disabled
    at.checkbox(key="whatif_revert_confirm").check().run()
    at.button(key="whatif_revert").click().run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value == "demo" and not banner(at)
    assert not has_whatif_option(at)


def test_switching_away_keeps_the_modified_dataset_and_replacing_it_asks_first(store_env):
    at = merged_app()
    at.sidebar.selectbox(key="w:dataset").set_value("demo").run()
    assert_clean(at)
    assert has_whatif_option(at)  # not lost
    assert at.button(key="whatif_discard").disabled
    at.button(key="whatif_switch").click().run()
    assert at.sidebar.selectbox(key="w:dataset").value == "whatif:demo"
    at.sidebar.selectbox(key="w:dataset").set_value("demo").run()
    at.checkbox(key="whatif_discard_confirm").check().run()
    at.button(key="whatif_discard").click().run()
    assert not has_whatif_option(at)


def test_a_link_to_a_modified_dataset_explains_itself(store_env):
    """Without its draft on this machine, a link to a modified dataset says so at the top of the page, before any
    number (issue 24: the notice was ~1,800 px down, under the original's numbers)."""
    at = new_app({"dataset": "whatif:demo", "draft": "0123456789ab"}).run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value == "demo"
    warnings = [w.value.replace("\\", "") for w in at.main.warning]
    assert any("the numbers below are the ORIGINAL dataset's" in w for w in warnings), warnings
    assert not any("existed only in its own session" in c.value.replace("\\", "") for c in at.caption)


def test_a_reload_or_a_link_on_this_machine_reopens_the_modified_dataset(store_env):
    """The modified dataset is autosaved as a draft named in the URL: a reload (a fresh session with the same URL)
    gets the modified numbers back, with the banner, instead of silently the original (issue 24)."""
    at = merged_app()
    params = {k: at.query_params[k] for k in at.query_params}
    assert params["dataset"] == "whatif:demo" and params.get("draft")
    again = new_app({"dataset": params["dataset"], "draft": params["draft"]}).run()
    assert_clean(again)
    assert again.sidebar.selectbox(key="w:dataset").value == "whatif:demo"
    assert banner(again) and any("Restored from its autosaved draft" in w.value for w in again.warning)
    assert counts(again)["judged inputs"] == "103"
    # A tab opened from the link reverts: the link's draft is not its own, so the link still reopens it (issue 28).
    again.checkbox(key="whatif_revert_confirm").check().run()
    again.button(key="whatif_revert").click().run()
    assert banner(new_app({"dataset": params["dataset"], "draft": params["draft"]}).run())
    # The session that wrote the draft reverts: it is deleted; the link then opens the original and says so.
    goto(at, "pages/whatif.py")
    at.checkbox(key="whatif_revert_confirm").check().run()
    at.button(key="whatif_revert").click().run()
    third = new_app({"dataset": params["dataset"], "draft": params["draft"]}).run()
    assert third.sidebar.selectbox(key="w:dataset").value == "demo"
    assert any("ORIGINAL dataset's" in w.value.replace("\\", "") for w in third.main.warning)


def test_the_report_of_a_modified_dataset_does_not_promise_reproduction():
    from metaeval_ui.exports import reproduce_note

    assert "MODIFIED dataset" in reproduce_note("whatif:summeval") and "original" in reproduce_note("whatif:x")
    assert reproduce_note("summeval") == "Open the URL below to reproduce this view in the dashboard."
    assert "same file" in reproduce_note("upload:abc") and "local store" in reproduce_note("user:k")


def test_a_file_whose_kind_column_contradicts_the_dataset_is_merged_with_a_note(store_env):
    """The dataset's human measure stays human; the preview says the file's 'kind' column was overruled."""
    unjudged = [DEMO.inputs[j] for j in np.flatnonzero(~DEMO.judged)[:2]]
    lines = ["system,input,measure,score,kind"] + [f"{s},{j},{HUMAN},{(k % 5) + 1},metric"
                                                    for k, s in enumerate(DEMO.systems) for j in unjudged]
    at = new_app().run()
    goto(at, "pages/whatif.py")
    upload_extra(at, ("\n".join(lines) + "\n").encode())
    assert_clean(at)
    notes = " ".join(c.value for c in at.caption).replace("\\", "")  # markdown escapes
    assert f"Kept as human measures, as in this dataset, although the file says metric: {HUMAN}" in notes, notes
    assert counts(at)["cells filled"] == "32"


def test_a_damaged_stored_file_is_listed_with_its_reason_and_can_be_deleted(store_env):
    from metaeval_core.data.store import DatasetStore

    DatasetStore(store_env).save(DEMO, "Good one")
    (store_env / "broken.npz").write_bytes(b"PK\x03\x04 truncated")
    at = new_app().run()
    goto(at, "pages/whatif.py")
    assert_clean(at)
    assert any("1 stored file(s) cannot be read" in w.value for w in at.warning)
    shown = " ".join(m.value.replace("\\", "") for m in at.markdown)
    assert "Damaged: broken.npz" in shown and "cannot be read" in shown
    listing = next(df.value for df in at.dataframe if "saved" in df.value.columns)
    assert listing["name"].tolist() == ["Good one"]
    at.button(key="store_delete_damaged_broken").click().run()
    assert_clean(at)
    assert not (store_env / "broken.npz").exists()
    assert not any("cannot be read" in w.value for w in at.warning)


def test_editing_a_human_cell_keeps_the_annotators_and_the_ceiling_rows(store_env):
    """Editing one cell of a human measure with per-annotator scores says what happens to the annotators before it
    is applied, and keeps them: the Overview's human-ceiling rows stay (issue 24: they vanished)."""
    at = new_app().run()
    goto(at, "pages/whatif.py")
    at.selectbox(key="whatif_edit_measure").set_value(HUMAN).run()
    editor = at.data_editor[0]
    at.session_state[editor.key] = {"edited_rows": {0: {editor.value.columns[0]: 5.0}}, "added_rows": [],
                                    "deleted_rows": []}
    at.run()
    assert any("keeps per-annotator scores" in i.value.replace("\\", "") for i in at.info)
    at.button(key="whatif_apply_edits").click().run()
    assert_clean(at)
    goto(at, "pages/home.py")
    assert banner(at)
    table = next(m.value for m in at.markdown if m.value.startswith("| rank |"))
    assert "annotator 1 vs the others" in table


def test_preview_states_each_new_measures_role_and_flags_a_typo_system(store_env):
    """A new measure without a kind column becomes a metric: the preview says so and why; a system name one typo
    away from an existing one (S0l for S01) is flagged before it becomes a new system (issue 24)."""
    judged = [DEMO.inputs[j] for j in np.flatnonzero(DEMO.judged)[:3]]
    lines = ["system,input,quality"] + [f"S0l,{j},{k + 1}" for k, j in enumerate(judged)]
    at = new_app().run()
    goto(at, "pages/whatif.py")
    upload_extra(at, ("\n".join(lines) + "\n").encode())
    assert_clean(at)
    infos = " ".join(i.value for i in at.info).replace("\\", "")
    assert "New measure 'quality' is a metric: it is not named as a human measure" in infos, infos
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "new system 'S0l' looks like the existing 'S01'" in warnings, warnings

def test_a_merge_beyond_the_upload_limits_is_refused_before_the_preview(store_env, monkeypatch):
    """The merged result counts against the upload limits (issue 23): refused with the reason, no preview, no
    merge button, before any union array is built."""
    monkeypatch.setenv("METAEVAL_MAX_UPLOAD_CELLS", "1000")  # the 48-cell file is legal, the merged demo is not
    at = new_app().run()
    goto(at, "pages/whatif.py")
    upload_extra(at, judgments_csv())
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("cannot be merged" in e and "METAEVAL\\_MAX\\_UPLOAD\\_CELLS" in e for e in errors), errors
    assert not [b for b in at.button if b.key == "whatif_merge"]


def test_two_tabs_on_one_link_fork_apart_and_a_link_pins_its_state(store_env):
    """Two tabs open one draft link; the second excludes a system: it gets a new token, and the link (and the first
    tab's draft) still opens the merged dataset without the exclusion (issue 28: the second tab replaced it)."""
    at = merged_app()
    link = {k: at.query_params[k] for k in at.query_params}
    first, second = (new_app(dict(link)).run() for _ in range(2))
    assert banner(first) and banner(second)
    goto(second, "pages/whatif.py")
    system = DEMO.systems[0]
    next(m for m in second.multiselect if m.label == "Excluded systems").set_value([system]).run()
    second.button(key="whatif_exclude").click().run()
    assert_clean(second)
    forked = second.query_params["draft"]
    assert forked and forked != link["draft"]
    again = goto(new_app(dict(link)).run(), "pages/whatif.py")
    assert banner(again)
    box = next(m for m in again.multiselect if m.label == "Excluded systems")
    assert list(box.value) == []  # the link opens the state it was copied from
    # the merge's own tab changes too: a third token, the second tab's draft untouched
    goto(at, "pages/whatif.py")
    next(m for m in at.multiselect if m.label == "Excluded systems").set_value([DEMO.systems[1]]).run()
    at.button(key="whatif_exclude").click().run()
    assert at.query_params["draft"] not in (link["draft"], forked)
    reopened = goto(new_app({"dataset": link["dataset"], "draft": forked}).run(), "pages/whatif.py")
    assert list(next(m for m in reopened.multiselect if m.label == "Excluded systems").value) == [system]


def test_the_preview_says_before_the_merge_that_the_ceiling_rows_change(store_env):
    """A file of mean human scores only, merged into the demo's per-annotator measure: the preview says so before
    the merge, and after it the measure keeps its per-annotator scores (issue 28: they vanished silently)."""
    at = new_app().run()
    goto(at, "pages/whatif.py")
    upload_extra(at, judgments_csv())
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("human-ceiling and annotator rows will change" in w for w in warnings), warnings
    at.button(key="whatif_merge").click().run()
    assert_clean(at)
    from metaeval_ui import userdata

    found = at.session_state[userdata._WHATIF]
    assert found.full.measures[HUMAN].annotators is not None


def test_a_restored_draft_finds_its_base_shown_with_a_system_subset():
    """A base shown with its default system subset (HANNA's models, WMT's systems) has another version than the
    whole dataset: the restored draft rebuilds that subset, or the recorded systems, instead of dropping its base."""
    from metaeval_core.data.dataset import Dataset, Measure
    from metaeval_ui.userdata import _restored_base

    rng = np.random.default_rng(0)
    systems, inputs = ["m1", "m2", "m3", "human"], [f"i{j}" for j in range(5)]
    whole = Dataset("toy", systems, inputs, {"h": Measure("h", "human", rng.normal(size=(4, 5))),
                                             "x": Measure("x", "metric", rng.normal(size=(4, 5)))},
                    system_attributes={"kind": ["model", "model", "model", "human"]}, default_systems="kind=model")
    shown = whole.with_default_systems()
    assert shown.version != whole.version
    meta = {"base_version": shown.version, "base_systems": list(shown.systems), "base_inputs": list(shown.inputs)}
    assert _restored_base(whole, meta).version == shown.version
    picked = whole.subset(systems=["m1", "human"], inputs=inputs[:3])
    meta = {"base_version": picked.version, "base_systems": list(picked.systems), "base_inputs": list(picked.inputs)}
    assert _restored_base(whole, meta).version == picked.version
    assert _restored_base(whole, {"base_version": "other", "base_systems": ["gone"]}) is None
