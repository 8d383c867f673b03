"""Soft pairwise accuracy (Thompson et al., 2024): agreement of pairwise permutation p-values.

For every pair of systems ``i < i'`` the one-sided paired permutation p-value that ``i`` beats
``i'`` is computed from the metric's and from the humans' segment scores; SPA is
``1 - mean |p_metric - p_human|`` over the pairs. It is a system-level statistic of the two
score matrices, not of the system means.

Convention (docs/methods.md sec. 11.3):

* a pair's inputs are those where both systems are scored; its statistic is the sum over them of
  ``d_j = X_ij - X_i'j`` (the mean over a fixed set of inputs orders permutations identically);
* a permutation swaps the two systems' scores on input ``j`` when ``g_j = -1``: the permuted
  statistic is ``sum_j g_j d_j`` and ``p = #{permuted >= observed} / n_permutations`` (no ``+1``);
* the swap signs ``g`` (n_permutations x inputs) are fixed: ``SPA_PERMUTATIONS`` rows drawn from
  ``numpy.random.default_rng(SPA_SEED)`` as float32 uniforms, ``g = +1`` where the uniform exceeds
  1/2, as in Thompson et al.'s reference implementation, so SPA is a deterministic function of the
  data and the same signs serve the human and every metric (column ``j`` for the ``j``-th input);
* a permuted sum within ``1e-9 * sum_j |d_j|`` of the observed one counts as reaching it, so
  rounding in the order of summation never decides an exact tie (an all-zero ``d`` gives ``p = 1``);
* a pair counts only when both the metric and the humans score both systems on at least one
  common input; with no such pair SPA is undefined (NaN).

Bootstrap resamples of systems and inputs reuse these functions: a resampled matrix has the same
number of inputs, so the same signs apply to its positions, and its pairs of resampled systems are
pairs of original systems (either direction) or a system paired with its own copy (``d = 0``,
``p = 1`` for both, contributing 0).

References: docs/methods.md sec. 11.3; Thompson et al. (2024).
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

SPA_PERMUTATIONS = 1000
SPA_SEED = 4
# Relative tolerance of the comparison "permuted >= observed" (see the module docstring).
_SPA_TOLERANCE = 1e-9
# Elements (pairs x permutations) evaluated per chunk: bounds memory to tens of MB.
_SPA_ELEMENT_BUDGET = 4_000_000
# Rough seconds on this project's shared 2-core benchmark machine under load (benchmarks/bench_spa.py), used
# only to refuse runs of minutes: per multiply-add of the permuted sums, and per (pair x permutation)
# comparison.
SPA_SECONDS_PER_MULTIPLY_ADD = 1.5e-10
SPA_SECONDS_PER_COMPARISON = 1.2e-8
# One SPA value estimated to take longer than this is refused with the reason (2,000 systems x 2 inputs: ~50 s
# estimated, 81 s measured on the shared machine; 1,000 systems: ~12 s).
SPA_MAX_SECONDS = 30.0


def estimated_spa_seconds(n_systems: int, n_inputs: int, n_products: float, *, complete: bool = True,
                          n_permutations: int = SPA_PERMUTATIONS) -> float:
    """Rough seconds of ``n_products`` p-value computations (all pairs) of one (n_systems x n_inputs) matrix.

    A complete matrix costs ``N M k`` multiply-adds (per-system permuted sums) and ``P k`` comparisons; a
    matrix with missing cells ``P M k`` multiply-adds (one row per pair), ``P = N (N - 1) / 2``.

    References: docs/methods.md sec. 11.3.
    """
    pairs = n_systems * (n_systems - 1) / 2
    rows = n_systems if complete else pairs
    one = (rows * n_inputs * n_permutations * SPA_SECONDS_PER_MULTIPLY_ADD
           + pairs * n_permutations * SPA_SECONDS_PER_COMPARISON)
    return one * n_products


@functools.lru_cache(maxsize=16)
def _cached_signs(n_inputs: int, n_permutations: int) -> np.ndarray:
    uniforms = np.random.default_rng(SPA_SEED).random(size=(n_permutations, n_inputs), dtype=np.float32)
    # Stored inputs x permutations (C order): the right operand of every product below.
    signs = np.ascontiguousarray(np.where(uniforms > 0.5, 1.0, -1.0).T)
    signs.setflags(write=False)
    return signs


def swap_signs(n_inputs: int, *, n_permutations: int = SPA_PERMUTATIONS) -> np.ndarray:
    """The fixed swap signs (n_permutations x n_inputs, +1 keep / -1 swap) of SPA's permutation tests.

    References: docs/methods.md sec. 11.3.
    """
    return _cached_signs(int(n_inputs), int(n_permutations)).T


def pair_indices(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """The system pairs ``i < i'`` in row-major order (``numpy.triu_indices(n, 1)``)."""
    return np.triu_indices(n_systems, 1)


def _pair_differences(matrix: np.ndarray, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair the differences on common inputs (0 elsewhere) and whether any input is common."""
    valid = ~np.isnan(matrix)
    filled = np.where(valid, matrix, 0.0)
    common = valid[..., first, :] & valid[..., second, :]
    d = np.where(common, filled[..., first, :] - filled[..., second, :], 0.0)
    return d, common.any(axis=-1)


def _pvalues_from_differences(d: np.ndarray, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward (``i`` beats ``i'``) and reverse p-values of every row of ``d`` (rows x inputs)."""
    d = np.ascontiguousarray(d)
    observed = d.sum(axis=-1)
    tolerance = _SPA_TOLERANCE * np.abs(d).sum(axis=-1)
    permuted = d @ signs.T  # (rows, permutations); signs.T is C-contiguous (see _cached_signs)
    k = signs.shape[0]
    forward = np.count_nonzero(permuted >= (observed - tolerance)[:, None], axis=-1) / k
    reverse = np.count_nonzero(permuted <= (observed + tolerance)[:, None], axis=-1) / k
    return forward, reverse


def _pvalues_complete(x: np.ndarray, signs: np.ndarray, first: np.ndarray, second: np.ndarray, *,
                      spread: np.ndarray | None = None, reverse: bool = True):
    """Forward and reverse p-values (B, P) of every pair of complete matrices ``x`` (B, N, M), no NaN.

    A pair's permuted sum is the difference of the two systems' permuted sums, so one product
    (B N x M) x (M x permutations) serves all ``P = N (N - 1) / 2`` pairs, ``(N - 1) / 2`` times less work
    than one row per pair. Inputs are centred over the systems first (the differences are unchanged) so
    the sums stay of the size of the differences; the comparison's tolerance adds a bound on the rounding
    of these sums (``8 M u`` times the two systems' summed magnitudes, ``u = 2^-53``), so an exact tie is
    still never decided by rounding. ``spread`` (B, P), the pairs' ``sum_j |d_j|``, may be given;
    ``reverse=False`` skips the reverse p-values (returned as None).
    """
    k = signs.shape[0]
    b, n, m = x.shape
    centred = x - x.mean(axis=1, keepdims=True)
    permuted_systems = (np.ascontiguousarray(centred).reshape(b * n, m) @ signs.T).reshape(b, n, k)
    totals = centred.sum(axis=-1)
    observed = totals[:, first] - totals[:, second]
    if spread is None:
        spread = np.abs(centred[:, first, :] - centred[:, second, :]).sum(axis=-1)
    magnitude = np.abs(centred).sum(axis=-1)
    tolerance = _SPA_TOLERANCE * spread + m * 2.0**-50 * (magnitude[:, first] + magnitude[:, second])
    low, high = observed - tolerance, observed + tolerance
    forward = np.empty((b, first.size))
    backward = np.empty((b, first.size)) if reverse else None
    start = 0
    # System by system against every later one: broadcast differences, no gathered (B, P, k) copies.
    for i in range(n - 1):
        stop = start + n - 1 - i
        permuted = permuted_systems[:, i, None, :] - permuted_systems[:, i + 1:, :]
        forward[:, start:stop] = np.count_nonzero(permuted >= low[:, start:stop, None], axis=-1)
        if reverse:
            backward[:, start:stop] = np.count_nonzero(permuted <= high[:, start:stop, None], axis=-1)
        start = stop
    return forward / k, (backward / k if reverse else None)


def _complete_step(n: int, m: int, k: int) -> int:
    """Matrices per chunk of :func:`_pvalues_complete` (its (B, P, max(M, k)) temporaries stay in budget)."""
    pairs = max(n * (n - 1) // 2, 1)
    return max(1, _SPA_ELEMENT_BUDGET // (pairs * max(m, k)))


def pairwise_pvalues(
    matrix: np.ndarray, *, n_permutations: int = SPA_PERMUTATIONS, signs: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """One-sided paired permutation p-values that system ``i`` beats ``i'``, for every pair ``i < i'``.

    Parameters
    ----------
    matrix : array_like, shape (..., N, M)
        Scores, systems x inputs, NaN where missing.
    n_permutations : int, default SPA_PERMUTATIONS
    signs : array_like, shape (n_permutations, M), optional
        Swap signs (+1 keep, -1 swap); by default :func:`swap_signs`.

    Returns
    -------
    pvalue : numpy.ndarray, shape (..., P)
        For the pairs of :func:`pair_indices` (NaN where the two systems share no scored input).
    defined : numpy.ndarray of bool, shape (..., P)

    References: docs/methods.md sec. 11.3.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    n, m = matrix.shape[-2:]
    g = swap_signs(m, n_permutations=n_permutations) if signs is None else np.asarray(signs, dtype=np.float64)
    first, second = pair_indices(n)
    batch_shape = matrix.shape[:-2]
    slices = matrix.reshape(-1, n, m)
    out = np.empty((slices.shape[0], first.size))
    defined = np.ones((slices.shape[0], first.size), dtype=bool)
    complete = ~np.isnan(slices).any(axis=(1, 2))
    # Complete matrices (the usual case): per-system permuted sums; others: one row per pair.
    whole = np.flatnonzero(complete)
    step = _complete_step(n, m, g.shape[0])
    for start in range(0, whole.size, step):
        rows = whole[start:start + step]
        out[rows] = _pvalues_complete(slices[rows], g, first, second, reverse=False)[0]
    partial = np.flatnonzero(~complete)
    if partial.size:
        d, ok = _pair_differences(slices[partial], first, second)
        defined[partial] = ok
        flat = d.reshape(-1, m)
        values = np.empty(flat.shape[0])
        row_step = max(1, _SPA_ELEMENT_BUDGET // max(g.shape[0], m, 1))
        for start in range(0, flat.shape[0], row_step):
            values[start:start + row_step] = _pvalues_from_differences(flat[start:start + row_step], g)[0]
        out[partial] = values.reshape(partial.size, first.size)
    out = out.reshape(*batch_shape, first.size)
    defined = defined.reshape(*batch_shape, first.size)
    return np.where(defined, out, np.nan), defined


def spa_from_pvalues(
    p_metric: np.ndarray, p_human: np.ndarray, *, n_permutations: int = SPA_PERMUTATIONS
) -> np.ndarray:
    """``1 - mean |p_metric - p_human|`` over the pairs (last axis) where both are defined; NaN if none.

    The p-values are multiples of ``1 / n_permutations``; the gaps are summed as integer counts, so the
    result is exact and independent of how many rows are reduced at once.
    """
    p_metric = np.asarray(p_metric, dtype=np.float64)
    p_human = np.asarray(p_human, dtype=np.float64)
    gap = np.abs(p_metric - p_human)
    defined = ~np.isnan(gap)
    return _spa_from_gaps(np.rint(np.where(defined, gap, 0.0) * n_permutations).astype(np.int64), defined,
                          n_permutations)


def _spa_from_gaps(gaps: np.ndarray, defined: np.ndarray, n_permutations: int) -> np.ndarray:
    count = defined.sum(axis=-1)
    total = np.where(defined, gaps, 0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, 1.0 - total / (n_permutations * np.maximum(count, 1)), np.nan)


class _PairPvalues:
    """Forward and reverse p-values of the original system pairs of one matrix, per input resample."""

    def __init__(self, matrix: np.ndarray, n_permutations: int):
        self.matrix = matrix
        self.n, self.m = matrix.shape
        self.signs = swap_signs(self.m, n_permutations=n_permutations)
        self.first, self.second = pair_indices(self.n)
        self.complete = not bool(np.isnan(matrix).any())
        if self.complete:
            self.abs_d = np.abs(matrix[self.first] - matrix[self.second])  # (P, M): each pair's |d_j|
            forward, reverse = _pvalues_complete(matrix[None], self.signs, self.first, self.second)
            self.fixed = (forward[0], reverse[0], np.ones(self.first.size, bool), np.ones(self.n, bool))
            return
        self.d, _ = _pair_differences(matrix, self.first, self.second)  # (P, M)
        self.common = ~np.isnan(matrix[self.first]) & ~np.isnan(matrix[self.second])  # (P, M)
        self.scored = ~np.isnan(matrix)  # (N, M)
        forward, reverse = _pvalues_from_differences(self.d, self.signs)
        self.fixed = (forward, reverse, self.common.any(axis=-1), self.scored.any(axis=-1))

    def resampled(self, inputs: np.ndarray | None, b: int, reverse: bool = True):
        """(forward, reverse, pair defined) (b, P) and system scored (b, N) for input draws (b, M) or None.

        ``reverse=False`` (no pair of resampled systems can be reversed) leaves the reverse p-values None.
        """
        if inputs is None:
            return tuple(np.broadcast_to(v, (b, v.size)) for v in self.fixed)
        p = self.first.size
        if self.complete:
            resampled = np.swapaxes(self.matrix[:, inputs], 0, 1)  # (b, N, M)
            # sum_t |d_{idx_t}| = sum_j (draws of j) |d_j|; einsum keeps each row's sum independent of b.
            spread = np.einsum("sj,pj->sp", _input_counts(inputs, self.m), self.abs_d)
            forward = np.empty((b, p))
            backward = np.empty((b, p)) if reverse else None
            step = _complete_step(self.n, self.m, self.signs.shape[0])
            for start in range(0, b, step):
                sl = slice(start, start + step)
                f, r = _pvalues_complete(resampled[sl], self.signs, self.first, self.second, spread=spread[sl],
                                         reverse=reverse)
                forward[sl] = f
                if reverse:
                    backward[sl] = r
            return forward, backward, np.ones((b, p), bool), np.ones((b, self.n), bool)
        d = np.swapaxes(self.d[:, inputs], 0, 1).reshape(b * p, -1)  # (b P, M), resample-major
        forward, reverse = _pvalues_from_differences(d, self.signs)
        defined = self.common[:, inputs].any(axis=-1).T
        scored = self.scored[:, inputs].any(axis=-1).T
        return forward.reshape(b, p), reverse.reshape(b, p), defined, scored


def _input_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """(b, draws) indices into 0..n-1 -> (b, n) float multiplicities."""
    b = indices.shape[0]
    flat = (indices + n * np.arange(b)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def _resampled_pair_lookup(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pair of original systems (a, b): the index of the pair ``min < max`` and whether a > b."""
    first, second = pair_indices(n)
    index = np.full((n, n), -1, dtype=np.int64)
    index[first, second] = np.arange(first.size)
    index[second, first] = np.arange(first.size)
    reverse = np.zeros((n, n), dtype=bool)
    reverse[second, first] = True
    return first, second, index, reverse


def spa_resampled(
    metrics: Sequence[np.ndarray],
    human: np.ndarray,
    *,
    systems: np.ndarray | None,
    metric_inputs: np.ndarray | None,
    human_inputs: np.ndarray | None,
    n_resamples: int,
    n_permutations: int = SPA_PERMUTATIONS,
    batch: int | None = None,
) -> np.ndarray:
    """(k, q) SPA of every metric with the humans on bootstrap resamples of systems and/or inputs.

    ``systems`` (k, N), ``metric_inputs`` (k, Mx) and ``human_inputs`` (k, M) are resample indices
    (None where that axis is kept). Every p-value is recomputed on each resample's inputs; the pairs
    of resampled systems are looked up among the original pairs (either direction), so a batch of
    ``b`` resamples costs one product (b pairs x inputs) x (inputs x permutations) per measure.
    Each row of that product is one pair of one resample, so the result does not depend on ``batch``.

    References: docs/methods.md sec. 2 and 11.3.
    """
    q = len(metrics)
    n = human.shape[0]
    out = np.full((n_resamples, q), np.nan)
    if n < 2 or n_resamples == 0:
        return out
    tables = [_PairPvalues(np.asarray(x, dtype=np.float64), n_permutations) for x in metrics]
    human_table = _PairPvalues(np.asarray(human, dtype=np.float64), n_permutations)
    first, second, index, reverse = _resampled_pair_lookup(n)
    n_pairs = first.size
    if batch is None:
        batch = max(1, _SPA_ELEMENT_BUDGET // (n_pairs * max(n_permutations, 1)))
    for start in range(0, n_resamples, batch):
        sl = slice(start, min(start + batch, n_resamples))
        b = sl.stop - sl.start
        sys = np.broadcast_to(np.arange(n), (b, n)) if systems is None else systems[sl]
        a, c = sys[:, first], sys[:, second]
        pair = index[a, c]
        own = pair < 0  # a system paired with its own copy: d = 0, p = 1 for both
        pair = np.where(own, 0, pair)
        flipped = reverse[a, c]

        def gather(table, inputs):
            forward, backward, defined, scored = table.resampled(None if inputs is None else inputs[sl], b,
                                                                 reverse=systems is not None)
            if systems is None:  # resampled inputs only: every pair keeps its systems and direction
                return forward, defined
            p = np.where(flipped, np.take_along_axis(backward, pair, 1), np.take_along_axis(forward, pair, 1))
            ok = np.where(own, np.take_along_axis(scored, a, 1), np.take_along_axis(defined, pair, 1))
            return np.where(own, 1.0, p), ok

        ph, ok_h = gather(human_table, human_inputs)
        for i, table in enumerate(tables):
            pm, ok_m = gather(table, metric_inputs)
            ok = ok_h & ok_m
            gaps = np.rint(np.abs(pm - ph) * n_permutations).astype(np.int64)
            out[sl, i] = _spa_from_gaps(gaps, ok, n_permutations)
    return out


def soft_pairwise_accuracy(
    metric: np.ndarray, human: np.ndarray, *, n_permutations: int = SPA_PERMUTATIONS
) -> np.ndarray:
    """SPA of metric and human score matrices of shape ``(..., N, Mx)`` and ``(..., N, M)``.

    ``Mx`` may differ from ``M`` (the metric's pool ``all``); each matrix's p-values use its own
    inputs. Vectorised over the leading axes (chunked to bound memory). NaN when no pair is defined.

    References: docs/methods.md sec. 11.3; Thompson et al. (2024).
    """
    metric = np.asarray(metric, dtype=np.float64)
    human = np.asarray(human, dtype=np.float64)
    _check_spa_cost(metric, human, n_permutations)
    p_metric, _ = pairwise_pvalues(metric, n_permutations=n_permutations)
    p_human, _ = pairwise_pvalues(human, n_permutations=n_permutations)
    if p_metric.shape[-1] == 0:
        return np.full(np.broadcast_shapes(metric.shape[:-2], human.shape[:-2]), np.nan)
    return spa_from_pvalues(p_metric, p_human, n_permutations=n_permutations)


def _check_spa_cost(metric: np.ndarray, human: np.ndarray, n_permutations: int) -> None:
    """Refuse up front, with the reason and what to change, one SPA value that would take minutes.

    Only a single value (two 2-D matrices): batches come from resampling methods, whose callers plan their whole
    run (the pages' ``check_interval_size``), and a refusal must not depend on the batch size.
    """
    if metric.ndim != 2 or human.ndim != 2:
        return
    n_systems = metric.shape[-2]
    seconds = sum(
        estimated_spa_seconds(n_systems, matrix.shape[-1], 1, complete=not np.isnan(matrix).any(),
                              n_permutations=n_permutations) for matrix in (metric, human))
    if seconds > SPA_MAX_SECONDS:
        raise ValueError(
            f"soft-pairwise-accuracy on {n_systems:,} systems computes a permutation p-value for each of the "
            f"{n_systems * (n_systems - 1) // 2:,} system pairs of both measures ({n_permutations:,} permutations; "
            f"about {seconds:.0f} s here, more than {SPA_MAX_SECONDS:.0f} s is refused); use Kendall or "
            "pairwise-accuracy, or a subset of the systems"
        )


class SwapDeltas:
    """``SPA(Xs, Z) - SPA(Ys, Z)`` for batches of swap masks between two metrics X and Y.

    The swaps change only the metrics' matrices, so the humans' p-values are computed once. Swapped
    cells or inputs (PERM-BOTH, PERM-INPUTS) need every swapped matrix's p-values, one product per
    resample and metric. Swapped whole systems (PERM-SYSTEMS, masks of shape (b, N, 1)) only choose,
    per pair, which of four fixed p-values applies (each system from X or from Y), computed once.

    References: docs/methods.md sec. 3.1 and 11.3.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, z: np.ndarray, *, n_permutations: int = SPA_PERMUTATIONS):
        self.x, self.y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        self.n_permutations = n_permutations
        self.p_human, _ = pairwise_pvalues(z, n_permutations=n_permutations)
        self._by_source = None

    def _source_pvalues(self) -> np.ndarray:
        """(4, P) p-values of pair (i, i') with i from X or Y and i' from X or Y (index 2 u + v, 1 = Y)."""
        if self._by_source is None:
            n, m = self.x.shape
            first, second = pair_indices(n)
            both = np.concatenate([self.x, self.y])
            signs = swap_signs(m, n_permutations=self.n_permutations)
            table = np.empty((4, first.size))
            for u in (0, 1):
                for v in (0, 1):
                    d, defined = _pair_differences(both, first + u * n, second + v * n)
                    table[2 * u + v] = np.where(defined, _pvalues_from_differences(d, signs)[0], np.nan)
            self._by_source = table
        return self._by_source

    def deltas(self, mask: np.ndarray) -> np.ndarray:
        """delta_s for swap masks broadcastable to (b, N, M) (True where X and Y swap)."""
        n, m = self.x.shape
        b = mask.shape[0]
        if m > 1 and mask.shape[1:] == (n, 1):
            table = self._source_pvalues()
            first, second = pair_indices(n)
            from_y = mask[:, :, 0].astype(np.int64)  # Xs takes system i from Y where swapped
            cols = np.arange(first.size)
            p_xs = table[2 * from_y[:, first] + from_y[:, second], cols]
            p_ys = table[2 * (1 - from_y[:, first]) + (1 - from_y[:, second]), cols]
            k = self.n_permutations
            return (spa_from_pvalues(p_xs, self.p_human, n_permutations=k)
                    - spa_from_pvalues(p_ys, self.p_human, n_permutations=k))
        mask = np.broadcast_to(mask, (b, n, m))
        swapped = np.concatenate([np.where(mask, self.y, self.x), np.where(mask, self.x, self.y)])
        p, _ = pairwise_pvalues(swapped, n_permutations=self.n_permutations)
        spa = spa_from_pvalues(p, self.p_human, n_permutations=self.n_permutations)
        return spa[:b] - spa[b:]
