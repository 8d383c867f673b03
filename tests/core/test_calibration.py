"""Statistical calibration of the resampling core on the synthetic generator (known truth).

* BOOT-BOTH (and Fisher) coverage of the population system-level Pearson correlation.
* PERM-BOTH p-values uniform under H0 with two exchangeable metrics.

Seeded; each test runs in well under a minute on 2 cores. Run with ``pytest -m slow -s`` to
see the figures.

References: docs/methods.md sec. 2, 3 and 9; TACL 2021 sec. 5.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metaeval_core.stats.resampling import confidence_interval
from metaeval_core.stats.significance import compare_metrics
from metaeval_core.data.synthetic import SyntheticSpec, draw_synthetic

pytestmark = pytest.mark.slow

COVERAGE_SPEC = SyntheticSpec(
    n_systems=40, n_judged=1000, n_unjudged=0, n_annotators=3, likert=False,
    metrics=(("metric", 0.7),), n_extractive=0,
)


def population_system_pearson(spec: SyntheticSpec, strength: float) -> float:
    """The system-level Pearson correlation across systems at ``spec.n_judged`` inputs.

    With latent ``L = q_i + d_j + e_ij``, the metric's view ``V = q_i + d_j + c e_ij`` (``c`` =
    ``spec.metric_interaction``, sd ``sigma_V``), human cell ``L + mean of A annotator noises`` and metric cell
    ``s V / sigma_V + sqrt(1 - s^2) o_ij + b_i`` with ``o`` of sd ``spec.metric_noise_sd``, the system means over M
    shared inputs are jointly normal across systems (the shared input effect cancels), with
    cov = (s / sigma_V)(sigma_q^2 + c sigma_e^2 / M),
    var_x = (s / sigma_V)^2 (sigma_q^2 + c^2 sigma_e^2 / M) + (1 - s^2) sigma_o^2 / M + sigma_b^2,
    var_z = sigma_q^2 + sigma_e^2 / M + sigma_a^2 / (A M).
    """
    m = spec.n_judged
    c = spec.metric_interaction
    sigma_v = math.sqrt(spec.system_sd**2 + spec.input_sd**2 + (c * spec.interaction_sd) ** 2)
    slope = strength / sigma_v
    sigma_b = spec.system_bias_sd * (1 - strength)
    cov = slope * (spec.system_sd**2 + c * spec.interaction_sd**2 / m)
    var_x = (slope**2 * (spec.system_sd**2 + c**2 * spec.interaction_sd**2 / m)
             + (1 - strength**2) * spec.metric_noise_sd**2 / m + sigma_b**2)
    var_z = spec.system_sd**2 + spec.interaction_sd**2 / m + spec.annotator_sd**2 / (spec.n_annotators * m)
    return cov / math.sqrt(var_x * var_z)


def _draw(spec: SyntheticSpec, rng: np.random.Generator):
    draw = draw_synthetic(spec, rng)
    return draw.metrics[spec.metrics[0][0]], draw.annotators.mean(axis=0)


def test_population_value_agrees_with_a_very_large_draw():
    rho = population_system_pearson(COVERAGE_SPEC, 0.7)
    big = SyntheticSpec(**{**COVERAGE_SPEC.__dict__, "n_systems": 5_000})
    metric, human = _draw(big, np.random.default_rng(0))
    r = np.corrcoef(metric.mean(axis=1), human.mean(axis=1))[0, 1]
    print(f"\npopulation system-level Pearson: analytic {rho:.4f}, draw of 5000 systems {r:.4f}")
    assert abs(r - rho) < 0.01


def test_boot_both_covers_the_population_correlation():
    rho = population_system_pearson(COVERAGE_SPEC, 0.7)
    rng = np.random.default_rng(2021)
    trials = 300
    hits = {"boot-both": 0, "fisher": 0}
    widths = {"boot-both": [], "fisher": []}
    for _ in range(trials):
        metric, human = _draw(COVERAGE_SPEC, rng)
        for method in hits:
            ci = confidence_interval(metric, human, level="system", coefficient="pearson", method=method,
                                     n_resamples=1000, rng=rng)
            hits[method] += ci.low <= rho <= ci.high
            widths[method].append(ci.high - ci.low)
    coverage = {m: h / trials for m, h in hits.items()}
    se = math.sqrt(0.95 * 0.05 / trials)
    print(f"\nrho = {rho:.4f}; 95% CI coverage over {trials} datasets (40 systems x 1000 inputs), "
          f"MC se {se:.3f}: " + ", ".join(f"{m} {c:.3f} (mean width {np.mean(widths[m]):.3f})"
                                         for m, c in coverage.items()))
    # Many inputs: the input resampling adds little beyond what each system's mean already carries
    # (with few inputs BOOT-BOTH double-counts that noise and over-covers, e.g. 0.98 at 200 inputs).
    assert abs(coverage["boot-both"] - 0.95) <= 0.04
    assert abs(coverage["fisher"] - 0.95) <= 0.04


@pytest.mark.parametrize("level", ["system", "input"])
def test_perm_both_pvalues_are_uniform_under_h0(level):
    # Two metrics of equal strength with i.i.d. noise and no per-system bias: every cell's
    # (X, Y) pair is exchangeable, the null of PERM-BOTH holds exactly.
    spec = SyntheticSpec(n_systems=16, n_judged=50, n_unjudged=0, system_bias_sd=0.0,
                         metrics=(("a", 0.5), ("b", 0.5)), n_extractive=0)
    rng = np.random.default_rng(7 if level == "system" else 8)
    pvalues, two_sided = [], []
    for _ in range(300):
        draw = draw_synthetic(spec, rng)
        x, y = draw.metrics["a"], draw.metrics["b"]
        z = draw.annotators.mean(axis=0)
        res = compare_metrics(x, y, z, level=level, coefficient="pearson", method="perm-both",
                              n_resamples=200, rng=rng, return_distribution=True)
        pvalues.append(res.pvalue)
        defined = res.null_distribution[~np.isnan(res.null_distribution)]
        two_sided.append((1 + np.sum(np.abs(defined) >= abs(res.delta) - 1e-12)) / (1 + defined.size))
    pvalues = np.array(pvalues)
    ks = stats.kstest(pvalues, "uniform")
    ks2 = stats.kstest(two_sided, "uniform")
    rejection = float(np.mean(pvalues < 0.05))
    print(f"\nPERM-BOTH {level} level under H0, 300 datasets x 200 resamples: KS p = {ks.pvalue:.3f} "
          f"(two-sided {ks2.pvalue:.3f}), share p < 0.05 = {rejection:.3f}")
    assert ks.pvalue > 0.01
    assert ks2.pvalue > 0.01
    assert rejection < 0.1
