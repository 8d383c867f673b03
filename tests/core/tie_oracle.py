"""A slow, readable oracle of the tie-calibrated accuracy with one epsilon (docs/methods.md sec. 11.2).

Exact arithmetic (fractions): every candidate epsilon (0 and each observed |dx|) is tried, each input's
accuracy with that epsilon is counted pair by pair, the input-level value is their plain mean, and the
smallest epsilon reaching the maximum wins.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np


def _pairs(x: np.ndarray, z: np.ndarray):
    keep = np.flatnonzero(~(np.isnan(x) | np.isnan(z)))
    return [(x[a] - x[b], z[a] - z[b]) for a, b in itertools.combinations(keep, 2)]


def _accuracy(pairs, eps: float) -> Fraction:
    correct = 0
    for dx, dz in pairs:
        metric_sign = 0 if abs(dx) <= eps else np.sign(dx)
        correct += metric_sign == np.sign(dz)
    return Fraction(correct, len(pairs))


def _best(columns) -> tuple[float, float]:
    """columns: per defined input (or one pooled column), the list of (dx, dz) pairs."""
    columns = [c for c in columns if c]
    if not columns:
        return math.nan, math.nan
    candidates = sorted({0.0} | {abs(dx) for c in columns for dx, _ in c})
    best, best_eps = None, None
    for eps in candidates:
        value = sum((_accuracy(c, eps) for c in columns), Fraction(0)) / len(columns)
        if best is None or value > best:
            best, best_eps = value, eps
    return float(best), float(best_eps)


def one_epsilon(x: np.ndarray, z: np.ndarray, level: str) -> tuple[float, float]:
    """(accuracy, epsilon) of an (N, M) metric and human matrix at ``level``."""
    if level == "input":
        return _best([_pairs(x[:, j], z[:, j]) for j in range(x.shape[1])])
    if level == "system":
        def means(a):
            return np.array([np.nan if np.isnan(r).all() else np.nanmean(r) for r in a])
        return _best([_pairs(means(x), means(z))])
    return _best([_pairs(x.ravel(), z.ravel())])


def per_item(x: np.ndarray, z: np.ndarray) -> float:
    """The per-input-epsilon variant (each input its own best epsilon), averaged: what metaeval no longer reports."""
    values = [_best([_pairs(x[:, j], z[:, j])])[0] for j in range(x.shape[1])]
    values = [v for v in values if not math.isnan(v)]
    return float(np.mean(values)) if values else math.nan
