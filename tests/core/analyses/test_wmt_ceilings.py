"""Human ceilings at WMT: the per-rater MQM releases (WMT23 zh-en mqm.raters, en-de mqm.sxs) give ceiling rows on
leaderboards scored against the gold mqm, as WMT25's human1/human2 rows sit beside the metrics (docs/methods.md
sec. 14.4)."""

from __future__ import annotations

import pytest

from metaeval_core.analyses.ceilings import ceiling_measure
from metaeval_core.analyses.leaderboard import CEILING_RULE, metrics_leaderboard
from metaeval_core.data.synthetic import synthetic_dataset


def test_a_measure_with_annotators_is_its_own_ceiling():
    ds = synthetic_dataset()
    assert ceiling_measure(ds, "human.quality") == "human.quality"
    assert "per-rater release" in CEILING_RULE


@pytest.fixture(scope="module")
def pairs(data_dir):
    from metaeval_core.data.registry import load_dataset

    return {lp: load_dataset("wmt23", lp=lp, data_dir=data_dir) for lp in ("zh-en", "en-de")}


@pytest.mark.realdata
@pytest.mark.parametrize("lp, source, n_raters", [("zh-en", "mqm.raters", 8), ("en-de", "mqm.sxs", 10)])
def test_the_gold_mqm_leaderboard_has_a_row_per_rater(pairs, lp, source, n_raters):
    ds = pairs[lp].with_default_systems()
    assert ds.measure("mqm").annotators is None  # the gold keeps no raters: its release does
    assert ceiling_measure(ds, "mqm") == source
    metrics = [m for m in ds.conventions.primary_metrics if m.startswith(("BLEU-", "COMET-"))][:2]
    board = metrics_leaderboard(ds, metrics, "mqm", level="system", coefficient="pearson", n_resamples=20, rng=1)
    ceilings = [r for r in board.rows if r.kind == "human ceiling"]
    assert len(ceilings) == n_raters, [r.name for r in ceilings]
    assert all(f"({source}) vs the others" in r.name for r in ceilings)
    assert any(r.estimate == r.estimate for r in ceilings)  # some rater has a defined agreement
    assert [r.kind for r in board.rows[:2]] == ["metric", "metric"]
    # The same rows as the ceiling of the release itself (one rule, one computation).
    own = metrics_leaderboard(ds, metrics, source, level="system", coefficient="pearson", n_resamples=20, rng=1)
    assert [r.estimate for r in own.rows if r.kind == "human ceiling"] == pytest.approx(
        [r.estimate for r in ceilings], nan_ok=True)
