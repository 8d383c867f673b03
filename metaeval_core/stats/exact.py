"""Exact ties in averaged judgments: scores on an integer grid.

A human score that is the mean of ``k`` integer ratings (3.6667 = 11/3) is a rational number, and two
system means that are equal as rationals can differ in their last bit as floats, depending on summation
order. Every statistic that tells "tied" from "ordered" (tau-b, the pairwise accuracies, rSYS-Delta) then
turns a true tie into an arbitrary concordant or discordant pair.

When a measure's scores provably lie on a grid ``1/L`` (``L * score`` is within a few units in the last
place of a small integer on every cell, and rounding merges no two floats that differ by more than that),
the matrix ``G = round(L * scores)`` holds exact integers: sums of any resample of its cells are exact in
float64 (while below 2**53), one division by the count gives the correctly rounded mean, and equal
rationals give equal floats. Every coefficient metaeval computes is invariant to a positive rescaling of
either side, so correlations may use ``G`` in place of the scores, for a human measure or a metric (an
LLM judge's mean of integer ratings); values in the measure's units are ``G / L``. Continuous scores fail
the test and are compared as the floats they are.

References: docs/methods.md sec. 15.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np

from metaeval_core.data.dataset import Dataset, Measure

# Grid denominators tried when a measure keeps no per-annotator scores: means of up to 12 ratings, and the
# common half/third/quarter/tenth steps of rating scales.
_MAX_DENOMINATOR = 60
# A scaled score is the integer n when it lies within this many units in the last place of n: a relative
# tolerance, so it neither swallows tiny scores (a score rounds to 0 only when it is exactly 0) nor merges
# distinct large ones (1e9 + 0.01 is not 1e9). A mean k/L computed in float64 is within ~2 ulps; one written
# as text with 15 significant digits (spreadsheets) within ~24; a float32 round trip is ~1e8 ulps away.
_GRID_ULPS = 32
# Integers beyond this are not "small": a rating sum this large is no rating sum, and the ulp tolerance
# would approach the grid step (2**40 * 32 ulps = 2**-7).
_MAX_INTEGER = 2.0**40
# Sums of grid values stay exact in float64 below 2**53.
_EXACT_SUM_LIMIT = 2.0**53


@dataclass(frozen=True)
class IntegerGrid:
    """A measure's scores as exact integers: ``scores == integers / denominator`` on every finite cell.

    References: docs/methods.md sec. 15.2.
    """

    denominator: int
    integers: np.ndarray


# Cells checked at a time: the check's temporaries stay ~40 MB whatever the measure's size (40M cells at the limit).
_CHECK_CHUNK = 1_000_000


def _on_grid(values: np.ndarray, denominator: int) -> bool:
    """Whether every non-NaN value ``v`` has ``L v`` within ``_GRID_ULPS`` ulps of an integer of at most 2**40.

    This also keeps the floats' order and ties except for float spellings: ``v -> round(L v)`` is monotone
    (rounding a product and rounding to an integer both are), so no two values swap; and two distinct values
    that share an integer ``n`` both lie within the tolerance of ``n``, so they differ by at most twice it,
    one rational spelled two ways. Only an exact 0 lies on the grid at 0 (``np.spacing(0)`` is the smallest
    subnormal), so tiny scores are never merged with 0 or with each other.
    """
    for start in range(0, values.size, _CHECK_CHUNK):
        chunk = values[start:start + _CHECK_CHUNK]
        scaled = chunk * denominator
        integers = np.rint(scaled)
        with np.errstate(invalid="ignore"):
            ok = (np.abs(integers) <= _MAX_INTEGER) & (
                np.abs(scaled - integers) <= _GRID_ULPS * np.spacing(np.abs(integers)))
        if not (ok | np.isnan(chunk)).all():
            return False
    return True


def _annotator_denominator(annotators: np.ndarray) -> int | None:
    """The lcm of the per-cell rating counts when every rating is an integer, else None."""
    finite = annotators[np.isfinite(annotators)]
    if finite.size == 0 or not np.array_equal(finite, np.rint(finite)):
        return None
    counts = np.unique(np.isfinite(annotators).sum(axis=0))
    counts = counts[counts > 0]
    denominator = math.lcm(*(int(c) for c in counts)) if counts.size else 1
    return denominator if denominator <= _MAX_DENOMINATOR else None


def integer_grid(measure: Measure) -> IntegerGrid | None:
    """The measure's scores on an integer grid, or None when they are not provably means of integer ratings.

    The denominator is the lcm of the rating counts when the measure keeps integer per-annotator scores,
    else the smallest ``L <= 60`` putting every finite score on the grid ``1/L``: ``L * score`` within 32
    units in the last place of an integer of magnitude at most 2**40 (a relative tolerance: only an exact 0
    rounds to 0), with no two floats merged by rounding unless they differ by no more than that. None when
    no grid fits, or when sums over all cells could exceed 2**53 (then floats are compared as they are).

    References: docs/methods.md sec. 15.2.
    """
    if not isinstance(measure, Measure):
        raise TypeError(f"measure must be a Measure, got {type(measure).__name__}")
    # Measures are immutable and every correlation of a table asks again for the same human measure.
    if measure not in _GRIDS:
        _GRIDS[measure] = _find_grid(measure)
    return _GRIDS[measure]


_GRIDS: "weakref.WeakKeyDictionary[Measure, IntegerGrid | None]" = weakref.WeakKeyDictionary()
# Scores tried on each candidate denominator before all of them: continuous scores fail every candidate here.
_PROBE = 256


def _find_grid(measure: Measure) -> IntegerGrid | None:
    scores = np.asarray(measure.scores, dtype=np.float64)
    flat = scores.reshape(-1)
    if not np.isfinite(flat).any():
        return None
    candidates: list[int] = []
    if measure.annotators is not None:
        from_annotators = _annotator_denominator(np.asarray(measure.annotators, dtype=np.float64))
        if from_annotators is not None:
            candidates.append(from_annotators)
    candidates.extend(range(1, _MAX_DENOMINATOR + 1))
    head = flat[:16 * _PROBE]
    probe = head[~np.isnan(head)][:_PROBE]
    for denominator in candidates:
        if _on_grid(probe, denominator) and _on_grid(flat, denominator):
            integers = scores * denominator
            np.rint(integers, out=integers)  # in place: one matrix-sized array, not three
            if max(np.nanmax(integers), -np.nanmin(integers)) * max(scores.size, 1) >= _EXACT_SUM_LIMIT:
                return None
            integers.setflags(write=False)
            return IntegerGrid(denominator, integers)
    return None


def exact_matrix(dataset: Dataset, name: str, *, pool: str = "judged") -> np.ndarray:
    """``dataset.matrix(name, pool=pool)``, on its integer grid when the measure has one.

    The result is a positive multiple of the scores, so any coefficient between it and another measure equals
    the one on the scores, with exact ties among cells and among means of equal rationals. Human measures and
    metrics alike (an LLM judge's scores are means of integer ratings too); measures off any grid are
    returned as they are.

    References: docs/methods.md sec. 15.2.
    """
    matrix = dataset.matrix(name, pool=pool)
    grid = integer_grid(dataset.measure(name))
    if grid is None:
        return matrix
    return _pool_columns(dataset, name, grid.integers, pool)


def _pool_columns(dataset: Dataset, name: str, values: np.ndarray, pool: str) -> np.ndarray:
    """``values`` (systems x all inputs) restricted to the columns ``dataset.matrix(name, pool=pool)`` holds."""
    # Human measures always use the judged inputs; pool='all' applies to metrics only.
    if pool == "all" and dataset.measure(name).kind != "human":
        return values
    return values[:, dataset.judged]


def grid_scale(dataset: Dataset, name: str) -> float:
    """The factor :func:`exact_matrix` multiplies ``name``'s scores by (1 off any grid), so that a threshold
    found on that matrix is divided back into the measure's units.

    References: docs/methods.md sec. 15.2.
    """
    grid = integer_grid(dataset.measure(name))
    return 1.0 if grid is None else float(grid.denominator)


def exact_system_means(dataset: Dataset, name: str, *, pool: str = "judged", judged_by: str | None = None) -> np.ndarray:
    """Per-system means in the measure's units, equal as floats whenever they are equal as rationals.

    With ``judged_by`` (a human measure) and pool ``judged``, each system's mean is over the cells that measure
    scored: the judged pool of that human measure (docs/methods.md sec. 0.2).

    References: docs/methods.md sec. 15.2.
    """
    matrix = dataset.matrix(name, pool=pool)
    grid = integer_grid(dataset.measure(name))
    denominator = 1 if grid is None else grid.denominator
    values = matrix if grid is None else _pool_columns(dataset, name, grid.integers, pool)
    if judged_by is not None and pool == "judged":
        values = np.where(np.isnan(dataset.matrix(judged_by)), np.nan, values)
    return units_means(values, denominator)


def units_means(values: np.ndarray, denominator: float = 1.0) -> np.ndarray:
    """Means over the last axis (NaN ignored) of scores, or of a grid ``L * scores`` in the measure's units.

    On a grid the sum of integers is exact (below 2**53) and one division by the exact integer ``count * L``
    gives the correctly rounded mean, equal for equal rationals; with ``denominator`` 1 this is the plain mean.

    References: docs/methods.md sec. 15.2.
    """
    valid = ~np.isnan(values)
    count = valid.sum(axis=-1)
    total = np.where(valid, values, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count * denominator, 1), np.nan)
