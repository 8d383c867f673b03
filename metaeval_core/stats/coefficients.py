"""Correlation coefficients, vectorised over leading batch axes, NaN-aware.

Every function takes ``x`` and ``z`` of broadcastable shape ``(..., n)`` and
returns the coefficient over the last axis for every leading index. Missing
values (NaN) are dropped pairwise: a point counts only when both ``x`` and ``z``
have it. A coefficient on fewer than 2 points or on a constant vector is
undefined and comes back as NaN, never as an exception and never as 0.

References: docs/methods.md sec. 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Literal, get_args

import numpy as np
from scipy import stats

from metaeval_core._checks import check_choice

Coefficient = Literal[
    "pearson", "spearman", "kendall", "pairwise-accuracy", "tie-calibrated-accuracy", "soft-pairwise-accuracy", "pdp"
]
COEFFICIENTS: tuple[str, ...] = get_args(Coefficient)
# Statistics of whole score matrices defined at the system level only (docs/methods.md sec. 11.3):
# they need every system's segment scores, not one vector of points per slice.
SYSTEM_ONLY_COEFFICIENTS: tuple[str, ...] = ("soft-pairwise-accuracy",)
# Coefficients of two vectors of points, valid at every level and in every vector-based analysis.
POINT_COEFFICIENTS: tuple[str, ...] = tuple(c for c in COEFFICIENTS if c not in SYSTEM_ONLY_COEFFICIENTS)
# Coefficients that are correlations in [-1, 1] with a Fisher transform and Williams'
# test; the pairwise accuracies lie in [0, 1] and only support resampling methods.
CORRELATIONS: tuple[str, ...] = ("pearson", "spearman", "kendall")
# Each coefficient's range of possible values (mt-metrics-eval's TaskResults.range: correlations [-1, 1],
# accuracies [0, 1]); WMT's average rescales every task to [0, 1] by it (docs/methods.md sec. 13.3).
COEFFICIENT_RANGES: dict[str, tuple[float, float]] = {
    c: ((-1.0, 1.0) if c in ("pearson", "spearman", "kendall", "pdp") else (0.0, 1.0)) for c in get_args(Coefficient)
}
# Pairwise Difference Pearson (DiIanni & Deutsch, EMNLP 2025): Pearson's r between the metric's and the humans'
# score differences of every pair of systems on the same input, pooled over the inputs (mt-metrics-eval
# ``Correlation.Pearson(average_by='item', pdp=True)``). Over one vector of points (the system level, the global
# level) the differences of all pairs give Pearson's r itself; at the input level it is one pooled value, not a
# mean of per-input values (docs/methods.md sec. 11.4).
PDP = "pdp"

# Pairs materialised at once by the O(n^2) Kendall kernel (int8 signs and a bool mask per pair); bounds its memory.
_KENDALL_PAIR_BUDGET = 8_000_000
# Beyond this many points per slice, scipy's O(n log n) Kendall is used per slice: at 200 points the pair
# kernel already costs ~3x scipy's per slice, at 2,000 ~250x (benchmarks/bench_hostile.py, chance cases).
_KENDALL_PAIRWISE_MAX_N = 150
# Pairs materialised at once by the pairwise-accuracy kernel (float differences, a sort and its gains: ~60 bytes
# per pair), so a chunk stays near 100 MB.
_ACCURACY_PAIR_BUDGET = 2_000_000
# Tie calibration searches every pair's |dx| as a threshold: one slice of n points holds n(n-1)/2 pairs at
# once. 3,000 points (4.5M pairs, ~300 MB) is the largest slice accepted.
TIE_CALIBRATED_MAX_POINTS = 3_000


def pair_kernel_fits(n_points: int) -> bool:
    """Whether Kendall's tau-b on ``n_points`` per slice uses the O(n^2) pair kernel (else scipy per slice).

    Resampling fast paths that hold (pairs x resamples) sign arrays follow the same rule, so their memory is
    bounded by ``_KENDALL_PAIRWISE_MAX_N`` (~11,000 pairs) times their batch.
    """
    return n_points <= _KENDALL_PAIRWISE_MAX_N


def _prepare(x: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    x, z = np.broadcast_arrays(x, z)
    valid = ~(np.isnan(x) | np.isnan(z))
    return x, z, valid


def _is_constant(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    # Exact test on the valid values: a float mean of a constant vector need not
    # equal the constant, so centred values cannot be trusted to be exactly 0.
    high = np.where(valid, values, -np.inf).max(axis=-1, initial=-np.inf)
    low = np.where(valid, values, np.inf).min(axis=-1, initial=np.inf)
    return ~(high > low)


def pearson(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Pearson's r over the last axis, pairwise-complete.

    References: docs/methods.md sec. 1.
    """
    x, z, valid = _prepare(x, z)
    return _pearson_masked(x, z, valid)


def _pearson_masked(x: np.ndarray, z: np.ndarray, valid: np.ndarray) -> np.ndarray:
    n = valid.sum(axis=-1)
    safe_n = np.maximum(n, 1)
    # r is scale-invariant; rescaling by the largest magnitude keeps squares of tiny
    # (even subnormal) or huge values from underflowing or overflowing.
    x0 = _rescaled(np.where(valid, x, 0.0))
    z0 = _rescaled(np.where(valid, z, 0.0))
    dx = np.where(valid, x0 - (x0.sum(axis=-1) / safe_n)[..., None], 0.0)
    dz = np.where(valid, z0 - (z0.sum(axis=-1) / safe_n)[..., None], 0.0)
    sxx = np.einsum("...i,...i->...", dx, dx)
    szz = np.einsum("...i,...i->...", dz, dz)
    sxz = np.einsum("...i,...i->...", dx, dz)
    undefined = (n < 2) | _is_constant(x, valid) | _is_constant(z, valid)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxz / np.sqrt(sxx * szz)
    r = np.clip(r, -1.0, 1.0)
    return np.where(undefined, np.nan, r)


def _rescaled(values: np.ndarray) -> np.ndarray:
    scale = np.abs(values).max(axis=-1, keepdims=True, initial=0.0)
    return values / np.where(scale > 0, scale, 1.0)


def average_ranks(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank) over the last axis; NaN where not valid."""
    masked = np.where(valid, x, np.nan)
    return stats.rankdata(masked, axis=-1, nan_policy="omit")


def spearman(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Spearman's rho: Pearson's r on average ranks of the pairwise-complete points.

    References: docs/methods.md sec. 1.
    """
    x, z, valid = _prepare(x, z)
    if x.size == 0:
        return np.full(x.shape[:-1], np.nan)
    return _pearson_masked(average_ranks(x, valid), average_ranks(z, valid), valid)


@dataclass(frozen=True)
class KendallCounts:
    """Pair counts behind Kendall's tau-b.

    ``concordant`` (P), ``discordant`` (Q), ``ties_x`` (T, tied in x only),
    ``ties_z`` (U, tied in z only); pairs tied in both count in none.
    """

    concordant: np.ndarray
    discordant: np.ndarray
    ties_x: np.ndarray
    ties_z: np.ndarray

    @property
    def tau(self) -> np.ndarray:
        return tau_b_from_counts(self.concordant, self.discordant, self.ties_x, self.ties_z)


def tau_b_from_counts(p, q, t, u) -> np.ndarray:
    """``(P - Q) / sqrt((P + Q + T)(P + Q + U))``; NaN when a factor is 0."""
    p, q, t, u = (np.asarray(a, dtype=np.float64) for a in (p, q, t, u))
    denominator = (p + q + t) * (p + q + u)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (p - q) / np.sqrt(denominator)
    return np.where(denominator > 0, np.clip(tau, -1.0, 1.0), np.nan)


def pair_signs(values: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``sign(values[..., first] - values[..., second])`` as int8 (NaN compares as 0)."""
    a = values[..., first]
    b = values[..., second]
    return (a > b).astype(np.int8) - (a < b).astype(np.int8)


def kendall_counts_from_signs(sx: np.ndarray, sz: np.ndarray) -> KendallCounts:
    """P, Q, T, U from pairwise sign arrays (0 = tie or excluded pair) over the last axis."""
    product = sx.astype(np.int16) * sz
    nx = sx != 0
    nz = sz != 0
    return KendallCounts(
        concordant=(product > 0).sum(axis=-1),
        discordant=(product < 0).sum(axis=-1),
        ties_x=(~nx & nz).sum(axis=-1),
        ties_z=(nx & ~nz).sum(axis=-1),
    )


def kendall(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Kendall's tau-b over the last axis, pairwise-complete; equals ``scipy.stats.kendalltau``.

    Uses an O(n^2) pair kernel vectorised over the batch axes (chunked to bound
    memory), and scipy's O(n log n) routine per slice when ``n`` is large.

    References: docs/methods.md sec. 1.
    """
    x, z, valid = _prepare(x, z)
    batch_shape = x.shape[:-1]
    n = x.shape[-1]
    if n < 2 or x.size == 0:
        return np.full(batch_shape, np.nan)
    x2 = x.reshape(-1, n)
    z2 = z.reshape(-1, n)
    v2 = valid.reshape(-1, n)
    out = np.full(x2.shape[0], np.nan)
    if not pair_kernel_fits(n):
        for k in range(x2.shape[0]):
            xs, zs = x2[k, v2[k]], z2[k, v2[k]]
            if xs.size >= 2:
                out[k] = stats.kendalltau(xs, zs).statistic
        return out.reshape(batch_shape)
    first, second = np.triu_indices(n, 1)
    # Excluded points get a value that makes every pair involving them a tie in
    # x *and* z, so they count in none of P, Q, T, U.
    xf = np.where(v2, x2, 0.0)
    zf = np.where(v2, z2, 0.0)
    step = max(1, _KENDALL_PAIR_BUDGET // max(first.size, 1))
    for start in range(0, x2.shape[0], step):
        sl = slice(start, start + step)
        # The pair mask per chunk: for every slice at once it is slices x n^2/2 bytes (GBs for many slices).
        pair_valid = v2[sl, first] & v2[sl, second]
        sx = pair_signs(xf[sl], first, second) * pair_valid
        sz = pair_signs(zf[sl], first, second) * pair_valid
        out[sl] = kendall_counts_from_signs(sx, sz).tau
    return out.reshape(batch_shape)


def kendall_from_signs(sx: np.ndarray, sz: np.ndarray) -> np.ndarray:
    """Kendall's tau-b from pairwise sign arrays over the last axis (fast path for resampling)."""
    # Integer sums of the sign products (exact, as the float64 sums were; ~3x faster than converting int8 signs).
    numerator = np.multiply(sx, sz).sum(axis=-1, dtype=np.int64).astype(np.float64)
    nx = np.count_nonzero(sx, axis=-1).astype(np.float64)
    nz = np.count_nonzero(sz, axis=-1).astype(np.float64)
    denominator = nx * nz
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = numerator / np.sqrt(denominator)
    return np.where(denominator > 0, np.clip(tau, -1.0, 1.0), np.nan)






# -- pairwise accuracy (Deutsch, Foster & Freitag, 2023, "Ties Matter") ----------
@dataclass(frozen=True)
class AccuracyResult:
    """Pairwise accuracy per slice, and the tie threshold epsilon it used (0 for plain accuracy)."""

    accuracy: np.ndarray
    epsilon: np.ndarray
    n_pairs: np.ndarray


def _pair_differences(x: np.ndarray, z: np.ndarray):
    x, z, valid = _prepare(x, z)
    batch_shape = x.shape[:-1]
    n = x.shape[-1]
    if n > TIE_CALIBRATED_MAX_POINTS:
        raise ValueError(
            f"pairwise accuracy with tie calibration compares all {n * (n - 1) // 2:,} pairs of {n:,} points at "
            f"once (at most {TIE_CALIBRATED_MAX_POINTS:,} points); use the input level, plain pairwise-accuracy "
            "or Kendall, or fewer systems"
        )
    first, second = np.triu_indices(n, 1)
    x2 = np.where(valid, x, 0.0).reshape(-1, n)
    z2 = np.where(valid, z, 0.0).reshape(-1, n)
    v2 = valid.reshape(-1, n)
    return batch_shape, x2, z2, first, second, v2


# Beyond this many points per slice, plain pairwise accuracy is computed in
# O(n log n) from scipy's tau-b and tie counts instead of enumerating pairs.
_ACCURACY_PAIRWISE_MAX_N = 300


def pairwise_accuracy(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Pairwise accuracy with ties: the share of pairs that x and z order the same way.

    A pair agrees when both differences have the same sign, or when both are tied
    (``acc_eq`` of Deutsch et al., 2023): ``(P + T_both) / (P + Q + T + U + T_both)``.
    Without ties it equals ``(1 + tau) / 2``. Undefined (NaN) with no valid pair.

    References: docs/methods.md sec. 11.1; Deutsch, Foster & Freitag (2023) sec. 3.
    """
    x, z, valid = _prepare(x, z)
    if x.shape[-1] <= _ACCURACY_PAIRWISE_MAX_N:
        return tie_calibrated_accuracy(x, z, calibrate=False).accuracy
    batch_shape = x.shape[:-1]
    n = x.shape[-1]
    x2, z2, v2 = x.reshape(-1, n), z.reshape(-1, n), valid.reshape(-1, n)
    out = np.array([_accuracy_from_tau(x2[k, v2[k]], z2[k, v2[k]]) for k in range(x2.shape[0])])
    return out.reshape(batch_shape)


def _tied_pairs(*columns: np.ndarray) -> int:
    """Pairs of points equal in every column: runs of equal rows after one lexicographic sort.

    (Faster than ``np.unique(..., axis=0)``, which compares rows as raw bytes and so also told -0.0 from 0.0.)
    """
    n = columns[0].size
    if n < 2:
        return 0
    order = np.lexsort(columns[::-1])
    same = np.ones(n - 1, dtype=bool)
    for column in columns:
        ordered = column[order]
        same &= ordered[1:] == ordered[:-1]
    counts = np.bincount(np.concatenate(([0], np.cumsum(~same))))
    return int((counts * (counts - 1) // 2).sum())


def _accuracy_from_tau(x: np.ndarray, z: np.ndarray) -> float:
    # P + Q = n0 - n1 - n2 + n3 and P - Q = tau_b * sqrt((n0 - n1)(n0 - n2)), with
    # n1, n2 the pairs tied in x, in z, and n3 those tied in both.
    n = x.size
    n0 = n * (n - 1) // 2
    if n0 == 0:
        return math.nan
    n1, n2, n3 = _tied_pairs(x), _tied_pairs(z), _tied_pairs(x, z)
    ordered = n0 - n1 - n2 + n3
    if ordered == 0:
        return n3 / n0
    tau = stats.kendalltau(x, z).statistic
    difference = tau * math.sqrt((n0 - n1) * (n0 - n2))
    concordant = (ordered + difference) / 2.0
    return float((concordant + n3) / n0)


def tie_calibrated_accuracy(x: np.ndarray, z: np.ndarray, *, calibrate: bool = True) -> AccuracyResult:
    """Tie-calibrated pairwise accuracy: metric differences ``|dx| <= epsilon`` count as ties.

    ``epsilon`` is chosen per slice to maximise the accuracy, over 0 and every
    observed ``|dx|`` (the smallest maximiser is reported). Because epsilon is tuned
    on the same pairs it is scored on, the value is optimistic; it answers "how
    well could this metric rank with the best tie threshold", not "how well does
    it rank with a fixed one".

    Applied to a level's points (system means, or all cells) this is the level's value. The input level shares
    one epsilon across inputs (``metaeval_core.stats.tiecal.input_tie_calibrated``); this function on each
    input's column would give the per-item epsilons metaeval does not report.

    References: docs/methods.md sec. 11.2; Deutsch, Foster & Freitag (2023) sec. 4.
    """
    batch_shape, x2, z2, first, second, v2 = _pair_differences(x, z)
    slices = x2.shape[0]
    accuracy = np.full(slices, np.nan)
    epsilon = np.zeros(slices)
    # Valid pairs of each slice: k valid points give k(k-1)/2 pairs.
    k = v2.sum(axis=1)
    n_pairs = k * (k - 1) // 2
    if first.size == 0 or slices == 0:
        return AccuracyResult(accuracy.reshape(batch_shape), epsilon.reshape(batch_shape),
                              n_pairs.reshape(batch_shape))
    step = max(1, _ACCURACY_PAIR_BUDGET // first.size)
    for start in range(0, slices, step):
        sl = slice(start, start + step)
        dx = x2[sl][:, first] - x2[sl][:, second]
        dz = z2[sl][:, first] - z2[sl][:, second]
        valid = v2[sl, first] & v2[sl, second]  # per chunk: for all slices at once it can take GBs
        count = valid.sum(axis=1)
        # What each pair scores if the metric calls it a tie, and if it does not.
        if_tie = (dz == 0) & valid
        if_ordered = (np.sign(dx) == np.sign(dz)) & (dx != 0) & valid
        if_ordered |= (dx == 0) & (dz == 0) & valid
        with np.errstate(invalid="ignore", divide="ignore"):
            base = if_ordered.sum(axis=1) / count
        if not calibrate:
            accuracy[sl] = np.where(count > 0, base, np.nan)
            continue
        adx = np.where(valid, np.abs(dx), np.inf)
        order = np.argsort(adx, axis=1, kind="stable")
        sorted_adx = np.take_along_axis(adx, order, axis=1)
        gain = np.take_along_axis(if_tie.astype(np.int64) - if_ordered.astype(np.int64), order, axis=1)
        cumulative = np.cumsum(gain, axis=1)
        # Only the last pair of a run of equal |dx| is a possible threshold.
        last_of_run = np.ones_like(sorted_adx, dtype=bool)
        last_of_run[:, :-1] = sorted_adx[:, 1:] != sorted_adx[:, :-1]
        candidate = np.where(last_of_run & np.isfinite(sorted_adx), cumulative, np.iinfo(np.int64).min)
        best = candidate.max(axis=1)
        best_at = candidate.argmax(axis=1)  # first maximiser = smallest epsilon
        use = best > 0
        rows = np.arange(dx.shape[0])
        with np.errstate(invalid="ignore", divide="ignore"):
            accuracy[sl] = np.where(count > 0, base + np.where(use, best, 0) / count, np.nan)
        epsilon[sl] = np.where(use, sorted_adx[rows, best_at], 0.0)
    return AccuracyResult(accuracy.reshape(batch_shape), epsilon.reshape(batch_shape), n_pairs.reshape(batch_shape))


def _tie_calibrated(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    return tie_calibrated_accuracy(x, z).accuracy


def _pdp_points(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """PDP over one vector of points: the differences of all ordered pairs (i, j) have mean 0 and
    ``sum (x_i - x_j)(z_i - z_j) = 2 n sum (x_i - mean x)(z_i - mean z)``, so their Pearson's r is Pearson's r of the
    points (pairwise-complete, as mt-metrics-eval drops a pair whose human difference is missing)."""
    return pearson(x, z)


def pdp_input(metric: np.ndarray, human: np.ndarray, *, system_weights: np.ndarray | None = None,
              input_weights: np.ndarray | None = None) -> np.ndarray:
    """Pairwise Difference Pearson at the input level, over score matrices of shape ``(..., N, M)``.

    Within each input ``k`` the differences of every ordered pair of systems that both have a score are formed
    for the metric and the humans, and one Pearson's r is taken over all of them pooled over the inputs.
    Their mean is 0, so r is ``sum_k P_k(x, z) / sqrt(sum_k P_k(x, x) sum_k P_k(z, z))`` with
    ``P_k(x, z) = 2 (n_k S_k(xz) - S_k(x) S_k(z))`` over the input's valid systems: O(N M), no pair is formed.
    ``system_weights`` (..., N) and ``input_weights`` (..., M) are resampling multiplicities (a system drawn twice
    is two systems whose difference is 0). Undefined (NaN) when either side's differences are all 0.

    References
    ----------
    DiIanni & Deutsch (EMNLP 2025); google-research/mt-metrics-eval ``stats.AverageCorrelation`` (``pdp=True``);
    docs/methods.md sec. 11.4.
    """
    x = np.asarray(metric, dtype=np.float64)
    z = np.asarray(human, dtype=np.float64)
    x, z = np.broadcast_arrays(x, z)
    valid = ~(np.isnan(x) | np.isnan(z))
    # Each side rescaled by its largest magnitude (r is scale-invariant): squares neither under- nor overflow.
    x0 = _rescaled(np.where(valid, x, 0.0).reshape(*x.shape[:-2], -1)).reshape(x.shape)
    z0 = _rescaled(np.where(valid, z, 0.0).reshape(*z.shape[:-2], -1)).reshape(z.shape)
    c = valid.astype(np.float64)
    if system_weights is not None:
        c = c * np.asarray(system_weights, dtype=np.float64)[..., :, None]
    # Sums over the systems of each input (einsum: the same reduction order whatever the batch).
    n = c.sum(axis=-2)
    sx = np.einsum("...ij,...ij->...j", c, x0)
    sz = np.einsum("...ij,...ij->...j", c, z0)
    pxz = n * np.einsum("...ij,...ij,...ij->...j", c, x0, z0) - sx * sz
    pxx = n * np.einsum("...ij,...ij,...ij->...j", c, x0, x0) - sx * sx
    pzz = n * np.einsum("...ij,...ij,...ij->...j", c, z0, z0) - sz * sz
    if input_weights is not None:
        w = np.asarray(input_weights, dtype=np.float64)
        pxz, pxx, pzz = pxz * w, pxx * w, pzz * w
    sxz, sxx, szz = pxz.sum(axis=-1), np.maximum(pxx, 0.0).sum(axis=-1), np.maximum(pzz, 0.0).sum(axis=-1)
    # All differences 0 on one side (each input constant): undefined, as Pearson's r of a constant vector. The
    # within-input spread is tested exactly, not through the float sums.
    spread_x = _input_spread(x, valid, c)
    spread_z = _input_spread(z, valid, c)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxz / np.sqrt(sxx * szz)
    r = np.clip(r, -1.0, 1.0)
    return np.where(spread_x & spread_z & (sxx > 0) & (szz > 0), r, np.nan)


def _input_spread(values: np.ndarray, valid: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Whether some input has two different valid values among its weighted systems (over the leading axes)."""
    used = valid & (weight > 0)
    high = np.where(used, values, -np.inf).max(axis=-2, initial=-np.inf)
    low = np.where(used, values, np.inf).min(axis=-2, initial=np.inf)
    return (high > low).any(axis=-1)


_FUNCTIONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "pearson": pearson,
    "spearman": spearman,
    "kendall": kendall,
    "pairwise-accuracy": pairwise_accuracy,
    "tie-calibrated-accuracy": _tie_calibrated,
    "pdp": _pdp_points,
}


def coefficient_function(coefficient: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The vectorised function for a coefficient name (a coefficient of two vectors of points)."""
    validate_coefficient(coefficient)
    require_point_coefficient(coefficient, "this computation")
    return _FUNCTIONS[coefficient]


def require_point_coefficient(coefficient: str, what: str) -> None:
    """Refuse, with the reason, a matrix statistic (SPA) where ``what`` needs vectors of points."""
    if coefficient in SYSTEM_ONLY_COEFFICIENTS:
        raise ValueError(
            f"coefficient {coefficient!r} is a system-level statistic of the metric's and the humans' segment "
            f"score matrices (docs/methods.md sec. 11.3), not a coefficient of two vectors of points; {what} "
            f"supports {', '.join(POINT_COEFFICIENTS)}"
        )


def require_level_for(coefficient: str, level: str) -> None:
    """Refuse a system-only coefficient at another level, naming the level."""
    if coefficient in SYSTEM_ONLY_COEFFICIENTS and level != "system":
        raise ValueError(
            f"coefficient {coefficient!r} is defined at the system level only (docs/methods.md sec. 11.3); "
            f"got level={level!r}"
        )


def validate_coefficient(coefficient: object) -> None:
    check_choice(coefficient, "coefficient", COEFFICIENTS)


def require_correlation(coefficient: str, what: str) -> None:
    """Raise a clear error when ``what`` (Fisher's interval, Williams' test) needs a correlation."""
    validate_coefficient(coefficient)
    if coefficient not in CORRELATIONS:
        raise ValueError(
            f"{what} needs a correlation coefficient ({', '.join(CORRELATIONS)}); {coefficient!r} is a pairwise "
            "accuracy, which has no Fisher transform: use a bootstrap or permutation method"
        )


# Tie calibration searches every pair's |dx| as a threshold: O(n^2 log n) per slice, ~0.7 us per pair of
# system means or cells here. Fine for one value, too slow to repeat per resample on more than 400 points
# (79,800 pairs x 1,000 resamples ~ 1 min).
TIE_CALIBRATED_RESAMPLING_MAX_POINTS = 400
# At the input level one sort of all (system pair, input) entries per resample, ~50 ns per entry here: this
# many entries over all resamples is ~1 min (2,000 systems x 2 inputs give 4M entries per resample).
TIE_CALIBRATED_RESAMPLING_MAX_ENTRIES = 1_000_000_000


def check_resampling_size(coefficient: str, level: str, shape: int | tuple[int, int],
                          n_resamples: int | None = None, *, unit: str = "resample") -> None:
    """Refuse, with the reason and what to change, resampling the tie-calibrated accuracy where it is too slow.

    ``shape`` is the human matrix's (systems, inputs) (an int: its number of cells, checked at the global level
    only). System level: more than 400 systems; global: more than 400 cells; input level: more (system pair,
    input) entries times ``n_resamples`` than ``TIE_CALIBRATED_RESAMPLING_MAX_ENTRIES``. ``unit`` names what
    is repeated in the message (a leave-one-out set is one).
    """
    if coefficient != "tie-calibrated-accuracy":
        return
    if isinstance(shape, (int, np.integer)):
        n_systems, n_inputs, n_cells = None, None, int(shape)
    else:
        n_systems, n_inputs = int(shape[0]), int(shape[1])
        n_cells = n_systems * n_inputs
    limit = TIE_CALIBRATED_RESAMPLING_MAX_POINTS
    again = "resample" if unit == "resample" else "repeat"
    if level == "global" and n_cells > limit:
        raise ValueError(
            f"tie-calibrated-accuracy at the global level searches a threshold over all pairs of the {n_cells} "
            f"cells on every {unit} (more than {limit} cells is too slow to {again}); use the system or input "
            "level, or pairwise-accuracy"
        )
    if n_systems is None:
        return
    if level == "system" and n_systems > limit:
        raise ValueError(
            f"tie-calibrated-accuracy at the system level searches a threshold over all pairs of the {n_systems:,} "
            f"systems on every {unit} (more than {limit} systems is too slow to {again}); use pairwise-accuracy "
            "or Kendall, or a subset of the systems"
        )
    entries = n_systems * (n_systems - 1) // 2 * n_inputs * (n_resamples or 0)
    if level == "input" and entries > TIE_CALIBRATED_RESAMPLING_MAX_ENTRIES:
        raise ValueError(
            f"tie-calibrated-accuracy at the input level sorts {n_systems * (n_systems - 1) // 2 * n_inputs:,} "
            f"(system pair, input) entries on each of {n_resamples:,} {unit}s ({entries:,} in all; more than "
            f"{TIE_CALIBRATED_RESAMPLING_MAX_ENTRIES:,} takes minutes); use fewer {unit}s, pairwise-accuracy or "
            "Kendall, or a subset of the systems"
        )
