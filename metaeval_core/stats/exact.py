"""Exact ties in averaged judgments: human scores on an integer grid.

A human score that is the mean of ``k`` integer ratings (3.6667 = 11/3) is a rational number, and two
system means that are equal as rationals can differ in their last bit as floats, depending on summation
order. Every statistic that tells "tied" from "ordered" (tau-b, the pairwise accuracies, rSYS-Delta) then
turns a true tie into an arbitrary concordant or discordant pair.

When a measure's scores all lie on a grid ``1/L`` (``L * score`` is an integer up to rounding), the matrix
``G = round(L * scores)`` holds exact integers: sums of any resample of its cells are exact in float64
(while below 2**53), one division by the count gives the correctly rounded mean, and equal rationals give
equal floats. Every coefficient metaeval computes is invariant to a positive rescaling of the human
scores, so correlations may use ``G`` in place of the scores; values in the measure's units are ``G / L``.

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
# A scaled score within this relative distance of an integer is that integer (ratings stored as text keep
# ~15-17 significant digits; a float32 round trip does not and falls back to plain floats).
_GRID_TOLERANCE = 1e-9
# Sums of grid values stay exact in float64 below 2**53.
_EXACT_SUM_LIMIT = 2.0**53


@dataclass(frozen=True)
class IntegerGrid:
    """A measure's scores as exact integers: ``scores == integers / denominator`` on every finite cell.

    References: docs/methods.md sec. 15.2.
    """

    denominator: int
    integers: np.ndarray


def _on_grid(values: np.ndarray, denominator: int) -> bool:
    scaled = values * denominator
    return bool(np.all(np.abs(scaled - np.rint(scaled)) <= _GRID_TOLERANCE * np.maximum(1.0, np.abs(scaled))))


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
    """The measure's scores on an integer grid, or None when they are not means of integer ratings.

    The denominator is the lcm of the rating counts when the measure keeps integer per-annotator scores,
    else the smallest ``L <= 60`` putting every finite score on the grid ``1/L``. None when no grid fits,
    or when sums over all cells could exceed 2**53 (then floats are compared as they are).

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
    finite = scores[np.isfinite(scores)]
    if finite.size == 0:
        return None
    candidates: list[int] = []
    if measure.annotators is not None:
        from_annotators = _annotator_denominator(np.asarray(measure.annotators, dtype=np.float64))
        if from_annotators is not None:
            candidates.append(from_annotators)
    candidates.extend(range(1, _MAX_DENOMINATOR + 1))
    probe = finite[:_PROBE]
    for denominator in candidates:
        if _on_grid(probe, denominator) and _on_grid(finite, denominator):
            integers = np.rint(scores * denominator)
            if np.nanmax(np.abs(integers)) * max(scores.size, 1) >= _EXACT_SUM_LIMIT:
                return None
            integers.setflags(write=False)
            return IntegerGrid(denominator, integers)
    return None


def exact_matrix(dataset: Dataset, name: str, *, pool: str = "judged") -> np.ndarray:
    """``dataset.matrix(name, pool=pool)``, on its integer grid when ``name`` is a human measure that has one.

    The result is a positive multiple of the scores, so any coefficient between it and a metric equals the
    one on the scores, with exact ties among cells and among means of equal rationals. Metrics (and human
    measures off any grid) are returned as they are.

    References: docs/methods.md sec. 15.2.
    """
    matrix = dataset.matrix(name, pool=pool)
    measure = dataset.measure(name)
    if measure.kind != "human":
        return matrix
    grid = integer_grid(measure)
    if grid is None:
        return matrix
    # A human measure's matrix is its judged columns (pool applies to metrics only).
    return grid.integers[:, dataset.judged]


def exact_system_means(dataset: Dataset, name: str, *, pool: str = "judged") -> np.ndarray:
    """Per-system means in the measure's units, equal as floats whenever they are equal as rationals.

    References: docs/methods.md sec. 15.2.
    """
    matrix = dataset.matrix(name, pool=pool)
    measure = dataset.measure(name)
    grid = integer_grid(measure) if measure.kind == "human" else None
    denominator = 1 if grid is None else grid.denominator
    values = matrix if grid is None else grid.integers[:, dataset.judged]
    valid = ~np.isnan(values)
    count = valid.sum(axis=-1)
    total = np.where(valid, values, 0.0).sum(axis=-1)  # exact: a sum of integers below 2**53
    # One division by the exact integer count * L: the correctly rounded mean, equal for equal rationals.
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count * denominator, 1), np.nan)
