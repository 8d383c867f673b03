"""docs/methods.md sec. 10: improvement probability, judgment planning, significance clusters, system influence.

Fast code is checked against slow readable oracles (plain loops, a textbook PAVA) and
against properties: monotone curves, probabilities in [0, 1], shrinking widths, the smallest
design meeting a target, planted outliers found, seeds reproducible, messages naming the
parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval_core.stats.correlation import correlate
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.stats.pairs import draw_delta_resamples
from metaeval_core.analyses.practice import (
    ImprovementResult,
    PlanResult,
    SignificanceClusters,
    _recommend,
    fit_agreement_curve,
    improvement_probability,
    pair_agreement,
    plan_judgments,
    significance_clusters,
    system_influence,
)
from metaeval_core.stats.significance import PairwiseTable, compare_all_pairs
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

HUMAN = "human.quality"


# ------------------------------------------------------------------------------------------
# Oracles
# ------------------------------------------------------------------------------------------
def pava_oracle(values, weights):
    """Textbook pool-adjacent-violators: merge adjacent blocks while they decrease."""
    blocks = [[float(v), float(w), 1] for v, w in zip(values, weights)]  # mean, weight, knots
    i = 0
    while i < len(blocks) - 1:
        if blocks[i][0] > blocks[i + 1][0]:
            m1, w1, c1 = blocks[i]
            m2, w2, c2 = blocks[i + 1]
            blocks[i] = [(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, c1 + c2]
            del blocks[i + 1]
            i = max(i - 1, 0)
        else:
            i += 1
    out = []
    for mean, _, count in blocks:
        out.extend([mean] * count)
    return np.array(out)


def curve_oracle(x_means, z_means, human_ties="half"):
    """Knots and fitted values from loops over system pairs."""
    by_knot: dict[float, list[float]] = {}
    n = len(x_means)
    for a in range(n):
        for b in range(a + 1, n):
            dx, dz = x_means[a] - x_means[b], z_means[a] - z_means[b]
            if dx == 0 or math.isnan(dx) or math.isnan(dz):
                continue
            if dz == 0:
                if human_ties == "exclude":
                    continue
                agree = 0.5
            elif (dx > 0) == (dz > 0):
                agree = 1.0
            else:
                agree = 0.0
            by_knot.setdefault(abs(dx), []).append(agree)
    knots = np.array(sorted(by_knot))
    if knots.size == 0:
        return knots, knots
    means = [np.mean(by_knot[k]) for k in knots]
    weights = [len(by_knot[k]) for k in knots]
    return knots, pava_oracle(means, weights)


def loop_means(matrix, columns):
    return np.array([np.nanmean(matrix[i, columns]) for i in range(matrix.shape[0])])


def exact_loop_means(matrix, columns):
    """Human means of integer ratings in rational arithmetic, rounded once (docs/methods.md sec. 15)."""
    from fractions import Fraction

    def rational(v):  # the nearest fraction with a small denominator when v is one, else v itself
        near = Fraction(v).limit_denominator(60)
        return near if abs(float(near) - v) <= 1e-9 * max(1.0, abs(v)) else Fraction(v)

    out = []
    for i in range(matrix.shape[0]):
        row = [rational(v) for v in np.atleast_1d(matrix[i, columns]) if np.isfinite(v)]
        out.append(float(sum(row, Fraction(0)) / len(row)) if row else np.nan)
    return np.array(out)


def improvement_oracle(dataset, metric, human, delta, *, method, seed, n_resamples, confidence_level=0.95,
                       pool="judged"):
    x_mat, z_mat = dataset.matrix(metric, pool=pool), dataset.matrix(human)
    n = x_mat.shape[0]
    knots, fit = curve_oracle(loop_means(x_mat, slice(None)), exact_loop_means(z_mat, slice(None)))
    estimate = float(np.interp(abs(delta), knots, fit))
    draws = draw_delta_resamples(np.random.default_rng(seed), method=method, n_systems=n,
                                 n_metric_inputs=x_mat.shape[1], n_human_inputs=z_mat.shape[1],
                                 paired_inputs=(pool == "judged"), n_resamples=n_resamples)
    values = []
    for s in range(n_resamples):
        cx = draws.metric_inputs[s] if draws.metric_inputs is not None else np.arange(x_mat.shape[1])
        cz = draws.human_inputs[s] if draws.human_inputs is not None else np.arange(z_mat.shape[1])
        xm, zm = loop_means(x_mat, cx), exact_loop_means(z_mat, cz)
        if draws.systems is not None:
            xm, zm = xm[draws.systems[s]], zm[draws.systems[s]]
        k, f = curve_oracle(xm, zm)
        if k.size:
            values.append(float(np.interp(abs(delta), k, f)))
    alpha = 1 - confidence_level
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return estimate, float(low), float(high)


def small_dataset(x_means, z_means, *, m=4, name="m"):
    """A dataset whose every input scores each system at the given means."""
    n = len(x_means)
    x = np.asarray(x_means, dtype=float)[:, None] + np.zeros((n, m))
    z = np.asarray(z_means, dtype=float)[:, None] + np.zeros((n, m))
    return Dataset(id="small", systems=[f"s{i}" for i in range(n)], inputs=[f"d{j}" for j in range(m)],
                   measures={name: Measure(name, "metric", x), "h": Measure("h", "human", z)})


@pytest.fixture(scope="module")
def demo_small():
    """A quick synthetic dataset: 10 systems, 40 judged inputs, a modest unjudged pool."""
    return synthetic_dataset(SyntheticSpec(n_systems=10, n_judged=40, n_unjudged=60, seed=4), id="small-demo")


# ------------------------------------------------------------------------------------------
# Agreement curve
# ------------------------------------------------------------------------------------------
def test_isotonic_fit_matches_pava_oracle():
    rng = np.random.default_rng(1)
    for _ in range(30):
        adx = rng.choice(np.round(rng.uniform(0, 5, 12), 1), size=40)
        agr = rng.choice([0.0, 0.5, 1.0], size=40, p=[0.3, 0.1, 0.6])
        curve = fit_agreement_curve(adx, agr)
        knots = np.unique(adx)
        means = [agr[adx == k].mean() for k in knots]
        weights = [(adx == k).sum() for k in knots]
        np.testing.assert_allclose(curve.knots, knots)
        np.testing.assert_allclose(curve.fit, pava_oracle(means, weights), atol=1e-12)
        assert np.all(np.diff(curve.fit) >= -1e-12)
        assert curve.n_pairs == 40
        # Block support: pairs in the block of each knot sum to the block's weights.
        for k, knot in enumerate(curve.knots):
            assert curve.support(knot) == curve.weight[curve.block == curve.block[k]].sum()


def test_pair_agreement_ties():
    adx, agr, usable = pair_agreement([1.0, -2.0, 0.0, 3.0, 1.0], [2.0, 1.0, 1.0, 0.0, np.nan])
    np.testing.assert_array_equal(adx, [1, 2, 0, 3, 1])
    np.testing.assert_array_equal(agr[[0, 1, 3]], [1.0, 0.0, 0.5])  # index 2 is a metric tie: unused
    np.testing.assert_array_equal(usable, [True, True, False, True, False])
    _, _, usable = pair_agreement([1.0, -2.0, 0.0, 3.0], [2.0, 1.0, 1.0, 0.0], human_ties="exclude")
    np.testing.assert_array_equal(usable, [True, True, False, False])


def test_human_tie_counts_half():
    # Means: metric 1 < 2 < 3; humans 1, 1, 2: pair (0, 1) tied in the human.
    ds = small_dataset([1.0, 2.0, 3.0], [1.0, 1.0, 2.0])
    half = improvement_probability(ds, "m", "h", delta=1.0, n_resamples=20, rng=0, method="boot-inputs")
    excl = improvement_probability(ds, "m", "h", delta=1.0, n_resamples=20, rng=0, method="boot-inputs",
                                   human_ties="exclude")
    assert half.total_pairs == 3 and excl.total_pairs == 2
    # |dx| = 1 pairs: (0,1) half, (1,2) agree -> 0.75; |dx| = 2 pair agrees -> 1.
    assert half.probability == pytest.approx(0.75)
    assert excl.probability == pytest.approx(1.0)
    assert sorted(half.pair_agreement.tolist()) == [0.5, 1.0, 1.0]


# ------------------------------------------------------------------------------------------
# improvement_probability
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["boot-both", "boot-inputs", "boot-systems"])
def test_improvement_matches_loop_oracle(demo_small, method):
    result = improvement_probability(demo_small, "metric.good", HUMAN, delta=2.5, method=method, n_resamples=60,
                                     rng=11)
    estimate, low, high = improvement_oracle(demo_small, "metric.good", HUMAN, 2.5, method=method, seed=11,
                                             n_resamples=60)
    assert result.probability == pytest.approx(estimate, abs=1e-12)
    assert result.low == pytest.approx(low, abs=1e-12)
    assert result.high == pytest.approx(high, abs=1e-12)


def test_improvement_pool_all_matches_oracle(demo_small):
    result = improvement_probability(demo_small, "metric.fair", HUMAN, delta=-1.5, pool="all", n_resamples=40,
                                     rng=5)
    estimate, low, high = improvement_oracle(demo_small, "metric.fair", HUMAN, 1.5, method="boot-both", seed=5,
                                             n_resamples=40, pool="all")
    assert (result.probability, result.low, result.high) == pytest.approx((estimate, low, high), abs=1e-12)
    assert result.delta == -1.5 and result.pool == "all"


def test_improvement_properties(demo):
    deltas = [0.05, 0.3, 1.0, 2.0, 4.0, 8.0]
    for metric in ("metric.strong", "metric.weak", "metric.noise"):
        probs = []
        for d in deltas:
            r = improvement_probability(demo, metric, HUMAN, delta=d, n_resamples=200, rng=3)
            assert isinstance(r, ImprovementResult)
            assert 0.0 <= r.probability <= 1.0
            assert 0.0 <= r.low <= r.probability <= r.high <= 1.0
            assert r.n_pairs >= 1 and r.window_pairs <= r.total_pairs == 120
            probs.append(r.probability)
        assert np.all(np.diff(probs) >= 0)  # monotone in |delta|
        # The curve and its pointwise band are monotone; the curve passes through the estimate.
        assert np.all(np.diff(r.curve) >= -1e-12)
        assert np.all(np.diff(r.curve_low) >= -1e-12) and np.all(np.diff(r.curve_high) >= -1e-12)
        assert np.all(r.curve_low <= r.curve_high)
        # From the smallest observed gap, not 0 (issue 14: no curve value is drawn at d = 0).
        assert r.grid[0] == pytest.approx(r.pair_abs_dx.min()) and r.grid[-1] == pytest.approx(r.pair_abs_dx.max())


def test_strong_metric_probability_increases_with_delta(demo):
    small = improvement_probability(demo, "metric.strong", HUMAN, delta=0.1, n_resamples=200, rng=0)
    large = improvement_probability(demo, "metric.strong", HUMAN, delta=5.0, n_resamples=200, rng=0)
    assert large.probability > small.probability
    assert large.probability > 0.95 and large.low > 0.8
    # A strong metric beats a weak one at the same moderate gap.
    weak = improvement_probability(demo, "metric.noise", HUMAN, delta=1.0, n_resamples=200, rng=0)
    strong = improvement_probability(demo, "metric.strong", HUMAN, delta=1.0, n_resamples=200, rng=0)
    assert strong.probability > weak.probability


def test_improvement_sign_extrapolation_and_support(demo):
    pos = improvement_probability(demo, "metric.good", HUMAN, delta=1.2, n_resamples=50, rng=2)
    neg = improvement_probability(demo, "metric.good", HUMAN, delta=-1.2, n_resamples=50, rng=2)
    assert (pos.probability, pos.low, pos.high) == (neg.probability, neg.low, neg.high)
    huge = improvement_probability(demo, "metric.good", HUMAN, delta=1e6, n_resamples=50, rng=2)
    assert huge.extrapolated and not pos.extrapolated
    assert huge.probability == pytest.approx(huge.fitted.fit[-1])
    window = ((pos.pair_abs_dx >= 0.6) & (pos.pair_abs_dx <= 2.4)).sum()
    assert pos.window_pairs == window
    assert pos.n_pairs == pos.fitted.support(1.2)


def test_improvement_reproducible_and_batch_invariant(demo_small):
    a = improvement_probability(demo_small, "metric.good", HUMAN, delta=1.0, n_resamples=50, rng=7)
    b = improvement_probability(demo_small, "metric.good", HUMAN, delta=1.0, n_resamples=50,
                                rng=np.random.default_rng(7), batch=3)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    np.testing.assert_array_equal(a.curve_low, b.curve_low)
    c = improvement_probability(demo_small, "metric.good", HUMAN, delta=1.0, n_resamples=50, rng=8)
    assert not np.array_equal(a.distribution, c.distribution)


def test_improvement_to_dict(demo_small):
    r = improvement_probability(demo_small, "metric.good", HUMAN, delta=1.0, n_resamples=20, rng=0)
    d = r.to_dict()
    assert {"probability", "low", "high", "n_pairs"} <= set(d) and "curve" not in d
    d = r.to_dict(curve=True)
    assert len(d["curve"]) == r.grid.size and len(d["pairs"]) == r.total_pairs
    assert set(d["pairs"][0]) == {"system_a", "system_b", "abs_dx", "agreement"}


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        (dict(delta=0.0), ValueError, "delta"),
        (dict(delta=float("nan")), ValueError, "delta"),
        (dict(delta="1"), TypeError, "delta"),
        (dict(delta=1.0, pool="some"), ValueError, "pool"),
        (dict(delta=1.0, method="fisher"), ValueError, "method"),
        (dict(delta=1.0, human_ties="zero"), ValueError, "human_ties"),
        (dict(delta=1.0, n_resamples=0), ValueError, "n_resamples"),
        (dict(delta=1.0, confidence_level=1.0), ValueError, "confidence_level"),
        (dict(delta=1.0, rng="seed"), TypeError, "rng"),
        (dict(delta=1.0, batch=0), ValueError, "batch"),
    ],
)
def test_improvement_validation(demo_small, kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        improvement_probability(demo_small, "metric.good", HUMAN, **kwargs)


def test_improvement_validation_measures(demo_small):
    with pytest.raises(DatasetError, match="not a human measure"):
        improvement_probability(demo_small, "metric.good", "metric.fair", delta=1.0)
    with pytest.raises(TypeError, match="dataset"):
        improvement_probability({}, "metric.good", HUMAN, delta=1.0)


# ------------------------------------------------------------------------------------------
# plan_judgments
# ------------------------------------------------------------------------------------------
def test_plan_widths_shrink_and_recommendation(demo):
    result = plan_judgments(demo, "metric.strong", HUMAN, input_sizes=[100, 10, 40], target_width=0.5,
                            n_resamples=150, n_trials=10, rng=1)
    assert isinstance(result, PlanResult)
    table = result.table
    assert [r["n_inputs"] for r in table] == [10, 40, 100] and {r["n_systems"] for r in table} == {16}
    widths = [r["width_mean"] for r in table]
    assert widths[0] > widths[1] > widths[2]
    assert all(0.0 <= r["power"] <= 1.0 for r in table)
    meeting = [r for r in table if r["width_mean"] <= 0.5]
    rec = result.recommendation
    if meeting:
        assert rec.reached and rec.n_inputs == min(r["n_inputs"] for r in meeting)
    else:
        assert not rec.reached


def test_plan_power_grows_with_inputs(demo):
    result = plan_judgments(demo, "metric.strong", HUMAN, input_sizes=[5, 100], target_power=0.8,
                            n_resamples=150, n_trials=12, rng=2)
    low, high = (r["power"] for r in result.table)
    assert high >= low and high >= 0.8
    assert result.recommendation.reached
    assert result.versus.startswith("metric.strong + system offsets")
    vs = plan_judgments(demo, "metric.strong", HUMAN, input_sizes=[100], versus="metric.noise", n_resamples=150,
                        n_trials=5, rng=2)
    assert vs.table[0]["power"] == 1.0 and vs.versus == "metric.noise"


def test_plan_systems_axis_and_unreached(demo_small):
    result = plan_judgments(demo_small, "metric.good", HUMAN, input_sizes=[10, 40], system_sizes=[5, 10],
                            target_width=0.01, power=False, n_resamples=50, n_trials=4, rng=0)
    assert [(r["n_inputs"], r["n_systems"]) for r in result.table] == [(10, 5), (40, 5), (10, 10), (40, 10)]
    assert all(r["power"] is None for r in result.table)
    assert not result.recommendation.reached
    assert "not reached within the dataset's size" in result.recommendation.message
    d = result.to_dict()
    assert d["recommendation"]["reached"] is False and len(d["table"]) == 4


def test_plan_reproducible(demo_small):
    kwargs = dict(input_sizes=[10, 20], n_resamples=40, n_trials=3)
    a = plan_judgments(demo_small, "metric.good", HUMAN, rng=5, **kwargs)
    b = plan_judgments(demo_small, "metric.good", HUMAN, rng=np.random.default_rng(5), **kwargs)
    assert a.table == b.table
    c = plan_judgments(demo_small, "metric.good", HUMAN, rng=6, **kwargs)
    assert a.table != c.table


def test_recommend_smallest_design():
    rows = [
        {"n_inputs": 10, "n_systems": 8, "width_mean": 0.6, "power": 0.5},
        {"n_inputs": 50, "n_systems": 8, "width_mean": 0.35, "power": 0.9},
        {"n_inputs": 100, "n_systems": 8, "width_mean": 0.3, "power": 0.95},
        {"n_inputs": 20, "n_systems": 16, "width_mean": 0.38, "power": 0.85},  # 320 cells < 400
        {"n_inputs": 30, "n_systems": 16, "width_mean": 0.33, "power": 0.92},
    ]
    rec = _recommend(rows, 0.4, None, [10, 20, 30, 50, 100], [8, 16])
    assert (rec.reached, rec.n_inputs, rec.n_systems) == (True, 20, 16)
    rec = _recommend(rows, None, 0.9, [10, 20, 30, 50, 100], [8, 16])
    assert (rec.n_inputs, rec.n_systems) == (50, 8)  # 400 judged cells < 30 x 16 = 480
    rec = _recommend(rows, 0.34, 0.9, [10, 20, 30, 50, 100], [8, 16])
    assert (rec.n_inputs, rec.n_systems) == (30, 16)
    rec = _recommend(rows, 0.1, None, [10, 20, 30, 50, 100], [8, 16])
    assert not rec.reached and "not reached" in rec.message
    assert not _recommend(rows, None, None, [10], [8]).reached


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        (dict(input_sizes=[10, 41]), ValueError, "input_sizes"),
        (dict(input_sizes=[1]), ValueError, "input_sizes"),
        (dict(input_sizes=[]), TypeError, "input_sizes"),
        (dict(input_sizes=[10.5]), TypeError, "input_sizes"),
        (dict(input_sizes=[10], system_sizes=[2]), ValueError, "system_sizes"),
        (dict(input_sizes=[10], target_width=0.0), ValueError, "target_width"),
        (dict(input_sizes=[10], target_power=1.0), ValueError, "target_power"),
        (dict(input_sizes=[10], target_power=0.8, power=False), ValueError, "target_power"),
        (dict(input_sizes=[10], noise=0), ValueError, "noise"),
        (dict(input_sizes=[10], alpha=2), ValueError, "alpha"),
        (dict(input_sizes=[10], ci_method="fisher"), ValueError, "ci_method"),
        (dict(input_sizes=[10], coefficient="tau"), ValueError, "coefficient"),
        (dict(input_sizes=[10], n_trials=0), ValueError, "n_trials"),
        (dict(input_sizes=[10], versus="metric.good"), ValueError, "versus"),
    ],
)
def test_plan_validation(demo_small, kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        plan_judgments(demo_small, "metric.good", HUMAN, **kwargs)


# ------------------------------------------------------------------------------------------
# significance_clusters
# ------------------------------------------------------------------------------------------
def table_from(significant, estimates, names=None):
    significant = np.asarray(significant, dtype=bool)
    k = significant.shape[0]
    names = tuple(names or "ABCDEFGH"[:k])
    est = np.asarray(estimates, dtype=float)
    p = np.where(significant, 0.001, 0.5)
    np.fill_diagonal(p, np.nan)
    return PairwiseTable(
        metrics=names, human="h", estimates=est, delta=est[:, None] - est[None, :], pvalue=p,
        pvalue_corrected=p, significant=significant, significant_corrected=significant, alpha=0.05,
        correction="none", family="none", method="perm-both", alternative="greater", level="system",
        coefficient="kendall", n_resamples=1000, n_defined=np.zeros((k, k), dtype=int),
    )


def test_clusters_hand_built():
    # A > C and B > D significantly; A does not beat B; C does not beat D.
    sig = np.zeros((4, 4), dtype=bool)
    sig[0, 2] = sig[1, 3] = sig[0, 3] = True
    result = significance_clusters(table_from(sig, [0.9, 0.8, 0.6, 0.5]))
    assert isinstance(result, SignificanceClusters)
    assert result.clusters == (("A", "B"), ("C", "D"))
    assert result.rank.tolist() == [1, 1, 2, 2]
    # Estimates out of table order: sorting comes first.
    result = significance_clusters(table_from(sig[[2, 0, 3, 1]][:, [2, 0, 3, 1]], [0.6, 0.9, 0.5, 0.8],
                                              names="CADB"))
    assert result.clusters == (("A", "B"), ("C", "D"))


def test_clusters_chain_and_extremes():
    k = 4
    none = np.zeros((k, k), dtype=bool)
    assert significance_clusters(table_from(none, [0.4, 0.3, 0.2, 0.1])).clusters == (("A", "B", "C", "D"),)
    every = np.triu(np.ones((k, k), dtype=bool), 1)  # each beats all below it
    assert significance_clusters(table_from(every, [0.4, 0.3, 0.2, 0.1])).rank.tolist() == [1, 2, 3, 4]
    # Chain: A > C only. B joins A; C is beaten by A (in the cluster) -> new; D joins C.
    chain = np.zeros((k, k), dtype=bool)
    chain[0, 2] = True
    assert significance_clusters(table_from(chain, [0.4, 0.3, 0.2, 0.1])).clusters == (("A", "B"), ("C", "D"))
    # B > D only: D is beaten by B, a member of the top cluster {A, B, C}.
    late = np.zeros((k, k), dtype=bool)
    late[1, 3] = True
    assert significance_clusters(table_from(late, [0.4, 0.3, 0.2, 0.1])).clusters == (("A", "B", "C"), ("D",))


def test_clusters_corrected_vs_raw_and_nan():
    sig_raw = np.zeros((3, 3), dtype=bool)
    sig_raw[0, 1] = sig_raw[0, 2] = True
    table = table_from(sig_raw, [0.5, np.nan, 0.3])
    table = PairwiseTable(**{**table.__dict__, "significant_corrected": np.zeros((3, 3), dtype=bool)})
    raw = significance_clusters(table, use_corrected=False)
    assert raw.metrics == ("A", "C", "B")  # undefined estimate last
    assert raw.clusters == (("A",), ("C", "B"))
    assert significance_clusters(table).clusters == (("A", "C", "B"),)
    override = significance_clusters(table, use_corrected=False, estimates=[0.1, 0.2, 0.3])
    assert override.metrics == ("C", "B", "A")
    records = raw.to_records()
    assert records[2] == {"metric": "B", "estimate": None, "rank": 2}


def test_clusters_from_compare_all_pairs(demo):
    metrics = ["metric.noise", "metric.strong", "metric.weak", "metric.good"]
    table = compare_all_pairs(demo, metrics, HUMAN, level="system", coefficient="kendall", method="perm-both",
                              n_resamples=300, rng=0)
    result = significance_clusters(table)
    assert result.metrics[0] == "metric.strong" and result.metrics[-1] == "metric.noise"
    assert result.rank[0] == 1 and result.rank[-1] > 1
    sig = table.significant_corrected
    index = {m: i for i, m in enumerate(table.metrics)}
    for cluster in result.clusters:  # no metric significantly beaten inside its cluster
        for a in cluster:
            for b in cluster:
                assert not sig[index[a], index[b]] or a == b


def test_clusters_validation():
    table = table_from(np.zeros((2, 2), dtype=bool), [0.1, 0.2])
    with pytest.raises(TypeError, match="table"):
        significance_clusters({"metrics": ()})
    with pytest.raises(TypeError, match="use_corrected"):
        significance_clusters(table, use_corrected="yes")
    with pytest.raises(ValueError, match="estimates"):
        significance_clusters(table, estimates=[0.1])


# ------------------------------------------------------------------------------------------
# system_influence
# ------------------------------------------------------------------------------------------
def with_outlier(dataset: Dataset, metric: str) -> tuple[Dataset, str]:
    """Give the best human-rated system the lowest metric scores by far."""
    z = dataset.matrix(HUMAN)
    best = int(np.argmax(np.nanmean(z, axis=1)))
    measures = dict(dataset.measures)
    x = dataset.measure(metric).scores.copy()
    x[best] = np.nanmin(x) - 30.0
    measures[metric] = Measure(metric, "metric", x)
    planted = Dataset(id="planted", systems=dataset.systems, inputs=dataset.inputs, measures=measures,
                      system_attributes=dataset.system_attributes)
    return planted, dataset.systems[best]


@pytest.mark.parametrize("coefficient", ["kendall", "pearson", "spearman"])
def test_influence_finds_planted_outlier(demo, coefficient):
    planted, outlier = with_outlier(demo, "metric.strong")
    result = system_influence(planted, "metric.strong", HUMAN, coefficient=coefficient)
    assert result.most_influential == outlier
    k = result.systems.index(outlier)
    assert result.change[k] > 0.1 and result.flagged[k]
    assert "|change| > 0.1" in result.reasons[k]


@pytest.mark.parametrize("level", ["system", "input", "global"])
def test_influence_matches_loop_oracle(demo_small, level):
    result = system_influence(demo_small, "metric.fair", HUMAN, level=level, coefficient="kendall")
    full = correlate(demo_small, "metric.fair", HUMAN, level=level, coefficient="kendall").estimate
    assert result.estimate == pytest.approx(full, abs=1e-12)
    for i, name in enumerate(demo_small.systems):
        rest = demo_small.subset(systems=[s for s in demo_small.systems if s != name])
        expected = correlate(rest, "metric.fair", HUMAN, level=level, coefficient="kendall").estimate
        assert result.without[i] == pytest.approx(expected, abs=1e-12)
        assert result.change[i] == pytest.approx(expected - full, abs=1e-12)


def test_influence_pool_all_and_subset(demo_small):
    result = system_influence(demo_small, "metric.fair", HUMAN, pool="all", systems="type=abs",
                              coefficient="pearson")
    abs_ds = demo_small.select_systems("type=abs")
    assert result.systems == abs_ds.systems
    name = abs_ds.systems[0]
    rest = abs_ds.subset(systems=list(abs_ds.systems[1:]))
    expected = correlate(rest, "metric.fair", HUMAN, coefficient="pearson", pool="all").estimate
    assert result.without[0] == pytest.approx(expected, abs=1e-12) and result.pool == "all" and name


def test_influence_intervals_flag_and_reproducible(demo):
    planted, outlier = with_outlier(demo, "metric.strong")
    a = system_influence(planted, "metric.strong", HUMAN, with_intervals=True, threshold=1.0, n_resamples=200,
                         method="boot-inputs", rng=4)
    k = a.systems.index(outlier)
    assert np.isfinite(a.low) and a.low <= a.estimate <= a.high
    assert np.all(np.isfinite(a.low_without)) and np.all(a.low_without <= a.high_without)
    assert a.without[k] > a.high and a.flagged[k] and a.reasons[k] == "outside the full interval"
    assert a.ci_method == "boot-inputs"
    b = system_influence(planted, "metric.strong", HUMAN, with_intervals=True, threshold=1.0, n_resamples=200,
                         method="boot-inputs", rng=np.random.default_rng(4))
    np.testing.assert_array_equal(a.low_without, b.low_without)
    plain = system_influence(planted, "metric.strong", HUMAN)
    assert np.all(np.isnan(plain.low_without)) and plain.ci_method is None
    d = a.to_dict()
    assert d["most_influential"] == outlier and len(d["systems"]) == 16


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        (dict(level="summary"), ValueError, "level"),
        (dict(coefficient="tau"), ValueError, "coefficient"),
        (dict(pool="some"), ValueError, "pool"),
        (dict(threshold=-0.1), ValueError, "threshold"),
        (dict(with_intervals=1), TypeError, "with_intervals"),
        (dict(method="perm-both"), ValueError, "method"),
        (dict(n_resamples=0), ValueError, "n_resamples"),
        (dict(confidence_level=0), ValueError, "confidence_level"),
    ],
)
def test_influence_validation(demo_small, kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        system_influence(demo_small, "metric.good", HUMAN, **kwargs)


def _plan_row(m, n, width, power, trials=20, sd=0.1):
    return {"n_inputs": m, "n_systems": n, "width_mean": width, "width_sd": sd, "power": power,
            "estimate_mean": 0.5, "n_trials": trials, "n_width_defined": trials}


def test_recommendation_needs_every_larger_design_to_meet_the_target():
    """Issue 24, HANNA's table: 50 inputs x 10 systems had power 0.80 but all 96 inputs 0.60; one noisy cell must
    not be recommended."""
    from metaeval_core.analyses.practice import recommend_design

    hanna = [_plan_row(20, 10, 1.18, 0.45), _plan_row(50, 10, 1.08, 0.80), _plan_row(96, 10, 0.98, 0.60),
             _plan_row(50, 8, 1.26, 0.60), _plan_row(96, 8, 1.15, 0.50)]
    rec = recommend_design(hanna, target_width=1.25, target_power=0.8)
    assert not rec.reached and rec.isolated == ((50, 10),)
    assert "not reached" in rec.message and "50 x 10 met it alone" in rec.message
    # With the larger design meeting it too, the smaller one is recommended, and it is said to be borderline
    # (power 0.80 at the target, Monte-Carlo se sqrt(0.8 * 0.2 / 20) = 0.09).
    fixed = [*hanna[:2], _plan_row(96, 10, 0.98, 0.95), *hanna[3:]]
    rec = recommend_design(fixed, target_width=1.25, target_power=0.8)
    assert rec.reached and (rec.n_inputs, rec.n_systems) == (50, 10) and rec.borderline and not rec.isolated
    # a design is recommended only if every design with at least as many inputs and systems meets the target
    for target_power in (0.3, 0.5, 0.6, 0.8):
        rec = recommend_design(fixed, target_power=target_power)
        if rec.reached:
            assert all(r["power"] >= target_power for r in fixed
                       if r["n_inputs"] >= rec.n_inputs and r["n_systems"] >= rec.n_systems)
    clear = recommend_design([_plan_row(10, 5, 0.5, 1.0), _plan_row(20, 5, 0.4, 1.0)], target_power=0.8)
    assert clear.reached and not clear.borderline and clear.n_inputs == 10


# -- leave-one-system-out plans (issue 23) --------------------------------------------------------------------
def _random_dataset(n_systems: int, n_inputs: int, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    return Dataset(id="random", systems=tuple(f"s{i}" for i in range(n_systems)),
                   inputs=tuple(f"d{j}" for j in range(n_inputs)),
                   measures={"human": Measure("human", "human", np.round(rng.random((n_systems, n_inputs)), 1)),
                             "metric": Measure("metric", "metric", rng.random((n_systems, n_inputs)))})


@pytest.mark.parametrize("level", ["input", "global"])
def test_influence_is_the_same_in_any_chunk_of_removals(level, monkeypatch):
    from metaeval_core.analyses.practice import influence

    data = _random_dataset(9, 6)
    whole = system_influence(data, "metric", "human", level=level)
    monkeypatch.setattr(influence, "_STACK_BUDGET", 1)  # one removal at a time
    np.testing.assert_array_equal(system_influence(data, "metric", "human", level=level).without, whole.without)


def test_influence_refuses_runs_beyond_its_budget_up_front():
    # 2,000 systems x 30 inputs: 2,000 input-level correlations on 1,999 x 30 cells each (1.2e8 values).
    with pytest.raises(ValueError, match=r"recomputes 2,000 correlations .*; use the system level"):
        system_influence(_random_dataset(2000, 30), "metric", "human", level="input")
    with pytest.raises(ValueError, match="leave the intervals out"):
        system_influence(_random_dataset(100, 100), "metric", "human", with_intervals=True, n_resamples=3000)
    with pytest.raises(ValueError, match="system level .* on every leave-one-out set"):
        system_influence(_random_dataset(500, 2), "metric", "human", coefficient="tie-calibrated-accuracy")


def test_plan_estimate_grows_with_designs_and_prices_large_system_counts():
    from metaeval_core.analyses.practice import estimated_plan_seconds

    small = estimated_plan_seconds([(100, 16)], n_trials=20, n_resamples=200)
    assert 0 < small < estimated_plan_seconds([(100, 16), (50, 16)], n_trials=20, n_resamples=200)
    # Beyond 150 systems every resample's Kendall goes to scipy: about 1.7 ms for the interval, twice more for power.
    big = estimated_plan_seconds([(10, 1000)], n_trials=5, n_resamples=200)
    assert 4 < big < 7  # measured 5.2 s on the shared machine
    assert estimated_plan_seconds([(10, 1000)], n_trials=5, n_resamples=200, power=False) < big / 2


@pytest.mark.parametrize("power", [True, False])
def test_plan_estimate_counts_the_work_the_plan_does(power, monkeypatch):
    """The price follows the plan's kernel calls: per interval or test run, per resample, per resampled cell (the
    first model priced cells only and came out 2.5x to 14x low on plans of many small trials, issue 28)."""
    from types import SimpleNamespace

    from metaeval_core.analyses.practice import estimated_plan_seconds, planning

    runs = []

    def interval(x, z, *, n_resamples, **kwargs):
        runs.append((n_resamples, x.size))
        return SimpleNamespace(low=0.0, high=0.5, estimate=0.2)

    def test(x, y, z, *, n_resamples, **kwargs):
        runs.append((n_resamples, x.size))
        return SimpleNamespace(pvalue=0.5)

    monkeypatch.setattr(planning, "confidence_interval", interval)
    monkeypatch.setattr(planning, "compare_metrics", test)
    data = _random_dataset(12, 30)
    designs = [(5, 4), (30, 4), (5, 12), (30, 12)]
    for trials, k in ((3, 40), (7, 400)):
        runs.clear()
        planning.plan_judgments(data, "metric", "human", input_sizes=[5, 30], system_sizes=[4, 12], n_trials=trials,
                                n_resamples=k, power=power, rng=0)
        assert len(runs) == len(designs) * trials * (2 if power else 1)
        work = (len(runs) * planning._PLAN_SECONDS_PER_CALL
                + sum(n for n, _ in runs) * planning._PLAN_SECONDS_PER_RESAMPLE
                + sum(n * cells for n, cells in runs) * planning._PLAN_SECONDS_PER_CELL)
        assert estimated_plan_seconds(designs, n_trials=trials, n_resamples=k, power=power) == pytest.approx(work)


def test_pair_resolution_from_tie_groups_equals_enumerating_each_set():
    """The O(N log N) count of untied pairs per leave-one-out set equals enumerating them (the O(N^3) loop that
    took minutes at 2,000 systems), with ties and missing means."""
    from metaeval_core.analyses.practice.influence import _pair_resolution
    from metaeval_core.stats.correlation import nanmean_last

    def enumerated(x, z, keep):
        xm, zm = nanmean_last(x), nanmean_last(z)
        steps = []
        for rows in keep:
            a, b = xm[rows], zm[rows]
            ok = np.isfinite(a) & np.isfinite(b)
            a, b = a[ok], b[ok]
            untied_x = sum(a[i] != a[j] for i in range(a.size) for j in range(i))
            untied_z = sum(b[i] != b[j] for i in range(b.size) for j in range(i))
            if untied_x * untied_z > 0:
                steps.append(2.0 / math.sqrt(untied_x * untied_z))
        return max(steps) if steps else math.nan

    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(3, 10))
        x = np.round(rng.random((n, 2)) * rng.integers(1, 4))
        z = np.round(rng.random((n, 2)) * 3)
        x[rng.random(x.shape) < 0.15] = np.nan
        z[rng.random(z.shape) < 0.15] = np.nan
        keep = np.array([np.delete(np.arange(n), i) for i in range(n)])
        assert _pair_resolution(x, z, keep) == pytest.approx(enumerated(x, z, keep), nan_ok=True)
