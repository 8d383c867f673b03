"""Is metric X closer to the humans than metric Y? One comparison: permutation, paired bootstrap or Williams.

References: docs/methods.md sec. 3; Deutsch, Dror & Roth (TACL 2021) sec. 4; Williams (1959).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from metaeval_core._checks import as_generator, check_bool, check_choice, check_int
from metaeval_core.stats.coefficients import (
    Coefficient,
    check_resampling_size,
    coefficient_function,
    require_correlation,
    require_level_for,
    validate_coefficient,
)
from metaeval_core.stats.correlation import Level, correlate_matrices, system_means, validate_level
from metaeval_core.stats.resampling import _as_matrix, _bootstrap_correlations, _draw_bootstrap_indices
from metaeval_core.stats.significance._common import (
    ALTERNATIVES,
    PERMUTATION_METHODS,
    TEST_METHODS,
    Alternative,
    ComparisonResult,
    TestMethod,
    WMT_METHODS,
    _count_pvalue,
    method_problem,
)
from metaeval_core.stats.significance.permutation import _permutation_null
from metaeval_core.stats.significance.wmt import wmt_pair_nulls

def _williams(x, y, z, *, level, coefficient, alternative) -> tuple[float, float]:
    """Williams' t and p on the points where X, Y and Z all exist."""
    if level == "system":
        a, b, c = system_means(x), system_means(y), system_means(z)
    else:
        a, b, c = x.ravel(), y.ravel(), z.ravel()
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(c))
    a, b, c = a[keep], b[keep], c[keep]
    n = int(keep.sum())
    if n <= 3:
        return math.nan, math.nan
    corr = coefficient_function(coefficient)
    r13, r23, r12 = float(corr(a, c)), float(corr(b, c)), float(corr(a, b))
    if not all(np.isfinite([r13, r23, r12])):
        return math.nan, math.nan
    k = 1.0 - r12**2 - r13**2 - r23**2 + 2.0 * r12 * r13 * r23
    denominator = 2.0 * k * (n - 1) / (n - 3) + ((r23 + r13) ** 2 / 4.0) * (1.0 - r12) ** 3
    if not denominator > 0:
        return math.nan, math.nan
    t = (r13 - r23) * math.sqrt((n - 1) * (1.0 + r12)) / math.sqrt(denominator)
    if alternative == "two-sided":
        p = min(1.0, 2.0 * stats.t.sf(abs(t), n - 3))
    else:
        p = float(stats.t.sf(t, n - 3))
    # A p-value is never reported as exactly 0 (it would underflow only for enormous t).
    return t, max(p, np.finfo(float).tiny)


def _compare_core(x, y, z, *, level, coefficient, method, alternative, n_resamples, rng, batch):
    """(estimate_x, estimate_y, delta, pvalue, n_defined, distribution, statistic) for validated arrays."""
    est_x = float(correlate_matrices(x, z, level=level, coefficient=coefficient).estimate)
    est_y = float(correlate_matrices(y, z, level=level, coefficient=coefficient).estimate)
    delta = est_x - est_y
    if method == "williams":
        t, p = _williams(x, y, z, level=level, coefficient=coefficient, alternative=alternative)
        return est_x, est_y, delta, p, 0, None, t
    if method in WMT_METHODS:
        nulls, thresholds = wmt_pair_nulls([x, y], z, coefficient=coefficient, n_resamples=n_resamples, rng=rng,
                                           batch=batch)
        # The threshold is delta on the systems the test keeps (all three scored): the table's delta
        # whenever X and Y score the same systems.
        p, n_defined = _count_pvalue(nulls[0], thresholds[0], alternative)
        return est_x, est_y, delta, p, n_defined, nulls[0], thresholds[0]
    if method in PERMUTATION_METHODS:
        null = _permutation_null(x, y, z, level=level, coefficient=coefficient, method=method, rng=rng,
                                 n_resamples=n_resamples, batch=batch)
        # The observed delta of the standardised data (equal to ``delta``: correlations are
        # invariant to each metric's affine rescaling) is the threshold.
        p, n_defined = _count_pvalue(null, delta, alternative)
        return est_x, est_y, delta, p, n_defined, null, delta
    separate = x.shape[1] != z.shape[1]
    indices = _draw_bootstrap_indices(rng, method, n_resamples, x.shape[0], x.shape[1],
                                      z.shape[1] if separate else None)
    values = _bootstrap_correlations([x, y], z, level=level, coefficient=coefficient, indices=indices, batch=batch)
    centred = (values[:, 0] - values[:, 1]) - delta
    p, n_defined = _count_pvalue(centred, delta, alternative)
    return est_x, est_y, delta, p, n_defined, centred, delta


def _compare_metrics_iv(x, y, human, level, coefficient, method, alternative, n_resamples, rng, batch,
                        return_distribution, names):
    x = _as_matrix(x, "x")
    y = _as_matrix(y, "y")
    human = _as_matrix(human, "human")
    validate_level(level)
    validate_coefficient(coefficient)
    require_level_for(coefficient, level)
    method = check_choice(method, "method", TEST_METHODS)
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    n_resamples = check_int(n_resamples, "n_resamples")
    batch = check_int(batch, "batch", allow_none=True)
    rng = as_generator(rng)
    check_bool(return_distribution, "return_distribution")
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape; got {x.shape} and {y.shape}")
    if x.shape[0] != human.shape[0]:
        raise ValueError(
            f"x, y and human must have the same number of systems; got {x.shape[0]} and {human.shape[0]}"
        )
    if x.shape[1] != human.shape[1] and level != "system":
        raise ValueError(
            f"at the {level} level x, y and human must share their inputs; got {x.shape[1]} and {human.shape[1]} "
            "(a wider metric pool applies at the system level only)"
        )
    if x.shape[1] < human.shape[1]:
        raise ValueError(f"x and y must cover at least the human's {human.shape[1]} inputs; got {x.shape[1]}")
    if method == "williams" and level == "input":
        raise ValueError(
            "method 'williams' is defined at the system and global levels only (docs/methods.md sec. 3); got level='input'"
        )
    if method == "williams":
        require_correlation(coefficient, "method 'williams'")
    else:
        check_resampling_size(coefficient, level, human.shape[-2:], n_resamples)
    if method_problem(method, level, coefficient):
        raise ValueError(method_problem(method, level, coefficient))
    if not (isinstance(names, tuple) and len(names) == 2 and all(isinstance(v, str) for v in names)):
        raise TypeError(f"names must be a tuple of two strings; got {names!r}")
    return x, y, human, method, alternative, n_resamples, rng, batch


def compare_metrics(
    x: np.ndarray,
    y: np.ndarray,
    human: np.ndarray,
    *,
    level: Level,
    coefficient: Coefficient,
    method: TestMethod,
    alternative: Alternative = "greater",
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    return_distribution: bool = False,
    names: tuple[str, str] = ("x", "y"),
) -> ComparisonResult:
    """Test ``H0: rho(X, Z) - rho(Y, Z) <= 0`` (or ``= 0`` two-sided) for two metrics.

    Parameters
    ----------
    x, y : array_like, shape (N, M)
        The two metrics' scores, systems x inputs, NaN where missing. At the system level
        they may hold a wider input pool than ``human`` (pool ``all``); the paired bootstrap
        then resamples their inputs jointly and the human's separately.
    human : array_like, shape (N, M)
    level : {'system', 'input', 'global'}
    coefficient : {'pearson', 'spearman', 'kendall'}
    method : {'perm-both', 'perm-systems', 'perm-inputs', 'boot-both', 'boot-systems', 'boot-inputs', 'williams', \
'wmt-perm-sys'}
        Permutation test (TACL Algorithm 2; PERM-BOTH swaps each cell independently),
        paired bootstrap, Williams' test (system and global levels; approximate for
        Spearman and Kendall, which it labels), or WMT's system-level test (``'wmt-perm-sys'``:
        mt-metrics-eval's PermutationSigDiff, which z-scores the system scores and swaps them
        system by system; system level only, on the systems all three measures score;
        docs/methods.md sec. 3.6).
    alternative : {'greater', 'two-sided'}, default 'greater'
        ``'two-sided'`` compares ``|delta_s|`` with ``|delta|`` (permutation),
        ``|delta_s - delta|`` with ``|delta|`` (bootstrap), or doubles Williams' tail.
    n_resamples : int, default 1000
    rng : numpy.random.Generator, int or None
    batch : int, optional
        Resamples evaluated at once; results do not depend on it.
    return_distribution : bool, default False
    names : (str, str), default ('x', 'y')
        Labels of the two metrics in the result.

    Returns
    -------
    ComparisonResult

    Notes
    -----
    Permutation: ``p = (1 + #{delta_s >= delta}) / (1 + k)``; paired bootstrap:
    ``p = (1 + #{delta_s - delta >= delta}) / (1 + k)``; ``k`` is the number of defined
    resamples. Williams uses ``r13 = r(X,Z)``, ``r23 = r(Y,Z)``, ``r12 = r(X,Y)`` on the
    ``n`` points (systems or cells) where all three exist and Student's t with ``n - 3``
    degrees of freedom.

    References
    ----------
    docs/methods.md sec. 3; Deutsch, Dror & Roth (TACL 2021) sec. 4; Williams (1959); Graham & Baldwin (2014).
    """
    x, y, human, method, alternative, n_resamples, rng, batch = _compare_metrics_iv(
        x, y, human, level, coefficient, method, alternative, n_resamples, rng, batch, return_distribution, names
    )
    est_x, est_y, delta, p, n_defined, dist, statistic = _compare_core(
        x, y, human, level=level, coefficient=coefficient, method=method, alternative=alternative,
        n_resamples=n_resamples, rng=rng, batch=batch,
    )
    return ComparisonResult(
        x=names[0], y=names[1], estimate_x=est_x, estimate_y=est_y, delta=delta, pvalue=p, method=method,
        alternative=alternative, n_resamples=0 if method == "williams" else n_resamples, n_defined=n_defined,
        null_distribution=dist if return_distribution else None, level=level, coefficient=coefficient,
        statistic=statistic, approximate=method == "williams" and coefficient != "pearson",
    )
