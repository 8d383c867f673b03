"""Judged vs all inputs (docs/methods.md sec. 6; NAACL 2022 sec. 3, Fig. 2 and 4)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.data.dataset import DatasetError
from metaeval_core.stats.pairs import DELTA_METHODS, dataset_delta_confidence_interval
from metaeval_core.stats.pools import (
    draw_input_indices,
    rsys_width_comparison,
    simulate_labelled_subset,
    simulated_pool_dataset,
    system_score_intervals,
    variance_reduction,
)


def _judged_only(demo):
    """The demo without its unjudged pool (like every real dataset in the mirror)."""
    judged = [demo.inputs[j] for j in np.flatnonzero(demo.judged)]
    return demo.subset(inputs=judged, id="demo-judged")


# ------------------------------------------------------------------ per-system intervals
def test_system_score_intervals_match_loop_oracle():
    rng = np.random.default_rng(0)
    x = rng.normal(30, 5, (5, 25))
    x[2, 4] = np.nan
    result = system_score_intervals(x, n_resamples=80, rng=3, confidence_level=0.9)
    indices = draw_input_indices(np.random.default_rng(3), 25, 80)
    samples = np.array([[np.nanmean(x[i, indices[k]]) for i in range(5)] for k in range(80)])
    np.testing.assert_allclose(result.distribution, samples, rtol=1e-13)
    np.testing.assert_allclose(result.variance, samples.var(axis=0), rtol=1e-10)
    np.testing.assert_allclose(result.low, np.quantile(samples, 0.05, axis=0), rtol=1e-12)
    np.testing.assert_allclose(result.high, np.quantile(samples, 0.95, axis=0), rtol=1e-12)
    np.testing.assert_allclose(result.mean, np.nanmean(x, axis=1))
    assert result.systems == ("S0", "S1", "S2", "S3", "S4")


def test_system_score_intervals_batch_invariance():
    x = np.random.default_rng(1).normal(size=(6, 300))
    reference = system_score_intervals(x, n_resamples=70, rng=8)
    for batch in (1, 9, 1000):
        other = system_score_intervals(x, n_resamples=70, rng=8, batch=batch)
        np.testing.assert_array_equal(other.distribution, reference.distribution)


def test_system_score_intervals_validation():
    with pytest.raises(ValueError, match="systems must name every row"):
        system_score_intervals(np.ones((3, 4)), systems=["a", "b"])
    with pytest.raises(ValueError, match="n_resamples must be >= 1"):
        system_score_intervals(np.ones((3, 4)), n_resamples=0)
    with pytest.raises(ValueError, match="matrix must be a non-empty 2-D"):
        system_score_intervals(np.ones(4))


# ---------------------------------------------------------------- demo: the paper's effect
def test_variance_reduction_on_demo(demo):
    """NAACL 2022 sec. 3.1: scoring on M_test inputs cuts per-system variance by about 1 - M_jud/M_test."""
    expected = 1 - demo.n_judged / demo.n_inputs
    for metric in demo.metric_measures:
        result = variance_reduction(demo, metric, n_resamples=400, rng=0)
        assert result.judged.n_inputs == demo.n_judged and result.all.n_inputs == demo.n_inputs
        assert result.average_reduction > 0
        assert result.average_reduction == pytest.approx(expected, abs=0.03)
        assert result.pooled_reduction == pytest.approx(expected, abs=0.03)
        assert result.n_undefined == 0 and not result.simulated
        width_judged = result.judged.high - result.judged.low
        width_all = result.all.high - result.all.low
        assert np.all(width_all < width_judged)  # full-pool intervals are narrower for every system
        assert result.judged.systems == demo.systems


def test_rsys_width_comparison_on_demo(demo):
    """NAACL 2022 Fig. 4: BOOT-INPUTS intervals of rSYS narrow when the metric uses all inputs."""
    reductions = []
    for metric in demo.metric_measures:
        comparison = rsys_width_comparison(demo, metric, "human.quality", n_resamples=300, rng=0)
        assert [r.method for r in comparison.rows] == ["boot-systems", "boot-inputs", "boot-both"]
        boot_inputs = comparison.rows[1]
        assert boot_inputs.judged.pool == "judged" and boot_inputs.all.pool == "all"
        assert boot_inputs.reduction_percent == pytest.approx(
            100 * (1 - boot_inputs.width_all / boot_inputs.width_judged)
        )
        reductions.append(boot_inputs.reduction_percent)
        records = comparison.to_records()
        assert len(records) == 3 and records[1]["method"] == "boot-inputs"
    assert np.mean(reductions) > 10


def test_rsys_width_comparison_streams_are_reproducible(demo):
    first = rsys_width_comparison(demo, "metric.fair", "human.quality", methods=["boot-inputs"],
                                  upper=3.0, n_resamples=100, rng=7)
    again = rsys_width_comparison(demo, "metric.fair", "human.quality", methods=["boot-inputs"],
                                  upper=3.0, n_resamples=100, rng=7, batch=13)
    np.testing.assert_array_equal(first.rows[0].all.distribution, again.rows[0].all.distribution)
    # The judged interval is the same as a direct call with the first spawned stream.
    stream = np.random.default_rng(7).spawn(2)[0]
    direct = dataset_delta_confidence_interval(demo, "metric.fair", "human.quality", upper=3.0,
                                               n_resamples=100, rng=stream)
    np.testing.assert_array_equal(first.rows[0].judged.distribution, direct.distribution)


def test_pool_functions_need_an_unjudged_pool(demo):
    judged_only = _judged_only(demo)
    assert not judged_only.has_unjudged_pool
    with pytest.raises(DatasetError, match="simulate_labelled_subset"):
        variance_reduction(judged_only, "metric.good", n_resamples=10)
    with pytest.raises(DatasetError, match="simulate_labelled_subset"):
        rsys_width_comparison(judged_only, "metric.good", "human.quality", n_resamples=10)
    with pytest.raises(DatasetError, match="only metrics have an 'all' pool"):
        variance_reduction(demo, "human.quality", n_resamples=10)


def test_width_comparison_validation(demo):
    with pytest.raises(ValueError, match="methods must name at least one"):
        rsys_width_comparison(demo, "metric.good", "human.quality", methods=[])
    with pytest.raises(ValueError, match="method must be one of"):
        rsys_width_comparison(demo, "metric.good", "human.quality", methods=["boot-pairs"])
    with pytest.raises(ValueError, match="lower must be <= upper"):
        rsys_width_comparison(demo, "metric.good", "human.quality", lower=2.0, upper=1.0)


# -------------------------------------------------------------------------- simulation
def test_simulate_labelled_subset(demo):
    judged_only = _judged_only(demo)
    result = simulate_labelled_subset(judged_only, "metric.good", "human.quality", m=25,
                                      methods=["boot-inputs"], n_resamples=200, rng=0)
    assert result.simulated and "SIMULATION" in result.label and "25 of the 100" in result.label
    assert result.m == 25 and result.n_full == 100 and len(result.subset_inputs) == 25
    simulated = result.dataset
    assert simulated.n_judged == 25 and simulated.n_inputs == 100 and simulated.has_unjudged_pool
    assert "SIMULATION" in simulated.title
    assert result.variance.simulated and result.widths.simulated
    assert result.variance.average_reduction == pytest.approx(1 - 25 / 100, abs=0.08)
    assert result.widths.to_records()[0]["simulated"] is True
    again = simulate_labelled_subset(judged_only, "metric.good", "human.quality", m=25,
                                     methods=["boot-inputs"], n_resamples=200, rng=0)
    assert again.subset_inputs == result.subset_inputs
    np.testing.assert_array_equal(again.widths.rows[0].all.distribution, result.widths.rows[0].all.distribution)


def test_simulated_pool_dataset_keeps_human_scores_on_the_subset_only(demo):
    judged_only = _judged_only(demo)
    chosen = judged_only.inputs[:10]
    simulated = simulated_pool_dataset(judged_only, "metric.fair", "human.quality", chosen)
    np.testing.assert_array_equal(simulated.judged, np.isin(simulated.inputs, chosen))
    np.testing.assert_array_equal(simulated.matrix("human.quality"), judged_only.matrix("human.quality")[:, :10])
    np.testing.assert_array_equal(simulated.matrix("metric.fair", pool="all"), judged_only.matrix("metric.fair"))
    assert set(simulated.measures) == {"metric.fair", "human.quality"}


def test_simulate_validation(demo):
    judged_only = _judged_only(demo)
    for m in (1, 100, 150):
        with pytest.raises(ValueError, match="m must satisfy 2 <= m < the number of judged inputs"):
            simulate_labelled_subset(judged_only, "metric.good", "human.quality", m=m, n_resamples=10)
    with pytest.raises(TypeError, match="m must be an int"):
        simulate_labelled_subset(judged_only, "metric.good", "human.quality", m=2.5, n_resamples=10)
    with pytest.raises(DatasetError, match="not a human measure"):
        simulate_labelled_subset(judged_only, "metric.good", "metric.fair", m=10, n_resamples=10)


@pytest.mark.realdata
def test_simulation_on_summeval_naacl(data_dir):
    registry = pytest.importorskip("metaeval_core.data.registry")
    dataset = registry.load_dataset("summeval-naacl2022", data_dir=data_dir)
    result = simulate_labelled_subset(dataset, "ROUGE-1", "ground-truth", m=50, methods=DELTA_METHODS,
                                      n_resamples=200, rng=0)
    assert result.n_full == 100 and result.variance.average_reduction > 0.3
    assert all(np.isfinite(r.width_judged) and np.isfinite(r.width_all) for r in result.widths.rows)
