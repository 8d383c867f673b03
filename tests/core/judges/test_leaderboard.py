"""The leaderboard is the sum of its parts: the same numbers as the separate calls with the same seed."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.judges import chance_baseline, compare_judges, human_ceiling, judge_agreement, judge_leaderboard
from tests.core.judges.helpers import loaded, random_data


def test_leaderboard_rows_are_the_separate_results():
    data = random_data(61, n=80, n_humans=3, n_judges=3)
    board = judge_leaderboard(data, n_resamples=200, rng=9)
    table = judge_agreement(data, n_resamples=200, rng=9)
    chance = {c.judge: c for c in chance_baseline(data, n_resamples=200, rng=9)}
    clusters = compare_judges(data, n_resamples=200, rng=9).clusters
    ceiling = human_ceiling(data, n_resamples=200, rng=9)
    judges = [r for r in board.rows if r.kind == "judge"]
    assert [r.estimate for r in judges] == sorted(table.estimates, reverse=True)
    for row in judges:
        alone = table.row(row.name)
        assert (row.estimate, row.low, row.high) == (alone.estimate, alone.low, alone.high)
        assert row.chance_pvalue == chance[row.name].pvalue and row.chance_mean == chance[row.name].mean
        assert row.cluster == int(clusters.rank[list(clusters.metrics).index(row.name)])
    annotators = [r for r in board.rows if r.kind == "annotator"]
    assert [r.estimate for r in annotators] == list(ceiling.estimates)
    top = board.rows[-1]
    assert top.kind == "human-ceiling" and top.estimate == pytest.approx(np.mean(ceiling.estimates))
    assert top.low <= top.estimate <= top.high
    records = board.to_records()
    assert {"kind", "cluster", "chance_pvalue", "statistic", "ties"} <= set(records[0])


def test_no_ceiling_against_a_gold_label_or_with_one_annotator():
    assert judge_leaderboard(random_data(62, gold=True), n_resamples=50, rng=0).ceiling is None
    board = judge_leaderboard(random_data(63, n_humans=1), n_resamples=50, rng=0)
    assert board.ceiling is None and all(r.kind == "judge" for r in board.rows)
    two = judge_leaderboard(random_data(63, n_humans=2), n_resamples=50, rng=0)
    assert [r.kind for r in two.rows][-3:] == ["annotator", "annotator", "human-ceiling"]


@pytest.mark.realdata
def test_pandalm_leaderboard(data_dir):
    board = judge_leaderboard(loaded(data_dir, "pandalm"), n_resamples=200, rng=0)
    kinds = [r.kind for r in board.rows]
    assert kinds == ["judge", "judge", "annotator", "annotator", "annotator", "human-ceiling"]
    assert board.rows[0].name == "GPT-3.5-turbo" and board.rows[-1].estimate > board.rows[0].estimate
    assert board.rows[0].chance_high < board.rows[0].low
