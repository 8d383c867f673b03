"""Judges run only in the swapped order are analysable on the pages: the order control offers it (issue 28)."""

from __future__ import annotations

import io

import pandas as pd

from test_judges_pages import LEADERBOARD, verdict_csv
from ui_helpers import assert_clean, new_app

SYSTEMS = "pages/judges_systems.py"


def swapped_only() -> bytes:
    frame = pd.read_csv(io.BytesIO(verdict_csv()))
    judges = frame["kind"] == "judge"
    return frame[~judges | (frame["order"] == "swapped")].to_csv(index=False).encode()


def test_a_swapped_only_upload_is_scored_in_the_swapped_order(demo_env):
    at = new_app({"jk": "100"}).run()
    at.switch_page(LEADERBOARD).run()
    at.file_uploader(key="w:j_upload").upload("swapped.csv", swapped_only(), "text/csv").run()
    assert_clean(at)
    assert list(at.sidebar.radio(key="w:j_order").options) == ["swapped (B shown first)"] or \
        len(at.sidebar.radio(key="w:j_order").options) == 1
    assert at.query_params.get("jorder", "swapped") == "swapped"
    assert not at.error and at.dataframe
    at.switch_page(SYSTEMS).run()
    assert_clean(at)
    assert len(at.sidebar.radio(key="w:j_sys_order").options) == 1 and not at.error
