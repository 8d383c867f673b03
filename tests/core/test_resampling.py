"""Confidence intervals (docs/methods.md sec. 2) against the slow oracles, hand formulas and invariances."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval_core.stats.exact import exact_matrix
from metaeval_core.stats.coefficients import POINT_COEFFICIENTS as COEFFICIENTS, CORRELATIONS  # SPA: test_spa.py
from metaeval_core.stats.correlation import LEVELS, correlate_matrices
from metaeval_core.stats.resampling import (
    BOOTSTRAP_METHODS,
    CI_METHODS,
    ConfidenceInterval,
    _bootstrap_correlations,
    _draw_bootstrap_indices,
    confidence_interval,
    dataset_confidence_interval,
    fisher_interval,
)
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

from . import oracles


@pytest.fixture(scope="module")
def messy():
    """7 systems x 9 inputs: Likert humans, quarter-point metric (exact sums: ties stay ties), NaNs,
    a constant human input, and two systems with identical metric rows."""
    rng = np.random.default_rng(11)
    human = rng.integers(1, 6, (7, 9)).astype(float)
    metric = human + rng.integers(-6, 7, human.shape) / 4.0
    metric[3] = metric[2]
    human[:, 4] = 3.0
    metric[rng.random(metric.shape) < 0.12] = np.nan
    human[rng.random(human.shape) < 0.12] = np.nan
    return metric, human


@pytest.fixture(scope="module")
def wide(messy):
    """The same human, with a metric holding 6 extra unjudged inputs (pool 'all')."""
    metric, human = messy
    rng = np.random.default_rng(12)
    extra = rng.integers(1, 6, (7, 6)) + rng.integers(-6, 7, (7, 6)) / 4.0
    return np.concatenate([metric, extra], axis=1), human


@pytest.mark.parametrize("method", BOOTSTRAP_METHODS)
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
@pytest.mark.parametrize("level", LEVELS)
def test_bootstrap_distribution_matches_oracle(messy, level, coefficient, method):
    metric, human = messy
    indices = _draw_bootstrap_indices(np.random.default_rng(5), method, 60, 7, 9)
    fast = _bootstrap_correlations([metric], human, level=level, coefficient=coefficient, indices=indices, batch=None)
    slow = oracles.bootstrap_distribution([metric], human, level, coefficient, indices)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12, equal_nan=True)

    result = confidence_interval(metric, human, level=level, coefficient=coefficient, method=method, rng=5,
                                 n_resamples=60, return_distribution=True)
    np.testing.assert_allclose(result.distribution, slow[:, 0], rtol=0, atol=1e-12, equal_nan=True)
    low, high, n_defined = oracles.percentile_interval(slow[:, 0], 0.95)
    assert result.n_defined == n_defined
    assert result.low == pytest.approx(low, abs=1e-12)
    assert result.high == pytest.approx(high, abs=1e-12)
    assert result.estimate == pytest.approx(oracles.level_corr(metric, human, level, coefficient), abs=1e-12)


@pytest.mark.parametrize("method", BOOTSTRAP_METHODS)
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_pool_all_resamples_metric_and_human_inputs_separately(wide, coefficient, method):
    metric, human = wide
    indices = _draw_bootstrap_indices(np.random.default_rng(8), method, 50, 7, 15, 9)
    if method != "boot-systems":
        assert indices.metric_inputs.shape == (50, 15) and indices.human_inputs.shape == (50, 9)
    fast = _bootstrap_correlations([metric], human, level="system", coefficient=coefficient, indices=indices,
                                   batch=None)
    slow = oracles.bootstrap_distribution([metric], human, "system", coefficient, indices)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12, equal_nan=True)
    result = confidence_interval(metric, human, level="system", coefficient=coefficient, method=method, rng=8,
                                 n_resamples=50, return_distribution=True)
    assert result.pool == "all"
    np.testing.assert_allclose(result.distribution, slow[:, 0], rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("level", ["input", "global"])
def test_pool_mask_selects_judged_columns_off_the_system_level(wide, messy, level):
    metric_wide, human = wide
    # The judged inputs sit at scattered positions of a 15-column "all" matrix, in the human's order.
    judged_slots = np.array([0, 2, 4, 6, 8, 10, 12, 13, 14])
    mask = np.zeros(15, dtype=bool)
    mask[judged_slots] = True
    interleaved = np.full((7, 15), np.nan)
    interleaved[:, judged_slots] = messy[0]
    interleaved[:, ~mask] = metric_wide[:, 9:]
    kwargs = dict(level=level, coefficient="kendall", method="boot-both", rng=3, n_resamples=40,
                  return_distribution=True)
    masked = confidence_interval(interleaved, human, metric_pool_judged=mask, **kwargs)
    plain = confidence_interval(messy[0], human, **kwargs)
    np.testing.assert_array_equal(masked.distribution, plain.distribution)
    assert masked.pool == "judged"


def test_system_level_pool_all_on_a_dataset_uses_the_unjudged_inputs():
    demo = synthetic_dataset(SyntheticSpec(n_systems=8, n_judged=20, n_unjudged=40, seed=4))
    judged = dataset_confidence_interval(demo, "metric.good", "human.quality", level="system",
                                         coefficient="pearson", method="boot-inputs", rng=1, n_resamples=200)
    full = dataset_confidence_interval(demo, "metric.good", "human.quality", level="system",
                                       coefficient="pearson", method="boot-inputs", pool="all", rng=1,
                                       n_resamples=200)
    assert judged.pool == "judged" and full.pool == "all"
    assert full.estimate == pytest.approx(correlate_matrices(demo.matrix("metric.good", pool="all"),
                                                             demo.matrix("human.quality"),
                                                             level="system", coefficient="pearson").estimate)
    # The dataset-level call puts the human ratings on their integer grid (docs/methods.md sec. 15).
    same = confidence_interval(demo.matrix("metric.good"), exact_matrix(demo, "human.quality"), level="system",
                               coefficient="pearson", method="boot-inputs", rng=1, n_resamples=200)
    assert (judged.low, judged.high) == (same.low, same.high)


@pytest.mark.parametrize("method", BOOTSTRAP_METHODS)
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
@pytest.mark.parametrize("level", LEVELS)
def test_results_do_not_depend_on_batch(messy, level, coefficient, method):
    metric, human = messy
    runs = [
        confidence_interval(metric, human, level=level, coefficient=coefficient, method=method, rng=21,
                            n_resamples=45, batch=batch, return_distribution=True)
        for batch in (1, 7, 1000, None)
    ]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].distribution, other.distribution)
        assert (runs[0].low, runs[0].high) == (other.low, other.high)


def test_batch_invariance_on_the_demo_with_pool_all():
    demo = synthetic_dataset(SyntheticSpec(n_unjudged=300))
    runs = [dataset_confidence_interval(demo, "metric.fair", "human.quality", level="system",
                                        coefficient="kendall", method="boot-both", pool="all", rng=2,
                                        n_resamples=300, batch=batch, return_distribution=True)
            for batch in (1, 7, 1000)]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].distribution, other.distribution)


def test_same_seed_same_result_and_int_equals_generator(messy):
    metric, human = messy
    kwargs = dict(level="system", coefficient="kendall", method="boot-both", n_resamples=80,
                  return_distribution=True)
    a = confidence_interval(metric, human, rng=9, **kwargs)
    b = confidence_interval(metric, human, rng=9, **kwargs)
    c = confidence_interval(metric, human, rng=np.random.default_rng(9), **kwargs)
    d = confidence_interval(metric, human, rng=10, **kwargs)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    np.testing.assert_array_equal(a.distribution, c.distribution)
    assert not np.array_equal(a.distribution, d.distribution, equal_nan=True)


def test_a_generator_advances_between_calls(messy):
    metric, human = messy
    rng = np.random.default_rng(4)
    kwargs = dict(level="system", coefficient="pearson", method="boot-systems", n_resamples=30,
                  return_distribution=True)
    first = confidence_interval(metric, human, rng=rng, **kwargs)
    second = confidence_interval(metric, human, rng=rng, **kwargs)
    assert not np.array_equal(first.distribution, second.distribution, equal_nan=True)


@pytest.mark.parametrize("coefficient", CORRELATIONS)
@pytest.mark.parametrize("level", LEVELS)
def test_fisher_matches_the_hand_formula(messy, level, coefficient):
    metric, human = messy
    result = confidence_interval(metric, human, level=level, coefficient=coefficient, method="fisher",
                                 confidence_level=0.9)
    valid = ~np.isnan(metric) & ~np.isnan(human)
    if level == "system":
        n = 7
    elif level == "input":
        n = int(valid.sum(axis=0).max())  # the largest number of valid systems in any input
    else:
        n = int(valid.sum())
    assert result.fisher_n == n
    low, high = oracles.fisher(result.estimate, n, coefficient, 0.9)
    assert result.low == pytest.approx(low, abs=1e-14)
    assert result.high == pytest.approx(high, abs=1e-14)
    assert result.n_resamples == 0 and result.n_defined == 0 and result.distribution is None


def test_fisher_constants_by_hand():
    z = 1.959963984540054
    r = 0.5
    assert fisher_interval(r, 20, coefficient="pearson") == pytest.approx(
        (math.tanh(math.atanh(r) - z / math.sqrt(17)), math.tanh(math.atanh(r) + z / math.sqrt(17))))
    c = math.sqrt(1 + r * r / 2)
    assert fisher_interval(r, 20, coefficient="spearman") == pytest.approx(
        (math.tanh(math.atanh(r) - z * c / math.sqrt(17)), math.tanh(math.atanh(r) + z * c / math.sqrt(17))))
    c = math.sqrt(0.437)
    assert fisher_interval(r, 20, coefficient="kendall") == pytest.approx(
        (math.tanh(math.atanh(r) - z * c / math.sqrt(16)), math.tanh(math.atanh(r) + z * c / math.sqrt(16))))
    # Undefined when n <= b.
    assert all(math.isnan(v) for v in fisher_interval(r, 3, coefficient="pearson"))
    assert all(math.isnan(v) for v in fisher_interval(r, 4, coefficient="kendall"))
    assert not math.isnan(fisher_interval(r, 5, coefficient="kendall")[0])
    assert all(math.isnan(v) for v in fisher_interval(math.nan, 50, coefficient="pearson"))


def test_all_resamples_undefined_gives_nan_interval():
    human = np.full((5, 6), 3.0)  # constant: every correlation is undefined
    metric = np.arange(30, dtype=float).reshape(5, 6)
    for method in CI_METHODS:
        result = confidence_interval(metric, human, level="system", coefficient="kendall", method=method,
                                     n_resamples=20, rng=0)
        assert math.isnan(result.estimate) and math.isnan(result.low) and math.isnan(result.high)
        assert result.n_defined == 0


def test_degenerate_resamples_are_dropped_and_counted():
    rng = np.random.default_rng(3)
    metric = rng.normal(size=(3, 5))
    human = metric + rng.normal(size=(3, 5))
    result = confidence_interval(metric, human, level="system", coefficient="pearson", method="boot-systems",
                                 n_resamples=200, rng=1, return_distribution=True)
    # With 3 systems some resamples repeat one system only: constant, undefined.
    assert 0 < result.n_defined < 200
    assert result.n_undefined == np.isnan(result.distribution).sum()
    assert np.isfinite(result.low) and np.isfinite(result.high)


def test_result_is_frozen_and_serialisable(messy):
    metric, human = messy
    result = confidence_interval(metric, human, level="system", coefficient="kendall", method="boot-both",
                                 n_resamples=20, rng=0)
    assert isinstance(result, ConfidenceInterval)
    with pytest.raises(AttributeError):
        result.low = 0.0
    record = result.to_dict()
    assert record["method"] == "boot-both" and record["n_resamples"] == 20


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(method="boot"), ValueError, "method"),
        (dict(level="corpus"), ValueError, "level"),
        (dict(coefficient="cosine"), ValueError, "coefficient"),
        (dict(confidence_level=1.0), ValueError, "confidence_level"),
        (dict(confidence_level=0), ValueError, "confidence_level"),
        (dict(confidence_level="0.9"), TypeError, "confidence_level"),
        (dict(n_resamples=0), ValueError, "n_resamples"),
        (dict(n_resamples=10.5), TypeError, "n_resamples"),
        (dict(n_resamples=True), TypeError, "n_resamples"),
        (dict(batch=0), ValueError, "batch"),
        (dict(rng="seed"), TypeError, "rng"),
        (dict(rng=-1), ValueError, "rng"),
        (dict(return_distribution="yes"), TypeError, "return_distribution"),
        (dict(metric_pool_judged=np.ones(3, dtype=bool)), ValueError, "metric_pool_judged"),
    ],
)
def test_validation_names_the_parameter(messy, kwargs, error, match):
    metric, human = messy
    options = dict(level="system", coefficient="kendall", method="boot-both", n_resamples=10)
    options.update(kwargs)
    with pytest.raises(error, match=match):
        confidence_interval(metric, human, **options)


def test_validation_of_shapes(messy):
    metric, human = messy
    with pytest.raises(ValueError, match="number of systems"):
        confidence_interval(metric[:5], human, level="system", coefficient="kendall", method="fisher")
    with pytest.raises(ValueError, match="metric"):
        confidence_interval(metric[:, :4], human, level="system", coefficient="kendall", method="fisher")
    with pytest.raises(ValueError, match="2-D"):
        confidence_interval(metric[0], human, level="system", coefficient="kendall", method="fisher")
    with pytest.raises(TypeError, match="dataset"):
        dataset_confidence_interval(metric, "a", "b", level="system", coefficient="kendall", method="fisher")


def test_dataset_convenience_equals_the_matrix_call():
    demo = synthetic_dataset()
    a = dataset_confidence_interval(demo, "metric.good", "human.quality", level="input", coefficient="kendall",
                                    method="boot-both", rng=3, n_resamples=100, systems="type=abs")
    sub = demo.select_systems("type=abs")
    b = confidence_interval(sub.matrix("metric.good"), sub.matrix("human.quality"), level="input",
                            coefficient="kendall", method="boot-both", rng=3, n_resamples=100)
    assert (a.estimate, a.low, a.high, a.n_defined) == (b.estimate, b.low, b.high, b.n_defined)
    assert a.n == 100


@pytest.mark.parametrize("level", ["system", "input", "global"])
@pytest.mark.parametrize("pool", ["judged", "all"])
@pytest.mark.parametrize("coefficient", ["kendall", "pearson"])
def test_intervals_of_several_metrics_are_each_metrics_own_interval(level, pool, coefficient):
    from metaeval_core.stats.resampling import dataset_confidence_intervals

    from dataclasses import replace

    ds = synthetic_dataset(SyntheticSpec(n_systems=9, n_judged=30, n_unjudged=20, seed=3))
    metrics = list(ds.metric_measures)
    # Missing metric cells, and a system the human never rated (dropped first): the shared draws must still fit.
    measures = dict(ds.measures)
    holes = measures[metrics[1]].scores.copy()
    holes[np.random.default_rng(0).random(holes.shape) < 0.1] = np.nan
    measures[metrics[1]] = measures[metrics[1]].with_scores(holes, None)
    unrated = measures["human.quality"]
    scores = unrated.scores.copy()
    scores[0] = np.nan
    annotators = unrated.annotators.copy()
    annotators[:, 0] = np.nan
    measures["human.quality"] = unrated.with_scores(scores, annotators)
    ds = replace(ds, measures=measures, version="")
    together = dataset_confidence_intervals(ds, metrics, "human.quality", level=level, coefficient=coefficient,
                                            method="boot-both", pool=pool, n_resamples=150, rng=4, batch=17)
    for name, ci in zip(metrics, together):
        alone = dataset_confidence_interval(ds, name, "human.quality", level=level, coefficient=coefficient,
                                            method="boot-both", pool=pool, n_resamples=150, rng=4)
        assert ci.to_dict() == alone.to_dict()
