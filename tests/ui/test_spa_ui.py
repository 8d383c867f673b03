"""Soft pairwise accuracy on the dashboard: offered at the system level only, computed like the core."""

from __future__ import annotations

import pytest

from ui_helpers import assert_clean, new_app

SPA = "soft-pairwise-accuracy"


def test_correlations_page_computes_spa(demo_env):
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_core.stats.correlation import correlate

    at = new_app({"dataset": "demo"}).run()
    at.switch_page("pages/correlations.py").run()
    radio = at.sidebar.radio(key="w:coefficient")
    assert SPA in radio.options
    radio.set_value(SPA).run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert at.query_params["coef"] == SPA
    ds = synthetic_dataset()
    for metric, estimate in zip(table["metric"], table["estimate"]):
        assert estimate == pytest.approx(correlate(ds, metric, "human.quality", coefficient=SPA).estimate, abs=1e-12)
    assert table["estimate"].iloc[0] > table["estimate"].iloc[-1]

    # Another level: SPA is not offered, and the page falls back to Kendall with a note.
    at.sidebar.radio(key="w:level").set_value("input").run()
    assert_clean(at)
    assert SPA not in at.sidebar.radio(key="w:coefficient").options
    assert at.sidebar.radio(key="w:coefficient").value == "kendall"


def test_long_spa_intervals_are_refused_with_what_to_change(monkeypatch):
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_ui import data
    from metaeval_ui.data import resampled

    ds = synthetic_dataset()
    data.check_interval_size(ds, "metric.strong", "human.quality", SPA, "boot-both", "judged", "", 1000)  # fits
    data.check_interval_size(ds, "metric.strong", "human.quality", "kendall", "boot-both", "judged", "", 10**9)
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", 0.01)
    data.check_interval_size(ds, "metric.strong", "human.quality", SPA, "boot-systems", "judged", "", 1000)
    with pytest.raises(ValueError, match="BOOT-SYSTEMS"):
        data.check_interval_size(ds, "metric.strong", "human.quality", SPA, "boot-both", "judged", "", 1000)
