"""Metric comparisons (docs/methods.md sec. 3) against the slow oracles, hand formulas and invariances."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metaeval_core.stats.exact import exact_matrix
from metaeval_core.stats.coefficients import POINT_COEFFICIENTS as COEFFICIENTS, CORRELATIONS  # SPA: test_spa.py
from metaeval_core.stats.correlation import LEVELS, system_means
from metaeval_core.stats.resampling import _bootstrap_correlations, _draw_bootstrap_indices
from metaeval_core.stats.significance import (
    PAIRED_BOOTSTRAP_METHODS,
    PERMUTATION_METHODS,
    ComparisonResult,
    PairwiseTable,
    _PermutationEngine,
    _draw_swap_masks,
    _permutation_null,
    compare_all_pairs,
    compare_metrics,
    correct_pvalues,
)
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

from . import oracles


def _data(integer: bool):
    """6 systems x 8 inputs with NaNs. ``integer``: Likert-like scores with many ties;
    otherwise continuous scores (no accidental ties between z-scored system means)."""
    rng = np.random.default_rng(31 if integer else 32)
    human = rng.integers(1, 6, (6, 8)).astype(float)
    if integer:
        x = human + rng.integers(-2, 3, human.shape)
        y = human + rng.integers(-3, 4, human.shape)
        human[:, 2] = 4.0  # a constant input: undefined at the input level
    else:
        x = human + rng.normal(0, 1.0, human.shape)
        y = human + rng.normal(0, 1.5, human.shape)
    x[rng.random(x.shape) < 0.1] = np.nan
    y[rng.random(y.shape) < 0.1] = np.nan
    human[rng.random(human.shape) < 0.1] = np.nan
    return x, y, human


CONTINUOUS = _data(False)
INTEGER = _data(True)


def _cases():
    for level in LEVELS:
        for coefficient in COEFFICIENTS:
            yield level, coefficient, CONTINUOUS
            # Integer scores: ties in cells are exact after z-scoring; at the system level the
            # literal oracle's z-scored row means may break exact ties differently, so only there
            # continuous data is used.
            if level != "system":
                yield level, coefficient, INTEGER


@pytest.mark.parametrize("method", PERMUTATION_METHODS)
@pytest.mark.parametrize("level, coefficient, data", list(_cases()))
def test_permutation_null_matches_oracle(level, coefficient, data, method):
    x, y, z = data
    masks = _draw_swap_masks(np.random.default_rng(9), method, 40, *x.shape)
    slow = oracles.permutation_null(x, y, z, level, coefficient, masks)
    fast = _permutation_null(x, y, z, level=level, coefficient=coefficient, method=method,
                             rng=np.random.default_rng(9), n_resamples=40, batch=None)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12, equal_nan=True)
    for alternative in ("greater", "two-sided"):
        result = compare_metrics(x, y, z, level=level, coefficient=coefficient, method=method, rng=9,
                                 n_resamples=40, alternative=alternative, return_distribution=True)
        delta = oracles.level_corr(x, z, level, coefficient) - oracles.level_corr(y, z, level, coefficient)
        assert result.delta == pytest.approx(delta, abs=1e-12)
        assert result.pvalue == oracles.count_pvalue(slow, delta, alternative)
        assert result.n_defined == int(np.sum(~np.isnan(slow)))


@pytest.mark.parametrize("method", PAIRED_BOOTSTRAP_METHODS)
@pytest.mark.parametrize("level, coefficient, data", list(_cases()))
def test_paired_bootstrap_matches_oracle(level, coefficient, data, method):
    x, y, z = data
    indices = _draw_bootstrap_indices(np.random.default_rng(4), method, 40, 6, 8)
    slow = oracles.bootstrap_distribution([x, y], z, level, coefficient, indices)
    fast = _bootstrap_correlations([x, y], z, level=level, coefficient=coefficient, indices=indices, batch=None)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12, equal_nan=True)
    delta = oracles.level_corr(x, z, level, coefficient) - oracles.level_corr(y, z, level, coefficient)
    centred = slow[:, 0] - slow[:, 1] - delta
    for alternative in ("greater", "two-sided"):
        result = compare_metrics(x, y, z, level=level, coefficient=coefficient, method=method, rng=4,
                                 n_resamples=40, alternative=alternative, return_distribution=True)
        np.testing.assert_allclose(result.null_distribution, centred, rtol=0, atol=1e-12, equal_nan=True)
        assert result.pvalue == oracles.count_pvalue(centred, delta, alternative)


def test_swap_mask_bits_do_not_depend_on_chunking():
    for method in PERMUTATION_METHODS:
        reference = _draw_swap_masks(np.random.default_rng(1), method, 1000, 5, 13, batch=1000)
        for batch in (1, 7, 333):
            np.testing.assert_array_equal(
                reference, _draw_swap_masks(np.random.default_rng(1), method, 1000, 5, 13, batch=batch))
        assert 0.45 < reference.mean() < 0.55


@pytest.mark.parametrize("method", PERMUTATION_METHODS + PAIRED_BOOTSTRAP_METHODS)
@pytest.mark.parametrize("level", LEVELS)
def test_results_do_not_depend_on_batch(level, method):
    x, y, z = INTEGER if level != "system" else CONTINUOUS
    for coefficient in COEFFICIENTS:
        runs = [compare_metrics(x, y, z, level=level, coefficient=coefficient, method=method, rng=17,
                                n_resamples=50, batch=batch, return_distribution=True)
                for batch in (1, 7, 1000)]
        for other in runs[1:]:
            np.testing.assert_array_equal(runs[0].null_distribution, other.null_distribution)
            assert runs[0].pvalue == other.pvalue


def test_batch_invariance_on_the_demo():
    demo = synthetic_dataset()
    x, y, z = (demo.matrix(m) for m in ("metric.good", "metric.fair", "human.quality"))
    for level in ("system", "input"):
        runs = [compare_metrics(x, y, z, level=level, coefficient="kendall", method="perm-both", rng=5,
                                n_resamples=200, batch=batch, return_distribution=True) for batch in (1, 7, 1000)]
        for other in runs[1:]:
            np.testing.assert_array_equal(runs[0].null_distribution, other.null_distribution)


def test_identity_swap_reproduces_delta_with_tied_system_means():
    # Two systems with the same integer scores in a different order: their system means tie
    # exactly in the raw data and must still tie after z-scoring and re-summing.
    rng = np.random.default_rng(2)
    z = rng.integers(1, 6, (6, 10)).astype(float)
    x = rng.integers(0, 10, (6, 10)).astype(float)
    x[1] = x[0][::-1]
    y = rng.integers(0, 7, (6, 10)).astype(float)
    y[3] = np.roll(y[2], 3)
    engine = _PermutationEngine(x, y, z, "system", "kendall", "perm-both")
    deltas = engine.deltas(np.zeros((1, 6, 10), dtype=bool))
    expected = compare_metrics(x, y, z, level="system", coefficient="kendall", method="williams").delta
    assert deltas[0] == pytest.approx(expected, abs=1e-15)


def test_pvalue_is_never_zero():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(10, 20))
    x = z.copy()
    y = rng.normal(size=(10, 20))
    for method in PERMUTATION_METHODS + PAIRED_BOOTSTRAP_METHODS:
        result = compare_metrics(x, y, z, level="system", coefficient="pearson", method=method,
                                 n_resamples=99, rng=1)
        assert result.pvalue >= 1 / 100
    perm = compare_metrics(x, y, z, level="system", coefficient="pearson", method="perm-both", n_resamples=99, rng=1)
    assert perm.pvalue == pytest.approx(1 / 100)


def test_reversing_the_metrics_mirrors_the_test():
    x, y, z = CONTINUOUS
    forward = compare_metrics(x, y, z, level="input", coefficient="kendall", method="perm-both", rng=3,
                              n_resamples=200, return_distribution=True)
    backward = compare_metrics(y, x, z, level="input", coefficient="kendall", method="perm-both", rng=3,
                               n_resamples=200, return_distribution=True)
    np.testing.assert_allclose(backward.null_distribution, -forward.null_distribution, atol=1e-15)
    assert backward.delta == pytest.approx(-forward.delta)


@pytest.mark.parametrize("coefficient", CORRELATIONS)
@pytest.mark.parametrize("level", ["system", "global"])
def test_williams_matches_the_hand_computation(level, coefficient):
    x, y, z = CONTINUOUS
    if level == "system":
        a, b, c = system_means(x), system_means(y), system_means(z)
    else:
        a, b, c = x.ravel(), y.ravel(), z.ravel()
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(c))
    a, b, c = a[keep], b[keep], c[keep]
    r13 = oracles.scipy_corr(a, c, coefficient)
    r23 = oracles.scipy_corr(b, c, coefficient)
    r12 = oracles.scipy_corr(a, b, coefficient)
    for alternative in ("greater", "two-sided"):
        t, p = oracles.williams(r13, r23, r12, int(keep.sum()), alternative)
        result = compare_metrics(x, y, z, level=level, coefficient=coefficient, method="williams",
                                 alternative=alternative)
        assert result.statistic == pytest.approx(t, rel=1e-10)
        assert result.pvalue == pytest.approx(p, rel=1e-10)
        assert result.approximate == (coefficient != "pearson")
        assert result.n_resamples == 0 and result.null_distribution is None


def test_williams_worked_example():
    # r13 = 0.8, r23 = 0.6, r12 = 0.5, n = 20, by hand:
    # K = 1 - .25 - .64 - .36 + 2 * .5 * .8 * .6 = 0.23
    # t = 0.2 * sqrt(19 * 1.5) / sqrt(2 * .23 * 19 / 17 + (1.4^2 / 4) * 0.125) = 1.067708 / 0.758530 = 1.40760
    k = 0.23
    t = 0.2 * math.sqrt(19 * 1.5) / math.sqrt(2 * k * 19 / 17 + (1.4**2 / 4) * 0.5**3)
    got_t, got_p = oracles.williams(0.8, 0.6, 0.5, 20)
    assert got_t == pytest.approx(t) == pytest.approx(1.40760, abs=1e-5)
    assert got_p == pytest.approx(stats.t.sf(t, 17))


def test_williams_is_refused_at_the_input_level():
    x, y, z = CONTINUOUS
    with pytest.raises(ValueError, match="williams.*system and global"):
        compare_metrics(x, y, z, level="input", coefficient="pearson", method="williams")


def test_undefined_correlations_give_nan_pvalues():
    z = np.full((5, 6), 2.0)
    x = np.arange(30.0).reshape(5, 6)
    y = x[::-1].copy()
    for method in ("perm-both", "boot-both", "williams"):
        result = compare_metrics(x, y, z, level="system", coefficient="kendall", method=method, n_resamples=20,
                                 rng=0)
        assert math.isnan(result.pvalue) and math.isnan(result.delta)
        assert result.n_defined == 0


def test_pool_all_comparison_at_the_system_level():
    demo = synthetic_dataset(SyntheticSpec(n_systems=8, n_judged=20, n_unjudged=30, seed=3))
    x, y = demo.matrix("metric.good", pool="all"), demo.matrix("metric.weak", pool="all")
    z = demo.matrix("human.quality")
    indices = _draw_bootstrap_indices(np.random.default_rng(6), "boot-both", 30, 8, 50, 20)
    slow = oracles.bootstrap_distribution([x, y], z, "system", "pearson", indices)
    result = compare_metrics(x, y, z, level="system", coefficient="pearson", method="boot-both", rng=6,
                             n_resamples=30, return_distribution=True)
    np.testing.assert_allclose(result.null_distribution, slow[:, 0] - slow[:, 1] - result.delta, atol=1e-12)
    with pytest.raises(ValueError, match="share their inputs"):
        compare_metrics(x, y, z, level="input", coefficient="pearson", method="perm-both")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(method="perm"), ValueError, "method"),
        (dict(level="doc"), ValueError, "level"),
        (dict(coefficient="r"), ValueError, "coefficient"),
        (dict(alternative="less"), ValueError, "alternative"),
        (dict(n_resamples=0), ValueError, "n_resamples"),
        (dict(n_resamples=2.0), TypeError, "n_resamples"),
        (dict(batch=-3), ValueError, "batch"),
        (dict(rng=1.5), TypeError, "rng"),
        (dict(return_distribution=None), TypeError, "return_distribution"),
        (dict(names=("a",)), TypeError, "names"),
    ],
)
def test_validation_names_the_parameter(kwargs, error, match):
    x, y, z = CONTINUOUS
    options = dict(level="system", coefficient="kendall", method="perm-both", n_resamples=10)
    options.update(kwargs)
    with pytest.raises(error, match=match):
        compare_metrics(x, y, z, **options)


def test_validation_of_shapes():
    x, y, z = CONTINUOUS
    with pytest.raises(ValueError, match="same shape"):
        compare_metrics(x, y[:, :5], z, level="system", coefficient="kendall", method="perm-both")
    with pytest.raises(ValueError, match="number of systems"):
        compare_metrics(x[:4], y[:4], z, level="system", coefficient="kendall", method="perm-both")


# -- corrections ----------------------------------------------------------------
P = np.array([0.01, 0.04, 0.03, 0.20, 0.005, 0.5, 0.04])


def test_bonferroni_by_hand():
    np.testing.assert_allclose(correct_pvalues(P, method="bonferroni"), np.minimum(1, 7 * P))


def test_holm_by_hand():
    np.testing.assert_allclose(correct_pvalues(P, method="holm"), oracles.holm(P))
    # Sorted: .005 .01 .03 .04 .04 .2 .5 -> 7*.005=.035, 6*.01=.06, 5*.03=.15, 4*.04=.16, max(.16, 3*.04), ...
    np.testing.assert_allclose(correct_pvalues([0.005, 0.01, 0.03], method="holm"), [0.015, 0.02, 0.03])


def test_bh_matches_scipy():
    np.testing.assert_allclose(correct_pvalues(P, method="bh"), stats.false_discovery_control(P))
    rng = np.random.default_rng(0)
    many = rng.random(200) ** 3
    np.testing.assert_allclose(correct_pvalues(many, method="bh"), stats.false_discovery_control(many))


def test_corrections_ignore_nan_and_keep_shape():
    p = np.array([[np.nan, 0.01], [0.02, np.nan]])
    out = correct_pvalues(p, method="bonferroni")
    assert out.shape == (2, 2) and np.isnan(out[0, 0]) and np.isnan(out[1, 1])
    np.testing.assert_allclose([out[0, 1], out[1, 0]], [0.02, 0.04])
    np.testing.assert_array_equal(correct_pvalues(P, method="none"), P)
    with pytest.raises(ValueError, match="method"):
        correct_pvalues(P, method="sidak")
    with pytest.raises(ValueError, match="pvalues"):
        correct_pvalues([1.5], method="holm")


# -- all pairs --------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo():
    return synthetic_dataset(SyntheticSpec(n_systems=10, n_judged=30, n_unjudged=20, seed=8))


METRICS = ("metric.strong", "metric.good", "metric.fair", "metric.noise")


@pytest.mark.parametrize("level, method", [
    ("system", "perm-both"), ("system", "perm-systems"), ("system", "perm-inputs"), ("system", "boot-both"),
    ("input", "perm-both"), ("input", "boot-both"), ("global", "boot-inputs"),
])
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_all_pairs_cells_equal_single_comparisons_with_the_same_seed(demo, level, method, coefficient):
    # Common random numbers: every cell is exactly compare_metrics(..., rng=seed).
    table = compare_all_pairs(demo, METRICS, "human.quality", level=level, coefficient=coefficient,
                              method=method, n_resamples=60, rng=12, batch=25)
    z = exact_matrix(demo, "human.quality")  # what the table uses (docs/methods.md sec. 15)
    for a in range(4):
        for b in range(4):
            if a == b:
                continue
            single = compare_metrics(demo.matrix(METRICS[a]), demo.matrix(METRICS[b]), z, level=level,
                                     coefficient=coefficient, method=method, n_resamples=60, rng=12)
            assert table.pvalue[a, b] == single.pvalue, (a, b)
            assert table.n_defined[a, b] == single.n_defined
            assert table.delta[a, b] == pytest.approx(single.delta, abs=1e-15)
    assert np.isnan(np.diag(table.pvalue)).all()


def test_all_pairs_with_a_generator_is_reproducible(demo):
    runs = [compare_all_pairs(demo, METRICS, "human.quality", level="system", coefficient="kendall",
                              method="perm-both", n_resamples=50, rng=np.random.default_rng(3)) for _ in range(2)]
    np.testing.assert_array_equal(runs[0].pvalue, runs[1].pvalue)


@pytest.mark.parametrize("family", ["row", "table", "none"])
@pytest.mark.parametrize("correction", ["bonferroni", "holm", "bh", "none"])
def test_all_pairs_corrections_by_family(demo, family, correction):
    table = compare_all_pairs(demo, METRICS, "human.quality", level="input", coefficient="kendall",
                              method="perm-both", correction=correction, family=family, n_resamples=60, rng=1)
    off = ~np.eye(4, dtype=bool)
    if correction == "none" or family == "none":
        np.testing.assert_array_equal(table.pvalue_corrected[off], table.pvalue[off])
    elif family == "table":
        np.testing.assert_allclose(table.pvalue_corrected[off], correct_pvalues(table.pvalue[off], method=correction))
    else:
        for i in range(4):
            np.testing.assert_allclose(table.pvalue_corrected[i, off[i]],
                                       correct_pvalues(table.pvalue[i, off[i]], method=correction))
    np.testing.assert_array_equal(table.significant[off], table.pvalue[off] < 0.05)
    np.testing.assert_array_equal(table.significant_corrected[off], table.pvalue_corrected[off] < 0.05)
    assert not table.significant[~off].any()


def test_all_pairs_records_progress_and_mapping_input(demo):
    seen = []
    matrices = {m: demo.matrix(m) for m in (*METRICS, "human.quality")}
    table = compare_all_pairs(matrices, METRICS, "human.quality", level="system", coefficient="pearson",
                              method="boot-both", n_resamples=50, rng=2, progress=seen.append)
    same = compare_all_pairs(demo, METRICS, "human.quality", level="system", coefficient="pearson",
                             method="boot-both", n_resamples=50, rng=2)
    np.testing.assert_array_equal(table.pvalue, same.pvalue)
    assert isinstance(table, PairwiseTable)
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    records = table.to_records()
    assert len(records) == 12
    assert {"x", "y", "delta", "pvalue", "significant", "significant_corrected"} <= set(records[0])
    assert records[0]["x"] == "metric.strong" and records[0]["y"] == "metric.good"


def test_all_pairs_williams_and_pool_all(demo):
    table = compare_all_pairs(demo, METRICS, "human.quality", level="system", coefficient="pearson",
                              method="williams", pool="all")
    z = demo.matrix("human.quality")
    single = compare_metrics(demo.matrix(METRICS[0], pool="all"), demo.matrix(METRICS[2], pool="all"), z,
                             level="system", coefficient="pearson", method="williams")
    assert table.pvalue[0, 2] == pytest.approx(single.pvalue)
    assert table.n_resamples == 0


def test_all_pairs_validation(demo):
    base = dict(level="system", coefficient="kendall", method="perm-both", n_resamples=10)
    with pytest.raises(ValueError, match="at least two"):
        compare_all_pairs(demo, ["metric.good"], "human.quality", **base)
    with pytest.raises(ValueError, match="correction"):
        compare_all_pairs(demo, METRICS, "human.quality", correction="fdr", **base)
    with pytest.raises(ValueError, match="family"):
        compare_all_pairs(demo, METRICS, "human.quality", family="column", **base)
    with pytest.raises(ValueError, match="alpha"):
        compare_all_pairs(demo, METRICS, "human.quality", alpha=1.5, **base)
    with pytest.raises(ValueError, match="williams"):
        compare_all_pairs(demo, METRICS, "human.quality", **{**base, "method": "williams", "level": "input"})
    with pytest.raises(TypeError, match="progress"):
        compare_all_pairs(demo, METRICS, "human.quality", progress=3, **base)
    with pytest.raises(ValueError, match="Dataset only"):
        compare_all_pairs({m: demo.matrix(m) for m in (*METRICS, "human.quality")}, METRICS, "human.quality",
                          pool="all", **base)


def test_result_dataclass_is_frozen():
    x, y, z = CONTINUOUS
    result = compare_metrics(x, y, z, level="system", coefficient="kendall", method="perm-both", n_resamples=10,
                             rng=0, names=("A", "B"))
    assert isinstance(result, ComparisonResult) and (result.x, result.y) == ("A", "B")
    with pytest.raises(AttributeError):
        result.pvalue = 0.5
    assert result.to_dict()["x"] == "A"


# -- at the upload's 2,000-system limit (issue 23): pair arrays bounded by the batch, never systems^2 x batch ----
TESTS_AT_THE_LIMIT = """
import numpy as np
from metaeval_core.stats.resampling import confidence_interval
from metaeval_core.stats.significance import compare_metrics
rng = np.random.default_rng(0)
z = np.round(rng.random((2000, 2)), 1)
x, y = z + rng.random((2000, 2)), rng.random((2000, 2))
result = {}
for level, method in (("system", "perm-both"), ("system", "boot-both"), ("input", "perm-both"),
                      ("input", "boot-both")):
    r = compare_metrics(x, y, z, level=level, coefficient="kendall", method=method, n_resamples=200, rng=0)
    result[level + " " + method] = r.pvalue
result["interval"] = confidence_interval(x, z, level="input", coefficient="kendall", method="boot-both",
                                         n_resamples=200, rng=0).low
"""


@pytest.mark.slow
def test_kendall_tests_and_intervals_at_the_system_limit_stay_bounded():
    """2,000 systems x 2 inputs: system-level permutations held (2M pairs x 125 resamples) float64 sign arrays
    (MemoryError at 1.86 GiB each), input-level bootstraps a (250 x 2M) weight matrix (3.7 GiB)."""
    from tests.core.capped import run_capped

    result = run_capped(TESTS_AT_THE_LIMIT, cap=int(1.5 * 2**30), timeout=600)
    assert result["system perm-both"] < 0.05 and result["input boot-both"] < 0.05  # x follows z, y does not
    assert -1 < result["interval"] < 1
    assert result["peak_mb"] < 1000


def test_large_input_level_permutations_leave_the_linear_engine_and_are_priced_per_slice():
    from metaeval_core.stats.significance import estimated_table_seconds
    from metaeval_core.stats.significance.linear import linear_fits

    assert linear_fits(16, 100) and linear_fits(1000, 10) and not linear_fits(2000, 20)
    options = dict(level="input", coefficient="kendall", method="perm-both", n_resamples=1000)
    # 2,000 systems x 20 inputs: 40,000 scipy tau-b slices per metric pair side, not the linear engine's price.
    assert estimated_table_seconds(2000, 20, 2, **options) > 60
    assert estimated_table_seconds(16, 100, 6, **options) < 1


def test_global_level_pair_counts_are_priced_by_the_human_scores_distinct_values():
    from metaeval_core.stats.significance import estimated_table_seconds

    options = dict(level="global", coefficient="kendall", n_resamples=1000)
    # WMT22 zh-en's shape: MQM has 178 values (8 levels of the recursion), continuous scores 15-16.
    # The table decides most resamples from bounds (docs/methods.md sec. 16.1): measured 27-38 s of CPU.
    mqm = estimated_table_seconds(14, 1875, 21, method="perm-both", human_distinct=178, **options)
    continuous = estimated_table_seconds(14, 1875, 21, method="perm-both", **options)
    assert 20 < mqm < 60 and mqm < continuous < 2 * mqm
    # Null values themselves (averaged over tasks) are all counted exactly: measured ~230 s before the bounds.
    exact = estimated_table_seconds(14, 1875, 21, method="perm-both", human_distinct=178, nulls=True, **options)
    exact_continuous = estimated_table_seconds(14, 1875, 21, method="perm-both", nulls=True, **options)
    assert 150 < exact < 400 and exact_continuous / exact == pytest.approx(20 / 12)
    boot = estimated_table_seconds(14, 1875, 21, method="boot-both", human_distinct=178, **options)
    assert 3 < boot < 12  # measured 4.5-6.5 s (packed weightings)
