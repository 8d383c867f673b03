"""Permutation engines: swap masks and the resampled ``delta_s`` of TACL 2021 Algorithm 2.

The swap masks of PERM-SYSTEMS/INPUTS are drawn up front (k x N, k x M uniforms < 1/2);
PERM-BOTH draws, per resample and in draw order, ``ceil(N M / 64)`` raw 64-bit words whose
bits are the cell swaps, so chunking never changes them. At the system level the means of a
swapped matrix are ``mean(X) + mean(B * (Y - X))`` along inputs; at the input level with
Kendall or pairwise accuracy the difference of the swapped pair counts is linear in the swap
bits for most inputs (``significance.linear``), and with the tie-calibrated accuracy every swapped
matrix chooses its own epsilon shared by all its inputs, among the |dx| of the four outcomes of every
pair sorted once (``metaeval_core.stats.tiecal.SwappedInputCalibration``); at the
global level Kendall and pairwise accuracy are weighted pair counts over the 2NM points of X and Y
(``metaeval_core.stats.paircounts``).

References: docs/methods.md sec. 3; Deutsch, Dror & Roth (TACL 2021) sec. 4 and App. B.
"""

from __future__ import annotations

import copy

import math
from typing import Iterator, Sequence

import numpy as np

from metaeval_core.stats.coefficients import coefficient_function, kendall, pair_kernel_fits, pdp_input
from metaeval_core.stats.correlation import system_means
from metaeval_core.stats.tiecal import SwappedInputCalibration
from metaeval_core.stats.significance._common import _TOLERANCE
from metaeval_core.stats.spa import SwapDeltas
from metaeval_core.stats.significance.linear import (
    LINEAR_COEFFICIENTS, InputLinearPermutation, input_permutation_nulls, linear_fits,
)
from metaeval_core.stats.paircounts import WEIGHTED_PAIR_COEFFICIENTS, PairCounter, weighted_coefficient
from metaeval_core.stats.resampling import (
    _auto_batch,
    _chunks,
    _kendall_from_counts,
    _rows_correlation,
    _safe_divide,
    _weighted_input_mean,
)

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
        # Beyond the pair kernel's size the (pairs x resamples) sign arrays would take GBs (2,000 systems: 2M pairs
        # x 125 resamples x 8 bytes per array): tau-b of each resample's means by scipy's O(n log n) instead.
        self.pairwise = pair_kernel_fits(n)
        self.first, self.second = np.triu_indices(n if self.pairwise else 0, 1)
        if coefficient == "kendall" and self.pairwise:
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
        if not self.pairwise:
            return kendall(np.ascontiguousarray(means.T), self.z_means[None, :])
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
        if coefficient == "soft-pairwise-accuracy":
            # The swapped matrices' pairwise p-values, recomputed per resample (docs/methods.md sec. 11.3).
            self.spa = SwapDeltas(self.x, self.y, z)
        elif level == "system":
            self.system = _SystemPermutation([x, y], z, coefficient, method)
        elif level == "input" and coefficient == "tie-calibrated-accuracy":
            # One epsilon over all inputs: no per-input values to reuse; the swapped pairs' candidates are fixed.
            self.swapped = SwappedInputCalibration(self.x, self.y, z)
        elif level == "input" and coefficient == "pdp":
            pass  # pooled over inputs: recomputed from the swapped matrices (docs/methods.md sec. 11.4)
        elif level == "input":
            corr = coefficient_function(coefficient)
            self.tau_x = corr(self.x.T, z.T)
            self.tau_y = corr(self.y.T, z.T)
            if coefficient in LINEAR_COEFFICIENTS and method != "perm-inputs" and linear_fits(n, m):
                self.linear = InputLinearPermutation([self.x, self.y], z, coefficient, [(0, 1)])
        elif coefficient in WEIGHTED_PAIR_COEFFICIENTS:
            # Global level: a swapped X picks, per cell, X's point or Y's point of a fixed set of 2NM
            # points, so delta_s comes from weighted pair counts, O(NM log NM) per resample.
            self.counter = PairCounter(np.concatenate([self.x.ravel(), self.y.ravel()]), np.tile(z.ravel(), 2))
            vz = ~np.isnan(z.ravel())
            self.valid_x = (vz & ~np.isnan(self.x.ravel())).astype(np.int8)
            self.valid_y = (vz & ~np.isnan(self.y.ravel())).astype(np.int8)
            # Ys takes the points Xs leaves: its concordant count follows from Xs's and fixed totals.
            everything = np.concatenate([self.valid_x, self.valid_y])
            self.concordance = self.counter.concordance_vector(everything)
            # P(W) = W . (A W) / 2: each concordant pair of W's points is counted from both ends.
            self.concordant_all = int(everything.astype(np.int64) @ self.concordance) // 2
            # When each cell's X and Y are both valid or both not, Xs and Ys hold one point of every valid cell,
            # at the cell's human score: with the human as the coarse coordinate, its ranks' totals never change.
            self.rank_totals = None
            if not self.counter.coarse_is_x and np.array_equal(self.valid_x, self.valid_y):
                self.rank_totals = self.counter.rank_totals(
                    np.concatenate([self.valid_x, np.zeros_like(self.valid_y)])[None])
            # Ys's runs of tied points are everything's minus Xs's (0/1 weights).
            self.run_sums_all = self.counter.run_sums(everything[None])
            self.rank_totals_all = self.counter.rank_totals(everything[None])
            # Batches of about 1 MB of int32 weights stay in cache through the counter's passes (1.5x faster
            # than 4 MB on the benchmark machine); the batch never changes a result.
            self.per_resample = 2 * self.counter.n

    def deltas(self, mask: np.ndarray) -> np.ndarray:
        b = mask.shape[0]
        n, m = self.x.shape
        if self.coefficient == "soft-pairwise-accuracy":
            return self.spa.deltas(mask)
        if self.level == "system":
            return self.system.deltas(self.system.moved(mask), 0, 1)
        if self.level == "input" and self.coefficient == "tie-calibrated-accuracy":
            # The swapped matrices choose their own shared epsilon (docs/methods.md sec. 11.2).
            accuracy_x, accuracy_y = self.swapped.evaluate(mask)
            return accuracy_x - accuracy_y
        if self.level == "input" and self.coefficient == "pdp":
            mask = np.broadcast_to(mask, (b, n, m))
            return (pdp_input(np.where(mask, self.y, self.x), self.z)
                    - pdp_input(np.where(mask, self.x, self.y), self.z))
        if self.level == "input":
            if self.method == "perm-inputs":
                cols = mask[:, 0, :]
                per_x = np.where(cols, self.tau_y, self.tau_x)
                per_y = np.where(cols, self.tau_x, self.tau_y)
            else:
                corr = coefficient_function(self.coefficient)
                xs = np.where(mask, self.y, self.x)
                ys = np.where(mask, self.x, self.y)
                zt = self.z.T
                per_x = corr(np.swapaxes(xs, 1, 2), zt)
                per_y = corr(np.swapaxes(ys, 1, 2), zt)
            return _weighted_input_mean(per_x, None) - _weighted_input_mean(per_y, None)
        if self.coefficient in WEIGHTED_PAIR_COEFFICIENTS:
            swap = np.broadcast_to(mask, (b, n, m)).reshape(b, -1).astype(np.int8)
            keep = 1 - swap
            w_x = np.concatenate([keep * self.valid_x, swap * self.valid_y], axis=1)
            totals = None if self.rank_totals is None else np.repeat(self.rank_totals, b, axis=0)
            runs_x = self.counter.run_sums(w_x)
            xs = self.counter.counts(w_x, rank_totals=totals, run_sums=runs_x)
            ys = self.counter.counts(
                np.concatenate([swap * self.valid_x, keep * self.valid_y], axis=1), rank_totals=totals,
                run_sums=tuple(a - r for a, r in zip(self.run_sums_all, runs_x)),
                concordant=self.counter.complement_concordant(w_x, xs.concordant, self.concordant_all,
                                                              self.concordance))
            return weighted_coefficient(xs, self.coefficient) - weighted_coefficient(ys, self.coefficient)
        xs = np.where(mask, self.y, self.x).reshape(b, -1)
        ys = np.where(mask, self.x, self.y).reshape(b, -1)
        zf = self.z.reshape(1, -1)
        return _rows_correlation(xs, zf, self.coefficient) - _rows_correlation(ys, zf, self.coefficient)


    # ------------------------------------------------------------------
    # Decisions without the O(n log n) count (global level, tables only)
    # ------------------------------------------------------------------
    @property
    def screens(self) -> bool:
        """Whether :meth:`screened_deltas` applies: global-level Kendall or pairwise accuracy with X and Y valid on
        the same cells (so that Xs and Ys hold the same number of points in every swap)."""
        return getattr(self, "counter", None) is not None and np.array_equal(self.valid_x, self.valid_y)

    def delta_bounds(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rigorous bounds ``(low, high)`` of every resample's ``delta_s`` (NaN where it is undefined), without the
        concordant count of Xs.

        Everything of ``delta_s`` is exact and cheap but ``P(Xs) + P(Ys)``: ``P(Xs) - P(Ys) = w . (A W) - P(W)`` is
        linear in Xs's 0/1 weights ``w`` (the ``P(w)`` of the complement identity cancels), the ties of both come
        from the runs of tied points and the coarse ranks' totals (linear too), and the pair total is fixed. With
        ``S = P - Q`` bounded by tau-b's own denominator, ``|S| <= d`` (Cauchy-Schwarz), ``tau(Xs) - tau(Ys)`` is
        linear in ``S(Xs)`` over an interval; its width is ``|S| |1/d_x - 1/d_y|``, i.e. only as wide as the two
        swapped metrics' tie counts differ (~1e-7 on WMT22 zh-en against a null spread of ~3e-3). Pairwise
        accuracy's difference needs no bound: ``(dP + dT_both) / n0``.

        References: docs/methods.md sec. 16.1.
        """
        b = mask.shape[0]
        n, m = self.x.shape
        swap = np.ascontiguousarray(np.broadcast_to(mask, (b, n, m))).reshape(b, -1).view(np.int8)
        # From int8, not bool: numpy's strided bool -> float32 cast is ~10x slower.
        swap_t = np.ascontiguousarray(swap.T, dtype=np.float32)
        screen = self._screen_setup()
        fine_x, fine_y = screen.tied(swap_t, 0)
        both_x, both_y = screen.tied(swap_t, 1)
        counter = self.counter
        if self.rank_totals is not None:
            # The human as the coarse coordinate, X and Y valid on the same cells: its ties never change.
            coarse_x = coarse_y = np.full(b, screen.coarse_tied, dtype=np.int64)
        else:
            totals_x = counter.rank_totals(np.concatenate([(1 - swap) * self.valid_x, swap * self.valid_y], axis=1))
            coarse_x = (totals_x * (totals_x - 1) // 2).sum(axis=1)
            totals_y = self.rank_totals_all - totals_x
            coarse_y = (totals_y * (totals_y - 1) // 2).sum(axis=1)
        if counter.coarse_is_x:
            metric_x, metric_y, human_x, human_y = coarse_x, coarse_y, fine_x, fine_y
        else:
            metric_x, metric_y, human_x, human_y = fine_x, fine_y, coarse_x, coarse_y
        total = screen.total
        concordant_gap = screen.kept + screen.moved_product(swap_t) - self.concordant_all  # P(Xs) - P(Ys)
        if self.coefficient == "pairwise-accuracy":
            value = np.full(b, np.nan)
            if total > 0:
                value = (concordant_gap + both_x - both_y) / total
            return value, value
        # S = P - Q = 2 P - n0 + n1 + n2 - n_both for each side.
        gap = 2 * concordant_gap + (metric_x - metric_y) + (human_x - human_y) - (both_x - both_y)
        den_x = (total - metric_x).astype(np.float64) * (total - human_x).astype(np.float64)
        den_y = (total - metric_y).astype(np.float64) * (total - human_y).astype(np.float64)
        defined = (den_x > 0) & (den_y > 0)
        d_x = np.sqrt(np.where(defined, den_x, 1.0))
        d_y = np.sqrt(np.where(defined, den_y, 1.0))
        gap = gap.astype(np.float64)
        # S(Xs) lies in [-d_x, d_x] and S(Ys) = S(Xs) - gap in [-d_y, d_y].
        s_low, s_high = np.maximum(-d_x, gap - d_y), np.minimum(d_x, gap + d_y)
        slope = 1.0 / d_x - 1.0 / d_y
        ends = (s_low * slope + gap / d_y, s_high * slope + gap / d_y)
        low = np.where(defined, np.minimum(*ends), np.nan)
        high = np.where(defined, np.maximum(*ends), np.nan)
        return low, high

    def _screen_setup(self) -> "_ScreenTerms":
        if getattr(self, "_screen", None) is None:
            self._screen = _ScreenTerms(self)
        return self._screen

    def screened_deltas(self, mask: np.ndarray, threshold: float, alternative: str) -> np.ndarray:
        """``delta_s`` for counting exceedances of ``threshold`` (both cells of a table, see :func:`_exceedances`):
        exact where a resample's bounds (:meth:`delta_bounds`) come within ``_SCREEN_MARGIN`` of a decision
        boundary, else the bounds' midpoint, which falls on the same side of every boundary as the exact value.
        P-values, hence decisions, equal the full computation's; the values themselves do not, so this serves only
        p-values (never a null distribution that is returned or averaged).

        References: docs/methods.md sec. 16.1.
        """
        low, high = self.delta_bounds(mask)
        out = (low + high) / 2
        if not np.isfinite(threshold):
            return out  # every p-value is undefined; only which resamples are defined counts, and that is exact
        if alternative == "two-sided":
            edge = abs(threshold) - _TOLERANCE
            boundaries = (edge, -edge)
        else:
            boundaries = (threshold - _TOLERANCE, threshold + _TOLERANCE)
        unsure = np.zeros(out.shape, dtype=bool)
        for edge in boundaries:
            unsure |= (low <= edge + _SCREEN_MARGIN) & (high >= edge - _SCREEN_MARGIN)
        if unsure.any():
            out[unsure] = self.deltas(mask[unsure])
        return out


class _ScreenTerms:
    """The swap-linear terms of :meth:`_PermutationEngine.delta_bounds` for one metric pair, prepared once.

    Xs's weight of a point is its cell's swap bit (a Y point) or its complement (an X point), times the point's
    validity, so each run of tied points sums to its valid X points' count plus the swap bits times a sparse
    (runs x cells) matrix of +1 (Y points) and -1 (X points); ``w . (A W)`` is the kept X points' total plus the
    swap bits times each cell's Y-minus-X concordance, split into two columns whose sums stay below 2 ** 24. Both
    products take the swap bits transposed, (cells x resamples) float32: exact integers in any summation order.
    """

    def __init__(self, engine: "_PermutationEngine"):
        from scipy import sparse

        counter = engine.counter
        n = engine.valid_x.size
        size = int(engine.valid_x.sum())
        self.total = size * (size - 1) // 2
        if engine.rank_totals is not None:
            self.coarse_tied = int((engine.rank_totals * (engine.rank_totals - 1) // 2).sum())
        valid = np.concatenate([engine.valid_x, engine.valid_y]).astype(bool)
        self.groups = []
        for members, runs, everything in ((counter._fine_members, counter.fine_ties, engine.run_sums_all[0]),
                                          (counter._both_members, counter.both_ties, engine.run_sums_all[1])):
            lengths = np.diff(np.append(runs.starts, members.size))
            run_of = np.repeat(np.arange(runs.starts.size), lengths)
            keep = valid[members]
            members, run_of = members[keep], run_of[keep]
            is_x = members < n
            signs = sparse.csr_matrix((np.where(is_x, -1.0, 1.0).astype(np.float32), (run_of, members % n)),
                                      shape=(runs.starts.size, n))
            signs.sum_duplicates()  # a cell with both points in one run always adds 1 to it
            base = np.bincount(run_of[is_x], minlength=runs.starts.size).astype(np.float32)
            self.groups.append((signs, base[:, None], everything[0].astype(np.float64)[:, None]))
        concordance = engine.concordance
        kept = engine.valid_x * concordance[:n]
        moved = engine.valid_y * concordance[n:] - kept
        self.kept = int(kept.sum())
        # Split into moved = 256 high + low (0 <= low < 256): each column's n terms then sum below 2 ** 24.
        self.exact32 = n * max(256, int(np.abs(moved).max(initial=0)) // 256 + 1) < 2**24
        if self.exact32:
            low = np.mod(moved, 256)
            self.rows = np.stack([(moved - low) // 256, low]).astype(np.float32)
        else:
            self.moved = moved.astype(np.float64)

    def tied(self, swap_t: np.ndarray, group: int) -> tuple[np.ndarray, np.ndarray]:
        """Pairs tied within the runs of ``group`` (0: the fine coordinate, 1: both) in Xs and in Ys, (b,) each,
        from the swap bits ``swap_t`` (cells x b, float32)."""
        signs, base, everything = self.groups[group]
        if signs.shape[0] == 0:
            zero = np.zeros(swap_t.shape[1], dtype=np.int64)
            return zero, zero
        runs_x = (signs @ swap_t + base).astype(np.float64)  # integers below 2 ** 24: exact
        runs_y = everything - runs_x
        # Sums of r (r - 1) stay below (2NM) ** 2 < 2 ** 53: exact in float64.
        return (np.rint(np.einsum("rb,rb->b", runs_x, runs_x - 1) / 2).astype(np.int64),
                np.rint(np.einsum("rb,rb->b", runs_y, runs_y - 1) / 2).astype(np.int64))

    def moved_product(self, swap_t: np.ndarray) -> np.ndarray:
        """``swap . (Y's - X's concordance)`` per resample, exact int64."""
        if self.exact32:
            parts = np.rint(self.rows @ swap_t).astype(np.int64)
            return parts[0] * 256 + parts[1]
        return np.rint(self.moved @ swap_t.astype(np.float64)).astype(np.int64)


# Bounds closer than this to a decision boundary are settled by the exact count: the float evaluation of the bounds
# and of the exact tau-b differ by ~1e-15.
_SCREEN_MARGIN = 1e-9
# Resamples per batch of :meth:`_PermutationEngine.screened_deltas`: its work per resample is a few passes over the
# 2NM weights, so larger batches than the exact count's only amortise the per-call overhead.
_SCREEN_BATCH = 64


def _screened_chunks(engine, rng, method, n_resamples, shape, batch, threshold, alternative):
    """``(slice, values)`` per chunk in draw order whose exceedances of ``threshold`` equal the exact nulls'."""
    size = _SCREEN_BATCH if batch is None else batch
    for sl, mask in _iter_swap_masks(rng, method, n_resamples, shape[0], shape[1], size):
        yield sl, engine.screened_deltas(mask, threshold, alternative)


def _permutation_null(x, y, z, *, level, coefficient, method, rng, n_resamples, batch) -> np.ndarray:
    engine = _PermutationEngine(x, y, z, level, coefficient, method)
    b = _auto_batch(batch, engine.per_resample * 4, n_resamples)
    if getattr(engine, "linear", None) is not None:
        # Two passes over the same draws (linear part, then the tie-prone inputs): replay the
        # generator from a copy of its state, and leave it where one pass would.
        start = copy.deepcopy(rng.bit_generator.state)

        def masks():
            rng.bit_generator.state = start
            return _iter_swap_masks(rng, method, n_resamples, x.shape[0], x.shape[1], b)

        return input_permutation_nulls(engine.linear, masks, n_resamples)[0]
    out = np.full(n_resamples, np.nan)
    for sl, values in _permutation_chunks(engine, rng, method, n_resamples, x.shape, b):
        out[sl] = values
    return out


def _permutation_chunks(engine, rng, method, n_resamples, shape, b):
    """``(slice, delta_s)`` per chunk in draw order (for sequential stopping)."""
    for sl, mask in _iter_swap_masks(rng, method, n_resamples, shape[0], shape[1], b):
        yield sl, engine.deltas(mask)


def _exceedances(defined: np.ndarray, threshold: float, alternative: str) -> list[np.ndarray]:
    """Which defined ``delta_s`` count against the cell (x, y) and its reverse (y, x) (|.| when two-sided)."""
    if alternative == "two-sided":
        return [np.abs(defined) >= abs(threshold) - _TOLERANCE] * 2
    return [defined >= threshold - _TOLERANCE, -defined >= -threshold - _TOLERANCE]


def _undefined_cells(chunks):
    """Both cells undefined (an undefined observed delta): one chunk drawn, as the full run's first."""
    for sl, _ in chunks:
        return (math.nan, 0), (math.nan, 0), sl.stop
    return (math.nan, 0), (math.nan, 0), 0


def _final_cells(stopped, hits, seen) -> tuple[tuple[float, int], tuple[float, int]]:
    """Each cell's stopped ``(p, l)``, or the full run's ``(1 + g) / (1 + l)`` when it never stopped."""
    out = []
    for c in range(2):
        if stopped[c] is not None:
            out.append(stopped[c])
        elif seen == 0:
            out.append((math.nan, 0))
        else:
            out.append(((1.0 + hits[c]) / (1.0 + seen), seen))
    return out[0], out[1]


def _sequential_pvalues(chunks, threshold: float, alternative: str, n_resamples: int, h: int):
    """Besag & Clifford (1991) p-values of the cell (x, y) and its reverse (y, x) from one null stream.

    Each cell stops at its ``h``-th exceedance, ``l`` defined resamples in (draw order): p = h / l;
    a cell that never reaches ``h`` gets the fixed-size ``(1 + g) / (1 + k)``. The stream stops
    once both cells have stopped. Returns ``((p, n_used), (p_reverse, n_used_reverse), resamples drawn)``.
    """
    if not np.isfinite(threshold):
        return _undefined_cells(chunks)
    seen = 0
    hits = [0, 0]
    stopped: list[tuple[float, int] | None] = [None, None]
    drawn = 0
    for sl, values in chunks:
        drawn = sl.stop
        defined = values[~np.isnan(values)]
        flags = _exceedances(defined, threshold, alternative)
        for c in range(2):
            if stopped[c] is not None:
                continue
            running = hits[c] + np.cumsum(flags[c])
            reached = np.flatnonzero(running >= h)
            if reached.size:
                used = seen + int(reached[0]) + 1
                stopped[c] = (h / used, used)
            else:
                hits[c] = int(running[-1]) if running.size else hits[c]
        seen += defined.size
        if stopped[0] is not None and stopped[1] is not None:
            break
    return (*_final_cells(stopped, hits, seen), drawn)


# mt-metrics-eval's early stopping of PERM-BOTH (stats.PermutationSigDiffParams as tasks.Task sets it, as
# CompareMetrics runs it): look every 100 draws, stop below 0.02 or above 0.5 (docs/methods.md sec. 16.2).
BLOCK_SIZE = 100
BLOCK_EARLY_MIN = 0.02
BLOCK_EARLY_MAX = 0.5


def _block_pvalues(chunks, threshold: float, alternative: str, n_resamples: int, *, block_size: int = BLOCK_SIZE,
                   early_min: float = BLOCK_EARLY_MIN, early_max: float = BLOCK_EARLY_MAX):
    """Blocks-of-draws p-values of the cell (x, y) and its reverse (y, x) from one null stream.

    After each ``block_size`` draws (by draw index, never by chunk), a cell's p-value over the draws so far,
    ``(1 + g) / (1 + l)`` over its ``l`` defined resamples, stops the cell when it is below ``early_min`` or above
    ``early_max``; a cell that never stops gets the full run's p-value. The stream stops once both cells have
    stopped. Returns ``((p, l), (p_reverse, l_reverse), resamples drawn)`` like :func:`_sequential_pvalues`.
    """
    if not np.isfinite(threshold):
        return _undefined_cells(chunks)
    seen = 0
    hits = [0, 0]
    stopped: list[tuple[float, int] | None] = [None, None]
    drawn = 0
    for sl, values in chunks:
        # Split the chunk at block boundaries so that the looks fall on the same draws for any batch size.
        start = sl.start
        while start < sl.stop:
            stop = min(sl.stop, (start // block_size + 1) * block_size)
            part = values[start - sl.start:stop - sl.start]
            defined = part[~np.isnan(part)]
            flags = _exceedances(defined, threshold, alternative)
            seen += defined.size
            for c in range(2):
                hits[c] += int(np.count_nonzero(flags[c]))
            drawn = start = stop
            if stop % block_size == 0 and stop < n_resamples and seen:
                for c in range(2):
                    p = (1.0 + hits[c]) / (1.0 + seen)
                    if stopped[c] is None and (p < early_min or p > early_max):
                        stopped[c] = (p, seen)
                if stopped[0] is not None and stopped[1] is not None:
                    return stopped[0], stopped[1], drawn
    return (*_final_cells(stopped, hits, seen), drawn)
