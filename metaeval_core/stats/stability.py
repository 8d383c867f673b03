"""Ranking stability: how much a measure's system ranking changes between two samples of inputs.

For a sample size ``m``: draw two independent sets of ``m`` inputs with replacement
from the measure's pool, compute the system means on each, and take Kendall's tau-b
between the two rankings; repeat ``k`` times and report the mean and standard
deviation for every ``m``.

References: docs/methods.md sec. 5; Deutsch, Dror & Roth (NAACL 2022) sec. 3.1, Fig. 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from metaeval_core._checks import RngLike, as_generator, check_choice, check_int
from metaeval_core.wording import finite_or_none
from metaeval_core.stats.coefficients import kendall, pair_kernel_fits
from metaeval_core.data.dataset import Dataset, Pool, POOLS
from metaeval_core.stats.pairs import _default_batch, _index_dtype, resampled_means
from metaeval_core.stats.exact import exact_matrix


@dataclass(frozen=True)
class StabilityCurve:
    """Mean and standard deviation of the split-sample Kendall tau for each sample size.

    ``mean[s]`` and ``std[s]`` (population std, ``ddof=0``, as in NAACL 2022) are over
    the ``n_defined[s]`` defined values of ``taus[s]`` (shape ``(len(sizes), n_resamples)``,
    NaN where a resample's tau is undefined, e.g. constant means). ``n_inputs`` is the
    size of the pool sampled from.

    References: docs/methods.md sec. 5; NAACL 2022 Fig. 3.
    """

    measure: str
    sizes: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    n_resamples: int
    pool: str
    n_defined: np.ndarray
    taus: np.ndarray
    n_inputs: int
    n_systems: int

    def rows(self) -> list[dict]:
        return [
            {
                "measure": self.measure,
                "pool": self.pool,
                "m": int(m),
                "mean": finite_or_none(mu),
                "std": finite_or_none(sd),
                "n_defined": int(nd),
            }
            for m, mu, sd, nd in zip(self.sizes, self.mean, self.std, self.n_defined)
        ]


def draw_stability_indices(rng: np.random.Generator, n_inputs: int, size: int, n_resamples: int) -> np.ndarray:
    """Input indices for one sample size: shape ``(n_resamples, 2, size)``, one ``integers`` call.

    :func:`ranking_stability` calls this once per size, in the order of ``sizes``, so
    its results do not depend on ``batch``.
    """
    return rng.integers(0, n_inputs, size=(n_resamples, 2, size), dtype=_index_dtype(n_inputs))


def ranking_stability(
    matrix,
    *,
    sizes: Sequence[int],
    n_resamples: int = 1000,
    rng: RngLike = None,
    batch: int | None = None,
    measure: str = "",
    pool: Pool = "judged",
) -> StabilityCurve:
    """Split-sample stability of the system ranking of one measure (NAACL 2022 Fig. 3).

    For each ``m`` in ``sizes``: draw two independent sets of ``m`` inputs with
    replacement from the columns of ``matrix``, compute the NaN-ignoring system
    means on each, and take Kendall's tau-b between them; repeat ``n_resamples``
    times. ``m`` may exceed the number of inputs (sampling is with replacement).

    Parameters
    ----------
    matrix : array_like, shape (N, M)
        The measure's scores over its pool (``M_jud`` or ``M_test`` inputs).
    sizes : sequence of int
        Sample sizes ``m`` (each >= 1); see :func:`default_sizes`.
    n_resamples : int, default 1000
    rng : numpy.random.Generator, int or None
        Indices of each size are drawn in one call, sizes in the given order, so the
        result is the same for any ``batch``.
    batch : int, optional
        Resamples processed at once (memory only).
    measure, pool : str
        Labels copied into the result.

    Returns
    -------
    StabilityCurve

    References
    ----------
    docs/methods.md sec. 5; Deutsch, Dror & Roth (NAACL 2022) sec. 3.1, Fig. 3.
    """
    x = _validate_matrix(matrix)
    size_array = _validate_sizes(sizes)
    n_resamples = check_int(n_resamples, "n_resamples")
    batch = check_int(batch, "batch", allow_none=True)
    check_choice(pool, "pool", POOLS)
    gen = as_generator(rng)
    n_sys, n_inp = x.shape
    taus = np.empty((size_array.size, n_resamples))
    for s, m in enumerate(size_array):
        indices = draw_stability_indices(gen, n_inp, int(m), n_resamples)
        step = batch or _default_batch(n_sys, 2 * int(m))
        for start in range(0, n_resamples, step):
            block = indices[start : start + step]
            first = resampled_means(x, block[:, 0])
            second = resampled_means(x, block[:, 1])
            taus[s, start : start + step] = kendall(first, second)
    defined = ~np.isnan(taus)
    n_defined = defined.sum(axis=1)
    filled = np.where(defined, taus, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n_defined > 0, filled.sum(axis=1) / np.maximum(n_defined, 1), np.nan)
        centred = np.where(defined, taus - mean[:, None], 0.0)
        std = np.where(n_defined > 0, np.sqrt((centred**2).sum(axis=1) / np.maximum(n_defined, 1)), np.nan)
    return StabilityCurve(
        measure=measure,
        sizes=size_array,
        mean=mean,
        std=std,
        n_resamples=n_resamples,
        pool=pool,
        n_defined=n_defined,
        taus=taus,
        n_inputs=n_inp,
        n_systems=n_sys,
    )


# Rough seconds on the shared 2-core machine: per resampled cell (two samples of m inputs per system), and per
# Kendall tau (the pair kernel up to 150 systems, scipy per resample beyond): 2,000 systems x 20 inputs, 11 sizes
# x 50 resamples took 1.1 s (1.5 s estimated), 150 x 500, 19 sizes x 200 resamples 3.0 s (3.3 s). Used to refuse
# curves that would run for minutes, not a promise.
_STABILITY_SECONDS_PER_CELL = 4e-9
_STABILITY_SECONDS_PER_PAIR = 5e-8
_STABILITY_SECONDS_PER_SCIPY_TAU = 5e-4
_STABILITY_SECONDS_PER_SCIPY_SYSTEM = 1e-6
# The command line refuses a run estimated above this (the dashboard's limit is lower, see metaeval_ui.data.pairs).
MAX_STABILITY_SECONDS = 300.0


def estimated_stability_seconds(n_systems: int, sizes: Sequence[int], *, n_resamples: int) -> float:
    """Rough seconds :func:`ranking_stability` takes for one measure on this project's machine.

    Every resample of every size computes two sets of system means (``2 N m`` cells) and one Kendall tau
    over ``N`` systems (O(N^2) pairs up to 150 systems, scipy's O(N log N) per resample beyond).

    References: docs/methods.md sec. 5.3.
    """
    n_systems = check_int(n_systems, "n_systems")
    n_resamples = check_int(n_resamples, "n_resamples")
    size_array = _validate_sizes(sizes)
    if pair_kernel_fits(n_systems):
        per_tau = _STABILITY_SECONDS_PER_PAIR * n_systems * (n_systems - 1) / 2
    else:
        per_tau = _STABILITY_SECONDS_PER_SCIPY_TAU + _STABILITY_SECONDS_PER_SCIPY_SYSTEM * n_systems
    cells = 2 * n_systems * float(size_array.sum())
    return n_resamples * (size_array.size * per_tau + cells * _STABILITY_SECONDS_PER_CELL)


def default_sizes(n_inputs: int, *, pool: Pool, n_points: int = 19) -> np.ndarray:
    """Sample sizes for a stability curve.

    ``pool='judged'``: about ``n_points`` linearly spaced sizes from ``min(10, M)`` to
    ``M``; ``pool='all'``: about ``n_points`` log-spaced sizes from ``min(10, M)`` up to
    ``M`` (``M_test``), as in NAACL 2022 Fig. 3. Sizes are distinct integers and
    always end at ``M``.

    References
    ----------
    docs/methods.md sec. 5; NAACL 2022 Fig. 3.
    """
    n_inputs = check_int(n_inputs, "n_inputs")
    n_points = check_int(n_points, "n_points")
    check_choice(pool, "pool", POOLS)
    start = min(10, n_inputs)
    count = min(n_points, n_inputs - start + 1)
    if pool == "judged":
        grid = np.linspace(start, n_inputs, count)
    else:
        grid = np.geomspace(start, n_inputs, count)
    sizes = np.unique(np.rint(grid).astype(np.int64))
    sizes[-1] = n_inputs
    return np.unique(sizes)


def dataset_ranking_stability(
    dataset: Dataset,
    measure: str,
    *,
    pool: Pool = "judged",
    sizes: Sequence[int] | None = None,
    n_resamples: int = 1000,
    rng: RngLike = None,
    batch: int | None = None,
    systems: str | None = None,
) -> StabilityCurve:
    """:func:`ranking_stability` of a dataset measure over its pool.

    Human measures always use the judged inputs (``pool`` is then recorded as
    ``'judged'``). ``sizes`` defaults to :func:`default_sizes` for the pool.

    References
    ----------
    docs/methods.md sec. 5; NAACL 2022 Fig. 3.
    """
    subset, effective = _effective_pool(dataset, measure, pool, systems)
    # Rankings only: a human measure's integer grid keeps its exact ties (docs/methods.md sec. 15).
    matrix = exact_matrix(subset, measure, pool=effective)
    if sizes is None:
        sizes = default_sizes(matrix.shape[1], pool=effective)
    return ranking_stability(
        matrix, sizes=sizes, n_resamples=n_resamples, rng=rng, batch=batch, measure=measure, pool=effective
    )


def dataset_stability_seconds(dataset: Dataset, measure: str, *, pool: Pool = "judged",
                              sizes: Sequence[int] | None = None, n_resamples: int = 1000,
                              systems: str | None = None) -> float:
    """:func:`estimated_stability_seconds` of :func:`dataset_ranking_stability` with the same arguments.

    References: docs/methods.md sec. 5.3.
    """
    subset, effective = _effective_pool(dataset, measure, pool, systems)
    n_systems, n_inputs = subset.matrix(measure, pool=effective).shape
    if sizes is None:
        sizes = default_sizes(n_inputs, pool=effective)
    return estimated_stability_seconds(n_systems, sizes, n_resamples=n_resamples)


def _effective_pool(dataset: Dataset, measure: str, pool: Pool, systems: str | None) -> tuple[Dataset, Pool]:
    """The system subset and the pool actually sampled (human measures: always the judged inputs)."""
    check_choice(pool, "pool", POOLS)
    subset = dataset.select_systems(systems)
    return subset, "judged" if subset.measure(measure).kind == "human" else pool


def _validate_matrix(matrix) -> np.ndarray:
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"matrix must be 2-D (systems x inputs); got shape {x.shape}")
    if x.shape[0] < 2:
        raise ValueError(f"matrix must have at least 2 systems (rows); got {x.shape[0]}")
    if x.shape[1] < 1:
        raise ValueError("matrix must have at least 1 input (column)")
    return x


def _validate_sizes(sizes) -> np.ndarray:
    values = np.asarray(sizes)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("sizes must be a non-empty 1-D sequence of ints")
    if not np.issubdtype(values.dtype, np.integer):
        if not np.issubdtype(values.dtype, np.floating) or not np.all(values == np.round(values)):
            raise TypeError("sizes must hold whole numbers")
    if (values < 1).any():
        raise ValueError(f"sizes must all be >= 1; got {values.min()}")
    return values.astype(np.int64)
