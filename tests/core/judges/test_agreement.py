"""Agreement with people: accuracy, Cohen's kappa, Krippendorff's alpha, bootstrap, chance, human ceiling."""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from metaeval_core.judges import (
    MISSING, TIE, chance_baseline, human_ceiling, judge_agreement, majority_verdict, resolve_reference,
)
from tests.core.judges.helpers import accuracy_oracle, block_draws, cell_counts, majority_oracle, random_data

ORDERS = ("original", "swapped", "average", "both")
TIES = ("three-class", "drop-reference-ties", "drop-any-tie")
INVALIDS = ("wrong", "drop", "tie")


def _pairs(data, judge):
    v = data.verdicts[:, data.rater_index(judge), :]
    return [tuple(int(x) for x in row) for row in v]


@pytest.mark.parametrize("order,ties,invalid", list(itertools.product(ORDERS, TIES, INVALIDS)))
def test_accuracy_matches_a_slow_loop(order, ties, invalid):
    data = random_data(4, n=60, p_missing=0.05)
    table = judge_agreement(data, order=order, ties=ties, invalid=invalid, n_resamples=40, rng=0)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    for row in table.rows:
        expected = accuracy_oracle(_pairs(data, row.judge), ref, order, ties, invalid)
        assert row.estimate == pytest.approx(expected, nan_ok=True, abs=1e-12)
        assert (row.order, row.ties, row.invalid) == (order, ties, invalid)
        assert row.reference.startswith("majority of 3 humans")


def _kept(data, judge, ref, order_index, ties, invalid):
    """The (judge, reference) verdict pairs that count, one order, for the sklearn/krippendorff oracles."""
    xs, ys = [], []
    for (v0, v1), r in zip(_pairs(data, judge), ref):
        v = (v0, v1)[order_index]
        c = cell_counts(v, r, ties, invalid)
        if c is None or c[0] == 0:
            continue
        xs.append(TIE if (invalid == "tie" and v == 3) else v)
        ys.append(int(r))
    return xs, ys


@pytest.mark.parametrize("ties,invalid", list(itertools.product(TIES, INVALIDS)))
def test_kappa_and_alpha_match_sklearn_and_krippendorff(ties, invalid):
    data = random_data(5, n=80)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    kappa = judge_agreement(data, statistic="kappa", ties=ties, invalid=invalid, n_resamples=40, rng=0)
    alpha = judge_agreement(data, statistic="alpha", ties=ties, invalid=invalid, n_resamples=40, rng=0)
    for k_row, a_row in zip(kappa.rows, alpha.rows):
        xs, ys = _kept(data, k_row.judge, ref, 0, ties, invalid)
        assert k_row.estimate == pytest.approx(cohen_kappa_score(xs, ys), abs=1e-12)
        expected = krippendorff.alpha(reliability_data=np.array([xs, ys], dtype=float),
                                      level_of_measurement="nominal")
        assert a_row.estimate == pytest.approx(expected, abs=1e-12)
        assert k_row.n_items == len(xs)


def test_kappa_on_the_average_of_orders_is_the_mean_of_the_per_order_kappas():
    data = random_data(6, n=80)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    table = judge_agreement(data, statistic="kappa", order="average", n_resamples=40, rng=0)
    for row in table.rows:
        pairs = _pairs(data, row.judge)
        both = [k for k, (v0, v1) in enumerate(pairs) if v0 != MISSING and v1 != MISSING]
        per_order = [cohen_kappa_score([pairs[k][o] for k in both], [int(ref[k]) for k in both]) for o in (0, 1)]
        assert row.estimate == pytest.approx(np.mean(per_order), abs=1e-12)


def test_bootstrap_matches_a_loop_over_the_same_resamples_and_ignores_batch():
    data = random_data(7, n=25)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    k = 60
    full = judge_agreement(data, order="average", n_resamples=k, rng=11, return_distribution=True)
    indices = block_draws("items", 11, k, data.n_items)
    for j, judge in enumerate(full.judges):
        pairs = _pairs(data, judge)
        loop = [accuracy_oracle([pairs[i] for i in idx], [ref[i] for i in idx], "average", "three-class", "wrong")
                for idx in indices]
        np.testing.assert_allclose(full.distribution[:, j], loop, atol=1e-12)
        low, high = np.percentile(loop, [2.5, 97.5])
        assert (full.rows[j].low, full.rows[j].high) == pytest.approx((low, high))
    for batch in (1, 7, 1000):
        other = judge_agreement(data, order="average", n_resamples=k, rng=11, batch=batch, return_distribution=True)
        np.testing.assert_array_equal(other.distribution, full.distribution)
    kappa = [judge_agreement(data, statistic="kappa", n_resamples=k, rng=3, batch=b, return_distribution=True)
             for b in (1, None)]
    np.testing.assert_array_equal(kappa[0].distribution, kappa[1].distribution)


def test_invalid_verdicts_are_reported_under_every_convention():
    data = random_data(8, n=50, p_invalid=0.2)
    for invalid in INVALIDS:
        row = judge_agreement(data, invalid=invalid, n_resamples=40, rng=0).rows[0]
        assert row.n_invalid == int((data.verdicts[:, 3, 0] == 3).sum()) > 0
    dropped = judge_agreement(data, invalid="drop", n_resamples=40, rng=0).rows[0]
    assert dropped.n_items == data.n_items - dropped.n_invalid


def test_reference_choices_and_errors():
    data = random_data(9, gold=True)
    assert resolve_reference(data, "auto")[1] == "gold"
    assert resolve_reference(data, "majority")[1].startswith("majority of 3 humans")
    assert resolve_reference(data, "h1")[1] == "h1"
    with pytest.raises(Exception, match="no rater"):
        judge_agreement(data, reference="nobody", n_resamples=40)
    with pytest.raises(ValueError, match="order='both'"):
        judge_agreement(data, statistic="kappa", order="both", n_resamples=40)
    with pytest.raises(ValueError, match="ties must be one of"):
        judge_agreement(data, ties="half", n_resamples=40)
    with pytest.raises(ValueError, match="n_resamples must be >= 40"):
        judge_agreement(data, n_resamples=10)
    with pytest.raises(TypeError, match="PairwiseData"):
        judge_agreement(np.zeros(3))
    no_humans = random_data(9, n_humans=0, gold=True)
    with pytest.raises(Exception, match="no human annotators"):
        judge_agreement(no_humans, reference="majority", n_resamples=40)


def test_one_order_judges_are_undefined_in_the_other_order():
    data = random_data(10, orders=1)
    for order in ("swapped", "average", "both"):
        row = judge_agreement(data, order=order, n_resamples=40, rng=0).rows[0]
        assert np.isnan(row.estimate) and np.isnan(row.low) and row.n_items == 0


def test_human_ceiling_is_each_annotator_against_the_others():
    data = random_data(11, n=70, n_humans=4)
    for rule in ("drop", "tie"):
        table = human_ceiling(data, no_majority=rule, n_resamples=40, rng=0)
        assert table.judges == data.humans
        for h, row in enumerate(table.rows):
            others = [o for o in range(4) if o != h]
            ref = [majority_oracle(data.verdicts[i, others, 0], rule) for i in range(data.n_items)]
            pairs = [(int(data.verdicts[i, h, 0]), MISSING) for i in range(data.n_items)]
            assert row.estimate == pytest.approx(accuracy_oracle(pairs, ref, "original", "three-class", "wrong"))
            assert "other than" in row.reference
    with pytest.raises(Exception, match="at least two"):
        human_ceiling(random_data(1, n_humans=1), n_resamples=40)
    pair = random_data(19, n=60, n_humans=2)
    two = human_ceiling(pair, n_resamples=40, rng=0)  # with two annotators: each against the other
    alone = judge_agreement(pair, judges=["h1"], reference="h2", n_resamples=40, rng=0).rows[0]
    assert two.rows[0].estimate == pytest.approx(alone.estimate)


def test_chance_baseline_keeps_marginals():
    data = random_data(12, n=60)
    rows = chance_baseline(data, n_resamples=200, rng=0)
    observed = judge_agreement(data, n_resamples=40, rng=0).estimates
    for row, value in zip(rows, observed):
        assert row.observed == pytest.approx(value) and row.low <= row.mean <= row.high
    # A judge that always says the same thing has its observed value as its only chance value.
    constant = random_data(12, n=60, n_judges=1, p_invalid=0.0)
    v = np.array(constant.verdicts)
    v[:, 3, :] = 0
    from dataclasses import replace
    constant = replace(constant, verdicts=v)
    row = chance_baseline(constant, n_resamples=100, rng=0)[0]
    assert row.low == row.high == row.mean == pytest.approx(row.observed)
    # batch does not change the permutations
    a = chance_baseline(data, n_resamples=50, rng=4, batch=3)
    b = chance_baseline(data, n_resamples=50, rng=4)
    assert [r.mean for r in a] == [r.mean for r in b]


@pytest.mark.slow
def test_chance_pvalue_is_calibrated_for_a_judge_that_ignores_the_items():
    rng = np.random.default_rng(0)
    pvalues = []
    for trial in range(200):
        data = random_data(int(rng.integers(1 << 30)), n=40, n_judges=1, p_invalid=0.0)
        v = np.array(data.verdicts)
        v[:, 3, 0] = rng.choice([0, 1, 2], size=data.n_items)  # unrelated to the items
        from dataclasses import replace
        pvalues.append(chance_baseline(replace(data, verdicts=v), n_resamples=200, rng=trial)[0].pvalue)
    pvalues = np.array(pvalues)
    assert 0.02 <= np.mean(pvalues <= 0.05) <= 0.10  # nominal 0.05 (discrete, conservative)


def test_rater_alpha_matches_the_krippendorff_package_with_missing_values():
    from metaeval_core.judges import rater_alpha

    data = random_data(13, n=90, n_humans=4, p_missing=0.2, p_invalid=0.1)
    v = data.verdicts[:, :4, 0].astype(float)
    for invalid in ("drop", "category"):
        result = rater_alpha(data, invalid=invalid, n_resamples=40, rng=0)
        values = np.where(v == MISSING, np.nan, v)
        if invalid == "drop":
            values = np.where(values == 3, np.nan, values)
        expected = krippendorff.alpha(reliability_data=values.T, level_of_measurement="nominal")
        assert result.estimate == pytest.approx(expected, abs=1e-12)
    judges_too = rater_alpha(data, raters=["h1", "j1", "j3"], n_resamples=40, rng=0, batch=3)
    assert judges_too.raters == ("h1", "j1", "j3") and judges_too.low <= judges_too.estimate <= judges_too.high


def test_agreement_by_subset_is_per_subset_agreement_with_corrected_chance_tests():
    from metaeval_core.judges import agreement_by_subset
    from metaeval_core.stats.significance import correct_pvalues

    data = random_data(14, n=90, pair_sets=3)
    table = agreement_by_subset(data, n_resamples=100, rng=7)
    assert table.subsets == ("set0",) * 3 + ("set1",) * 3 + ("set2",) * 3
    for k, name in enumerate(data.pair_sets):
        alone = judge_agreement(data.select_pair_set(name), n_resamples=100, rng=7)
        assert [r.estimate for r in table.rows[3 * k:3 * k + 3]] == list(alone.estimates)
        assert [r.low for r in table.rows[3 * k:3 * k + 3]] == [r.low for r in alone.rows]
    np.testing.assert_allclose(table.chance_pvalue_corrected, correct_pvalues(table.chance_pvalue, method="holm"))
    assert table.to_records()[0]["subset"] == "set0"


@pytest.mark.slow
def test_bootstrap_interval_covers_the_true_accuracy():
    from dataclasses import replace

    rng = np.random.default_rng(5)
    base = random_data(0, n=200, n_humans=1, n_judges=1, orders=1, p_invalid=0.0, gold=False)
    covered, trials = 0, 300
    for trial in range(trials):
        truth = rng.integers(0, 2, base.n_items)
        judge = np.where(rng.random(base.n_items) < 0.7, truth, 1 - truth)  # right with probability 0.7
        v = np.full(base.verdicts.shape, MISSING)
        v[:, 0, 0], v[:, 1, 0] = truth, judge
        row = judge_agreement(replace(base, verdicts=v), reference="h1", n_resamples=400, rng=trial).rows[0]
        covered += row.low <= 0.7 <= row.high
    assert 0.91 <= covered / trials <= 0.98  # nominal 0.95


def test_positional_bias_matches_a_loop_under_each_invalid_convention():
    from metaeval_core.judges import positional_bias

    data = random_data(15, n=80, p_invalid=0.15, p_missing=0.05)
    for invalid in ("wrong", "drop", "tie", "as-verdict"):
        rows = positional_bias(data, invalid=invalid, n_resamples=40, rng=0)
        for row in rows:
            counted = same = named = first = 0
            for v0, v1 in _pairs(data, row.judge):
                if MISSING in (v0, v1):
                    continue
                for v, shown_first in ((v0, 0), (v1, 1)):
                    if v in (0, 1):
                        named += 1
                        first += v == shown_first
                bad = 3 in (v0, v1)
                if invalid == "drop" and bad:
                    continue
                counted += 1
                r0, r1 = (TIE if v0 == 3 else v0, TIE if v1 == 3 else v1) if invalid == "tie" else (v0, v1)
                same += r0 == r1 and (invalid in ("tie", "as-verdict") or not bad)
            assert row.consistency.estimate == pytest.approx(same / counted)
            assert row.first_position.estimate == pytest.approx(first / named)
            assert row.invalid == invalid


@pytest.mark.parametrize("order", ["original", "swapped", "average"])
def test_length_preference_matches_a_loop(order):
    from metaeval_core.judges import length_preference

    data = random_data(16, n=120)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    rows = length_preference(data, order=order, n_resamples=60, rng=2)
    slots = {"original": (0,), "swapped": (1,), "average": (0, 1)}[order]
    for row in rows:
        pairs = _pairs(data, row.judge)
        jn = jl = rn = rl = 0
        for k, (a, b) in enumerate(zip(data.output_a, data.output_b)):
            la, lb = len(a.split()), len(b.split())
            if la == lb or ref[k] not in (0, 1):
                continue
            longer = 0 if la > lb else 1
            verdicts = [pairs[k][s] for s in slots if pairs[k][s] in (0, 1)]
            if not verdicts:
                continue
            jn += len(verdicts)
            jl += sum(v == longer for v in verdicts)
            rn += 1
            rl += ref[k] == longer
        assert row.judge_longer.estimate == pytest.approx(jl / jn)
        assert row.reference_longer.estimate == pytest.approx(rl / rn)
        assert row.difference.estimate == pytest.approx(jl / jn - rl / rn)
        assert row.difference.low <= row.difference.estimate <= row.difference.high
    again = length_preference(data, order=order, n_resamples=60, rng=2, batch=5)
    assert [r.difference.low for r in again] == [r.difference.low for r in rows]


def test_large_uploads_count_one_category_at_a_time_with_the_same_numbers(monkeypatch):
    from metaeval_core.judges import _kernel

    data = random_data(17, n=70)
    dense = judge_agreement(data, statistic="kappa", order="average", n_resamples=60, rng=1, return_distribution=True)
    monkeypatch.setattr(_kernel, "_DENSE_ONE_HOT", 0)
    lean = judge_agreement(data, statistic="kappa", order="average", n_resamples=60, rng=1, return_distribution=True)
    np.testing.assert_array_equal(lean.distribution, dense.distribution)


def test_chance_permutations_follow_the_documented_blocks():
    data = random_data(18, n=30, n_judges=2)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    rows = chance_baseline(data, order="average", n_resamples=150, rng=6, batch=10)
    perms = block_draws("permutations", 6, 150, data.n_items)
    for row in rows:
        pairs = _pairs(data, row.judge)
        loop = [accuracy_oracle([pairs[i] for i in perm], ref, "average", "three-class", "wrong") for perm in perms]
        assert row.mean == pytest.approx(np.mean(loop))
        assert (row.low, row.high) == pytest.approx(tuple(np.percentile(loop, [2.5, 97.5])))
