"""Tie-calibrated accuracy with one epsilon (docs/methods.md sec. 11.2) against the slow exact oracle."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import metaeval_core.stats.tiecal as tiecal
from metaeval_core.cli.main import main
from metaeval_core.stats.correlation import LEVELS, correlate, correlate_matrices
from metaeval_core.stats.resampling import _counts, _draw_bootstrap_indices, confidence_interval
from metaeval_core.stats.significance import compare_metrics
from metaeval_core.stats.significance.permutation import _draw_swap_masks

from .oracles import permutation_null, resample
from .tie_oracle import one_epsilon, per_item

COEF = "tie-calibrated-accuracy"


def messy(seed: int, n: int = 6, m: int = 7, nan: float = 0.15):
    """Likert-like human scores (many ties), metric scores with some exact ties, NaNs on both sides."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 4, (n, m)).astype(float)
    metric = np.round(human + rng.normal(0, 1.0, (n, m)), 1)
    metric[rng.random(metric.shape) < nan] = np.nan
    human[rng.random(human.shape) < nan] = np.nan
    return metric, human


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", range(8))
def test_fast_path_equals_the_oracle(level, seed):
    x, z = messy(seed, n=3 + seed % 4, m=2 + seed)
    result = correlate_matrices(x, z, level=level, coefficient=COEF)
    accuracy, epsilon = one_epsilon(x, z, level)
    if np.isnan(accuracy):
        assert np.isnan(result.estimate) and np.isnan(result.epsilon)
        return
    assert float(result.estimate) == pytest.approx(accuracy, abs=1e-12)
    assert float(result.epsilon) == epsilon  # the smallest maximiser, exactly


@pytest.mark.parametrize("level", LEVELS)
def test_batched_equals_unbatched_and_chunking_changes_nothing(level, monkeypatch):
    stack = [messy(s, n=5, m=9) for s in range(7)]
    xs = np.stack([x for x, _ in stack])
    zs = np.stack([z for _, z in stack])
    batched = correlate_matrices(xs, zs, level=level, coefficient=COEF)
    monkeypatch.setattr(tiecal, "_ENTRY_BUDGET", 1)  # one row per chunk
    for k, (x, z) in enumerate(stack):
        alone = correlate_matrices(x, z, level=level, coefficient=COEF)
        np.testing.assert_array_equal(batched.estimate[k], alone.estimate)
        np.testing.assert_array_equal(batched.epsilon[k], alone.epsilon)
        np.testing.assert_array_equal(batched.n[k], alone.n)


def test_inexact_fallback_still_matches_the_oracle(monkeypatch):
    # Force the float path (as if the pair counts' common multiple overflowed).
    monkeypatch.setattr(tiecal, "_EXACT_LIMIT", 1.0)
    for seed in range(5):
        x, z = messy(seed, n=6, m=8, nan=0.25)
        result = correlate_matrices(x, z, level="input", coefficient=COEF)
        accuracy, epsilon = one_epsilon(x, z, "input")
        assert float(result.estimate) == pytest.approx(accuracy, abs=1e-12)
        assert float(result.epsilon) == epsilon
    x, z = messy(9, n=6, m=8, nan=0.25)
    ci = confidence_interval(x, z, level="input", coefficient=COEF, method="boot-both", n_resamples=10, rng=2,
                             return_distribution=True)
    indices = _draw_bootstrap_indices(np.random.default_rng(2), "boot-both", 10, 6, 8)
    for s in range(10):
        xs, zs = (resample(a, indices.systems[s], indices.metric_inputs[s]) for a in (x, z))
        assert ci.distribution[s] == pytest.approx(one_epsilon(xs, zs, "input")[0], abs=1e-12)


def test_one_epsilon_never_beats_per_item_epsilons():
    # Per-item epsilons fit each input separately: their mean is an upper bound (and usually larger).
    larger = 0
    for seed in range(6):
        x, z = messy(seed, n=6, m=8)
        shared = float(correlate_matrices(x, z, level="input", coefficient=COEF).estimate)
        separate = per_item(x, z)
        assert shared <= separate + 1e-12
        larger += separate > shared + 1e-9
    assert larger >= 3


def test_epsilon_is_in_metric_units():
    x, z = messy(3, n=6, m=8)
    base = correlate_matrices(x, z, level="input", coefficient=COEF)
    # A power of two scales every difference exactly, so the same pairs tie.
    scaled = correlate_matrices(4.0 * x, z, level="input", coefficient=COEF)
    assert float(scaled.estimate) == float(base.estimate)
    assert float(scaled.epsilon) == 4.0 * float(base.epsilon)


@pytest.mark.parametrize("method", ["boot-systems", "boot-inputs", "boot-both"])
def test_bootstrap_rechooses_epsilon_per_resample(method):
    x, z = messy(11, n=6, m=8)
    ci = confidence_interval(x, z, level="input", coefficient=COEF, method=method, n_resamples=25, rng=4,
                             return_distribution=True)
    indices = _draw_bootstrap_indices(np.random.default_rng(4), method, 25, 6, 8)
    for s in range(25):
        systems = None if indices.systems is None else indices.systems[s]
        inputs = None if indices.metric_inputs is None else indices.metric_inputs[s]
        expected = one_epsilon(resample(x, systems, inputs), resample(z, systems, inputs), "input")[0]
        assert ci.distribution[s] == pytest.approx(expected, abs=1e-12, nan_ok=True)
    one_at_a_time = confidence_interval(x, z, level="input", coefficient=COEF, method=method, n_resamples=25,
                                        rng=4, batch=1, return_distribution=True)
    np.testing.assert_array_equal(ci.distribution, one_at_a_time.distribution)


def test_resampled_engine_equals_materialised_matrices():
    x, z = messy(5, n=7, m=10, nan=0.2)
    engine = tiecal.ResampledInputCalibration(x, z)
    rng = np.random.default_rng(0)
    systems, inputs = rng.integers(0, 7, (40, 7)), rng.integers(0, 10, (40, 10))
    accuracy, epsilon = engine.evaluate(_counts(systems, 7), _counts(inputs, 10))
    materialised = tiecal.input_tie_calibrated(np.stack([x[s][:, d] for s, d in zip(systems, inputs)]),
                                               np.stack([z[s][:, d] for s, d in zip(systems, inputs)]))
    np.testing.assert_allclose(accuracy, materialised.accuracy, atol=1e-12)
    np.testing.assert_array_equal(epsilon, materialised.epsilon)


@pytest.mark.parametrize("method", ["perm-inputs", "perm-systems", "perm-both"])
def test_permutation_rechooses_epsilon_per_resample(method):
    x, z = messy(21, n=5, m=6)
    y, _ = messy(22, n=5, m=6)
    result = compare_metrics(x, y, z, level="input", coefficient=COEF, method=method, n_resamples=20, rng=9,
                             return_distribution=True)
    masks = _draw_swap_masks(np.random.default_rng(9), method, 20, 5, 6)
    np.testing.assert_allclose(result.null_distribution, permutation_null(x, y, z, "input", COEF, masks), atol=1e-12)


def test_correlation_result_reports_epsilon(demo):
    calibrated = correlate(demo, "metric.good", "human.quality", level="input", coefficient=COEF)
    assert np.isfinite(calibrated.epsilon) and calibrated.epsilon >= 0
    record = calibrated.to_dict()
    assert record["epsilon"] == calibrated.epsilon
    assert "epsilon" in calibrated.to_frame().columns
    kendall = correlate(demo, "metric.good", "human.quality", level="input", coefficient="kendall")
    assert kendall.to_dict()["epsilon"] is None and np.isnan(kendall.epsilon)


def test_cli_correlate_prints_epsilon(capsys):
    argv = ["correlate", "--dataset", "demo", "--metrics", "metric.good,metric.weak", "--human", "human.quality",
            "--level", "input", "--coefficient", COEF]
    assert main(argv + ["--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all(r["epsilon"] is not None and r["epsilon"] >= 0 for r in rows)
    assert main(argv) == 0
    assert "epsilon" in capsys.readouterr().out.splitlines()[1]  # after the heading line
    assert main(argv[:-2] + ["--coefficient", "kendall", "--json"]) == 0
    assert all(r["epsilon"] is None for r in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("method", ["perm-inputs", "perm-systems", "perm-both"])
def test_swapped_engine_equals_materialised_matrices(method, monkeypatch):
    x, z = messy(31, n=6, m=9, nan=0.2)
    y, _ = messy(32, n=6, m=9, nan=0.2)
    masks = _draw_swap_masks(np.random.default_rng(1), method, 30, 6, 9)
    engine = tiecal.SwappedInputCalibration(x, y, z)
    accuracy_x, accuracy_y = engine.evaluate(masks)
    for swapped, other, got in ((y, x, accuracy_x), (x, y, accuracy_y)):
        expected = tiecal.input_tie_calibrated(np.where(masks, swapped, other), z[None])
        np.testing.assert_array_equal(got, expected.accuracy)
    monkeypatch.setattr(tiecal, "_ENTRY_BUDGET", 1)  # one resample per chunk
    np.testing.assert_array_equal(engine.evaluate(masks)[0], accuracy_x)


def test_table_time_estimate_counts_pair_entries():
    from metaeval_core.stats.significance.tables import estimated_table_seconds

    # Measured on the 2-core machine: PERM-BOTH, 5 metrics, 16 x 100, 200 resamples took about 4 s.
    options = dict(level="input", coefficient=COEF, n_resamples=200)
    assert 1.0 < estimated_table_seconds(16, 100, 5, method="perm-both", **options) < 20.0
    assert 1.0 < estimated_table_seconds(16, 100, 5, method="perm-inputs", **options) < 20.0
    # 15 x 2000, one metric and the human, 1,000 BOOT-BOTH resamples: about 7 s each.
    assert 5.0 < estimated_table_seconds(15, 2000, 2, method="boot-both", level="input", coefficient=COEF,
                                         n_resamples=1000) < 60.0


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 5).flatmap(lambda n: st.integers(1, 4).flatmap(lambda m: st.tuples(
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, np.nan]), min_size=n * m, max_size=n * m),
    st.lists(st.sampled_from([0.0, 1.0, 2.0, np.nan]), min_size=n * m, max_size=n * m),
    st.just((n, m))))))
def test_property_equals_the_oracle_on_tiny_tied_matrices(case):
    xs, zs, shape = case
    x, z = np.array(xs).reshape(shape), np.array(zs).reshape(shape)
    result = correlate_matrices(x, z, level="input", coefficient=COEF)
    accuracy, epsilon = one_epsilon(x, z, "input")
    if np.isnan(accuracy):
        assert np.isnan(result.estimate)
    else:
        assert float(result.estimate) == pytest.approx(accuracy, abs=1e-12) and float(result.epsilon) == epsilon


def test_epsilon_of_a_human_measure_used_as_metric_is_in_its_units():
    from metaeval_core.data.dataset import Dataset, Measure

    rng = np.random.default_rng(4)
    ratings = rng.integers(1, 6, (3, 6, 10)).astype(float)  # 3 annotators: means on the grid 1/3
    other = 1.0 + (rng.random((6, 10)) < 0.15)  # mostly tied: calibration ties many pairs
    ds = Dataset(id="grid", systems=list("abcdef"), inputs=[f"i{j}" for j in range(10)], measures={
        "rated": Measure("rated", "human", ratings.mean(axis=0), annotators=ratings),
        "other": Measure("other", "human", other)})
    positive = False
    for level in LEVELS:
        result = correlate(ds, "rated", "other", level=level, coefficient=COEF)
        accuracy, epsilon = one_epsilon(ds.matrix("rated"), ds.matrix("other"), level)
        assert result.estimate == pytest.approx(accuracy, abs=1e-12)
        assert result.epsilon == pytest.approx(epsilon, rel=1e-12, abs=1e-12)
        positive = positive or epsilon > 0
    assert positive
