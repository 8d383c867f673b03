"""Human ceilings (docs/methods.md sec. 14): each annotator against the mean of the others, as a metric."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from metaeval_core.analyses.ceilings import human_ceiling
from metaeval_core.cli.main import main as cli_main
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.stats.resampling import confidence_interval


def _oracle_system_estimates(ratings: np.ndarray, coefficient: str) -> list[float]:
    """A slow, readable loop: annotator a's system means vs the system means of the others' per-cell mean."""
    out = []
    for a in range(ratings.shape[0]):
        own = np.nanmean(ratings[a], axis=1)
        others = [ratings[b] for b in range(ratings.shape[0]) if b != a]
        reference = np.nanmean(np.nanmean(np.stack(others), axis=0), axis=1)
        function = {"kendall": stats.kendalltau, "pearson": stats.pearsonr, "spearman": stats.spearmanr}[coefficient]
        out.append(float(function(own, reference).statistic))
    return out


@pytest.mark.parametrize("coefficient", ["kendall", "pearson", "spearman"])
def test_estimates_match_a_slow_loop(demo, coefficient):
    result = human_ceiling(demo, "human.quality", coefficient=coefficient, method="fisher" if coefficient != "kendall"
                           else "boot-systems", n_resamples=100, rng=0)
    ratings = demo.measure("human.quality").annotators[:, :, demo.judged]
    np.testing.assert_allclose([r.estimate for r in result.rows], _oracle_system_estimates(ratings, coefficient),
                               rtol=0, atol=1e-12)
    assert [r.annotator for r in result.rows] == [f"annotator {a + 1}" for a in range(ratings.shape[0])]


def test_intervals_are_the_metric_procedure_on_each_annotator_with_its_own_stream(demo):
    result = human_ceiling(demo, "human.quality", method="boot-both", n_resamples=200, rng=7)
    ratings = demo.measure("human.quality").annotators[:, :, demo.judged]
    streams = np.random.default_rng(7).spawn(ratings.shape[0])
    for a, (row, stream) in enumerate(zip(result.rows, streams)):
        reference = np.nanmean(np.delete(ratings, a, axis=0), axis=0)
        ci = confidence_interval(ratings[a], reference, level="system", coefficient="kendall", method="boot-both",
                                 n_resamples=200, rng=stream)
        assert (row.low, row.high, row.n_defined) == (ci.low, ci.high, ci.n_defined)
        assert row.low <= row.estimate <= row.high
    again = human_ceiling(demo, "human.quality", method="boot-both", n_resamples=200, rng=7, batch=13)
    assert again.rows == result.rows  # any batch size, the same numbers


def test_missing_ratings_are_left_out_like_any_missing_score():
    rng = np.random.default_rng(0)
    ratings = rng.integers(1, 6, size=(3, 6, 8)).astype(float)
    ratings[2, :, :4] = np.nan  # annotator 3 rated only half of the inputs
    ds = Dataset("t", [f"s{i}" for i in range(6)], [f"i{j}" for j in range(8)],
                 {"h": Measure.from_annotators("h", "human", ratings),
                  "m": Measure("m", "metric", rng.normal(size=(6, 8)))})
    result = human_ceiling(ds, "h", method="fisher")
    np.testing.assert_allclose([r.estimate for r in result.rows], _oracle_system_estimates(ratings, "kendall"),
                               atol=1e-12)
    assert result.to_frame().shape[0] == 3 and np.isfinite(result.mean_estimate)


def test_refusals_name_the_problem(demo):
    with pytest.raises(DatasetError, match="not a human measure"):
        human_ceiling(demo, "metric.strong")
    single = Dataset("t", ["a", "b", "c"], ["x", "y"],
                     {"h": Measure.from_annotators("h", "human", np.ones((1, 3, 2)))})
    with pytest.raises(DatasetError, match="at least 2 annotators"):
        human_ceiling(single, "h")
    plain = Dataset("t", ["a", "b", "c"], ["x", "y"], {"h": Measure("h", "human", np.ones((3, 2)))})
    with pytest.raises(DatasetError, match="keeps 0 annotator"):
        human_ceiling(plain, "h")
    with pytest.raises(ValueError, match="method must be one of"):
        human_ceiling(demo, "human.quality", method="jackknife")


def test_cli_prints_the_rows(capsys):
    code = cli_main(["ceiling", "--dataset", "demo", "--human", "human.quality", "--n-resamples", "100", "--json"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["annotator"] for r in rows] == ["annotator 1", "annotator 2", "annotator 3"]
    assert all(r["low"] <= r["estimate"] <= r["high"] for r in rows)


@pytest.mark.realdata
def test_summeval_experts_agree_about_as_well_as_the_best_metric(data_dir):
    from metaeval_core.data.registry import load_dataset

    ds = load_dataset("summeval", data_dir=data_dir)
    result = human_ceiling(ds, "expert.relevance", method="fisher")
    ratings = ds.measure("expert.relevance").annotators[:, :, ds.judged]
    np.testing.assert_allclose([r.estimate for r in result.rows], _oracle_system_estimates(ratings, "kendall"),
                               atol=1e-12)
    # Each expert vs the other two: system-level Kendall 0.73-0.79, about where QAEval sits (TACL 2021).
    assert all(0.6 < r.estimate < 0.9 for r in result.rows)
