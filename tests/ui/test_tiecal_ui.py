"""The tie threshold epsilon is shown wherever the dashboard shows a tie-calibrated accuracy (sec. 11.2)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metaeval_ui import tables, text
from ui_helpers import assert_clean, new_app

COEF = "tie-calibrated-accuracy"


def test_correlations_page_shows_epsilon_and_says_it_is_shared(demo_env):
    # Land at the system level (the Overview's leaderboard is quick there), then ask for the input level.
    at = new_app({"dataset": "demo", "coef": COEF, "level": "system"}).run()
    at.switch_page("pages/correlations.py").run()
    at.sidebar.radio(key="w:level").set_value("input").run()
    assert_clean(at)
    frame = at.dataframe[0].value
    assert "epsilon" in frame.columns
    assert np.isfinite(frame["epsilon"].astype(float)).all() and (frame["epsilon"].astype(float) >= 0).all()
    assert any("one epsilon shared by every input" in c.value and "re-choose epsilon" in c.value for c in at.caption)
    at.sidebar.radio(key="w:coefficient").set_value("kendall").run()
    assert_clean(at)
    assert "epsilon" not in at.dataframe[0].value.columns


def test_overview_leaderboard_has_an_epsilon_column(demo_env):
    at = new_app({"dataset": "demo", "coef": COEF, "level": "system"}).run()
    assert_clean(at)
    board = next(m.value for m in at.markdown if m.value.startswith("| rank |"))
    assert board.splitlines()[0] == f"| rank | metric | {COEF} | ε | 95% interval |"
    assert any(c.value.startswith("ε: ") and "over the system pairs" in c.value for c in at.caption)


def test_leaderboard_markdown_epsilon_cells():
    board = pd.DataFrame({"cluster": [1, np.nan], "metric": ["a", "b permuted"], "estimate": [0.7, 0.5],
                          "low": [0.6, 0.4], "high": [0.8, 0.6], "kind": ["metric", "chance"],
                          "epsilon": [0.0123, np.nan]})
    lines = tables.leaderboard_markdown(board, COEF).splitlines()
    assert lines[2] == "| **1** | **a** | **0.700** | **0.0123** | **[0.600, 0.800]** |"
    assert lines[3].split(" | ")[3] == "–"
    assert "ε" not in tables.leaderboard_markdown(board.drop(columns="epsilon"), COEF)
    assert "not one per input" in text.epsilon_note("input")


def test_confidence_page_says_resampling_rechooses_epsilon(demo_env):
    at = new_app({"dataset": "demo", "coef": COEF, "level": "system", "ci": ["boot-both"], "ci_k": "20"}).run()
    at.switch_page("pages/confidence.py").run()
    assert_clean(at)
    assert any("re-choose epsilon on every resample" in c.value for c in at.caption)
