"""Uploading a user's score file: parsed once per content hash, kept per session, names escaped."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_ui import data
from ui_helpers import assert_clean, new_app



def wide_csv(n_systems=6, n_inputs=12, seed=3) -> bytes:
    rng = np.random.default_rng(seed)
    lines = ["system,input,system_type,human.overall,my*metric,<b>bold</b>"]
    for i in range(n_systems):
        for j in range(n_inputs):
            quality = i + rng.normal()
            lines.append(f"sys{i},doc{j},{'abs' if i % 2 else 'ext'},{quality:.3f},{quality + rng.normal():.3f},"
                         f"{rng.normal():.3f}")
    return ("\n".join(lines) + "\n").encode()


def upload(at, name: str, content: bytes):
    at.file_uploader(key="w:upload_file").upload(name, content, "text/csv")
    return at.run()


def test_upload_becomes_the_dataset_and_every_page_works(demo_env):
    at = new_app().run()
    upload(at, "scores.csv", wide_csv())
    assert_clean(at)
    chosen = at.sidebar.selectbox(key="w:dataset").value
    assert chosen.startswith(data.UPLOAD_PREFIX)
    assert at.query_params["dataset"] == chosen
    counts = {m.label: m.value for m in at.metric}
    assert counts["systems"] == "6" and counts["judged inputs"] == "12" and counts["human measures"] == "1"
    # The metric named like HTML stays text (escaped), it is not rendered as markup.
    assert "<b>bold</b>" in at.sidebar.multiselect(key="w:metrics").options
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert set(table["metric"]) == {"my*metric", "<b>bold</b>"}
    assert (table["n"] == 6).all()
    # Same content again: the same dataset (keyed by sha256), nothing duplicated.
    upload(at, "copy.csv", wide_csv())
    assert at.sidebar.selectbox(key="w:dataset").value == chosen


def test_a_bad_file_gives_a_message_not_a_traceback(demo_env):
    at = new_app().run()
    upload(at, "broken.csv", b"just,some\nwords,here\n")
    assert not at.exception
    assert at.error, "the reason is shown"
    assert at.sidebar.selectbox(key="w:dataset").value == "demo"


def test_a_link_to_an_upload_from_another_session_explains_itself(demo_env):
    at = new_app({"dataset": "upload:0123456789ab"}).run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value == "demo"
    # a warning at the top of the page (issue 24): the numbers below are another dataset's
    assert any("upload the file again" in w.value.lower() for w in at.warning)


def test_an_upload_shows_the_data_check_before_the_numbers(demo_env):
    # system sys5 judged on 2 of 12 inputs, a metric copied under a second name, a constant metric
    lines = ["system,input,human.overall,rouge,rouge_copy,flat"]
    rng = np.random.default_rng(5)
    for i in range(6):
        for j in range(12):
            human = "" if i == 5 and j >= 2 else f"{i + rng.normal():.3f}"
            metric = f"{rng.normal():.3f}"
            lines.append(f"sys{i},doc{j},{human},{metric},{metric},1")
    at = new_app().run()
    upload(at, "checked.csv", ("\n".join(lines) + "\n").encode())
    assert_clean(at)
    assert any(e.label.startswith("Data check: 3 warning(s)") for e in at.expander)
    warnings = " ".join(w.value for w in at.warning)
    assert "sys5" in warnings and "'rouge', 'rouge\\_copy'" in warnings and "'flat'" in warnings
    assert {m.label for m in at.metric} >= {"systems", "judged inputs"}  # the user reads on


def test_a_rejected_upload_says_so_in_the_main_pane_in_one_sentence(demo_env):
    at = new_app().run()
    assert at.metric, "the demo's overview"
    upload(at, "metrics_only.csv", b"system,input,rouge,bleu\nA,d1,1,2\nB,d1,2,3\nA,d2,3,1\nB,d2,1,1\n")
    assert not at.exception
    main = [e.value for e in at.main.error]
    assert len(main) == 1, main
    sentence = main[0].replace("\\", "")  # the UI escapes markdown
    assert sentence == ("metrics_only.csv was not loaded: none of the measures ('rouge', 'bleu') is recognised as a "
                        "human judgment."), sentence
    assert not at.metric, "the previous dataset's analysis is not left on screen as if nothing happened"
    assert at.sidebar.selectbox(key="w:dataset").value == "demo"
    assert any("(no-human-measure)" in e.value.replace("\\", "") for e in at.sidebar.error), "the whole message"
    at.button(key="upload_dismiss").click().run()
    assert_clean(at)
    assert at.metric, "dismissed: back to the demo"


def test_a_what_if_merge_shows_the_data_check(demo_env, tmp_path, monkeypatch):
    from test_whatif import DEMO as demo, goto, upload_extra

    monkeypatch.setenv("METAEVAL_STORE_DIR", str(tmp_path / "store"))
    judged = [demo.inputs[j] for j in np.flatnonzero(demo.judged)[:2]]
    human = demo.human_measures[0]
    extra = f"system,input,{human}\n" + "".join(f"newsys,{j},{k + 2}\n" for k, j in enumerate(judged))
    at = new_app().run()
    goto(at, "pages/whatif.py")
    upload_extra(at, extra.encode())
    # Before merging: the merged result's check, with the warning the merge would add.
    assert any(e.label.startswith("Data check of the merged result: 1 new warning(s)") for e in at.expander)
    assert any("newsys" in w.value and "as few as 2" in w.value for w in at.warning)
    at.button(key="whatif_merge").click().run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w:dataset").value == "whatif:demo"
    assert any(e.label.startswith("Data check: 1 new warning(s) from your changes") for e in at.expander)
    assert any("newsys" in w.value and "as few as 2" in w.value for w in at.warning)


def test_a_rejected_merge_file_is_one_sentence_and_stays_on_rerun(demo_env, tmp_path, monkeypatch):
    from test_whatif import goto, upload_extra

    monkeypatch.setenv("METAEVAL_STORE_DIR", str(tmp_path / "store"))
    at = new_app().run()
    goto(at, "pages/whatif.py")
    upload_extra(at, b"system,input,rouge\nA,d1,1e200\n", name="huge.csv")
    first = [e.value.replace("\\", "") for e in at.main.error]
    assert first[0] == ("huge.csv was not loaded (line 2, column 'rouge'): the score '1e200' of the measure 'rouge' "
                        "is larger in magnitude than 1e+150: means, variances and correlations of such scores "
                        "overflow and would be wrong."), first
    at.run()
    assert [e.value.replace("\\", "") for e in at.main.error] == first


def test_a_sparse_new_human_measure_is_a_new_warning(demo_env, tmp_path, monkeypatch):
    """New judgments of 3 systems on 20 inputs, merged into the demo's 16 x 100: the preview and the data check
    warn about the sparse measure (issue 24: 'no new warnings')."""
    from test_whatif import DEMO as demo, goto, upload_extra

    monkeypatch.setenv("METAEVAL_STORE_DIR", str(tmp_path / "store"))
    judged = [demo.inputs[j] for j in np.flatnonzero(demo.judged)[:20]]
    extra = "system,input,human.new\n" + "".join(f"{s},{j},{(k + i) % 5 + 1}\n" for i, s in enumerate(demo.systems[:3])
                                                  for k, j in enumerate(judged))
    at = new_app().run()
    goto(at, "pages/whatif.py")
    upload_extra(at, extra.encode())
    assert any(e.label.startswith("Data check of the merged result: 2 new warning(s)") for e in at.expander)
    expected = "human measure 'human.new' scores only 3 of 16 systems on 20 of 100 judged inputs (60 cells)"
    assert any(expected in w.value.replace("\\", "") for w in at.warning), [w.value for w in at.warning]
    at.button(key="whatif_merge").click().run()
    assert_clean(at)
    assert any(e.label.startswith("Data check: 2 new warning(s) from your changes") for e in at.expander)
    assert any("scores no input of 13 system(s)" in w.value.replace("\\", "") for w in at.warning)


def test_the_data_check_stays_closed_when_a_change_adds_no_warning(demo_env, tmp_path, monkeypatch):
    """A warning the data had before any change is listed, collapsed, not opened on every page (issue 24)."""
    from test_whatif import goto

    monkeypatch.setenv("METAEVAL_STORE_DIR", str(tmp_path / "store"))
    at = new_app().run()
    upload(at, "dup.csv", b"system,input,human.q,rouge,copy,bleu\nA,d1,1,1,1,4\nB,d1,2,3,3,1\nA,d2,3,2,2,2\n"
                          b"B,d2,4,5,5,3\n")
    assert any(e.label.startswith("Data check: 1 warning(s)") for e in at.expander)
    goto(at, "pages/whatif.py")
    at.selectbox(key="whatif_edit_measure").set_value("bleu").run()
    editor = at.data_editor[0]
    at.session_state[editor.key] = {"edited_rows": {0: {editor.value.columns[0]: 9.0}}, "added_rows": [],
                                    "deleted_rows": []}
    at.run()
    at.button(key="whatif_apply_edits").click().run()
    assert_clean(at)
    goto(at, "pages/home.py")
    check = next(e for e in at.expander if e.label.startswith("Data check"))
    assert check.label == "Data check: no new warnings (1 the original already had)", check.label
    assert not check.proto.expanded
    assert not any("identical scores" in w.value for w in at.warning)
