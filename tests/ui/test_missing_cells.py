"""No table shows a missing cell: Streamlit draws each one as a grey "None", which reads as a Python leak (issue 24:
"n: None" on the human-ceiling rows of Confidence intervals, the missing-data table of Dataset, the averages)."""

from __future__ import annotations

import pandas as pd
import pytest

from metaeval_ui.tables import without_missing
from ui_helpers import REPO, assert_clean, new_app

PAGES = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "pages").glob("*.py")
               if p.name not in ("overview.py", "whatif.py"))  # overview.py runs home.py; What if… edits data


def shown_missing(at) -> list[str]:
    found = []
    for element in at.dataframe:
        frame = element.value
        order = list(element.proto.column_order) or list(frame.columns)
        for column in frame.columns:
            if column in order and frame[column].isna().any():
                found.append(f"{column!r}: {int(frame[column].isna().sum())} missing of {len(frame)}")
    return found


@pytest.mark.parametrize("page", PAGES)
def test_no_table_draws_none_on_the_demo(demo_env, page):
    at = new_app({"dataset": "demo", "ci": "boot-both,fisher"}).run()
    at.switch_page(page).run()
    assert_clean(at)
    assert not shown_missing(at), f"{page}: {shown_missing(at)}"


@pytest.mark.realdata
@pytest.mark.parametrize("page", ["pages/confidence.py", "pages/dataset.py", "pages/average.py"])
def test_no_table_draws_none_on_hanna(real_env, page):
    at = new_app({"dataset": "hanna"}).run()
    at.switch_page(page).run()
    assert_clean(at)
    assert not shown_missing(at), f"{page}: {shown_missing(at)}"


def test_without_missing_blanks_cells_drops_empty_columns_and_keeps_formats():
    frame = pd.DataFrame({"metric": ["a", "b"], "estimate": [0.5, None], "n": pd.array([10, None], dtype="Int64"),
                          "reason": ["", ""], "gone": [None, None], "full": [1.0, 2.0]})
    shown, config = without_missing(frame, {"estimate": {"label": "τ", "type_config": {"type": "number",
                                                                                      "format": "%.4f"}}})
    assert list(shown.columns) == ["metric", "estimate", "n", "full"]
    assert list(shown["estimate"]) == ["0.5000", ""] and list(shown["n"]) == ["10", ""]
    assert config["estimate"]["label"] == "τ" and config["estimate"]["type_config"] == {"type": "text"}
    assert config["estimate"]["alignment"] == "right" and "full" not in config
    assert shown["full"].dtype == float  # untouched: still sorts as numbers
