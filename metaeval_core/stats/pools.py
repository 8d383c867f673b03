"""Judged vs all inputs: what scoring systems on every test input buys (NAACL 2022 sec. 3).

* Per-system score uncertainty over each pool and the average variance reduction (Fig. 2).
* The width of rSYS (or rSYS-Delta) bootstrap intervals with the metric's pool
  ``judged`` vs ``all``, for each bootstrap method (Fig. 4, 7, 8).
* For datasets with no unjudged pool, a clearly labelled simulation that treats a
  random subset of ``m`` judged inputs as "judged" and all judged inputs as the full pool.

References: docs/methods.md sec. 6; Deutsch, Dror & Roth (NAACL 2022) sec. 3, App. A.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from metaeval_core._checks import RngLike, as_generator, check_choice, check_confidence_level, check_int
from metaeval_core.data.checks import check_human
from metaeval_core.stats.correlation import system_means
from metaeval_core.stats.montecarlo import finite_or_none
from metaeval_core.data.dataset import Dataset, DatasetError, Measure, Pool, POOLS
from metaeval_core._frames import ToFrame
from metaeval_core.stats.pairs import (
    DELTA_METHODS,
    DeltaInterval,
    DeltaMethod,
    _default_batch,
    _index_dtype,
    _validate_bounds,
    dataset_delta_confidence_interval,
    resampled_means,
)


# --------------------------------------------------------------------------------------------
# Per-system score intervals and variance reduction (Fig. 2)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SystemScoreIntervals:
    """Bootstrap (over inputs) uncertainty of each system's mean score on one pool.

    ``mean`` is the system mean on the pool; ``low``/``high`` the percentile interval
    of the resampled means; ``variance`` their variance over the resamples
    (``ddof=0``, as in NAACL 2022). ``distribution`` has shape ``(n_resamples, N)``.

    References: docs/methods.md sec. 6; NAACL 2022 sec. 3.1, Fig. 2.
    """

    systems: tuple[str, ...]
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    variance: np.ndarray
    pool: str
    n_inputs: int
    n_resamples: int
    confidence_level: float
    measure: str
    distribution: np.ndarray


def draw_input_indices(rng: np.random.Generator, n_inputs: int, n_resamples: int) -> np.ndarray:
    """``(n_resamples, n_inputs)`` input indices with replacement, drawn in one call."""
    return rng.integers(0, n_inputs, size=(n_resamples, n_inputs), dtype=_index_dtype(n_inputs))


def system_score_intervals(
    matrix,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: RngLike = None,
    batch: int | None = None,
    systems: Sequence[str] | None = None,
    measure: str = "",
    pool: Pool = "judged",
) -> SystemScoreIntervals:
    """Per-system bootstrap interval and variance of the mean score over a pool of inputs.

    Parameters
    ----------
    matrix : array_like, shape (N, M)
        Scores of one measure over one pool.
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
    rng : numpy.random.Generator, int or None
        All input indices are drawn up front (:func:`draw_input_indices`), so the
        result is the same for any ``batch``.
    batch : int, optional
    systems : sequence of str, optional
        System names (default ``S0, S1, ...``).
    measure, pool : str
        Labels copied into the result.

    Returns
    -------
    SystemScoreIntervals
        A system with no valid input has NaN everywhere.

    References
    ----------
    docs/methods.md sec. 6; Deutsch, Dror & Roth (NAACL 2022) sec. 3.1, Fig. 2.
    """
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"matrix must be a non-empty 2-D systems x inputs matrix; got shape {x.shape}")
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_int(n_resamples, "n_resamples")
    batch = check_int(batch, "batch", allow_none=True)
    check_choice(pool, "pool", POOLS)
    names = tuple(f"S{i}" for i in range(x.shape[0])) if systems is None else tuple(systems)
    if len(names) != x.shape[0]:
        raise ValueError(f"systems must name every row of matrix; got {len(names)} names for {x.shape[0]} rows")
    gen = as_generator(rng)
    indices = draw_input_indices(gen, x.shape[1], n_resamples)
    step = batch or _default_batch(x.shape[0], x.shape[1])
    samples = np.empty((n_resamples, x.shape[0]))
    for start in range(0, n_resamples, step):
        samples[start : start + step] = resampled_means(x, indices[start : start + step])
    alpha = 1.0 - confidence_level
    defined = ~np.isnan(samples).all(axis=0)
    low = np.full(x.shape[0], np.nan)
    high = np.full(x.shape[0], np.nan)
    variance = np.full(x.shape[0], np.nan)
    for i in np.flatnonzero(defined):
        column = samples[:, i]
        column = column[~np.isnan(column)]
        low[i], high[i] = np.quantile(column, [alpha / 2, 1 - alpha / 2])
        variance[i] = column.var()
    return SystemScoreIntervals(
        systems=names,
        mean=system_means(x),
        low=low,
        high=high,
        variance=variance,
        pool=pool,
        n_inputs=int(x.shape[1]),
        n_resamples=n_resamples,
        confidence_level=float(confidence_level),
        measure=measure,
        distribution=samples,
    )


@dataclass(frozen=True)
class VarianceReduction:
    """Per-system score variance with the metric's pool ``judged`` vs ``all``.

    ``per_system = 1 - var_all / var_jud`` (NaN where ``var_jud`` is 0 or undefined;
    ``n_undefined`` counts those). ``average_reduction`` is the mean of the defined
    per-system values (docs/methods.md sec. 6); ``pooled_reduction = 1 - mean(var_all) /
    mean(var_jud)`` is the figure the NAACL 2022 authors' script prints (sec. 3.1,
    "around a 99% reduction"). ``simulated`` is True when the "all" pool is not real
    unjudged data (see :func:`simulate_labelled_subset`).

    References: docs/methods.md sec. 6; NAACL 2022 sec. 3.1, Fig. 2.
    """

    metric: str
    judged: SystemScoreIntervals
    all: SystemScoreIntervals
    per_system: np.ndarray
    average_reduction: float
    pooled_reduction: float
    n_undefined: int
    simulated: bool = False


def variance_reduction(
    dataset: Dataset,
    metric: str,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: RngLike = None,
    batch: int | None = None,
    systems: str | None = None,
) -> VarianceReduction:
    """Average reduction in per-system score variance from scoring on all inputs (Fig. 2).

    Bootstraps the inputs of the judged pool, then (same generator, continued) of the
    full pool, and compares each system's variance of the resampled mean.

    Parameters
    ----------
    dataset : Dataset
        Must have an unjudged pool (else use :func:`simulate_labelled_subset`).
    metric : str
        A metric measure (human measures have no ``all`` pool).
    confidence_level, n_resamples, rng, batch
        As in :func:`system_score_intervals`.
    systems : str, optional
        A system subset such as ``"type=abs"``.

    Returns
    -------
    VarianceReduction

    References
    ----------
    docs/methods.md sec. 6; Deutsch, Dror & Roth (NAACL 2022) sec. 3.1, Fig. 2.
    """
    subset = _require_unjudged_pool(dataset.select_systems(systems), metric, "variance_reduction")
    return _variance_reduction(subset, metric, confidence_level, n_resamples, as_generator(rng), batch, False)


def _variance_reduction(subset, metric, confidence_level, n_resamples, gen, batch, simulated) -> VarianceReduction:
    options = dict(confidence_level=confidence_level, n_resamples=n_resamples, rng=gen, batch=batch,
                   systems=subset.systems, measure=metric)
    judged = system_score_intervals(subset.matrix(metric, pool="judged"), pool="judged", **options)
    full = system_score_intervals(subset.matrix(metric, pool="all"), pool="all", **options)
    ok = np.isfinite(judged.variance) & np.isfinite(full.variance) & (judged.variance > 0)
    per_system = np.full(judged.variance.shape, np.nan)
    per_system[ok] = 1.0 - full.variance[ok] / judged.variance[ok]
    average = float(per_system[ok].mean()) if ok.any() else float("nan")
    pooled = float(1.0 - full.variance[ok].mean() / judged.variance[ok].mean()) if ok.any() else float("nan")
    return VarianceReduction(
        metric=metric,
        judged=judged,
        all=full,
        per_system=per_system,
        average_reduction=average,
        pooled_reduction=pooled,
        n_undefined=int((~ok).sum()),
        simulated=simulated,
    )


# --------------------------------------------------------------------------------------------
# rSYS interval widths, judged vs all (Fig. 4, 7, 8)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WidthRow:
    """One bootstrap method: the intervals with the metric's pool judged and all.

    ``reduction_percent = 100 * (1 - width_all / width_judged)`` (NaN when either width
    is undefined or ``width_judged`` is 0).
    """

    method: str
    judged: DeltaInterval
    all: DeltaInterval
    width_judged: float
    width_all: float
    reduction_percent: float


@dataclass(frozen=True)
class WidthComparison(ToFrame):
    """rSYS-Delta(l, u) bootstrap interval widths, pool judged vs all, per method.

    With the default ``lower = 0``, ``upper = inf`` this is rSYS itself (NAACL 2022 Fig. 4).

    References: docs/methods.md sec. 6; NAACL 2022 sec. 3.2, Fig. 4, App. A.
    """

    metric: str
    human: str
    lower: float
    upper: float
    rows: tuple[WidthRow, ...]
    simulated: bool = False

    def to_records(self) -> list[dict]:
        return [
            {
                "method": r.method,
                "estimate_judged": _none_if_nan(r.judged.estimate),
                "low_judged": _none_if_nan(r.judged.low),
                "high_judged": _none_if_nan(r.judged.high),
                "estimate_all": _none_if_nan(r.all.estimate),
                "low_all": _none_if_nan(r.all.low),
                "high_all": _none_if_nan(r.all.high),
                "width_judged": _none_if_nan(r.width_judged),
                "width_all": _none_if_nan(r.width_all),
                "reduction_percent": _none_if_nan(r.reduction_percent),
                "simulated": self.simulated,
            }
            for r in self.rows
        ]


def rsys_width_comparison(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    lower: float = 0.0,
    upper: float = np.inf,
    methods: Sequence[DeltaMethod] = ("boot-systems", "boot-inputs", "boot-both"),
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: RngLike = None,
    batch: int | None = None,
    systems: str | None = None,
) -> WidthComparison:
    """Width of the rSYS-Delta(l, u) bootstrap interval with the metric's pool judged vs all.

    For each method in ``methods`` (in order) the judged-pool interval is computed,
    then the all-pool interval, each from the next child of ``rng``'s spawned
    streams (so every interval has its own reproducible stream). With pool ``all``
    the metric's and the human's inputs are resampled separately (docs/methods.md sec. 2).

    Parameters
    ----------
    dataset : Dataset
        Must have an unjudged pool (else use :func:`simulate_labelled_subset`).
    metric, human : str
    lower, upper : float
        rSYS-Delta bounds; the default (0, inf) is the standard rSYS.
    methods : sequence of {'boot-systems', 'boot-inputs', 'boot-both'}
    confidence_level, n_resamples, rng, batch
        As in :func:`metaeval_core.stats.pairs.delta_confidence_interval`.
    systems : str, optional

    Returns
    -------
    WidthComparison

    References
    ----------
    docs/methods.md sec. 6; Deutsch, Dror & Roth (NAACL 2022) sec. 3.2, Fig. 4, App. A (Fig. 7, 8).
    """
    lower, upper = _validate_bounds(lower, upper)
    methods = _validate_methods(methods)
    subset = _require_unjudged_pool(dataset.select_systems(systems), metric, "rsys_width_comparison")
    return _width_comparison(subset, metric, human, lower, upper, methods, confidence_level, n_resamples,
                             as_generator(rng), batch, False)


def _width_comparison(subset, metric, human, lower, upper, methods, confidence_level, n_resamples, gen, batch,
                      simulated) -> WidthComparison:
    streams = gen.spawn(2 * len(methods))
    rows = []
    for k, method in enumerate(methods):
        intervals = {}
        for offset, pool in enumerate(("judged", "all")):
            intervals[pool] = dataset_delta_confidence_interval(
                subset, metric, human, lower=lower, upper=upper, method=method, pool=pool,
                confidence_level=confidence_level, n_resamples=n_resamples, rng=streams[2 * k + offset],
                batch=batch,
            )
        wj, wa = intervals["judged"].width, intervals["all"].width
        with np.errstate(invalid="ignore", divide="ignore"):
            reduction = 100.0 * (1.0 - wa / wj) if np.isfinite(wj) and np.isfinite(wa) and wj > 0 else float("nan")
        rows.append(WidthRow(method, intervals["judged"], intervals["all"], wj, wa, float(reduction)))
    return WidthComparison(metric, human, lower, upper, tuple(rows), simulated)


# --------------------------------------------------------------------------------------------
# Simulation for datasets with no unjudged pool
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SimulatedPools:
    """A SIMULATION of judged vs all inputs on a dataset that has no unjudged pool.

    ``m`` of the ``n_full`` judged inputs (``subset_inputs``, drawn at random without
    replacement) play the "judged" pool; all ``n_full`` judged inputs play the full
    ("all") pool of the metric. ``dataset`` is the simulated dataset (only the metric
    and the human measure; human scores kept on the subset only), usable with any
    pool-aware function. ``label`` says so in words; show it next to every figure.
    """

    label: str
    m: int
    n_full: int
    subset_inputs: tuple[str, ...]
    dataset: Dataset
    variance: VarianceReduction
    widths: WidthComparison
    simulated: bool = True


def simulated_pool_dataset(dataset: Dataset, metric: str, human: str, inputs: Sequence[str]) -> Dataset:
    """A copy of ``dataset`` (judged inputs, ``metric`` and ``human`` only) whose human scores
    are kept on ``inputs`` only, so ``inputs`` become the judged pool and the other formerly
    judged inputs an (artificial) unjudged pool of the metric."""
    check_human(dataset, human)
    if dataset.measure(metric).kind != "metric":
        raise DatasetError(f"{metric!r} is not a metric measure of dataset {dataset.id!r}")
    judged_ids = [dataset.inputs[j] for j in np.flatnonzero(dataset.judged)]
    base = dataset.subset(inputs=judged_ids, measures=[metric, human])
    keep = np.isin(np.asarray(base.inputs), np.asarray(list(inputs)))
    h = base.measure(human)
    scores = np.array(h.scores)
    scores[:, ~keep] = np.nan
    annotators = None
    if h.annotators is not None:
        annotators = np.array(h.annotators)
        annotators[:, :, ~keep] = np.nan
    measures = {metric: base.measure(metric), human: Measure(human, "human", scores, annotators)}
    return Dataset(
        id=f"{dataset.id}-simulated-m{int(keep.sum())}",
        systems=base.systems,
        inputs=base.inputs,
        measures=measures,
        system_attributes=base.system_attributes,
        title=f"SIMULATION on {dataset.title or dataset.id}",
        citation=dataset.citation,
        licence=dataset.licence,
        description=(
            f"Simulated pools: {int(keep.sum())} of {len(judged_ids)} judged inputs treated as judged; "
            f"all {len(judged_ids)} judged inputs treated as the metric's full pool."
        ),
        notes=(*dataset.notes, "simulated judged/all pools (docs/methods.md sec. 6)"),
        task=dataset.task,
        annotator_identity=dataset.annotator_identity,
    )


def simulate_labelled_subset(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    m: int,
    lower: float = 0.0,
    upper: float = np.inf,
    methods: Sequence[DeltaMethod] = ("boot-systems", "boot-inputs", "boot-both"),
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: RngLike = None,
    batch: int | None = None,
    systems: str | None = None,
) -> SimulatedPools:
    """Judged-vs-all analyses on a dataset without an unjudged pool, by simulation.

    A random subset of ``m`` judged inputs is treated as "judged" (the only inputs
    with human scores) and all judged inputs as the metric's full pool; then
    :func:`variance_reduction` and :func:`rsys_width_comparison` run on that
    simulated dataset. The full pool here is only ``M_jud`` inputs, far smaller than
    a real test set, so the reductions are much smaller than with a real unjudged
    pool; the human side also loses inputs. Interval widths may even grow: with pool
    ``all`` the metric's and the human's inputs are resampled separately (docs/methods.md
    sec. 2), which drops the positive dependence that paired resampling of shared
    inputs induces, and a full pool of only ``M_jud`` inputs may not remove enough
    metric noise to compensate. The result is labelled as a simulation.

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
    m : int
        Size of the simulated judged subset; ``2 <= m < M_jud``.
    lower, upper, methods, confidence_level, n_resamples, batch, systems
        As in :func:`rsys_width_comparison`.
    rng : numpy.random.Generator, int or None
        Draws the subset first, then the bootstrap streams.

    Returns
    -------
    SimulatedPools

    References
    ----------
    docs/methods.md sec. 6; NAACL 2022 sec. 3.
    """
    lower, upper = _validate_bounds(lower, upper)
    methods = _validate_methods(methods)
    subset = dataset.select_systems(systems)
    n_full = subset.n_judged
    m = _validate_m(m, n_full)
    gen = as_generator(rng)
    judged_ids = [subset.inputs[j] for j in np.flatnonzero(subset.judged)]
    chosen = np.sort(gen.choice(n_full, size=m, replace=False))
    inputs = tuple(judged_ids[j] for j in chosen)
    simulated = simulated_pool_dataset(subset, metric, human, inputs)
    variance = _variance_reduction(simulated, metric, confidence_level, n_resamples, gen, batch, True)
    widths = _width_comparison(simulated, metric, human, lower, upper, methods, confidence_level, n_resamples,
                               gen, batch, True)
    label = (
        f"SIMULATION - not real unjudged data: {m} of the {n_full} judged inputs of {dataset.id!r} are treated "
        f"as 'judged' and all {n_full} judged inputs as the metric's full pool."
    )
    return SimulatedPools(label, m, n_full, inputs, simulated, variance, widths)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------
def _require_unjudged_pool(dataset: Dataset, metric: str, what: str) -> Dataset:
    if dataset.measure(metric).kind != "metric":
        raise DatasetError(
            f"{metric!r} is not a metric measure of dataset {dataset.id!r}; only metrics have an 'all' pool"
        )
    if not dataset.has_unjudged_pool:
        raise DatasetError(
            f"{what} needs an unjudged pool, and dataset {dataset.id!r} has none; "
            "use simulate_labelled_subset for a labelled simulation"
        )
    return dataset


def _validate_methods(methods) -> tuple[str, ...]:
    if isinstance(methods, str):
        methods = (methods,)
    methods = tuple(methods)
    if not methods:
        raise ValueError("methods must name at least one bootstrap method")
    for method in methods:
        check_choice(method, "method", DELTA_METHODS)
    if len(set(methods)) != len(methods):
        raise ValueError("methods must not repeat a method")
    return methods


def _validate_m(m, n_full: int) -> int:
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"m must be an int; got {type(m).__name__}")
    if not 2 <= m < n_full:
        raise ValueError(f"m must satisfy 2 <= m < the number of judged inputs ({n_full}); got {m}")
    return int(m)


_none_if_nan = finite_or_none  # the one NaN-to-None helper (metaeval_core.stats.montecarlo)
