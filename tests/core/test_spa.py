"""Soft pairwise accuracy (docs/methods.md sec. 11.3) against slow loops over pairs, permutations and inputs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from metaeval_core.cli.main import main
from metaeval_core.stats.coefficients import coefficient_function
from metaeval_core.stats.correlation import correlate_matrices
from metaeval_core.stats.resampling import _draw_bootstrap_indices, confidence_interval
from metaeval_core.stats.significance import compare_all_pairs, compare_metrics
from metaeval_core.stats.significance.permutation import _draw_swap_masks, _zscore_params
from metaeval_core.stats.spa import (
    SPA_PERMUTATIONS,
    pairwise_pvalues,
    soft_pairwise_accuracy,
    swap_signs,
)

SPA = "soft-pairwise-accuracy"


# -- the oracle: literal swaps, one pair, one permutation and one input at a time ------------------------
def loop_pvalue(a, b, signs) -> float:
    """P(permuted sum of a - sum of b >= observed): swap a[j] and b[j] where signs[p, j] < 0. None if no common input."""
    common = [j for j in range(len(a)) if not (math.isnan(a[j]) or math.isnan(b[j]))]
    if not common:
        return None
    observed = sum(a[j] for j in common) - sum(b[j] for j in common)
    tolerance = 1e-9 * sum(abs(a[j] - b[j]) for j in common)
    hits = 0
    for p in range(signs.shape[0]):
        total_a = total_b = 0.0
        for j in common:
            if signs[p, j] > 0:
                total_a, total_b = total_a + a[j], total_b + b[j]
            else:
                total_a, total_b = total_a + b[j], total_b + a[j]
        hits += (total_a - total_b) >= observed - tolerance
    return hits / signs.shape[0]


def loop_spa(metric, human, signs_metric=None, signs_human=None) -> float:
    metric, human = np.asarray(metric, float), np.asarray(human, float)
    signs_metric = swap_signs(metric.shape[1]) if signs_metric is None else signs_metric
    signs_human = swap_signs(human.shape[1]) if signs_human is None else signs_human
    gaps = []
    n = metric.shape[0]
    for i in range(n):
        for k in range(i + 1, n):
            pm = loop_pvalue(list(metric[i]), list(metric[k]), signs_metric)
            ph = loop_pvalue(list(human[i]), list(human[k]), signs_human)
            if pm is not None and ph is not None:
                gaps.append(abs(pm - ph))
    return 1.0 - sum(gaps) / len(gaps) if gaps else math.nan


def fast_pair_pvalue(a, b, signs) -> float | None:
    """The oracle's definition, vectorised over inputs only (for the many resamples of the interval tests)."""
    common = ~(np.isnan(a) | np.isnan(b))
    if not common.any():
        return None
    d = np.where(common, a - b, 0.0)
    observed, tolerance = d.sum(), 1e-9 * np.abs(d).sum()
    hits = sum(float(np.dot(signs[p], d)) >= observed - tolerance for p in range(signs.shape[0]))
    return hits / signs.shape[0]


def medium_spa(metric, human) -> float:
    sm, sh = swap_signs(metric.shape[1]), swap_signs(human.shape[1])
    gaps = []
    for i in range(metric.shape[0]):
        for k in range(i + 1, metric.shape[0]):
            pm, ph = fast_pair_pvalue(metric[i], metric[k], sm), fast_pair_pvalue(human[i], human[k], sh)
            if pm is not None and ph is not None:
                gaps.append(abs(pm - ph))
    return 1.0 - sum(gaps) / len(gaps) if gaps else math.nan


def data(seed=0, n=5, m=9, *, integer=False, missing=0.0):
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n, 1))
    human = quality + rng.normal(size=(n, m))
    metric = quality + 1.5 * rng.normal(size=(n, m))
    if integer:
        human, metric = np.round(human * 1.5), np.round(metric * 1.5)
    if missing:
        human[rng.random((n, m)) < missing] = np.nan
        metric[rng.random((n, m)) < missing] = np.nan
    return metric, human


# -- the point estimate ---------------------------------------------------------------------------------
def test_published_reference_value():
    # mt-metrics-eval's own unit test of its PairwiseConfidenceError (2 systems x 3 segments, seed 4): 0.872.
    human = np.array([[1, 2, 3], [2, 3, 4]], dtype=float)
    metric = np.array([[2, 2, 4], [1, 3, 5]], dtype=float)
    assert float(correlate_matrices(metric, human, level="system", coefficient=SPA).estimate) == pytest.approx(0.872)


def test_swap_signs_are_fixed():
    g = swap_signs(37)
    assert g.shape == (SPA_PERMUTATIONS, 37) and set(np.unique(g)) == {-1.0, 1.0}
    assert np.array_equal(g, swap_signs(37)) and 0.45 < (g > 0).mean() < 0.55


@pytest.mark.parametrize("integer,missing", [(False, 0.0), (True, 0.0), (True, 0.2), (False, 0.3)])
def test_loop_oracle_equals_fast_path(integer, missing):
    metric, human = data(1, n=5, m=8, integer=integer, missing=missing)
    signs = swap_signs(8)
    fast, defined = pairwise_pvalues(metric)
    expected = [loop_pvalue(list(metric[i]), list(metric[k]), signs) for i in range(5) for k in range(i + 1, 5)]
    assert np.array_equal(defined, [e is not None for e in expected])
    assert np.allclose(fast[defined], [e for e in expected if e is not None], rtol=0, atol=0)
    assert float(soft_pairwise_accuracy(metric, human)) == pytest.approx(loop_spa(metric, human), abs=1e-12)


def test_properties():
    metric, human = data(2, n=6, m=12)
    spa = float(correlate_matrices(metric, human, coefficient=SPA).estimate)
    assert 0.0 <= spa <= 1.0
    assert float(correlate_matrices(human, human, coefficient=SPA).estimate) == 1.0
    # |p_metric - p_human| is symmetric: swapping the roles of metric and human changes nothing.
    assert float(correlate_matrices(human, metric, coefficient=SPA).estimate) == spa
    # p-values ignore a positive rescaling and a shift of the scores (exact on integer-valued data).
    mi, hi = data(3, n=6, m=12, integer=True)
    base = float(soft_pairwise_accuracy(mi, hi))
    assert float(soft_pairwise_accuracy(4.0 * mi + 3.0, hi)) == base
    # Identical systems: d = 0 on every input, p = 1 for both measures.
    tied = np.vstack([hi[:1], hi[:1], hi[1:]])
    p, _ = pairwise_pvalues(tied)
    assert p[0] == 1.0


def test_leading_axes_and_chunks():
    stack = [data(s, n=4, m=10) for s in range(5)]
    metrics = np.stack([m for m, _ in stack])
    humans = np.stack([h for _, h in stack])
    batched = soft_pairwise_accuracy(metrics, humans)
    assert batched.shape == (5,)
    assert np.array_equal(batched, [float(soft_pairwise_accuracy(m, h)) for m, h in stack])


def test_missing_cells_and_undefined_pairs():
    metric, human = data(4, n=4, m=6)
    # Systems 0 and 1 share no input scored by the humans: their pair drops out.
    human[0, 3:] = np.nan
    human[1, :3] = np.nan
    p, defined = pairwise_pvalues(human)
    assert not defined[0] and np.isnan(p[0]) and defined[1:].all()
    assert float(soft_pairwise_accuracy(metric, human)) == pytest.approx(loop_spa(metric, human), abs=1e-12)
    assert math.isnan(float(soft_pairwise_accuracy(metric, np.full_like(human, np.nan))))
    assert math.isnan(float(soft_pairwise_accuracy(metric[:1], human[:1])))


def test_metric_pool_all_uses_its_own_inputs():
    rng = np.random.default_rng(5)
    metric, human = data(5, n=4, m=7)
    wider = np.hstack([metric, rng.normal(size=(4, 5))])
    spa = float(correlate_matrices(wider, human, level="system", coefficient=SPA).estimate)
    assert spa == pytest.approx(loop_spa(wider, human, swap_signs(12), swap_signs(7)), abs=1e-12)


# -- intervals and tests: every p-value recomputed on each resample -------------------------------------
def resampled(matrix, systems, inputs):
    out = matrix if systems is None else matrix[systems]
    return out if inputs is None else out[:, inputs]


@pytest.mark.parametrize("missing", [0.1, 0.0])
@pytest.mark.parametrize("method", ["boot-systems", "boot-inputs", "boot-both"])
def test_bootstrap_interval_equals_resample_loop(method, missing):
    metric, human = data(6, n=5, m=7, integer=True, missing=missing)
    k = 12
    ci = confidence_interval(metric, human, level="system", coefficient=SPA, method=method, n_resamples=k, rng=3,
                             return_distribution=True)
    idx = _draw_bootstrap_indices(np.random.default_rng(3), method, k, 5, 7)
    expected = []
    for s in range(k):
        sys = None if idx.systems is None else idx.systems[s]
        inputs = None if idx.metric_inputs is None else idx.metric_inputs[s]
        expected.append(medium_spa(resampled(metric, sys, inputs), resampled(human, sys, inputs)))
    assert np.allclose(ci.distribution, expected, rtol=0, atol=1e-12, equal_nan=True)
    assert ci.estimate == pytest.approx(loop_spa(metric, human), abs=1e-12)


def test_bootstrap_pool_all_resamples_inputs_separately():
    rng = np.random.default_rng(7)
    metric, human = data(7, n=4, m=6)
    wider = np.hstack([metric, rng.normal(size=(4, 3))])
    k = 8
    ci = confidence_interval(wider, human, level="system", coefficient=SPA, method="boot-both", n_resamples=k,
                             rng=1, return_distribution=True)
    assert ci.pool == "all"
    idx = _draw_bootstrap_indices(np.random.default_rng(1), "boot-both", k, 4, 9, 6)
    expected = [medium_spa(resampled(wider, idx.systems[s], idx.metric_inputs[s]),
                           resampled(human, idx.systems[s], idx.human_inputs[s])) for s in range(k)]
    assert np.allclose(ci.distribution, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("integer,missing", [(False, 0.05), (True, 0.0)])
def test_interval_does_not_depend_on_batch(integer, missing):
    metric, human = data(8, n=6, m=15, integer=integer, missing=missing)
    runs = [confidence_interval(metric, human, level="system", coefficient=SPA, method="boot-both", n_resamples=40,
                                rng=11, batch=b, return_distribution=True).distribution for b in (1, 7, None)]
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])


@pytest.mark.parametrize("method", ["perm-systems", "perm-inputs", "perm-both"])
def test_permutation_null_equals_swap_loop(method):
    metric, human = data(9, n=5, m=6)
    other = metric + np.random.default_rng(9).normal(size=metric.shape)
    k = 10
    result = compare_metrics(metric, other, human, level="system", coefficient=SPA, method=method, n_resamples=k,
                             rng=4, return_distribution=True)
    masks = _draw_swap_masks(np.random.default_rng(4), method, k, 5, 6)
    (mx, sx), (my, sy) = _zscore_params(metric), _zscore_params(other)
    x, y = (metric - mx) / sx, (other - my) / sy
    expected = [medium_spa(np.where(mask, y, x), human) - medium_spa(np.where(mask, x, y), human) for mask in masks]
    assert np.allclose(result.null_distribution, expected, rtol=0, atol=1e-12)
    assert result.delta == pytest.approx(loop_spa(metric, human) - loop_spa(other, human), abs=1e-12)


@pytest.mark.parametrize("method", ["boot-both", "perm-systems"])
def test_table_cells_equal_single_comparisons(method):
    rng = np.random.default_rng(10)
    metric, human = data(10, n=5, m=8)
    mats = {"a": metric, "b": metric + rng.normal(size=metric.shape), "c": rng.normal(size=metric.shape), "h": human}
    table = compare_all_pairs(mats, ["a", "b", "c"], "h", level="system", coefficient=SPA, method=method,
                              n_resamples=30, rng=5, correction="none")
    for i, x in enumerate("abc"):
        for j, y in enumerate("abc"):
            if i != j:
                single = compare_metrics(mats[x], mats[y], human, level="system", coefficient=SPA, method=method,
                                         n_resamples=30, rng=5)
                assert table.pvalue[i, j] == pytest.approx(single.pvalue, abs=1e-12)


# -- refusals ---------------------------------------------------------------------------------------------
def test_refusals_name_the_reason():
    metric, human = data(11)
    for level in ("input", "global"):
        with pytest.raises(ValueError, match="system level only.*level='input'|system level only.*level='global'"):
            correlate_matrices(metric, human, level=level, coefficient=SPA)
        with pytest.raises(ValueError, match="system level only"):
            confidence_interval(metric, human, level=level, coefficient=SPA, method="boot-both", n_resamples=10)
        with pytest.raises(ValueError, match="system level only"):
            compare_metrics(metric, metric, human, level=level, coefficient=SPA, method="perm-both", n_resamples=10)
    with pytest.raises(ValueError, match="Fisher transform"):
        confidence_interval(metric, human, level="system", coefficient=SPA, method="fisher")
    with pytest.raises(ValueError, match="Fisher transform"):
        compare_metrics(metric, metric, human, level="system", coefficient=SPA, method="williams")
    with pytest.raises(ValueError, match="segment score matrices"):
        coefficient_function(SPA)


def test_vector_analyses_refuse_it():
    from metaeval_core.analyses.practice import system_influence
    from metaeval_core.analyses.simulations import power_curve
    from metaeval_core.data.synthetic import synthetic_dataset

    ds = synthetic_dataset()
    with pytest.raises(ValueError, match="power simulation supports"):
        power_curve(ds, "metric.strong", "human.quality", level="system", coefficient=SPA)
    with pytest.raises(ValueError, match="influence supports"):
        system_influence(ds, "metric.strong", "human.quality", level="system", coefficient=SPA)


# -- command line -----------------------------------------------------------------------------------------
def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_correlate_and_compare_json(capsys):
    base = ["--dataset", "demo", "--human", "human.quality", "--coefficient", SPA]
    code, out, err = run(capsys, "correlate", *base, "--metrics", "metric.strong,metric.noise", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["coefficient"] for r in rows] == [SPA, SPA]
    assert 0 <= rows[1]["estimate"] < rows[0]["estimate"] <= 1
    code, out, err = run(capsys, "correlate", *base, "--metrics", "metric.strong", "--ci", "boot-systems",
                         "--n-resamples", "50", "--json")
    assert code == 0, err
    row = json.loads(out)[0]
    assert row["low"] <= row["estimate"] <= row["high"] and row["n_defined"] == 50
    code, out, err = run(capsys, "compare", *base, "--metrics", "metric.strong,metric.noise", "--test",
                         "perm-systems", "--n-resamples", "50", "--json")
    assert code == 0, err
    records = json.loads(out)
    assert {(r["x"], r["y"]) for r in records} == {("metric.strong", "metric.noise"), ("metric.noise", "metric.strong")}
    code, out, err = run(capsys, "correlate", *base, "--metrics", "metric.strong", "--level", "input")
    assert code != 0 and "system level only" in err


def test_permutation_test_does_not_depend_on_batch():
    metric, human = data(12, n=5, m=10)
    other = np.flip(metric, axis=1)
    nulls = [compare_metrics(metric, other, human, level="system", coefficient=SPA, method="perm-both",
                             n_resamples=20, rng=2, batch=b, return_distribution=True).null_distribution
             for b in (1, 6, None)]
    assert np.array_equal(nulls[0], nulls[1]) and np.array_equal(nulls[0], nulls[2])


def test_cost_estimates_order_the_paths():
    from metaeval_core.stats.significance import estimated_table_seconds

    def seconds(method, k=1000):
        return estimated_table_seconds(15, 2000, 5, level="system", coefficient=SPA, method=method, n_resamples=k)

    assert seconds("boot-systems") < seconds("perm-systems") < seconds("boot-both") < seconds("perm-both")
    assert seconds("boot-both") == pytest.approx(seconds("boot-inputs")) and seconds("perm-inputs") == seconds("perm-both")
    assert seconds("boot-both", 2000) == pytest.approx(2 * seconds("boot-both"))


def test_ceiling_like_data_and_average_tasks_accept_it():
    from metaeval_core.analyses.average import Task
    from metaeval_core.stats.resampling import confidence_interval as ci

    rng = np.random.default_rng(13)
    ratings = rng.integers(1, 6, size=(3, 5, 8)).astype(float)
    reference = ratings[1:].mean(axis=0)
    result = ci(ratings[0], reference, level="system", coefficient=SPA, method="boot-systems", n_resamples=20, rng=0)
    assert 0 <= result.estimate <= 1 and result.n_defined == 20
    assert Task("demo", "human.quality", level="system", coefficient=SPA).coefficient == SPA
    with pytest.raises(ValueError, match="system level only"):
        Task("demo", "human.quality", level="input", coefficient=SPA)


def test_per_system_sums_equal_per_pair_rows():
    # Complete matrices use differences of per-system permuted sums; they must give the per-pair p-values,
    # exact ties included, and ignore per-input offsets (centred away) however large.
    from metaeval_core.stats.spa import _pair_differences, _pvalues_complete, _pvalues_from_differences, pair_indices

    rng = np.random.default_rng(14)
    first, second = pair_indices(6)
    signs = swap_signs(30)
    for x in (rng.normal(size=(6, 30)), rng.integers(0, 4, size=(6, 30)).astype(float),
              rng.integers(0, 4, size=(6, 30)) / 3.0 + 1e6 * rng.random(30)):
        x[1] = x[0]  # identical systems
        fast = _pvalues_complete(x[None], signs, first, second)
        d, _ = _pair_differences(x, first, second)
        slow = _pvalues_from_differences(d, signs)
        assert np.array_equal(fast[0][0], slow[0]) and np.array_equal(fast[1][0], slow[1])
        assert fast[0][0, 0] == 1.0 and fast[1][0, 0] == 1.0


def test_one_value_at_thousands_of_systems_is_refused_up_front():
    """2,000 systems x 2 inputs: 2M system pairs' p-values took 81 s for one value (issue 23); refused at once."""
    from metaeval_core.stats.spa import soft_pairwise_accuracy

    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"1,999,000 system pairs .*more than 30 s is refused\); use Kendall"):
        soft_pairwise_accuracy(rng.random((2000, 2)), rng.random((2000, 2)))
    assert np.isfinite(soft_pairwise_accuracy(rng.random((40, 20)), rng.random((40, 20))))
