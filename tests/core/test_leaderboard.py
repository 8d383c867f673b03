"""metaeval_core.analyses.leaderboard: one metrics leaderboard, its rules stated, its sentences true."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.analyses.leaderboard import CEILING_RULE, ORDERING, metrics_leaderboard

METRICS = ["metric.noise", "metric.weak", "metric.fair", "metric.good", "metric.strong"]


@pytest.fixture(scope="module")
def board(demo):
    return metrics_leaderboard(demo, METRICS, "human.quality", n_resamples=200)


def test_rows_follow_the_stated_order(board):
    kinds = [r.kind for r in board.rows]
    assert kinds == sorted(kinds, key=["metric", "chance", "human ceiling"].index)
    ranked = board.metrics
    assert [r.cluster for r in ranked] == sorted(r.cluster for r in ranked) and ranked[0].cluster == 1
    for a, b in zip(ranked, ranked[1:]):
        assert a.cluster < b.cluster or a.estimate >= b.estimate
    assert board.ordering == ORDERING and board.ceiling_rule == CEILING_RULE
    # the demo keeps three annotators: one ceiling row each, never ranked
    assert [r.name for r in board.rows if r.kind == "human ceiling"] == [f"annotator {k} vs the others"
                                                                         for k in (1, 2, 3)]
    assert all(r.cluster is None for r in board.rows if r.kind != "metric")


def test_the_parts_are_those_computed_alone(demo, board):
    from metaeval_core.stats.resampling import dataset_confidence_interval

    ci = dataset_confidence_interval(demo, "metric.fair", "human.quality",
                                     level="system", coefficient="kendall",
                                     method="boot-both", n_resamples=200, rng=0)
    row = next(r for r in board.metrics if r.name == "metric.fair")
    assert (row.estimate, row.low, row.high) == (ci.estimate, ci.low, ci.high)


def test_the_json_and_the_frame_hold_the_same_rows(board):
    records, frame = board.to_dict()["rows"], board.to_frame()
    assert [r["metric"] for r in records] == list(frame["metric"])
    assert np.allclose([np.nan if r["low"] is None else r["low"] for r in records], frame["low"], equal_nan=True)


def test_one_metric_is_alone_in_rank_one_without_a_table(demo):
    one = metrics_leaderboard(demo, ["metric.good"], "human.quality", n_resamples=100)
    assert one.table is None and one.separation() == "" and [r.cluster for r in one.metrics] == [1]


def test_metrics_no_test_separates_are_not_called_tied(demo):
    close = metrics_leaderboard(demo, ["metric.weak", "metric.noise"], "human.quality", n_resamples=100)
    assert {r.cluster for r in close.metrics} == {1}
    text = close.separation()
    assert text.startswith("No test separates these metrics at α = 0.05 after Bonferroni over 1 test per metric")
    assert "tied" not in text and "not a tie" in text


def test_a_bad_option_is_one_clear_error(demo):
    with pytest.raises(ValueError, match="correction must be one of"):
        metrics_leaderboard(demo, METRICS, "human.quality", correction="sidak")
    with pytest.raises(ValueError, match="metrics must be"):
        metrics_leaderboard(demo, "metric.good", "human.quality")
