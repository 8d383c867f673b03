"""The leaderboard is the sum of its parts: the same numbers as the separate calls with the same seed."""

from __future__ import annotations

import numpy as np
import pytest

from dataclasses import replace

from metaeval_core.judges import (
    MISSING, TIE, chance_baseline, compare_judges, human_ceiling, judge_agreement, judge_leaderboard, majority_verdict,
    wording,
)
from metaeval_core.judges.leaderboard import CEILING_RULE
from metaeval_core.stats.significance import correct_pvalues
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
    assert [r.cluster for r in judges] == sorted(r.cluster for r in judges)
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


def test_no_ceiling_against_a_gold_label_one_annotator_or_an_annotator_as_reference():
    gold = judge_leaderboard(random_data(62, gold=True), n_resamples=50, rng=0)
    assert gold.ceiling is None and "gold label" in gold.no_ceiling and not gold.kind_rows("human-ceiling")
    board = judge_leaderboard(random_data(63, n_humans=1), n_resamples=50, rng=0)
    assert board.ceiling is None and {r.kind for r in board.rows} == {"judge", "chance"}
    assert "at least two human annotators" in board.no_ceiling
    two = judge_leaderboard(random_data(63, n_humans=2), n_resamples=50, rng=0)
    assert [r.kind for r in two.rows][-3:] == ["annotator", "annotator", "human-ceiling"]
    assert two.ceiling_rule == CEILING_RULE and "plain agreement" in wording.ceiling(two)
    # with two annotators each is scored against the other: their agreement, the same value for both
    assert two.rows[-2].estimate == two.rows[-3].estimate
    one = judge_leaderboard(random_data(63, n_humans=3), reference="h1", n_resamples=50, rng=0)
    assert one.ceiling is None and "one annotator (h1)" in one.no_ceiling
    assert "below" not in wording.ceiling(one)


def test_chance_row_counts_the_judges_items_and_p_values_are_corrected():
    data = random_data(64, n=60, n_judges=3)
    board = judge_leaderboard(data, ties="drop-any-tie", n_resamples=100, rng=1)
    judges, (chance,) = board.judge_rows(), board.kind_rows("chance")
    counts = {r.n_items for r in judges}
    assert chance.n_items == (counts.pop() if len(counts) == 1 else None)
    assert all(r.n_items < data.n_items for r in judges)  # ties dropped: never the dataset's item count
    assert chance.low == min(r.chance_low for r in judges) and chance.high == max(r.chance_high for r in judges)
    p = np.array([r.chance_pvalue for r in judges])
    np.testing.assert_allclose([r.chance_pvalue_corrected for r in judges], correct_pvalues(p, method="holm"))
    # the judge's own ties, not the reference's
    table = judge_agreement(data, ties="drop-any-tie", n_resamples=100, rng=1)
    for row in judges:
        v = data.verdicts[:, data.rater_index(row.name), 0]
        ref = majority_verdict(data.verdicts[:, [data.rater_index(h) for h in data.humans], 0])
        assert row.n_ties == int(((v == TIE) & (v != MISSING) & (ref != MISSING)).sum())
        assert table.row(row.name).n_judge_ties == row.n_ties


def test_undefined_judges_get_no_cluster_and_one_order_data_is_refused_for_average():
    data = random_data(65, n=50, orders=1)
    with pytest.raises(ValueError, match="order='average' needs verdicts in original and swapped"):
        judge_leaderboard(data, order="average", n_resamples=50, rng=0)
    mixed = random_data(65, n=50, orders=2)
    v = np.array(mixed.verdicts)
    v[:, mixed.rater_index("j3"), 1] = MISSING  # j3 judged one order only
    mixed = replace(mixed, verdicts=v)
    board = judge_leaderboard(mixed, order="average", n_resamples=50, rng=0)
    last = board.judge_rows()[-1]
    assert last.name == "j3" and last.cluster is None and not np.isfinite(last.estimate)
    assert any("j3" in w for w in board.warnings)


def test_judges_on_different_pair_sets_are_named_in_a_warning():
    data = random_data(66, n=60, pair_sets=2)
    v = np.array(data.verdicts)
    v[data.pair_set == 1, data.rater_index("j1"), :] = MISSING
    board = judge_leaderboard(replace(data, verdicts=v), n_resamples=50, rng=0)
    (warning,) = board.warnings
    assert "j1 on" in warning and "(set0)" in warning and "2 judges on" in warning and "(set0, set1)" in warning
    assert not judge_leaderboard(data, n_resamples=50, rng=0).warnings
    # The intervals' caption says which items each resample draws and that j1 counts fewer of them.
    counted = sorted({r.n_items for r in board.judge_rows()})
    assert len(counted) == 2 and counted[1] == board.n_items
    assert (f"over items (all {board.n_items} items drawn together; each judge is scored on the drawn items it "
            f"counts, {counted[0]} to {counted[1]} of them)") in wording.conventions(board)
    same = judge_leaderboard(data, n_resamples=50, rng=0)
    assert f"over items ({same.n_items} items), 50 resamples" in wording.conventions(same)


def test_headline_names_tied_leaders_once():
    data = random_data(67, n=60, n_judges=3)
    v = np.array(data.verdicts)
    v[:, data.rater_index("j2")] = v[:, data.rater_index("j3")]  # j2 and j3 identical: tied on top
    board = judge_leaderboard(replace(data, verdicts=v), n_resamples=50, rng=0)
    text = wording.headline(board)
    assert "j2 and j3 (tied)" in text or "j3 and j2 (tied)" in text
    assert text.count("j2") == 1 and text.count("j3") == 1


@pytest.mark.realdata
def test_pandalm_leaderboard(data_dir):
    board = judge_leaderboard(loaded(data_dir, "pandalm"), n_resamples=200, rng=0)
    kinds = [r.kind for r in board.rows]
    assert kinds == ["judge", "judge", "chance", "annotator", "annotator", "annotator", "human-ceiling"]
    assert [r.n_items for r in board.kind_rows("annotator")] == [917, 928, 912]
    assert board.kind_rows("human-ceiling")[0].n_items is None  # three different item sets: no single n
    assert [r.n_ties for r in board.judge_rows()] == [38, 107]  # the judges' own ties (the reference has 105)
    assert board.rows[0].name == "GPT-3.5-turbo" and board.rows[-1].estimate > board.rows[0].estimate
    assert board.rows[0].chance_high < board.rows[0].low
