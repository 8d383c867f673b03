"""The items behind a correlation (metaeval_core.analyses.examples) and behind a judge's agreement
(metaeval_core.judges.examples): the listed values are the ones the level's coefficient is made of."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metaeval_core.analyses.examples import (
    cell_examples,
    compare_examples,
    examples,
    input_examples,
    kendall_pair_counts,
    pair_examples,
)
from metaeval_core.data.dataset import Dataset, Measure
from metaeval_core.data.texts import ExampleTexts, example_texts
from metaeval_core.stats.coefficients import tau_b_from_counts
from metaeval_core.stats.correlation import correlate
from metaeval_core.stats.pairs import dataset_rsys_delta, decile_grid, dataset_means
from metaeval_core.stats.spa import swap_signs


@pytest.fixture(scope="module")
def continuous():
    """Continuous scores: no ties at any level."""
    rng = np.random.default_rng(5)
    quality = rng.normal(size=(9, 1)) + rng.normal(size=(9, 15))
    measures = {"human": Measure("human", "human", quality)}
    for name, noise in (("m1", 0.7), ("m2", 1.2)):
        measures[name] = Measure(name, "metric", quality + rng.normal(scale=noise, size=quality.shape))
    return Dataset(id="cont", systems=tuple(f"s{i}" for i in range(9)), inputs=tuple(f"i{j}" for j in range(15)),
                   measures=measures)


def rated(seed: int, n_systems: int = 8, n_inputs: int = 12, *, missing: float = 0.0) -> Dataset:
    """Integer ratings (many exact ties at every level) and a coarse metric; some cells missing."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n_systems, 1)) + rng.normal(size=(n_systems, n_inputs))
    human = np.clip(np.round(quality + 3), 1, 5)
    metric = np.round(quality + rng.normal(scale=0.8, size=quality.shape), 1)
    if missing:
        human[rng.random(human.shape) < missing] = np.nan
    return Dataset(id=f"rated{seed}", systems=tuple(f"s{i}" for i in range(n_systems)),
                   inputs=tuple(f"i{j}" for j in range(n_inputs)),
                   measures={"m": Measure("m", "metric", metric), "h": Measure("h", "human", human)})


def first_metric_and_human(ds):
    return ds.metric_measures[0], ds.human_measures[0]


# -- system level -------------------------------------------------------------------------------------------
def test_discordant_count_is_tau_a_relation_without_ties(continuous):
    metric, human = first_metric_and_human(continuous)
    result = pair_examples(continuous, metric, human)
    tau = correlate(continuous, metric, human).estimate
    assert all(t == "" for t in result.tie)
    assert result.n_pairs == 9 * 8 // 2
    assert result.n_discordant == pytest.approx((1 - tau) / 2 * result.n_pairs)
    # discordant pairs first, and each is one the metric orders unlike people
    k = result.n_discordant
    assert result.discordant[:k].all() and not result.discordant[k:].any()
    assert (np.sign(result.metric_difference[:k]) == -np.sign(result.human_difference[:k])).all()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_counts_with_ties_give_the_levels_tau_b_and_accuracy(seed):
    ds = rated(seed, missing=0.1)
    result = pair_examples(ds, "m", "h")
    counts = kendall_pair_counts(result)
    assert int(counts.discordant) == result.n_discordant
    assert int(counts.concordant) == result.n_concordant
    assert float(tau_b_from_counts(counts.concordant, counts.discordant, counts.ties_x, counts.ties_z)) == \
        pytest.approx(correlate(ds, "m", "h").estimate, abs=1e-12)
    x, z, _ = dataset_means(ds, "m", "h")
    assert correlate(ds, "m", "h").estimate == pytest.approx(stats.kendalltau(x, z).statistic, abs=1e-12)
    for coefficient in ("pairwise-accuracy", "tie-calibrated-accuracy"):
        acc = pair_examples(ds, "m", "h", coefficient=coefficient, significance=False)
        assert acc.agrees.mean() == pytest.approx(correlate(ds, "m", "h", coefficient=coefficient).estimate,
                                                  abs=1e-12)


def test_band_keeps_the_rsys_delta_pairs(continuous):
    metric, human = first_metric_and_human(continuous)
    x, z, _ = dataset_means(continuous, metric, human)
    grid = decile_grid(x, z, min_pairs=1)
    for r, c in [(0, 4), (2, 6), (0, 9)]:
        lower, upper = float(grid.lower[r]), float(grid.upper[c])
        band = pair_examples(continuous, metric, human, lower=lower, upper=upper, significance=False)
        delta = dataset_rsys_delta(continuous, metric, human, lower=lower, upper=upper)
        assert band.n_pairs == delta.n_pairs
        assert band.n_discordant == delta.discordant
        assert band.n_concordant == delta.concordant
        assert ((np.abs(band.metric_difference) >= lower) & (np.abs(band.metric_difference) <= upper)).all()


def test_human_p_values_match_a_slow_permutation_loop():
    ds = rated(7, n_systems=5, n_inputs=10)
    result = pair_examples(ds, "m", "h")
    human = ds.matrix("h")
    signs = swap_signs(human.shape[1])
    index = {s: i for i, s in enumerate(ds.systems)}
    for a, b, p in zip(result.system_a, result.system_b, result.human_p_value):
        d = human[index[a]] - human[index[b]]
        observed = d.sum()
        permuted = signs @ d
        tolerance = 1e-9 * np.abs(d).sum()
        greater = np.mean(permuted >= observed - tolerance)
        smaller = np.mean(permuted <= observed + tolerance)
        assert p == pytest.approx(min(1.0, 2 * min(greater, smaller)))
    records = result.to_records()
    assert all(r["significant"] == (r["human_p_value"] <= 0.05) for r in records)


def test_no_significance_leaves_none():
    ds = rated(8)
    records = pair_examples(ds, "m", "h", significance=False).to_records()
    assert all(r["human_p_value"] is None and r["significant"] is None for r in records)


# -- input level ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("coefficient", ["kendall", "pearson", "spearman", "pairwise-accuracy",
                                         "tie-calibrated-accuracy"])
def test_per_input_values_average_to_the_input_level(coefficient):
    ds = rated(11, missing=0.15)
    result = input_examples(ds, "m", "h", coefficient=coefficient)
    level = correlate(ds, "m", "h", level="input", coefficient=coefficient)
    assert np.nanmean(result.values) == pytest.approx(level.estimate, abs=1e-12)
    assert result.n_defined == level.n
    defined = result.values[~np.isnan(result.values)]
    assert (np.diff(defined) >= 0).all()  # lowest first
    assert np.isnan(result.values[result.n_defined:]).all()  # undefined last


def test_per_input_kendall_matches_scipy_per_input():
    ds = rated(12, missing=0.1)
    result = input_examples(ds, "m", "h")
    column = {j: k for k, j in enumerate(ds.inputs)}
    x, z = ds.matrix("m"), ds.matrix("h")
    for name, value, metric_scores in zip(result.inputs, result.values, result.metric_scores):
        k = column[name]
        ok = ~(np.isnan(x[:, k]) | np.isnan(z[:, k]))
        expected = stats.kendalltau(x[ok, k], z[ok, k]).statistic if ok.sum() > 1 else np.nan
        assert value == pytest.approx(expected, nan_ok=True, abs=1e-12)
        np.testing.assert_allclose(metric_scores, np.where(np.isnan(z[:, k]), np.nan, x[:, k]))  # judged cells


# -- global level ---------------------------------------------------------------------------------------------
def test_rank_gaps_give_spearman_without_ties(continuous):
    metric, human = first_metric_and_human(continuous)
    result = cell_examples(continuous, metric, human, coefficient="spearman")
    n = result.n_cells
    rho = 1 - 6 * np.sum(result.rank_gap ** 2) / (n * (n * n - 1))
    assert rho == pytest.approx(correlate(continuous, metric, human, level="global",
                                          coefficient="spearman").estimate, abs=1e-12)
    gaps = np.abs(result.rank_gap)
    assert (np.diff(gaps) <= 0).all()  # largest gap first
    x, z = continuous.matrix(metric), continuous.matrix(human)
    row = {s: i for i, s in enumerate(continuous.systems)}
    col = {j: k for k, j in enumerate(continuous.inputs)}
    top = result.to_records(top=3)
    for r in top:
        assert r["metric"] == pytest.approx(x[row[r["system"]], col[r["input"]]])
        assert r["human"] == pytest.approx(z[row[r["system"]], col[r["input"]]])


# -- two metrics -------------------------------------------------------------------------------------------------
def test_comparison_lists_pairs_one_metric_orders_wrong(continuous):
    metric_x, metric_y = continuous.metric_measures[:2]
    human = continuous.human_measures[0]
    result = compare_examples(continuous, metric_x, metric_y, human)
    a = {(r["system_a"], r["system_b"]): r["agrees"] for r in pair_examples(continuous, metric_x, human).to_records()}
    b = {(r["system_a"], r["system_b"]): r["agrees"] for r in pair_examples(continuous, metric_y, human).to_records()}
    differ = {k for k in a if a[k] != b[k]}
    assert {(r["system_a"], r["system_b"]) for r in result.records} == differ
    # the difference in agreeing pairs is the difference in accuracies
    gained = sum(r["x_agrees"] for r in result.records) - sum(r["y_agrees"] for r in result.records)
    acc = {m: correlate(continuous, m, human, coefficient="pairwise-accuracy").estimate for m in (metric_x, metric_y)}
    assert gained == pytest.approx((acc[metric_x] - acc[metric_y]) * len(a))
    for level in ("input", "global"):
        other = compare_examples(continuous, metric_x, metric_y, human, level=level)
        diffs = [abs(r["difference"]) for r in other.records]
        assert diffs == sorted(diffs, reverse=True)
    per_input = compare_examples(continuous, metric_x, metric_y, human, level="input")
    assert np.mean([r["difference"] for r in per_input.records]) == pytest.approx(
        per_input.estimate_x - per_input.estimate_y, abs=1e-12)


# -- texts ------------------------------------------------------------------------------------------------------
def test_records_carry_texts_when_given():
    ds = rated(13, n_systems=3, n_inputs=4)
    outputs = np.array([[f"{s} on {j}" for j in ds.inputs] for s in ds.systems], dtype=object)
    outputs[1, 2] = None
    texts = ExampleTexts(ds.id, ds.systems, ds.inputs, outputs, tuple(f"src {j}" for j in ds.inputs),
                         tuple(f"ref {j}" for j in ds.inputs))
    record = next(r for r in input_examples(ds, "m", "h", texts=texts).to_records() if r["input"] == "i2")
    assert record["source"] == "src i2" and record["reference"] == "ref i2"
    assert {s["system"]: s["output"] for s in record["systems"]} == {"s0": "s0 on i2", "s1": None, "s2": "s2 on i2"}
    cell = cell_examples(ds, "m", "h", texts=texts).to_records(top=1)[0]
    assert cell["output"] == (None if (cell["system"], cell["input"]) == ("s1", "i2")
                              else f"{cell['system']} on {cell['input']}")
    assert "source" not in input_examples(ds, "m", "h").to_records()[0]  # no texts: numbers only
    assert example_texts(ds) is None


def test_validation_names_the_parameter():
    ds = rated(14)
    with pytest.raises(ValueError, match="level"):
        examples(ds, "m", "h", level="document")
    with pytest.raises(ValueError, match="coefficient"):
        examples(ds, "m", "h", coefficient="tau")
    with pytest.raises(ValueError, match="coefficient 'soft-pairwise-accuracy' is a system-level"):
        examples(ds, "m", "h", level="global", coefficient="soft-pairwise-accuracy")
    with pytest.raises(ValueError, match="lower and upper"):
        pair_examples(ds, "m", "h", lower=2.0, upper=1.0)
    with pytest.raises(TypeError, match="texts"):
        input_examples(ds, "m", "h", texts="stories")
    with pytest.raises(ValueError):
        examples(ds, "nope", "h")


def test_results_are_frozen():
    result = pair_examples(rated(15), "m", "h")
    with pytest.raises(AttributeError):
        result.metric = "x"


# -- real data ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dataset_id, metric, human", [
    ("summeval", "rouge-1.f1", "expert.relevance"),
    ("wmt22-zhen", "COMET-22-refA", "mqm"),
    ("realsumm", "rouge-2.recall", "litepyramid.recall"),
])
def test_real_files_against_scipy(data_dir, dataset_id, metric, human):
    from metaeval_core.data.registry import load_dataset

    ds = load_dataset(dataset_id, data_dir=data_dir).with_default_systems()
    texts = example_texts(ds, data_dir=data_dir)
    assert texts is not None
    pairs = pair_examples(ds, metric, human, texts=texts)
    subset = ds.rated_by(human)
    # Rounded to 9 decimals: means of integer ratings (MQM, Likert) tie exactly as rationals (docs/methods.md
    # sec. 15), which raw floats may miss in the last bit; scipy then sees the same ties as the project.
    xm = np.round(np.where(np.isnan(subset.matrix(human)), np.nan, subset.matrix(metric)), 9)
    zm = np.round(subset.matrix(human), 9)
    x = np.round(np.nanmean(xm, axis=1), 9)
    z = np.round(np.nanmean(zm, axis=1), 9)
    ok = ~(np.isnan(x) | np.isnan(z))
    tau = stats.kendalltau(x[ok], z[ok]).statistic
    assert pairs.estimate == pytest.approx(tau, abs=1e-12)
    if all(t == "" for t in pairs.tie):
        assert pairs.n_discordant == round((1 - tau) / 2 * pairs.n_pairs)
    per_input = input_examples(ds, metric, human, texts=texts)
    column = {j: k for k, j in enumerate(j for j, keep in zip(subset.inputs, subset.judged) if keep)}
    expected = []
    for k in range(xm.shape[1]):
        use = ~(np.isnan(xm[:, k]) | np.isnan(zm[:, k]))
        if use.sum() > 1 and np.ptp(xm[use, k]) > 0 and np.ptp(zm[use, k]) > 0:
            expected.append(stats.kendalltau(xm[use, k], zm[use, k]).statistic)
    assert np.nanmean(per_input.values) == pytest.approx(np.mean(expected), abs=1e-9)
    assert per_input.estimate == pytest.approx(correlate(ds, metric, human, level="input").estimate, abs=1e-12)
    lowest = per_input.to_records(top=1)[0]
    assert lowest["value"] == pytest.approx(min(expected), abs=1e-9)
    assert lowest["reference"] and any(s["output"] for s in lowest["systems"])
    assert column[lowest["input"]] >= 0
    cell = cell_examples(ds, metric, human, texts=texts).to_records(top=1)[0]
    assert cell["output"]


def test_hanna_has_no_texts(data_dir):
    from metaeval_core.data.registry import load_dataset

    ds = load_dataset("hanna", data_dir=data_dir)
    assert example_texts(ds, data_dir=data_dir) is None
    metric, human = ds.metric_measures[0], ds.human_measures[0]
    assert "output" not in input_examples(ds, metric, human).to_records(top=1)[0]["systems"][0]


# -- judges --------------------------------------------------------------------------------------------------------
def test_judge_wrong_items_are_the_accuracy_complement(data_dir):
    from metaeval_core.judges import judge_agreement, load_pairwise
    from metaeval_core.judges.examples import judge_examples

    data = load_pairwise("llmbar", data_dir=data_dir)
    judge = "GPT-4/Vanilla"
    for order in ("original", "swapped", "both"):
        for ties in ("three-class", "drop-any-tie"):
            listed = judge_examples(data, judge, order=order, ties=ties)
            agreement = judge_agreement(data, judges=[judge], order=order, ties=ties, n_resamples=40, rng=0).rows[0]
            assert listed.n_counted == agreement.n_items
            assert 1 - listed.n_items / listed.n_counted == pytest.approx(agreement.estimate, abs=1e-12)
    flips = judge_examples(data, judge, view="flips")
    v = data.verdicts[:, data.rater_index(judge)]
    expected = np.flatnonzero((v >= 0).all(axis=1) & ((v[:, 0] != v[:, 1]) | (v == 3).any(axis=1)))
    np.testing.assert_array_equal(flips.items, expected)  # 'wrong': an invalid verdict in either order flips
    record = flips.to_records(top=1)[0]
    assert record["judge_original"] != record["judge_swapped"]
    assert record["instruction"] and record["output_a"] and record["output_b"]
    assert judge in record["raters"]


@pytest.mark.parametrize("invalid", ["wrong", "drop", "tie", "as-verdict"])
def test_judge_flips_are_the_positional_consistency_complement(data_dir, invalid):
    from metaeval_core.judges import load_pairwise, positional_bias
    from metaeval_core.judges.examples import judge_examples

    data = load_pairwise("llmbar", data_dir=data_dir)
    both = [j for j in data.judges if len(data.orders_of(j)) == 2]
    for bias in positional_bias(data, judges=both, invalid=invalid, n_resamples=40, rng=0):
        flips = judge_examples(data, bias.judge, view="flips", invalid=invalid)
        assert flips.n_counted == bias.consistency.n
        assert flips.n_items == round((1 - bias.consistency.estimate) * bias.consistency.n)


@pytest.mark.parametrize("order", ["original", "swapped", "average"])
def test_judge_longer_items_make_the_length_preference(data_dir, order):
    from metaeval_core.judges import length_preference, load_pairwise
    from metaeval_core.judges.biases import output_lengths
    from metaeval_core.judges.examples import judge_examples

    data = load_pairwise("llmbar", data_dir=data_dir)
    judge = "GPT-4/Vanilla"
    pref = length_preference(data, judges=[judge], order=order, n_resamples=40, rng=0)[0]
    listed = judge_examples(data, judge, view="longer", order=order)
    assert listed.n_counted == pref.n_items
    assert listed.n_verdicts == pref.judge_longer.n
    assert listed.n_hits / listed.n_verdicts == pytest.approx(pref.judge_longer.estimate, abs=1e-12)
    if order != "average":
        assert listed.n_items == listed.n_hits
    a, b = output_lengths(data)
    for record, i in zip(listed.to_records(top=20), listed.items[:20]):
        longer = "A" if a[i] > b[i] else "B"
        assert longer in (record["judge_original"], record["judge_swapped"])
    assert listed.summary()["n_hits"] == listed.n_hits


@pytest.mark.parametrize("method", ["win-rate", "davidson"])
def test_ranking_pairs_make_the_ranking_agreement(data_dir, method):
    from scipy.stats import kendalltau

    from metaeval_core.judges import load_pairwise, ranking_agreement
    from metaeval_core.judges.examples import ranking_pairs

    data = load_pairwise("pandalm", data_dir=data_dir)
    for agreement in ranking_agreement(data, method=method, n_resamples=40, rng=0):
        listed = ranking_pairs(data, agreement.judge, method=method)
        s = len(data.systems)
        assert listed.n_pairs == s * (s - 1) // 2
        assert listed.kendall == pytest.approx(agreement.estimate, abs=1e-12)
        records = listed.to_records()
        kinds = [r["agreement"] for r in records]
        assert kinds == sorted(kinds, key=["discordant", "tied", "concordant"].index)  # unlike people first
        scores = {}
        for r in records:
            scores.setdefault(r["system_a"], (r["judge_a"], r["reference_a"]))
            scores.setdefault(r["system_b"], (r["judge_b"], r["reference_b"]))
        judge, ref = zip(*scores.values())
        assert listed.kendall == pytest.approx(kendalltau(judge, ref).statistic, abs=1e-12)  # tau-b, scipy's
    with pytest.raises(ValueError, match="method"):
        ranking_pairs(data, data.judges[0], method="elo")


def test_pandalm_items_carry_every_annotator(data_dir):
    from metaeval_core.judges import load_pairwise
    from metaeval_core.judges.examples import judge_examples

    data = load_pairwise("pandalm", data_dir=data_dir)
    listed = judge_examples(data, data.judges[0])
    assert 0 < listed.n_items < listed.n_counted
    record = listed.to_records(top=1)[0]
    assert set(data.humans) <= set(record["raters"])
    assert record["judge_original"] != record["reference"]
    assert judge_examples(data, data.judges[0], view="flips").n_items == 0  # PandaLM judged one order only


def test_judge_validation():
    from metaeval_core.judges.examples import judge_examples

    with pytest.raises(TypeError, match="PairwiseData"):
        judge_examples("pandalm", "x")


# -- command line ----------------------------------------------------------------------------------------------------
@pytest.fixture
def cli(capsys):
    import json

    from metaeval_core.cli import main as cli_main

    def run(*argv, as_json=True):
        code = cli_main.main([*argv, *(["--json"] if as_json else [])])
        out, err = capsys.readouterr()
        return code, (json.loads(out) if as_json and code == 0 else out), err

    return run


def test_cli_examples_demo(cli):
    code, records, _ = cli("examples", "--dataset", "demo", "--metric", "metric.good", "--human", "human.quality")
    assert code == 0 and records
    assert {"system_a", "system_b", "discordant", "human_difference", "metric_difference", "human_p_value"} <= set(
        records[0])
    flags = [r["discordant"] for r in records]
    assert flags == sorted(flags, reverse=True)  # discordant first
    code, records, _ = cli("examples", "--dataset", "demo", "--metric", "metric.good", "--human", "human.quality",
                           "--level", "input", "--top", "3")
    assert code == 0 and len(records) == 3 and "systems" in records[0] and "source" not in records[0]
    code, out, _ = cli("examples", "--dataset", "demo", "--metric", "metric.good", "--human", "human.quality",
                       "--level", "global", "--top", "2", as_json=False)
    assert code == 0 and "no texts" in out and "rank" in out
    code, _, err = cli("examples", "--dataset", "demo", "--metric", "metric.good", "--human", "human.quality",
                       "--level", "input", "--lower", "0.1")
    assert code == 2 and "--level system" in err
    code, _, err = cli("examples", "--dataset", "demo", "--metric", "metric.good", "--human", "human.quality",
                       "--top", "0")
    assert code == 2 and "--top" in err


def test_cli_examples_texts_on_wmt(cli, data_dir):
    code, records, _ = cli("examples", "--dataset", "wmt22-zhen", "--data-dir", str(data_dir), "--metric",
                           "COMET-22-refA", "--level", "input", "--top", "2")
    assert code == 0 and len(records) == 2
    assert records[0]["source"] and records[0]["reference"] and records[0]["systems"][0]["output"]
    assert records[0]["value"] <= records[1]["value"]
    code, records, _ = cli("examples", "--dataset", "summeval", "--data-dir", str(data_dir), "--metric", "rouge-1.f1",
                           "--versus", "rouge-2.f1", "--human", "expert.relevance")
    assert code == 0 and all(r["x_agrees"] != r["y_agrees"] for r in records)


def test_cli_judges_view_examples(cli, data_dir):
    code, records, _ = cli("judges", "--dataset", "llmbar", "--data-dir", str(data_dir), "--view", "examples",
                           "--judge", "GPT-4/Vanilla", "--show", "flips", "--pair-sets", "Natural")
    assert code == 0 and records
    assert all(r["judge_original"] != r["judge_swapped"] for r in records)
    assert records[0]["instruction"] and records[0]["output_a"] and records[0]["output_b"]
    code, out, _ = cli("judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view", "examples",
                       "--top", "1", as_json=False)
    assert code == 0 and "items wrong against" in out
    code, out, _ = cli("judges", "--dataset", "llmbar", "--data-dir", str(data_dir), "--view", "examples",
                       "--judge", "GPT-4/Vanilla", "--show", "longer", "--top", "1", as_json=False)
    assert code == 0 and "items where it chose the longer response (order original;" in out
    code, _, err = cli("judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view", "examples",
                       "--judge", "nobody")
    assert code == 2 and "nobody" in err



def test_cli_judges_view_examples_system_pairs(cli, data_dir):
    from metaeval_core.judges import load_pairwise, ranking_agreement

    data = load_pairwise("pandalm", data_dir=data_dir)
    judge = data.judges[0]
    code, records, _ = cli("judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view", "examples",
                           "--judge", judge, "--show", "pairs", "--ranking", "davidson")
    assert code == 0
    s = len(data.systems)
    assert len(records) == s * (s - 1) // 2 and {r["judge"] for r in records} == {judge}
    agreement = ranking_agreement(data, judges=[judge], method="davidson", n_resamples=40, rng=0)[0]
    assert records[0]["kendall"] == pytest.approx(agreement.estimate, abs=1e-12)  # --view systems' number
    kinds = [r["agreement"] for r in records]
    assert kinds == sorted(kinds, key=["discordant", "tied", "concordant"].index)
    assert sum(k == "discordant" for k in kinds) == records[0]["n_discordant"]
    code, out, _ = cli("judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view", "examples",
                       "--show", "pairs", "--top", "2", as_json=False)
    assert code == 0 and out.count("system pairs ordered unlike") == len(data.judges)
    assert "Kendall tau-b" in out and "systems scored by win-rate" in out
    code, _, err = cli("judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view", "examples",
                       "--show", "pairs", "--order", "both")
    assert code == 2 and "--order must be one of original, swapped, average" in err
    code, _, err = cli("judges", "--dataset", "llmbar", "--data-dir", str(data_dir), "--view", "examples",
                       "--show", "pairs")
    assert code == 2 and "does not name the systems" in err

# -- uploads with texts ---------------------------------------------------------------------------------------------
LONG_WITH_TEXTS = """system,input,measure,score,text,source,reference
A,d1,human,3,the cat sat,le chat,the cat sat down
A,d1,bleu,0.3,the cat sat,,
B,d1,human,2,a cat,le chat,
B,d1,bleu,0.4,,,
A,d2,human,4,dogs run,les chiens,dogs are running
A,d2,bleu,0.5,,,
B,d2,human,1,dog,,
B,d2,bleu,0.1,dog,,
C,d1,human,5,the cat sat down,,
C,d1,bleu,0.9,,,
C,d2,human,5,,,
C,d2,bleu,0.8,,,
"""


def test_long_upload_carries_its_texts(tmp_path):
    from metaeval_core.data.upload import read_user_file

    path = tmp_path / "with_texts.csv"
    path.write_text(LONG_WITH_TEXTS, encoding="utf-8")
    ds = read_user_file(path)
    texts = example_texts(ds)
    assert texts is not None and texts.systems == ds.systems and texts.inputs == ds.inputs
    assert texts.sources == ("le chat", "les chiens") and texts.references == ("the cat sat down", "dogs are running")
    assert texts.output(ds.systems.index("C"), ds.inputs.index("d2")) is None  # no text given: none
    record = next(r for r in input_examples(ds, "bleu", "human", texts=texts).to_records() if r["input"] == "d1")
    assert {s["system"]: s["output"] for s in record["systems"]} == {"A": "the cat sat", "B": "a cat",
                                                                      "C": "the cat sat down"}
    assert example_texts(ds.select_systems("A,B")) is texts  # a system subset keeps them
    # texts change no number: the same scores without the text columns give the same fingerprint
    plain = tmp_path / "plain.csv"
    plain.write_text("\n".join(",".join(line.split(",")[:4]) for line in LONG_WITH_TEXTS.splitlines()) + "\n",
                     encoding="utf-8")
    assert read_user_file(plain).fingerprint() == ds.fingerprint()
    assert example_texts(read_user_file(plain)) is None


def test_upload_texts_are_checked(tmp_path):
    from metaeval_core.data.upload import UploadError, read_user_file
    from metaeval_core.data.upload.tables import MAX_TEXT_CHARS

    conflicting = LONG_WITH_TEXTS.replace("A,d1,bleu,0.3,the cat sat,,", "A,d1,bleu,0.3,another text,,")
    path = tmp_path / "conflict.csv"
    path.write_text(conflicting, encoding="utf-8")
    with pytest.raises(UploadError, match="two different 'text' texts for the same system and input") as caught:
        read_user_file(path)
    assert caught.value.kind == "inconsistent-attribute" and "line 3" in str(caught.value)
    long = LONG_WITH_TEXTS.replace("dogs run", "w" * (MAX_TEXT_CHARS + 1))
    path.write_text(long, encoding="utf-8")
    with pytest.raises(UploadError, match="at most") as caught:
        read_user_file(path)
    assert caught.value.kind == "too-large"


def test_verdict_file_with_texts_gives_judge_examples_with_texts():
    from metaeval_core.judges.examples import judge_examples
    from metaeval_core.judges.upload import read_verdict_file

    rows = ["item,system_a,system_b,rater,verdict,order,kind,input,output_a,output_b"]
    for k in range(4):
        texts = f"question {k},answer A{k},answer B{k}"
        rows.append(f"q{k},x,y,person,A,,human,{texts}")
        rows.append(f"q{k},x,y,judge1,{'A' if k % 2 else 'B'},original,judge,{texts}")
        # verdicts in the item's own numbering: q0 is B in the original order and A when swapped (a flip)
        rows.append(f"q{k},x,y,judge1,{'A' if k == 0 else 'A' if k % 2 else 'B'},swapped,judge,{texts}")
    data = read_verdict_file(("\n".join(rows) + "\n").encode(), name="verdicts.csv")
    wrong = judge_examples(data, "judge1", reference="person")
    assert [data.items[i] for i in wrong.items] == ["q0", "q2"] and wrong.n_counted == 4
    record = wrong.to_records()[0]
    assert (record["instruction"], record["output_a"], record["output_b"]) == ("question 0", "answer A0",
                                                                              "answer B0")
    assert record["raters"]["person"] == {"original": "A"}
    flips = judge_examples(data, "judge1", view="flips")
    assert [data.items[i] for i in flips.items] == ["q0"]


def test_pool_all_pairs_give_the_pool_all_value():
    from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

    ds = synthetic_dataset(SyntheticSpec(n_systems=8, n_judged=20, n_unjudged=60, seed=9), id="pools")
    metric, human = ds.metric_measures[0], ds.human_measures[0]
    for pool in ("judged", "all"):
        result = pair_examples(ds, metric, human, pool=pool, significance=False)
        counts = kendall_pair_counts(result)
        assert float(tau_b_from_counts(counts.concordant, counts.discordant, counts.ties_x, counts.ties_z)) == \
            pytest.approx(correlate(ds, metric, human, pool=pool).estimate, abs=1e-12)
    judged = pair_examples(ds, metric, human, pool="judged", significance=False)
    every = pair_examples(ds, metric, human, pool="all", significance=False)
    assert not np.allclose(sorted(judged.metric_a), sorted(every.metric_a))  # the pool changes the metric means
