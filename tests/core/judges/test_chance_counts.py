"""The chance levels' permuted sums from counts of (verdicts, reference) combinations equal the sums of the permuted
items' columns, bit for bit, for every statistic, order and convention; and the chance baselines are unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.judges import _kernel as kern
from metaeval_core.judges import agreement as ag
from tests.core.judges.helpers import random_data

CONVENTIONS = [
    ("accuracy", "original", "three-class", "wrong"),
    ("accuracy", "swapped", "drop-any-tie", "drop"),
    ("accuracy", "average", "drop-reference-ties", "tie"),
    ("accuracy", "both", "three-class", "as-verdict"),
    ("kappa", "original", "drop-reference-ties", "wrong"),
    ("kappa", "average", "three-class", "tie"),
    ("alpha", "swapped", "three-class", "drop"),
    ("alpha", "average", "drop-any-tie", "as-verdict"),
]


def _direct(statistic, judge, refs, order, conv, perms):
    """The permuted items' columns, summed (the earlier computation)."""
    return kern.columns_for(statistic, judge[perms], refs, order, conv).sum(axis=1)


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("statistic, order, ties, invalid", CONVENTIONS)
def test_counted_sums_equal_the_permuted_columns(statistic, order, ties, invalid, shared):
    rng = np.random.default_rng(3)
    n, J = 57, 4
    # every code, missing verdicts and references included; a reference per judge (as the ceiling's), or one for
    # all (the chance levels': the reference is permuted by the inverse permutation instead)
    judge = rng.integers(-1, 4, size=(n, J, 2)).astype(np.int8)
    refs = rng.integers(-1, 3, size=(n, J)).astype(np.int8)
    if shared:
        refs = np.repeat(refs[:, :1], J, axis=1)
    conv = kern.VerdictCounting(ties=ties, invalid=invalid)
    permuted = ag._PermutedSums(statistic, judge, refs, order, conv)
    assert permuted.fast and permuted.shared == shared
    perms = np.stack([rng.permutation(n) for _ in range(23)])
    got = permuted(perms)
    want = _direct(statistic, judge, refs, order, conv, perms)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(kern.statistic_from_sums(statistic, got),
                                  kern.statistic_from_sums(statistic, want))


def test_unexpected_codes_take_the_direct_path():
    judge = np.full((5, 1, 2), 7, dtype=np.int8)
    refs = np.zeros((5, 1), dtype=np.int8)
    conv = kern.VerdictCounting()
    permuted = ag._PermutedSums("accuracy", judge, refs, "original", conv)
    assert not permuted.fast
    perms = np.stack([np.arange(5)[::-1], np.arange(5)])
    np.testing.assert_array_equal(permuted(perms), _direct("accuracy", judge, refs, "original", conv, perms))


@pytest.mark.parametrize("statistic, order, ties, invalid", CONVENTIONS[::3])
def test_chance_baselines_equal_the_direct_computation(monkeypatch, statistic, order, ties, invalid):
    data = random_data(41, n=80, n_judges=4, p_missing=0.1, gold=True)
    options = dict(statistic=statistic, order=order, ties=ties, invalid=invalid, n_resamples=140, rng=6)
    fast = ag.chance_baseline(data, **options)
    monkeypatch.setattr(ag._PermutedSums, "_CODES", 0)  # no code fits: every block by the direct path
    slow = ag.chance_baseline(data, **options)
    for a, b in zip(fast, slow):
        for name in ("observed", "mean", "low", "high", "pvalue", "n_defined"):
            x, y = getattr(a, name), getattr(b, name)
            assert x == y or (np.isnan(x) and np.isnan(y)), (a.judge, name)
