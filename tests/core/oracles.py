"""Slow, readable reference implementations of docs/methods.md sec. 2-3.

Each oracle loops over resamples, builds the resampled (or swapped) matrices
literally as in TACL 2021 Algorithms 1 and 2, and computes every correlation with
``scipy.stats`` on the points that exist. They take the *same* indices and masks
as the fast code (drawn with ``_draw_bootstrap_indices`` / ``_draw_swap_masks``),
so the two must agree to rounding.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from .test_accuracy import loop_accuracy, loop_tie_calibrated
from .tie_oracle import one_epsilon


def scipy_corr(x: np.ndarray, z: np.ndarray, coefficient: str) -> float:
    """scipy's coefficient on the pairwise-complete points; NaN when undefined (docs/methods.md sec. 1)."""
    x = np.asarray(x, dtype=float)
    z = np.asarray(z, dtype=float)
    if coefficient == "pairwise-accuracy":  # no scipy equivalent: the readable pair loop
        return float(loop_accuracy(x, z))
    if coefficient == "tie-calibrated-accuracy":
        return float(loop_tie_calibrated(x, z)[0])
    if coefficient == "pdp":  # one vector of points: the differences of all its pairs
        return loop_pdp(x[:, None], z[:, None])
    keep = ~(np.isnan(x) | np.isnan(z))
    x, z = x[keep], z[keep]
    if x.size < 2 or x.min() == x.max() or z.min() == z.max():
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if coefficient == "pearson":
            return float(stats.pearsonr(x, z).statistic)
        if coefficient == "spearman":
            return float(stats.spearmanr(x, z).statistic)
        return float(stats.kendalltau(x, z).statistic)


def loop_pdp(metric: np.ndarray, human: np.ndarray) -> float:
    """Pairwise Difference Pearson as mt-metrics-eval defines it (docs/methods.md sec. 11.4): per column (input),
    the differences of every ordered pair of rows (systems), (i, i) included, where both sides have scores; then
    scipy's Pearson r over all of them pooled."""
    dx, dz = [], []
    for k in range(metric.shape[1]):
        for i in range(metric.shape[0]):
            for j in range(metric.shape[0]):
                if np.isnan(metric[[i, j], k]).any() or np.isnan(human[[i, j], k]).any():
                    continue
                dx.append(metric[i, k] - metric[j, k])
                dz.append(human[i, k] - human[j, k])
    dx, dz = np.array(dx), np.array(dz)
    if dx.size < 2 or not dx.any() or not dz.any():
        return math.nan
    return float(stats.pearsonr(dx, dz).statistic)


def row_means(matrix: np.ndarray) -> np.ndarray:
    out = np.full(matrix.shape[0], np.nan)
    for i, row in enumerate(matrix):
        values = row[~np.isnan(row)]
        if values.size:
            out[i] = values.mean()
    return out


def level_corr(x: np.ndarray, z: np.ndarray, level: str, coefficient: str) -> float:
    """The level correlation of two score matrices, one scipy call at a time."""
    if level == "system":
        return scipy_corr(row_means(x), row_means(z), coefficient)
    if level == "input" and coefficient == "tie-calibrated-accuracy":
        # One epsilon shared by every input, not one per input (docs/methods.md sec. 11.2).
        return one_epsilon(x, z, "input")[0]
    if level == "input" and coefficient == "pdp":
        return loop_pdp(x, z)  # pooled over inputs (docs/methods.md sec. 11.4)
    if level == "input":
        per_input = [scipy_corr(x[:, j], z[:, j], coefficient) for j in range(x.shape[1])]
        defined = [r for r in per_input if not math.isnan(r)]
        return float(np.mean(defined)) if defined else math.nan
    return scipy_corr(x.ravel(), z.ravel(), coefficient)


def resample(matrix: np.ndarray, systems: np.ndarray | None, inputs: np.ndarray | None) -> np.ndarray:
    """Algorithm 1's Xs[i, j] = X[S[i], D[j]], axes kept when not resampled."""
    out = matrix
    if systems is not None:
        out = out[systems, :]
    if inputs is not None:
        out = out[:, inputs]
    return out


def bootstrap_distribution(metrics, human, level, coefficient, indices) -> np.ndarray:
    """(k, q) correlations of each metric with the human on every resample."""
    k = indices.n_resamples
    out = np.full((k, len(metrics)), np.nan)
    for s in range(k):
        sys_s = None if indices.systems is None else indices.systems[s]
        mx = None if indices.metric_inputs is None else indices.metric_inputs[s]
        mz = None if indices.human_inputs is None else indices.human_inputs[s]
        zs = resample(human, sys_s, mz)
        for q, x in enumerate(metrics):
            out[s, q] = level_corr(resample(x, sys_s, mx), zs, level, coefficient)
    return out


def percentile_interval(values: np.ndarray, confidence_level: float) -> tuple[float, float, int]:
    defined = [v for v in values if not math.isnan(v)]
    if not defined:
        return math.nan, math.nan, 0
    alpha = 1 - confidence_level
    return (float(np.percentile(defined, 100 * alpha / 2)), float(np.percentile(defined, 100 * (1 - alpha / 2))),
            len(defined))


def fisher(r: float, n: int, coefficient: str, confidence_level: float) -> tuple[float, float]:
    """Hand-written Fisher interval (docs/methods.md sec. 2)."""
    b = {"pearson": 3, "spearman": 3, "kendall": 4}[coefficient]
    if math.isnan(r) or n <= b:
        return math.nan, math.nan
    c = {"pearson": 1.0, "spearman": math.sqrt(1 + r * r / 2), "kendall": math.sqrt(0.437)}[coefficient]
    zc = stats.norm.ppf(1 - (1 - confidence_level) / 2)
    zr = math.atanh(r)
    return math.tanh(zr - zc * c / math.sqrt(n - b)), math.tanh(zr + zc * c / math.sqrt(n - b))


def zscore(x: np.ndarray) -> np.ndarray:
    values = x[~np.isnan(x)]
    return (x - values.mean()) / values.std()


def permutation_null(x, y, z, level, coefficient, masks) -> np.ndarray:
    """Algorithm 2: z-score X and Y, swap the masked cells, record delta_s."""
    xz, yz = zscore(x), zscore(y)
    out = np.full(masks.shape[0], np.nan)
    for s, mask in enumerate(masks):
        xs = np.where(mask, yz, xz)
        ys = np.where(mask, xz, yz)
        out[s] = level_corr(xs, z, level, coefficient) - level_corr(ys, z, level, coefficient)
    return out


def count_pvalue(values, threshold, alternative, tolerance=1e-12) -> float:
    defined = [v for v in values if not math.isnan(v)]
    if not defined or math.isnan(threshold):
        return math.nan
    if alternative == "two-sided":
        hits = sum(abs(v) >= abs(threshold) - tolerance for v in defined)
    else:
        hits = sum(v >= threshold - tolerance for v in defined)
    return (1 + hits) / (1 + len(defined))


def williams(r13: float, r23: float, r12: float, n: int, alternative: str = "greater") -> tuple[float, float]:
    """Williams' t as written in docs/methods.md sec. 3."""
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    t = (r13 - r23) * math.sqrt((n - 1) * (1 + r12)) / math.sqrt(
        2 * k * (n - 1) / (n - 3) + (r23 + r13) ** 2 / 4 * (1 - r12) ** 3
    )
    if alternative == "two-sided":
        return t, 2 * stats.t.sf(abs(t), n - 3)
    return t, stats.t.sf(t, n - 3)


def holm(p):
    """Holm by the textbook loop."""
    p = list(p)
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def table_cell_nulls(data, names, full, *, alternative, n_resamples, rng):
    """``(i, j, values, threshold)`` for every ordered cell of a global-level PERM-BOTH Kendall table: the full
    run's null of the pair from :func:`compare_metrics` with the table's seed (|.| when two-sided), for the
    stopping rules' hand-applied oracles (docs/methods.md sec. 16.2)."""
    from metaeval_core.stats.significance import compare_metrics

    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                continue
            null = compare_metrics(data[a], data[b], data["h"], level="global", coefficient="kendall",
                                   method="perm-both", n_resamples=n_resamples, rng=rng,
                                   return_distribution=True).null_distribution
            values = np.abs(null) if alternative == "two-sided" else null
            threshold = abs(full.delta[i, j]) if alternative == "two-sided" else full.delta[i, j]
            yield i, j, values, threshold
