"""The judge-vs-judge permutation nulls computed for many pairs in one product equal the product per pair, bit for
bit (the columns are exact in float64), for every statistic, order, convention and grouping of the pairs."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.judges import _kernel as kern
from metaeval_core.judges import compare as cmp
from metaeval_core.judges.agreement import _setup
from metaeval_core.judges.model import MISSING
from tests.core.judges.helpers import random_data


def _per_pair(data, *, statistic, order, ties, invalid, n_resamples, seed, batch=None):
    """The nulls and observed differences one judge pair at a time (the product per pair: the earlier code)."""
    s = _setup(data, None, statistic, "auto", order, ties, invalid, "tie", None, n_resamples, batch)
    stat = lambda sums: kern.statistic_from_sums(statistic, sums)  # noqa: E731
    columns = kern.columns_for(statistic, s.judge, s.refs, order, s.conv)
    slots = list(kern.order_slots(order))
    present = (s.judge[:, :, slots] != MISSING).all(axis=2) & (s.refs != MISSING)
    width = kern.judge_columns(columns, 0).shape[-1]
    swaps = cmp._Swaps(seed, n_resamples, data.n_items, data.n_items + width, batch)
    out = {}
    J = len(s.names)
    for i in range(J):
        for j in range(i + 1, J):
            common = (present[:, i] & present[:, j]).astype(np.float64)[:, None]
            ci, cj = kern.judge_columns(columns, i) * common, kern.judge_columns(columns, j) * common
            si, sj, diff = ci.sum(axis=0), cj.sum(axis=0), cj - ci
            null = np.empty(n_resamples)
            for sl, bits in swaps.chunks():
                moved = bits @ diff
                null[sl] = stat(si + moved) - stat(sj - moved)
            out[i, j] = (null, float(stat(si) - stat(sj)), int(common.sum()))
    return s.names, out


CASES = [
    ("accuracy", "original", "three-class", "wrong"),
    ("accuracy", "average", "drop-reference-ties", "drop"),
    ("accuracy", "both", "drop-any-tie", "tie"),
    ("kappa", "original", "three-class", "wrong"),
    ("kappa", "average", "three-class", "as-verdict"),
    ("alpha", "swapped", "drop-reference-ties", "wrong"),
]


@pytest.mark.parametrize("statistic, order, ties, invalid", CASES)
@pytest.mark.parametrize("group_cells", [1, 300, cmp._GROUP_CELLS])
def test_stacked_nulls_equal_the_product_per_pair(monkeypatch, statistic, order, ties, invalid, group_cells):
    data = random_data(31, n=70, n_judges=5, p_missing=0.1)
    monkeypatch.setattr(cmp, "_GROUP_CELLS", group_cells)  # one pair per product, a few, all at once
    names, expected = _per_pair(data, statistic=statistic, order=order, ties=ties, invalid=invalid,
                                n_resamples=150, seed=4)
    captured = []
    original = cmp._pair_nulls

    def spy(columns, present, chunk, swaps, stat, n_resamples):
        null, observed, common = original(columns, present, chunk, swaps, stat, n_resamples)
        captured.extend((pair, null[:, g], observed[g], int(common[g])) for g, pair in enumerate(chunk))
        return null, observed, common

    monkeypatch.setattr(cmp, "_pair_nulls", spy)
    result = cmp.compare_judges(data, statistic=statistic, order=order, ties=ties, invalid=invalid,
                                n_resamples=150, rng=4, correction="none")
    assert list(result.judges) == names
    assert len(captured) == len(expected) == 10
    for pair, null, observed, common in captured:
        want_null, want_observed, want_common = expected[pair]
        np.testing.assert_array_equal(null, want_null)
        assert observed == want_observed or (np.isnan(observed) and np.isnan(want_observed))
        assert common == want_common
        i, j = pair
        assert result.table.delta[i, j] == observed or np.isnan(observed)
        assert result.n_common[i, j] == common


def test_stacked_nulls_do_not_depend_on_batch():
    data = random_data(32, n=90, n_judges=4)
    a = cmp.compare_judges(data, statistic="kappa", order="average", n_resamples=130, rng=9, batch=None)
    b = cmp.compare_judges(data, statistic="kappa", order="average", n_resamples=130, rng=9, batch=7)
    np.testing.assert_array_equal(a.table.pvalue, b.table.pvalue)
    np.testing.assert_array_equal(a.table.delta, b.table.delta)
