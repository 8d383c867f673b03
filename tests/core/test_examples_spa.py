"""The system pairs behind soft pairwise accuracy and behind a WMT suite's system-level tasks (issue 31): the listed
p-value gaps average to 1 - SPA as `correlate` and the WMT24 suite compute it, and pairs listed from the test set's
own system scores (`.sys.score`) give the WMT23 suite's system-level Pearson."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metaeval_core.analyses.examples import examples, pair_examples
from metaeval_core.data.dataset import Dataset, Measure
from metaeval_core.stats.correlation import correlate
from metaeval_core.stats.spa import SPA_PERMUTATIONS, swap_signs

from .test_examples import cli  # noqa: F401 - the fixture running `metaeval` in-process

SPA = "soft-pairwise-accuracy"


def rated(seed: int, n_systems: int = 7, n_inputs: int = 15, *, missing: float = 0.0) -> Dataset:
    """Integer human ratings (exact ties) and a noisy continuous metric; some human cells missing."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(scale=0.4, size=(n_systems, 1)) + rng.normal(size=(n_systems, n_inputs))
    human = np.clip(np.round(quality + 3), 1, 5)
    metric = quality + rng.normal(scale=0.8, size=quality.shape)
    if missing:
        human[rng.random(human.shape) < missing] = np.nan
    return Dataset(id=f"spa{seed}", systems=tuple(f"s{i}" for i in range(n_systems)),
                   inputs=tuple(f"i{j}" for j in range(n_inputs)),
                   measures={"m": Measure("m", "metric", metric), "h": Measure("h", "human", human)})


def slow_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """SPA's one-sided p-value that ``a`` beats ``b``, one permutation at a time (docs/methods.md sec. 11.3): over
    the inputs both score, the share of the fixed swap-sign rows whose permuted sum reaches the observed one."""
    signs = swap_signs(a.size)
    common = ~(np.isnan(a) | np.isnan(b))
    if not common.any():
        return float("nan")
    d = np.where(common, a - b, 0.0)
    observed = d.sum()
    tolerance = 1e-9 * np.abs(d).sum()
    reached = 0
    for row in signs:
        reached += float(np.sum(row * d)) >= observed - tolerance
    return reached / SPA_PERMUTATIONS


@pytest.mark.parametrize("seed, missing", [(0, 0.0), (1, 0.15), (2, 0.3)])
def test_the_listed_gaps_average_to_one_minus_spa(seed, missing):
    ds = rated(seed, missing=missing)
    result = pair_examples(ds, "m", "h", coefficient=SPA)
    spa = correlate(ds, "m", "h", coefficient=SPA).estimate
    assert result.estimate == spa
    gap = result.p_gap
    assert result.n_spa_pairs == np.count_nonzero(~np.isnan(gap)) > 0
    assert np.nanmean(gap) == pytest.approx(1.0 - spa, abs=1e-12)
    records = result.to_records()
    shares = [r["p_gap_share"] for r in records if r["p_gap_share"] is not None]
    assert sum(shares) == pytest.approx(1.0 - spa, abs=1e-12)
    assert result.summary()["mean_p_gap"] == pytest.approx(1.0 - spa, abs=1e-12)
    # largest gap first, undefined gaps last
    listed = [r["p_gap"] for r in records]
    defined = [g for g in listed if g is not None]
    assert defined == sorted(defined, reverse=True) and listed[:len(defined)] == defined


def test_the_pairs_p_values_are_spas_against_a_slow_loop():
    ds = rated(3, n_systems=5, n_inputs=12, missing=0.2)
    result = pair_examples(ds, "m", "h", coefficient=SPA)
    x, z = ds.matrix("m"), ds.matrix("h")
    x = np.where(np.isnan(z), np.nan, x)  # the judged pool: the metric's cells the humans scored
    row = {s: i for i, s in enumerate(ds.systems)}
    for r in result.to_records():
        a, b = row[r["system_a"]], row[r["system_b"]]
        assert a < b  # the pair as SPA orients it: p that the first system beats the second
        assert r["p_metric"] == pytest.approx(slow_pvalue(x[a], x[b]), abs=1e-12)
        assert r["p_human"] == pytest.approx(slow_pvalue(z[a], z[b]), abs=1e-12)
        assert r["p_gap"] == pytest.approx(abs(r["p_metric"] - r["p_human"]), abs=1e-12)
        assert r["metric_a"] == pytest.approx(np.nanmean(x[a])) and r["human_b"] == pytest.approx(np.nanmean(z[b]))


def test_pool_all_lists_the_p_values_of_the_pool_all_value():
    from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

    ds = synthetic_dataset(SyntheticSpec(n_systems=6, n_judged=15, n_unjudged=30, seed=4), id="pools")
    metric, human = ds.metric_measures[0], ds.human_measures[0]
    for pool in ("judged", "all"):
        result = pair_examples(ds, metric, human, coefficient=SPA, pool=pool, significance=False)
        assert np.nanmean(result.p_gap) == pytest.approx(
            1.0 - correlate(ds, metric, human, coefficient=SPA, pool=pool).estimate, abs=1e-12)


def test_other_coefficients_carry_no_spa_fields_and_spa_is_system_level_only():
    ds = rated(5)
    kendall = pair_examples(ds, "m", "h")
    assert kendall.p_gap is None and "p_gap" not in kendall.to_records()[0] and "mean_p_gap" not in kendall.summary()
    with pytest.raises(ValueError, match="system-level statistic.*level 'system'"):
        examples(ds, "m", "h", level="input", coefficient=SPA)
    assert examples(ds, "m", "h", coefficient=SPA).p_gap is not None


# -- a WMT suite's numbers (real data) ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def zh_en(data_dir):
    from metaeval_core.analyses.suites import load_suite_data

    return load_suite_data("wmt23", lps=["zh-en"], data_dir=data_dir)


def _suite_task(data, suite_name: str, statistic: str):
    """The suite run, the task's column, the pair's data, the view the task reads and the task's system set."""
    from metaeval_core.analyses.suites import run_suite

    suite = run_suite(data, suite_name)
    t = next(t for t, task in enumerate(suite.tasks) if task.statistic == statistic)
    pair = data["zh-en"]
    view = pair.sys if suite.tasks[t].view == "sys" else pair.seg
    return suite, t, pair, view, view.conventions.systems(human_translations=suite.tasks[t].human)


def test_wmt24_spa_examples_read_the_suites_p_values(zh_en):
    suite, t, pair, seg, systems = _suite_task(zh_en, "wmt24", "spa")
    for name in suite.metrics[:3] + suite.metrics[-2:]:  # the best and the worst
        listed = pair_examples(seg, pair.metrics[name], seg.conventions.gold, coefficient=SPA, systems=systems,
                               significance=False)
        value = suite.values[list(suite.metrics).index(name), t]
        assert listed.estimate == pytest.approx(value, abs=1e-12), name
        assert 1.0 - np.nanmean(listed.p_gap) == pytest.approx(value, abs=1e-12), name
        assert listed.n_spa_pairs == listed.n_pairs == 15 * 14 // 2


def test_wmt23_system_pearson_examples_use_the_sys_score_files(zh_en):
    suite, t, pair, sys_view, systems = _suite_task(zh_en, "wmt23", "pearson-sys")
    for name in suite.metrics:
        listed = pair_examples(sys_view, pair.metrics[name], sys_view.conventions.gold, coefficient="pearson",
                               systems=systems)
        value = suite.values[list(suite.metrics).index(name), t]
        assert listed.scores == "system" and listed.summary()["scores"] == "system"
        assert listed.estimate == pytest.approx(value, abs=1e-9), name
        means = {}
        for r in listed.to_records():
            assert r["human_p_value"] is None  # one system score per system: no permutation test
            means[r["system_a"]] = (r["metric_a"], r["human_a"])
            means[r["system_b"]] = (r["metric_b"], r["human_b"])
        x, z = np.array(list(means.values())).T
        assert stats.pearsonr(x, z).statistic == pytest.approx(value, abs=1e-9), name
    # the segment averages are another number: the reason the suite's links carry the system scores
    seg = pair.seg
    prism = pair_examples(seg, pair.metrics["prismSrc[noref]"], seg.conventions.gold, coefficient="pearson",
                          systems=systems, significance=False)
    assert prism.scores == "segments"
    assert abs(prism.estimate - suite.values[list(suite.metrics).index("prismSrc[noref]"), t]) > 0.01


# -- command line ----------------------------------------------------------------------------------------------------
def test_cli_lists_each_pairs_spa_p_values(cli):
    args = ("examples", "--dataset", "demo", "--metric", "metric.good", "--human", "human.quality", "--coefficient",
            SPA)
    code, records, _ = cli(*args)
    assert code == 0 and records
    assert {"system_a", "system_b", "p_metric", "p_human", "p_gap", "p_gap_share", "metric_a", "human_a"} <= set(
        records[0])
    gaps = [r["p_gap"] for r in records]
    assert gaps == sorted(gaps, reverse=True)
    from metaeval_core.data.synthetic import synthetic_dataset

    spa = correlate(synthetic_dataset(), "metric.good", "human.quality", coefficient=SPA).estimate
    assert np.mean(gaps) == pytest.approx(1.0 - spa, abs=1e-12)
    code, out, _ = cli(*args, "--top", "3", as_json=False)
    assert code == 0 and "1 - SPA is the mean gap" in out and "p_metric" in out
    code, _, err = cli(*args, "--level", "input")
    assert code == 2 and "system-level statistic" in err and "Traceback" not in err


def test_cli_lists_the_pairs_of_the_sys_score_files(cli, data_dir):
    code, records, _ = cli("examples", "--dataset", "wmt23", "--data-dir", str(data_dir), "--lp", "zh-en",
                           "--mtme-level", "sys", "--metric", "XCOMET-Ensemble-refA", "--coefficient", "pearson")
    assert code == 0 and len(records) == 15 * 14 // 2
    assert all(r["human_p_value"] is None for r in records)
    code, out, _ = cli("examples", "--dataset", "wmt23", "--data-dir", str(data_dir), "--lp", "zh-en",
                       "--mtme-level", "sys", "--metric", "XCOMET-Ensemble-refA", "--coefficient", "pearson",
                       "--top", "2", as_json=False)
    assert code == 0 and ".sys.score" in out
