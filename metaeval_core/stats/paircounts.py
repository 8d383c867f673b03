"""Kendall pair counts of many weightings of one fixed point set, in O(n log K) per weighting.

A bootstrap resample of cells is the original cells with multiplicities, and a cell-swap
permutation of X and Y picks, per cell, the X point or the Y point of a fixed set of 2n
points. Either way every resample is a *weighting* ``w`` of points fixed in advance, and
Kendall's pair counts of the resample are weighted pair counts of those points, each pair
of copies counting ``w_u w_v`` times (two copies of one point are tied in both scores).

The concordant count is a recursion over the rank ranges of the coordinate with fewer distinct
values (``K``: a human score has a few hundred, a metric's is nearly continuous): the points are
sorted once by (coarse rank, fine rank), and each of ``ceil(log2 K)`` levels counts, for the points
of the upper half of each block of coarse ranks, the lower-half points with a smaller fine rank,
with precomputed index arrays: a gather, a cumulative sum and a gather per level over a batch of
weightings, O(n log K) per resample, in exact integer arithmetic (the counts, hence the results,
do not depend on the batch).

References: docs/methods.md sec. 1, 11.1 and 16.1; Knight (1966) for the O(n log n) tau.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# Coefficients that are functions of Kendall's pair counts.
WEIGHTED_PAIR_COEFFICIENTS: tuple[str, ...] = ("kendall", "pairwise-accuracy")

# Coarse ranks per point up to which the recursion subtracts the earlier blocks' weight per block (O(ranks) per
# level) rather than gathering it per point (O(n)); both count the same pairs.
_BLOCK_OFFSETS_SHARE = 1 / 16
# Coarse ranks up to which the earlier blocks' subtraction is one (K, K) matrix product (at most 2 MB).
_OFFSETS_MATRIX_RANKS = 512


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
    """Precomputed O(n log K) structure for weighted Kendall pair counts of fixed points.

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
        # NaN ranks last and equal to itself: harmless, such points carry weight 0.
        xrank, zrank = _dense_rank(x), _dense_rank(z)
        # The recursion halves rank ranges of one coordinate: log2 of its distinct values levels (a human
        # score has a few hundred at most, a metric's is nearly continuous), so recurse over the coarser one.
        self.coarse_is_x = int(xrank.max(initial=0)) <= int(zrank.max(initial=0))
        coarse, fine = (xrank, zrank) if self.coarse_is_x else (zrank, xrank)
        order = np.lexsort((fine, coarse))
        self.order = order
        coarse, fine = coarse[order], fine[order]
        # Runs of points tied in the fine coordinate and in both; the coarse coordinate's runs are its ranks'
        # totals, which the recursion uses too.
        self.fine_ties = _Runs.of(fine)
        self.both_ties = _Runs.of(coarse * (int(fine.max(initial=0)) + 1) + fine)
        self.coarse_starts = _run_starts(coarse)  # per coarse rank (0..K-1, all present) its run in this order
        self.levels = []
        positions = np.arange(n)
        half = 1
        radix = int(fine.max(initial=0)) + 2
        n_coarse = self.coarse_starts.size
        self.block_offsets = n_coarse <= _BLOCK_OFFSETS_SHARE * n
        while half < n_coarse:
            # Blocks of 2 * half coarse ranks: a point of a block's upper half is concordant with the points of
            # its lower half with a smaller fine rank; every such pair is counted at exactly one level.
            block = coarse // (2 * half)
            upper = (coarse % (2 * half)) >= half
            lower = positions[~upper]
            keys = block[lower] * radix + fine[lower]
            sort = np.argsort(keys, kind="stable")
            # For an upper point v: the lower points of its block with a smaller fine rank end at ``stop`` in the
            # blocks' fine-sorted lower runs, concatenated; the lower weight of the earlier blocks is subtracted
            # per block (from the coarse ranks' totals) rather than gathered per point.
            right = positions[upper]
            stop = np.searchsorted(keys[sort], block[right] * radix + fine[right], side="left")
            if self.block_offsets:
                self.levels.append((lower[sort], right, stop, None, half))
            else:
                # Nearly continuous coarse ranks: per-block totals would cost a pass of their own per level;
                # gather each upper point's block start instead, and drop the points with nothing below.
                start = np.searchsorted(keys[sort], block[right] * radix, side="left")
                keep = stop > start
                self.levels.append((lower[sort], right[keep], stop[keep], start[keep], half))
            half *= 2
        # Every gather of ``counts`` reads the weights in the caller's order: no per-call reordering pass.
        self._gathers = [(order[lower], order[right], stop, start, half)
                         for lower, right, stop, start, half in self.levels]
        self._fine_members = order[self.fine_ties.members]
        self._both_members = order[self.both_ties.members]
        # All levels' earlier-blocks subtraction is one quadratic form of the coarse ranks' totals,
        # ``t M t``: M[r, r'] counts the levels where rank r is in a block's upper half and r' in the lower half of
        # an earlier block. Exact in float64: every term and partial sum is an integer below total_w ** 2 < 2 ** 53.
        self._offsets = None
        if self.block_offsets and self.levels and n_coarse <= _OFFSETS_MATRIX_RANKS:
            ranks = np.arange(n_coarse)
            m = np.zeros((n_coarse, n_coarse))
            for *_, half in self.levels:
                blk, up = ranks // (2 * half), (ranks % (2 * half)) >= half
                m += up[:, None] & ~up[None, :] & (blk[None, :] < blk[:, None])
            self._offsets = m

    def counts(self, weights: np.ndarray, *, concordant: np.ndarray | None = None,
               rank_totals: np.ndarray | None = None,
               run_sums: tuple[np.ndarray, np.ndarray] | None = None) -> WeightedPairCounts:
        """Pair counts for each row of ``weights`` (shape (b, n), non-negative integers, in the points' order).

        ``concordant``, when known (see :meth:`complement_concordant`), skips the O(n log K) part;
        ``rank_totals`` (b, K), when known (:meth:`rank_totals`), skips a pass over the weights; ``run_sums``, when
        known for 0/1 weights (:meth:`run_sums`), skips the tied points' gathers.
        """
        w = np.asarray(weights)
        if w.ndim != 2 or w.shape[1] != self.n:
            raise ValueError(f"weights must have shape (b, {self.n}); got {w.shape}")
        if w.dtype.kind not in "iub":
            w = w.astype(np.int64)
        total_w = w.sum(axis=1, dtype=np.int64)
        # Every partial sum below is at most total_w ** 2: int32 (half the memory traffic of int64) when that fits.
        acc = np.int32 if w.shape[0] == 0 or int(total_w.max()) ** 2 < 2**31 else np.int64
        top = int(w.max()) if w.size else 0
        # The gathers dominate and cost less per element on narrower types: int8 weights whenever they fit.
        if top <= 127:
            w = w.view(np.int8) if w.dtype.itemsize == 1 else w.astype(np.int8)
        else:
            w = w.astype(acc, copy=False)
        # Pairs of copies of one point are tied in x, in z and in both: sum of w (w - 1) / 2, at most total_w ** 2.
        own = np.zeros(w.shape[0], dtype=np.int64) if top <= 1 else (
            np.einsum("bi,bi->b", w, w, dtype=np.int64) - total_w) // 2
        if rank_totals is None:
            rank_totals = self.rank_totals(w)
        tied_coarse = (rank_totals * (rank_totals - 1) // 2).sum(axis=1)
        if run_sums is not None:
            if top > 1:
                raise ValueError("run_sums needs 0/1 weights")
            tied_fine, tied_both = ((sums * (sums - 1) // 2).sum(axis=1) for sums in run_sums)
        else:
            tied_fine = _tied(w, self._fine_members, self.fine_ties.starts, own, top)
            tied_both = _tied(w, self._both_members, self.both_ties.starts, own, top)
        tied_x, tied_z = (tied_coarse, tied_fine) if self.coarse_is_x else (tied_fine, tied_coarse)
        total = total_w * (total_w - 1) // 2
        if concordant is None:
            concordant = self._below(w, rank_totals, acc)
        discordant = total - concordant - tied_x - tied_z + tied_both
        return WeightedPairCounts(total, concordant, discordant, tied_x, tied_z, tied_both)

    def rank_totals(self, weights: np.ndarray) -> np.ndarray:
        """(b, K) int64: each coarse rank's total weight, for weightings (b, n) in the points' order."""
        w = np.asarray(weights)
        if self.n == 0:
            return np.zeros((w.shape[0], 0), dtype=np.int64)
        return np.add.reduceat(np.take(w, self.order, axis=1), self.coarse_starts, axis=1, dtype=np.int64)

    def run_sums(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(b, runs) int64 weights of the runs of points tied in the fine coordinate, and in both.

        Linear in the weights: the runs of ``W - w`` are those of ``W`` minus those of ``w``.
        """
        w = np.asarray(weights)
        return tuple(np.add.reduceat(np.take(w, members, axis=1), runs.starts, axis=1, dtype=np.int64)
                     if members.size else np.zeros((w.shape[0], 0), dtype=np.int64)
                     for members, runs in ((self._fine_members, self.fine_ties), (self._both_members, self.both_ties)))

    def concordance_vector(self, weights: np.ndarray) -> np.ndarray:
        """For one weighting ``W`` (shape (n,)): per point, the weight of its concordant partners (``A W``)."""
        w = np.asarray(weights, dtype=np.int64)
        return self._below_vector(w) + self._above_vector(w)

    def complement_concordant(self, w_first: np.ndarray, concordant_first: np.ndarray, total: int,
                              vector: np.ndarray) -> np.ndarray:
        """Concordant count of ``W - w`` for 0/1 weightings: ``P(W) + P(w) - w . (A W)``.

        ``total`` is ``P(W)`` and ``vector`` is :meth:`concordance_vector` of ``W``.
        """
        w_first, vector = np.asarray(w_first), np.asarray(vector)
        if w_first.shape[-1] * int(vector.max(initial=0)) < 2**53:
            # Integers below 2 ** 53 in float64: BLAS's product is exact in any order, 3x numpy's integer matmul.
            product = w_first.astype(np.float64) @ vector.astype(np.float64)
            return total + concordant_first - np.rint(product).astype(np.int64)
        return total + concordant_first - w_first @ vector

    def _below_vector(self, w: np.ndarray) -> np.ndarray:
        """Per point (original order): weight of the points smaller than it in both coordinates."""
        ws = w[self.order]
        starts = np.append(self.coarse_starts, self.n)
        rank_totals = np.add.reduceat(ws, self.coarse_starts) if self.n else np.zeros(0, dtype=np.int64)
        out = np.zeros(self.n, dtype=np.int64)
        ranks = np.repeat(np.arange(starts.size - 1), np.diff(starts))
        for left_sorted, right, stop, start, half in self.levels:
            cum = np.concatenate([[0], np.cumsum(ws[left_sorted])])
            if start is None:
                start_total = _lower_before(rank_totals[None], half)[0][ranks[right] // (2 * half)]
            else:
                start_total = cum[start]
            out[right] += cum[stop] - start_total
        result = np.empty(self.n, dtype=np.int64)
        result[self.order] = out
        return result

    def _above_vector(self, w: np.ndarray) -> np.ndarray:
        """Per point (original order): weight of the points larger than it in both coordinates.

        The same levels read the other way: a lower point at position i of its block's fine-sorted lower run is
        below the upper points of its block whose ``stop`` exceeds i. Each block's stops are shifted by the block
        index so that one suffix sum serves every block.
        """
        ws = w[self.order]
        starts = np.append(self.coarse_starts, self.n)
        ranks = np.repeat(np.arange(starts.size - 1), np.diff(starts))
        out = np.zeros(self.n, dtype=np.int64)
        for left_sorted, right, stop, _, half in self.levels:
            lower_block = ranks[left_sorted] // (2 * half)
            slots = left_sorted.size + int(lower_block.max(initial=0)) + int(ranks[right].max(initial=0)) + 2
            acc = np.zeros(slots + 1, dtype=np.int64)
            np.add.at(acc, stop + ranks[right] // (2 * half), ws[right])
            suffix = np.cumsum(acc[::-1])[::-1]  # suffix[j]: weight at slots >= j
            end = np.searchsorted(lower_block, lower_block, side="right")  # end of each lower point's block run
            i = np.arange(left_sorted.size)
            out[left_sorted] += suffix[i + lower_block + 1] - suffix[end + lower_block + 1]
        result = np.empty(self.n, dtype=np.int64)
        result[self.order] = out
        return result

    def _below(self, w: np.ndarray, rank_totals: np.ndarray, acc=np.int64) -> np.ndarray:
        """Concordant pairs (smaller in both coordinates) of weightings ``w`` (in the points' order).

        ``rank_totals`` (b, K): the weight of each coarse rank; ``acc``: a type holding every partial sum.
        """
        b = w.shape[0]
        below = np.zeros(b, dtype=np.int64)
        if self.n == 0 or not self.levels:
            return below
        cum = np.empty((b, self.n + 1), dtype=acc)
        for lower, right, stop, start, half in self._gathers:
            c = cum[:, : lower.size + 1]
            c[:, 0] = 0
            np.cumsum(np.take(w, lower, axis=1), axis=1, dtype=acc, out=c[:, 1:])
            upper_w = np.take(w, right, axis=1)
            if start is None:
                below += np.einsum("bi,bi->b", upper_w, np.take(c, stop, axis=1), dtype=acc)
                if self._offsets is None:
                    # Each upper point's ``stop`` also counted the lower points of the earlier blocks: subtracted
                    # once per block, its upper total times their lower total.
                    upper_totals = _block_halves(rank_totals, half)[:, :, 1]
                    below -= np.einsum("bk,bk->b", upper_totals, _lower_before(rank_totals, half))
            else:
                below += np.einsum("bi,bi->b", upper_w, np.take(c, stop, axis=1) - np.take(c, start, axis=1),
                                   dtype=acc)
        if self._offsets is not None:
            t = rank_totals.astype(np.float64)
            below -= np.rint(np.einsum("bk,bk->b", t @ self._offsets, t)).astype(np.int64)
        return below


def _tied(w: np.ndarray, members: np.ndarray, starts: np.ndarray, own: np.ndarray, top: int) -> np.ndarray:
    """Per row of ``w``: pairs of copies tied within runs of ``members`` (run starts ``starts``), given ``own``
    (copies of one point, which every grouping shares: a lone point's term needs no gather)."""
    if members.size == 0:
        return own.copy()
    wm = np.take(w, members, axis=1)
    sums = np.add.reduceat(wm, starts, axis=1, dtype=np.int64)
    # Members' own copies are inside their runs' sums: replace their share of ``own``.
    members_own = 0 if top <= 1 else (np.einsum("bi,bi->b", wm, wm, dtype=np.int64)
                                      - wm.sum(axis=1, dtype=np.int64)) // 2
    return own - members_own + (sums * (sums - 1) // 2).sum(axis=1)


def _block_halves(rank_totals: np.ndarray, half: int) -> np.ndarray:
    """(b, K) totals per coarse rank -> (b, blocks, 2): per block of ``2 half`` ranks, its lower and upper half."""
    b, k = rank_totals.shape
    n_blocks = -(-k // (2 * half))
    padded = np.zeros((b, n_blocks * 2 * half), dtype=rank_totals.dtype)
    padded[:, :k] = rank_totals
    return padded.reshape(b, n_blocks, 2, half).sum(axis=3)


def _lower_before(rank_totals: np.ndarray, half: int) -> np.ndarray:
    """(b, blocks): the lower halves' total weight of the blocks before each block."""
    lower = _block_halves(rank_totals, half)[:, :, 0]
    return np.cumsum(lower, axis=1) - lower


class _Runs:
    """Runs of tied points (equal key) among the points in a fixed order, for ``sum over runs s (s - 1) / 2``
    (:func:`_tied`).

    Only the points sharing their key with another are kept: a lone point's term ``w (w - 1) / 2`` is in the
    copies-of-one-point sum every grouping shares, so a nearly continuous score costs almost nothing.
    """

    def __init__(self, members: np.ndarray, starts: np.ndarray):
        self.members, self.starts = members, starts

    @classmethod
    def of(cls, key: np.ndarray) -> "_Runs":
        order = np.argsort(key, kind="stable")
        starts = _run_starts(key[order].astype(np.float64))
        lengths = np.diff(np.append(starts, key.size))
        in_long = np.repeat(lengths > 1, lengths)
        members = order[in_long]
        long_lengths = lengths[lengths > 1]
        return cls(members, np.concatenate([[0], np.cumsum(long_lengths)[:-1]]).astype(np.intp))


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


def weighted_coefficient(counts: WeightedPairCounts, coefficient: str) -> np.ndarray:
    """Kendall's tau-b or pairwise accuracy from weighted pair counts."""
    if coefficient == "kendall":
        return counts.kendall()
    if coefficient == "pairwise-accuracy":
        return counts.pairwise_accuracy()
    raise ValueError(f"coefficient must be one of {WEIGHTED_PAIR_COEFFICIENTS}; got {coefficient!r}")

