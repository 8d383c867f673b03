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
    assert any("upload it again" in c.value for c in at.caption)
