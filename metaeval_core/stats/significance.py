"""Is metric X closer to the humans than metric Y? Permutation, paired-bootstrap and Williams tests.

``H0: rho(X, Z) - rho(Y, Z) <= 0`` against ``H1: > 0`` (or two-sided), with
``delta = r(X, Z) - r(Y, Z)`` at the system, input or global level.

* Permutation (TACL 2021 Algorithm 2): X and Y are z-scored over all their cells,
  then scores are swapped between them: whole system rows (PERM-SYSTEMS), whole
  input columns (PERM-INPUTS) or every cell independently (PERM-BOTH), each with
  probability 1/2. ``p = (1 + #{delta_s >= delta}) / (1 + k)``.
* Paired bootstrap: X, Y and Z resampled with the same indices,
  ``p = (1 + #{delta_s - delta >= delta}) / (1 + k)``.
* Williams' test from the three pairwise correlations (system and global levels).

``k`` counts the *defined* resamples; undefined ones are dropped and reported.
Comparisons use an absolute tolerance of 1e-12 in the direction of the null, so a
resample equal to the observed value up to rounding counts as at least as extreme
(scipy's permutation_test does the same with a relative tolerance).

Speed: the swap masks of PERM-SYSTEMS/INPUTS are drawn up front (k x N, k x M
uniforms < 1/2); PERM-BOTH draws, per resample and in draw order, ``ceil(N M / 64)``
raw 64-bit words whose bits are the cell swaps, so chunking never changes them.
At the system level the means of a swapped matrix are ``mean(X) + mean(B * (Y - X))``
along inputs; at the input level with Kendall the pair counts of every input under
every swap pattern are a quadratic form ``const + B' Q B`` in the swap bits ``B``
(pairs of cells swap in one of four ways), evaluated as one batched matrix product.

References: docs/methods.md sec. 3; Deutsch, Dror & Roth (TACL 2021) sec. 4 and App. B.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable, Iterator, Literal, Mapping, Sequence, get_args

import numpy as np
from scipy import stats

from metaeval_core._checks import as_generator, check_bool, check_callable, check_choice, check_int, check_probability
from metaeval_core.stats.coefficients import (
    Coefficient,
    check_resampling_size,
    coefficient_function,
    require_correlation,
    validate_coefficient,
)
from metaeval_core.stats.correlation import Level, correlate_matrices, correlation_inputs, system_means, validate_level
from metaeval_core.data.dataset import Dataset, Pool, POOLS
from metaeval_core._frames import ToFrame
from metaeval_core.stats.resampling import (
    _as_matrix,
    _auto_batch,
    _bootstrap_correlations,
    _chunks,
    _draw_bootstrap_indices,
    _kendall_from_counts,
    _rows_correlation,
    _safe_divide,
    _weighted_input_mean,
)

TestMethod = Literal["perm-both", "perm-systems", "perm-inputs", "boot-both", "boot-systems", "boot-inputs", "williams"]
TEST_METHODS: tuple[str, ...] = get_args(TestMethod)
PERMUTATION_METHODS: tuple[str, ...] = ("perm-both", "perm-systems", "perm-inputs")
PAIRED_BOOTSTRAP_METHODS: tuple[str, ...] = ("boot-both", "boot-systems", "boot-inputs")
Alternative = Literal["greater", "two-sided"]
ALTERNATIVES: tuple[str, ...] = get_args(Alternative)
Correction = Literal["bonferroni", "holm", "bh", "none"]
CORRECTIONS: tuple[str, ...] = get_args(Correction)
Family = Literal["row", "table", "none"]
FAMILIES: tuple[str, ...] = get_args(Family)

# Resampled deltas within this of the threshold count as reaching it (errs towards H0).
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class ComparisonResult(ToFrame):
    """The outcome of testing whether metric ``x`` correlates better with the humans than ``y``.

    Attributes
    ----------
    x, y : str
        Names of the two metrics.
    estimate_x, estimate_y : float
        ``r(X, Z)`` and ``r(Y, Z)`` at the level (NaN when undefined).
    delta : float
        ``estimate_x - estimate_y``.
    pvalue : float
        Never 0 for resampling tests; NaN when ``delta`` or every resample is undefined.
    method, alternative, level, coefficient : str
    n_resamples : int
        Resamples drawn (0 for Williams).
    n_defined : int
        Resamples whose ``delta_s`` was defined; the p-value's ``k`` (0 for Williams).
    null_distribution : numpy.ndarray or None
        With ``return_distribution=True``: the permutation ``delta_s`` or the bootstrap
        ``delta_s - delta`` in draw order (NaN where undefined).
    statistic : float
        ``delta`` for resampling tests; Williams' ``t`` for ``'williams'``.
    approximate : bool
        True for Williams' test on Spearman or Kendall (it assumes Pearson and normality).
    """

    x: str
    y: str
    estimate_x: float
    estimate_y: float
    delta: float
    pvalue: float
    method: str
    alternative: str
    n_resamples: int
    n_defined: int
    null_distribution: np.ndarray | None = None
    level: str = ""
    coefficient: str = ""
    statistic: float = math.nan
    approximate: bool = False

    def to_dict(self) -> dict:
        def num(v):
            return None if not np.isfinite(v) else float(v)

        return {
            "x": self.x, "y": self.y, "estimate_x": num(self.estimate_x), "estimate_y": num(self.estimate_y),
            "delta": num(self.delta), "pvalue": num(self.pvalue), "method": self.method,
            "alternative": self.alternative, "level": self.level, "coefficient": self.coefficient,
            "n_resamples": self.n_resamples, "n_defined": self.n_defined, "statistic": num(self.statistic),
            "approximate": self.approximate,
        }


# ---------------------------------------------------------------------------
# Swap masks (shared with the oracles)
# ---------------------------------------------------------------------------
def _iter_swap_masks(
    rng: np.random.Generator, method: str, n_resamples: int, n_systems: int, n_inputs: int, batch: int
) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield ``(slice, mask)`` per chunk; ``mask`` is True where X and Y swap.

    Shapes broadcast to (b, N, M): (b, N, 1) for PERM-SYSTEMS, (b, 1, M) for PERM-INPUTS,
    (b, N, M) for PERM-BOTH. The bits of resample ``s`` do not depend on ``batch``.
    """
    if method == "perm-systems":
        rows = rng.random((n_resamples, n_systems)) < 0.5
        for sl in _chunks(n_resamples, batch):
            yield sl, rows[sl, :, None]
    elif method == "perm-inputs":
        cols = rng.random((n_resamples, n_inputs)) < 0.5
        for sl in _chunks(n_resamples, batch):
            yield sl, cols[sl, None, :]
    elif method == "perm-both":
        cells = n_systems * n_inputs
        words = -(-cells // 64)
        for sl in _chunks(n_resamples, batch):
            b = sl.stop - sl.start
            # Full-range uint64 draws are the generator's raw outputs, one per word, in order:
            # a chunk of b resamples consumes exactly b * words outputs. Explicit little-endian
            # byte order makes the bits platform independent.
            raw = rng.integers(0, 2**64, size=(b, words), dtype=np.uint64).astype("<u8", copy=False)
            bits = np.unpackbits(raw.view(np.uint8).reshape(b, words * 8), axis=1, bitorder="little")
            yield sl, bits[:, :cells].reshape(b, n_systems, n_inputs).astype(bool)
    else:  # pragma: no cover - validated by the callers
        raise ValueError(f"not a permutation method: {method!r}")


def _draw_swap_masks(
    rng: np.random.Generator, method: str, n_resamples: int, n_systems: int, n_inputs: int, batch: int | None = None
) -> np.ndarray:
    """All swap masks as one (k, N, M) boolean array (for tests and oracles)."""
    batch = n_resamples if batch is None else batch
    parts = [np.broadcast_to(m, (m.shape[0], n_systems, n_inputs))
             for _, m in _iter_swap_masks(rng, method, n_resamples, n_systems, n_inputs, batch)]
    return np.concatenate(parts, axis=0)


def _zscore_params(x: np.ndarray) -> tuple[float, float]:
    """Mean and population std over all cells, ignoring NaN; std 1 for a constant matrix (only centred)."""
    values = x[~np.isnan(x)]
    if values.size == 0:
        return 0.0, 1.0
    mean = float(values.mean())
    std = float(values.std())
    return mean, (std if std > 0 and np.isfinite(std) else 1.0)


# ---------------------------------------------------------------------------
# Permutation engine
# ---------------------------------------------------------------------------
def _kendall_swap_forms(unswapped: np.ndarray, swapped: np.ndarray, human: np.ndarray):
    """Quadratic forms giving, per input, Kendall's pair counts of a cell-swapped column.

    For input j and system pair (a, a') (a < a'), the swapped column takes cell a from
    ``swapped`` when B_a = 1 (else ``unswapped``), likewise for a'. The pair's contribution
    T_c to each count (c = 2 B_a + B_a') expands to
    ``T_0 + B_a (T_2 - T_0) + B_a' (T_1 - T_0) + B_a B_a' (T_0 - T_1 - T_2 + T_3)``; since
    ``B^2 = B`` the linear terms sit on the diagonal, so the count is ``const_j + B_j' Q_j B_j``.

    Returns ``const`` (3, M) and ``Q`` (M, N, N, 3) for the counts P-Q, P+Q+T, P+Q+U.
    """
    n, m = human.shape
    first, second = np.triu_indices(n, 1)
    vz = ~np.isnan(human)
    with np.errstate(invalid="ignore"):
        sz = np.sign(human[first] - human[second])  # (P, M)
    tables = []
    for c in range(4):
        ba, bb = c >> 1, c & 1
        xa = (swapped if ba else unswapped)[first]
        xb = (swapped if bb else unswapped)[second]
        valid = ~np.isnan(xa) & ~np.isnan(xb) & vz[first] & vz[second]
        with np.errstate(invalid="ignore"):
            sx = np.where(valid, np.sign(xa - xb), 0.0)
        szv = np.where(valid, sz, 0.0)
        tables.append(np.stack([sx * szv, np.abs(sx), np.abs(szv)], axis=1))  # (P, 3, M)
    t0, t1, t2, t3 = tables
    const = t0.sum(axis=0)  # (3, M)
    q = np.zeros((n, n, 3, m))
    np.add.at(q, (first, first), t2 - t0)
    np.add.at(q, (second, second), t1 - t0)
    half = 0.5 * (t0 - t1 - t2 + t3)
    q[first, second] += half
    q[second, first] += half
    return const, q.transpose(3, 0, 1, 2)


class _SystemPermutation:
    """System-level permutation for K metrics sharing one sequence of swap masks.

    Swapped sums are assembled from *raw* partial sums and z-scored afterwards,
    ``sum_j zX = (sum_j X - c mu) / sd``: equal raw sums (integer scores) then give
    bit-identical means, so ties between systems survive as in the raw data. Every
    quantity is computed per metric by the same operations whatever K and the batch
    size, so a pair's result inside a table equals its result alone.
    """

    def __init__(self, matrices: Sequence[np.ndarray], z: np.ndarray, coefficient: str, method: str):
        self.coefficient, self.method = coefficient, method
        raw = np.stack([np.asarray(m, dtype=np.float64) for m in matrices])  # (K, N, M)
        params = [_zscore_params(m) for m in raw]
        self.mu = np.array([p[0] for p in params])[:, None]  # (K, 1)
        self.sd = np.array([p[1] for p in params])[:, None]
        valid = ~np.isnan(raw)
        self.has_nan = not bool(valid.all())
        self.x0 = np.where(valid, raw, 0.0)
        self.valid = valid.astype(np.float64)
        self.sums = self.x0.sum(axis=-1)  # (K, N)
        self.counts = self.valid.sum(axis=-1)
        self.z_means = system_means(z)
        n = raw.shape[1]
        self.first, self.second = np.triu_indices(n, 1)
        if coefficient == "kendall":
            zm = self.z_means
            self.sz = (zm[self.first] > zm[self.second]).astype(np.int8) - (zm[self.first] < zm[self.second])
            self.z_pair_valid = ~(np.isnan(zm[self.first]) | np.isnan(zm[self.second]))

    def moved(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Raw sums and valid counts of the swapped cells of every metric, systems first: (K, N, b)."""
        b = mask.shape[0]
        k, n, m = self.x0.shape
        if self.method == "perm-systems":
            rows = mask[:, :, 0].T.astype(np.float64)  # (N, b)
            return rows[None] * self.sums[:, :, None], rows[None] * self.counts[:, :, None]
        weights = np.broadcast_to(mask, (b, n, m)).astype(np.float64)  # (b, N, M)
        # One einsum per metric with the same operand shapes whatever K: its per-element
        # reduction order depends on neither the batch size nor how many metrics share the masks.
        moved = np.stack([np.einsum("sij,ij->is", weights, self.x0[i]) for i in range(k)])
        if self.has_nan:
            moved_counts = np.stack([np.einsum("sij,ij->is", weights, self.valid[i]) for i in range(k)])
        else:
            moved_counts = np.broadcast_to(weights.sum(axis=-1).T[None], moved.shape)
        return moved, moved_counts

    def deltas(self, moved: tuple[np.ndarray, np.ndarray], a: int, b: int) -> np.ndarray:
        """delta_s for metric a as X and metric b as Y (arrays are systems x resamples)."""
        mv, mc = moved
        kept_x, kept_cx = self.sums[a][:, None] - mv[a], self.counts[a][:, None] - mc[a]
        kept_y, kept_cy = self.sums[b][:, None] - mv[b], self.counts[b][:, None] - mc[b]
        mu_x, sd_x, mu_y, sd_y = self.mu[a, 0], self.sd[a, 0], self.mu[b, 0], self.sd[b, 0]
        # Xs keeps X's unmoved cells and receives Y's moved ones; Ys the reverse.
        zsum_xs = (kept_x - kept_cx * mu_x) / sd_x + (mv[b] - mc[b] * mu_y) / sd_y
        zsum_ys = (kept_y - kept_cy * mu_y) / sd_y + (mv[a] - mc[a] * mu_x) / sd_x
        mean_xs = _safe_divide(zsum_xs, kept_cx + mc[b])
        mean_ys = _safe_divide(zsum_ys, kept_cy + mc[a])
        return self._corr(mean_xs) - self._corr(mean_ys)

    def _corr(self, means: np.ndarray) -> np.ndarray:
        """The coefficient of every resample's system means (N, b) with the human's."""
        if self.coefficient != "kendall":
            # Contiguous rows, so every resample is reduced by the same summation whatever b.
            return _rows_correlation(np.ascontiguousarray(means.T), self.z_means[None, :], self.coefficient)
        # Kendall against the fixed human means: their pair signs are computed once; gathering
        # whole system rows of the (N, b) layout is several times faster than gathering columns.
        f, s = self.first, self.second
        if self.z_pair_valid.all() and not np.isnan(means).any():
            sx = np.sign(means[f] - means[s])  # (P, b); exact: equal means subtract to 0
            numerator = self.sz.astype(np.float64) @ sx  # integer-valued: exact in any order
            nx = np.count_nonzero(sx, axis=0)
            nz = np.full(means.shape[1], np.count_nonzero(self.sz))
            return _kendall_from_counts(numerator, nx, nz)
        valid = self.z_pair_valid[:, None] & ~(np.isnan(means[f]) | np.isnan(means[s]))
        sx = ((means[f] > means[s]).astype(np.int8) - (means[f] < means[s])) * valid
        sz = self.sz[:, None] * valid
        numerator = np.einsum("pb,pb->b", sx.astype(np.float64), sz.astype(np.float64))
        return _kendall_from_counts(numerator, np.count_nonzero(sx, axis=0), np.count_nonzero(sz, axis=0))


class _PermutationEngine:
    """delta_s = r(Xs, Z) - r(Ys, Z) for batches of swap masks, on z-scored X and Y."""

    def __init__(self, x: np.ndarray, y: np.ndarray, z: np.ndarray, level: str, coefficient: str, method: str):
        # x and y are the raw scores; the swaps act on their z-scores (Algorithm 2, step 1).
        (self.mu_x, self.sd_x), (self.mu_y, self.sd_y) = _zscore_params(x), _zscore_params(y)
        self.level, self.coefficient, self.method = level, coefficient, method
        self.z = z
        self.x = (x - self.mu_x) / self.sd_x
        self.y = (y - self.mu_y) / self.sd_y
        n, m = x.shape
        self.per_resample = n * m
        if level == "system":
            self.system = _SystemPermutation([x, y], z, coefficient, method)
        elif level == "input":
            corr = coefficient_function(coefficient)
            self.tau_x = corr(self.x.T, z.T)
            self.tau_y = corr(self.y.T, z.T)
            if coefficient == "kendall" and method != "perm-inputs":
                cx, qx = _kendall_swap_forms(self.x, self.y, z)
                cy, qy = _kendall_swap_forms(self.y, self.x, z)
                const = np.concatenate([cx, cy], axis=0)  # (6, M)
                q = np.concatenate([qx, qy], axis=3)  # (M, N, N, 6)
                # Counts that no swap pattern changes (e.g. P+Q+U without NaN) need no product.
                self.active = np.flatnonzero(np.abs(q).reshape(-1, 6).sum(axis=0) > 0)
                self.const = const
                # Half-integers of magnitude <= N^2 summed exactly in float32 for moderate N.
                dtype = np.float32 if n <= 1000 else np.float64
                self.q = np.ascontiguousarray(q[..., self.active].reshape(m, n, n * self.active.size)).astype(dtype)
                self.dtype = dtype

    def deltas(self, mask: np.ndarray) -> np.ndarray:
        b = mask.shape[0]
        n, m = self.x.shape
        if self.level == "system":
            return self.system.deltas(self.system.moved(mask), 0, 1)
        if self.level == "input":
            if self.method == "perm-inputs":
                cols = mask[:, 0, :]
                per_x = np.where(cols, self.tau_y, self.tau_x)
                per_y = np.where(cols, self.tau_x, self.tau_y)
            elif self.coefficient == "kendall":
                counts = self._kendall_counts(np.broadcast_to(mask, (b, n, m)))
                per_x = _kendall_from_counts(counts[:, 0], counts[:, 1], counts[:, 2])
                per_y = _kendall_from_counts(counts[:, 3], counts[:, 4], counts[:, 5])
            else:
                corr = coefficient_function(self.coefficient)
                xs = np.where(mask, self.y, self.x)
                ys = np.where(mask, self.x, self.y)
                zt = self.z.T
                per_x = corr(np.swapaxes(xs, 1, 2), zt)
                per_y = corr(np.swapaxes(ys, 1, 2), zt)
            return _weighted_input_mean(per_x, None) - _weighted_input_mean(per_y, None)
        xs = np.where(mask, self.y, self.x).reshape(b, -1)
        ys = np.where(mask, self.x, self.y).reshape(b, -1)
        zf = self.z.reshape(1, -1)
        return _rows_correlation(xs, zf, self.coefficient) - _rows_correlation(ys, zf, self.coefficient)

    def _kendall_counts(self, mask: np.ndarray) -> np.ndarray:
        b = mask.shape[0]
        n, m = self.x.shape
        bits = np.ascontiguousarray(mask.transpose(2, 0, 1), dtype=self.dtype)  # (M, b, N)
        k = self.active.size
        half = (bits @ self.q).reshape(m, b, n, k)  # (M, b, N, k): Q_j B_j per resample
        forms = np.einsum("jsak,jsa->sjk", half, bits)  # (b, M, k): B_j' Q_j B_j
        counts = np.broadcast_to(self.const.T[None], (b, m, 6)).copy()
        counts[:, :, self.active] += forms
        return counts.transpose(0, 2, 1)  # (b, 6, M)


def _permutation_null(x, y, z, *, level, coefficient, method, rng, n_resamples, batch) -> np.ndarray:
    engine = _PermutationEngine(x, y, z, level, coefficient, method)
    b = _auto_batch(batch, engine.per_resample * 4, n_resamples)
    out = np.full(n_resamples, np.nan)
    for sl, mask in _iter_swap_masks(rng, method, n_resamples, x.shape[0], x.shape[1], b):
        out[sl] = engine.deltas(mask)
    return out


def _count_pvalue(values: np.ndarray, threshold: float, alternative: str) -> tuple[float, int]:
    """``(1 + #{values >= threshold}) / (1 + k)`` over the defined values (|.| when two-sided)."""
    defined = values[~np.isnan(values)]
    if defined.size == 0 or not np.isfinite(threshold):
        return math.nan, int(defined.size)
    if alternative == "two-sided":
        hits = np.count_nonzero(np.abs(defined) >= abs(threshold) - _TOLERANCE)
    else:
        hits = np.count_nonzero(defined >= threshold - _TOLERANCE)
    return (1.0 + hits) / (1.0 + defined.size), int(defined.size)


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
        check_resampling_size(coefficient, level, human.size)
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
    method : {'perm-both', 'perm-systems', 'perm-inputs', 'boot-both', 'boot-systems', 'boot-inputs', 'williams'}
        Permutation test (TACL Algorithm 2; PERM-BOTH swaps each cell independently),
        paired bootstrap, or Williams' test (system and global levels; approximate for
        Spearman and Kendall, which it labels).
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


# ---------------------------------------------------------------------------
# Multiple comparisons
# ---------------------------------------------------------------------------
def _correct_pvalues_iv(pvalues, method):
    method = check_choice(method, "method", CORRECTIONS)
    try:
        p = np.array(pvalues, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("pvalues must be numeric") from None
    finite = p[~np.isnan(p)]
    if ((finite < 0) | (finite > 1)).any():
        raise ValueError("pvalues must lie in [0, 1] (NaN allowed)")
    return p, method


def correct_pvalues(pvalues: np.ndarray, *, method: Correction) -> np.ndarray:
    """Adjusted p-values for one family of tests (any shape; NaN entries are not tests).

    * ``'bonferroni'``: ``min(1, m p)``.
    * ``'holm'``: step-down, ``max_{j <= i} min(1, (m - j + 1) p_(j))`` in ascending order.
    * ``'bh'``: Benjamini-Hochberg step-up, ``min_{j >= i} min(1, m p_(j) / j)``
      (equal to ``scipy.stats.false_discovery_control``).
    * ``'none'``: unchanged.

    ``m`` is the number of non-NaN p-values; a test is significant after correction at
    level ``alpha`` when its adjusted p-value is below ``alpha``.

    References
    ----------
    docs/methods.md sec. 3; TACL 2021 sec. 6.2 and App. B (Bonferroni); Holm (1979);
    Benjamini & Hochberg (1995).
    """
    p, method = _correct_pvalues_iv(pvalues, method)
    flat = p.ravel()
    out = flat.copy()
    idx = np.flatnonzero(~np.isnan(flat))
    m = idx.size
    if method == "none" or m == 0:
        return out.reshape(p.shape)
    values = flat[idx]
    if method == "bonferroni":
        adjusted = np.minimum(1.0, m * values)
    else:
        order = np.argsort(values, kind="stable")
        ranked = values[order]
        rank = np.arange(1, m + 1)
        if method == "holm":
            stepped = np.maximum.accumulate((m - rank + 1) * ranked)
        else:
            stepped = np.minimum.accumulate((m * ranked / rank)[::-1])[::-1]
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1.0, stepped)
    out[idx] = adjusted
    return out.reshape(p.shape)


def correct_table(pvalue: np.ndarray, *, correction: Correction, family: Family) -> np.ndarray:
    """Adjust a metric x metric p-value table within each family of tests.

    ``family``: ``'row'`` (each row metric's ``k - 1`` tests, TACL Fig. 5), ``'table'``
    (all ``k (k - 1)`` off-diagonal tests, TACL App. B) or ``'none'`` (unadjusted, as is
    ``correction='none'``). Each family is adjusted with :func:`correct_pvalues`; the
    diagonal stays NaN.

    References
    ----------
    docs/methods.md sec. 3; TACL 2021 sec. 6.2, Fig. 5 and App. B.
    """
    correction = check_choice(correction, "correction", CORRECTIONS)
    family = check_choice(family, "family", FAMILIES)
    p = np.asarray(pvalue, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"pvalue must be a square metric x metric table; got shape {p.shape}")
    if correction == "none" or family == "none":
        return p.copy()
    k = p.shape[0]
    off = ~np.eye(k, dtype=bool)
    out = np.full_like(p, np.nan)
    if family == "table":
        out[off] = correct_pvalues(p[off], method=correction)
    else:
        for i in range(k):
            out[i, off[i]] = correct_pvalues(p[i, off[i]], method=correction)
    return out


@dataclass(frozen=True)
class PairwiseTable(ToFrame):
    """All ordered pairwise comparisons of a set of metrics (row X better than column Y?).

    ``delta[i, j] = r(metric_i) - r(metric_j)``; ``pvalue[i, j]`` tests "row i better than
    column j" (NaN on the diagonal); ``pvalue_corrected`` is adjusted within each family;
    ``significant`` is ``pvalue < alpha`` (the filled heatmap cell) and
    ``significant_corrected`` is ``pvalue_corrected < alpha`` (the outlined cell).

    References
    ----------
    docs/methods.md sec. 3; TACL 2021 Fig. 5 and App. B.
    """

    metrics: tuple[str, ...]
    human: str
    estimates: np.ndarray
    delta: np.ndarray
    pvalue: np.ndarray
    pvalue_corrected: np.ndarray
    significant: np.ndarray
    significant_corrected: np.ndarray
    alpha: float
    correction: str
    family: str
    method: str
    alternative: str
    level: str
    coefficient: str
    n_resamples: int
    n_defined: np.ndarray
    approximate: bool = False

    def to_records(self) -> list[dict]:
        """One dict per ordered pair (x, y), x != y, in row-major order."""
        def num(v):
            return None if not np.isfinite(v) else float(v)

        records = []
        for i, x in enumerate(self.metrics):
            for j, y in enumerate(self.metrics):
                if i == j:
                    continue
                records.append({
                    "x": x, "y": y, "delta": num(self.delta[i, j]), "pvalue": num(self.pvalue[i, j]),
                    "pvalue_corrected": num(self.pvalue_corrected[i, j]),
                    "significant": bool(self.significant[i, j]),
                    "significant_corrected": bool(self.significant_corrected[i, j]),
                    "n_defined": int(self.n_defined[i, j]),
                })
        return records


def _shared_seed(rng: object) -> np.random.SeedSequence:
    """The seed every pair of a table starts from (common random numbers).

    An int seed ``s`` gives ``SeedSequence(s)``, so a pair's generator equals
    ``numpy.random.default_rng(s)``; a Generator contributes 128 bits of entropy (and advances).
    """
    generator = as_generator(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        return np.random.SeedSequence(int(rng))
    return np.random.SeedSequence([int(v) for v in generator.integers(0, 2**32, size=4)])


def _compare_all_pairs_iv(data, metrics, human, level, coefficient, method, alternative, correction, family,
                          alpha, n_resamples, rng, batch, pool, systems, progress):
    validate_level(level)
    validate_coefficient(coefficient)
    method = check_choice(method, "method", TEST_METHODS)
    if method == "williams":
        require_correlation(coefficient, "method 'williams'")
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    correction = check_choice(correction, "correction", CORRECTIONS)
    family = check_choice(family, "family", FAMILIES)
    alpha = check_probability(alpha, "alpha")
    n_resamples = check_int(n_resamples, "n_resamples")
    batch = check_int(batch, "batch", allow_none=True)
    rng = _shared_seed(rng)
    check_choice(pool, "pool", POOLS)
    check_callable(progress, "progress", "taking a fraction in [0, 1]")
    if isinstance(metrics, str) or not isinstance(metrics, Sequence):
        raise TypeError("metrics must be a sequence of measure names")
    metrics = tuple(metrics)
    if len(metrics) < 2:
        raise ValueError(f"metrics must name at least two measures; got {len(metrics)}")
    if len(set(metrics)) != len(metrics):
        raise ValueError("metrics must not repeat a name")
    if method == "williams" and level == "input":
        raise ValueError(
            "method 'williams' is defined at the system and global levels only (docs/methods.md sec. 3); got level='input'"
        )
    if isinstance(data, Dataset):
        subset = data.select_systems(systems)
        matrices = {}
        for name in metrics:
            matrices[name], z = correlation_inputs(subset, name, human, level=level, pool=pool)
    elif isinstance(data, Mapping):
        if pool != "judged" or systems is not None:
            raise ValueError("pool and systems apply to a Dataset only; pass the matrices you want to compare")
        missing = [k for k in (*metrics, human) if k not in data]
        if missing:
            raise ValueError(f"data has no matrix for {', '.join(map(repr, missing))}")
        matrices = {name: _as_matrix(data[name], name) for name in metrics}
        z = _as_matrix(data[human], human)
    else:
        raise TypeError(f"data must be a Dataset or a mapping of name -> matrix; got {type(data).__name__}")
    return (matrices, np.asarray(z, dtype=np.float64), metrics, method, alternative, correction, family, float(alpha),
            n_resamples, rng, batch)


def compare_all_pairs(
    data: Dataset | Mapping[str, np.ndarray],
    metrics: Sequence[str],
    human: str,
    *,
    level: Level,
    coefficient: Coefficient,
    method: TestMethod,
    alternative: Alternative = "greater",
    correction: Correction = "bonferroni",
    family: Family = "row",
    alpha: float = 0.05,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    pool: Pool = "judged",
    systems: str | None = None,
    progress: Callable[[float], None] | None = None,
) -> PairwiseTable:
    """Test every ordered pair of metrics and correct for multiple comparisons.

    Parameters
    ----------
    data : Dataset or mapping of name -> (N, M) matrix
        A dataset (measures looked up by name, ``pool`` and ``systems`` applied) or the
        matrices themselves (``human`` included).
    metrics : sequence of str
        At least two metric names; the table's rows and columns in this order.
    human : str
    level, coefficient, method, alternative, n_resamples, batch
        As in :func:`compare_metrics`.
    correction : {'bonferroni', 'holm', 'bh', 'none'}, default 'bonferroni'
    family : {'row', 'table', 'none'}, default 'row'
        The family a correction runs over: each row metric's ``k - 1`` tests (TACL Fig. 5),
        all ``k (k - 1)`` tests of the table (TACL App. B), or none (no correction).
    alpha : float, default 0.05
    rng : numpy.random.Generator, int or None
        Common random numbers: every pair is tested on the same resamples, drawn from one
        seed (an int ``s`` gives exactly ``compare_metrics(..., rng=s)`` for every cell; a
        Generator contributes the seed). Shared resamples keep the table internally
        consistent and let each metric's resampled sums be computed once; each test is
        still a valid test on its own, and Bonferroni and Holm hold under any dependence.
        The reverse cell ``(b, a)`` reuses the resamples of ``(a, b)`` with ``delta_s``
        negated.
    pool : {'judged', 'all'}
        The metrics' input pool (system level only; Dataset input only).
    systems : str, optional
        System subset such as ``"type=abs"`` (Dataset input only).
    progress : callable, optional
        Called with the fraction of pairs done (0 to 1).

    Returns
    -------
    PairwiseTable

    References
    ----------
    docs/methods.md sec. 3; Deutsch, Dror & Roth (TACL 2021) sec. 6.2, Fig. 5 and App. B.
    """
    (matrices, z, metrics, method, alternative, correction, family, alpha, n_resamples, rng,
     batch) = _compare_all_pairs_iv(data, metrics, human, level, coefficient, method, alternative, correction,
                                    family, alpha, n_resamples, rng, batch, pool, systems, progress)
    first_shape = next(iter(matrices.values())).shape
    for name, mat in matrices.items():
        if mat.shape != first_shape:
            raise ValueError(f"metric {name!r} has shape {mat.shape}, expected {first_shape} like the others")
    if first_shape[0] != z.shape[0] or (level != "system" and first_shape[1] != z.shape[1]):
        raise ValueError(f"metric matrices {first_shape} do not match human {human!r} of shape {z.shape}")
    if method != "williams":
        check_resampling_size(coefficient, level, z.size)
    k = len(metrics)
    pairs = list(itertools.combinations(range(k), 2))
    estimates = np.array([
        float(correlate_matrices(matrices[m], z, level=level, coefficient=coefficient).estimate) for m in metrics
    ])
    delta = estimates[:, None] - estimates[None, :]
    pvalue = np.full((k, k), np.nan)
    n_defined = np.zeros((k, k), dtype=int)
    report = progress if progress is not None else (lambda fraction: None)
    report(0.0)

    def fill(u: int, a: int, b: int, null: np.ndarray | None, threshold: float) -> None:
        pvalue[a, b], n_defined[a, b] = _count_pvalue(null, threshold, alternative)
        # Reverse cell from the same resamples: swapping the roles of X and Y negates
        # delta and every delta_s (and every centred bootstrap delta_s - delta).
        pvalue[b, a], n_defined[b, a] = _count_pvalue(-null, -threshold, alternative)

    stack = [matrices[m] for m in metrics]
    if method == "williams":
        for u, (a, b) in enumerate(pairs):
            for i, j in ((a, b), (b, a)):
                pvalue[i, j] = _williams(stack[i], stack[j], z, level=level, coefficient=coefficient,
                                         alternative=alternative)[1]
            report((u + 1) / len(pairs))
    elif method in PAIRED_BOOTSTRAP_METHODS:
        # One set of indices for all metrics: each metric's resampled correlation once.
        n, m = stack[0].shape
        separate = m != z.shape[1]
        indices = _draw_bootstrap_indices(np.random.default_rng(rng), method, n_resamples, n, m,
                                          z.shape[1] if separate else None)
        values = _bootstrap_correlations(stack, z, level=level, coefficient=coefficient, indices=indices,
                                         batch=batch)
        report(0.5)
        for u, (a, b) in enumerate(pairs):
            centred = (values[:, a] - values[:, b]) - delta[a, b]
            fill(u, a, b, centred, delta[a, b])
        report(1.0)
    elif level == "system":
        # Shared swap masks: every metric's swapped partial sums once per chunk, then pairs.
        engine = _SystemPermutation(stack, z, coefficient, method)
        n, m = stack[0].shape
        nulls = np.full((len(pairs), n_resamples), np.nan)
        size = _auto_batch(batch, n * m, n_resamples)
        for sl, mask in _iter_swap_masks(np.random.default_rng(rng), method, n_resamples, n, m, size):
            moved = engine.moved(mask)
            # Pair by pair (measured faster than vectorising over pairs, whose gathers thrash the cache).
            for u, (a, b) in enumerate(pairs):
                nulls[u, sl] = engine.deltas(moved, a, b)
            report(sl.stop / n_resamples)
        for u, (a, b) in enumerate(pairs):
            fill(u, a, b, nulls[u], delta[a, b])
    else:
        for u, (a, b) in enumerate(pairs):
            null = _permutation_null(stack[a], stack[b], z, level=level, coefficient=coefficient, method=method,
                                     rng=np.random.default_rng(rng), n_resamples=n_resamples, batch=batch)
            fill(u, a, b, null, delta[a, b])
            report((u + 1) / len(pairs))
    corrected = correct_table(pvalue, correction=correction, family=family)
    with np.errstate(invalid="ignore"):
        significant = np.nan_to_num(pvalue, nan=1.0) < alpha
        significant_corrected = np.nan_to_num(corrected, nan=1.0) < alpha
    return PairwiseTable(
        metrics=metrics, human=human, estimates=estimates, delta=delta, pvalue=pvalue, pvalue_corrected=corrected,
        significant=significant, significant_corrected=significant_corrected, alpha=alpha, correction=correction,
        family=family, method=method, alternative=alternative, level=level, coefficient=coefficient,
        n_resamples=0 if method == "williams" else n_resamples, n_defined=n_defined,
        approximate=method == "williams" and coefficient != "pearson",
    )
