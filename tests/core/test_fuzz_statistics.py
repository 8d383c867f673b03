"""Property-based fuzzing of every statistic on random matrices with NaNs and ties.

Whatever the matrix (constant rows, all-NaN inputs, one valid system, heavy ties), each statistic
either returns values in its range, or NaN (explicitly undefined, and counted), or raises a ValueError
whose message names the problem. Never another exception, never a value out of range.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaeval_core.stats.coefficients import POINT_COEFFICIENTS as COEFFICIENTS, COEFFICIENT_RANGES  # SPA: test_spa.py
from metaeval_core.stats.correlation import LEVELS, correlate_matrices
from metaeval_core.stats.pairs import decile_grid, delta_confidence_interval, rsys_delta
from metaeval_core.stats.resampling import confidence_interval
from metaeval_core.stats.significance import compare_metrics
from metaeval_core.stats.stability import ranking_stability

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def messy_matrices(draw, count: int = 3):
    """``count`` matrices of one random shape with few distinct values, NaN cells, NaN rows or columns."""
    n = draw(st.integers(1, 7))
    m = draw(st.integers(1, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        levels = draw(st.integers(1, 4))  # 1 level: a constant matrix
        x = rng.integers(0, levels, (n, m)).astype(float)
        x[rng.random((n, m)) < draw(st.sampled_from([0.0, 0.2, 0.6]))] = np.nan
        if draw(st.booleans()):
            x[rng.integers(0, n)] = np.nan  # a system without scores
        if draw(st.booleans()):
            x[:, rng.integers(0, m)] = np.nan  # an input without scores
        out.append(x)
    return out


def in_range(values, coefficient: str) -> bool:
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    low, high = COEFFICIENT_RANGES[coefficient]
    return bool(np.all((finite >= low - 1e-12) & (finite <= high + 1e-12))) and not np.isinf(values).any()


def allowed_error(error: ValueError) -> bool:
    # A refusal must name the rule it enforces, not leak an internal failure.
    text = str(error)
    return bool(text) and any(word in text for word in ("must", "needs", "defined", "at least", "too slow"))


@FUZZ
@given(mats=messy_matrices(2), level=st.sampled_from(LEVELS), coefficient=st.sampled_from(COEFFICIENTS))
def test_correlations_in_range_or_undefined(mats, level, coefficient):
    x, z = mats
    result = correlate_matrices(x, z, level=level, coefficient=coefficient)
    assert in_range(result.estimate, coefficient)
    assert int(result.n) >= 0 and int(result.n_undefined) >= 0


@FUZZ
@given(mats=messy_matrices(2), level=st.sampled_from(LEVELS), coefficient=st.sampled_from(COEFFICIENTS),
       method=st.sampled_from(["fisher", "boot-systems", "boot-inputs", "boot-both"]))
def test_confidence_intervals_in_range_or_undefined(mats, level, coefficient, method):
    x, z = mats
    try:
        ci = confidence_interval(x, z, level=level, coefficient=coefficient, method=method, n_resamples=30, rng=0)
    except ValueError as error:
        assert allowed_error(error), error
        return
    assert in_range([ci.estimate, ci.low, ci.high], coefficient)
    assert 0 <= ci.n_defined <= 30
    if np.isfinite(ci.low) and np.isfinite(ci.high):
        assert ci.low <= ci.high + 1e-12


@FUZZ
@given(mats=messy_matrices(3), level=st.sampled_from(LEVELS), coefficient=st.sampled_from(COEFFICIENTS),
       method=st.sampled_from(["perm-both", "perm-systems", "perm-inputs", "boot-both", "boot-systems",
                               "boot-inputs", "williams"]),
       alternative=st.sampled_from(["greater", "two-sided"]))
def test_comparisons_give_valid_p_values_or_refuse(mats, level, coefficient, method, alternative):
    x, y, z = mats
    try:
        result = compare_metrics(x, y, z, level=level, coefficient=coefficient, method=method,
                                 alternative=alternative, n_resamples=30, rng=0)
    except ValueError as error:
        assert allowed_error(error), error
        return
    p = result.pvalue
    assert np.isnan(p) or 0.0 < p <= 1.0  # never 0
    assert not np.isinf(result.delta)


@FUZZ
@given(mats=messy_matrices(2), lower=st.floats(0, 3), width=st.floats(0, 4), min_pairs=st.integers(1, 6))
def test_rsys_delta_and_grid_in_range_or_undefined(mats, lower, width, min_pairs):
    x, z = (np.nanmean(np.where(np.isnan(m).all(axis=1, keepdims=True), 0.0, m), axis=1) for m in mats)
    result = rsys_delta(x, z, lower=lower, upper=lower + width)
    assert in_range(result.estimate, "kendall")
    assert 0 <= result.n_pairs <= len(x) * (len(x) - 1) // 2
    grid = decile_grid(x, z, min_pairs=min_pairs)
    assert in_range(grid.tau, "kendall")
    assert np.all(np.asarray(grid.n_pairs) >= 0)


@FUZZ
@given(mats=messy_matrices(2))
def test_delta_interval_and_stability_never_crash(mats):
    x, z = mats
    try:
        ci = delta_confidence_interval(x, z, lower=0.0, upper=np.inf, n_resamples=40, rng=0)
    except ValueError as error:
        assert allowed_error(error), error
    else:
        assert in_range([ci.estimate, ci.low, ci.high], "kendall")
    try:
        curve = ranking_stability(x, sizes=[1, max(1, x.shape[1])], n_resamples=20, rng=0)
    except ValueError as error:
        assert allowed_error(error), error
    else:
        assert in_range(curve.mean, "kendall")
        assert np.all(np.asarray(curve.std)[np.isfinite(curve.std)] >= 0)


@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_all_nan_and_single_system_are_undefined_not_errors(coefficient):
    nan = np.full((4, 5), np.nan)
    one = np.full((1, 5), 2.0)
    for level in LEVELS:
        assert np.isnan(correlate_matrices(nan, nan, level=level, coefficient=coefficient).estimate)
    for level in ("system", "input"):  # one system: no pair of systems (the global level still has 5 cells)
        assert np.isnan(correlate_matrices(one, one, level=level, coefficient=coefficient).estimate)
