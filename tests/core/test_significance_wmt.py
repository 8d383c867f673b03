"""WMT's system-level permutation test (docs/methods.md sec. 3.6) against a slow loop written from
mt-metrics-eval's PermutationSigDiff, with batch invariance, table consistency and calibration."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from metaeval_core.stats.significance import (
    WMT_SYSTEM_TEST,
    compare_all_pairs,
    compare_metrics,
    draw_system_swaps,
    method_label,
    methods_for,
)

from . import oracles

COEFFICIENTS = ("pearson", "spearman", "kendall", "pairwise-accuracy", "tie-calibrated-accuracy")


def _data(seed: int = 5, n: int = 11, m: int = 9):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=(n, m))
    x = human + rng.normal(0, 1.0, human.shape)
    y = human + rng.normal(0, 1.6, human.shape)
    human[1] = np.nan  # a system without gold: dropped first, as WMT does
    x[rng.random(x.shape) < 0.1] = np.nan
    y[3] = np.nan  # a system Y does not score: dropped from this pair only
    return x, y, human


def loop_wmt_null(x, y, z, coefficient, masks):
    """PermutationSigDiff, one resample at a time: system scores, systems lacking a score dropped,
    scipy.stats.zscore of each metric's system scores, swap per system, r(X_s) - r(Y_s)."""
    xm, ym, zm = oracles.row_means(x), oracles.row_means(y), oracles.row_means(z)
    keep = ~(np.isnan(xm) | np.isnan(ym) | np.isnan(zm))
    xz, yz, zk = stats.zscore(xm[keep]), stats.zscore(ym[keep]), zm[keep]
    delta = oracles.scipy_corr(xz, zk, coefficient) - oracles.scipy_corr(yz, zk, coefficient)
    out = []
    for mask in masks:
        w = mask[keep]
        m1 = np.where(w, yz, xz)
        m2 = np.where(w, xz, yz)
        out.append(oracles.scipy_corr(m1, zk, coefficient) - oracles.scipy_corr(m2, zk, coefficient))
    return np.array(out), delta


@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_matches_the_loop_oracle(coefficient):
    x, y, z = _data()
    k = 300
    masks = draw_system_swaps(np.random.default_rng(7), k, x.shape[0])
    slow, delta = loop_wmt_null(x, y, z, coefficient, masks)
    result = compare_metrics(x, y, z, level="system", coefficient=coefficient, method=WMT_SYSTEM_TEST,
                             n_resamples=k, rng=7, return_distribution=True)
    np.testing.assert_allclose(result.null_distribution, slow, rtol=0, atol=1e-12, equal_nan=True)
    assert result.statistic == pytest.approx(delta, abs=1e-12)
    for alternative in ("greater", "two-sided"):
        r = compare_metrics(x, y, z, level="system", coefficient=coefficient, method=WMT_SYSTEM_TEST,
                            n_resamples=k, rng=7, alternative=alternative)
        assert r.pvalue == oracles.count_pvalue(slow, delta, alternative)


def test_differs_from_perm_systems():
    """Swapping z-scored system scores is not swapping rows of z-scored cells: another null."""
    x, y, z = _data()
    a = compare_metrics(x, y, z, level="system", coefficient="pearson", method=WMT_SYSTEM_TEST, rng=1,
                        return_distribution=True)
    b = compare_metrics(x, y, z, level="system", coefficient="pearson", method="perm-systems", rng=1,
                        return_distribution=True)
    assert a.delta == b.delta
    assert not np.allclose(a.null_distribution, b.null_distribution)


@pytest.mark.parametrize("batch", [1, 7, 64, None])
def test_batch_invariant(batch):
    x, y, z = _data()
    ref = compare_metrics(x, y, z, level="system", coefficient="kendall", method=WMT_SYSTEM_TEST, n_resamples=200,
                          rng=3, batch=200, return_distribution=True)
    got = compare_metrics(x, y, z, level="system", coefficient="kendall", method=WMT_SYSTEM_TEST, n_resamples=200,
                          rng=3, batch=batch, return_distribution=True)
    np.testing.assert_array_equal(got.null_distribution, ref.null_distribution)
    assert got.pvalue == ref.pvalue


def test_table_cells_equal_single_pairs():
    rng = np.random.default_rng(11)
    z = rng.normal(size=(10, 6))
    data = {"h": z, **{f"m{i}": z + rng.normal(0, 0.5 + i / 2, z.shape) for i in range(4)}}
    data["m2"][4] = np.nan
    names = [f"m{i}" for i in range(4)]
    table = compare_all_pairs(data, names, "h", level="system", coefficient="pearson", method=WMT_SYSTEM_TEST,
                              n_resamples=300, rng=9, correction="none", batch=17)
    assert table.method == WMT_SYSTEM_TEST
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                single = compare_metrics(data[a], data[b], z, level="system", coefficient="pearson",
                                         method=WMT_SYSTEM_TEST, n_resamples=300, rng=9)
                assert table.pvalue[i, j] == single.pvalue
                assert table.delta[i, j] == pytest.approx(single.delta)


def test_system_scores_as_one_column_equal_the_means():
    """The (N, 1) system scores of mt-metrics-eval's .sys files give the same test as the matrices' means."""
    x, y, z = _data()
    means = [oracles.row_means(a)[:, None] for a in (x, y, z)]
    a = compare_metrics(x, y, z, level="system", coefficient="pearson", method=WMT_SYSTEM_TEST, rng=2)
    b = compare_metrics(*means, level="system", coefficient="pearson", method=WMT_SYSTEM_TEST, rng=2)
    assert a.pvalue == b.pvalue


def test_constant_metric_is_centred_not_undefined():
    x, y, z = _data()
    flat = np.ones_like(x)
    r = compare_metrics(x, flat, z, level="system", coefficient="pearson", method=WMT_SYSTEM_TEST, rng=0)
    assert math.isnan(r.estimate_y) and math.isnan(r.pvalue)


@pytest.mark.parametrize("level, coefficient, message", [
    ("input", "pearson", "system-level scores"),
    ("global", "kendall", "system-level scores"),
    ("system", "soft-pairwise-accuracy", "segment scores"),
])
def test_refused_where_undefined(level, coefficient, message):
    x, y, z = _data()
    with pytest.raises(ValueError, match=message):
        compare_metrics(x, y, z, level=level, coefficient=coefficient, method=WMT_SYSTEM_TEST)
    with pytest.raises(ValueError, match=message):
        compare_all_pairs({"x": x, "y": y, "h": z}, ["x", "y"], "h", level=level, coefficient=coefficient,
                          method=WMT_SYSTEM_TEST)
    assert WMT_SYSTEM_TEST not in methods_for(level, coefficient)


def test_offered_and_named():
    assert WMT_SYSTEM_TEST in methods_for("system", "pearson")
    assert "williams" not in methods_for("input", "pearson")
    assert "mt-metrics-eval" in method_label(WMT_SYSTEM_TEST)
    assert method_label("perm-both") == "PERM-BOTH"


@pytest.mark.slow
def test_pvalues_uniform_under_h0():
    """Two exchangeable metrics (same noise around the humans): p ~ U(0, 1). Seeded."""
    rng = np.random.default_rng(2026)
    pvalues = []
    for _ in range(400):
        z = rng.normal(size=(15, 1))
        x = z + rng.normal(0, 1.0, z.shape)
        y = z + rng.normal(0, 1.0, z.shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pvalues.append(compare_metrics(x, y, z, level="system", coefficient="pearson", method=WMT_SYSTEM_TEST,
                                           n_resamples=199, rng=rng).pvalue)
    pvalues = np.array(pvalues)
    assert stats.kstest(pvalues, "uniform").pvalue > 0.01
    rejected = np.mean(pvalues <= 0.05)
    # Binomial(400, 0.05): 3 standard deviations around 0.05.
    assert abs(rejected - 0.05) < 3 * math.sqrt(0.05 * 0.95 / 400)


def test_default_test_follows_the_data(tmp_path, capsys):
    """WMT's test is the default at the system level on mt-metrics-eval data, PERM-BOTH elsewhere; the CLI names it."""
    import json

    from metaeval_core.cli.main import main
    from metaeval_core.data.mtme import follows_wmt, read_mtme
    from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset
    from metaeval_core.stats.significance import default_test
    from tests.mtme_replica import write_replica

    replica = write_replica(tmp_path)
    wmt = read_mtme(replica.test_set, lp="en-de")
    other = synthetic_dataset(SyntheticSpec(n_systems=6, n_judged=10, n_unjudged=0, n_annotators=2))
    assert follows_wmt(wmt) and not follows_wmt(other)
    assert default_test(wmt, "system", "pearson") == WMT_SYSTEM_TEST
    assert default_test(wmt, "input", "kendall") == "perm-both"
    assert default_test(wmt, "system", "soft-pairwise-accuracy") == "perm-both"
    assert default_test(other, "system", "pearson") == "perm-both"
    base = ["compare", "--dataset", str(replica.test_set), "--lp", "en-de", "--metrics", "BLEU-refA,COMET-22-refB",
            "--human", "mqm", "--coefficient", "pearson", "--n-resamples", "100", "--json"]
    assert main(base) in (0, None)
    assert {r["test"] for r in json.loads(capsys.readouterr().out)} == {WMT_SYSTEM_TEST}
    assert main([*base, "--test", "perm-both"]) in (0, None)
    assert {r["test"] for r in json.loads(capsys.readouterr().out)} == {"perm-both"}
    assert main([*base, "--level", "input"]) in (0, None)
    assert {r["test"] for r in json.loads(capsys.readouterr().out)} == {"perm-both"}


def test_power_simulation_offers_the_wmt_test_at_the_system_level_only():
    from metaeval_core.analyses.simulations.power import power_curve
    from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

    ds = synthetic_dataset(SyntheticSpec(n_systems=8, n_judged=12, n_unjudged=0, n_annotators=2))
    metric, human = ds.metric_measures[0], ds.human_measures[0]
    with pytest.raises(ValueError, match="tests: method 'wmt-perm-sys' swaps system-level scores"):
        power_curve(ds, metric, human, level="input", coefficient="kendall", tests=[WMT_SYSTEM_TEST],
                    ks=[0.5], n_trials=2, n_resamples=20, degrade="noise", rng=0)
    result = power_curve(ds, metric, human, level="system", coefficient="pearson", tests=[WMT_SYSTEM_TEST],
                         ks=[0.5], n_trials=3, n_resamples=20, degrade="noise", rng=0)
    assert result.to_records()[0]["test"] == WMT_SYSTEM_TEST


@pytest.mark.parametrize("coefficient", ["kendall", "pearson"])
def test_pair_nulls_stacked_across_pairs_are_each_pairs_own(coefficient):
    # The table stacks pairs that keep the same systems into one coefficient call; every pair's nulls must be the
    # ones its own two-vector computation gives (a metric without a score for one system: two groups of pairs).
    from metaeval_core.stats.significance.wmt import WmtSystemPermutation, draw_system_swaps, wmt_pair_nulls

    rng = np.random.default_rng(7)
    human = rng.normal(size=(9, 20))
    stack = [human + rng.normal(size=(9, 20)) for _ in range(5)]
    stack[2][3] = np.nan
    nulls, thresholds = wmt_pair_nulls(stack, human, coefficient=coefficient, n_resamples=130,
                                       rng=np.random.default_rng(1), batch=50)
    engine = WmtSystemPermutation(stack, human, coefficient)
    masks = draw_system_swaps(np.random.default_rng(1), 130, 9)
    pairs = [(a, b) for a in range(5) for b in range(a + 1, 5)]
    for u, (a, b) in enumerate(pairs):
        alone = np.concatenate([engine.deltas(a, b, masks[s:s + 50]) for s in range(0, 130, 50)])
        np.testing.assert_array_equal(nulls[u], alone)
        assert thresholds[u] == engine.observed(a, b)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kendall_swap_tables_equal_the_row_kernel_with_ties(seed):
    # Kendall's nulls come from per-system-pair tables (four swap configurations); ties in the metrics, in the human
    # scores and between the two metrics' z-scores must give the row kernel's tau-b bit for bit.
    from metaeval_core.stats.significance.wmt import WmtSystemPermutation, draw_system_swaps, wmt_pair_nulls

    rng = np.random.default_rng(seed)
    human = rng.integers(0, 4, size=(12, 1)).astype(float)  # system scores with ties
    stack = [rng.integers(0, 5, size=(12, 1)).astype(float) for _ in range(4)]
    stack.append(stack[0].copy())  # identical metrics: every swap a no-op
    stack.append(np.full((12, 1), 2.0))  # constant: centred only, tau undefined
    nulls, _ = wmt_pair_nulls(stack, human, coefficient="kendall", n_resamples=300, rng=np.random.default_rng(3),
                              batch=70)
    engine = WmtSystemPermutation(stack, human, "kendall")
    masks = draw_system_swaps(np.random.default_rng(3), 300, 12)
    pairs = [(a, b) for a in range(6) for b in range(a + 1, 6)]
    for u, (a, b) in enumerate(pairs):
        np.testing.assert_array_equal(nulls[u], engine.deltas(a, b, masks))
