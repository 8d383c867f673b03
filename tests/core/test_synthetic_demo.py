"""The built-in demo shows the NAACL 2022 finding (issue 14), and the generator still shows the opposite effect
when metrics share the humans' per-summary noise (the old demo), so the explanation on Judged vs all is testable."""

from __future__ import annotations

import pytest

from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset
from metaeval_core.stats.correlation import correlate
from metaeval_core.stats.pools import rsys_width_comparison


def widths(dataset, metric="metric.strong"):
    return rsys_width_comparison(dataset, metric, "human.quality", n_resamples=300, rng=0)


def test_demo_intervals_narrow_with_all_inputs_and_the_estimate_stays():
    demo = synthetic_dataset()
    result = widths(demo)
    for row in result.rows:  # BOOT-SYSTEMS, BOOT-INPUTS, BOOT-BOTH: all narrower with all 2,100 inputs
        assert row.width_all < row.width_judged, row.method
        assert row.all.estimate == pytest.approx(row.judged.estimate, abs=0.01)
    # Like real metrics: good at ranking systems, poor at ranking one input's summaries.
    assert correlate(demo, "metric.strong", "human.quality", level="system", coefficient="kendall").estimate > 0.8
    assert correlate(demo, "metric.strong", "human.quality", level="input", coefficient="kendall").estimate < 0.3


def test_shared_per_summary_noise_widens_intervals_and_lifts_the_judged_estimate():
    """metric_interaction = metric_noise_sd = 1 is the generator before issue 14 (same draws): the metric sees
    every summary's quality as the humans do, so the joint judged-input bootstrap cancels shared errors."""
    old = synthetic_dataset(SyntheticSpec(metric_interaction=1.0, metric_noise_sd=1.0))
    boot_inputs = next(r for r in widths(old).rows if r.method == "boot-inputs")
    assert boot_inputs.width_all > boot_inputs.width_judged
    assert boot_inputs.judged.estimate == pytest.approx(0.933, abs=0.001)
    assert boot_inputs.all.estimate == pytest.approx(0.883, abs=0.001)


def test_generator_is_deterministic_and_validates_the_new_fields():
    a, b = synthetic_dataset(), synthetic_dataset()
    assert (a.measure("metric.good").scores == b.measure("metric.good").scores).all()
    with pytest.raises(ValueError, match="metric_interaction must lie in"):
        synthetic_dataset(SyntheticSpec(metric_interaction=1.5))
    with pytest.raises(ValueError, match="metric_noise_sd must be non-negative"):
        synthetic_dataset(SyntheticSpec(metric_noise_sd=-1.0))
