"""Input-level permutation of many metric pairs at once: a linear form in the swap bits.

For one input, a pair of systems (a, a') and the swap bits ``u = B_a``, ``v = B_a'``, the
swapped X compares ``T_c`` (c = 2u + v: X_a vs X_a', X_a vs Y_a', Y_a vs X_a', Y_a vs Y_a') and
the swapped Y compares the complementary outcome ``T_(3-c)``. Their difference, weighted by the
human's pair sign, is ``alpha (1 - u - v) + beta (u - v)`` with ``alpha = sz (T_0 - T_3)`` and
``beta = sz (T_2 - T_1)``: the ``u v`` terms cancel. So when an input's tie-b denominators cannot
change under swaps (every Z-valid system scored by both metrics and no two of the four compared
scores equal: the usual case for continuous metrics), Kendall's ``tau(Xs) - tau(Ys)`` and the
pairwise accuracy's difference are an integer *linear* form in the input's swap bits divided by
a constant of the input. Summed over inputs with equal constants, ``delta_s`` of every metric
pair for every resample is one product of the swap bits (resamples x cells) with an integer
coefficient matrix (cells x pairs): exact in float32 (so independent of the batch and of BLAS's
summation order), with the pairs sharing the draws. Inputs where a swap can create or break a
tie (identical outputs of two systems, integer scores, missing cells) keep the per-pair path:
Kendall's counts of every such input as a quadratic form ``const + B' Q B`` in its swap bits
(one batched product), the pairwise accuracy on the swapped columns. A table runs the shared
linear part once over the resamples and then each pair's tie-prone inputs over the same draws.

References: docs/methods.md sec. 3 and 16; Deutsch, Dror & Roth (TACL 2021) Algorithm 2.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from metaeval_core.stats.coefficients import coefficient_function, kendall_from_signs, pair_kernel_fits, pair_signs
from metaeval_core.stats.resampling import _kendall_from_counts

# Coefficients whose input-level difference under swaps is linear in the swap bits.
LINEAR_COEFFICIENTS: tuple[str, ...] = ("kendall", "pairwise-accuracy")


def _signs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sign(a - b) as int8; 0 where either is NaN."""
    return (a > b).astype(np.int8) - (a < b).astype(np.int8)


def _compared(valid: np.ndarray) -> np.ndarray:
    """(N, N, M): the system pairs (a, a'), a != a', both valid on an input, from ``valid`` (N, M)."""
    return valid[:, None, :] & valid[None, :, :] & ~np.eye(valid.shape[0], dtype=bool)[:, :, None]


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


class ColumnSwaps:
    """Per-input coefficients of the swapped X and Y on some inputs (the per-pair path)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, z: np.ndarray, coefficient: str):
        self.x, self.y, self.z, self.coefficient = x, y, z, coefficient
        if coefficient == "kendall":
            n, m = z.shape
            cx, qx = _kendall_swap_forms(x, y, z)
            cy, qy = _kendall_swap_forms(y, x, z)
            q = np.concatenate([qx, qy], axis=3)  # (M, N, N, 6)
            # Counts that no swap pattern changes (e.g. P+Q+U without NaN) need no product.
            self.active = np.flatnonzero(np.abs(q).reshape(-1, 6).sum(axis=0) > 0)
            self.const = np.concatenate([cx, cy], axis=0)  # (6, M)
            # Half-integers of magnitude <= N^2 summed exactly in float32 for moderate N.
            self.dtype = np.float32 if n <= 1000 else np.float64
            self.q = np.ascontiguousarray(q[..., self.active].reshape(m, n, n * self.active.size)).astype(self.dtype)

    def per_input(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(b, M) coefficients of the swapped X and Y for swap masks of shape (b, N, M)."""
        if self.coefficient != "kendall":
            corr = coefficient_function(self.coefficient)
            zt = self.z.T
            return (corr(np.swapaxes(np.where(mask, self.y, self.x), 1, 2), zt),
                    corr(np.swapaxes(np.where(mask, self.x, self.y), 1, 2), zt))
        b, n, m = mask.shape
        bits = np.ascontiguousarray(mask.transpose(2, 0, 1), dtype=self.dtype)  # (M, b, N)
        k = self.active.size
        half = (bits @ self.q).reshape(m, b, n, k)  # (M, b, N, k): Q_j B_j per resample
        forms = np.einsum("jsak,jsa->sjk", half, bits)  # (b, M, k): B_j' Q_j B_j
        counts = np.broadcast_to(self.const.T[None], (b, m, 6)).copy()
        counts[:, :, self.active] += forms
        return (_kendall_from_counts(counts[..., 0], counts[..., 1], counts[..., 2]),
                _kendall_from_counts(counts[..., 3], counts[..., 4], counts[..., 5]))


# The linear engine holds several (N, N, M) arrays (pair signs, ties, twins): beyond this many entries (80 MB of
# int8 each; 2,000 systems x 20 inputs are 80M) the permutation tests take the per-resample path instead, whose
# memory is bounded by its batch.
LINEAR_MAX_ENTRIES = 10_000_000


_TIED_WEIGHTS_MAX_ENTRIES = 64_000_000


def linear_fits(n_systems: int, n_inputs: int) -> bool:
    """Whether :class:`InputLinearPermutation` may be built for ``n_systems x n_inputs`` (its memory is ~N^2 M)."""
    return n_systems * n_systems * n_inputs <= LINEAR_MAX_ENTRIES


class InputLinearPermutation:
    """The shared linear part of ``delta_s`` for several metric pairs at the input level.

    Parameters
    ----------
    zscored : sequence of (N, M) arrays
        The metrics, each z-scored over its cells (TACL Algorithm 2, step 1).
    z : (N, M) array
        The human scores.
    coefficient : {'kendall', 'pairwise-accuracy'}
    pairs : sequence of (i, j)
        Metric index pairs; pair (i, j) gives ``r(Xs_i) - r(Ys_j)``.
    """

    def __init__(self, zscored: Sequence[np.ndarray], z: np.ndarray, coefficient: str, pairs: Sequence[tuple[int, int]]):
        self.coefficient = coefficient
        self.pairs = list(pairs)
        # C order: the (N, N, M) sign arrays below then run along the inputs (a Fortran-ordered matrix, as a data
        # frame's values often are, gives them inner loops of N and costs 2-4x as much).
        self.metrics = [np.ascontiguousarray(m, dtype=np.float64) for m in zscored]
        self.z = np.ascontiguousarray(z, dtype=np.float64)
        n, m = self.z.shape
        self.shape = (n, m)
        vz = ~np.isnan(self.z)
        sz = _signs(self.z[:, None, :], self.z[None, :, :])  # (N, N, M), 0 on NaN and the diagonal
        compared = _compared(vz)
        n_valid = vz.sum(axis=0)
        n0 = n_valid * (n_valid - 1) // 2
        untied_z = np.count_nonzero(sz, axis=(0, 1)) // 2
        signs = [_signs(x[:, None, :], x[None, :, :]) for x in self.metrics]
        # Twins: system pairs every metric ties (two systems with the same output). A swap ties
        # them in Xs exactly when it ties them in Ys (both or neither swapped), so the two
        # denominators stay equal: they depend on v, the number of twins left tied.
        twins = compared.copy()
        for sx in signs:
            twins &= sx == 0
        first, second = np.triu_indices(n, 1)
        twin_pairs = twins[first, second]  # (P, M)
        self.twin_j, self.twin_a, self.twin_b = (
            np.nonzero(twin_pairs.T)[0], *(idx[np.nonzero(twin_pairs.T)[1]] for idx in (first, second)))
        n_twins = twin_pairs.sum(axis=0)
        # Per input: defined for every swap (for Kendall, untied pairs remain whatever v is).
        if coefficient == "kendall":
            defined = (n0 - n_twins > 0) & (untied_z > 0)
            never = (n0 == 0) | (untied_z == 0)  # undefined whatever is swapped
        else:
            defined = n0 > 0
            never = ~defined
        # Virtual inputs (j, v): input j while v of its twins are tied; scale of its difference.
        virtual_j = np.repeat(np.arange(m), np.where(defined, n_twins + 1, 0))
        virtual_v = np.concatenate([np.zeros(0, dtype=np.int64)] + [np.arange(t + 1) for t in n_twins[defined]])
        with np.errstate(divide="ignore"):
            if coefficient == "kendall":
                scale = 1.0 / np.sqrt((n0[virtual_j] - virtual_v) * untied_z[virtual_j].astype(np.float64))
            else:
                # The tie sets of Xs and Ys coincide, so the accuracies differ by diff / (2 n0).
                scale = 1.0 / (2.0 * n0[virtual_j])
        values, group = np.unique(scale, return_inverse=True)
        order = np.argsort(group, kind="stable")
        self.virtual_j, self.virtual_v = virtual_j[order], virtual_v[order]
        self.group_scale = values
        bounds = np.searchsorted(group[order], np.arange(values.size + 1)) * (n + 1)
        self.group_rows = list(zip(bounds[:-1], bounds[1:]))
        n_pairs = len(self.pairs)
        # Per virtual input, N bit coefficients of size <= 4 (N - 1) and a constant of size <= N (N - 1):
        # every partial sum of a product is an integer below 5 N^2 V, exact in float32 below 2^24.
        self.dtype = np.float32 if 5 * n * n * max(virtual_j.size, 1) < 2**24 else np.float64
        # Rows: each virtual input's N swap bits, then its indicator (for the constant).
        self.weights = np.zeros((self.virtual_j.size * (n + 1), n_pairs), dtype=self.dtype)
        self.n_stable = np.zeros(n_pairs, dtype=np.int64)
        self.fallback: list[np.ndarray] = []
        linear_on = np.zeros((self.virtual_j.size, n_pairs), dtype=bool)
        gains = [np.einsum("abj,abj->aj", sz, sx, dtype=np.int32) for sx in signs]
        ties = [((sx == 0) & compared & ~twins).any(axis=(0, 1)) for sx in signs]
        # Inputs where each metric scores every system the human rated: swaps then never change which pairs
        # are compared, only which are tied (TiedInputs).
        complete = [~(vz & np.isnan(x)).any(axis=0) for x in self.metrics]
        self.tied = np.zeros((len(self.pairs), m), dtype=bool)
        # One input's weights of the shared tie path are (system pairs x (pairs + metrics)) float32: beyond this many
        # entries (256 MB; ~1,000 systems with a few metrics) tied inputs stay on the per-pair path.
        shared_fits = n * (n - 1) // 2 * (len(self.pairs) + len(self.metrics)) <= _TIED_WEIGHTS_MAX_ENTRIES
        for p, (i, k) in enumerate(self.pairs):
            x, y = self.metrics[i], self.metrics[k]
            # X vs Y's signs (X_a vs Y_a') only on the inputs where neither X nor Y ties: elsewhere the pair is off the
            # linear path (on real data, most of the inputs of most pairs).
            may = defined & ~ties[i] & ~ties[k]
            whole = bool(may.all())
            cand = np.flatnonzero(may)
            # (np.take keeps C order, so the sign arrays still run along the inputs; fancy indexing would not.)
            xc, yc = (x, y) if whole else (np.take(x, cand, axis=1), np.take(y, cand, axis=1))
            s = _signs(xc[:, None, :], yc[None, :, :])
            z_cand = sz if whole else np.take(sz, cand, axis=2)
            cross = np.zeros(m, dtype=bool)
            cross[cand] = ((s == 0) & (compared if whole else _compared(np.take(vz, cand, axis=1)))).any(axis=(0, 1))
            # Elsewhere a score of X equal to one of Y only decides between the tie path and the per-pair path, which
            # matters where both metrics score every compared system (so no NaN counts as a tie there).
            decide = np.flatnonzero(~may & ~never & complete[i] & complete[k])
            if decide.size:
                equal = np.take(x, decide, axis=1)[:, None, :] == np.take(y, decide, axis=1)[None, :, :]
                cross[decide] = (equal & _compared(np.take(vz, decide, axis=1))).any(axis=(0, 1))
            unstable = ties[i] | ties[k] | cross | ~defined
            if coefficient == "kendall" and shared_fits:
                # Ties within X or Y (integer scores, two identical outputs) move the denominators, not the
                # shape of the problem: those inputs go to the shared per-input product (TiedInputs).
                self.tied[p] = unstable & ~never & ~cross & complete[i] & complete[k]
            # (Zero off ``cand``, where the pair is not linear and its rows are zeroed below.)
            h_yx_minus_xy = np.zeros((n, m), dtype=np.int32)
            h_yx_minus_xy[:, cand] = -(np.einsum("abj,baj->aj", z_cand, s, dtype=np.int32)
                                       + np.einsum("abj,abj->aj", z_cand, s, dtype=np.int32))
            linear = gains[k] - gains[i] + h_yx_minus_xy  # (N, M): coefficient of B_a in num_x - num_y
            const = (gains[i] - gains[k]).sum(axis=0) // 2  # num_x - num_y unswapped
            stable = ~unstable[self.virtual_j]
            linear_on[:, p] = stable
            rows = np.concatenate([linear[:, self.virtual_j], const[None, self.virtual_j]], axis=0) * stable
            self.weights[:, p] = rows.T.ravel()
            self.n_stable[p] = int((defined & ~unstable).sum())
            self.fallback.append(np.flatnonzero(unstable & ~never & ~self.tied[p]))
        self._plan_products(linear_on)

    def _plan_products(self, used: np.ndarray) -> None:
        """Split each scale group's product into blocks that skip the pairs none of its inputs takes linearly.

        On real data most pairs leave an input to the tie path (WMT23 zh-en: 7% of the (input, pair) entries
        stay linear), so a group's full product would mostly multiply zero weights. Within a group, the virtual
        inputs where fewer than half the pairs are linear come first (the sums are exact integers: their order
        changes nothing), and each of the two blocks multiplies only the pairs some of its inputs take.
        ``used`` (virtual inputs x pairs): where a pair takes a virtual input linearly.
        """
        n = self.shape[0]
        n_virtual, n_pairs = self.virtual_j.size, len(self.pairs)
        sparse = 2 * used.sum(axis=1) < n_pairs
        group = np.repeat(np.arange(len(self.group_rows)), [(stop - start) // (n + 1) for start, stop in self.group_rows])
        order = np.lexsort((~sparse, group))
        self.virtual_j, self.virtual_v = self.virtual_j[order], self.virtual_v[order]
        self.weights = np.ascontiguousarray(self.weights.reshape(n_virtual, n + 1, n_pairs)[order]).reshape(-1, n_pairs)
        used, sparse = used[order], sparse[order]
        # Per group: its blocks (rows, pairs or None for all, weights) and the pairs any block takes.
        self.group_blocks: list[tuple[list[tuple[slice, np.ndarray | None, np.ndarray]], np.ndarray | None]] = []
        for start, stop in self.group_rows:
            first, last = start // (n + 1), stop // (n + 1)
            middle = first + int(sparse[first:last].sum())
            blocks = []
            for lo, hi in ((first, middle), (middle, last)):
                active = np.flatnonzero(used[lo:hi].any(axis=0))
                if active.size == 0:
                    continue
                rows = slice(lo * (n + 1), hi * (n + 1))
                # A block taking more than half the pairs multiplies them all (a view, no copy): the copies stay
                # below half the weights' memory, and zero weights add 0.0.
                if 2 * active.size > n_pairs:
                    blocks.append((rows, None, self.weights[rows]))
                else:
                    blocks.append((rows, active, np.ascontiguousarray(self.weights[rows][:, active])))
            union = np.flatnonzero(used[first:last].any(axis=0))
            self.group_blocks.append((blocks, None if union.size == n_pairs else union))

    def linear_sums(self, mask: np.ndarray) -> np.ndarray:
        """(b, pairs) sum over the stable inputs of the per-input difference, for masks broadcastable to (b, N, M)."""
        n, m = self.shape
        b = mask.shape[0]
        bits = np.broadcast_to(mask, (b, n, m))
        v = np.zeros((b, m), dtype=np.int64)
        if self.twin_j.size:
            tied = bits[:, self.twin_a, self.twin_j] == bits[:, self.twin_b, self.twin_j]  # (b, twins)
            flat_index = (np.arange(b)[:, None] * m + self.twin_j[None, :]).ravel()
            v = np.bincount(flat_index, weights=tied.ravel(), minlength=b * m).reshape(b, m).astype(np.int64)
        indicator = v[:, self.virtual_j] == self.virtual_v  # (b, V)
        features = np.empty((b, self.virtual_j.size, n + 1), dtype=self.dtype)
        # Each input's bits contiguous first: the virtual inputs come in scale order, and gathering whole rows of
        # N bits (as uint8, which converts to float faster than bool) is ~2x faster than gathering columns.
        rows = np.take(np.ascontiguousarray(bits.transpose(0, 2, 1)).view(np.uint8), self.virtual_j, axis=1)
        np.copyto(features[:, :, :n], rows)
        features[:, :, :n] *= indicator[:, :, None]
        features[:, :, n] = indicator
        flat = features.reshape(b, -1)
        n_pairs = len(self.pairs)
        total = np.zeros((b, n_pairs))
        for g, (blocks, union) in enumerate(self.group_blocks):
            # Integer-valued products and sums: exact in any order, whatever b. A pair no block takes would add
            # 0.0, which changes no sum.
            if not blocks:
                continue
            if len(blocks) == 1 and blocks[0][1] is None:
                rows, _, weights = blocks[0]
                total += self.group_scale[g] * (flat[:, rows] @ weights).astype(np.float64)
                continue
            exact = np.zeros((b, n_pairs), dtype=self.dtype)
            for rows, active, weights in blocks:
                if active is None:
                    exact += flat[:, rows] @ weights
                else:
                    exact[:, active] += flat[:, rows] @ weights
            if union is None:
                total += self.group_scale[g] * exact.astype(np.float64)
            else:
                total[:, union] += self.group_scale[g] * exact[:, union].astype(np.float64)
        return total

    def column_swaps(self, p: int, columns: np.ndarray | None = None) -> ColumnSwaps:
        """The per-pair path of pair ``p`` on its tie-prone inputs (or on ``columns``)."""
        i, k = self.pairs[p]
        cols = self.fallback[p] if columns is None else columns
        return ColumnSwaps(self.metrics[i][:, cols], self.metrics[k][:, cols], self.z[:, cols], self.coefficient)


class TiedInputs:
    """Kendall's tau of every pair's swapped X and Y on the inputs where ties within X or Y move the denominators.

    On such an input j (each metric scores every system the human rated, no score of X equals one of Y) the
    pairs compared never change, only which are tied. With ``u`` the swap bits and ``x = u_a XOR u_a'`` per
    system pair, and ``T_0..T_3`` the pair's signs (X_a vs X_a', X_a vs Y_a', Y_a vs X_a', Y_a vs Y_a'):

    * ``num_x - num_y = D``, linear in ``u`` (the ``u u'`` terms cancel, as on the linear path);
    * ``num_x + num_y = S = sum sz (T_0 + T_3) + sum sz (T_1 + T_2 - T_0 - T_3) x``;
    * the pairs Xs ties are X's tied pairs with both bits 0 and Y's with both bits 1, so
      ``n_x = n0 - A_X - B_Y`` and ``n_y = n0 - A_Y - B_X`` with, per metric, ``A + B = sum_tied (1 - x)`` and
      ``B - A = sum_tied (u_a + u_a' - 1)``.

    ``tau(Xs) = (S + D) / sqrt(2 n_x * 2 nz)`` is then a function of two small integers, ``num_x = (S + D) / 2``
    and ``n_x``, both linear in the features ``x`` and ``u``: so is the key ``W (num_x + nz) + n_x``
    (``W = n0 + 1``), and likewise Ys's. Per input, one product over ``x`` (``G``) and one over ``u`` (``H``) give
    every pair's keys as ``G + H`` and ``G - H``; a table of the input's ``(n0, nz)`` maps a key to tau, computed
    by the same floating-point operations as the formula, so the result is the formula's to the last bit.
    Multiples of 1/2 (G and H alone need not be integers), exact in float32 whatever the batch (float64 where the
    keys outgrow float32), so the results do not depend on it.

    References: docs/methods.md sec. 3 and 16.1.
    """

    # Features x resamples of one product: bounds the feature block (16 MB of float32).
    FEATURE_BUDGET = 4_000_000
    # Entries of the cached key -> tau tables (8 bytes each); a larger table is replaced by the formula.
    TABLE_BUDGET = 4_000_000
    # Integers up to this are exact in float32 (products beyond it run in float64).
    FLOAT32_EXACT = 2**24
    # Weights of a block of inputs (entries: inputs x metric pairs x (system pairs + systems)).
    WEIGHTS_BUDGET = 1000000

    def __init__(self, engine: InputLinearPermutation):
        self.engine = engine
        self.columns = np.flatnonzero(engine.tied.any(axis=0))
        n, _ = engine.shape
        self.first, self.second = np.triu_indices(n, 1)
        npairs = self.first.size
        # Twice the keys and every partial sum of their products stay below 22 W P (W = P + 1, P system pairs).
        self.dtype = np.float32 if 22 * (npairs + 1) * npairs < self.FLOAT32_EXACT else np.float64
        incidence_first = np.zeros((npairs, n), dtype=self.dtype)
        incidence_first[np.arange(npairs), self.first] = 1.0
        incidence_second = np.zeros((npairs, n), dtype=self.dtype)
        incidence_second[np.arange(npairs), self.second] = 1.0
        self.incidence_sum = incidence_first + incidence_second
        self.incidence_difference = incidence_first - incidence_second
        # Per input, every metric's scores (inputs x metrics x systems).
        self.values = np.ascontiguousarray(np.stack(engine.metrics).transpose(2, 0, 1))
        # Pair rows in the order of their metrics' tie counts: the metrics tying on most inputs first, and each
        # pair after the pairs of its more often tied metric. An input's tie-path pairs (those with a metric tying
        # there) then mostly form the first rows, taken as one contiguous block (see ``add``).
        self.order, self._first_metric = self._tie_order(engine, self.values[self.columns])
        self.pair_x = np.array([engine.pairs[p][0] for p in self.order], dtype=np.intp)
        self.pair_y = np.array([engine.pairs[p][1] for p in self.order], dtype=np.intp)
        self.on = engine.tied[self.order][:, self.columns].T  # (inputs, pairs in row order)
        # Inputs are taken in the order of their rows (one past their last tie-path pair): a block of inputs then
        # builds weights for about the rows it multiplies. Each pair's sum runs over the inputs in this fixed order.
        self.rows = self.on.shape[1] - np.argmax(self.on[:, ::-1], axis=1)
        self.sequence = np.argsort(self.rows, kind="stable")
        # The first rows whose pairs take every defined input here (none linear, none pair by pair): their Xs's and
        # Ys's sums are kept apart too, so that a resample defined on different numbers of inputs for Xs and Ys
        # (tau undefined on one side) needs no recomputation. Their metric ties everywhere, so they come first.
        alone = (engine.n_stable[self.order] == 0) & np.array([engine.fallback[p].size == 0 for p in self.order])
        self.own_rows = int(np.argmin(alone)) if not alone.all() else alone.size
        # Row where each first metric's pairs start: the places where a block of rows may be split.
        self.group_starts = np.flatnonzero(np.r_[True, self._first_metric[1:] != self._first_metric[:-1]])
        # Sums over the rows up to each group's end and from each group's start (groups x pairs).
        ends = np.r_[self.group_starts[1:], self.order.size]
        row = np.arange(self.order.size)
        self._up_to_group = (row[None, :] < ends[:, None]).astype(self.dtype)
        self._from_group = (row[None, :] >= self.group_starts[:, None]).astype(self.dtype)
        # Halved pair incidence (pairs x metrics): one product gives every pair's (m_X + m_Y) / 2 or (m_X - m_Y) / 2
        # (a gather of each metric's row per pair cost 3x as much).
        rows, n_metrics = np.arange(self.pair_x.size), len(engine.metrics)
        self.metric_half_sum = np.zeros((rows.size, n_metrics), dtype=self.dtype)
        self.metric_half_sum[rows, self.pair_x] = 0.5
        self.metric_half_difference = self.metric_half_sum.copy()
        self.metric_half_sum[rows, self.pair_y] += 0.5
        self.metric_half_difference[rows, self.pair_y] -= 0.5
        # Scores of X and Y are compared by their ranks among the input's scores of every metric (equal scores,
        # equal ranks): small integers compare ~7x faster than the float scores of all metric pairs.
        self.rank_dtype = np.int16 if n_metrics * n < 2**14 else np.int32
        self._tables: dict[tuple[int, int], np.ndarray] = {}
        self._table_entries = 0

    @staticmethod
    def _tie_order(engine: InputLinearPermutation, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Engine pair indices in row order, and each row's metric ranked first (by tie count)."""
        ordered = np.sort(values, axis=2)
        tying = (ordered[:, :, 1:] == ordered[:, :, :-1]).any(axis=2).sum(axis=0)  # inputs where a metric ties
        rank = np.empty(tying.size, dtype=np.intp)
        rank[np.argsort(-tying, kind="stable")] = np.arange(tying.size)
        ranked = np.array([sorted((rank[i], rank[k])) for i, k in engine.pairs], dtype=np.intp).reshape(-1, 2)
        order = np.lexsort((ranked[:, 1], ranked[:, 0]))
        return order, ranked[order, 0]

    def _weights(self, columns: np.ndarray, rows: int | None = None):
        """Per input of ``columns`` (C of them): the first ``rows`` pairs' products' weights (constants last),
        ``n0``, ``nz`` (every pair when ``rows`` is None).

        With ``m = tied - W sz T`` per metric and system pair (``T`` its signs), the flips' weights of pair (X, Y)
        are ``W sz (T_1 + T_2) + m_X + m_Y`` and the bits' ``W sz (T_2 - T_1)`` projected on ``a`` minus on
        ``a'``, plus ``m_X - m_Y`` projected on both; the keys' constants ``c_X``, ``c_Y`` are per metric. Returns
        ``(C, rows, P + 1)`` and ``(C, rows, N + 1)`` weights (halved: the keys' products), ``(C,)`` counts and
        ``(C, rows)`` where the pair's tau may be undefined.
        """
        f, s = self.first, self.second
        dtype = self.dtype
        values = self.values[columns]  # (C, K, N)
        z = self.engine.z[:, columns].T  # (C, N)
        compared = ~(np.isnan(z[:, f]) | np.isnan(z[:, s]))  # (C, P)
        sz = _signs(z[:, f], z[:, s])  # 0 where either is NaN
        n0 = compared.sum(axis=1)
        nz = np.count_nonzero(sz, axis=1)
        width = (n0 + 1)[:, None]
        # Every weight is a multiple of 1/2 (the keys are twice the products): exact in ``dtype``.
        half = (sz * width).astype(dtype)  # (C, P): W sz / 2
        half *= 0.5
        within = _signs(values[:, :, f], values[:, :, s])  # (C, K, P)
        tied = (within == 0) & compared[:, None, :]
        per_metric = (tied - (2 * half)[:, None, :] * within).astype(dtype)  # (C, K, P): m
        projected = per_metric @ self.incidence_sum  # (C, K, N)
        # c = W (2 sum sz T + 2 nz) + 2 n0 - 2 (tied pairs): the key of the unswapped column, even.
        constant = (width * (2 * np.einsum("ckp,cp->ck", within, sz, dtype=np.int64) + 2 * nz[:, None])
                    + 2 * n0[:, None] - 2 * tied.sum(axis=2))
        # T_1 (X_a vs Y_a') and T_2 (Y_a vs X_a') from the ranks; a NaN score (only where the human has none, so
        # sz = 0 there) ranks last, which changes no weight.
        c, k, n = values.shape
        flat = values.reshape(c, k * n)
        order = np.argsort(flat, axis=1, kind="stable")
        ordered = np.take_along_axis(flat, order, axis=1)
        steps = np.zeros((c, k * n), dtype=self.rank_dtype)
        np.not_equal(ordered[:, 1:], ordered[:, :-1], out=steps[:, 1:])
        ranks = np.empty_like(steps)
        np.put_along_axis(ranks, order, np.cumsum(steps, axis=1, dtype=self.rank_dtype), axis=1)
        ranks = ranks.reshape(c, k, n)
        on_first, on_second = ranks[:, :, f], ranks[:, :, s]  # (C, K, P)
        px, py = self.pair_x[:rows], self.pair_y[:rows]
        t1 = np.sign(np.take(on_first, px, axis=1) - np.take(on_second, py, axis=1)).astype(np.int8)
        t2 = np.sign(np.take(on_first, py, axis=1) - np.take(on_second, px, axis=1)).astype(np.int8)
        npairs = f.size
        flip_w = np.empty((c, px.size, npairs + 1), dtype=dtype)
        np.matmul(self.metric_half_sum[:rows], per_metric, out=flip_w[..., :npairs])
        flip_w[..., :npairs] += np.add(t1, t2) * half[:, None, :]
        flip_w[..., npairs] = (constant[:, px] + constant[:, py]) / 4
        bit_w = np.empty((c, px.size, n + 1), dtype=dtype)
        np.matmul(np.subtract(t2, t1) * half[:, None, :], self.incidence_difference, out=bit_w[..., :n])
        bit_w[..., :n] += self.metric_half_difference[:rows] @ projected
        bit_w[..., n] = (constant[:, px] - constant[:, py]) / 4
        # tau is undefined only where Xs or Ys ties every compared pair: n_x >= n0 - (X's and Y's tied pairs).
        ties = tied.sum(axis=2)
        undefined = (ties[:, px] + ties[:, py]) >= n0[:, None]
        return flip_w, bit_w, n0, nz, undefined

    def _table(self, n0: int, nz: int) -> np.ndarray | None:
        """The tau of every key ``W (num + nz) + n`` of an input's ``(n0, nz)``, cached; None beyond the budget."""
        width = n0 + 1
        size = (2 * nz + 1) * width
        table = self._tables.get((n0, nz))
        if table is None and size <= self.TABLE_BUDGET:
            if self._table_entries + size > self.TABLE_BUDGET:
                self._tables.clear()
                self._table_entries = 0
            grid = np.arange(size)
            table = self._tau_formula(*self._split(grid, n0, nz), nz)
            self._tables[(n0, nz)] = table
            self._table_entries += size
        return table

    @staticmethod
    def _tau_formula(t: np.ndarray, m: np.ndarray, nz: int) -> np.ndarray:
        # tau = ((S + D) / 2) / sqrt(n nz) = (S + D) / sqrt(2 (2 n) nz), t = S + D, m = 2 n: the float operations
        # of the per-input formula; 0 / 0 where every pair ties.
        denominator = m.astype(np.float64)
        denominator *= 2 * nz
        with np.errstate(divide="ignore", invalid="ignore"):
            return t.astype(np.float64) / np.sqrt(denominator, out=denominator)

    def add(self, sl: slice, bits: np.ndarray, difference: np.ndarray, undefined: list,
            report: Callable[[float], None] = lambda fraction: None, sides: np.ndarray | None = None) -> None:
        """Add the tied inputs' ``tau(Xs) - tau(Ys)`` of the resamples ``sl`` to ``difference`` (pairs, resamples).

        ``bits`` (b, N, len(self.columns)) are their swap bits. Where Xs or Ys ties every pair (tau undefined,
        rare) nothing is added for that side and ``(pairs, resamples, X undefined, Y undefined)`` is appended to
        ``undefined``. ``sides`` (2, pairs, resamples), if given, receives the sums of ``tau(Xs)`` and ``tau(Ys)``
        of the pairs of the first ``own_rows`` rows. Each pair's sum runs over the inputs in one fixed order
        (``sequence``), whatever the chunks.
        """
        f, s = self.first, self.second
        b = bits.shape[0]
        step = max(1, min(b, self.FEATURE_BUDGET // (f.size + 1)))
        # Buffers reused by every input: keys then tau of Xs and Ys, for every pair and resample of a step.
        n_pairs = self.pair_x.size
        most = 2 * n_pairs * step
        key_buffer, tau_buffer = np.empty(most, dtype=np.int64), np.empty(most)
        # The products' features and results too (fresh arrays of this size cost a page fault per use).
        flip_buffer = np.empty((f.size + 1) * step, dtype=self.dtype)
        one_buffer = np.empty((self.engine.shape[0] + 1) * step, dtype=self.dtype)
        g_buffer, h_buffer = np.empty(n_pairs * step, dtype=self.dtype), np.empty(n_pairs * step, dtype=self.dtype)
        # The sums in row order; 0 + the sum is the sum, so they are added to ``difference`` at the end.
        total = np.zeros((n_pairs, b))
        own = self.own_rows if sides is not None else 0
        own_total = np.zeros((own, b))
        # Systems x inputs x resamples: each input's bits of a system contiguous (the kept bits' own layout).
        bits = np.ascontiguousarray(bits.transpose(1, 2, 0))
        block = max(1, self.WEIGHTS_BUDGET // (n_pairs * (f.size + bits.shape[0] + 2)))
        for i, c in enumerate(self.sequence):
            if i % block == 0:
                report(i / self.columns.size)
                members = self.sequence[i:i + block]
                entries = self._block(self.columns[members], self.on[members], self.rows[members])
            bit_w, n0, nz, (k, blocks, check) = entries[i % block]
            n0, nz = int(n0), int(nz)
            table = self._table(n0, nz)
            column = bits[:, c]  # (N, b)
            for start in range(0, b, step):
                u = column[:, start:start + step]
                width = u.shape[1]
                g = g_buffer[:k * width].reshape(k, width)
                for rows, weights, first, second in blocks:
                    flips = flip_buffer[:(first.size + 1) * width].reshape(first.size + 1, width)
                    np.not_equal(u[first], u[second], out=flips[:first.size])
                    flips[first.size] = 1
                    np.matmul(weights, flips, out=g[rows])
                ones = one_buffer[:(u.shape[0] + 1) * width].reshape(u.shape[0] + 1, width)
                ones[:u.shape[0]] = u
                ones[u.shape[0]] = 1
                h = np.matmul(bit_w[:k], ones, out=h_buffer[:k * width].reshape(k, width))
                # int32 keys convert faster; a table's keys fit (its size is bounded), the formula's need not.
                keys = key_buffer.view(np.int32 if table is not None else np.int64)[:2 * k * width].reshape(2, k, width)
                np.add(g, h, out=keys[0], casting="unsafe")
                np.subtract(g, h, out=keys[1], casting="unsafe")
                if table is not None:
                    # The keys lie in the table by construction (the tests check every tie pattern against the
                    # loop): 'clip' only skips the bounds check.
                    tau = np.take(table, keys, out=tau_buffer[:2 * k * width].reshape(2, k, width), mode="clip")
                else:
                    tau = self._tau_formula(*self._split(keys, n0, nz), nz)
                rows = slice(start, start + width)
                if check and np.isnan(tau[:, :check].sum()):
                    # The defined side still counts (as 0 here): the two means may then average different inputs.
                    _, p, r = np.nonzero(np.isnan(tau[:, :check]))
                    p, r = np.unique(np.stack([p, r]), axis=1)
                    tau_x, tau_y = tau[0][p, r], tau[1][p, r]
                    undefined.append((self.order[p], sl.start + start + r, np.isnan(tau_x), np.isnan(tau_y)))
                    tau[0][p, r], tau[1][p, r] = np.nan_to_num(tau_x), np.nan_to_num(tau_y)
                if own:
                    total_rows = min(own, k)
                    own_total[:total_rows, rows] += tau[0, :total_rows]
                total[:k, rows] += np.subtract(tau[0], tau[1], out=tau[0])
        difference[self.order, sl] += total
        if own:
            # Ys's sum is Xs's minus the differences' (the same inputs, in the same order).
            sides[0, self.order[:own], sl] += own_total
            sides[1, self.order[:own], sl] += own_total - total[:own]

    def _block(self, columns: np.ndarray, on: np.ndarray, k: np.ndarray) -> list:
        """Per input of a block: ``(bit weights, n0, nz, plan)``. Weights are built only for the rows the inputs
        multiply: in two groups by ``k`` (one past their last tie-path row), each up to its largest ``k``, split
        where the sum of rows is least (WMT22: MATESE's 39 pairs alone on half the inputs, ~190 on the others)."""
        ranked = np.sort(k)
        size = np.arange(1, k.size + 1)
        # Rows built when the i smallest k form the first group: i * k_(i) + (C - i) * k_max.
        cost = size * ranked + (k.size - size) * ranked[-1]
        threshold = ranked[int(np.argmin(cost))]
        entries: list = [None] * k.size
        for members in (np.flatnonzero(k <= threshold), np.flatnonzero(k > threshold)):
            if not members.size:
                continue
            rows = int(k[members].max())
            weights = self._weights(columns[members], rows)
            plans = self._plan(on[members, :rows], k[members], *weights)
            for i, member in enumerate(members):
                entries[member] = (weights[1][i], weights[2][i], weights[3][i], plans[i])
        return entries

    # Rows x features of a product that its call costs besides (set-up, features, weights' copy; measured).
    SPLIT_COST = 1500

    def _plan(self, on: np.ndarray, k: np.ndarray, flip_w: np.ndarray, bit_w: np.ndarray, n0: np.ndarray,
              nz: np.ndarray, undefined: np.ndarray) -> list:
        """Per input of a block: its rows ``k`` (the pairs up to its last tie-path pair), its products and the rows
        whose tau may be undefined (all before ``check``; 0: none).

        Rows within ``k`` of pairs on the linear path there get the key of tau 0 (adding 0.0 changes no sum).
        The ``x`` features no row uses are left out; the rows may be split where a metric's pairs start, when two
        products over fewer features cost less (``SPLIT_COST`` per product). The products are exact integer
        sums, so which features and rows go together changes no bit. A product is ``(rows, weights, a, a')``:
        its features are ``x = u_a XOR u_a'`` then the constant.
        """
        npairs = self.first.size
        off = ~on
        flip_w[off] = 0
        flip_w[..., npairs][off] = np.broadcast_to(((n0 + 1) * nz + n0)[:, None], off.shape)[off]
        bit_w[off] = 0
        flagged = undefined & on
        check = np.where(flagged.any(axis=1), on.shape[1] - np.argmax(flagged[:, ::-1], axis=1), 0)
        # Features each run of groups uses (the constant always): rows up to a group's end, rows from its start.
        # (Only the first ``on.shape[1]`` rows: the groups starting there.)
        rows = on.shape[1]
        starts = self.group_starts[self.group_starts < rows]
        used = (flip_w[..., :npairs] != 0).astype(self.dtype)
        before = np.ones((on.shape[0], starts.size, npairs + 1), dtype=bool)
        after = before.copy()
        np.greater(np.matmul(self._up_to_group[:starts.size, :rows], used), 0, out=before[..., :npairs])
        np.greater(np.matmul(self._from_group[:starts.size, :rows], used), 0, out=after[..., :npairs])
        n_before, n_after = before.sum(axis=2), after.sum(axis=2)
        inputs = np.arange(on.shape[0])
        last = np.searchsorted(starts, k, side="left") - 1  # the group holding row k - 1
        whole = k * n_before[inputs, last]
        cut = starts[1:]
        costs = (cut * n_before[:, :-1] + (k[:, None] - cut) * n_after[:, 1:] + self.SPLIT_COST).astype(float)
        costs[cut >= k[:, None]] = np.inf
        best = np.argmin(costs, axis=1) if cut.size else np.zeros(on.shape[0], dtype=np.intp)
        split = cut.size > 0 and costs[inputs, best] < whole
        plans = []
        for c in range(on.shape[0]):
            used_rows = int(k[c])
            if cut.size and split[c]:
                g = int(best[c]) + 1
                parts = ((slice(0, starts[g]), before[c, g - 1]), (slice(starts[g], used_rows), after[c, g]))
            else:
                parts = ((slice(0, used_rows), before[c, last[c]]),)
            blocks = []
            for part, mask in parts:
                features = np.flatnonzero(mask)
                weights = flip_w[c, part]
                if features.size <= npairs:
                    weights = np.ascontiguousarray(weights[:, features])
                blocks.append((part, weights, self.first[features[:-1]], self.second[features[:-1]]))
            plans.append((used_rows, blocks, int(check[c])))
        return plans

    @staticmethod
    def _split(keys: np.ndarray, n0: int, nz: int) -> tuple[np.ndarray, np.ndarray]:
        """``(S + D, 2 n)`` of keys ``W (num + nz) + n``."""
        return 2 * (keys // (n0 + 1) - nz), 2 * (keys % (n0 + 1))


# Swap bits of the tie-prone inputs kept from the first pass (resamples x systems x inputs) up to
# this many; beyond it every pair's per-pair path redraws the masks.
_KEPT_BITS_BUDGET = 256_000_000
# Elements (resamples x systems^2 x inputs) of one chunk of the per-pair path over kept bits.
_FALLBACK_ELEMENT_BUDGET = 8_000_000


def input_permutation_nulls(
    engine: InputLinearPermutation,
    masks: Callable[[], Iterable[tuple[slice, np.ndarray]]],
    n_resamples: int,
    report: Callable[[float], None] = lambda fraction: None,
) -> np.ndarray:
    """(pairs, k) ``delta_s`` of every pair; ``masks()`` yields the same ``(slice, mask)`` chunks on every call.

    The linear part of all pairs is one pass over the draws, which also keeps the swap bits of the inputs
    some pair cannot take linearly; the inputs with ties within X or Y then run for every pair at once, input
    by input (:class:`TiedInputs`), and the few left (a score of X equal to one of Y, missing cells) pair by
    pair. A resample whose swapped X and Y are defined on different numbers of inputs (so the two means have
    no shared divisor) takes the two means from Xs's and Ys's own sums where the pair is on the tie path alone
    (a metric tying on every input: MATESE), and is otherwise recomputed from its swapped matrices.
    """
    n_pairs = len(engine.pairs)
    n, m = engine.shape
    # Only when some input takes the shared tie path: its incidence matrices are (system pairs x systems), 15 GB
    # at 2,000 systems, where the engine keeps every input on the per-pair path.
    tied = TiedInputs(engine) if engine.tied.any() else None
    tied_columns = tied.columns if tied is not None else np.zeros(0, dtype=np.intp)
    union = np.unique(np.concatenate([np.zeros(0, dtype=np.intp), tied_columns, *engine.fallback]))
    keep = union.size and n_resamples * n * union.size <= _KEPT_BITS_BUDGET
    # The layout the tie path reads (each input's bits of a system contiguous): systems x inputs x resamples,
    # filled from the resample-major masks by the cheap (1, 2, 0) transpose.
    kept = np.zeros((n, union.size if keep else 0, n_resamples), dtype=bool)
    sums = np.zeros((n_pairs, n_resamples))
    for sl, mask in masks():
        sums[:, sl] = engine.linear_sums(mask).T
        if keep:
            kept[:, :, sl] = np.take(np.broadcast_to(mask, (mask.shape[0], n, m)), union, axis=2).transpose(1, 2, 0)
        report(0.4 * sl.stop / n_resamples)
    position = np.full(m, -1)
    position[union] = np.arange(union.size)
    if keep:
        def replay(cols):
            # Few inputs per pair: larger chunks than the first pass (the counts are exact, so the
            # chunking changes nothing).
            step = max(1, _FALLBACK_ELEMENT_BUDGET // (n * n * max(cols.size, 1)))
            for start in range(0, n_resamples, step):
                sl = slice(start, min(start + step, n_resamples))
                yield sl, kept[:, position[cols], sl].transpose(2, 0, 1)
    else:
        replay = lambda cols: ((sl, np.broadcast_to(mask, (mask.shape[0], n, m))[:, :, cols])  # noqa: E731
                               for sl, mask in masks())
    # Sums and counts of the swapped X's then Y's defined per-input values off the linear path.
    side = np.zeros((4, n_pairs, n_resamples))
    # Xs's and Ys's own sums of the pairs on no other path than the tie path (each input's tau, in a fixed order).
    own_sides = np.zeros((2, n_pairs, n_resamples)) if tied is not None and tied.own_rows else None
    if tied is not None and tied.columns.size:
        difference = np.zeros((n_pairs, n_resamples))
        undefined: list = []
        # Every resample of an input at once (each input's weights are built once) when its bits were kept.
        if keep:
            on_tied = position[tied.columns]
            bits = kept if on_tied.size == union.size else kept[:, on_tied]  # the union when no pair falls back
            chunks = [(slice(0, n_resamples), bits.transpose(2, 0, 1))]
        else:
            chunks = replay(tied.columns)
        for sl, bits in chunks:
            done = sl.start / n_resamples
            tied.add(sl, bits, difference, undefined,
                     lambda fraction: report(0.4 + 0.3 * (done + fraction * (sl.stop - sl.start) / n_resamples)),
                     sides=own_sides)
            report(0.4 + 0.3 * sl.stop / n_resamples)
        side[0] += difference
        on_tied = engine.tied.sum(axis=1)[:, None]
        side[1] += on_tied
        side[3] += on_tied
        for pairs, rows, gone_x, gone_y in undefined:
            np.subtract.at(side[1], (pairs, rows), gone_x)
            np.subtract.at(side[3], (pairs, rows), gone_y)
    for p in range(n_pairs):
        if engine.fallback[p].size:
            _add_fallback(engine, p, replay, side[:, p])
        report(0.7 + 0.25 * (p + 1) / n_pairs)
    count = engine.n_stable[:, None] + side[1]
    out = np.full((n_pairs, n_resamples), np.nan)
    np.divide(sums + side[0] - side[2], count, out=out, where=count > 0)
    # Different numbers of defined inputs in Xs and Ys: no shared divisor. These resamples take the two sides'
    # own sums, or else are computed from their swapped matrices on every input.
    uneven = side[1] != side[3]
    if tied is not None and tied.own_rows and uneven.any():
        # Pairs whose every defined input is on the tie path: their two means from Xs's and Ys's own sums (the same
        # inputs' tau as the swapped matrices give, summed in the tie path's fixed order).
        own = np.zeros(n_pairs, dtype=bool)
        own[tied.order[:tied.own_rows]] = True
        p, r = np.nonzero(uneven & own[:, None])
        with np.errstate(invalid="ignore", divide="ignore"):
            out[p, r] = own_sides[0, p, r] / side[1, p, r] - own_sides[1, p, r] / side[3, p, r]
        uneven &= ~own[:, None]
    if uneven.any():
        per_input = _per_input_coefficient(engine)
        pair_swaps = {}
        for sl, mask in masks():
            chunk = uneven[:, sl]
            for p in np.flatnonzero(chunk.any(axis=1)):
                rows = np.flatnonzero(chunk[p])
                swapped = np.broadcast_to(mask, (mask.shape[0], n, m))[rows]
                if engine.coefficient == "kendall" and pair_kernel_fits(n):
                    if p not in pair_swaps:
                        pair_swaps[p] = _SwappedKendall(engine, p, next(iter(pair_swaps.values()), None))
                    per_x, per_y = pair_swaps[p](swapped)
                else:
                    x, y = (engine.metrics[i] for i in engine.pairs[p])
                    per_x = per_input(np.swapaxes(np.where(swapped, y, x), 1, 2))
                    per_y = per_input(np.swapaxes(np.where(swapped, x, y), 1, 2))
                out[p, sl.start + rows] = _nanmean(per_x) - _nanmean(per_y)
    report(1.0)
    return out


def _add_fallback(engine: InputLinearPermutation, p: int, replay, side: np.ndarray) -> None:
    """Add pair ``p``'s remaining tie-prone inputs to its sums and counts (``side``: 4 x resamples)."""
    swaps = engine.column_swaps(p)
    for sl, mask in replay(engine.fallback[p]):
        per_x, per_y = swaps.per_input(mask)
        for offset, values in ((0, per_x), (2, per_y)):
            defined = ~np.isnan(values)
            side[offset, sl] += np.where(defined, values, 0.0).sum(axis=1)
            side[offset + 1, sl] += defined.sum(axis=1)


def _per_input_coefficient(engine: InputLinearPermutation) -> Callable[[np.ndarray], np.ndarray]:
    """The coefficient of every input of swapped matrices (b, M, N), as ``coefficient_function`` gives it.

    Kendall's with the pair kernel takes the human's pair signs once: the same integer counts and formula as
    ``coefficients.kendall`` (so the same floats), without recomputing them per resample.
    """
    zt = engine.z.T
    n = zt.shape[1]
    if engine.coefficient != "kendall" or not pair_kernel_fits(n):
        corr = coefficient_function(engine.coefficient)
        return lambda values: corr(values, zt)
    first, second = np.triu_indices(n, 1)
    z_signs = pair_signs(zt, first, second)  # (M, P); pairs with a NaN are masked below
    z_valid = ~np.isnan(zt)

    def per_input(values: np.ndarray) -> np.ndarray:
        valid = ~np.isnan(values) & z_valid
        compared = valid[..., first] & valid[..., second]
        return kendall_from_signs(pair_signs(values, first, second) * compared, z_signs * compared)

    return per_input


class _SwappedKendall:
    """Kendall's tau of every input of pair ``p``'s swapped X and Y, from the pair's four sign tables.

    A system pair (a, a') of a swapped column compares one of ``T_0..T_3`` (X_a vs X_a', X_a vs Y_a',
    Y_a vs X_a', Y_a vs Y_a'), chosen by the two swap bits; selecting the int8 signs (and the compared
    masks) gives ``pair_signs`` of the swapped matrices exactly, without materialising their scores.
    ``human``: the human's pair signs of a previous instance on the same engine (shared by every pair).
    """

    def __init__(self, engine: InputLinearPermutation, p: int, human: "_SwappedKendall | None" = None):
        i, k = engine.pairs[p]
        x, y = engine.metrics[i].T, engine.metrics[k].T  # (M, N)
        zt = engine.z.T
        n = zt.shape[1]
        if human is None:
            self.first, self.second = np.triu_indices(n, 1)
            self.z_valid = ~np.isnan(zt)
            self.z_signs = pair_signs(zt, self.first, self.second)
            self.within: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # per metric: T_0's signs and compared mask
        else:
            self.first, self.second, self.z_valid, self.z_signs = human.first, human.second, human.z_valid, human.z_signs
            self.within = human.within
        f, s = self.first, self.second
        z_valid, z_signs = self.z_valid, self.z_signs
        signs, compared = [], []
        for (a, left), (b, right) in (((i, x), (i, x)), ((i, x), (k, y)), ((k, y), (i, x)), ((k, y), (k, y))):
            if a == b and a in self.within:
                signs.append(self.within[a][0])
                compared.append(self.within[a][1])
                continue
            both = (~np.isnan(left) & z_valid)[:, f] & (~np.isnan(right) & z_valid)[:, s]
            signs.append(_signs(left[:, f], right[:, s]) * both)
            compared.append(both)
            if a == b:
                self.within[a] = signs[-1], both
        self.signs = signs
        # The human's signs on the pairs each swapped column compares: one array when no swap changes them.
        self.z = ([z_signs * compared[0]] if all(np.array_equal(compared[0], c) for c in compared[1:])
                  else [z_signs * c for c in compared])
        if len(self.z) == 1:
            # Fixed human signs: their count once, and the numerator as a float32 product (integer sums of at
            # most P signs: exact), ~2x the speed of kendall_from_signs' int64 reduction.
            self.z_float = self.z[0].astype(np.float32)
            self.z_count = np.count_nonzero(self.z[0], axis=-1).astype(np.float64)

    @staticmethod
    def _select(tables, on_a, on_b):
        # T_0 + u (T_2 - T_0) + u' (T_1 - T_0) + u u' (T_0 - T_1 - T_2 + T_3), in int8 (measured 5x np.where's speed).
        t0, t1, t2, t3 = (np.asarray(t, dtype=np.int8) for t in tables)
        out = np.multiply(on_a, t2 - t0, dtype=np.int8)
        out += np.multiply(on_b, t1 - t0, dtype=np.int8)
        out += np.multiply(on_a & on_b, t0 - t1 - t2 + t3, dtype=np.int8)
        out += t0
        return out

    def _kendall(self, signs: np.ndarray) -> np.ndarray:
        """``kendall_from_signs(signs, self.z[0])``: the same integer counts and float operations."""
        numerator = np.einsum("bjp,jp->bj", signs.astype(np.float32), self.z_float).astype(np.float64)
        counts = np.not_equal(signs, 0).view(np.int8).sum(axis=-1, dtype=np.int32).astype(np.float64)
        denominator = counts * self.z_count
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = numerator / np.sqrt(denominator)
        return np.where(denominator > 0, np.clip(tau, -1.0, 1.0), np.nan)

    def __call__(self, swapped: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(b, M) tau of the swapped X (Y's cell where ``swapped``) and Y, for masks (b, N, M)."""
        bits = np.swapaxes(swapped, 1, 2)
        on_a, on_b = bits[..., self.first], bits[..., self.second]
        out = []
        for tables in (self.signs, self.signs[::-1]):  # Ys takes X's cell where swapped: T_(3-c)
            if len(self.z) == 1:
                out.append(self._kendall(self._select(tables, on_a, on_b)))
                continue
            z = self._select(self.z if tables is self.signs else self.z[::-1], on_a, on_b)
            out.append(kendall_from_signs(self._select(tables, on_a, on_b), z))
        return out[0], out[1]


def _nanmean(values: np.ndarray) -> np.ndarray:
    defined = ~np.isnan(values)
    count = defined.sum(axis=1)
    out = np.full(values.shape[0], np.nan)
    np.divide(np.where(defined, values, 0.0).sum(axis=1), count, out=out, where=count > 0)
    return out
