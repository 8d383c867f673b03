"""Judge-vs-judge tests are priced before they run: judges^2 / 2 pairs x permutations x items (issue 28)."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from metaeval_core.judges import compare_judges
from metaeval_core.judges.model import PairwiseData, Rater


def many_judges(n: int, judges: int, *, seed: int = 0) -> PairwiseData:
    """Three humans who agree with a hidden truth, ``judges`` judges right 70% of the time in both orders."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n)
    columns = [np.stack([truth, np.full(n, -1)], axis=1) for _ in range(3)]
    for _ in range(judges):
        v = np.where(rng.random(n) < 0.7, truth, 1 - truth)
        columns.append(np.stack([v, v], axis=1))
    raters = tuple(Rater(f"h{h}", "human") for h in range(3)) + tuple(Rater(f"j{j}", "judge") for j in range(judges))
    return PairwiseData(id="judges", items=tuple(f"i{k}" for k in range(n)), pair_sets=("all",),
                        pair_set=np.zeros(n, int), raters=raters, verdicts=np.stack(columns, axis=1))


def test_two_thousand_judges_are_refused_at_once_with_how_many_fit():
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"1,997,001 pairs.*would take about [\d,]+ s.*lighter: at most \d+ judges"):
        compare_judges(many_judges(20, 1_999), n_resamples=1000, rng=0)
    assert time.perf_counter() - started < 15


def test_many_items_are_refused_with_fewer_permutations_that_fit():
    with pytest.raises(ValueError, match=r"lighter: n_resamples=[\d,]+") as info:
        compare_judges(many_judges(400_000, 2), n_resamples=1000, rng=0)
    fits = int(re.search(r"n_resamples=([\d,]+\d)", str(info.value)).group(1).replace(",", ""))
    assert fits >= 100
    result = compare_judges(many_judges(400_000, 2), n_resamples=min(fits, 200), rng=0)
    assert result.table.n_resamples == min(fits, 200)


def test_a_comparison_within_budget_runs():
    result = compare_judges(many_judges(200, 6), n_resamples=200, rng=0)
    assert result.table.delta.shape == (6, 6)


def test_every_resampling_is_priced_before_it_draws():
    """A bootstrap of many items x resamples (a million items took 54 s and 1.7 GB) is refused at once, naming
    the resamples that fit; with those it runs."""
    from metaeval_core.judges import chance_baseline, judge_agreement

    data = many_judges(400_000, 1)
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"bootstrap resamples of 400,000 items .*lighter: n_resamples=") as info:
        judge_agreement(data, n_resamples=10_000, rng=0)
    with pytest.raises(ValueError, match=r"permutations of 400,000 items"):
        chance_baseline(data, n_resamples=10_000, rng=0)
    assert time.perf_counter() - started < 10
    fits = int(re.search(r"n_resamples=([\d,]+\d)", str(info.value)).group(1).replace(",", ""))
    assert 40 <= fits < 10_000


def test_a_breakdown_by_many_pair_sets_is_refused_before_it_runs():
    from dataclasses import replace

    from metaeval_core.judges import agreement_by_subset
    from metaeval_core.judges.agreement import MAX_SUBSETS

    data = many_judges(2_000, 2)
    many = replace(data, pair_sets=tuple(f"set{k}" for k in range(1_000)), pair_set=np.arange(2_000) % 1_000)
    started = time.perf_counter()
    with pytest.raises(ValueError, match=f"1,000 values; a breakdown shows at most {MAX_SUBSETS} subsets"):
        agreement_by_subset(many, n_resamples=100, rng=0)
    assert time.perf_counter() - started < 2
    few = replace(data, pair_sets=("a", "b"), pair_set=np.arange(2_000) % 2)
    assert set(agreement_by_subset(few, n_resamples=100, rng=0).subsets) == {"a", "b"}
