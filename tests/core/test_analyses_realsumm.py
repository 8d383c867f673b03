"""Top-k correlations and pairwise-comparison F1 (docs/methods.md sec. 7) against slow readable references."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from metaeval_core.analyses.papers import pairwise_f1, topk_correlations, weighted_f1
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset


# -- small data --------------------------------------------------------------
@pytest.fixture(scope="module")
def small():
    """7 systems x 20 judged inputs (+ 5 unjudged), 3 metrics, Likert humans."""
    spec = SyntheticSpec(n_systems=7, n_judged=20, n_unjudged=5, n_extractive=3, seed=3,
                         metrics=(("m.good", 0.8), ("m.fair", 0.5), ("m.noise", 0.0)))
    return synthetic_dataset(spec, id="small")


@pytest.fixture(scope="module")
def holey():
    """6 systems x 12 inputs with missing cells (a system with no score on some inputs)."""
    rng = np.random.default_rng(11)
    human = rng.normal(size=(6, 12)) + np.arange(6)[:, None] * 0.4
    metric = human + rng.normal(scale=0.8, size=(6, 12))
    metric[2, :4] = np.nan
    human[4, 5] = np.nan
    metric2 = rng.normal(size=(6, 12))
    return Dataset(
        id="holey",
        systems=[f"S{i}" for i in range(6)],
        inputs=[f"d{j}" for j in range(12)],
        measures={"h": Measure("h", "human", human), "x": Measure("x", "metric", metric),
                  "y": Measure("y", "metric", metric2)},
        system_attributes={"type": ["a", "b", "a", "b", "a", "b"]},
    )


# -- top-k -------------------------------------------------------------------
def reference_topk(dataset, metric, human, coefficient, pool="judged", min_k=3):
    """For k = N..min_k: the system-level correlation among the k best systems by mean human score."""
    judged = dataset.judged
    human_mean = {}
    metric_mean = {}
    for i, system in enumerate(dataset.systems):
        h = [v for v, j in zip(dataset.measure(human).scores[i], judged) if j and not np.isnan(v)]
        cols = judged if pool == "judged" else [True] * dataset.n_inputs
        m = [v for v, j in zip(dataset.measure(metric).scores[i], cols) if j and not np.isnan(v)]
        if h:
            human_mean[system] = sum(h) / len(h)
        metric_mean[system] = sum(m) / len(m) if m else float("nan")
    ranking = sorted(human_mean, key=lambda s: -human_mean[s])  # stable: ties keep dataset order
    function = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[coefficient]
    curve = {}
    for k in range(len(ranking), min_k - 1, -1):
        top = [s for s in ranking[:k] if not np.isnan(metric_mean[s])]
        x = [metric_mean[s] for s in top]
        z = [human_mean[s] for s in top]
        if len(top) < 2 or len(set(x)) < 2 or len(set(z)) < 2:
            curve[k] = float("nan")
        else:
            curve[k] = float(function(x, z)[0])
    return ranking, curve


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("pool", ["judged", "all"])
def test_topk_matches_reference(small, coefficient, pool):
    metrics = ["m.good", "m.fair", "m.noise", "human.quality"]
    result = topk_correlations(small, metrics, "human.quality", coefficient=coefficient, pool=pool)
    assert list(result.ks) == list(range(7, 2, -1))
    for q, metric in enumerate(metrics):
        ranking, curve = reference_topk(small, metric, "human.quality", coefficient, pool)
        assert result.ranking == tuple(ranking)
        np.testing.assert_allclose(result.curve(metric), [curve[k] for k in result.ks], atol=1e-12)
    # the human against itself: 1 wherever defined
    assert np.all(result.curve("human.quality") == pytest.approx(1.0))
    records = result.to_records()
    assert len(records) == len(metrics) * 5 and set(records[0]) == {"metric", "k", "estimate"}


def test_topk_missing_cells_and_subset(holey):
    result = topk_correlations(holey, ["x", "y"], "h", coefficient="kendall", min_k=2)
    for metric in ["x", "y"]:
        ranking, curve = reference_topk(holey, metric, "h", "kendall", min_k=2)
        np.testing.assert_allclose(result.curve(metric), [curve[k] for k in result.ks], atol=1e-12)
    assert result.ks[-1] == 2 and np.all(np.abs(result.estimate[:, -1]) == 1.0)
    sub = topk_correlations(holey, ["x"], "h", systems="type=a")
    assert list(sub.ks) == [3] and set(sub.ranking) == {"S0", "S2", "S4"} and sub.systems == "type=a"
    expected = reference_topk(holey.select_systems("type=a"), "x", "h", "pearson")[1][3]
    assert sub.estimate[0, 0] == pytest.approx(expected)


def test_topk_ties_and_unranked():
    human = np.array([[1.0, 1.0], [2.0, 2.0], [1.0, 1.0], [np.nan, np.nan], [3.0, 3.0]])
    metric = np.array([[1.0, 2.0], [3.0, 4.0], [0.0, 1.0], [5.0, 5.0], [9.0, 9.0]])
    ds = Dataset(id="t", systems=list("ABCDE"), inputs=["1", "2"],
                 measures={"h": Measure("h", "human", human), "m": Measure("m", "metric", metric)})
    result = topk_correlations(ds, ["m"], "h", coefficient="pearson", min_k=2)
    assert result.ranking == ("E", "B", "A", "C") and result.unranked == ("D",)
    assert list(result.ks) == [4, 3, 2]
    assert result.n[0].tolist() == [4, 3, 2]


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        (dict(metrics="m.good"), TypeError, "metrics must be a sequence"),
        (dict(metrics=[]), ValueError, "metrics must name at least 1"),
        (dict(metrics=["m.good", "m.good"]), ValueError, "must not repeat"),
        (dict(metrics=["nope"]), DatasetError, "unknown measure 'nope'"),
        (dict(human="m.good"), DatasetError, "not a human measure"),
        (dict(coefficient="tau"), ValueError, "coefficient must be one of"),
        (dict(pool="some"), ValueError, "pool must be one of"),
        (dict(min_k=1), ValueError, "min_k must be at least 2"),
        (dict(min_k=8), ValueError, "min_k must not exceed the number of systems (7)"),
        (dict(min_k=3.0), TypeError, "min_k must be an int"),
        (dict(systems="type=none"), DatasetError, "no system"),
    ],
)
def test_topk_validation(small, kwargs, error, fragment):
    args = dict(metrics=["m.good"], human="human.quality")
    args.update(kwargs)
    metrics, human = args.pop("metrics"), args.pop("human")
    with pytest.raises(error, match=None) as info:
        topk_correlations(small, metrics, human, **args)
    assert fragment in str(info.value)


# -- weighted F1 ---------------------------------------------------------------
def test_weighted_f1_by_hand():
    # class 0: TP 1, FP 2, FN 0 -> P 1/3, R 1, F1 1/2 (support 1)
    # class 1: TP 2, FP 1, FN 1 -> P 2/3, R 2/3, F1 2/3 (support 3)
    # class 2: TP 0, FP 0, FN 2 -> F1 0 (support 2)
    y_true = np.array([1, 1, 1, 0, 2, 2])
    y_pred = np.array([1, 1, 0, 0, 0, 1])
    assert weighted_f1(y_true, y_pred) == pytest.approx((1 * 0.5 + 3 * 2 / 3 + 2 * 0.0) / 6)
    # a predicted class absent from the truth has weight 0 but still costs precision elsewhere
    assert weighted_f1(np.array([0, 0]), np.array([0, 1])) == pytest.approx(2 / 3)
    assert weighted_f1(y_true, y_true) == 1.0
    # batched predictions
    both = weighted_f1(y_true, np.stack([y_pred, y_true]))
    np.testing.assert_allclose(both, [2.5 / 6, 1.0])
    assert np.isnan(weighted_f1(np.array([], dtype=int), np.array([], dtype=int)))
    with pytest.raises(ValueError, match="y_pred must end with the length of y_true"):
        weighted_f1(y_true, y_pred[:3])


def reference_weighted_f1(y_true, y_pred):
    """sklearn-style weighted F1, written out with precision and recall per class."""
    total = 0.0
    for label in sorted(set(y_true)):
        tp = sum(1 for t, p in zip(y_true, y_pred) if t == label and p == label)
        predicted = sum(1 for p in y_pred if p == label)
        actual = sum(1 for t in y_true if t == label)
        precision = tp / predicted if predicted else 0.0
        recall = tp / actual
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        total += actual / len(y_true) * f1
    return total


def test_weighted_f1_matches_precision_recall_form():
    rng = np.random.default_rng(4)
    for _ in range(50):
        n = int(rng.integers(1, 30))
        y_true = rng.integers(0, 3, n)
        y_pred = rng.integers(0, 3, n)
        assert weighted_f1(y_true, y_pred) == pytest.approx(reference_weighted_f1(list(y_true), list(y_pred)))


# -- pairwise F1 -----------------------------------------------------------------
def reference_pairwise(dataset, metrics, human, indices, confidence=0.95):
    """Labels by looping over resamples, systems and pairs; the bootstrap indices are given."""
    judged = np.flatnonzero(dataset.judged)

    def labels_of(name):
        scores = dataset.measure(name).scores[:, judged]
        out, shares = [], []
        for a, b in itertools.combinations(range(dataset.n_systems), 2):
            a_wins = b_wins = defined = 0
            for draw in indices:
                values_a = [scores[a, j] for j in draw if not np.isnan(scores[a, j])]
                values_b = [scores[b, j] for j in draw if not np.isnan(scores[b, j])]
                if not values_a or not values_b:
                    continue
                mean_a, mean_b = math.fsum(values_a) / len(values_a), math.fsum(values_b) / len(values_b)
                defined += 1
                tie = abs(mean_a - mean_b) <= 1e-10 * max(abs(mean_a), abs(mean_b))
                a_wins += not tie and mean_a > mean_b
                b_wins += not tie and mean_b > mean_a
            label = 1 if defined and a_wins >= confidence * defined else 2 if defined and b_wins >= confidence * defined else 0
            out.append(label)
            shares.append(a_wins / defined if defined else float("nan"))
        return out, shares

    human_labels, human_shares = labels_of(human)
    result = {}
    for metric in metrics:
        metric_labels, metric_shares = labels_of(metric)
        result[metric] = (metric_labels, metric_shares, reference_weighted_f1(human_labels, metric_labels))
    return human_labels, human_shares, result


@pytest.mark.parametrize("name", ["small", "holey"])
def test_pairwise_f1_matches_reference(request, name):
    dataset = request.getfixturevalue(name)
    metrics = [m for m in dataset.metric_measures]
    human = dataset.human_measures[0]
    k = 60
    result = pairwise_f1(dataset, metrics, human, n_resamples=k, rng=7)
    # the same indices, drawn as the implementation does: all up front from the seed
    indices = np.random.default_rng(7).integers(0, dataset.n_judged, size=(k, dataset.n_judged))
    human_labels, human_shares, per_metric = reference_pairwise(dataset, metrics, human, indices)
    assert result.human_labels.tolist() == human_labels
    np.testing.assert_allclose(result.human_share, human_shares)
    for q, metric in enumerate(metrics):
        labels, shares, f1 = per_metric[metric]
        assert result.metric_labels[q].tolist() == labels
        np.testing.assert_allclose(result.metric_share[q], shares)
        assert result.f1[q] == pytest.approx(f1)
    assert result.n_pairs == dataset.n_systems * (dataset.n_systems - 1) // 2
    rows = result.label_records(metrics[0])
    assert set(rows[0]) >= {"system_a", "system_b", "human_label", "metric_label", "human_share", "metric_share"}


def test_pairwise_f1_batch_and_seed_invariance(small):
    metrics = list(small.metric_measures)
    base = pairwise_f1(small, metrics, "human.quality", n_resamples=101, rng=5)
    for batch in (1, 7, 100, 101, 1000):
        other = pairwise_f1(small, metrics, "human.quality", n_resamples=101, rng=5, batch=batch)
        np.testing.assert_array_equal(other.metric_labels, base.metric_labels)
        np.testing.assert_array_equal(other.human_share, base.human_share)
        np.testing.assert_array_equal(other.f1, base.f1)
    from_generator = pairwise_f1(small, metrics, "human.quality", n_resamples=101,
                                 rng=np.random.default_rng(5), batch=13)
    np.testing.assert_array_equal(from_generator.metric_share, base.metric_share)
    different = pairwise_f1(small, metrics, "human.quality", n_resamples=101, rng=6)
    assert not np.array_equal(different.metric_share, base.metric_share)


def test_pairwise_f1_identical_metric_and_subset(small):
    # A "metric" equal to the human measure gets the human labels exactly: F1 = 1.
    result = pairwise_f1(small, ["human.quality", "m.noise"], "human.quality", n_resamples=200, rng=1)
    assert result.f1[0] == 1.0
    np.testing.assert_array_equal(result.metric_labels[0], result.human_labels)
    assert 0.0 <= result.f1[1] < 1.0
    sub = pairwise_f1(small, ["m.good"], "human.quality", n_resamples=50, rng=1, systems="type=abs")
    assert sub.system_names == tuple(s for s, t in zip(small.systems, small.system_attribute("type")) if t == "abs")
    assert sub.n_pairs == 6


def test_pairwise_labels_threshold_is_inclusive():
    # Two systems, one input where A wins, bootstrap over a single input: A wins every resample.
    ds = Dataset(id="t", systems=["A", "B"], inputs=["1"],
                 measures={"h": Measure("h", "human", [[2.0], [1.0]]), "m": Measure("m", "metric", [[1.0], [1.0]])})
    result = pairwise_f1(ds, ["m"], "h", n_resamples=20, rng=0)
    assert result.human_labels.tolist() == [1] and result.human_share.tolist() == [1.0]
    assert result.metric_labels.tolist() == [[0]] and result.metric_share.tolist() == [[0.0]]
    assert result.f1.tolist() == [0.0]


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        (dict(n_resamples=0), ValueError, "n_resamples must be at least 1"),
        (dict(confidence=1.0), ValueError, "confidence must lie strictly between 0 and 1"),
        (dict(batch=0), ValueError, "batch must be at least 1"),
        (dict(rng="seed"), TypeError, "rng must be a numpy.random.Generator"),
        (dict(systems="type=zzz"), DatasetError, "no system"),
    ],
)
def test_pairwise_validation(small, kwargs, error, fragment):
    with pytest.raises(error) as info:
        pairwise_f1(small, ["m.good"], "human.quality", **kwargs)
    assert fragment in str(info.value)


def test_pairwise_f1_is_fast_at_realsumm_scale():
    """24 systems x 100 inputs x 1000 resamples x 20 metrics: a few seconds at most."""
    import time

    spec = SyntheticSpec(n_systems=24, n_judged=100, n_unjudged=0,
                         metrics=tuple((f"m{q}", q / 20) for q in range(20)))
    ds = synthetic_dataset(spec)
    start = time.perf_counter()
    result = pairwise_f1(ds, list(ds.metric_measures), "human.quality", n_resamples=1000, rng=0)
    elapsed = time.perf_counter() - start
    assert result.f1.shape == (20,)
    assert elapsed < 10.0, f"pairwise_f1 took {elapsed:.1f}s"


def test_pairwise_f1_compares_only_systems_the_human_rates():
    """A system without human scores gives no human label: its pairs are left out, not labelled 'no difference'."""
    from metaeval_core.data.synthetic import synthetic_dataset

    ds = synthetic_dataset()
    human, metric = "human.quality", "metric.good"
    z = ds.measure(human).scores.copy()
    z[0, :] = np.nan  # the first system has no human score
    from dataclasses import replace as _replace

    unrated = _replace(ds, measures={**ds.measures, human: ds.measure(human).with_scores(z, None)}, version="")
    result = pairwise_f1(unrated, [metric], human, n_resamples=50, rng=0)
    n = ds.n_systems - 1
    assert result.n_pairs == n * (n - 1) // 2
