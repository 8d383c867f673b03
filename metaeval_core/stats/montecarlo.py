"""Resampling primitives shared by every statistic: draws, percentile bounds, Monte Carlo p-values, missing values.

One home for what the intervals (stats/resampling.py, stats/pairs), the tests (stats/significance), the chance
baselines (analyses/chance.py) and the judges (judges/) all need, so that they agree on what a percentile interval,
a permutation p-value or an undefined number is:

* :func:`percentile_bounds`: the central ``confidence_level`` range of the defined (non-NaN) resampled values;
* :func:`count_pvalue`: ``(1 + #{values at least as extreme}) / (1 + k)`` over the defined values, never 0;
* :func:`block_generators`: the one draw scheme, fixed blocks of :data:`BLOCK` resamples, block ``g`` from child
  stream ``g`` of ``SeedSequence(seed)``, so the draws never depend on the batch size (the correlation bootstrap
  draws its system and input indices this way, ``stats.resampling._draw_bootstrap_indices``);
* :func:`block_draws`: bootstrap indices, swap bits or permutations in those blocks, chunk by chunk, so only the
  blocks being evaluated are held in memory (the judges);
* :func:`finite_or_none`: a number as JSON says it (None when undefined; defined in :mod:`metaeval_core.wording`,
  the core's lowest floor, so the data layer shares it).

Batch invariance: every function here gives the same numbers whatever the batch size (docs/methods.md sec. 2).

References
----------
docs/methods.md sec. 2 (percentile intervals) and sec. 3 (Monte Carlo p-values); Davison & Hinkley (1997),
Bootstrap Methods and their Application, sec. 4.2 (the (1 + #) / (1 + k) p-value).
"""

from __future__ import annotations

import math
from typing import Iterator, Literal

import numpy as np

from metaeval_core.wording import finite_or_none  # the one NaN-to-None helper, re-exported here

__all__ = ["BLOCK", "TOLERANCE", "auto_batch", "block_draws", "block_generators", "chunks", "count_pvalue", "finite_or_none",
           "multiplicities", "percentile_bounds", "percentile_interval", "seed_of"]

# Resampled statistics equal to the observed one up to floating-point noise count as "as extreme".
TOLERANCE = 1e-12

# Resamples per block of :func:`block_draws`: each block has its own stream, so the draws do not depend on batch.
BLOCK = 64

# Elements (resamples x cells) materialised per batch when ``batch`` is None: bounds memory to a few tens of MB
# while keeping numpy's per-call overhead negligible.
_BATCH_ELEMENT_BUDGET = 2_000_000


def percentile_bounds(values: np.ndarray, confidence_level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The central ``confidence_level`` percentile range over axis 0 of the defined (non-NaN) values.

    ``values`` is (k, ...) resampled statistics; returns ``(low, high, n_defined)`` of shape ``values.shape[1:]``,
    NaN bounds where no value is defined. Percentiles use numpy's default (linear) interpolation.

    Examples
    --------
    >>> values = np.array([[0.1, np.nan], [0.3, np.nan], [0.2, 1.0], [0.5, 2.0], [0.4, 3.0]])
    >>> low, high, n = percentile_bounds(values, 0.5)
    >>> low.round(3).tolist(), high.round(3).tolist(), n.tolist()
    ([0.2, 1.5], [0.4, 2.5], [5, 3])

    References
    ----------
    docs/methods.md sec. 2.
    """
    values = np.asarray(values, dtype=float)
    alpha = 1.0 - confidence_level
    q = [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)]
    defined = (~np.isnan(values)).sum(axis=0)
    if values.ndim == 1:
        kept = values[~np.isnan(values)]
        if kept.size == 0:
            return np.float64(np.nan), np.float64(np.nan), defined
        low, high = np.percentile(kept, q)
        return np.float64(low), np.float64(high), defined
    low = np.full(values.shape[1:], np.nan)
    high = np.full(values.shape[1:], np.nan)
    some = defined > 0
    if some.any():
        with np.errstate(all="ignore"):
            bounds = np.nanpercentile(values[:, some], q, axis=0)
        low[some], high[some] = bounds[0], bounds[1]
    return low, high, defined


def percentile_interval(values: np.ndarray, confidence_level: float) -> tuple[float, float, int]:
    """:func:`percentile_bounds` of one statistic's resampled values, as ``(low, high, n_defined)`` Python numbers.

    Examples
    --------
    >>> percentile_interval(np.array([1.0, np.nan, 3.0, 2.0]), 0.5)
    (1.5, 2.5, 3)
    >>> percentile_interval(np.array([np.nan]), 0.95)
    (nan, nan, 0)
    """
    low, high, n = percentile_bounds(np.asarray(values, dtype=float).ravel(), confidence_level)
    return float(low), float(high), int(n)


def count_pvalue(values: np.ndarray, observed: float, *,
                 alternative: Literal["greater", "two-sided"] = "greater") -> tuple[float, int]:
    """A Monte Carlo p-value: ``(1 + #{values >= observed}) / (1 + k)`` over the ``k`` defined values
    (``|values| >= |observed|`` when two-sided), never 0; NaN when none is defined or ``observed`` is undefined.

    Returns ``(p, k)``. Values within :data:`TOLERANCE` of ``observed`` count as at least as extreme.

    Examples
    --------
    >>> p, k = count_pvalue(np.array([0.1, 0.5, np.nan, 0.9]), 0.5)
    >>> float(p), k
    (0.75, 3)
    >>> float(count_pvalue(np.array([-0.6, 0.1, 0.2]), 0.5, alternative="two-sided")[0])
    0.5

    References
    ----------
    docs/methods.md sec. 3.
    """
    values = np.asarray(values, dtype=float)
    defined = values[~np.isnan(values)]
    if defined.size == 0 or not np.isfinite(observed):
        return math.nan, int(defined.size)
    if alternative == "two-sided":
        hits = np.count_nonzero(np.abs(defined) >= abs(observed) - TOLERANCE)
    else:
        hits = np.count_nonzero(defined >= observed - TOLERANCE)
    return (1.0 + hits) / (1.0 + defined.size), int(defined.size)


def seed_of(rng: object) -> int:
    """One integer seed for several computations that must each start from the same draws: an int seed as
    is, a Generator's next 63-bit integer (it advances), fresh entropy for None."""
    from metaeval_core._checks import as_generator

    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        as_generator(rng)  # validates (non-negative)
        return int(rng)
    return int(as_generator(rng).integers(0, 2**63 - 1))


def auto_batch(batch: int | None, per_resample: int, n_resamples: int) -> int:
    """``batch``, or as many resamples as fit the memory budget at ``per_resample`` numbers each."""
    if batch is not None:
        return batch
    return int(max(1, min(n_resamples, _BATCH_ELEMENT_BUDGET // max(per_resample, 1))))


def chunks(n_resamples: int, batch: int) -> Iterator[slice]:
    """Consecutive slices of at most ``batch`` resamples covering ``range(n_resamples)``."""
    for start in range(0, n_resamples, batch):
        yield slice(start, min(start + batch, n_resamples))


def multiplicities(indices: np.ndarray, n: int) -> np.ndarray:
    """(b, draws) bootstrap indices into ``0..n-1`` -> (b, n) float multiplicities (one bincount for the batch).

    Examples
    --------
    >>> multiplicities(np.array([[0, 0, 2], [1, 2, 2]]), 3).tolist()
    [[2.0, 0.0, 1.0], [0.0, 1.0, 2.0]]
    """
    b = indices.shape[0]
    flat = (indices + n * np.arange(b)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def block_generators(rng: object, n_resamples: int) -> Iterator[tuple[slice, np.random.Generator]]:
    """The one draw scheme: ``n_resamples`` resamples in blocks of :data:`BLOCK`, block ``g`` drawn from child
    stream ``g`` of ``SeedSequence(seed)`` (``seed`` the int given, or the next integer of the Generator given).
    Yields each block's resample slice and its generator; what a block draws (and in which order) is the
    caller's, so the draws of resample ``r`` depend on ``seed`` and ``r`` only, never on a batch size.

    Examples
    --------
    >>> [(sl.start, sl.stop) for sl, _ in block_generators(0, 150)]
    [(0, 64), (64, 128), (128, 150)]
    """
    streams = np.random.SeedSequence(seed_of(rng)).spawn(-(-n_resamples // BLOCK))
    for g, stream in enumerate(streams):
        yield slice(g * BLOCK, min((g + 1) * BLOCK, n_resamples)), np.random.default_rng(stream)


def _draw(kind: str, gen: np.random.Generator, rows: int, n: int) -> np.ndarray:
    if kind == "items":
        return gen.integers(0, n, size=(rows, n))
    if kind == "swaps":
        return (gen.random((rows, n)) < 0.5).astype(np.float64)
    return gen.permuted(np.tile(np.arange(n), (rows, 1)), axis=1)


def block_draws(kind: Literal["items", "swaps", "permutations"], rng: object, n_resamples: int, n: int,
                per_resample: int, batch: int | None) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield ``(slice, draws)`` chunks of ``n_resamples`` resamples of ``n`` items, about ``batch`` resamples at a
    time (default: a memory budget of ``per_resample`` numbers per resample):

    * ``'items'``: bootstrap indices, (b, n) ``integers(0, n)``;
    * ``'swaps'``: swap bits, (b, n) floats, 1 where ``random() < 1/2``;
    * ``'permutations'``: (b, n) permutations of ``range(n)`` (``permuted`` along each row).

    Draws come in blocks of :data:`BLOCK` resamples, block ``g`` from child stream ``g`` of
    ``SeedSequence(seed)`` (``seed`` the int given, or the next integer of the Generator given), so they do not
    depend on ``batch``; a chunk is several whole blocks, or a part of one when a resample is large.

    Examples
    --------
    >>> whole = np.concatenate([d for _, d in block_draws("items", 7, 100, 5, 5, None)])
    >>> parts = np.concatenate([d for _, d in block_draws("items", 7, 100, 5, 5, 3)])
    >>> whole.shape, bool((whole == parts).all())
    ((100, 5), True)
    """
    blocks = list(block_generators(rng, n_resamples))
    b = auto_batch(batch, per_resample, n_resamples)
    if b >= BLOCK:
        per_step = b // BLOCK
        for first in range(0, len(blocks), per_step):
            group = blocks[first:first + per_step]
            draws = np.concatenate([_draw(kind, gen, sl.stop - sl.start, n) for sl, gen in group])
            yield slice(group[0][0].start, group[-1][0].stop), draws
        return
    for sl, gen in blocks:
        # a part of a block at a time from the block's own generator: the same numbers as the whole block (draws
        # are sequential), without holding the block (64 resamples of a million items: 512 MB of indices)
        rows = sl.stop - sl.start
        for start in range(0, rows, b):
            part = _draw(kind, gen, min(b, rows - start), n)
            yield slice(sl.start + start, sl.start + start + len(part)), part
