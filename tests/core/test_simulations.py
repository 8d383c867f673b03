"""docs/methods.md sec. 9 simulations: CI coverage and power, against slow readable reference loops.

The oracles take the *same* random draws as the fast code: the coverage splits from
``draw_coverage_splits`` and each (trial, method) bootstrap stream from
``CoverageSplits.rng``; the power streams from ``_stream(entropy, trial, purpose)``
with the entropy drawn first from the seed. ROUGE-1 on k% of the tokens is checked
against ``rouge_score.rouge_scorer.RougeScorer`` itself, on full summaries and on
subsamples. Real-data tests (SummEval) reproduce TACL 2021 Table 1 and Fig. 3
qualitatively; their figures are printed with ``-s``.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from scipy import stats

from metaeval_core.cli.main import main
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.stats.resampling import _draw_bootstrap_indices
from metaeval_core.stats.significance import TEST_METHODS, _draw_swap_masks
from metaeval_core.analyses.simulations import (
    Rouge1Counts,
    _root_entropy,
    _stream,
    ci_coverage,
    draw_coverage_splits,
    power_curve,
    rouge1_variant,
    rouge_tokens,
    subsample_sizes,
)
from metaeval_core.data.texts import (
    SUMMEVAL_DOCUMENTS,
    SUMMEVAL_PICKLE,
    SUMMEVAL_SUMMARIES,
    SummaryTexts,
    load_summeval_texts,
    load_texts,
    texts_available,
)
from tests.core import oracles


# ---------------------------------------------------------------------------------------------
# Small synthetic data
# ---------------------------------------------------------------------------------------------
def tiny_dataset(n=11, m=9, seed=0, nan_cells=((1, 2), (4, 0))) -> Dataset:
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n)[:, None] + rng.normal(size=(n, m))
    human = quality + rng.normal(scale=0.7, size=(n, m))
    metric = quality + rng.normal(scale=1.0, size=(n, m))
    for i, j in nan_cells:
        if i < n and j < m:
            metric[i, j] = np.nan
    return Dataset(
        id="tiny", systems=[f"S{i}" for i in range(n)], inputs=[f"d{j}" for j in range(m)],
        measures={"human": Measure("human", "human", human), "metric": Measure("metric", "metric", metric),
                  "flat": Measure("flat", "metric", np.ones((n, m)))},
    )


_WORDS = ("The cat cats running runs ran quickly quick generously general generals 2015 report reported "
          "reporting goals goal scored scores minister ministers said says city cities Tottenham draw drew").split()


def tiny_texts(n=6, m=5, seed=1, missing=((2, 3),)) -> tuple[Dataset, SummaryTexts]:
    """Texts with stemming, case, punctuation, digits, an empty and a token-less summary, a missing cell."""
    rng = np.random.default_rng(seed)
    references = []
    for _ in range(m):
        words = rng.choice(_WORDS, size=rng.integers(12, 20))
        references.append(" ".join(words) + " .")
    summaries = np.full((n, m), None, dtype=object)
    for i in range(n):
        for j in range(m):
            ref_words = references[j].split()[:-1]
            own = rng.choice(_WORDS, size=rng.integers(0, 6))
            take = rng.choice(ref_words, size=rng.integers(2, 12 - i // 2))
            words = list(take) + list(own)
            rng.shuffle(words)
            summaries[i, j] = ", ".join(" ".join(words[k:k + 3]) for k in range(0, len(words), 3)) + "!"
    summaries[0, 1] = ""
    summaries[1, 0] = "!!! ... ?"
    for i, j in missing:
        summaries[i, j] = None
    systems = tuple(f"S{i}" for i in range(n))
    inputs = tuple(f"d{j}" for j in range(m))
    texts = SummaryTexts("tiny", systems, inputs, summaries, tuple(references))
    quality = rng.normal(size=(n, 1)) + rng.normal(scale=0.5, size=(n, m))
    dataset = Dataset(id="tiny-texts", systems=systems, inputs=inputs,
                      measures={"human": Measure("human", "human", quality),
                                "metric": Measure("metric", "metric", quality + rng.normal(size=(n, m)))})
    return dataset, texts


def _scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)


def raw_words(text: str) -> list[str]:
    """rouge-score's tokens *before* stemming, aligned one-to-one with :func:`rouge_tokens`."""
    from nltk.stem import porter
    from rouge_score import tokenize

    stemmer = porter.PorterStemmer()
    words = tokenize.tokenize(text, None)
    stems = [stemmer.stem(w) if len(w) > 3 else w for w in words]
    assert tuple(stems) == rouge_tokens(text)  # the alignment the subsample oracle relies on
    return words


def rouge_score_value(score, variant: str) -> float:
    return {"f1": score.fmeasure, "recall": score.recall, "precision": score.precision}[variant]


# ---------------------------------------------------------------------------------------------
# Oracles
# ---------------------------------------------------------------------------------------------
def fisher_n(x, z, level):
    if level == "system":
        mx, mz = oracles.row_means(x), oracles.row_means(z)
        return int(np.sum(~np.isnan(mx) & ~np.isnan(mz)))
    valid = ~np.isnan(x) & ~np.isnan(z)
    return int(valid.sum(axis=0).max()) if level == "input" else int(valid.sum())


def oracle_coverage(x, z, splits, methods, level, coefficient, n_resamples, confidence_level):
    """TACL sec. 5.1 literally: per trial, halves, one interval per method, is r_B inside?"""
    t_count = splits.n_trials
    low = np.full((t_count, len(methods)), np.nan)
    high = np.full((t_count, len(methods)), np.nan)
    target = np.full(t_count, np.nan)
    for t in range(t_count):
        xa = x[np.ix_(splits.systems_a[t], splits.inputs_a[t])]
        za = z[np.ix_(splits.systems_a[t], splits.inputs_a[t])]
        xb = x[np.ix_(splits.systems_b[t], splits.inputs_b[t])]
        zb = z[np.ix_(splits.systems_b[t], splits.inputs_b[t])]
        target[t] = oracles.level_corr(xb, zb, level, coefficient)
        for k, method in enumerate(methods):
            if method == "fisher":
                r = oracles.level_corr(xa, za, level, coefficient)
                low[t, k], high[t, k] = oracles.fisher(r, fisher_n(xa, za, level), coefficient, confidence_level)
                continue
            indices = _draw_bootstrap_indices(splits.rng(t, method), method, n_resamples, xa.shape[0], xa.shape[1])
            values = oracles.bootstrap_distribution([xa], za, level, coefficient, indices)[:, 0]
            low[t, k], high[t, k], _ = oracles.percentile_interval(values, confidence_level)
    coverage = {}
    for k, method in enumerate(methods):
        hits, valid = 0, 0
        for t in range(t_count):
            if math.isnan(low[t, k]) or math.isnan(high[t, k]) or math.isnan(target[t]):
                continue
            valid += 1
            hits += low[t, k] <= target[t] <= high[t, k]
        coverage[method] = (hits, valid)
    return low, high, target, coverage


def oracle_token_scores(texts, entropy, trial, k, variant):
    """Y_k by the book: shuffle each summary's tokens with this trial's keys, keep the first m, ask rouge-score."""
    scorer = _scorer()
    n_tokens = sum(len(rouge_tokens(s)) for s in texts.summaries.ravel() if s is not None)
    keys = _stream(entropy, trial, 0).random(n_tokens)
    out = np.full(texts.summaries.shape, np.nan)
    offset = 0
    for i in range(texts.summaries.shape[0]):
        for j in range(texts.summaries.shape[1]):
            text = texts.summaries[i, j]
            if text is None:
                continue
            words = raw_words(text)
            own = keys[offset:offset + len(words)]
            offset += len(words)
            keep = math.floor(len(words) * k / 100)
            chosen = [words[p] for p in np.argsort(own, kind="stable")[:keep]]
            out[i, j] = rouge_score_value(scorer.score(texts.references[j], " ".join(chosen))["rouge1"], variant)
    return out


def oracle_pvalue(x, y, z, test, level, coefficient, n_resamples, rng):
    delta = oracles.level_corr(x, z, level, coefficient) - oracles.level_corr(y, z, level, coefficient)
    if test == "williams":
        if level == "system":
            a, b, c = oracles.row_means(x), oracles.row_means(y), oracles.row_means(z)
        else:
            a, b, c = x.ravel(), y.ravel(), z.ravel()
        keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(c))
        a, b, c = a[keep], b[keep], c[keep]
        r13, r23, r12 = (oracles.scipy_corr(a, c, coefficient), oracles.scipy_corr(b, c, coefficient),
                         oracles.scipy_corr(a, b, coefficient))
        return oracles.williams(r13, r23, r12, int(keep.sum()))[1]
    if test.startswith("perm"):
        masks = _draw_swap_masks(rng, test, n_resamples, *x.shape)
        return oracles.count_pvalue(oracles.permutation_null(x, y, z, level, coefficient, masks), delta, "greater")
    indices = _draw_bootstrap_indices(rng, test, n_resamples, *x.shape)
    values = oracles.bootstrap_distribution([x, y], z, level, coefficient, indices)
    return oracles.count_pvalue(values[:, 0] - values[:, 1] - delta, delta, "greater")


# ---------------------------------------------------------------------------------------------
# Coverage
# ---------------------------------------------------------------------------------------------
def test_splits_are_equal_disjoint_halves_and_reproducible():
    splits = draw_coverage_splits(5, 20, 11, 9)
    assert splits.systems_a.shape == (20, 5) and splits.systems_b.shape == (20, 5)
    assert splits.inputs_a.shape == (20, 4) and splits.inputs_b.shape == (20, 4)
    for t in range(20):
        assert not set(splits.systems_a[t]) & set(splits.systems_b[t])
        assert not set(splits.inputs_a[t]) & set(splits.inputs_b[t])
        assert list(splits.systems_a[t]) == sorted(splits.systems_a[t])
    again = draw_coverage_splits(np.random.default_rng(5), 20, 11, 9)
    assert np.array_equal(splits.systems_a, again.systems_a) and splits.entropy == again.entropy
    # Trials differ, and the per-method streams are distinct.
    assert len({tuple(s) for s in splits.systems_a}) > 1
    assert splits.rng(0, "boot-both").random() != splits.rng(0, "boot-inputs").random()


@pytest.mark.parametrize("level,coefficient", [("system", "pearson"), ("system", "kendall"), ("input", "pearson"),
                                               ("input", "kendall"), ("global", "spearman")])
def test_coverage_matches_reference_loop(level, coefficient):
    ds = tiny_dataset()
    methods = ("fisher", "boot-systems", "boot-inputs", "boot-both")
    result = ci_coverage(ds, "metric", "human", level=level, coefficient=coefficient, methods=methods, n_trials=4,
                         n_resamples=40, confidence_level=0.9, rng=11)
    x, z = ds.matrix("metric"), ds.matrix("human")
    splits = draw_coverage_splits(11, 4, *z.shape)
    low, high, target, coverage = oracle_coverage(x, z, splits, methods, level, coefficient, 40, 0.9)
    np.testing.assert_allclose(result.target, target, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.low, low, rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.high, high, rtol=0, atol=1e-10)
    for row in result.rows:
        hits, valid = coverage[row.method]
        assert (row.n_covered, row.n_valid, row.n_undefined) == (hits, valid, 4 - valid)
        assert row.coverage == (hits / valid if valid else row.coverage)
        if valid:
            assert row.se == pytest.approx(math.sqrt(row.coverage * (1 - row.coverage) / valid))
    assert (result.half_systems, result.half_inputs, result.n_completed, result.stopped) == (5, 4, 4, False)


def test_coverage_reproducible_and_batch_invariant():
    ds = tiny_dataset()
    options = dict(level="system", coefficient="pearson", n_trials=6, n_resamples=57)
    a = ci_coverage(ds, "metric", "human", rng=3, **options)
    b = ci_coverage(ds, "metric", "human", rng=np.random.default_rng(3), batch=5, **options)
    c = ci_coverage(ds, "metric", "human", rng=4, **options)
    assert np.array_equal(a.low, b.low, equal_nan=True) and np.array_equal(a.high, b.high, equal_nan=True)
    assert a.to_records() == b.to_records()
    assert not np.array_equal(a.low, c.low, equal_nan=True)


def test_coverage_methods_subset_uses_the_same_streams():
    # A method's intervals do not depend on which other methods run alongside it.
    ds = tiny_dataset()
    options = dict(level="input", coefficient="pearson", n_trials=3, n_resamples=30, rng=8)
    everything = ci_coverage(ds, "metric", "human", **options)
    alone = ci_coverage(ds, "metric", "human", methods=("boot-both",), **options)
    assert np.array_equal(alone.low[:, 0], everything.low[:, 3])


def test_coverage_stop_returns_the_first_trials_and_progress():
    ds = tiny_dataset()
    options = dict(level="system", coefficient="pearson", n_trials=8, n_resamples=30, rng=2)
    full = ci_coverage(ds, "metric", "human", **options)
    polls = []

    def should_stop():
        polls.append(1)
        return len(polls) > 3

    fractions = []
    part = ci_coverage(ds, "metric", "human", should_stop=should_stop, progress=fractions.append, **options)
    assert part.stopped and part.n_completed == 3 and part.n_trials == 8
    assert np.array_equal(part.low, full.low[:3]) and np.array_equal(part.target, full.target[:3])
    assert fractions == [0.0, 1 / 8, 2 / 8, 3 / 8]
    assert all(r["stopped"] and r["n_completed"] == 3 for r in part.to_records())
    fractions.clear()
    ci_coverage(ds, "metric", "human", progress=fractions.append, **options)
    assert fractions[-1] == 1.0 and fractions == sorted(fractions)
    nothing = ci_coverage(ds, "metric", "human", should_stop=lambda: True, **options)
    assert nothing.n_completed == 0 and all(math.isnan(r.coverage) and r.n_valid == 0 for r in nothing.rows)


def test_coverage_counts_undefined_trials():
    ds = tiny_dataset(n=8)
    # Halves of 4 systems: Fisher-Kendall needs n > 4, so it is undefined in every trial.
    result = ci_coverage(ds, "metric", "human", level="system", coefficient="kendall", n_trials=5, n_resamples=30,
                         rng=0)
    fisher = result.row("fisher")
    assert fisher.n_valid == 0 and fisher.n_undefined == 5 and math.isnan(fisher.coverage)
    assert math.isnan(fisher.mean_width)
    # A constant metric has no defined correlation anywhere: every trial is undefined.
    flat = ci_coverage(ds, "flat", "human", level="system", coefficient="pearson", n_trials=3, n_resamples=20, rng=0)
    assert all(r.n_undefined == 3 and r.n_valid == 0 for r in flat.rows)
    assert json.dumps(flat.to_records())  # NaN becomes None: JSON-safe


def test_coverage_calibration_on_synthetic_data():
    # A dataset where systems and inputs really are random draws: BOOT-BOTH, which resamples
    # both, covers the held-out correlation far more often than BOOT-INPUTS.
    from metaeval_core.data.synthetic import synthetic_dataset

    demo = synthetic_dataset()
    result = ci_coverage(demo, "metric.good", "human.quality", level="system", coefficient="pearson",
                         methods=("boot-inputs", "boot-both"), n_trials=60, n_resamples=300, rng=1)
    assert result.row("boot-both").coverage > result.row("boot-inputs").coverage + 0.1
    assert result.row("boot-both").coverage >= 0.8


# ---------------------------------------------------------------------------------------------
# ROUGE-1 on k% of the tokens
# ---------------------------------------------------------------------------------------------
def test_rouge1_variant_names():
    assert rouge1_variant("rouge-1.f1") == "f1" and rouge1_variant("ROUGE-1.recall") == "recall"
    assert rouge1_variant("rouge1_fmeasure") == "f1" and rouge1_variant("rouge-1.precision") == "precision"
    assert rouge1_variant("rouge-2.f1") is None and rouge1_variant("qa-eval.f1") is None and rouge1_variant(3) is None


def test_subsample_sizes_floor_exactly():
    lengths = np.array([0, 1, 7, 10, 33, 100, 29])
    assert list(subsample_sizes(lengths, 30)) == [0, 0, 2, 3, 9, 30, 8]
    assert list(subsample_sizes(lengths, 100)) == list(lengths)
    assert list(subsample_sizes([10], 29)) == [2]  # 0.29 * 10 in floats is 2.8999...; the product is exact


@pytest.mark.parametrize("variant", ["f1", "recall", "precision"])
def test_rouge1_counts_equal_rouge_score_on_full_summaries(variant):
    _, texts = tiny_texts()
    counts = Rouge1Counts.from_texts(texts)
    scores = counts.scores(variant)
    scorer = _scorer()
    for i in range(scores.shape[0]):
        for j in range(scores.shape[1]):
            text = texts.summaries[i, j]
            if text is None:
                assert math.isnan(scores[i, j])
                continue
            expected = rouge_score_value(scorer.score(texts.references[j], text)["rouge1"], variant)
            assert scores[i, j] == expected  # exact, not approximate
    assert np.array_equal(scores, counts.scores(variant, 100), equal_nan=True)


@pytest.mark.parametrize("k", [10, 30, 55, 90])
def test_rouge1_counts_equal_rouge_score_on_subsamples(k):
    _, texts = tiny_texts(seed=4)
    counts = Rouge1Counts.from_texts(texts)
    entropy = _root_entropy(np.random.default_rng(9))
    for trial in range(3):
        ranks = counts.draw_ranks(_stream(entropy, trial, 0))
        for variant in ("f1", "recall"):
            fast = counts.scores(variant, k, ranks)
            slow = oracle_token_scores(texts, entropy, trial, k, variant)
            assert np.array_equal(fast, slow, equal_nan=True)


def test_rouge1_subsamples_are_uniform_and_nested():
    counts = Rouge1Counts.from_tokens([[list("abcd")]], [list("ab")])
    rng = np.random.default_rng(0)
    seen = {}
    for _ in range(3000):
        ranks = counts.draw_ranks(rng)
        kept_50 = {p for p in range(4) if ranks[p] < 2}
        kept_25 = {p for p in range(4) if ranks[p] < 1}
        assert kept_25 <= kept_50
        seen[frozenset(kept_50)] = seen.get(frozenset(kept_50), 0) + 1
    assert len(seen) == 6  # every 2-subset of 4 tokens
    assert stats.chisquare(list(seen.values())).pvalue > 1e-3
    # Overlap with the reference 'ab' is clipped per type.
    both = Rouge1Counts.from_tokens([[["a", "a", "a", "b"]]], [["a", "b", "c"]])
    overlap, kept = both.counts()
    assert overlap[0] == 2 and kept[0] == 4


# ---------------------------------------------------------------------------------------------
# Power
# ---------------------------------------------------------------------------------------------
def test_power_tokens_matches_reference_loop():
    ds, texts = tiny_texts()
    tests, ks, n_resamples, seed = ("perm-both", "boot-both", "williams"), (30, 70), 40, 21
    result = power_curve(ds, "rouge-1.f1", "human", level="system", coefficient="pearson", tests=tests, ks=ks,
                         n_trials=3, n_resamples=n_resamples, alpha=0.3, texts=texts, rng=seed)
    entropy = _root_entropy(np.random.default_rng(seed))
    z = ds.matrix("human")
    x = oracle_token_scores(texts, entropy, 0, 100, "f1")  # k = 100 keeps every token: X itself
    assert result.estimate_x == pytest.approx(oracles.level_corr(x, z, "system", "pearson"), abs=1e-12)
    expected = np.full((3, len(ks), len(tests)), np.nan)
    for t in range(3):
        for q, k in enumerate(ks):
            y = oracle_token_scores(texts, entropy, t, k, "f1")
            assert result.estimate_y[t, q] == pytest.approx(oracles.level_corr(y, z, "system", "pearson"), abs=1e-12)
            for s, test in enumerate(tests):
                rng = _stream(entropy, t, 1 + TEST_METHODS.index(test))
                expected[t, q, s] = oracle_pvalue(x, y, z, test, "system", "pearson", n_resamples, rng)
    np.testing.assert_allclose(result.pvalues, expected, rtol=1e-9, atol=1e-12)
    for row in result.rows:
        p = expected[:, ks.index(row.k), tests.index(row.test)]
        assert row.n_rejected == int((p < 0.3).sum()) and row.n_valid == 3
        assert row.power == row.n_rejected / 3
    assert [(r.test, r.k) for r in result.rows] == [(s, k) for s in tests for k in ks]
    assert result.variant == "f1" and result.degrade == "tokens"


@pytest.mark.parametrize("level,tests", [("input", ("perm-both", "boot-both")), ("global", ("perm-both", "williams"))])
def test_power_noise_matches_reference_loop(level, tests):
    ds = tiny_dataset(n=7, m=6)
    ks, n_resamples, seed = (0.5, 2.0), 30, 5
    result = power_curve(ds, "metric", "human", level=level, coefficient="pearson", tests=tests, ks=ks,
                         n_trials=2, n_resamples=n_resamples, degrade="noise", rng=seed)
    x, z = ds.matrix("metric"), ds.matrix("human")
    sd = float(np.std(x[~np.isnan(x)]))
    assert result.noise_sd == pytest.approx(sd)
    entropy = _root_entropy(np.random.default_rng(seed))
    for t in range(2):
        eps = _stream(entropy, t, 0).standard_normal(x.shape)
        for q, k in enumerate(ks):
            y = x + k * sd * eps
            assert result.estimate_y[t, q] == pytest.approx(oracles.level_corr(y, z, level, "pearson"), abs=1e-12)
            for s, test in enumerate(tests):
                rng = _stream(entropy, t, 1 + TEST_METHODS.index(test))
                p = oracle_pvalue(x, y, z, test, level, "pearson", n_resamples, rng)
                assert result.pvalues[t, q, s] == pytest.approx(p, rel=1e-9, abs=1e-12)


def test_power_reproducible_batch_invariant_and_stoppable():
    ds = tiny_dataset(n=8, m=6)
    options = dict(level="system", coefficient="kendall", tests=("perm-both", "boot-both"), ks=(1.0,),
                   n_trials=5, n_resamples=50, degrade="noise")
    a = power_curve(ds, "metric", "human", rng=7, **options)
    b = power_curve(ds, "metric", "human", rng=np.random.default_rng(7), batch=3, **options)
    assert np.array_equal(a.pvalues, b.pvalues) and a.to_records() == b.to_records()
    calls = iter([False, False, True])
    fractions = []
    part = power_curve(ds, "metric", "human", rng=7, should_stop=lambda: next(calls), progress=fractions.append,
                       **options)
    assert part.stopped and part.n_completed == 2 and np.array_equal(part.pvalues, a.pvalues[:2])
    assert fractions == [0.0, 0.2, 0.4]
    # k = 0 adds no noise: Y = X, delta = 0, never significant at alpha 0.05 with a one-sided test
    same = power_curve(ds, "metric", "human", rng=1, **{**options, "ks": (0,)})
    assert all(r.power == 0.0 and r.mean_delta == 0.0 for r in same.rows)


def test_power_default_tests_drop_williams_at_input_level():
    ds = tiny_dataset(n=6, m=4)
    result = power_curve(ds, "metric", "human", level="input", coefficient="pearson", ks=(1,), n_trials=1,
                         n_resamples=10, degrade="noise", rng=0)
    assert result.tests == ("perm-both", "boot-both")
    result = power_curve(ds, "metric", "human", level="system", coefficient="pearson", ks=(1,), n_trials=1,
                         n_resamples=10, degrade="noise", rng=0)
    assert result.tests == ("perm-both", "boot-both", "williams")


def test_power_detects_heavy_noise_on_synthetic_data():
    from metaeval_core.data.synthetic import synthetic_dataset

    demo = synthetic_dataset()
    result = power_curve(demo, "metric.strong", "human.quality", level="system", coefficient="pearson",
                         tests=("perm-both",), ks=(0.1, 4.0), n_trials=10, n_resamples=200, degrade="noise", rng=0)
    assert result.power("perm-both", 4.0) > result.power("perm-both", 0.1)
    assert result.power("perm-both", 4.0) >= 0.8


# ---------------------------------------------------------------------------------------------
# Validation: every message names the parameter
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("change,error,name", [
    ({"level": "summary"}, ValueError, "level"),
    ({"coefficient": "cosine"}, ValueError, "coefficient"),
    ({"methods": ("boot-all",)}, ValueError, "methods"),
    ({"methods": ()}, ValueError, "methods"),
    ({"methods": "fisher"}, TypeError, "methods"),
    ({"methods": ("fisher", "fisher")}, ValueError, "methods"),
    ({"n_trials": 0}, ValueError, "n_trials"),
    ({"n_trials": 2.5}, TypeError, "n_trials"),
    ({"n_resamples": -1}, ValueError, "n_resamples"),
    ({"confidence_level": 1.0}, ValueError, "confidence_level"),
    ({"rng": "seed"}, TypeError, "rng"),
    ({"batch": 0}, ValueError, "batch"),
    ({"progress": 3}, TypeError, "progress"),
    ({"should_stop": True}, TypeError, "should_stop"),
])
def test_coverage_validation(change, error, name):
    options = dict(level="system", coefficient="pearson", n_trials=2, n_resamples=10)
    options.update(change)
    with pytest.raises(error, match=name):
        ci_coverage(tiny_dataset(), "metric", "human", **options)


def test_coverage_validation_of_data():
    with pytest.raises(TypeError, match="dataset"):
        ci_coverage({"metric": np.ones((4, 4))}, "metric", "human", level="system", coefficient="pearson")
    with pytest.raises(ValueError, match="dataset must have at least 4 systems"):
        ci_coverage(tiny_dataset(n=3), "metric", "human", level="system", coefficient="pearson")
    with pytest.raises(DatasetError, match="unknown measure"):
        ci_coverage(tiny_dataset(), "nope", "human", level="system", coefficient="pearson")
    with pytest.raises(TypeError, match="metric"):
        ci_coverage(tiny_dataset(), 3, "human", level="system", coefficient="pearson")


@pytest.mark.parametrize("change,error,name", [
    ({"degrade": "blur"}, ValueError, "degrade"),
    ({"tests": ("t-test",)}, ValueError, "tests"),
    ({"level": "input", "tests": ("williams",)}, ValueError, "tests"),
    ({"ks": (0.5, 0.5)}, ValueError, "ks"),
    ({"ks": (-1,)}, ValueError, "ks"),
    ({"ks": ("a",)}, TypeError, "ks"),
    ({"ks": ()}, ValueError, "ks"),
    ({"ks": 3}, TypeError, "ks"),
    ({"alpha": 0.0}, ValueError, "alpha"),
    ({"alpha": "0.05"}, TypeError, "alpha"),
    ({"n_trials": 0}, ValueError, "n_trials"),
    ({"n_resamples": 0}, ValueError, "n_resamples"),
    ({"texts": "texts"}, TypeError, "texts"),
    ({"progress": 1}, TypeError, "progress"),
])
def test_power_validation(change, error, name):
    options = dict(level="system", coefficient="pearson", ks=(1,), n_trials=1, n_resamples=10, degrade="noise")
    options.update(change)
    with pytest.raises(error, match=name):
        power_curve(tiny_dataset(), "metric", "human", **options)


def test_power_tokens_validation():
    ds, texts = tiny_texts()
    options = dict(level="system", coefficient="pearson", ks=(50,), n_trials=1, n_resamples=10)
    with pytest.raises(ValueError, match="metric must name a ROUGE-1 variant"):
        power_curve(ds, "metric", "human", texts=texts, **options)
    with pytest.raises(TypeError, match="texts must be SummaryTexts"):
        power_curve(ds, "rouge-1.f1", "human", **options)
    with pytest.raises(ValueError, match="ks must be percentages"):
        power_curve(ds, "rouge-1.f1", "human", texts=texts, **{**options, "ks": (0,)})
    with pytest.raises(ValueError, match="ks must be percentages"):
        power_curve(ds, "rouge-1.f1", "human", texts=texts, **{**options, "ks": (150,)})
    other = SummaryTexts("other", ("X",), ("y",), np.array([["a b"]], dtype=object), ("a",))
    with pytest.raises(ValueError, match="texts"):
        power_curve(ds, "rouge-1.f1", "human", texts=other, **options)


def test_texts_validation_and_alignment():
    ds, texts = tiny_texts()
    with pytest.raises(ValueError, match="summaries must have shape"):
        SummaryTexts("x", ("a", "b"), ("c",), np.array([["s"]], dtype=object), ("r",))
    with pytest.raises(ValueError, match="references"):
        SummaryTexts("x", ("a",), ("c",), np.array([["s"]], dtype=object), ())
    reordered = ds.subset(systems=list(reversed(ds.systems)), inputs=list(ds.inputs)[::-1])
    aligned = texts.aligned(reordered)
    assert aligned.systems == reordered.systems and aligned.inputs == reordered.inputs
    assert aligned.summaries[0, 0] == texts.summaries[-1, -1]
    assert aligned.references[0] == texts.references[-1]
    with pytest.raises(TypeError, match="dataset"):
        texts.aligned("summeval")
    with pytest.raises(ValueError, match="dataset_id"):
        load_texts("realsumm")
    with pytest.raises(TypeError, match="data_dir"):
        load_summeval_texts(data_dir=3)
    assert not texts_available("realsumm")


def test_texts_missing_files(tmp_path):
    with pytest.raises(DatasetError, match="SummEval texts not found"):
        load_summeval_texts(data_dir=tmp_path)
    assert not texts_available("summeval", data_dir=tmp_path)


# ---------------------------------------------------------------------------------------------
# CLI (the synthetic demo: no texts, so power falls back to noise)
# ---------------------------------------------------------------------------------------------
def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_coverage_json_and_table(capsys):
    argv = ["coverage", "--dataset", "demo", "--metric", "metric.good", "--human", "human.quality", "--trials", "8",
            "--n-resamples", "60", "--seed", "3"]
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["method"] for r in rows] == ["fisher", "boot-systems", "boot-inputs", "boot-both"]
    assert all({"method", "coverage", "se", "n_valid", "n_undefined", "mean_width"} <= set(r) for r in rows)
    assert all(r["n_completed"] == 8 and r["level"] == "system" and r["coefficient"] == "pearson" for r in rows)
    code, again, _ = run_cli(capsys, *argv, "--json")
    assert again == out  # same seed, same numbers
    code, out, _ = run_cli(capsys, *argv, "--methods", "boot-both", "--level", "input")
    assert code == 0 and "boot-both" in out and "halves of 8 systems x 50 inputs" in out


def test_cli_power_json_noise_fallback(capsys):
    argv = ["power", "--dataset", "demo", "--metric", "metric.good", "--human", "human.quality", "--trials", "3",
            "--k", "0.5,2", "--n-resamples", "50", "--seed", "1", "--json"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["test"], r["k"]) for r in rows] == [(t, k) for t in ("perm-both", "boot-both", "williams")
                                                   for k in (0.5, 2)]
    assert all(r["degrade"] == "noise" and 0 <= r["power"] <= 1 for r in rows)
    code, out, _ = run_cli(capsys, *argv[:-1], "--tests", "perm-both", "--level", "input")
    assert code == 0 and "perm-both" in out and "williams" not in out


def test_cli_errors_are_one_line(capsys):
    code, out, err = run_cli(capsys, "power", "--dataset", "demo", "--metric", "metric.good", "--human",
                             "human.quality", "--degrade", "tokens", "--trials", "1")
    assert code == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1 and "texts" in err
    code, _, err = run_cli(capsys, "power", "--dataset", "demo", "--metric", "metric.good", "--human",
                           "human.quality", "--k", "a,b")
    assert code == 2 and "--k" in err
    code, _, err = run_cli(capsys, "coverage", "--dataset", "demo", "--metric", "metric.good", "--human",
                           "human.quality", "--trials", "0")
    assert code == 2 and "--trials" in err and "n_trials" not in err  # the flag, not the parameter


# ---------------------------------------------------------------------------------------------
# Real data: SummEval (TACL 2021 Table 1 and Fig. 3, qualitatively)
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def summeval(data_dir):
    from metaeval_core.data.registry import load_dataset

    return load_dataset("summeval", data_dir=data_dir)


@pytest.fixture(scope="module")
def summeval_texts(data_dir):
    if not texts_available("summeval", data_dir=data_dir):
        pytest.skip("SummEval texts (summeval/bartscore/) not in the data mirror")
    return load_texts("summeval", data_dir=data_dir)


@pytest.mark.realdata
def test_summeval_texts_load_from_jsonl_and_pickle_alike(data_dir, summeval, summeval_texts, tmp_path):
    texts = summeval_texts
    assert texts.summaries.shape == (16, 100) and texts.n_summaries == 1600
    aligned = texts.aligned(summeval)
    assert aligned.systems == summeval.systems and aligned.n_summaries == 1600
    if not (data_dir / SUMMEVAL_PICKLE).is_file():
        pytest.skip("data.pkl not in the mirror")
    (tmp_path / "summeval" / "bartscore").mkdir(parents=True)
    shutil.copy(data_dir / SUMMEVAL_PICKLE, tmp_path / SUMMEVAL_PICKLE)
    from_pickle = load_summeval_texts(data_dir=tmp_path)
    assert from_pickle.source == SUMMEVAL_PICKLE
    assert from_pickle.systems == texts.systems and from_pickle.inputs == texts.inputs
    assert np.array_equal(from_pickle.summaries, texts.summaries) and from_pickle.references == texts.references
    # A corrupted file is refused before it is parsed.
    for name in (SUMMEVAL_SUMMARIES, SUMMEVAL_DOCUMENTS):
        shutil.copy(data_dir / name, tmp_path / name)
    (tmp_path / SUMMEVAL_SUMMARIES).chmod(0o644)
    with open(tmp_path / SUMMEVAL_SUMMARIES, "a", encoding="utf-8") as handle:
        handle.write("\n")
    with pytest.raises(DatasetError, match="sha256"):
        load_summeval_texts(data_dir=tmp_path)


@pytest.mark.realdata
@pytest.mark.slow
def test_summeval_rouge1_equals_rouge_score_exactly(summeval, summeval_texts):
    texts = summeval_texts.aligned(summeval)
    counts = Rouge1Counts.from_texts(texts)
    scorer = _scorer()
    fast = {v: counts.scores(v) for v in ("f1", "recall", "precision")}
    for i in range(16):
        for j in range(100):
            score = scorer.score(texts.references[j], texts.summaries[i, j])["rouge1"]
            for v in fast:
                assert fast[v][i, j] == rouge_score_value(score, v), (i, j, v)
    # Subsamples: 160 summaries at k = 30, the words kept re-scored by rouge-score.
    ranks = counts.draw_ranks(np.random.default_rng(0))
    sub = counts.scores("f1", 30, ranks)
    for cell in range(0, 1600, 10):
        i, j = divmod(cell, 100)
        words = raw_words(texts.summaries[i, j])
        own = ranks[counts.cell_start[cell]:counts.cell_start[cell] + len(words)]
        chosen = [w for w, r in zip(words, own) if r < math.floor(len(words) * 30 / 100)]
        assert sub[i, j] == scorer.score(texts.references[j], " ".join(chosen))["rouge1"].fmeasure
    # The recomputed ROUGE-1 F1 agrees with SacreROUGE's scores in the dataset (same texts, aligned).
    dataset_r1 = summeval.matrix("rouge-1.f1")
    assert np.corrcoef(fast["f1"].ravel(), dataset_r1.ravel())[0, 1] > 0.99


@pytest.mark.realdata
@pytest.mark.slow
def test_summeval_coverage_boot_both_closest_to_nominal(summeval):
    # TACL Table 1 (Fabbri et al., rho_SYS, QAEval-F1, Pearson): Fisher .87, BOOT-SYSTEMS .81,
    # BOOT-INPUTS .70, BOOT-BOTH .98 -- BOOT-BOTH closest to .95.
    result = ci_coverage(summeval, "qa-eval.f1", "expert.relevance", level="system", coefficient="pearson",
                         n_trials=1000, n_resamples=1000, rng=0)
    coverage = {r.method: r.coverage for r in result.rows}
    print("\nSummEval system-level coverage (QAEval-F1, Pearson, 1000 trials):",
          {m: round(c, 3) for m, c in coverage.items()})
    assert all(r.n_valid == 1000 for r in result.rows)
    gaps = {m: abs(c - 0.95) for m, c in coverage.items()}
    assert min(gaps, key=gaps.get) == "boot-both"
    assert coverage["boot-inputs"] < coverage["boot-systems"] < coverage["boot-both"]
    assert coverage["boot-inputs"] < 0.85 and coverage["boot-both"] > 0.9


@pytest.mark.realdata
@pytest.mark.slow
def test_summeval_power_perm_both_most_powerful(summeval, summeval_texts):
    # TACL Fig. 3 (Fabbri et al., system level, Pearson): PERM-BOTH has the highest power for
    # every k; BOOT-BOTH and Williams are near 0.
    ks = (10, 30, 50, 70, 90)
    result = power_curve(summeval, "rouge-1.f1", "expert.relevance", level="system", coefficient="pearson",
                         ks=ks, n_trials=60, n_resamples=1000, texts=summeval_texts, rng=0)
    table = {(r.test, r.k): r.power for r in result.rows}
    print("\nSummEval system-level power (ROUGE-1 F1 vs R_k, Pearson, 60 trials): r(X,Z) =",
          round(result.estimate_x, 3), {f"{t} k={k}": round(p, 3) for (t, k), p in table.items()})
    for k in ks[:3]:
        assert table[("perm-both", k)] > table[("boot-both", k)]
        assert table[("perm-both", k)] > table[("williams", k)]
    for k in ks:
        assert table[("perm-both", k)] >= max(table[("boot-both", k)], table[("williams", k)])
    assert table[("perm-both", 10)] >= 0.9
    assert max(table[("boot-both", k)] for k in ks) <= 0.1 and max(table[("williams", k)] for k in ks) <= 0.1
    # Power falls as Y_k approaches X.
    assert table[("perm-both", 10)] >= table[("perm-both", 50)] >= table[("perm-both", 90)]
    assert 0.55 < result.estimate_x < 0.65  # ROUGE-1 F1: 0.61 in SacreROUGE's published table


def test_cli_default_trials_are_bounded_per_level():
    from metaeval_core.cli.main import build_parser
    from metaeval_core.cli.simulations import COVERAGE_TRIALS, POWER_TRIALS

    args = build_parser().parse_args(["power", "--dataset", "demo", "--metric", "m", "--human", "h"])
    assert args.trials is None and args.degrade == "auto" and args.coefficient == "pearson"
    assert COVERAGE_TRIALS["system"] == 1000 and POWER_TRIALS["system"] == 100
    assert set(COVERAGE_TRIALS) == set(POWER_TRIALS) == {"system", "input", "global"}
