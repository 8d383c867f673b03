"""Metric-human correlations at the system, input and global levels.

References: docs/methods.md sec. 1 (Deutsch, Dror & Roth, TACL 2021, sec. 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np

from metaeval_core._checks import check_choice
from metaeval_core.data.checks import check_human
from metaeval_core.stats.coefficients import (
    PDP,
    Coefficient,
    pdp_input,
    coefficient_function,
    require_level_for,
    tie_calibrated_accuracy,
    validate_coefficient,
)
from metaeval_core.stats.spa import soft_pairwise_accuracy
from metaeval_core.stats.tiecal import input_tie_calibrated
from metaeval_core._frames import ToFrame
from metaeval_core.wording import finite_or_none
from metaeval_core.data.dataset import Dataset, Pool, POOLS
from metaeval_core.stats.exact import exact_matrix, grid_scale

Level = Literal["system", "input", "global"]
LEVELS: tuple[str, ...] = get_args(Level)


@dataclass(frozen=True)
class LevelCorrelation:
    """Correlations from score matrices, one per leading batch index.

    ``estimate`` is NaN where undefined. ``n`` is the number of points behind
    each value: systems (system level), inputs whose correlation was defined
    (input level) or cells (global level). ``n_undefined`` counts the inputs
    skipped at the input level (0 at other levels). ``epsilon`` is the tie threshold of
    'tie-calibrated-accuracy' (one per batch index, shared by every input at the input level;
    NaN where undefined) and None for the other coefficients.
    """

    estimate: np.ndarray
    n: np.ndarray
    n_undefined: np.ndarray
    epsilon: np.ndarray | None = None


def nanmean_last(values: np.ndarray) -> np.ndarray:
    """Mean over the last axis ignoring NaN; NaN (without a warning) when all are NaN."""
    valid = ~np.isnan(values)
    count = valid.sum(axis=-1)
    total = np.where(valid, values, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def system_means(matrix: np.ndarray) -> np.ndarray:
    """Per-system means over the inputs (last axis), ignoring NaN."""
    return nanmean_last(np.asarray(matrix, dtype=np.float64))


def correlate_matrices(
    metric: np.ndarray,
    human: np.ndarray,
    *,
    level: Level = "system",
    coefficient: Coefficient = "kendall",
) -> LevelCorrelation:
    """Correlate a metric and a human score matrix of shape ``(..., N, M)``.

    At the system level the two matrices may have different numbers of inputs
    (the metric's pool may be ``all``); at the input and global levels they must
    share their inputs. ``'soft-pairwise-accuracy'`` is computed from the two
    matrices' pairwise permutation p-values (system level only).

    References: docs/methods.md sec. 1 and 11.3.
    """
    validate_level(level)
    validate_coefficient(coefficient)
    require_level_for(coefficient, level)
    metric = np.asarray(metric, dtype=np.float64)
    human = np.asarray(human, dtype=np.float64)
    if metric.ndim < 2 or human.ndim < 2:
        raise ValueError("metric and human must be score matrices of shape (..., systems, inputs)")
    if metric.shape[-2] != human.shape[-2]:
        raise ValueError(
            f"metric and human must have the same number of systems; got {metric.shape[-2]} and {human.shape[-2]}"
        )
    if coefficient == "soft-pairwise-accuracy":
        estimate = soft_pairwise_accuracy(metric, human)
        x = system_means(metric)
        z = system_means(human)
        n = (~np.isnan(x) & ~np.isnan(z)).sum(axis=-1)
        return LevelCorrelation(np.asarray(estimate, dtype=np.float64), n, np.zeros_like(n))
    corr = coefficient_function(coefficient)
    calibrated = coefficient == "tie-calibrated-accuracy"
    if level == "system":
        x = system_means(metric)
        z = system_means(human)
        n = (~np.isnan(x) & ~np.isnan(z)).sum(axis=-1)
        if calibrated:
            return _calibrated_slices(x, z, n)
        return LevelCorrelation(corr(x, z), n, np.zeros_like(n))
    if metric.shape[-1] != human.shape[-1]:
        raise ValueError(
            f"at the {level} level metric and human must share their inputs; got {metric.shape[-1]} and {human.shape[-1]}"
        )
    if level == "input" and calibrated:
        # One epsilon for every input (docs/methods.md sec. 11.2), not one per input.
        result = input_tie_calibrated(metric, human)
        return LevelCorrelation(result.accuracy, result.n, result.n_undefined, result.epsilon)
    if level == "input" and coefficient == PDP:
        # One Pearson's r over every input's pair differences, pooled (docs/methods.md sec. 11.4).
        estimate = pdp_input(metric, human)
        pairs = _judged_pair_inputs(metric, human)
        return LevelCorrelation(estimate, pairs, human.shape[-1] - pairs)
    if level == "input":
        per_input = corr(np.swapaxes(metric, -1, -2), np.swapaxes(human, -1, -2))
        defined = ~np.isnan(per_input)
        return LevelCorrelation(nanmean_last(per_input), defined.sum(axis=-1), (~defined).sum(axis=-1))
    batch = metric.shape[:-2]
    x = metric.reshape(*batch, -1)
    z = human.reshape(*batch, -1)
    n = (~np.isnan(x) & ~np.isnan(z)).sum(axis=-1)
    if calibrated:
        return _calibrated_slices(x, z, n)
    return LevelCorrelation(corr(x, z), n, np.zeros_like(n))


def _judged_pair_inputs(metric: np.ndarray, human: np.ndarray) -> np.ndarray:
    """Inputs with at least two systems scored by both (those that contribute pair differences)."""
    valid = ~(np.isnan(metric) | np.isnan(human))
    return (valid.sum(axis=-2) >= 2).sum(axis=-1)


def _calibrated_slices(x: np.ndarray, z: np.ndarray, n: np.ndarray) -> LevelCorrelation:
    """System or global level: one epsilon over the level's pairs, reported with the accuracy."""
    result = tie_calibrated_accuracy(x, z)
    epsilon = np.where(np.isnan(result.accuracy), np.nan, result.epsilon)
    return LevelCorrelation(result.accuracy, n, np.zeros_like(n), epsilon)


@dataclass(frozen=True)
class CorrelationResult(ToFrame):
    """One metric-human correlation on a dataset.

    References: docs/methods.md sec. 1.
    """

    metric: str
    human: str
    level: str
    coefficient: str
    pool: str
    estimate: float
    n: int
    n_undefined: int
    systems: str = ""
    epsilon: float = math.nan

    @property
    def defined(self) -> bool:
        return bool(np.isfinite(self.estimate))

    def to_dict(self) -> dict:
        return {
            "metric": self.metric,
            "human": self.human,
            "level": self.level,
            "coefficient": self.coefficient,
            "pool": self.pool,
            "estimate": None if not self.defined else float(self.estimate),
            "n": int(self.n),
            "n_undefined": int(self.n_undefined),
            "systems": self.systems,
            "epsilon": finite_or_none(self.epsilon),
        }


def correlation_inputs(
    dataset: Dataset, metric: str, human: str, *, level: Level, pool: Pool
) -> tuple[np.ndarray, np.ndarray]:
    """The metric and human matrices a correlation at ``level`` uses.

    Input and global correlations compare cells, so they always use the judged
    inputs; the ``all`` pool changes only system-level means. The judged pool is the
    human measure's own: the metric's cells where ``human`` has a score (:func:`judged_cells`).
    A measure (human or metric) whose scores are means of integer ratings comes on its integer grid (a
    positive multiple of the scores, with exact ties; docs/methods.md sec. 15).
    """
    validate_level(level)
    check_choice(pool, "pool", POOLS)
    check_human(dataset, human)
    effective_pool = pool if level == "system" else "judged"
    x, z = exact_matrix(dataset, metric, pool=effective_pool), exact_matrix(dataset, human)
    return (judged_cells(x, z) if effective_pool == "judged" else x), z


def judged_cells(metric: np.ndarray, human: np.ndarray) -> np.ndarray:
    """The metric's judged pool for one human measure: its cells where that measure has a score (NaN elsewhere).

    A system's metric mean then averages exactly the inputs its human mean averages (docs/methods.md sec. 0.2),
    also when the human measure scored only some inputs of some systems (WMT's DA: 0.166 for COMET-22 on
    WMT22 zh-en, where the inputs any human scored give 0.135). With complete human scores nothing changes.
    """
    metric = np.asarray(metric, dtype=np.float64)
    missing = np.isnan(human)
    if metric.shape != np.shape(human) or not missing.any():
        return metric
    return np.where(missing, np.nan, metric)


def correlate(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    level: Level = "system",
    coefficient: Coefficient = "kendall",
    pool: Pool = "judged",
    systems: str | None = None,
) -> CorrelationResult:
    """Correlation of one metric with one human measure on a dataset.

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
        Measure ids (any measure may serve as ``metric``; ``human`` must be a human measure).
    level : {'system', 'input', 'global'}
    coefficient : {'pearson', 'spearman', 'kendall', 'pairwise-accuracy', 'tie-calibrated-accuracy', 'soft-pairwise-accuracy', 'pdp'}
        ``'soft-pairwise-accuracy'`` at the system level only (docs/methods.md sec. 11.3); ``'pdp'``: Pairwise
        Difference Pearson, pooled over the inputs at the input level (sec. 11.4).
    pool : {'judged', 'all'}
        The metric's input pool at the system level (docs/methods.md sec. 0).
    systems : str, optional
        A system subset such as ``"type=abs"``.

    References
    ----------
    docs/methods.md sec. 1; Deutsch, Dror & Roth (TACL 2021) sec. 2.
    """
    subset = dataset.select_systems(systems).rated_by(human)
    x, z = correlation_inputs(subset, metric, human, level=level, pool=pool)
    result = correlate_matrices(x, z, level=level, coefficient=coefficient)
    return CorrelationResult(
        metric=metric,
        human=human,
        level=level,
        coefficient=coefficient,
        pool=pool if level == "system" else "judged",
        estimate=float(result.estimate),
        n=int(result.n),
        n_undefined=int(result.n_undefined),
        systems=systems or "",
        epsilon=math.nan if result.epsilon is None else float(result.epsilon) / grid_scale(subset, metric),
    )


def correlate_many(
    dataset: Dataset,
    metrics: Sequence[str],
    human: str,
    **options,
) -> list[CorrelationResult]:
    """:func:`correlate` for several metrics against one human measure."""
    if not metrics:
        raise ValueError("metrics must name at least one measure")
    return [correlate(dataset, m, human, **options) for m in metrics]


def validate_level(level: object) -> None:
    check_choice(level, "level", LEVELS)
