"""Kendall pair counts of many weightings of one fixed point set, in O(n log n) per weighting.

A bootstrap resample of cells is the original cells with multiplicities, and a cell-swap
permutation of X and Y picks, per cell, the X point or the Y point of a fixed set of 2n
points. Either way every resample is a *weighting* ``w`` of points fixed in advance, and
Kendall's pair counts of the resample are weighted pair counts of those points, each pair
of copies counting ``w_u w_v`` times (two copies of one point are tied in both scores).

The points are sorted once by ``(x, z)``; the concordant count is a divide-and-conquer over
that order whose index arrays (each left half sorted by ``z``, where each right point falls
in it) are precomputed, so a weighting costs ``log2(n)`` rounds of gather, cumulative sum
and gather over a batch of weightings: O(n log n) per resample, vectorised, in exact
integer arithmetic (the counts, hence the results, do not depend on the batch).

References: docs/methods.md sec. 1 and 11.1; Knight (1966) for the O(n log n) tau.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# Coefficients that are functions of Kendall's pair counts.
WEIGHTED_PAIR_COEFFICIENTS: tuple[str, ...] = ("kendall", "pairwise-accuracy")


@dataclass(frozen=True)
class WeightedPairCounts:
    """Weighted pair counts of a batch of weightings, each an int64 array of shape (b,).

    ``total`` pairs of weighted copies, ``concordant``, ``discordant``, ``tied_x`` (tied in x,
    whatever z), ``tied_z`` (tied in z, whatever x), ``tied_both`` (tied in both, copies of
    one point included).
    """

    total: np.ndarray
    concordant: np.ndarray
    discordant: np.ndarray
    tied_x: np.ndarray
    tied_z: np.ndarray
    tied_both: np.ndarray

    def kendall(self) -> np.ndarray:
        """Kendall's tau-b, ``(P - Q) / sqrt((n0 - n1)(n0 - n2))``; NaN when undefined."""
        numerator = (self.concordant - self.discordant).astype(np.float64)
        denominator = (self.total - self.tied_x).astype(np.float64) * (self.total - self.tied_z).astype(np.float64)
        out = np.full(numerator.shape, np.nan)
        np.divide(numerator, np.sqrt(denominator), out=out, where=denominator > 0)
        return np.where(denominator > 0, np.clip(out, -1.0, 1.0), np.nan)

    def pairwise_accuracy(self) -> np.ndarray:
        """``(P + T_both) / n0`` (ties in both count as agreement); NaN without a pair."""
        out = np.full(self.total.shape, np.nan)
        np.divide((self.concordant + self.tied_both).astype(np.float64), self.total.astype(np.float64), out=out,
                  where=self.total > 0)
        return out


class PairCounter:
    """Precomputed O(n log n) structure for weighted Kendall pair counts of fixed points.

    Parameters
    ----------
    x, z : array_like, shape (n,)
        The points. A point with a NaN coordinate must get weight 0 (it is placed but
        never counted).
    """

    def __init__(self, x: np.ndarray, z: np.ndarray):
        x = np.asarray(x, dtype=np.float64).ravel()
        z = np.asarray(z, dtype=np.float64).ravel()
        if x.shape != z.shape:
            raise ValueError(f"x and z must have the same length; got {x.size} and {z.size}")
        n = x.size
        self.n = n
        self._x, self._z = x, z
        # NaN sorts last and equal to itself: harmless, such points carry weight 0.
        order = np.lexsort((z, x))
        self.order = order
        xs, zs = x[order], z[order]
        zrank = _dense_rank(zs)
        self.x_starts = _run_starts(xs)
        self.xz_starts = _run_starts(xs, zs)
        self.z_order = np.argsort(zrank, kind="stable")
        self.z_starts = _run_starts(zrank[self.z_order])
        self.levels = []
        positions = np.arange(n)
        half = 1
        radix = int(zrank.max(initial=0)) + 2
        while half < n:
            block = positions // (2 * half)
            in_left = (positions % (2 * half)) < half
            left = positions[in_left]
            right = positions[~in_left]
            keys = block[left] * radix + zrank[left]
            sort = np.argsort(keys, kind="stable")
            left_sorted, keys_sorted = left[sort], keys[sort]
            # For a right point v: the left points of its block with z < z_v are a prefix of the
            # block's z-sorted left run, from ``start`` to ``stop`` in the concatenated runs.
            stop = np.searchsorted(keys_sorted, block[right] * radix + zrank[right], side="left")
            start = np.searchsorted(keys_sorted, block[right] * radix, side="left")
            keep = stop > start  # right points with no smaller-z left point add nothing
            self.levels.append((left_sorted, right[keep], start[keep], stop[keep]))
            half *= 2

    def counts(self, weights: np.ndarray, *, concordant: np.ndarray | None = None) -> WeightedPairCounts:
        """Pair counts for each row of ``weights`` (shape (b, n), non-negative integers).

        ``concordant``, when known (see :meth:`complement_concordant`), skips the O(n log n) part.
        """
        w = np.asarray(weights)
        if w.ndim != 2 or w.shape[1] != self.n:
            raise ValueError(f"weights must have shape (b, {self.n}); got {w.shape}")
        if w.dtype.kind not in "iub":
            w = w.astype(np.int64)
        w = w[:, self.order]  # gathered in the caller's (often int8) type: less memory traffic
        total_w = w.sum(axis=1, dtype=np.int64)
        binary = w.size == 0 or int(w.max()) <= 1
        tied_x = _tied(w, self.x_starts, binary)
        tied_both = _tied(w, self.xz_starts, binary)
        tied_z = _tied(w[:, self.z_order], self.z_starts, binary)
        total = total_w * (total_w - 1) // 2
        if concordant is None:
            # Pairs tied in x with z_u < z_v sit in one x run, ordered by z: ``_below`` counted them.
            concordant = self._below(w, total_w) - (tied_x - tied_both)
        discordant = total - concordant - tied_x - tied_z + tied_both
        return WeightedPairCounts(total, concordant, discordant, tied_x, tied_z, tied_both)

    def concordance_vector(self, weights: np.ndarray) -> np.ndarray:
        """For one weighting ``W`` (shape (n,)): per point, the weight of its concordant partners (``A W``)."""
        w = np.asarray(weights, dtype=np.int64)
        if not hasattr(self, "_mirror"):
            self._mirror = PairCounter(-self._x, -self._z)  # earlier in its order = later here, larger z
        # Partners in the same x run with a different z are counted on one of the two sides; not concordant.
        ws = w[self.order]
        same_x = np.empty(self.n, dtype=np.int64)
        same_x[self.order] = _run_totals(ws, self.x_starts) - _run_totals(ws, self.xz_starts)
        return self._below_vector(w) + self._mirror._below_vector(w) - same_x

    def complement_concordant(self, w_first: np.ndarray, concordant_first: np.ndarray, total: int,
                              vector: np.ndarray) -> np.ndarray:
        """Concordant count of ``W - w`` for 0/1 weightings: ``P(W) + P(w) - w . (A W)``.

        ``total`` is ``P(W)`` and ``vector`` is :meth:`concordance_vector` of ``W``.
        """
        return total + concordant_first - np.asarray(w_first, dtype=np.int64) @ vector

    def _below_vector(self, w: np.ndarray) -> np.ndarray:
        """Per point (original order): weight of the points before it in (x, z) order with a smaller z."""
        ws = w[self.order]
        out = np.zeros(self.n, dtype=np.int64)
        for left_sorted, right, start, stop in self.levels:
            cum = np.concatenate([[0], np.cumsum(ws[left_sorted])])
            out[right] += cum[stop] - cum[start]
        result = np.empty(self.n, dtype=np.int64)
        result[self.order] = out
        return result

    def _below(self, w: np.ndarray, total_w: np.ndarray) -> np.ndarray:
        b = w.shape[0]
        below = np.zeros(b, dtype=np.int64)  # pairs u before v (sorted by x, z) with z_u < z_v
        # Every partial sum below is at most total_w ** 2: int32 (half the memory traffic) when that fits.
        narrow = b == 0 or int(total_w.max()) ** 2 < 2**31
        dtype = np.int32 if narrow else np.int64
        wd = w.astype(dtype)
        cum = np.empty((b, self.n + 1), dtype=dtype)
        for left_sorted, right, start, stop in self.levels:
            c = cum[:, : left_sorted.size + 1]
            c[:, 0] = 0
            np.cumsum(wd[:, left_sorted], axis=1, out=c[:, 1:])
            below += np.einsum("bi,bi->b", wd[:, right], c[:, stop] - c[:, start])
        return below


def _dense_rank(values: np.ndarray) -> np.ndarray:
    return np.unique(values, return_inverse=True)[1].astype(np.int64)


def _run_starts(*sorted_columns: np.ndarray) -> np.ndarray:
    """Start indices of runs of equal rows in columns sorted together (NaN equals NaN)."""
    n = sorted_columns[0].size
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for col in sorted_columns:
        a, b = col[1:], col[:-1]
        change[1:] |= ~((a == b) | (np.isnan(a) & np.isnan(b)))
    return np.flatnonzero(change)


def _tied(w: np.ndarray, starts: np.ndarray, binary: bool = False) -> np.ndarray:
    """Sum over runs of ``s (s - 1) / 2``, ``s`` a run's total weight."""
    if starts.size == 0 or (binary and starts.size == w.shape[1]):
        return np.zeros(w.shape[0], dtype=np.int64)  # no run holds two copies
    if starts.size == w.shape[1]:
        sums = w.astype(np.int64)
    else:
        sums = np.add.reduceat(w, starts, axis=1, dtype=np.int64)
    return (sums * (sums - 1) // 2).sum(axis=1)


def weighted_coefficient(counts: WeightedPairCounts, coefficient: str) -> np.ndarray:
    """Kendall's tau-b or pairwise accuracy from weighted pair counts."""
    if coefficient == "kendall":
        return counts.kendall()
    if coefficient == "pairwise-accuracy":
        return counts.pairwise_accuracy()
    raise ValueError(f"coefficient must be one of {WEIGHTED_PAIR_COEFFICIENTS}; got {coefficient!r}")


def _run_totals(w: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per point, the total weight of its run minus its own weight (its partners in the run)."""
    sums = np.add.reduceat(w, starts)
    lengths = np.diff(np.append(starts, w.size))
    return np.repeat(sums, lengths) - w
