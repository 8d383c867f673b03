"""Chance baselines (docs/methods.md sec. 12): the coefficient of a metric whose scores are permuted."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from metaeval_core.analyses.chance import chance_baseline, chance_baselines
from metaeval_core.cli.main import main as cli_main
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.stats.coefficients import tie_calibrated_accuracy
from metaeval_core.stats.correlation import correlate_matrices

SCIPY = {"pearson": lambda x, z: stats.pearsonr(x, z).statistic,
         "spearman": lambda x, z: stats.spearmanr(x, z).statistic,
         "kendall": lambda x, z: stats.kendalltau(x, z).statistic}


def _plain_accuracy(x, z) -> float:
    """Share of pairs both order the same way or both tie (a readable loop)."""
    agree = total = 0
    for a in range(len(x)):
        for b in range(a + 1, len(x)):
            total += 1
            agree += np.sign(x[a] - x[b]) == np.sign(z[a] - z[b])
    return agree / total if total else np.nan


def _coefficient(x, z, coefficient) -> float:
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(z) == 0:
        if coefficient not in SCIPY:
            return _plain_accuracy(x, z) if coefficient == "pairwise-accuracy" else float(
                tie_calibrated_accuracy(np.asarray(x), np.asarray(z)).accuracy)
        return np.nan
    if coefficient == "pairwise-accuracy":
        return _plain_accuracy(x, z)
    if coefficient == "tie-calibrated-accuracy":
        return float(tie_calibrated_accuracy(np.asarray(x), np.asarray(z)).accuracy)
    return float(SCIPY[coefficient](x, z))


def _permute(values, keys):
    """The scored point with the r-th smallest key gets the r-th smallest value (sec. 12.1's draw)."""
    out = np.empty(len(values))
    out[np.argsort(keys, kind="stable")] = np.sort(values)
    return out


def _oracle(x, z, level, coefficient, k, seed):
    """A slow loop with the same generator draws: one key per point of the grouping, per permutation."""
    rng = np.random.default_rng(seed)
    n, m = z.shape
    values = []
    for _ in range(k):
        if level == "system":
            keys = rng.random(n)
            xm, zm = np.nanmean(x, axis=1), np.nanmean(z, axis=1)
            ok = ~np.isnan(xm) & ~np.isnan(zm)
            values.append(_coefficient(_permute(xm[ok], keys[ok]), zm[ok], coefficient))
        elif level == "input":
            keys = rng.random((n, m))
            per_input = []
            for j in range(m):
                ok = ~np.isnan(x[:, j]) & ~np.isnan(z[:, j])
                per_input.append(_coefficient(_permute(x[ok, j], keys[ok, j]), z[ok, j], coefficient)
                                 if ok.sum() >= 2 else np.nan)
            values.append(np.nanmean(per_input) if np.isfinite(per_input).any() else np.nan)
        else:
            keys = rng.random(n * m)
            ok = (~np.isnan(x) & ~np.isnan(z)).ravel()
            values.append(_coefficient(_permute(x.ravel()[ok], keys[ok]), z.ravel()[ok], coefficient))
    return np.array(values)


def _dataset(seed=0, n=7, m=6, likert=True, missing=True) -> Dataset:
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n, m))
    human = np.round(quality + rng.normal(scale=0.7, size=(n, m))) if likert else quality
    metric = quality + rng.normal(size=(n, m))
    coarse = np.round(metric)  # a metric with ties of its own
    if missing:
        human[0, 1] = human[3, 4] = np.nan
        metric[2, 2] = np.nan
    return Dataset("t", [f"s{i}" for i in range(n)], [f"i{j}" for j in range(m)],
                   {"h": Measure("h", "human", human), "m": Measure("m", "metric", metric),
                    "c": Measure("c", "metric", coarse)},
                   system_attributes={"type": tuple("ab"[i % 2] for i in range(n))})


@pytest.mark.parametrize("level", ["system", "input", "global"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall", "pairwise-accuracy",
                                         "tie-calibrated-accuracy"])
def test_permutation_values_match_a_slow_loop(level, coefficient):
    ds = _dataset()
    for metric in ("m", "c"):
        result = chance_baseline(ds, metric, "h", level=level, coefficient=coefficient, n_resamples=60, rng=3,
                                 return_distribution=True)
        x, z = ds.matrix(metric), ds.matrix("h")
        x = np.where(np.isnan(z), np.nan, x)  # the judged pool of "h": its own cells (docs/methods.md sec. 0.2)
        if level == "input" and coefficient == "tie-calibrated-accuracy":
            # Input-level tie calibration is whatever correlate_matrices does (sec. 11.2): check the draws only.
            rng = np.random.default_rng(3)
            expected = []
            for _ in range(60):
                keys = rng.random(z.shape)
                permuted = np.full(z.shape, np.nan)
                for j in range(z.shape[1]):
                    ok = ~np.isnan(x[:, j]) & ~np.isnan(z[:, j])
                    permuted[ok, j] = _permute(x[ok, j], keys[ok, j])
                expected.append(correlate_matrices(permuted, z, level="input", coefficient=coefficient).estimate)
        else:
            expected = _oracle(x, z, level, coefficient, 60, 3)
        np.testing.assert_allclose(result.distribution, expected, rtol=0, atol=1e-12, equal_nan=True)
        defined = np.asarray(expected)[~np.isnan(expected)]
        assert result.estimate == pytest.approx(defined.mean(), abs=1e-12)
        assert (result.low, result.high) == pytest.approx(tuple(np.percentile(defined, [2.5, 97.5])), abs=1e-12)
        assert result.mc_se == pytest.approx(defined.std(ddof=1) / np.sqrt(defined.size), abs=1e-12)
        assert result.n_defined == defined.size


@pytest.mark.parametrize("level", ["system", "input", "global"])
@pytest.mark.parametrize("coefficient", ["pearson", "kendall", "tie-calibrated-accuracy"])
def test_any_batch_size_gives_the_same_numbers(level, coefficient):
    ds = _dataset(1)
    options = dict(level=level, coefficient=coefficient, n_resamples=50, rng=11, return_distribution=True)
    whole = chance_baselines(ds, ["m", "c"], "h", **options)
    for batch in (1, 7, 50):
        again = chance_baselines(ds, ["m", "c"], "h", batch=batch, **options)
        for a, b in zip(whole.rows, again.rows):
            np.testing.assert_array_equal(a.distribution, b.distribution)
    # Each metric's row is the single-metric call with the same seed (the same keys).
    single = chance_baseline(ds, "c", "h", **options)
    np.testing.assert_array_equal(single.distribution, whole.rows[1].distribution)


@pytest.mark.parametrize("level", ["system", "input", "global"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_correlations_of_a_random_metric_average_zero_on_complete_data(level, coefficient):
    # Sec. 12.2: on complete data the permutation mean is exactly 0; the estimate is within MC error of it.
    ds = _dataset(2, n=8, m=10, likert=True, missing=False)
    result = chance_baseline(ds, "c", "h", level=level, coefficient=coefficient, n_resamples=2000, rng=5)
    assert abs(result.estimate) < 4 * result.mc_se
    assert result.low < 0 < result.high


def _accuracy_formula(x, z) -> float:
    """(1 - h)(1 - t)/2 + h t, with h and t the shares of pairs tied by the human and by the metric."""
    first, second = np.triu_indices(len(x), 1)
    h = np.mean(z[first] == z[second])
    t = np.mean(x[first] == x[second])
    return (1 - h) * (1 - t) / 2 + h * t


def test_plain_accuracy_of_a_random_metric_follows_the_tie_formula():
    ds = _dataset(4, n=9, m=12, likert=True, missing=False)
    x, z = ds.matrix("c"), ds.matrix("h")
    glob = chance_baseline(ds, "c", "h", level="global", coefficient="pairwise-accuracy", n_resamples=3000, rng=1)
    assert glob.estimate == pytest.approx(_accuracy_formula(x.ravel(), z.ravel()), abs=4 * glob.mc_se)
    inp = chance_baseline(ds, "c", "h", level="input", coefficient="pairwise-accuracy", n_resamples=3000, rng=1)
    per_input = np.mean([_accuracy_formula(x[:, j], z[:, j]) for j in range(x.shape[1])])
    assert inp.estimate == pytest.approx(per_input, abs=4 * inp.mc_se)
    assert abs(inp.estimate - 0.5) > 10 * inp.mc_se  # with Likert ties the chance level is not 0.5


def test_tie_calibrated_chance_is_at_least_always_tie_and_plain_accuracy():
    # Sec. 12.2: epsilon = the largest |dx| ties every pair (accuracy h), epsilon = 0 is plain accuracy; both are
    # candidates on every permutation, and the same seed gives both coefficients the same permutations.
    ds = _dataset(5, n=8, m=10, likert=True, missing=False)
    z = ds.matrix("h")
    first, second = np.triu_indices(z.shape[0], 1)
    h = np.mean([(z[first, j] == z[second, j]).mean() for j in range(z.shape[1])])
    options = dict(level="input", n_resamples=200, rng=0, return_distribution=True)
    calibrated = chance_baseline(ds, "m", "h", coefficient="tie-calibrated-accuracy", **options)
    plain = chance_baseline(ds, "m", "h", coefficient="pairwise-accuracy", **options)
    assert (calibrated.distribution >= h - 1e-12).all()
    assert (calibrated.distribution >= plain.distribution - 1e-12).all()
    assert calibrated.estimate >= max((1 - h) / 2, h)


def test_metrics_with_the_same_ties_share_a_baseline_exactly(demo):
    # Kendall depends on the metric only through its ties: continuous metrics get one identical line.
    result = chance_baselines(demo, ["metric.strong", "metric.noise"], "human.quality", n_resamples=200, rng=0)
    assert result.shared and result.rows[0].estimate == result.rows[1].estimate
    assert result.rows[0].observed != result.rows[1].observed
    pearson = chance_baselines(demo, ["metric.strong", "metric.noise"], "human.quality", coefficient="pearson",
                               n_resamples=200, rng=0)
    assert not pearson.shared  # Pearson's permutation distribution depends on the values
    frame = result.to_frame()
    assert list(frame["metric"]) == ["metric.strong", "metric.noise"] and {"estimate", "low", "high",
                                                                         "mc_se"} <= set(frame.columns)


def test_pool_all_and_system_subsets(demo):
    judged = chance_baseline(demo, "metric.strong", "human.quality", n_resamples=100, rng=0, systems="type=abs")
    assert judged.systems == "type=abs" and judged.n == demo.select_systems("type=abs").n_systems
    every = chance_baseline(demo, "metric.strong", "human.quality", pool="all", n_resamples=100, rng=0)
    assert every.pool == "all" and np.isfinite(every.estimate)


def test_refusals_name_the_parameter(demo):
    with pytest.raises(DatasetError, match="not a human measure"):
        chance_baseline(demo, "metric.strong", "metric.noise")
    with pytest.raises(ValueError, match="level must be one of"):
        chance_baseline(demo, "metric.strong", "human.quality", level="document")
    with pytest.raises(ValueError, match="n_resamples must be >= 40"):
        chance_baseline(demo, "metric.strong", "human.quality", n_resamples=10)
    with pytest.raises(ValueError, match="tie-calibrated-accuracy at the global level"):
        chance_baseline(demo, "metric.strong", "human.quality", level="global",
                        coefficient="tie-calibrated-accuracy")
    with pytest.raises(TypeError, match="batch must be"):
        chance_baseline(demo, "metric.strong", "human.quality", batch=1.5)
    with pytest.raises(TypeError, match="metrics must be"):
        chance_baselines(demo, "metric.strong", "human.quality")


def test_cli_json(capsys):
    code = cli_main(["chance", "--dataset", "demo", "--metrics", "metric.strong,metric.noise", "--human",
                     "human.quality", "--level", "input", "--coefficient", "pairwise-accuracy", "--n-resamples",
                     "100", "--seed", "1", "--json"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["metric"] for r in rows] == ["metric.strong", "metric.noise"]
    expected = chance_baseline(_demo(), "metric.noise", "human.quality", level="input",
                               coefficient="pairwise-accuracy", n_resamples=100, rng=1)
    assert rows[1]["estimate"] == pytest.approx(expected.estimate, abs=1e-12)
    assert all(r["low"] <= r["estimate"] <= r["high"] and r["n_resamples"] == 100 for r in rows)
    code = cli_main(["chance", "--dataset", "demo", "--metrics", "metric.strong", "--human", "human.quality",
                     "--n-resamples", "100"])
    out = capsys.readouterr().out
    assert code == 0 and "metric.strong" in out and "mc_se" in out


def _demo():
    from metaeval_core.data.synthetic import synthetic_dataset

    return synthetic_dataset()


@pytest.mark.realdata
def test_summeval_plain_accuracy_chance_follows_the_tie_formula(data_dir):
    from metaeval_core.data.registry import load_dataset

    ds = load_dataset("summeval", data_dir=data_dir)
    result = chance_baseline(ds, "qa-eval.f1", "expert.coherence", level="input", coefficient="pairwise-accuracy",
                             n_resamples=1000, rng=0)
    x, z = ds.matrix("qa-eval.f1"), ds.matrix("expert.coherence")
    expected = np.mean([_accuracy_formula(x[:, j], z[:, j]) for j in range(x.shape[1])])
    assert result.estimate == pytest.approx(expected, abs=4 * result.mc_se)
    assert result.estimate < 0.45  # three-rater means tie often, and QAEval scores 0 often: far below 0.5


@pytest.mark.realdata
def test_summeval_input_level_chance_of_tie_calibrated_accuracy(data_dir):
    from metaeval_core.data.registry import load_dataset

    ds = load_dataset("summeval", data_dir=data_dir)
    result = chance_baseline(ds, "rouge-1.f1", "expert.coherence", level="input",
                             coefficient="tie-calibrated-accuracy", n_resamples=200, rng=0)
    # Expert coherence is a mean of three 1-5 ratings: many ties per input, so chance is far from 0.5.
    assert 0.3 < result.estimate < 0.7 and result.low < result.observed


# -- at the upload's 2,000-system limit (issue 23): bounded memory, seconds, or refused up front -------------
BIG = """
import numpy as np
from metaeval_core.data.dataset import Dataset, Measure
from metaeval_core.analyses.chance import chance_baselines
rng = np.random.default_rng(0)
n, m = 2000, 2
ds = Dataset(id="big", systems=tuple(f"s{i}" for i in range(n)), inputs=tuple(f"d{j}" for j in range(m)),
             measures={"human": Measure("human", "human", np.round(rng.random((n, m)), 3)),
                       "metric": Measure("metric", "metric", rng.random((n, m)))})
row = chance_baselines(ds, ["metric"], "human", level="system", coefficient="kendall", n_resamples=1000,
                       rng=0).rows[0]
result = {"estimate": row.estimate}
"""


@pytest.mark.slow
def test_chance_at_the_system_limit_stays_bounded():
    """2,000 systems x 2 inputs (a 78 KB CSV): 1,000 system-level Kendall permutations took 6.2 GB and 106 s
    through an unchunked system-pair mask; under a 1.5 GB address-space cap they now finish, well under 1 GB."""
    from tests.core.capped import run_capped

    result = run_capped(BIG, cap=int(1.5 * 2**30), timeout=300)
    assert abs(result["estimate"]) < 0.01  # a permuted metric's tau-b averages 0
    assert result["peak_mb"] < 1000


@pytest.mark.parametrize("level", ["system", "input", "global"])
def test_tie_calibration_on_thousands_of_systems_is_refused_up_front(level):
    rng = np.random.default_rng(0)
    n, m = 2000, 2
    ds = Dataset(id="big", systems=tuple(f"s{i}" for i in range(n)), inputs=("d0", "d1"),
                 measures={"human": Measure("human", "human", np.round(rng.random((n, m)), 1)),
                           "metric": Measure("metric", "metric", rng.random((n, m)))})
    with pytest.raises(ValueError, match="tie-calibrated-accuracy at the .* level .*; use "):
        chance_baselines(ds, ["metric"], "human", level=level, coefficient="tie-calibrated-accuracy", rng=0)


@pytest.mark.parametrize("seed", range(4))
def test_input_kendall_on_tie_heavy_scores_matches_the_slow_loop(seed):
    # Real MQM-like data: integer human scores full of ties, an integer metric tying most systems (every system
    # in one input), identical outputs of two systems, missing cells in both measures.
    rng = np.random.default_rng(seed)
    n, m = 9, 12
    human = -rng.poisson(1.0, (n, m)).astype(float)
    integer = np.round(human + rng.normal(0, 1, (n, m)))
    integer[:, 3] = 0.0
    integer[1, 5] = integer[0, 5]
    human[2, 7] = np.nan
    integer[4, 8] = np.nan
    ds = Dataset("t", [f"s{i}" for i in range(n)], [f"i{j}" for j in range(m)],
                 {"h": Measure("h", "human", human), "c": Measure("c", "metric", integer)})
    result = chance_baseline(ds, "c", "h", level="input", coefficient="kendall", n_resamples=40, rng=seed,
                             return_distribution=True)
    x = np.where(np.isnan(human), np.nan, integer)
    np.testing.assert_allclose(result.distribution, _oracle(x, human, "input", "kendall", 40, seed), rtol=0,
                               atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("seed", range(3))
def test_global_kendall_shared_pass_matches_the_slow_loop(seed):
    # Global level, hundreds of cells: a nearly continuous metric (tied positions corrected pair by pair), an
    # integer one tying most cells (the value x human table), one forced onto scipy, missing cells in both.
    from metaeval_core.analyses import chance

    rng = np.random.default_rng(seed)
    n, m = 9, 40
    human = -rng.poisson(1.0, (n, m)).astype(float)
    fine = np.round(human + rng.normal(0, 1, (n, m)), 2)
    integer = np.clip(np.round(human + rng.normal(0, 1, (n, m))), -3, 0)
    human[2, 7] = np.nan
    fine[4, 8] = integer[5, 9] = np.nan
    ds = Dataset("t", [f"s{i}" for i in range(n)], [f"i{j}" for j in range(m)],
                 {"h": Measure("h", "human", human), "f": Measure("f", "metric", fine),
                  "i": Measure("i", "metric", integer), "s": Measure("s", "metric", integer + 0.0)})
    kinds = {}
    original = chance._GlobalKendall.__init__

    def record(self, metrics, human_, valids, ordered):
        original(self, metrics, human_, valids, ordered)
        for g, group in enumerate(self.groups):
            plans = [(idx, "scipy" if idx == 2 else kind, plan, d) for idx, kind, plan, d in group[6]]
            self.groups[g] = (*group[:6], plans)
            kinds.update({idx: kind for idx, kind, _, _ in plans})

    import unittest.mock as mock
    with mock.patch.object(chance._GlobalKendall, "__init__", record):
        results = chance_baselines(ds, ["f", "i", "s"], "h", level="global", coefficient="kendall", n_resamples=40,
                                   rng=seed, return_distribution=True, batch=7)
    assert kinds == {0: "pairs", 1: "table", 2: "scipy"}
    for name, result in zip(["f", "i", "s"], results.rows):
        x = np.where(np.isnan(human), np.nan, ds.matrix(name))
        np.testing.assert_allclose(result.distribution, _oracle(x, human, "global", "kendall", 40, seed), rtol=0,
                                   atol=1e-12, equal_nan=True)


def test_global_kendall_corrects_many_tied_pairs_in_slices(monkeypatch):
    # A metric tying ~20 pairs per cell with too many distinct values for the (value x human) table: its tied
    # positions are corrected pair by pair (in slices), not by scipy's tau-b per permutation (WMT23 zh-en's BLEU).
    from metaeval_core.analyses import chance

    rng = np.random.default_rng(5)
    n, m = 10, 60
    human = np.round(rng.normal(0, 1, (n, m)), 2)
    tied = np.round(2 * human + rng.normal(0, 1, (n, m)))  # ~13 values over 600 cells, ~300 human values
    ds = Dataset("t", [f"s{i}" for i in range(n)], [f"i{j}" for j in range(m)],
                 {"h": Measure("h", "human", human), "t": Measure("t", "metric", tied)})
    kinds = []
    original = chance._GlobalKendall.__init__

    def record(self, metrics, human_, valids, ordered):
        original(self, metrics, human_, valids, ordered)
        kinds.extend(kind for group in self.groups for _, kind, plan, _ in group[6])

    monkeypatch.setattr(chance._GlobalKendall, "__init__", record)
    monkeypatch.setattr(chance, "_TIED_PAIRS_SLICE", 97)
    values, counts = np.unique(tied, return_counts=True)
    per_cell = (counts * (counts - 1) // 2).sum() / tied.size
    assert 8 < per_cell < chance._MAX_TIED_PAIRS_PER_CELL and values.size * np.unique(human).size > 4 * tied.size
    result = chance_baselines(ds, ["t"], "h", level="global", coefficient="kendall", n_resamples=40, rng=2,
                              return_distribution=True, batch=4)
    assert kinds == ["pairs"]
    np.testing.assert_allclose(result.rows[0].distribution, _oracle(tied, human, "global", "kendall", 40, 2),
                               rtol=0, atol=1e-12)
