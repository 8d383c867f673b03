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

import weakref
from dataclasses import dataclass

import numpy as np


# Coefficients that are functions of Kendall's pair counts.
WEIGHTED_PAIR_COEFFICIENTS: tuple[str, ...] = ("kendall", "pairwise-accuracy")

# Coarse ranks per point up to which the recursion subtracts the earlier blocks' weight per block (O(ranks) per
# level) rather than gathering it per point (O(n)); both count the same pairs.
_BLOCK_OFFSETS_SHARE = 1 / 16
# Coarse ranks up to which the earlier blocks' subtraction is one (K, K) matrix product (at most 2 MB).
_OFFSETS_MATRIX_RANKS = 512
# Each counter's coarse ranks per point (caller's order), by hash: equal ones become one array.
_COARSE_RANKS: "weakref.WeakValueDictionary[int, np.ndarray]" = weakref.WeakValueDictionary()


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
        # score has a few hundred at most, a metric's is nearly continuous), so recurse over the coarser one. The
        # callers' z is the coordinate their counters share (the human, against every metric): it stays coarse
        # up to one extra level, so that what depends on the coarse ranks alone is computed once for all of them.
        self.coarse_is_x = 2 * (int(xrank.max(initial=0)) + 1) <= int(zrank.max(initial=0)) + 1
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
        # Every level's upper points and their stops, none dropped: the packed plan's slots (built on first use).
        # With per-block offsets the levels drop none: they are the levels' own.
        uppers = []
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
                uppers.append((right, stop))
                # Nearly continuous coarse ranks: per-block totals would cost a pass of their own per level;
                # gather each upper point's block start instead, and drop the points with nothing below.
                start = np.searchsorted(keys[sort], block[right] * radix, side="left")
                keep = stop > start
                self.levels.append((lower[sort], right[keep], stop[keep], start[keep], half))
            half *= 2
        # Every gather of ``counts`` reads the weights in the caller's order: no per-call reordering pass.
        self._gathers = [(order[lower], order[right], stop, start, half)
                         for lower, right, stop, start, half in self.levels]
        self._uppers = ([(right, stop) for _, right, stop, _, _ in self._gathers] if self.block_offsets
                        else [(order[right], stop) for right, stop in uppers])
        self._fine_members = order[self.fine_ties.members]
        self._both_members = order[self.both_ties.members]
        self._fine_ends, self._both_ends = (_run_ends(runs.starts, runs.members.size)
                                            for runs in (self.fine_ties, self.both_ties))
        self._coarse_ends = _run_ends(self.coarse_starts, n)
        self._fine_indicator, self._both_indicator = (np.bincount(members, minlength=n).astype(np.float64)
                                                      for members in (self._fine_members, self._both_members))
        # All levels' earlier-blocks subtraction is one quadratic form of the coarse ranks' totals,
        # ``t M t``: M[r, r'] counts the levels where rank r is in a block's upper half and r' in the lower half of
        # an earlier block. Exact in float64: every term and partial sum is an integer below total_w ** 2 < 2 ** 53.
        self._offsets = None
        self._plan = None
        rank = np.empty(n, dtype=np.intp)
        rank[order] = coarse
        self._coarse_key = hash(rank.tobytes())
        # Counters of the same coarse ranks per point (metrics against one human) hold one array: PreparedWeights
        # recognises them by identity.
        known = _COARSE_RANKS.get(self._coarse_key)
        self._coarse_rank = known if known is not None and np.array_equal(known, rank) else rank
        _COARSE_RANKS[self._coarse_key] = self._coarse_rank
        if self.block_offsets and self.levels and n_coarse <= _OFFSETS_MATRIX_RANKS:
            ranks = np.arange(n_coarse)
            m = np.zeros((n_coarse, n_coarse))
            for *_, half in self.levels:
                blk, up = ranks // (2 * half), (ranks % (2 * half)) >= half
                m += up[:, None] & ~up[None, :] & (blk[None, :] < blk[:, None])
            self._offsets = m

    def counts(self, weights: "np.ndarray | PreparedWeights", *, concordant: np.ndarray | None = None,
               rank_totals: np.ndarray | None = None,
               run_sums: tuple[np.ndarray, np.ndarray] | None = None) -> WeightedPairCounts:
        """Pair counts for each row of ``weights`` (shape (b, n), non-negative integers, in the points' order).

        ``weights`` may be a :class:`PreparedWeights`: counters of the same points' weightings (several metrics
        against one human score) then share its packed words and whatever depends on the coarse ranks alone.
        ``concordant``, when known (see :meth:`complement_concordant`), skips the O(n log K) part;
        ``rank_totals`` (b, K), when known (:meth:`rank_totals`), skips a pass over the weights; ``run_sums``, when
        known for 0/1 weights (:meth:`run_sums`), skips the tied points' gathers.
        """
        prepared = weights if isinstance(weights, PreparedWeights) else PreparedWeights(weights)
        if prepared.n != self.n:
            raise ValueError(f"weights must have shape (b, {self.n}); got {prepared.shape}")
        w, total_w, top, acc = prepared.w, prepared.total_w, prepared.top, prepared.acc
        if run_sums is not None and top > 1:
            raise ValueError("run_sums needs 0/1 weights")
        # Several weightings per uint64 word when each one's total fits a lane (every partial sum below does).
        packed = None
        if concordant is None or rank_totals is None or run_sums is None:
            packed = prepared.packed()
        # Pairs of copies of one point are tied in x, in z and in both: sum of w (w - 1) / 2, at most total_w ** 2.
        own = prepared.own()
        tied_coarse = None
        if rank_totals is None:
            rank_totals, tied_coarse = prepared.by_coarse_ranks(self)
        if tied_coarse is None:
            tied_coarse = (rank_totals * (rank_totals - 1) // 2).sum(axis=1)
        if run_sums is not None:
            tied_fine, tied_both = ((sums * (sums - 1) // 2).sum(axis=1) for sums in run_sums)
        else:
            tied_fine, tied_both = (
                _tied(w, members, runs.starts, own, top) if packed is None
                else _tied_packed(packed, members, ends, own, top, indicator)
                for members, runs, ends, indicator in (
                    (self._fine_members, self.fine_ties, self._fine_ends, self._fine_indicator),
                    (self._both_members, self.both_ties, self._both_ends, self._both_indicator)))
        tied_x, tied_z = (tied_coarse, tied_fine) if self.coarse_is_x else (tied_fine, tied_coarse)
        total = total_w * (total_w - 1) // 2
        if concordant is None:
            concordant = self._below(w, rank_totals, acc, packed, prepared)
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
        lane_bits = _lane_bits(w.sum(axis=1, dtype=np.int64)) if w.dtype.kind in "iub" else None
        if lane_bits is not None:
            packed = _PackedWeights(w, lane_bits)
            return packed.segment_sums(self._fine_members, self._fine_ends), \
                packed.segment_sums(self._both_members, self._both_ends)
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

    def _below(self, w: np.ndarray, rank_totals: np.ndarray, acc=np.int64,
               packed: "_PackedWeights | None" = None, prepared: "PreparedWeights | None" = None) -> np.ndarray:
        """Concordant pairs (smaller in both coordinates) of weightings ``w`` (in the points' order).

        ``rank_totals`` (b, K): the weight of each coarse rank; ``acc``: a type holding every partial sum;
        ``packed``: the same weightings packed (:class:`_PackedWeights`), when their totals fit a lane.
        """
        b = w.shape[0]
        below = np.zeros(b, dtype=np.int64)
        if self.n == 0 or not self.levels:
            return below
        if packed is not None:
            return self._below_packed(packed, w, rank_totals, prepared)
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


    def _packed_plan(self) -> "_PackedPlan":
        if self._plan is None:
            self._plan = _PackedPlan(self)
        return self._plan

    def _below_packed(self, packed: "_PackedWeights", w: np.ndarray, rank_totals: np.ndarray,
                      prepared: "PreparedWeights | None" = None) -> np.ndarray:
        """:meth:`_below` on packed weightings (docs/methods.md sec. 16.1).

        Per level the lower points' weights are gathered in (block, fine) order and summed cumulatively, all levels
        in one array; each point then sums the values at its ``stop`` of every level where it is an upper point,
        less, from the coarse ranks' totals, what those values hold beyond its block's lower half (all earlier
        levels' lower points and the earlier blocks' lower halves); one product with its own weight per weighting
        gives the concordant count. Every step before the product adds packed words, exact modulo 2 ** 64, and each
        point's final sum (the weight of the points below it, at most the total) fits its lane: it decodes exactly.
        """
        plan = self._packed_plan()
        b = w.shape[0]

        def surplus():
            out = np.zeros((packed.words * packed.lanes, plan.n_coarse), dtype=np.int64)
            out[:b] = plan.surplus(rank_totals)
            return np.negative(packed.pack(out))

        # A function of the coarse ranks' totals alone: shared by the counters of the same coarse ranks.
        surplus = surplus() if prepared is None else prepared.shared(self, "surplus", surplus)
        sums = np.empty((packed.words, self.n), dtype=np.uint64)
        values = np.empty(plan.n_coarse + 1 + plan.lower.size, dtype=np.uint64)
        values[plan.n_coarse] = 0
        for k in range(packed.words):
            values[: plan.n_coarse] = surplus[k]
            np.cumsum(np.take(packed.data[k], plan.lower), out=values[plan.n_coarse + 1:])
            at = 0
            for slots in plan.groups:
                np.add.reduce(np.take(values, slots), axis=0, out=sums[k, at: at + slots.shape[1]])
                at += slots.shape[1]

        def weights():
            return np.take(packed.floats(), plan.order, axis=1)

        # The points' weights in the grouped order depend on the coarse ranks alone.
        mine = weights() if prepared is None else prepared.shared(self, "grouped", weights)
        # Every partial sum of the products is an integer below total ** 2 < 2 ** 53: exact in any order.
        product = np.vecdot(packed.decode(sums, np.float64), mine)
        return np.rint(product).astype(np.int64)


class _PackedPlan:
    """Index arrays of :meth:`PairCounter._below_packed`, built once per counter.

    ``lower``: every level's lower points (caller's order of the weights), each level in (block, fine) order,
    levels concatenated; their running sum is stored after ``n_coarse + 1`` values (the coarse ranks' corrections
    and a zero). A point's slots are its coarse rank's correction and, for each level where it is an upper point
    (the levels of its rank's 1 bits), the running sum at its ``stop``. The points are grouped by their number of
    slots: ``groups`` holds per group the (slots, points) index array, so that a point's sum is a plain sum over
    the rows; ``order`` is the points' order after grouping, by coarse rank within a group (a function of the coarse
    ranks alone). :meth:`surplus` gives per coarse rank the weight its slots counted and must not (earlier levels,
    earlier blocks).

    Every upper point has its slot, even with nothing below it in its block (the unpacked recursion on nearly
    continuous ranks drops those): the correction is per coarse rank, so all points of a rank read the same levels.
    """

    def __init__(self, counter: "PairCounter"):
        n, k = counter.n, counter.coarse_starts.size
        self.n_coarse = k
        rank = counter._coarse_rank
        self.halves = []
        targets = np.full((len(counter._gathers), n), -1, dtype=np.intp)
        start = k
        lowers = []
        for level, ((lower, *_, half), (right, stop)) in enumerate(zip(counter._gathers, counter._uppers)):
            targets[level, right] = start + stop
            lowers.append(lower)
            start += lower.size
            self.halves.append(half)
        self.lower = np.concatenate(lowers) if lowers else np.zeros(0, dtype=np.intp)
        uppers = (targets >= 0).sum(axis=0)
        self.groups, members = [], []
        for count in range(targets.shape[0] + 1):
            points = np.flatnonzero(uppers == count)
            if points.size == 0:
                continue
            # By coarse rank: a level's slots then fall in few blocks at a time (1.5x faster gathers on WMT22).
            points = points[np.argsort(rank[points], kind="stable")]
            chosen = targets[:, points]
            # Each column holds ``count`` slots: read column by column, then one row per slot.
            slots = chosen.T[chosen.T >= 0].reshape(points.size, count).T
            self.groups.append(np.vstack([rank[points][None, :], slots]))
            members.append(points)
        self.order = np.concatenate(members)

    def surplus(self, rank_totals: np.ndarray) -> np.ndarray:
        """(b, K) int64: per coarse rank, the weight its slots counted beyond its block's lower half.

        At a level where rank r is upper, its slot's running sum holds every lower point of the earlier levels and
        the lower halves of the earlier blocks of this level: per level a running total and a prefix sum over the
        blocks, O(K) per level, exact integers. The ranks are padded to a power of two, so that a level's blocks
        and halves are a reshape (views, no index arrays).
        """
        t = np.asarray(rank_totals, dtype=np.int64)
        b, k = t.shape
        size = 1 << max(k - 1, 0).bit_length()
        padded = np.zeros((b, size), dtype=np.int64)
        padded[:, :k] = t
        out = np.zeros((b, size), dtype=np.int64)
        earlier = np.zeros((b, 1, 1), dtype=np.int64)  # the lower points of the earlier levels
        for half in self.halves:
            blocks = padded.reshape(b, size // (2 * half), 2, half)
            per_block = blocks[:, :, 0, :].sum(axis=2)
            before = np.cumsum(per_block, axis=1) - per_block  # the lower halves of the earlier blocks
            out.reshape(b, size // (2 * half), 2, half)[:, :, 1, :] += earlier + before[:, :, None]
            earlier += per_block.sum(axis=1)[:, None, None]
        return out[:, :k]


class PreparedWeights:
    """A batch of weightings (b, n) of the same n points, prepared once for every :class:`PairCounter` of them.

    Counters of several metrics against one human score, on the same cells, count the same weightings: the
    integer checks, the packed words (:class:`_PackedWeights`), the copies-of-one-point ties and, for counters
    with the same coarse ranks (the human's), the ranks' totals and the recursion's corrections are computed once.

    References: docs/methods.md sec. 16.1 ("Packed weightings").
    """

    def __init__(self, weights: np.ndarray):
        w = np.asarray(weights)
        if w.ndim != 2:
            raise ValueError(f"weights must have shape (b, n); got {w.shape}")
        if w.dtype.kind not in "iub":
            w = w.astype(np.int64)
        self.shape, self.n = w.shape, w.shape[1]
        total_w = w.sum(axis=1, dtype=np.int64)
        # Every partial sum is at most total_w ** 2: int32 (half the memory traffic of int64) when that fits.
        self.acc = np.int32 if w.shape[0] == 0 or int(total_w.max()) ** 2 < 2**31 else np.int64
        self.top = top = int(w.max()) if w.size else 0
        # The gathers cost less per element on narrower types: int8 weights whenever they fit.
        if top <= 127:
            w = w.view(np.int8) if w.dtype.itemsize == 1 else w.astype(np.int8)
        else:
            w = w.astype(self.acc, copy=False)
        self.w, self.total_w = w, total_w
        self._packed = self._own = None
        self._lane_bits = _lane_bits(total_w)
        self._shared: dict = {}

    def packed(self) -> "_PackedWeights | None":
        """The weightings packed several to a word, when each one's total fits a lane; else None."""
        if self._packed is None and self._lane_bits is not None:
            self._packed = _PackedWeights(self.w, self._lane_bits)
        return self._packed

    def own(self) -> np.ndarray:
        """Per weighting, the pairs of copies of one point: sum of ``w (w - 1) / 2``."""
        if self._own is None:
            if self.top <= 1:
                self._own = np.zeros(self.shape[0], dtype=np.int64)
            elif self.packed() is not None:
                self._own = (self.packed().squares().sum(axis=1).astype(np.int64) - self.total_w) // 2
            else:
                self._own = (np.einsum("bi,bi->b", self.w, self.w, dtype=np.int64) - self.total_w) // 2
        return self._own

    def shared(self, counter: "PairCounter", name: str, compute):
        """``compute()``, kept for every counter with the same coarse ranks per point as ``counter``."""
        key = (name, counter._coarse_key)
        kept = self._shared.get(key)
        if kept is not None and (kept[0] is counter._coarse_rank or np.array_equal(kept[0], counter._coarse_rank)):
            return kept[1]
        value = compute()
        self._shared[key] = (counter._coarse_rank, value)
        return value

    def by_coarse_ranks(self, counter: "PairCounter") -> tuple[np.ndarray, np.ndarray]:
        """(b, K) totals of ``counter``'s coarse ranks and the pairs tied in them, (b,)."""
        def compute():
            packed = self.packed()
            totals = (counter.rank_totals(self.w) if packed is None
                      else packed.segment_sums(counter.order, counter._coarse_ends))
            return totals, (totals * (totals - 1) // 2).sum(axis=1)

        return self.shared(counter, "coarse", compute)


def _lane_bits(total_w: np.ndarray) -> int | None:
    """Bits per packed weighting (16 or 32) when every weighting's total fits one lane, else None."""
    if total_w.size == 0:
        return None
    top = int(total_w.max())
    if top < 2**16:
        return 16
    # The concordant count's products are summed in float64: exact below 2 ** 53 (total ** 2).
    return 32 if top < 2**26 else None


class _PackedWeights:
    """Weightings (b, n) of non-negative integers packed ``64 / lane_bits`` to a uint64 word per point.

    Lane ``l`` of word ``k`` holds weighting ``k * lanes + l`` (missing rows: 0). A gather, cumulative sum or
    segment sum of the words then moves several weightings per element. They only add words, exactly modulo
    2 ** 64, so a sum decodes lane by lane whenever each weighting's own sum lies in ``[0, 2 ** lane_bits)``
    (:func:`_lane_bits` checks the totals); an intermediate lane may overflow into the next, as long as the
    final sums fit.
    """

    def __init__(self, w: np.ndarray, lane_bits: int):
        b, n = w.shape
        self.b, self.n = b, n
        self.lanes = 64 // lane_bits
        self.lane_bits = lane_bits
        self.lane_type = np.dtype(f"uint{lane_bits}")
        self.words = -(-b // self.lanes)
        self._w = w
        self._floats = self._squares = None
        # Row by row into the interleaved layout: 3-5x cheaper than numpy's transposing copy of the batch.
        spread = np.zeros((self.words, n, self.lanes), dtype=self.lane_type)
        for row in range(b):
            spread[row // self.lanes, :, row % self.lanes] = w[row]
        self.data = spread.view(np.uint64).reshape(self.words, n)

    def floats(self) -> np.ndarray:
        """(b, n) float64 weights."""
        if self._floats is None:
            self._floats = self._w.astype(np.float64)
        return self._floats

    def squares(self) -> np.ndarray:
        """(b, n) float64 squared weights (exact: below 2 ** 53)."""
        if self._squares is None:
            self._squares = np.square(self.floats())
        return self._squares

    def pack(self, values: np.ndarray) -> np.ndarray:
        """(words * lanes, m) int64 -> (words, m) words: ``sum over lanes of value << (lane * lane_bits)`` modulo
        2 ** 64 (a value may exceed its lane: only sums of words are decoded)."""
        rows, m = values.shape
        spread = values.astype(np.uint64).reshape(self.words, self.lanes, m)
        shifts = (np.arange(self.lanes, dtype=np.uint64) * np.uint64(self.lane_bits))[None, :, None]
        return (spread << shifts).sum(axis=1, dtype=np.uint64)

    def decode(self, sums: np.ndarray, dtype) -> np.ndarray:
        """(words, m) words of sums that fit their lanes -> (b, m) of ``dtype``."""
        m = sums.shape[1]
        out = np.empty((self.words, self.lanes, m), dtype=dtype)
        out[...] = sums.view(self.lane_type).reshape(self.words, m, self.lanes).transpose(0, 2, 1)
        return out.reshape(self.words * self.lanes, m)[: self.b]

    def segment_sums(self, members: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """(b, runs) int64: per run of ``members`` (last member of each run at ``ends``), its total weight."""
        if ends.size == 0:
            return np.zeros((self.b, 0), dtype=np.int64)
        sums = np.empty((self.words, ends.size), dtype=np.uint64)
        for k in range(self.words):
            _segment_sums(np.take(self.data[k], members), ends, sums[k])
        return self.decode(sums, np.int64)


def _segment_sums(values: np.ndarray, ends: np.ndarray, out: np.ndarray) -> None:
    """Sums of consecutive runs of ``values`` (uint64 words), the last element of each run at ``ends``: a running
    sum read at the ends (numpy's ``reduceat`` costs ~4x more on runs of a few elements)."""
    running = np.cumsum(values, out=values)
    np.take(running, ends, out=out)
    out[1:] -= out[:-1].copy()


def _tied_packed(packed: _PackedWeights, members: np.ndarray, ends: np.ndarray, own: np.ndarray, top: int,
                 indicator: np.ndarray) -> np.ndarray:
    """:func:`_tied` from packed weightings; ``indicator`` (n,) float64 marks the members."""
    if members.size == 0:
        return own.copy()
    sums = packed.segment_sums(members, ends)
    tied = own + (sums * (sums - 1) // 2).sum(axis=1)
    if top > 1:
        # Members' own copies are inside their runs' sums: replace their share of ``own``. The squares' sum is an
        # integer below 2 ** 53: exact in float64 in any order. A gather when the members are few, else a product.
        squares = (np.take(packed.squares(), members, axis=1).sum(axis=1) if 8 * members.size < packed.n
                   else packed.squares() @ indicator)
        tied -= (np.rint(squares).astype(np.int64) - sums.sum(axis=1)) // 2
    return tied


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


def _run_ends(starts: np.ndarray, size: int) -> np.ndarray:
    """Index of the last element of each run, from the runs' starts (no run without an element)."""
    return np.append(starts[1:], size).astype(np.intp) - 1 if size else np.zeros(0, dtype=np.intp)


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

