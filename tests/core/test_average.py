"""Averages over tasks (docs/methods.md sec. 13): oracles by slow loops, shared and independent draws."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from metaeval_core.analyses.average import Task, average_over_tasks, parse_task
from metaeval_core.cli.main import main as cli_main
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.stats.resampling import _draw_bootstrap_indices, confidence_interval
from metaeval_core.stats.significance import _shared_seed
from metaeval_core.stats.significance.permutation import _draw_swap_masks

from .oracles import count_pvalue, level_corr, percentile_interval, resample, zscore


def _dataset(name: str, n: int, m: int, seed: int, *, humans=("h1", "h2"), metrics=("m1", "m2", "m3"),
             extra: dict | None = None) -> Dataset:
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n, 1)) + 0.3 * rng.normal(size=(n, m))
    measures = {h: Measure(h, "human", quality + rng.normal(scale=0.8, size=(n, m))) for h in humans}
    for k, name_ in enumerate(metrics):
        measures[name_] = Measure(name_, "metric", (1.0 - 0.3 * k) * quality + rng.normal(size=(n, m)))
    for key, values in (extra or {}).items():
        measures[key] = Measure(key, "metric", values)
    return Dataset(name, [f"s{i}" for i in range(n)], [f"i{j}" for j in range(m)], measures)


@pytest.fixture(scope="module")
def two_datasets():
    a = _dataset("a", 6, 8, 1, extra={"m4": np.random.default_rng(9).normal(size=(6, 8))})
    b = _dataset("b", 5, 7, 2, humans=("g",))
    return {"a": a, "b": b}


TASKS = (Task("a", "h1", "system", "kendall"), Task("a", "h2", "input", "pearson"), Task("b", "g", "system",
                                                                                      "spearman"))


def _oracle(datasets, tasks, metrics, *, seed, k, interval="boot-both", test="perm-both", alpha=0.05):
    """Per resample, per task: resample literally, scipy's coefficient, mean over tasks (the doc, line by line)."""
    groups: dict[str, int] = {}
    for t in tasks:
        groups.setdefault(t.dataset, len(groups))
    seeds = [_shared_seed(c) for c in np.random.default_rng(seed).spawn(len(groups))]
    mats = [({m: datasets[t.dataset].matrix(m) for m in metrics}, datasets[t.dataset].matrix(t.human)) for t in tasks]
    estimates = np.array([np.mean([level_corr(x[m], z, t.level, t.coefficient) for t, (x, z) in zip(tasks, mats)])
                          for m in metrics])
    indices = {}
    for t, (x, z) in zip(tasks, mats):
        g = groups[t.dataset]
        if g not in indices:
            indices[g] = _draw_bootstrap_indices(np.random.default_rng(seeds[g]), interval, k, *z.shape)
    averaged = np.zeros((k, len(metrics)))
    for s in range(k):
        for t, (x, z) in zip(tasks, mats):
            ind = indices[groups[t.dataset]]
            systems = None if ind.systems is None else ind.systems[s]
            inputs = None if ind.metric_inputs is None else ind.metric_inputs[s]
            for q, m in enumerate(metrics):
                averaged[s, q] += level_corr(resample(x[m], systems, inputs), resample(z, systems, inputs), t.level,
                                             t.coefficient) / len(tasks)
    intervals = [percentile_interval(averaged[:, q], 0.95) for q in range(len(metrics))]
    masks = {}
    for t, (x, z) in zip(tasks, mats):
        g = groups[t.dataset]
        if g not in masks:
            masks[g] = _draw_swap_masks(np.random.default_rng(seeds[g]), test, k, *z.shape)
    pvalue = np.full((len(metrics),) * 2, np.nan)
    for a in range(len(metrics)):
        for b in range(len(metrics)):
            if a == b:
                continue
            null = np.zeros(k)
            for t, (x, z) in zip(tasks, mats):
                xz, yz = zscore(x[metrics[a]]), zscore(x[metrics[b]])
                for s, mask in enumerate(masks[groups[t.dataset]]):
                    null[s] += (level_corr(np.where(mask, yz, xz), z, t.level, t.coefficient)
                                - level_corr(np.where(mask, xz, yz), z, t.level, t.coefficient)) / len(tasks)
            pvalue[a, b] = count_pvalue(null, estimates[a] - estimates[b], "greater")
    corrected = np.minimum(1.0, pvalue * (len(metrics) - 1))  # Bonferroni within each row
    order = sorted(range(len(metrics)), key=lambda i: -estimates[i])
    clusters: list[list[int]] = []
    for i in order:
        if clusters and not any(corrected[c, i] < alpha for c in clusters[-1]):
            clusters[-1].append(i)
        else:
            clusters.append([i])
    return estimates, intervals, pvalue, [[metrics[i] for i in c] for c in clusters], averaged


def test_average_intervals_tests_and_clusters_match_slow_loops(two_datasets):
    metrics = ("m1", "m2", "m3")
    result = average_over_tasks(two_datasets, TASKS, metrics, n_resamples=60, rng=5, return_distribution=True)
    estimates, intervals, pvalue, clusters, averaged = _oracle(two_datasets, TASKS, metrics, seed=5, k=60)
    np.testing.assert_allclose(result.average, estimates, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.distribution, averaged, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.low, [i[0] for i in intervals], rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.high, [i[1] for i in intervals], rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.table.pvalue, pvalue, rtol=0, atol=1e-12)
    assert [list(c) for c in result.clusters.clusters] == clusters
    assert result.draw_groups == (0, 0, 1)
    # The per-task values are each task's own correlation.
    for t, task in enumerate(TASKS):
        ds = two_datasets[task.dataset]
        for i, m in enumerate(metrics):
            assert result.values[i, t] == pytest.approx(level_corr(ds.matrix(m), ds.matrix(task.human), task.level,
                                                                   task.coefficient), abs=1e-12)


def test_paired_bootstrap_test_on_the_average_matches_a_slow_loop(two_datasets):
    metrics = ("m1", "m2", "m3")
    result = average_over_tasks(two_datasets, TASKS, metrics, method="boot-inputs", test="boot-inputs",
                                n_resamples=50, rng=3, alternative="two-sided")
    estimates, _, _, _, averaged = _oracle(two_datasets, TASKS, metrics, seed=3, k=50, interval="boot-inputs",
                                           test="perm-inputs")
    for a in range(3):
        for b in range(3):
            if a != b:
                centred = averaged[:, a] - averaged[:, b] - (estimates[a] - estimates[b])
                assert result.table.pvalue[a, b] == pytest.approx(
                    count_pvalue(centred, estimates[a] - estimates[b], "two-sided"), abs=1e-12)


def test_tasks_on_one_dataset_share_draws_and_datasets_draw_independently(two_datasets):
    a = two_datasets["a"]
    twin = Dataset("a", a.systems, a.inputs, {**a.measures, "h1copy": Measure("h1copy", "human", a.matrix("h1"))})
    other = Dataset("a2", a.systems, a.inputs, a.measures)
    single = average_over_tasks({"a": twin}, [Task("a", "h1")], ["m1"], n_resamples=300, rng=11,
                                return_distribution=True)
    # One task alone: exactly confidence_interval on the group's child stream.
    stream = np.random.default_rng(_shared_seed(np.random.default_rng(11).spawn(1)[0]))
    ci = confidence_interval(a.matrix("m1"), a.matrix("h1"), level="system", coefficient="kendall",
                             method="boot-both", n_resamples=300, rng=stream)
    assert (single.low[0], single.high[0]) == (ci.low, ci.high)
    # The same data as a second task of the same dataset: shared draws, the very same resamples.
    shared = average_over_tasks({"a": twin}, [Task("a", "h1"), Task("a", "h1copy")], ["m1"], n_resamples=300,
                                rng=11, return_distribution=True)
    np.testing.assert_allclose(shared.distribution, single.distribution, rtol=0, atol=1e-15)
    assert shared.draw_groups == (0, 0)
    # The same data under another dataset's name: independent draws, so the average varies less.
    apart = average_over_tasks({"a": twin, "a2": other}, [Task("a", "h1"), Task("a2", "h1")], ["m1"],
                               n_resamples=300, rng=11, return_distribution=True)
    assert apart.draw_groups == (0, 1)
    np.testing.assert_allclose(apart.distribution[:, 0], 0.5 * (single.distribution[:, 0] + np.array(
        _other_stream_distribution(a, 11, 300))), rtol=0, atol=1e-12)
    assert np.std(apart.distribution) < 0.85 * np.std(single.distribution)
    # A task of another dataset added at the end never changes the first group's draws.
    first = average_over_tasks({"a": twin, "a2": other}, [Task("a", "h1"), Task("a", "h1copy"), Task("a2", "h1")],
                               ["m1"], n_resamples=300, rng=11, return_distribution=True)
    assert first.draw_groups == (0, 0, 1)
    np.testing.assert_allclose(first.distribution[:, 0], (2 * single.distribution[:, 0] + np.array(
        _other_stream_distribution(a, 11, 300))) / 3, rtol=0, atol=1e-12)


def _other_stream_distribution(a: Dataset, seed: int, k: int) -> np.ndarray:
    stream = np.random.default_rng(_shared_seed(np.random.default_rng(seed).spawn(2)[1]))
    return confidence_interval(a.matrix("m1"), a.matrix("h1"), level="system", coefficient="kendall",
                               method="boot-both", n_resamples=k, rng=stream, return_distribution=True).distribution


def test_a_metric_missing_or_undefined_on_a_task_gets_no_average(two_datasets):
    a = two_datasets["a"]
    constant = Dataset("a", a.systems, a.inputs, {**a.measures, "flat": Measure("flat", "metric", np.ones((6, 8)))})
    data = {"a": constant, "b": two_datasets["b"]}
    result = average_over_tasks(data, TASKS, ["m1", "m4", "flat", "m2"], n_resamples=50, rng=0)
    assert result.averaged == ("m1", "m2")
    reasons = dict(zip(result.metrics, result.reasons))
    assert reasons["m4"] == "not in dataset b"
    assert reasons["flat"].startswith("not in dataset b; undefined on a:h1:system:kendall")
    row = {r["metric"]: r for r in result.to_records()}
    assert row["m4"]["average"] is None and row["m4"]["cluster"] is None
    # Its values on the tasks it has are still shown, never averaged over fewer tasks.
    assert row["m4"]["a:h1:system:kendall"] is not None and row["m4"]["b:g:system:spearman"] is None
    assert math.isnan(result.average[1]) and result.table.metrics == ("m1", "m2")
    assert [r["metric"] for r in result.to_records()][-2:] == ["m4", "flat"]


@pytest.mark.parametrize("test", ["perm-both", "perm-systems", "boot-both"])
def test_identical_results_for_any_batch(two_datasets, test):
    kwargs = dict(test=test, n_resamples=70, rng=4, return_distribution=True)
    full = average_over_tasks(two_datasets, TASKS, ["m1", "m2", "m3"], **kwargs)
    small = average_over_tasks(two_datasets, TASKS, ["m1", "m2", "m3"], batch=9, **kwargs)
    np.testing.assert_array_equal(full.distribution, small.distribution)
    np.testing.assert_array_equal(full.table.pvalue, small.table.pvalue)
    assert full.clusters.clusters == small.clusters.clusters


def test_to_frame_and_to_dict_carry_rows_tasks_pairs_and_clusters(two_datasets):
    result = average_over_tasks(two_datasets, TASKS, ["m1", "m2", "m3"], n_resamples=50, rng=0)
    frame = result.to_frame()
    assert list(frame.columns[:7]) == ["cluster", "metric", "average", "low", "high", "n_defined", "reason"]
    assert [t.label for t in TASKS] == list(frame.columns[7:])
    payload = json.loads(json.dumps(result.to_dict()))
    assert [t["draw_group"] for t in payload["tasks"]] == [0, 0, 1]
    assert len(payload["pairs"]) == 6 and payload["clusters"]
    assert len(result.task_records()) == 9


def test_parse_task_and_validation(two_datasets):
    assert parse_task("summeval:expert.coherence") == Task("summeval", "expert.coherence")
    assert parse_task("d:h:input:pearson") == Task("d", "h", "input", "pearson")
    assert parse_task("d:a:b:global", coefficient="spearman") == Task("d", "a:b", "global", "spearman")
    for bad in ("summeval", "summeval:", ":h"):
        with pytest.raises(ValueError):
            parse_task(bad)
    with pytest.raises(ValueError, match="coefficient"):
        Task("a", "h1", coefficient="tau")
    with pytest.raises(ValueError, match="not among the datasets"):
        average_over_tasks(two_datasets, [Task("zz", "h1")], ["m1"])
    with pytest.raises(ValueError, match="method"):
        average_over_tasks(two_datasets, TASKS, ["m1"], method="fisher")
    with pytest.raises(DatasetError, match="not a human measure"):
        average_over_tasks(two_datasets, [Task("a", "m1")], ["m2"])
    with pytest.raises(ValueError, match="repeat"):
        average_over_tasks(two_datasets, [TASKS[0], TASKS[0]], ["m1"])


@pytest.mark.slow
def test_permutation_test_on_the_average_holds_its_level_under_the_null():
    # Two exchangeable metrics (same signal, independent noise of one size) on two datasets, three tasks.
    alpha, trials, rejected = 0.1, 150, 0
    for trial in range(trials):
        rng = np.random.default_rng(1000 + trial)
        data = {}
        for name, n in (("p", 8), ("r", 7)):
            signal = rng.normal(size=(n, 1)) + 0.5 * rng.normal(size=(n, 10))
            data[name] = Dataset(name, [f"s{i}" for i in range(n)], [f"i{j}" for j in range(10)], {
                "h": Measure("h", "human", signal + rng.normal(size=(n, 10))),
                "h2": Measure("h2", "human", signal + rng.normal(size=(n, 10))),
                "x": Measure("x", "metric", signal + rng.normal(size=(n, 10))),
                "y": Measure("y", "metric", signal + rng.normal(size=(n, 10)))})
        tasks = [Task("p", "h"), Task("p", "h2", "input"), Task("r", "h", coefficient="pearson")]
        result = average_over_tasks(data, tasks, ["x", "y"], n_resamples=99, rng=trial, alpha=alpha)
        rejected += bool(result.table.pvalue[0, 1] < alpha)
    # Binomial(150, 0.1): mean 15, sd 3.7; a valid test rejects at most about that often.
    assert rejected <= 15 + 3 * 3.7


def test_cli_average_prints_and_writes_json(tmp_path, capsys):
    code = cli_main(["average", "--task", "demo:human.quality", "--task", "demo:human.quality:input:pearson",
                     "--metrics", "metric.strong,metric.weak,metric.noise", "--n-resamples", "100", "--json"])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert [t["label"] for t in payload["tasks"]] == ["demo:human.quality:system:kendall",
                                                     "demo:human.quality:input:pearson"]
    assert [t["draw_group"] for t in payload["tasks"]] == [0, 0]
    rows = {r["metric"]: r for r in payload["metrics"]}
    assert rows["metric.strong"]["cluster"] == 1 and rows["metric.strong"]["low"] <= rows["metric.strong"]["average"]
    code = cli_main(["average", "--task", "demo:human.quality", "--metrics", "metric.strong,metric.weak",
                     "--n-resamples", "100"])
    out = capsys.readouterr().out
    assert code == 0 and "metric.strong" in out and "cluster" in out
    code = cli_main(["average", "--task", "demo", "--metrics", "metric.strong", "--n-resamples", "100"])
    assert code == 2 and "DATASET:HUMAN" in capsys.readouterr().err


def test_pool_all_is_its_own_draw_group_and_resamples_as_a_single_interval(demo):
    from metaeval_core.stats.resampling import dataset_confidence_interval

    tasks = [Task("demo", "human.quality", pool="all"), Task("demo", "human.quality", "input", pool="all")]
    result = average_over_tasks(demo, tasks, ["metric.good"], n_resamples=200, rng=2, return_distribution=True)
    assert result.draw_groups == (0, 1)  # pool 'all' changes the system level only: the input task is judged
    stream = np.random.default_rng(_shared_seed(np.random.default_rng(2).spawn(2)[0]))
    ci = dataset_confidence_interval(demo, "metric.good", "human.quality", level="system", coefficient="kendall",
                                     method="boot-both", pool="all", n_resamples=200, rng=stream,
                                     return_distribution=True)
    assert ci.pool == "all"
    other = np.random.default_rng(_shared_seed(np.random.default_rng(2).spawn(2)[1]))
    per_input = dataset_confidence_interval(demo, "metric.good", "human.quality", level="input",
                                            coefficient="kendall", method="boot-both", n_resamples=200, rng=other,
                                            return_distribution=True)
    np.testing.assert_allclose(result.distribution[:, 0], (ci.distribution + per_input.distribution) / 2,
                               rtol=0, atol=1e-12)


# -- WMT's rescaled average (docs/methods.md sec. 13.3) ------------------------------------------------------------
MIXED = (Task("a", "h1", "system", "kendall"), Task("a", "h2", "system", "pairwise-accuracy"),
         Task("a", "h1", "input", "pearson"))


def test_rescaled_average_maps_each_task_by_its_range_then_averages(two_datasets):
    """WMT's rule (mt-metrics-eval AverageCorrs): (r - lo) / (hi - lo) per task, then the mean; resamples alike."""
    metrics = ("m1", "m2", "m3")
    plain = average_over_tasks(two_datasets, MIXED, metrics, n_resamples=60, rng=4, rule="mean",
                               return_distribution=True)
    wmt = average_over_tasks(two_datasets, MIXED, metrics, n_resamples=60, rng=4, rule="rescaled",
                             return_distribution=True)
    assert plain.rule == "mean" and wmt.rule == "rescaled" and wmt.to_dict()["rule"] == "rescaled"
    lo = np.array([-1.0, 0.0, -1.0])
    width = np.array([2.0, 1.0, 2.0])
    np.testing.assert_array_equal(wmt.values, plain.values)  # the task values are the tasks' own
    np.testing.assert_allclose(wmt.average, ((plain.values - lo) / width).mean(axis=1), rtol=0, atol=1e-12)
    assert np.all((0 <= wmt.average) & (wmt.average <= 1))
    # Per resample: each task's resampled value rescaled, from the same draws (one draw group).
    seeds = [_shared_seed(c) for c in np.random.default_rng(4).spawn(1)]
    from metaeval_core.stats.resampling import _bootstrap_correlations

    ds = two_datasets["a"]
    indices = _draw_bootstrap_indices(np.random.default_rng(seeds[0]), "boot-both", 60, ds.n_systems, ds.n_inputs)
    expected = sum((_bootstrap_correlations([ds.matrix(m) for m in metrics], ds.matrix(t.human), level=t.level,
                                            coefficient=t.coefficient, indices=indices, batch=None) - lo[i]) / width[i]
                   for i, t in enumerate(MIXED)) / len(MIXED)
    np.testing.assert_allclose(wmt.distribution, expected, rtol=0, atol=1e-12)


def test_rescaled_permutation_test_scales_each_tasks_null(two_datasets):
    metrics = ("m1", "m2", "m3")
    wmt = average_over_tasks(two_datasets, MIXED, metrics, n_resamples=80, rng=8, rule="rescaled",
                             correction="none")
    seeds = [_shared_seed(c) for c in np.random.default_rng(8).spawn(1)]
    from metaeval_core.stats.significance import permutation_pair_nulls

    ds = two_datasets["a"]
    width = [2.0, 1.0, 2.0]
    nulls = sum(permutation_pair_nulls([ds.matrix(m) for m in metrics], ds.matrix(t.human), level=t.level,
                                       coefficient=t.coefficient, method="perm-both", n_resamples=80,
                                       seed=seeds[0]) / width[i] for i, t in enumerate(MIXED)) / len(MIXED)
    for u, (a, b) in enumerate(((0, 1), (0, 2), (1, 2))):
        d = wmt.average[a] - wmt.average[b]
        assert wmt.table.pvalue[a, b] == pytest.approx(count_pvalue(nulls[u], d, "greater"), abs=1e-12)
        assert wmt.table.pvalue[b, a] == pytest.approx(count_pvalue(-nulls[u], -d, "greater"), abs=1e-12)


def test_one_coefficient_ranks_alike_under_both_rules(two_datasets):
    tasks = (Task("a", "h1", "system", "kendall"), Task("a", "h2", "system", "kendall"))
    plain = average_over_tasks(two_datasets, tasks, ("m1", "m2", "m3"), n_resamples=50, rng=1, rule="mean")
    wmt = average_over_tasks(two_datasets, tasks, ("m1", "m2", "m3"), n_resamples=50, rng=1, rule="rescaled")
    np.testing.assert_allclose(wmt.average, (plain.average + 1) / 2, atol=1e-12)
    np.testing.assert_allclose(wmt.table.pvalue, plain.table.pvalue, atol=1e-12)


def test_wmt_data_defaults_to_the_rescaled_average_and_wmt_test(tmp_path, two_datasets):
    from metaeval_core.data.mtme import read_mtme
    from metaeval_core.stats.significance import compare_all_pairs
    from tests.mtme_replica import write_replica

    wmt = read_mtme(write_replica(tmp_path).test_set, lp="en-de")
    metrics = ("BLEU-refA", "COMET-22-refB", "Prism-src")
    tasks = (Task(wmt.id, "mqm", "system", "pearson"),)
    result = average_over_tasks({wmt.id: wmt}, tasks, metrics, n_resamples=100, rng=6, correction="none")
    assert result.rule == "rescaled" and result.test == "wmt-perm-sys"
    # One task: the average's WMT test is that task's WMT test (sec. 3.6) on the rescaled scale, same draws.
    from metaeval_core.stats.significance import wmt_pair_nulls

    seed = _shared_seed(np.random.default_rng(6).spawn(1)[0])
    # Pool judged: each metric over the cells mqm scored (docs/methods.md sec. 0.2).
    judged = [np.where(np.isnan(wmt.matrix("mqm")), np.nan, wmt.matrix(m)) for m in metrics]
    nulls, thresholds = wmt_pair_nulls(judged, wmt.matrix("mqm"), coefficient="pearson",
                                       n_resamples=100, rng=np.random.default_rng(seed))
    for u, (a, b) in enumerate(((0, 1), (0, 2), (1, 2))):
        assert result.table.pvalue[a, b] == pytest.approx(count_pvalue(nulls[u], thresholds[u], "greater"), abs=1e-12)
        assert result.table.pvalue[b, a] == pytest.approx(count_pvalue(-nulls[u], -thresholds[u], "greater"),
                                                          abs=1e-12)
    with_input = (*tasks, Task(wmt.id, "mqm", "input", "kendall"))
    assert average_over_tasks({wmt.id: wmt}, with_input, metrics, n_resamples=50, rng=6).test == "perm-both"
    with pytest.raises(ValueError, match="input.*kendall|system-level scores"):
        average_over_tasks({wmt.id: wmt}, with_input, metrics, n_resamples=50, test="wmt-perm-sys")
    plain = average_over_tasks(two_datasets, TASKS, ("m1", "m2"), n_resamples=50, rng=6)
    assert plain.rule == "mean" and plain.test == "perm-both"
    with pytest.raises(ValueError, match="rule"):
        average_over_tasks(two_datasets, TASKS, ("m1", "m2"), rule="wmt")


@pytest.mark.realdata
def test_summeval_ranking_flips_under_wmts_average(data_dir):
    """Issue 25's example: two SummEval tasks, a pairwise accuracy and a Kendall tau. Plain mean: s3.pyr 0.554 >
    bertscore.f1 0.513; WMT's rescaled average: 0.683 < 0.692."""
    from metaeval_core.data.registry import load_dataset

    ds = load_dataset("summeval", data_dir=data_dir)
    tasks = (Task("summeval", "expert.coherence", "system", "pairwise-accuracy"),
             Task("summeval", "expert.relevance", "system", "kendall"))
    metrics = ("s3.pyr", "bertscore.f1")
    plain = average_over_tasks({"summeval": ds}, tasks, metrics, n_resamples=50, rng=0)
    wmt = average_over_tasks({"summeval": ds}, tasks, metrics, n_resamples=50, rng=0, rule="rescaled")
    assert plain.rule == "mean"  # SummEval is not WMT data
    np.testing.assert_allclose(plain.average, [0.554, 0.513], atol=5e-4)
    np.testing.assert_allclose(wmt.average, [0.683, 0.692], atol=5e-4)
    assert plain.average[0] > plain.average[1] and wmt.average[0] < wmt.average[1]


def test_tasks_whose_humans_rate_different_systems_draw_apart():
    """A human that never scored one system (WMT22 zh-en: 12 of 13) gets its tasks' systems without it (rated_by);
    its tasks cannot share the other humans' system indices (was: IndexError / 'cannot reshape' on the Overall
    average page) and draw on their own, each interval that of the task alone."""
    a = _dataset("a", 7, 8, 3)
    partial = a.matrix("h2").copy()
    partial[0] = np.nan  # h2 never scored s0
    data = Dataset("a", a.systems, a.inputs, {**a.measures, "h2": Measure("h2", "human", partial)})
    both = average_over_tasks({"a": data}, [Task("a", "h1"), Task("a", "h2")], ["m1", "m2"], n_resamples=200, rng=5)
    assert both.draw_groups == (0, 1)
    assert np.isfinite(both.low).all() and np.isfinite(both.high).all()
    alone = average_over_tasks({"a": data}, [Task("a", "h2")], ["m1", "m2"], n_resamples=200, rng=5)
    subset = data.rated_by("h2")
    assert subset.n_systems == 6
    np.testing.assert_allclose(alone.average, [level_corr(subset.matrix(m), subset.matrix("h2"), "system", "kendall")
                                               for m in ("m1", "m2")])
