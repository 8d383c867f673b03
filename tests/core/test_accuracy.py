"""Pairwise accuracy and tie-calibrated pairwise accuracy against readable loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metaeval_core.coefficients import pairwise_accuracy, tie_calibrated_accuracy


def loop_accuracy(x, z, eps=None):
    keep = ~(np.isnan(x) | np.isnan(z))
    x, z = x[keep], z[keep]
    agree = total = 0
    for a, b in itertools.combinations(range(x.size), 2):
        dx, dz = x[a] - x[b], z[a] - z[b]
        sx = 0 if (eps is not None and abs(dx) <= eps) else np.sign(dx)
        agree += sx == np.sign(dz)
        total += 1
    return agree / total if total else np.nan


def loop_tie_calibrated(x, z):
    keep = ~(np.isnan(x) | np.isnan(z))
    diffs = [abs(x[a] - x[b]) for a, b in itertools.combinations(np.flatnonzero(keep), 2)]
    best, best_eps = loop_accuracy(x, z), 0.0
    for eps in sorted(set(diffs)):
        acc = loop_accuracy(x, z, eps)
        if acc > best + 1e-15:
            best, best_eps = acc, eps
    return best, best_eps


def test_no_ties_equals_one_plus_tau_over_two():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 12))
    z = x + rng.normal(size=x.shape)
    tau = np.array([stats.kendalltau(a, b).statistic for a, b in zip(x, z)])
    np.testing.assert_allclose(pairwise_accuracy(x, z), (1 + tau) / 2, atol=1e-12)


def test_matches_loops_with_ties_and_nans():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, (60, 9)).astype(float)
    z = rng.integers(0, 3, (60, 9)).astype(float) + 0.3 * x
    x[rng.random(x.shape) < 0.1] = np.nan
    z[rng.random(z.shape) < 0.1] = np.nan
    plain = pairwise_accuracy(x, z)
    calibrated = tie_calibrated_accuracy(x, z)
    for k in range(x.shape[0]):
        assert plain[k] == pytest.approx(loop_accuracy(x[k], z[k]), abs=1e-12)
        acc, eps = loop_tie_calibrated(x[k], z[k])
        assert calibrated.accuracy[k] == pytest.approx(acc, abs=1e-12)
        assert calibrated.epsilon[k] == pytest.approx(eps)
    assert np.all(calibrated.accuracy >= plain - 1e-12)


def test_undefined_without_pairs():
    assert np.isnan(pairwise_accuracy(np.array([1.0]), np.array([2.0])))
    assert np.isnan(tie_calibrated_accuracy(np.array([1.0, np.nan]), np.array([np.nan, 1.0])).accuracy)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=10))
def test_property_range_and_calibration_gain(points):
    x = np.array([p[0] for p in points], dtype=float)
    z = np.array([p[1] for p in points], dtype=float)
    plain = float(pairwise_accuracy(x, z))
    result = tie_calibrated_accuracy(x, z)
    assert 0.0 <= plain <= float(result.accuracy) <= 1.0
    assert float(result.accuracy) == pytest.approx(loop_tie_calibrated(x, z)[0], abs=1e-12)
