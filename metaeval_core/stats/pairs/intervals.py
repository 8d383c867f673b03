"""The bootstrap confidence interval of rSYS-Delta(l, u) (BOOT-INPUTS/SYSTEMS/BOTH), all indices drawn up front.

References: docs/methods.md sec. 2 and 4.4; Deutsch, Dror & Roth (NAACL 2022) sec. 3.2, 4.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval_core._checks import (
    RngLike, as_generator, check_choice, check_confidence_level, check_int, check_interval_resamples,
)
from metaeval_core.data.dataset import Dataset, Pool
from metaeval_core.stats.coefficients import kendall_counts_from_signs
from metaeval_core.stats.correlation import system_means
from metaeval_core.stats.montecarlo import percentile_interval
from metaeval_core.stats.exact import grid_scale, units_means
from metaeval_core.stats.pairs._delta import (
    _GATHER_BUDGET, _PAIR_BUDGET, DELTA_METHODS, DeltaMethod, DeltaResult, _dataset_matrices, _validate_bounds,
    _validate_matrices, check_pair_systems, rsys_delta,
)


# --------------------------------------------------------------------------------------------
# Bootstrap confidence interval of rSYS-Delta
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DeltaResamples:
    """Resample indices for :func:`delta_confidence_interval`, all drawn up front.

    ``metric_inputs`` (k, M_x) and ``human_inputs`` (k, M_z) are input indices
    (``None`` when inputs are not resampled; ``human_inputs is metric_inputs`` when
    the pool is ``judged`` and the same indices apply to both); ``systems`` (k, N)
    are system indices (``None`` when systems are not resampled).
    """

    metric_inputs: np.ndarray | None
    human_inputs: np.ndarray | None
    systems: np.ndarray | None
    n_resamples: int


def _index_dtype(n: int):
    return np.int32 if n < 2**31 - 1 else np.int64


def draw_delta_resamples(
    rng: RngLike,
    *,
    method: DeltaMethod,
    n_systems: int,
    n_metric_inputs: int,
    n_human_inputs: int,
    paired_inputs: bool,
    n_resamples: int,
) -> DeltaResamples:
    """Draw every resample index up front, in a fixed order.

    Order: metric input indices ``(k, M_x)``, then (unless ``paired_inputs``) human input
    indices ``(k, M_z)``, then system indices ``(k, N)``; each with one
    ``Generator.integers`` call, so results do not depend on how resamples are batched.
    """
    gen = as_generator(rng)
    k = n_resamples
    metric_inputs = human_inputs = systems = None
    if method in ("boot-inputs", "boot-both"):
        metric_inputs = gen.integers(0, n_metric_inputs, size=(k, n_metric_inputs), dtype=_index_dtype(n_metric_inputs))
        if paired_inputs:
            human_inputs = metric_inputs
        else:
            human_inputs = gen.integers(0, n_human_inputs, size=(k, n_human_inputs), dtype=_index_dtype(n_human_inputs))
    if method in ("boot-systems", "boot-both"):
        systems = gen.integers(0, n_systems, size=(k, n_systems), dtype=_index_dtype(n_systems))
    return DeltaResamples(metric_inputs, human_inputs, systems, k)


def resampled_means(matrix: np.ndarray, indices: np.ndarray, *, denominator: float = 1.0) -> np.ndarray:
    """Per-system means of ``matrix`` (N, M) over the input indices of each resample.

    With ``denominator`` L, ``matrix`` holds a measure's integer grid ``L * scores`` (docs/methods.md sec. 15)
    and the means are in the measure's units: the exact sum over ``count * L``, one correctly rounded division,
    so means equal as rationals are equal floats.

    ``indices`` has shape (b, m); the result has shape (b, N) and ignores NaN (NaN when a
    system has no valid resampled input). Each value is a sum over the gathered row, so it
    depends only on that resample's indices, never on the batch it was computed in, and
    systems with identical scores get identical means.
    """
    valid = ~np.isnan(matrix)
    filled = np.where(valid, matrix, 0.0)
    gathered = np.take(filled, indices, axis=1)  # (N, b, m)
    total = gathered.sum(axis=-1)
    if valid.all():
        count = np.full(total.shape, float(indices.shape[-1]))
    else:
        count = np.take(valid, indices, axis=1).sum(axis=-1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(count > 0, total / np.maximum(count * denominator, 1.0), np.nan)
    return means.T


def resampled_system_means(x_mat: np.ndarray, z_mat: np.ndarray, draws: DeltaResamples, start: int, stop: int,
                           x_means: np.ndarray, z_means: np.ndarray, *, x_denominator: float = 1.0
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Metric and human system means, each (stop - start, N), for resamples ``start:stop`` of ``draws``.

    ``x_means``/``z_means`` are the system means of ``x_mat``/``z_mat`` on the full data, used as
    they are when inputs are not resampled; resampled systems reorder the rows of both alike.
    """
    if draws.metric_inputs is not None:
        xb = resampled_means(x_mat, draws.metric_inputs[start:stop], denominator=x_denominator)
        zb = resampled_means(z_mat, draws.human_inputs[start:stop])
    else:
        xb = np.broadcast_to(x_means, (stop - start, x_means.size))
        zb = np.broadcast_to(z_means, (stop - start, z_means.size))
    if draws.systems is not None:
        s = draws.systems[start:stop]
        xb = np.take_along_axis(xb, s, axis=1)
        zb = np.take_along_axis(zb, s, axis=1)
    return xb, zb


def _default_batch(n_systems: int, n_inputs: int) -> int:
    return max(1, _GATHER_BUDGET // max(1, n_systems * max(1, n_inputs)))


def delta_taus_from_means(
    x: np.ndarray, z: np.ndarray, lower: float, upper: float
) -> tuple[np.ndarray, np.ndarray]:
    """rSYS-Delta(l, u) for each row of ``x``, ``z`` (b, N); also the selected pair counts.

    Pairs are taken over positions ``a < a'`` of the rows (system resamples may repeat
    a system; such a pair is tied in both and counts in none of P, Q, T, U). Pairs with
    a NaN mean are never selected.
    """
    n = x.shape[-1]
    first, second = np.triu_indices(n, 1)
    dx = x[:, first] - x[:, second]
    dz = z[:, first] - z[:, second]
    adx = np.abs(dx)
    selected = (adx >= lower) & (adx <= upper) & ~np.isnan(dz)
    sx = np.where(selected, np.sign(dx), 0).astype(np.int8)
    sz = np.where(selected, np.sign(dz), 0).astype(np.int8)
    return kendall_counts_from_signs(sx, sz).tau, selected.sum(axis=-1)


@dataclass(frozen=True)
class DeltaInterval:
    """A bootstrap percentile interval of rSYS-Delta(l, u).

    ``estimate`` is rSYS-Delta on the original data (``point`` holds its pair counts);
    ``low``/``high`` are the ``(1 -/+ confidence_level) / 2`` quantiles of the
    ``n_defined`` defined resampled values (NaN if none). ``distribution`` holds all
    ``n_resamples`` values (NaN where undefined) and ``pairs_per_resample`` the number
    of selected pairs in each.

    References: docs/methods.md sec. 2 and 4; NAACL 2022 sec. 3.2, 4.2.
    """

    estimate: float
    low: float
    high: float
    n_defined: int
    n_resamples: int
    distribution: np.ndarray
    method: str
    pool: str
    confidence_level: float
    lower: float
    upper: float
    point: DeltaResult
    pairs_per_resample: np.ndarray

    @property
    def width(self) -> float:
        return float(self.high - self.low)

    @property
    def n_undefined(self) -> int:
        return self.n_resamples - self.n_defined




def delta_confidence_interval(
    metric,
    human,
    *,
    lower: float = 0.0,
    upper: float = np.inf,
    method: DeltaMethod = "boot-inputs",
    pool: Pool = "judged",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: RngLike = None,
    batch: int | None = None,
) -> DeltaInterval:
    """Bootstrap percentile interval of rSYS-Delta(l, u), the pair set recomputed per resample.

    Each resample recomputes the system means (metric and human), then the pairs
    and which of them satisfy ``lower <= |dx| <= upper`` from the *resampled* metric
    means, then Kendall tau-b over those pairs. So the interval reflects both the
    noise in the human/metric ordering and the noise in which pairs count as close.

    Parameters
    ----------
    metric : array_like, shape (N, M_x)
        Metric scores over the metric's pool.
    human : array_like, shape (N, M_z)
        Human scores over the judged inputs.
    lower, upper : float
        Bounds on ``|dx|`` (metric units, inclusive).
    method : {'boot-inputs', 'boot-systems', 'boot-both'}
        What is resampled with replacement (TACL 2021 sec. 3).
    pool : {'judged', 'all'}
        ``'judged'``: the metric and human share their inputs (``M_x == M_z``) and the
        same input indices apply to both. ``'all'``: the metric's inputs (its
        ``M_test`` pool) and the human's (``M_jud``) are resampled separately.
        Systems are always resampled jointly.
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
    rng : numpy.random.Generator, int or None
        All indices are drawn up front (:func:`draw_delta_resamples`), so the result is
        the same for any ``batch``.
    batch : int, optional
        Resamples processed at once (memory only); default bounds the gathered array
        to about 4 million elements.

    Returns
    -------
    DeltaInterval

    References
    ----------
    docs/methods.md sec. 2 and 4; Deutsch, Dror & Roth (NAACL 2022) sec. 3.2, 4.2;
    Deutsch, Dror & Roth (TACL 2021) sec. 3 (Algorithm 1).
    """
    return _delta_interval(metric, human, 1.0, lower=lower, upper=upper, method=method, pool=pool,
                           confidence_level=confidence_level, n_resamples=n_resamples, rng=rng, batch=batch)


def _delta_interval(metric, human, x_denominator: float, *, lower, upper, method, pool, confidence_level,
                    n_resamples, rng, batch) -> DeltaInterval:
    """:func:`delta_confidence_interval`; ``metric`` may hold a grid ``L * scores`` (``x_denominator`` L), whose
    system means, full and resampled, are then exact in the metric's units (docs/methods.md sec. 15)."""
    x_mat, z_mat = _validate_matrices(metric, human, pool)
    lower, upper = _validate_bounds(lower, upper)
    check_choice(method, "method", DELTA_METHODS)
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_interval_resamples(n_resamples, confidence_level)
    batch = check_int(batch, "batch", allow_none=True)
    gen = as_generator(rng)
    n_sys = x_mat.shape[0]
    check_pair_systems(n_sys)
    point = rsys_delta(units_means(x_mat, x_denominator), system_means(z_mat), lower=lower, upper=upper)
    draws = draw_delta_resamples(
        gen,
        method=method,
        n_systems=n_sys,
        n_metric_inputs=x_mat.shape[1],
        n_human_inputs=z_mat.shape[1],
        paired_inputs=(pool == "judged"),
        n_resamples=n_resamples,
    )
    distribution, n_sel = _delta_resample_values(x_mat, z_mat, draws, lower, upper, batch, x_denominator)
    low, high, n_defined = percentile_interval(distribution, confidence_level)
    return DeltaInterval(
        estimate=point.estimate,
        low=low,
        high=high,
        n_defined=n_defined,
        n_resamples=n_resamples,
        distribution=distribution,
        method=method,
        pool=pool,
        confidence_level=float(confidence_level),
        lower=lower,
        upper=upper,
        point=point,
        pairs_per_resample=n_sel,
    )


def _delta_resample_values(x_mat, z_mat, draws: DeltaResamples, lower, upper, batch, x_denominator: float = 1.0):
    k = draws.n_resamples
    n_sys = x_mat.shape[0]
    if batch is None:
        batch = _default_batch(n_sys, max(x_mat.shape[1], z_mat.shape[1]) if draws.metric_inputs is not None else 1)
    # Whatever the batch asked for, hold at most about _PAIR_BUDGET pairs at once (results do not depend on it).
    batch = max(1, min(batch, _PAIR_BUDGET // max(1, n_sys * (n_sys - 1) // 2)))
    values = np.empty(k)
    n_sel = np.empty(k, dtype=np.int64)
    x_fixed = units_means(x_mat, x_denominator)
    z_fixed = system_means(z_mat)
    for start in range(0, k, batch):
        stop = min(k, start + batch)
        xb, zb = resampled_system_means(x_mat, z_mat, draws, start, stop, x_fixed, z_fixed,
                                        x_denominator=x_denominator)
        values[start:stop], n_sel[start:stop] = delta_taus_from_means(xb, zb, lower, upper)
    return values, n_sel


def dataset_delta_confidence_interval(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    lower: float = 0.0,
    upper: float = np.inf,
    method: DeltaMethod = "boot-inputs",
    pool: Pool = "judged",
    systems: str | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: RngLike = None,
    batch: int | None = None,
) -> DeltaInterval:
    """:func:`delta_confidence_interval` for a metric and human measure of a dataset.

    References
    ----------
    docs/methods.md sec. 2 and 4; NAACL 2022 sec. 3.2, 4.2.
    """
    subset, x, z = _dataset_matrices(dataset, metric, human, pool=pool, systems=systems)
    # A metric on an integer grid (an LLM judge's means of ratings) comes as L * scores: its means are taken in
    # its units with exact ties in every resample, and the point equals dataset_rsys_delta's (docs/methods.md
    # sec. 15).
    return _delta_interval(x, z, grid_scale(subset, metric), lower=lower,
                           upper=upper, method=method, pool=pool, confidence_level=confidence_level,
                           n_resamples=n_resamples, rng=rng, batch=batch)


