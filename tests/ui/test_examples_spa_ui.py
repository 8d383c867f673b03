"""The examples panel behind soft pairwise accuracy on Correlations (issue 31): each system pair's two p-values
and their gap, the largest first; no system-score toggle where the dataset has no system-score files."""

from __future__ import annotations

from ui_helpers import assert_clean, new_app


def test_correlations_lists_the_pairs_behind_spa(demo_env):
    at = new_app({"dataset": "demo", "human": "human.quality", "metric": ["metric.good", "metric.weak"],
                  "level": "system", "coef": "soft-pairwise-accuracy", "ex": "metric.weak"})
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    sentence = next(c.value.replace("\\", "") for c in at.caption if "mean gap" in c.value.replace("\\", ""))
    assert sentence.startswith("metric.weak vs human.quality: system-level soft pairwise accuracy ")
    table = next(d.value for d in at.dataframe if "p_gap" in d.value.columns)
    assert list(table["p_gap"]) == sorted(table["p_gap"], reverse=True)
    assert {"p_metric", "p_human", "p_gap_share"} <= set(table.columns)
    assert not any(t.key.startswith("ex_scores:") for t in at.toggle)  # the demo has no .sys.score files
