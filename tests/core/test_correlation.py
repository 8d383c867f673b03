"""Correlation levels against readable loops over scipy, on data with ties and NaNs."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.stats.coefficients import POINT_COEFFICIENTS as COEFFICIENTS, CORRELATIONS  # SPA: test_spa.py
from metaeval_core.stats.correlation import LEVELS, correlate, correlate_many, correlate_matrices
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

from .oracles import loop_pdp, scipy_corr
from .tie_oracle import one_epsilon


def reference_level(metric, human, level, coefficient):
    """The definitions of docs/methods.md sec. 1, written as plain loops."""
    if level == "system":
        x = np.array([np.nanmean(row) if np.any(~np.isnan(row)) else np.nan for row in metric])
        z = np.array([np.nanmean(row) if np.any(~np.isnan(row)) else np.nan for row in human])
        return scipy_corr(x, z, coefficient), None
    if level == "input" and coefficient == "tie-calibrated-accuracy":
        # One epsilon shared by every input (docs/methods.md sec. 11.2).
        defined = sum(np.sum(~(np.isnan(metric[:, j]) | np.isnan(human[:, j]))) >= 2 for j in range(metric.shape[1]))
        return one_epsilon(metric, human, "input")[0], defined
    if level == "input" and coefficient == "pdp":
        # Pooled over inputs (docs/methods.md sec. 11.4); n counts the inputs with a pair.
        defined = sum(np.sum(~(np.isnan(metric[:, j]) | np.isnan(human[:, j]))) >= 2 for j in range(metric.shape[1]))
        return loop_pdp(metric, human), defined
    if level == "input":
        values = [scipy_corr(metric[:, j], human[:, j], coefficient) for j in range(metric.shape[1])]
        defined = [v for v in values if not np.isnan(v)]
        return (np.mean(defined) if defined else np.nan), len(defined)
    return scipy_corr(metric.ravel(), human.ravel(), coefficient), None


@pytest.fixture(scope="module")
def messy():
    rng = np.random.default_rng(7)
    human = rng.integers(1, 6, (9, 30)).astype(float)
    metric = human + rng.integers(-2, 3, human.shape)
    metric[rng.random(metric.shape) < 0.1] = np.nan
    human[rng.random(human.shape) < 0.1] = np.nan
    human[:, 3] = 2.0  # a constant input: undefined at the input level, skipped and counted
    return metric, human


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_levels_match_reference(messy, level, coefficient):
    metric, human = messy
    result = correlate_matrices(metric, human, level=level, coefficient=coefficient)
    expected, n_defined = reference_level(metric, human, level, coefficient)
    assert float(result.estimate) == pytest.approx(expected, abs=1e-12)
    if level == "input":
        assert int(result.n) == n_defined
        assert int(result.n_undefined) == metric.shape[1] - n_defined
        if coefficient in CORRELATIONS:  # a constant input is undefined for a correlation, not for accuracy
            assert int(result.n_undefined) >= 1


@pytest.mark.parametrize("level", LEVELS)
def test_batched_equals_loop(messy, level):
    metric, human = messy
    rng = np.random.default_rng(3)
    stack_m = np.stack([metric, metric + rng.normal(size=metric.shape), metric[::-1]])
    stack_h = np.stack([human, human, human])
    batched = correlate_matrices(stack_m, stack_h, level=level, coefficient="kendall")
    for k in range(3):
        single = correlate_matrices(stack_m[k], stack_h[k], level=level, coefficient="kendall")
        assert batched.estimate[k] == pytest.approx(float(single.estimate), abs=1e-12, nan_ok=True)


def test_system_level_allows_different_pools():
    rng = np.random.default_rng(0)
    r = correlate_matrices(rng.normal(size=(5, 40)), rng.normal(size=(5, 10)), level="system", coefficient="pearson")
    assert np.isfinite(r.estimate)
    with pytest.raises(ValueError, match="share their inputs"):
        correlate_matrices(rng.normal(size=(5, 40)), rng.normal(size=(5, 10)), level="input")


def test_validation_messages():
    x = np.zeros((3, 4))
    with pytest.raises(ValueError, match="level must be one of system, input, global"):
        correlate_matrices(x, x, level="summary")
    with pytest.raises(ValueError, match="same number of systems"):
        correlate_matrices(np.zeros((3, 4)), np.zeros((2, 4)))


@pytest.fixture(scope="module")
def small():
    return synthetic_dataset(SyntheticSpec(n_systems=6, n_judged=12, n_unjudged=30, seed=3), id="small")


def test_dataset_pools_and_levels(small):
    judged = correlate(small, "metric.good", "human.quality", pool="judged", coefficient="pearson")
    full = correlate(small, "metric.good", "human.quality", pool="all", coefficient="pearson")
    x_all = small.measure("metric.good").scores.mean(axis=1)
    z = small.matrix("human.quality").mean(axis=1)
    assert full.estimate == pytest.approx(np.corrcoef(x_all, z)[0, 1])
    assert judged.estimate == pytest.approx(np.corrcoef(small.matrix("metric.good").mean(axis=1), z)[0, 1])
    # The unjudged pool only changes system-level means.
    a = correlate(small, "metric.good", "human.quality", level="input", pool="all")
    b = correlate(small, "metric.good", "human.quality", level="input", pool="judged")
    assert a.estimate == b.estimate and a.pool == "judged"


def test_system_subset(small):
    abs_only = correlate(small, "metric.good", "human.quality", systems="type=abs")
    assert abs_only.n == sum(v == "abs" for v in small.system_attribute("type"))
    with pytest.raises(DatasetError, match="no system"):
        correlate(small, "metric.good", "human.quality", systems="type=nope")
    with pytest.raises(DatasetError, match="unknown system attribute"):
        correlate(small, "metric.good", "human.quality", systems="size=big")


def test_unknown_measures_and_wrong_kind(small):
    with pytest.raises(DatasetError, match="unknown measure 'rouge'.*known measures"):
        correlate(small, "rouge", "human.quality")
    with pytest.raises(DatasetError, match="not a human measure"):
        correlate(small, "metric.good", "metric.fair")
    with pytest.raises(ValueError, match="at least one"):
        correlate_many(small, [], "human.quality")


def test_constant_metric_is_undefined_not_zero():
    scores = np.tile(np.arange(4.0)[:, None], (1, 5))
    ds = Dataset(
        id="const",
        systems=list("abcd"),
        inputs=list("vwxyz"),
        measures={
            "m": Measure("m", "metric", np.full((4, 5), 0.3)),
            "h": Measure("h", "human", scores),
        },
    )
    for level in LEVELS:
        result = correlate(ds, "m", "h", level=level)
        assert np.isnan(result.estimate)
        assert result.to_dict()["estimate"] is None
