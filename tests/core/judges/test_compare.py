"""Paired permutation tests between judges: a slow loop over the same swaps, corrections, clusters."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from metaeval_core.judges import compare_judges, draw_swaps, judge_agreement, majority_verdict
from metaeval_core.stats.significance import correct_pvalues
from tests.core.judges.helpers import accuracy_oracle, block_draws, random_data


def _loop_null(data, a, b, k, seed, score):
    """delta_s by physically swapping the two judges' verdicts on the items whose swap bit is set."""
    swaps = block_draws("swaps", seed, k, data.n_items).astype(bool)
    np.testing.assert_array_equal(swaps, draw_swaps(seed, k, data.n_items).astype(bool))
    va = data.verdicts[:, data.rater_index(a), :]
    vb = data.verdicts[:, data.rater_index(b), :]
    null = []
    for bits in swaps:
        x = np.where(bits[:, None], vb, va)
        y = np.where(bits[:, None], va, vb)
        null.append(score(x) - score(y))
    return np.array(null)


def test_permutation_null_and_pvalues_match_a_slow_loop():
    data = random_data(21, n=40)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    result = compare_judges(data, order="average", n_resamples=200, rng=5, correction="none")
    acc = lambda v: accuracy_oracle([tuple(r) for r in v.tolist()], ref, "average", "three-class", "wrong")  # noqa
    for i, a in enumerate(result.judges):
        for j, b in enumerate(result.judges):
            if i >= j:
                continue
            null = _loop_null(data, a, b, 200, 5, acc)
            observed = acc(data.verdicts[:, data.rater_index(a), :]) - acc(data.verdicts[:, data.rater_index(b), :])
            assert result.table.delta[i, j] == pytest.approx(observed)
            expected = (1 + np.sum(np.abs(null) >= abs(observed) - 1e-12)) / 201
            assert result.table.pvalue[i, j] == pytest.approx(expected)
            assert result.table.pvalue[j, i] == pytest.approx(expected)


def test_kappa_comparison_matches_sklearn_on_swapped_verdicts():
    data = random_data(22, n=50, p_invalid=0.0, orders=1)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    result = compare_judges(data, statistic="kappa", judges=["j1", "j3"], alternative="greater", n_resamples=100,
                            rng=2, correction="none")
    kap = lambda v: cohen_kappa_score(v[:, 0], ref)  # noqa: E731
    null = _loop_null(data, "j1", "j3", 100, 2, kap)
    observed = result.table.delta[0, 1]
    assert result.table.pvalue[0, 1] == pytest.approx((1 + np.sum(null >= observed - 1e-12)) / 101)
    assert result.table.pvalue[1, 0] == pytest.approx((1 + np.sum(-null >= -observed - 1e-12)) / 101)


def test_corrections_clusters_and_batch_invariance():
    data = random_data(23, n=120, n_judges=4)
    result = compare_judges(data, n_resamples=300, rng=0, correction="holm", family="row")
    for i in range(4):
        off = [j for j in range(4) if j != i]
        np.testing.assert_allclose(result.table.pvalue_corrected[i, off],
                                   correct_pvalues(result.table.pvalue[i, off], method="holm"))
    estimates = judge_agreement(data, n_resamples=40, rng=0).estimates
    np.testing.assert_allclose(result.table.estimates, estimates)
    assert result.clusters.metrics[0] == data.judges[int(np.argmax(estimates))]
    table = compare_judges(data, n_resamples=300, rng=0, family="table", correction="bonferroni")
    upper = np.triu_indices(4, 1)
    np.testing.assert_allclose(table.table.pvalue_corrected[upper], np.minimum(1, 6 * table.table.pvalue[upper]))
    again = compare_judges(data, n_resamples=300, rng=0, batch=7, correction="holm", family="row")
    np.testing.assert_array_equal(again.table.pvalue, result.table.pvalue)
    records = result.to_records()
    assert len(records) == 12 and {"n_common", "statistic", "order", "ties", "invalid"} <= set(records[0])


def test_comparison_needs_two_judges_and_valid_options():
    data = random_data(24)
    with pytest.raises(ValueError, match="at least two judges"):
        compare_judges(data, judges=["j1"])
    with pytest.raises(ValueError, match="correction"):
        compare_judges(data, correction="sidak")
    with pytest.raises(ValueError, match="alpha"):
        compare_judges(data, alpha=1.5)


@pytest.mark.slow
def test_permutation_test_is_calibrated_for_exchangeable_judges():
    rng = np.random.default_rng(1)
    rejections = 0
    trials = 300
    for trial in range(trials):
        data = random_data(int(rng.integers(1 << 30)), n=60, n_judges=2, orders=1, p_invalid=0.05)
        v = np.array(data.verdicts)
        v[:, 4, 0] = np.where(rng.random(60) < 0.6, v[:, 0, 0], rng.integers(0, 3, 60))  # the same judge twice
        v[:, 3, 0] = np.where(rng.random(60) < 0.6, v[:, 0, 0], rng.integers(0, 3, 60))
        from dataclasses import replace
        result = compare_judges(replace(data, verdicts=v), n_resamples=200, rng=trial, correction="none")
        rejections += result.table.pvalue[0, 1] <= 0.05
    assert 0.02 <= rejections / trials <= 0.09
