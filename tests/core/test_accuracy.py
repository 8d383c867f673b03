"""Pairwise accuracy and tie-calibrated pairwise accuracy against readable loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metaeval_core.stats.coefficients import pairwise_accuracy, tie_calibrated_accuracy


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


def test_large_n_path_equals_pair_kernel():
    import metaeval_core.stats.coefficients as coefficients

    rng = np.random.default_rng(5)
    x = rng.integers(0, 20, (3, 700)).astype(float)
    z = rng.integers(0, 5, (3, 700)).astype(float) + 0.1 * x
    x[0, ::7] = np.nan
    z[2] = 1.0  # constant human: only pairs tied in both agree
    fast = pairwise_accuracy(x, z)
    assert x.shape[-1] > coefficients._ACCURACY_PAIRWISE_MAX_N
    kernel = tie_calibrated_accuracy(x, z, calibrate=False).accuracy
    np.testing.assert_allclose(fast, kernel, atol=1e-12)


def _exact_system_accuracy(dataset, metric: str, human: str) -> float:
    """acc_eq over system pairs with human means in exact rational arithmetic (a slow oracle)."""
    from fractions import Fraction

    x = [float(np.nanmean(row)) for row in dataset.matrix(metric)]
    z = [sum((Fraction(v).limit_denominator(60) for v in row if np.isfinite(v)), Fraction(0))
         / int(np.isfinite(row).sum()) for row in dataset.matrix(human)]
    agree = total = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx, dz = x[i] - x[j], z[i] - z[j]
            total += 1
            agree += (dx == 0 and dz == 0) or (dx * float(dz) > 0)
    return agree / total


def test_accuracies_are_coefficients_everywhere(demo):
    """Bootstrap intervals and tests run on the accuracies; Fisher/Williams refuse them clearly."""
    from metaeval_core.stats.coefficients import COEFFICIENTS, CORRELATIONS
    from metaeval_core.stats.correlation import correlate
    from metaeval_core.stats.resampling import dataset_confidence_interval
    from metaeval_core.stats.significance import compare_all_pairs, compare_metrics

    assert {"pairwise-accuracy", "tie-calibrated-accuracy"} <= set(COEFFICIENTS) - set(CORRELATIONS)
    small = demo.subset(inputs=list(demo.inputs[:30]) + list(demo.inputs[100:140]))  # 480 judged cells
    for coefficient in ("pairwise-accuracy", "tie-calibrated-accuracy"):
        point = correlate(small, "metric.good", "human.quality", coefficient=coefficient)
        tau = correlate(small, "metric.good", "human.quality", coefficient="kendall")
        if coefficient == "pairwise-accuracy":
            # Human system means that are equal fractions are ties (docs/methods.md sec. 15): a slow exact oracle.
            assert point.estimate == pytest.approx(_exact_system_accuracy(small, "metric.good", "human.quality"),
                                                   abs=1e-12)
            assert tau.defined
        for level in ("system", "input"):
            ci = dataset_confidence_interval(small, "metric.good", "human.quality", level=level, coefficient=coefficient,
                                             method="boot-both", n_resamples=50, rng=0, pool="all")
            assert 0 <= ci.low <= ci.high <= 1 and ci.n_defined > 0
        table = compare_all_pairs(small, ["metric.strong", "metric.noise"], "human.quality", level="system",
                                  coefficient=coefficient,
                                  method="perm-both", n_resamples=50, rng=0)
        assert np.all((table.pvalue[~np.isnan(table.pvalue)] > 0) & (table.pvalue[~np.isnan(table.pvalue)] <= 1))
        with pytest.raises(ValueError, match="needs a correlation coefficient"):
            dataset_confidence_interval(small, "metric.good", "human.quality", level="system", coefficient=coefficient,
                                        method="fisher")
        x, y, z = (small.matrix(m) for m in ("metric.strong", "metric.noise", "human.quality"))
        with pytest.raises(ValueError, match="needs a correlation coefficient"):
            compare_metrics(x, y, z, level="system", coefficient=coefficient, method="williams")
    with pytest.raises(ValueError, match="too slow to resample"):
        dataset_confidence_interval(small, "metric.good", "human.quality", level="global",
                                    coefficient="tie-calibrated-accuracy", method="boot-inputs", n_resamples=10)
