"""Correlation matrix, annotator agreement, high-scoring range and normality (docs/methods.md sec. 8)
against slow readable references on small data."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from metaeval_core.analyses.papers import (
    ALPHA_NOTE,
    alpha_note,
    annotator_agreement,
    correlation_matrix,
    high_range,
    krippendorff_interval,
    normality_table,
)
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def corr_or_nan(coefficient, x, z):
    x, z = np.asarray(x, float), np.asarray(z, float)
    keep = ~np.isnan(x) & ~np.isnan(z)
    x, z = x[keep], z[keep]
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(z) == 0:
        return math.nan
    return float(SCIPY[coefficient](x, z)[0])


@pytest.fixture(scope="module")
def small():
    spec = SyntheticSpec(n_systems=6, n_judged=12, n_unjudged=4, n_extractive=2, seed=9,
                         metrics=(("m.a", 0.9), ("m.b", 0.6), ("m.c", 0.2)))
    return synthetic_dataset(spec, id="small")


@pytest.fixture(scope="module")
def panel():
    """Two annotator groups on two dimensions; 'crowd' has a missing rating; one metric."""
    rng = np.random.default_rng(21)
    quality = rng.normal(size=(5, 8))
    measures = {}
    for group, n, noise in (("expert", 3, 0.4), ("crowd", 4, 1.2)):
        for offset, dimension in ((0.0, "x"), (1.0, "y")):
            ratings = np.clip(np.rint(3 + quality[None] + offset + rng.normal(scale=noise, size=(n, 5, 8))), 1, 5)
            if group == "crowd" and dimension == "y":
                ratings[0, 1, 2] = np.nan
            measures[f"{group}.{dimension}"] = Measure.from_annotators(f"{group}.{dimension}", "human", ratings)
    measures["metric"] = Measure("metric", "metric", quality + rng.normal(size=(5, 8)))
    return Dataset(id="panel", systems=list("ABCDE"), inputs=[str(j) for j in range(8)], measures=measures,
                   system_attributes={"type": ["p", "q", "p", "q", "p"]})


# -- correlation matrix ---------------------------------------------------------
def reference_matrix(dataset, measures, level, coefficient, pool="judged"):
    judged = dataset.judged
    out = np.full((len(measures), len(measures)), np.nan)
    for a, b in itertools.product(range(len(measures)), repeat=2):
        ma, mb = dataset.measure(measures[a]), dataset.measure(measures[b])
        if level == "system":
            def means(m):
                cols = judged if (pool == "judged" or m.kind == "human") else np.ones_like(judged)
                return [np.nanmean(row[cols]) if np.any(~np.isnan(row[cols])) else np.nan for row in m.scores]
            out[a, b] = corr_or_nan(coefficient, means(ma), means(mb))
        elif level == "input":
            values = [corr_or_nan(coefficient, ma.scores[:, j], mb.scores[:, j]) for j in np.flatnonzero(judged)]
            values = [v for v in values if not math.isnan(v)]
            out[a, b] = np.mean(values) if values else np.nan
        else:
            out[a, b] = corr_or_nan(coefficient, ma.scores[:, judged].ravel(), mb.scores[:, judged].ravel())
    return out


@pytest.mark.parametrize("level", ["system", "input", "global"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_matrix_matches_reference(small, level, coefficient):
    measures = ["human.quality", "m.a", "m.b", "m.c"]
    result = correlation_matrix(small, measures, level=level, coefficient=coefficient)
    np.testing.assert_allclose(result.matrix, reference_matrix(small, measures, level, coefficient), atol=1e-12)
    np.testing.assert_array_equal(result.matrix, result.matrix.T)
    assert np.all(np.diag(result.matrix) == 1.0)
    assert result.measures == tuple(measures) and result.order == "given"
    expected_n = {"system": 6, "input": 12, "global": 72}[level]
    assert result.n[0, 1] == expected_n
    assert len(result.to_records()) == 16


def test_matrix_pool_all_and_subset(small):
    measures = ["human.quality", "m.a", "m.b"]
    result = correlation_matrix(small, measures, level="system", coefficient="pearson", pool="all")
    np.testing.assert_allclose(result.matrix, reference_matrix(small, measures, "system", "pearson", "all"))
    assert result.pool == "all"
    assert correlation_matrix(small, measures, level="input", pool="all").pool == "judged"
    sub = correlation_matrix(small, measures, systems="type=abs")
    assert sub.n[0, 1] == 4 and sub.systems == "type=abs"


def test_matrix_clustered_order_groups_agreeing_measures():
    rng = np.random.default_rng(2)
    base_a, base_b = rng.normal(size=(2, 12, 30))
    scores = {
        "a1": base_a + 0.1 * rng.normal(size=(12, 30)),
        "b1": base_b + 0.1 * rng.normal(size=(12, 30)),
        "a2": base_a + 0.1 * rng.normal(size=(12, 30)),
        "b2": base_b + 0.1 * rng.normal(size=(12, 30)),
        "a3": -base_a + 0.1 * rng.normal(size=(12, 30)),  # strongly negative: |r| clusters it with a*
    }
    measures = {name: Measure(name, "metric", v) for name, v in scores.items()}
    measures["h"] = Measure("h", "human", base_a)
    ds = Dataset(id="c", systems=[f"s{i}" for i in range(12)], inputs=[f"d{j}" for j in range(30)], measures=measures)
    names = ["a1", "b1", "a2", "b2", "a3", "h"]
    given = correlation_matrix(ds, names, level="global", coefficient="pearson")
    clustered = correlation_matrix(ds, names, level="global", coefficient="pearson", order="clustered")
    assert sorted(clustered.measures) == sorted(names) and clustered.linkage is not None
    positions = [clustered.measures.index(n) for n in ("a1", "a2", "a3", "h")]
    assert max(positions) - min(positions) == 3  # the a-block is contiguous
    permutation = [names.index(n) for n in clustered.measures]
    np.testing.assert_allclose(clustered.matrix, given.matrix[np.ix_(permutation, permutation)])


def test_matrix_undefined_and_validation(small):
    constant = Dataset(id="k", systems=["A", "B", "C"], inputs=["1", "2"], measures={
        "h": Measure("h", "human", [[1.0, 2.0], [2.0, 3.0], [3.0, 1.0]]),
        "flat": Measure("flat", "metric", np.ones((3, 2))),
    })
    result = correlation_matrix(constant, ["h", "flat"], level="system")
    assert np.isnan(result.matrix[0, 1]) and np.isnan(result.matrix[1, 1]) and result.matrix[0, 0] == 1.0
    with pytest.raises(ValueError, match="measures must name at least 2"):
        correlation_matrix(small, ["m.a"])
    with pytest.raises(ValueError, match="order must be one of"):
        correlation_matrix(small, ["m.a", "m.b"], order="sorted")
    with pytest.raises(ValueError, match="level must be one of"):
        correlation_matrix(small, ["m.a", "m.b"], level="summary")
    with pytest.raises(TypeError, match="dataset must be a metaeval_core.data.dataset.Dataset"):
        correlation_matrix({"m.a": 1}, ["m.a", "m.b"])


# -- Krippendorff's alpha and group correlations ----------------------------------
def reference_interval_alpha(units):
    """Krippendorff's interval alpha from its definition (coders x units, NaN = missing)."""
    values_by_unit = [[v for v in units[:, u] if not math.isnan(v)] for u in range(units.shape[1])]
    values_by_unit = [vs for vs in values_by_unit if len(vs) >= 2]
    n = sum(len(vs) for vs in values_by_unit)
    observed = sum(
        sum((a - b) ** 2 for i, a in enumerate(vs) for j, b in enumerate(vs) if i != j) / (len(vs) - 1)
        for vs in values_by_unit
    ) / n
    pooled = [v for vs in values_by_unit for v in vs]
    expected = sum((a - b) ** 2 for a in pooled for b in pooled) / (n * (n - 1))
    return 1.0 - observed / expected


def test_krippendorff_matches_definition_and_ignores_coder_identity():
    rng = np.random.default_rng(8)
    units = np.clip(np.rint(3 + rng.normal(size=(1, 40)) + rng.normal(scale=0.7, size=(4, 40))), 1, 5)
    units[rng.random(units.shape) < 0.15] = np.nan
    alpha, n_units, n_values = krippendorff_interval(units)
    assert alpha == pytest.approx(reference_interval_alpha(units), abs=1e-9)
    pairable = (~np.isnan(units)).sum(axis=0) >= 2
    assert n_units == pairable.sum() and n_values == (~np.isnan(units[:, pairable])).sum()
    # Shuffling the values within each unit (different "people" per slot) leaves alpha unchanged.
    shuffled = units.copy()
    for u in range(units.shape[1]):
        shuffled[:, u] = rng.permutation(units[:, u])
    assert krippendorff_interval(shuffled)[0] == pytest.approx(alpha, abs=1e-12)
    assert math.isnan(krippendorff_interval(np.ones((3, 5)))[0])  # no variation: undefined


def test_krippendorff_closed_form_equals_the_krippendorff_package():
    import krippendorff

    rng = np.random.default_rng(11)
    for scale, slots in ((1.0, 3), (25.0, 7)):  # Likert-like ratings; MQM-like penalties with many distinct values
        units = np.round(scale * rng.gamma(2.0, size=(slots, 300)) + 10 * rng.normal(size=300), 1)
        units[rng.random(units.shape) < 0.3] = np.nan
        alpha = krippendorff_interval(units)[0]
        pairable = (~np.isnan(units)).sum(axis=0) >= 2
        expected = krippendorff.alpha(reliability_data=units[:, pairable], level_of_measurement="interval")
        assert alpha == pytest.approx(expected, abs=1e-10)


def test_annotator_agreement_matches_reference(panel):
    result = annotator_agreement(panel)
    rows = {(r["group"], r["dimension"]): r for r in result.to_records()}
    assert set(rows) == {(g, d) for g in ("expert", "crowd") for d in ("x", "y", "all")}
    for group in ("expert", "crowd"):
        blocks = []
        for dimension in ("x", "y"):
            a = panel.measure(f"{group}.{dimension}").annotators
            units = a.reshape(a.shape[0], -1)
            blocks.append(units)
            assert rows[group, dimension]["alpha"] == pytest.approx(reference_interval_alpha(units), abs=1e-9)
        pooled = np.concatenate(blocks, axis=1)
        assert rows[group, "all"]["alpha"] == pytest.approx(reference_interval_alpha(pooled), abs=1e-9)
        assert rows[group, "all"]["n_units"] == 80
    assert rows["crowd", "y"]["n_values"] == 4 * 40 - 1
    assert result.alpha("expert", "x") > result.alpha("crowd", "x")
    # group-mean correlations: dimension x expert vs crowd at each level/coefficient
    corr = {(r["dimension"], r["level"], r["coefficient"]): r for r in result.correlation_records()}
    assert set(corr) == {(d, l, c) for d in ("x", "y") for l in ("global", "system") for c in ("kendall", "pearson")}
    for dimension in ("x", "y"):
        e = panel.measure(f"expert.{dimension}").scores
        c = panel.measure(f"crowd.{dimension}").scores
        row = corr[dimension, "global", "kendall"]
        assert row["group_a"] == "expert" and row["group_b"] == "crowd"
        assert row["estimate"] == pytest.approx(corr_or_nan("kendall", e.ravel(), c.ravel()))
        assert corr[dimension, "system", "pearson"]["estimate"] == pytest.approx(
            corr_or_nan("pearson", e.mean(axis=1), np.nanmean(c, axis=1)))
    assert "coincidence" in result.note and result.note == alpha_note(panel.vocabulary.output)
    assert ALPHA_NOTE == alpha_note("summary") and "every summary" in ALPHA_NOTE


def test_criteria_without_a_group_prefix_are_dimensions_of_one_group_not_groups():
    """HANNA's six criteria ('Relevance', 'Coherence', ...) are rated by one group of raters: the Annotators page
    must not compare 'Relevance vs Coherence' as if they were two annotator groups (issue 24)."""
    rng = np.random.default_rng(3)
    ratings = {name: rng.integers(1, 6, size=(3, 4, 5)).astype(float) for name in ("Relevance", "Coherence")}
    ds = Dataset("stories", [f"s{i}" for i in range(4)], [str(j) for j in range(5)],
                 {name: Measure.from_annotators(name, "human", r) for name, r in ratings.items()},
                 task="story-generation", annotator_identity="positions")
    result = annotator_agreement(ds)
    assert {(r.group, r.dimension) for r in result.alphas} == {
        ("annotators", "Relevance"), ("annotators", "Coherence"), ("annotators", "all")}
    assert result.correlations == ()
    assert "every story (system x judged input)" in result.note


def test_annotator_agreement_options_and_errors(panel, small):
    only = annotator_agreement(panel, groups=["crowd"], levels=["input"], coefficients=["spearman"],
                               systems="type=p")
    assert {r.group for r in only.alphas} == {"crowd"} and only.correlations == ()
    assert only.alphas[0].n_units == 3 * 8
    demo_like = annotator_agreement(small)
    assert [(r.group, r.dimension) for r in demo_like.alphas] == [("human", "quality"), ("human", "all")]
    assert demo_like.alphas[0].alpha == demo_like.alphas[1].alpha
    with pytest.raises(DatasetError, match="unknown annotator group"):
        annotator_agreement(panel, groups=["nobody"])
    with pytest.raises(TypeError, match="levels must be a non-empty sequence"):
        annotator_agreement(panel, levels="system")
    with pytest.raises(ValueError, match="coefficient must be one of"):
        annotator_agreement(panel, coefficients=["tau"])
    plain = Dataset(id="p", systems=["A", "B"], inputs=["1"], measures={"h": Measure("h", "human", [[1.0], [2.0]])})
    with pytest.raises(DatasetError, match="no per-annotator scores"):
        annotator_agreement(plain)


# -- high-scoring range --------------------------------------------------------------
def reference_high_range(dataset, metrics, baseline, selection, n_bins, normalise):
    judged = np.flatnonzero(dataset.judged)
    b = dataset.systems.index(baseline)
    scores = {m: dataset.measure(m).scores[:, judged] for m in metrics + [s for s in selection if s not in metrics]}
    n_sys = dataset.n_systems
    kept = np.zeros((n_sys, judged.size), bool)
    for j in range(judged.size):
        for i in range(n_sys):
            if i != b and any(scores[m][i, j] > scores[m][b, j] for m in selection):
                kept[i, j] = True
    taus_all, taus_top = {}, {}
    for ma, mb in itertools.combinations(metrics, 2):
        every, top = [], []
        for j in range(judged.size):
            every.append(corr_or_nan("kendall", scores[ma][:, j], scores[mb][:, j]))
            rows = kept[:, j]
            top.append(corr_or_nan("kendall", scores[ma][rows, j], scores[mb][rows, j]))
        taus_all[ma, mb] = np.nanmean(every) if not all(map(math.isnan, every)) else math.nan
        taus_top[ma, mb] = np.nanmean(top) if not all(map(math.isnan, top)) else math.nan

    def normalised(m, i, j):
        values = scores[m][:, j] if normalise == "input" else scores[m]
        low, high = np.nanmin(values), np.nanmax(values)
        return (scores[m][i, j] - low) / (high - low) if high > low else math.nan

    curve = {}
    for ma, mb in itertools.combinations(metrics, 2):
        differ = [0] * n_bins
        ordered = [0] * n_bins
        for j in range(judged.size):
            summary = [np.nanmean([normalised(m, i, j) for m in metrics]) for i in range(n_sys)]
            for i, k in itertools.combinations(range(n_sys), 2):
                sa = np.sign(scores[ma][i, j] - scores[ma][k, j])
                sb = np.sign(scores[mb][i, j] - scores[mb][k, j])
                if sa == 0 or sb == 0 or np.isnan(sa) or np.isnan(sb):
                    continue
                position = (summary[i] + summary[k]) / 2
                bin_ = min(int(position * n_bins), n_bins - 1)
                ordered[bin_] += 1
                differ[bin_] += sa != sb
        curve[ma, mb] = [d / o if o else math.nan for d, o in zip(differ, ordered)], ordered
    return kept, taus_all, taus_top, curve


@pytest.mark.parametrize("normalise", ["input", "global"])
@pytest.mark.parametrize("selection", [None, ["m.a"]])
def test_high_range_matches_reference(small, normalise, selection):
    metrics = ["m.a", "m.b", "m.c"]
    result = high_range(small, metrics, baseline="S03", selection_metrics=selection, n_bins=4, normalise=normalise)
    kept, taus_all, taus_top, curve = reference_high_range(small, metrics, "S03", selection or metrics, 4, normalise)
    np.testing.assert_array_equal(result.kept, kept)
    assert not result.kept[small.systems.index("S03")].any()
    for p, (a, b) in enumerate(zip(result.pair_a, result.pair_b)):
        key = (metrics[a], metrics[b])
        assert result.tau_all[p] == pytest.approx(taus_all[key], abs=1e-12)
        assert result.tau_top[p] == pytest.approx(taus_top[key], abs=1e-12, nan_ok=True)
        shares, counts = curve[key]
        assert result.n_pairs[p].tolist() == counts
        np.testing.assert_allclose(result.disagreement[p], shares, atol=1e-12)
    assert result.n_pairs[0].sum() <= small.n_judged * 15
    assert result.mean_kept == pytest.approx(kept.sum(axis=0).mean())
    assert len(result.curve_records()) == 3 * 4 and len(result.to_records()) == 3


def test_high_range_identical_metrics_and_errors(small):
    twin = Dataset(id="twin", systems=small.systems, inputs=small.inputs, measures={
        "human.quality": small.measure("human.quality"),
        "x": Measure("x", "metric", small.measure("m.a").scores),
        "x2": Measure("x2", "metric", 2 * small.measure("m.a").scores + 1),
    }, system_attributes=small.system_attributes)
    result = high_range(twin, ["x", "x2"], baseline="S01")
    assert result.tau_all[0] == pytest.approx(1.0) and result.tau_top[0] == pytest.approx(1.0)
    assert np.nansum(result.disagreement) == 0.0
    with pytest.raises(DatasetError, match="baseline: unknown system 'S01'"):
        high_range(small, ["m.a", "m.b"], baseline="S01", systems="type=abs")
    with pytest.raises(ValueError, match="metrics must name at least 2"):
        high_range(small, ["m.a"], baseline="S01")
    with pytest.raises(ValueError, match="normalise must be one of"):
        high_range(small, ["m.a", "m.b"], baseline="S01", normalise="rank")
    with pytest.raises(TypeError, match="baseline must be a system name"):
        high_range(small, ["m.a", "m.b"], baseline=1)
    with pytest.raises(ValueError, match="n_bins must be at least 1"):
        high_range(small, ["m.a", "m.b"], baseline="S01", n_bins=0)


# -- normality ---------------------------------------------------------------------
def reference_normality(dataset, name, pool="judged", alpha=0.05):
    m = dataset.measure(name)
    cols = dataset.judged if (pool == "judged" or m.kind == "human") else np.ones_like(dataset.judged)
    matrix = m.scores[:, cols]
    means = np.array([np.nanmean(r) for r in matrix])
    system_p = stats.shapiro(means).pvalue if np.ptp(means) > 0 else math.nan
    rejected = tested = skipped = 0
    for j in range(matrix.shape[1]):
        values = matrix[:, j][~np.isnan(matrix[:, j])]
        if values.size < 3 or np.ptp(values) == 0:
            skipped += 1
            continue
        tested += 1
        rejected += stats.shapiro(values).pvalue < alpha
    return system_p, (rejected / tested if tested else math.nan), tested, skipped


def test_normality_matches_reference(small):
    names = ["human.quality", "m.a", "m.c"]
    for pool in ("judged", "all"):
        table = normality_table(small, names, pool=pool)
        for row in table.rows:
            system_p, share, tested, skipped = reference_normality(small, row.measure, pool)
            assert row.system_p == pytest.approx(system_p)
            assert row.input_share == pytest.approx(share)
            assert (row.input_tested, row.input_skipped) == (tested, skipped)
        assert table.rows[0].pool == "judged"


def test_normality_skips_short_and_constant_inputs():
    scores = np.array([[1.0, 5.0, 2.0, np.nan], [1.0, 1.0, 3.0, 2.0], [1.0, 2.0, np.nan, 7.0], [1.0, 9.0, 4.0, np.nan]])
    ds = Dataset(id="n", systems=list("ABCD"), inputs=list("wxyz"), measures={"h": Measure("h", "human", scores)})
    row = normality_table(ds, ["h"]).rows[0]
    # w constant, z has 2 values: skipped; x and y tested
    assert (row.input_tested, row.input_skipped) == (2, 2)
    assert row.system_n == 4 and not math.isnan(row.system_p)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        normality_table(ds, ["h"], alpha=0)


def test_high_range_pairwise_kendall_equals_kendall_pair_by_pair():
    from metaeval_core.analyses.papers.peyrard import _pairwise_kendall
    from metaeval_core.stats.coefficients import kendall

    rng = np.random.default_rng(3)
    values = rng.integers(0, 4, size=(5, 30, 9)).astype(float)  # ties
    values[rng.random(values.shape) < 0.15] = np.nan  # missing cells
    a, b = np.triu_indices(5, 1)
    np.testing.assert_array_equal(_pairwise_kendall(values, a, b), kendall(values[a], values[b]))


def test_high_range_pairwise_kendall_is_the_same_in_chunks_of_inputs(monkeypatch):
    from metaeval_core.analyses.papers import peyrard
    from metaeval_core.stats.coefficients import kendall

    rng = np.random.default_rng(4)
    values = rng.integers(0, 3, size=(4, 23, 7)).astype(float)
    values[rng.random(values.shape) < 0.2] = np.nan
    a, b = np.triu_indices(4, 1)
    monkeypatch.setattr(peyrard, "_COUNT_ENTRIES", 4 * 21 * 5)  # 5 inputs per chunk, the last one shorter
    np.testing.assert_array_equal(peyrard._pairwise_kendall(values, a, b), kendall(values[a], values[b]))
