"""Coefficients against scipy, slice by slice, on data with ties and NaNs; plus properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from metaeval_core.stats.coefficients import (
    COEFFICIENTS,
    CORRELATIONS,
    coefficient_function,
    kendall,
    kendall_counts_from_signs,
    pair_signs,
    pearson,
    spearman,
)

SCIPY = {
    "pearson": lambda a, b: stats.pearsonr(a, b).statistic,
    "spearman": lambda a, b: stats.spearmanr(a, b).statistic,
    "kendall": lambda a, b: stats.kendalltau(a, b).statistic,
}


def scipy_reference(coefficient: str, x: np.ndarray, z: np.ndarray) -> float:
    """scipy on the pairwise-complete points; NaN when scipy would warn (constant) or n < 2."""
    keep = ~(np.isnan(x) | np.isnan(z))
    a, b = x[keep], z[keep]
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return np.nan
    return float(SCIPY[coefficient](a, b))


def messy_batch(rng: np.random.Generator, batch: int, n: int, nan_rate: float = 0.15) -> tuple[np.ndarray, np.ndarray]:
    # Few distinct values give plenty of ties; NaNs are sprinkled independently.
    x = rng.integers(0, 5, (batch, n)).astype(float)
    z = rng.integers(0, 4, (batch, n)).astype(float) + 0.5 * x
    x[rng.random(x.shape) < nan_rate] = np.nan
    z[rng.random(z.shape) < nan_rate] = np.nan
    return x, z


@pytest.mark.parametrize("coefficient", CORRELATIONS)
@pytest.mark.parametrize("n", [2, 3, 7, 16, 40])
def test_matches_scipy_slice_by_slice_with_ties_and_nans(coefficient, n):
    rng = np.random.default_rng(n)
    x, z = messy_batch(rng, 200, n)
    ours = coefficient_function(coefficient)(x, z)
    expected = np.array([scipy_reference(coefficient, x[k], z[k]) for k in range(x.shape[0])])
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("coefficient", CORRELATIONS)
def test_continuous_data_multi_batch_axes(coefficient):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4, 25))
    z = x + rng.normal(size=(3, 4, 25))
    ours = coefficient_function(coefficient)(x, z)
    assert ours.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert ours[i, j] == pytest.approx(scipy_reference(coefficient, x[i, j], z[i, j]), abs=1e-12)


@pytest.mark.parametrize("coefficient", CORRELATIONS)
def test_undefined_cases_are_nan(coefficient):
    f = coefficient_function(coefficient)
    assert np.isnan(f(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])))  # constant x
    assert np.isnan(f(np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.1, 0.1])))  # constant z (inexact mean)
    assert np.isnan(f(np.array([1.0, np.nan, 3.0]), np.array([1.0, 2.0, np.nan])))  # one valid point
    assert np.isnan(f(np.array([np.nan, np.nan]), np.array([1.0, 2.0])))
    assert np.isnan(f(np.empty(0), np.empty(0)))


def test_kendall_large_n_uses_scipy_path():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 50, 3500).astype(float)
    z = x + rng.integers(0, 30, 3500)
    x[::17] = np.nan
    assert kendall(x, z) == pytest.approx(scipy_reference("kendall", x, z), abs=1e-12)


def test_kendall_counts_partition_the_pairs():
    x = np.array([1.0, 2.0, 2.0, 3.0, 3.0])
    z = np.array([1.0, 1.0, 2.0, 2.0, 0.0])
    first, second = np.triu_indices(5, 1)
    counts = kendall_counts_from_signs(pair_signs(x, first, second), pair_signs(z, first, second))
    p = q = t = u = both = 0
    for a, b in zip(first, second):
        dx, dz = np.sign(x[a] - x[b]), np.sign(z[a] - z[b])
        if dx == 0 and dz == 0:
            both += 1
        elif dx == 0:
            t += 1
        elif dz == 0:
            u += 1
        elif dx == dz:
            p += 1
        else:
            q += 1
    assert (counts.concordant, counts.discordant, counts.ties_x, counts.ties_z) == (p, q, t, u)
    assert counts.tau == pytest.approx(stats.kendalltau(x, z).statistic)


def test_unknown_coefficient_message_names_parameter():
    with pytest.raises(ValueError, match="coefficient must be one of pearson, spearman, kendall"):
        coefficient_function("tau")


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False)
maybe_nan = st.one_of(st.integers(-3, 3).map(float), finite, st.just(np.nan))


@settings(max_examples=200, deadline=None)
@given(
    data=hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(0, 12)), elements=maybe_nan),
    noise=st.integers(0, 2**31),
)
def test_property_range_symmetry_and_scipy(data, noise):
    rng = np.random.default_rng(noise)
    z = np.where(rng.random(data.shape) < 0.2, np.nan, rng.integers(0, 3, data.shape).astype(float))
    for coefficient in CORRELATIONS:
        f = coefficient_function(coefficient)
        r = f(data, z)
        assert r.shape == data.shape[:1]
        defined = ~np.isnan(r)
        assert np.all(np.abs(r[defined]) <= 1.0)
        np.testing.assert_allclose(f(z, data), r, atol=1e-9, equal_nan=True)  # symmetric
        if coefficient != "pearson":  # rank-based: invariant to a strictly increasing transform
            np.testing.assert_allclose(f(np.arctan(data / 1e3), z), r, atol=1e-9, equal_nan=True)
        for k in range(data.shape[0]):
            ref = scipy_reference(coefficient, data[k], z[k])
            if np.isnan(ref) or np.isnan(r[k]):
                # Pearson may be undefined for scipy but not for us only through precision; both must agree on NaN.
                assert np.isnan(ref) == np.isnan(r[k]) or coefficient == "pearson"
            else:
                assert r[k] == pytest.approx(ref, abs=1e-7)


def test_pearson_spearman_direct_names():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert pearson(x, 2 * x) == pytest.approx(1.0)
    assert spearman(x, x**3) == pytest.approx(1.0)
    assert kendall(x, -x) == pytest.approx(-1.0)


# -- bounded kernels (issue 23) -------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [60, 150, 151, 400])
def test_kendall_pair_kernel_and_scipy_route_agree_with_scipy(n):
    """Both routes (pair kernel up to 150 points per slice, scipy's O(n log n) beyond), with missing points."""
    from metaeval_core.stats.coefficients import kendall

    rng = np.random.default_rng(n)
    x = np.round(rng.random((7, n)), 1)
    z = np.round(rng.random((7, n)), 1)
    x[rng.random(x.shape) < 0.1] = np.nan
    ours = kendall(x, z)
    for k in range(7):
        keep = ~np.isnan(x[k])
        assert ours[k] == pytest.approx(stats.kendalltau(x[k, keep], z[k, keep]).statistic, abs=1e-12)


def test_tied_pairs_counts_runs_of_equal_rows():
    from metaeval_core.stats.coefficients import _tied_pairs

    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, 300).astype(float)
    z = rng.integers(0, 3, 300).astype(float)
    x[:5] = [0.0, -0.0, 0.0, -0.0, 1.0]  # -0.0 == 0.0: tied, as scipy's tau-b counts them
    z[:5] = 0.0
    loop = sum(x[a] == x[b] and z[a] == z[b] for a in range(300) for b in range(a))
    assert _tied_pairs(x, z) == loop
    assert _tied_pairs(x) == sum(x[a] == x[b] for a in range(300) for b in range(a))
    assert _tied_pairs(np.array([1.0])) == 0


KERNELS_AT_THE_LIMIT = """
import numpy as np
from metaeval_core.stats.coefficients import kendall, pairwise_accuracy
rng = np.random.default_rng(0)
x = rng.random((1000, 2000))
z = np.round(rng.random(2000), 2)
result = {"tau": float(np.nanmean(kendall(x, z))), "accuracy": float(np.nanmean(pairwise_accuracy(x[:200], z)))}
"""


@pytest.mark.slow
def test_kernels_on_thousands_of_points_stay_bounded():
    """1,000 slices of 2,000 points: the pair mask for all slices at once was 2 GB (x3 with its temporaries)."""
    from tests.core.capped import run_capped

    result = run_capped(KERNELS_AT_THE_LIMIT, cap=int(1.5 * 2**30), timeout=300)
    assert abs(result["tau"]) < 0.01 and abs(result["accuracy"] - 0.5) < 0.01
    assert result["peak_mb"] < 1000


def test_tie_calibration_refuses_slices_beyond_its_pair_limit():
    from metaeval_core.stats.coefficients import TIE_CALIBRATED_MAX_POINTS, tie_calibrated_accuracy

    x = np.arange(TIE_CALIBRATED_MAX_POINTS + 1, dtype=float)
    with pytest.raises(ValueError, match="compares all .* pairs .*; use the input level"):
        tie_calibrated_accuracy(x, x)
