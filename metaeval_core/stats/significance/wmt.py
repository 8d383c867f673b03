"""WMT's system-level permutation test (mt-metrics-eval's ``PermutationSigDiff`` on system scores).

The test the WMT metrics shared tasks run at the system level (google-research/mt-metrics-eval,
``stats.PermutationSigDiff`` called by ``data.CompareMetrics`` on ``Correlation`` objects of system
scores, ``average_by='none'``):

1. keep the systems with a gold (human) score; here also with both metrics' scores, so that the
   statistic and its null are computed on the same systems (WMT's metrics score every system);
2. z-score each metric's N *system-level* scores (mean and population standard deviation over
   the kept systems; a constant metric is only centred);
3. ``k`` times, for every system independently with probability 1/2, swap the two metrics'
   z-scored system scores, and recompute ``delta_s = r(X_s, Z) - r(Y_s, Z)``;
4. ``p = (1 + #{delta_s >= delta}) / (1 + k)``.

This differs from PERM-SYSTEMS (TACL 2021 Algorithm 2), which z-scores the *cells* of each
matrix and swaps whole rows of cells before taking system means: the two nulls differ and so do
the p-values (both are valid tests). mt-metrics-eval reports ``#{...} / k`` (0 possible) and stops
early at block boundaries (``PermutationSigDiffParams``); metaeval keeps ``(1 + #) / (1 + k)``
(never 0, within ``1 / (1 + k)`` of it) and draws all ``k`` resamples.

Swap masks: ``rng.random((k, N)) < 1/2``, drawn up front (one row per resample, one column per
system of the full matrix), so every pair of a table swaps the same systems on resample ``s``
(common random numbers) and the chunking (``batch``) never changes a result.

References: docs/methods.md sec. 3.6; google-research/mt-metrics-eval ``stats.py`` (PermutationSigDiff)
and ``data.py`` (CompareMetrics, ComputeSigMatrix); Freitag et al. (WMT 2022 metrics task, sec. 7).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from metaeval_core.stats.coefficients import pair_kernel_fits, pair_signs, tau_b_from_counts
from metaeval_core.stats.correlation import system_means
from metaeval_core.stats.resampling import _auto_batch, _chunks, _rows_correlation

WMT_SYSTEM_TEST = "wmt-perm-sys"
# The name pages and tables print (mt-metrics-eval's function and where it runs).
WMT_SYSTEM_TEST_LABEL = "WMT-PERM-SYS (mt-metrics-eval PermutationSigDiff, system scores)"


def default_test(dataset, level: str, coefficient: str) -> str:
    """The test a table runs when none is named: WMT's at the system level on WMT (mt-metrics-eval) data, where it
    is defined; PERM-BOTH (TACL 2021's recommendation) otherwise.

    References: docs/methods.md sec. 3.6.
    """
    from metaeval_core.data.mtme import follows_wmt
    from metaeval_core.stats.significance._common import method_problem

    if follows_wmt(dataset) and not method_problem(WMT_SYSTEM_TEST, level, coefficient):
        return WMT_SYSTEM_TEST
    return "perm-both"


def draw_system_swaps(rng: np.random.Generator, n_resamples: int, n_systems: int) -> np.ndarray:
    """(k, N) booleans, True where resample ``s`` swaps system ``i`` (drawn in one call, batch-free)."""
    return rng.random((n_resamples, n_systems)) < 0.5


def _standardise(values: np.ndarray) -> np.ndarray:
    """z-scores with the population standard deviation (scipy.stats.zscore); a constant vector is only centred."""
    centred = values - values.mean()
    sd = float(values.std())
    return centred / sd if sd > 0 and np.isfinite(sd) else centred


class WmtSystemPermutation:
    """The WMT test for K metrics sharing one human measure and one sequence of swap masks.

    ``matrices`` are the metrics' (N, M) score matrices (their system means are the system scores)
    or (N, 1) system scores; ``human`` likewise. Every quantity of a pair is computed from that
    pair's vectors only, so a pair's result inside a table equals its result alone.
    """

    def __init__(self, matrices: Sequence[np.ndarray], human: np.ndarray, coefficient: str):
        self.coefficient = coefficient
        self.means = np.stack([system_means(np.asarray(m, dtype=np.float64)) for m in matrices])  # (K, N)
        self.z = system_means(np.asarray(human, dtype=np.float64))  # (N,)

    def pair(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(kept systems, z-scored X, z-scored Y, Z)`` of the pair: systems with all three scores."""
        x, y = self.means[a], self.means[b]
        keep = np.flatnonzero(~(np.isnan(self.z) | np.isnan(x) | np.isnan(y)))
        return keep, _standardise(x[keep]), _standardise(y[keep]), self.z[keep]

    def observed(self, a: int, b: int) -> float:
        """``delta = r(X, Z) - r(Y, Z)`` on the pair's kept systems (the test's threshold)."""
        _, x, y, z = self.pair(a, b)
        if z.size < 2:
            return float("nan")
        values = _rows_correlation(np.stack([x, y]), z[None, :], self.coefficient)
        return float(values[0] - values[1])

    def deltas(self, a: int, b: int, masks: np.ndarray) -> np.ndarray:
        """``delta_s`` of the pair for (b, N) swap masks (NaN where undefined)."""
        keep, x, y, z = self.pair(a, b)
        if z.size < 2:
            return np.full(masks.shape[0], np.nan)
        swap = masks[:, keep]
        # Contiguous rows: each resample's reduction is the same whatever the chunk's height.
        xs = np.ascontiguousarray(np.where(swap, y, x))
        ys = np.ascontiguousarray(np.where(swap, x, y))
        zs = z[None, :]
        return _rows_correlation(xs, zs, self.coefficient) - _rows_correlation(ys, zs, self.coefficient)


_PAIR_ROWS = 200_000  # rows (resamples x pairs) sent to the coefficient at once
# Systems up to which Kendall's swap nulls come from per-system-pair tables (4 configurations per system pair).
_KENDALL_TABLE_MAX_N = 200


def _kendall_swap_nulls(x: np.ndarray, y: np.ndarray, z: np.ndarray, swaps: np.ndarray, size: int) -> np.ndarray:
    """``tau(X_s, Z) - tau(Y_s, Z)`` for (P, n) z-scored metric pairs ``x``, ``y`` and (k, n) swap masks: (P, k).

    A system pair's signs in ``X_s`` depend only on which of its two systems are swapped (4 configurations), so
    each metric pair's contribution of every configuration is tabled once, and a resample's counts (``P - Q``,
    ``P + Q`` and the pairs tied in Z only) are one product of its configuration indicators with the tables: exact
    integers, shared by every metric pair. Kendall's tau-b then comes from the same counts and the same formula
    (:func:`~metaeval_core.stats.coefficients.tau_b_from_counts`) as :func:`~metaeval_core.stats.coefficients.kendall`
    on the swapped rows, so the nulls are bit-identical to computing it row by row.

    References: docs/methods.md sec. 3.6.
    """
    n = z.size
    first, second = np.triu_indices(n, 1)
    sz = pair_signs(z, first, second)  # (np,)
    tied_z = sz == 0
    n_pairs = first.size
    tables = np.empty((n_pairs, 4, 2, 3, x.shape[0]), dtype=np.float32)
    for c, (swap_i, swap_j) in enumerate(((False, False), (False, True), (True, False), (True, True))):
        for side, (own, other) in enumerate(((x, y), (y, x))):
            a = (other if swap_i else own)[:, first]
            b = (other if swap_j else own)[:, second]
            sx = ((a > b).astype(np.int8) - (a < b).astype(np.int8)).T  # (np, P)
            tables[:, c, side, 0] = sx * sz[:, None]
            tables[:, c, side, 1] = (sx != 0) & ~tied_z[:, None]
            tables[:, c, side, 2] = (sx != 0) & tied_z[:, None]
    tables = tables.reshape(n_pairs * 4, -1)
    nonzero_z = float(np.count_nonzero(sz))
    out = np.empty((x.shape[0], swaps.shape[0]))
    for sl in _chunks(swaps.shape[0], size):
        config = 2 * swaps[sl][:, first].astype(np.intp) + swaps[sl][:, second]  # (b, np)
        onehot = np.zeros((config.shape[0], n_pairs * 4), dtype=np.float32)
        np.put_along_axis(onehot, 4 * np.arange(n_pairs) + config, 1.0, axis=1)
        counts = np.rint(onehot @ tables).astype(np.int64).reshape(-1, 2, 3, x.shape[0])
        d, both, only_x = counts[:, :, 0], counts[:, :, 1], counts[:, :, 2]
        tau = tau_b_from_counts((both + d) // 2, (both - d) // 2, nonzero_z - both, only_x)  # (b, 2, P)
        out[:, sl] = (tau[:, 0] - tau[:, 1]).T
    return out


def wmt_pair_nulls(
    stack: Sequence[np.ndarray],
    human: np.ndarray,
    *,
    coefficient: str,
    n_resamples: int,
    rng: np.random.Generator,
    batch: int | None = None,
    pairs: Sequence[tuple[int, int]] | None = None,
    progress: Callable[[float], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(nulls (pairs, k), thresholds (pairs,))`` of the WMT test for every pair of ``stack``.

    ``pairs`` defaults to ``itertools.combinations(range(len(stack)), 2)``. The masks come from ``rng``
    (one (k, N) draw), shared by all pairs.

    References: docs/methods.md sec. 3.6.
    """
    import itertools

    report = progress if progress is not None else (lambda fraction: None)
    engine = WmtSystemPermutation(stack, human, coefficient)
    pairs = list(itertools.combinations(range(len(stack)), 2)) if pairs is None else list(pairs)
    n = engine.z.shape[0]
    masks = draw_system_swaps(rng, n_resamples, n)
    nulls = np.full((len(pairs), n_resamples), np.nan)
    size = _auto_batch(batch, 4 * n, n_resamples)
    # Pairs that keep the same systems go through the coefficient together, their rows stacked: one call per
    # block of pairs instead of two per pair (496 pairs of WMT23's 32 metrics: 1,000 calls of 1,000 x 15 rows).
    # Each row's value depends on that row only (contiguous rows), so a pair's nulls are the ones it gets alone.
    groups: dict[bytes, list[int]] = {}
    for u, (a, b) in enumerate(pairs):
        groups.setdefault(engine.pair(a, b)[0].tobytes(), []).append(u)
    done = 0
    for members in groups.values():
        keep = engine.pair(*pairs[members[0]])[0]
        if keep.size < 2:
            done += len(members)
            continue
        z = engine.z[keep][None, :]
        if engine.coefficient == "kendall" and pair_kernel_fits(keep.size) and keep.size <= _KENDALL_TABLE_MAX_N:
            sides = [engine.pair(*pairs[u])[1:3] for u in members]
            nulls[members] = _kendall_swap_nulls(np.stack([xy[0] for xy in sides]), np.stack([xy[1] for xy in sides]),
                                                 engine.z[keep], masks[:, keep], size)
            done += len(members)
            report(done / max(len(pairs), 1))
            continue
        per_block = max(1, _PAIR_ROWS // max(size, 1))
        for start in range(0, len(members), per_block):
            block = members[start:start + per_block]
            sides = [engine.pair(*pairs[u])[1:3] for u in block]
            for sl in _chunks(n_resamples, size):
                swap = masks[sl][:, keep][None]  # (1, b, n)
                x = np.stack([xy[0] for xy in sides])[:, None, :]  # (P, 1, n)
                y = np.stack([xy[1] for xy in sides])[:, None, :]
                rows = swap.shape[1]
                xs = np.ascontiguousarray(np.where(swap, y, x)).reshape(-1, keep.size)
                ys = np.ascontiguousarray(np.where(swap, x, y)).reshape(-1, keep.size)
                delta = _rows_correlation(xs, z, engine.coefficient) - _rows_correlation(ys, z, engine.coefficient)
                nulls[block, sl] = delta.reshape(len(block), rows)
            done += len(block)
            report(done / max(len(pairs), 1))
    thresholds = np.array([engine.observed(a, b) for a, b in pairs])
    return nulls, thresholds
