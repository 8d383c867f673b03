"""Confidence intervals for metric-human correlations: Fisher and the bootstrap.

The bootstrap resamples systems, inputs or both (TACL 2021 Fig. 1, Algorithm 1)
and takes the percentile interval of the *defined* resampled correlations.
All resample indices are drawn up front from an explicit ``numpy.random.Generator``
in a fixed order (systems, then metric inputs, then human inputs when they are
resampled separately) and the statistic is evaluated in batches along a resample
axis, so a result depends on the seed only, never on ``batch``.

Fast paths avoid materialising ``(k, N, M)`` resampled matrices where the
statistic allows it:

* system level: a resample of inputs changes only the per-system means, which
  are a ``(k, M)`` count matrix times ``X.T`` (a parallel count of valid cells
  handles NaN); a resample of systems then gathers those means.
* input level, Kendall: per-input pair sign tables are computed once; a resample
  of systems weights pair ``(u, v)`` by ``c_u c_v`` (its multiplicity; a system
  paired with its own copy is tied in both scores and counts in no class, as in
  tau-b on duplicated points), so the counts P-Q, P+Q+T and P+Q+U of every input
  for every resample are one integer-valued matrix product.
* input level, any coefficient: a resample of inputs only re-weights the
  per-input correlations, so the input-level value is a count-weighted mean.
* input level, tie-calibrated accuracy: one epsilon for all inputs, re-chosen in every
  resample; a resample only re-weights the original (pair, input) entries (systems by
  ``c_u c_v``, inputs by their multiplicity), so the entries are sorted by ``|dx|`` once
  (``metaeval_core.stats.tiecal``).

References: docs/methods.md sec. 2; Deutsch, Dror & Roth (TACL 2021) sec. 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np
from scipy import stats

from metaeval_core._checks import as_generator, check_bool, check_choice, check_confidence_level, check_int
from metaeval_core.data.checks import check_dataset
from metaeval_core.stats.coefficients import (
    PDP,
    Coefficient,
    check_resampling_size,
    coefficient_function,
    pair_kernel_fits,
    pair_signs,
    pdp_input,
    require_correlation,
    require_level_for,
    validate_coefficient,
)
from metaeval_core.stats import montecarlo as _mc
from metaeval_core.stats.montecarlo import finite_or_none
from metaeval_core.stats.spa import spa_resampled
from metaeval_core.stats.paircounts import (
    WEIGHTED_PAIR_COEFFICIENTS, PairCounter, PreparedWeights, weighted_coefficient,
)
from metaeval_core.stats.correlation import Level, correlate_matrices, correlation_inputs, system_means, validate_level
from metaeval_core.stats.tiecal import ResampledInputCalibration
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import Dataset, Pool, POOLS

CIMethod = Literal["fisher", "boot-systems", "boot-inputs", "boot-both"]
CI_METHODS: tuple[str, ...] = get_args(CIMethod)
BOOTSTRAP_METHODS: tuple[str, ...] = ("boot-systems", "boot-inputs", "boot-both")

# (b, c) of the Fisher interval per coefficient (Bonett & Wright 2000; docs/methods.md sec. 2).
_FISHER_B = {"pearson": 3, "spearman": 3, "kendall": 4}

# Global-level Kendall on more points than this runs scipy's O(n log n) routine per
# resample instead of the O(n^2) pair kernel.
_GLOBAL_KENDALL_SCIPY_MIN_N = 200
# Default batches of the weighted pair counts (global-level Kendall) are a multiple of this (docs/speed.md).
_WEIGHTED_BATCH_MULTIPLE = 8


@dataclass(frozen=True)
class ConfidenceInterval(ToFrame):
    """A confidence interval for one metric-human correlation.

    Attributes
    ----------
    estimate : float
        The correlation on the full data (NaN when undefined).
    low, high : float
        The interval bounds; NaN when the estimate (Fisher) or every resample
        (bootstrap) is undefined.
    method : str
        ``'fisher'``, ``'boot-systems'``, ``'boot-inputs'`` or ``'boot-both'``.
    confidence_level : float
    n_resamples : int
        Resamples drawn (0 for Fisher).
    n_defined : int
        Resamples whose correlation was defined; the percentile interval uses only
        these (0 for Fisher).
    n : int
        Points behind the estimate: systems (system level), defined inputs (input
        level) or cells (global level).
    distribution : numpy.ndarray or None
        With ``return_distribution=True``, the ``n_resamples`` resampled values in
        draw order, NaN for undefined resamples.
    level, coefficient, pool : str
        What was computed (``pool`` is ``'all'`` when the metric's inputs were
        resampled separately from the human's).
    fisher_n : int
        The ``n`` the Fisher interval used (0 for the bootstrap).
    """

    estimate: float
    low: float
    high: float
    method: str
    confidence_level: float
    n_resamples: int
    n_defined: int
    n: int
    distribution: np.ndarray | None = None
    level: str = ""
    coefficient: str = ""
    pool: str = "judged"
    fisher_n: int = 0

    @property
    def defined(self) -> bool:
        return bool(np.isfinite(self.low) and np.isfinite(self.high))

    @property
    def n_undefined(self) -> int:
        """Resamples dropped because their correlation was undefined."""
        return self.n_resamples - self.n_defined

    def to_dict(self) -> dict:
        num = finite_or_none
        return {
            "estimate": num(self.estimate),
            "low": num(self.low),
            "high": num(self.high),
            "method": self.method,
            "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples,
            "n_defined": self.n_defined,
            "n": self.n,
            "level": self.level,
            "coefficient": self.coefficient,
            "pool": self.pool,
        }


# ---------------------------------------------------------------------------
# Validation shared with significance.py
# ---------------------------------------------------------------------------
def _as_matrix(value: object, name: str) -> np.ndarray:
    try:
        matrix = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a numeric systems x inputs matrix") from None
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be a 2-D systems x inputs matrix; got shape {matrix.shape}")
    if matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise ValueError(f"{name} must have at least one system and one input; got shape {matrix.shape}")
    if np.isinf(matrix).any():
        raise ValueError(f"{name} must not contain infinite values (use NaN for missing scores)")
    return matrix


# One home for the resampling primitives (metaeval_core.stats.montecarlo); the private names stay for the kernels.
_auto_batch = _mc.auto_batch
_chunks = _mc.chunks


# ---------------------------------------------------------------------------
# Resample indices: drawn once, in a fixed order, shared by the fast code and the oracles
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _BootstrapIndices:
    """Resample indices: ``systems`` (k, N), ``metric_inputs`` (k, Mx), ``human_inputs`` (k, Mz).

    ``None`` where that axis is kept fixed. When inputs are paired (pool ``judged``)
    ``human_inputs`` is the very same array as ``metric_inputs``.
    """

    systems: np.ndarray | None
    metric_inputs: np.ndarray | None
    human_inputs: np.ndarray | None

    @property
    def n_resamples(self) -> int:
        for a in (self.systems, self.metric_inputs, self.human_inputs):
            if a is not None:
                return a.shape[0]
        return 0


def _draw_bootstrap_indices(
    rng: np.random.Generator,
    method: str,
    n_resamples: int,
    n_systems: int,
    n_metric_inputs: int,
    n_human_inputs: int | None = None,
) -> _BootstrapIndices:
    """Draw all bootstrap indices up front, in the project's one draw scheme
    (:func:`metaeval_core.stats.montecarlo.block_generators`): per block of resamples, systems, then metric
    inputs, then human inputs, from the block's own stream.

    ``n_human_inputs=None`` pairs the inputs (the same indices for metric and human);
    an int resamples the human's inputs separately (pool ``all``, docs/methods.md sec. 2).
    """
    by_systems = method in ("boot-systems", "boot-both")
    by_inputs = method in ("boot-inputs", "boot-both")
    separate = by_inputs and n_human_inputs is not None
    systems = np.empty((n_resamples, n_systems), dtype=np.int64) if by_systems else None
    metric_inputs = np.empty((n_resamples, n_metric_inputs), dtype=np.int64) if by_inputs else None
    human_inputs = np.empty((n_resamples, n_human_inputs), dtype=np.int64) if separate else metric_inputs
    for sl, gen in _mc.block_generators(rng, n_resamples):
        rows = sl.stop - sl.start
        if by_systems:
            systems[sl] = gen.integers(0, n_systems, size=(rows, n_systems))
        if by_inputs:
            metric_inputs[sl] = gen.integers(0, n_metric_inputs, size=(rows, n_metric_inputs))
            if separate:
                human_inputs[sl] = gen.integers(0, n_human_inputs, size=(rows, n_human_inputs))
    return _BootstrapIndices(systems, metric_inputs, human_inputs)


_counts = _mc.multiplicities


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast_shapes(numerator.shape, denominator.shape), np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


# ---------------------------------------------------------------------------
# Correlation kernels over a batch axis
# ---------------------------------------------------------------------------
def _rows_correlation(x: np.ndarray, z: np.ndarray, coefficient: str) -> np.ndarray:
    """The coefficient over the last axis of (b, n) arrays (NaN pairwise-dropped)."""
    if coefficient == "kendall" and x.shape[-1] > _GLOBAL_KENDALL_SCIPY_MIN_N:
        return _kendall_rows_scipy(x, z)
    return coefficient_function(coefficient)(x, z)


def _kendall_rows_scipy(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    # Many points per row (global level): scipy's O(n log n) tau-b per row beats the
    # O(n^2) pair kernel; it is the same tau-b (docs/methods.md sec. 1).
    x, z = np.broadcast_arrays(x, z)
    out = np.full(x.shape[0], np.nan)
    for s in range(x.shape[0]):
        keep = ~(np.isnan(x[s]) | np.isnan(z[s]))
        xs, zs = x[s, keep], z[s, keep]
        if xs.size < 2 or xs.min() == xs.max() or zs.min() == zs.max():
            continue
        out[s] = stats.kendalltau(xs, zs).statistic
    return out


def _weighted_input_mean(per_input: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Input-level value: mean of the defined per-input correlations, inputs weighted by multiplicity."""
    defined = ~np.isnan(per_input)
    values = np.where(defined, per_input, 0.0)
    w = np.ones(per_input.shape[-1]) if weights is None else weights
    w = np.where(defined, w, 0.0)
    total = np.einsum("...j,...j->...", w, values)
    count = w.sum(axis=-1)
    return _safe_divide(total, count)


@dataclass(frozen=True)
class _KendallPairTables:
    """Per-input pair tables for Kendall at the input level.

    ``tables`` has shape (P, 3 q M): for each of q metrics, P-Q contributions
    ``sx*sz``, then ``|sx|``, then ``|sz|``, pairs (rows) over inputs (columns).
    Pairs where a point is missing in x or z contribute 0 everywhere (counted in no class).
    """

    first: np.ndarray
    second: np.ndarray
    tables: np.ndarray
    n_metrics: int
    n_inputs: int


def _kendall_pair_tables(metrics: Sequence[np.ndarray], human: np.ndarray) -> _KendallPairTables:
    n, m = human.shape
    first, second = np.triu_indices(n, 1)
    vz = ~np.isnan(human)
    blocks = []
    for x in metrics:
        valid = ~np.isnan(x) & vz
        pair_valid = (valid[first] & valid[second]).astype(np.int8)  # (P, M)
        sx = pair_signs(x.T, first, second).T * pair_valid
        sz = pair_signs(human.T, first, second).T * pair_valid
        blocks += [sx * sz, np.abs(sx), np.abs(sz)]
    # Entries are -1/0/1 and every product below is an integer-valued sum of at most
    # P * N^2 / 4 terms of size <= N^2: exact in float32 while that stays below 2^24.
    dtype = np.float32 if n**4 < 2**23 else np.float64
    return _KendallPairTables(first, second, np.concatenate(blocks, axis=1).astype(dtype), len(metrics), m)


def _kendall_from_counts(numerator: np.ndarray, nx: np.ndarray, nz: np.ndarray) -> np.ndarray:
    numerator = numerator.astype(np.float64)
    denominator = nx.astype(np.float64) * nz.astype(np.float64)
    tau = _safe_divide(numerator, np.sqrt(np.maximum(denominator, 0.0)))
    return np.where(denominator > 0, np.clip(tau, -1.0, 1.0), np.nan)


# ---------------------------------------------------------------------------
# The bootstrap engine: level correlations of q metrics with one human measure per resample
# ---------------------------------------------------------------------------
def _bootstrap_correlations(
    metrics: Sequence[np.ndarray],
    human: np.ndarray,
    *,
    level: str,
    coefficient: str,
    indices: _BootstrapIndices,
    batch: int | None,
) -> np.ndarray:
    """(k, q) level correlations of each metric with ``human`` on every bootstrap resample.

    The metrics share system and input indices (``metric_inputs``); the human shares the
    system indices and uses ``human_inputs`` (the same array unless pool ``all``).
    """
    k = indices.n_resamples
    q = len(metrics)
    n, m_human = human.shape
    m_metric = metrics[0].shape[1]
    out = np.full((k, q), np.nan)
    S, DX, DZ = indices.systems, indices.metric_inputs, indices.human_inputs

    if coefficient == "soft-pairwise-accuracy":
        # Every p-value is recomputed on each resample's inputs (docs/methods.md sec. 11.3).
        return spa_resampled(metrics, human, systems=S, metric_inputs=DX, human_inputs=DZ, n_resamples=k,
                             batch=batch)

    if level == "system":
        prepared = []
        for x in [*metrics, human]:
            valid = ~np.isnan(x)
            # A complete matrix (no NaN) needs no per-cell count: every system's count is the resample's size.
            prepared.append((np.where(valid, x, 0.0), None if valid.all() else valid.astype(np.float64),
                             system_means(x)))
        b = _auto_batch(batch, n * (m_metric + m_human), k)
        for sl in _chunks(k, b):
            cx = None if DX is None else _counts(DX[sl], m_metric)
            cz = None if DZ is None else (cx if DZ is DX else _counts(DZ[sl], m_human))
            sizes = {id(c): c.sum(axis=1, keepdims=True) for c in (cx, cz) if c is not None}
            means = []
            for idx, (x0, valid, full) in enumerate(prepared):
                counts = cz if idx == q else cx
                if counts is None:
                    mu = np.broadcast_to(full, (sl.stop - sl.start, n))
                else:
                    # einsum, not BLAS: its reduction order per element does not depend on the
                    # batch size, so results are identical for every ``batch``. The counts are integers, so
                    # their plain sum equals the einsum against an all-ones mask exactly.
                    total = np.einsum("sj,ij->si", counts, x0)
                    mu = _safe_divide(total, sizes[id(counts)] if valid is None else
                                      np.einsum("sj,ij->si", counts, valid))
                if S is not None:
                    mu = np.take_along_axis(mu, S[sl], axis=1)
                means.append(mu)
            for idx in range(q):
                out[sl, idx] = _rows_correlation(means[idx], means[q], coefficient)
        return out

    if level == "input" and coefficient == "tie-calibrated-accuracy":
        # One epsilon per resample, re-chosen over the resample's inputs (docs/methods.md sec. 11.2).
        engines = [ResampledInputCalibration(x, human) for x in metrics]
        b = batch if batch is not None else min(e.batch_size() for e in engines)
        for sl in _chunks(k, b):
            cs = None if S is None else _counts(S[sl], n)
            cd = None if DX is None else _counts(DX[sl], m_metric)
            for idx, engine in enumerate(engines):
                out[sl, idx] = engine.evaluate(cs, cd)[0]
        return out

    if level == "input" and coefficient == PDP:
        # Pooled over inputs (docs/methods.md sec. 11.4): the resample's multiplicities weight systems and inputs.
        b = _auto_batch(batch, 4 * n * m_metric * max(q, 1), k)
        for sl in _chunks(k, b):
            cs = None if S is None else _counts(S[sl], n)[:, None, :]
            cd = None if DX is None else _counts(DX[sl], m_metric)[:, None, :]
            out[sl] = pdp_input(np.stack(metrics)[None], human[None, None], system_weights=cs, input_weights=cd)
        return out

    if level == "input":
        # The pair tables hold (pairs x inputs) entries and each batch a (resamples x pairs) weight matrix: GBs
        # beyond the pair kernel's size (2,000 systems: 2M pairs), where scipy's tau-b per slice takes over.
        kendall_tables = (_kendall_pair_tables(metrics, human)
                          if coefficient == "kendall" and pair_kernel_fits(n) else None)
        corr = coefficient_function(coefficient)
        per_input_fixed = None
        if S is None:
            # Systems fixed: the per-input correlations never change; only inputs are re-weighted.
            per_input_fixed = np.stack(
                [corr(x.T, human.T) for x in metrics], axis=0
            )  # (q, M)
        per_resample = n * m_metric * max(q, 1) * (1 if kendall_tables is not None else 2)
        if kendall_tables is not None:
            per_resample = max(per_resample, kendall_tables.first.size)  # the (b, P) weights
        b = _auto_batch(batch, per_resample, k)
        for sl in _chunks(k, b):
            bsz = sl.stop - sl.start
            if per_input_fixed is not None:
                per_input = np.broadcast_to(per_input_fixed, (bsz, q, m_metric))
            elif kendall_tables is not None:
                cs = _counts(S[sl], n).astype(kendall_tables.tables.dtype)
                weights = cs[:, kendall_tables.first] * cs[:, kendall_tables.second]  # (b, P)
                summed = (weights @ kendall_tables.tables).reshape(bsz, q, 3, m_metric)
                per_input = _kendall_from_counts(summed[:, :, 0], summed[:, :, 1], summed[:, :, 2])
            else:
                zs = human[S[sl]]  # (b, N, M): unavoidable for ranks / moments of resampled systems
                per_input = np.stack(
                    [corr(np.swapaxes(x[S[sl]], 1, 2), np.swapaxes(zs, 1, 2)) for x in metrics], axis=1
                )
            weights_inputs = None if DX is None else _counts(DX[sl], m_metric)[:, None, :]
            out[sl] = _weighted_input_mean(per_input, weights_inputs)
        return out

    if coefficient in WEIGHTED_PAIR_COEFFICIENTS:
        # A resample of cells is the original cells with multiplicities (systems' times inputs'):
        # weighted pair counts, O(n log n) per resample, nothing materialised.
        counters = [(PairCounter(x, human), ~(np.isnan(x) | np.isnan(human)).ravel()) for x in metrics]
        # Metrics valid on the same cells count the same weightings: prepared once per batch (docs/speed.md).
        masks: dict[bytes, int] = {}
        groups = [masks.setdefault(valid.tobytes(), len(masks)) for _, valid in counters]
        b = _auto_batch(batch, 8 * n * m_metric, k)
        if batch is None and b > _WEIGHTED_BATCH_MULTIPLE:
            # The counter packs 4 weightings to a word: whole words (results do not depend on the batch).
            b -= b % _WEIGHTED_BATCH_MULTIPLE
        for sl in _chunks(k, b):
            bsz = sl.stop - sl.start
            # A cell's multiplicity is at most the N * M draws: int32, half the traffic of int64.
            cs = np.ones((bsz, n), dtype=np.int32) if S is None else _counts(S[sl], n).astype(np.int32)
            cd = np.ones((bsz, m_metric), dtype=np.int32) if DX is None else _counts(DX[sl], m_metric).astype(np.int32)
            if int(cs.max(initial=0)) * int(cd.max(initial=0)) <= 127:
                # The counter gathers int8 weights fastest: multiply in int8 when no product can overflow.
                cs, cd = cs.astype(np.int8), cd.astype(np.int8)
            cells = (cs[:, :, None] * cd[:, None, :]).reshape(bsz, -1)
            prepared: dict[int, PreparedWeights] = {}
            for idx, (counter, valid) in enumerate(counters):
                if groups[idx] not in prepared:
                    prepared[groups[idx]] = PreparedWeights(cells if valid.all() else cells * valid)
                out[sl, idx] = weighted_coefficient(counter.counts(prepared[groups[idx]]), coefficient)
        return out

    # Global level: every resampled cell is a point, so the cells are materialised per batch.
    b = _auto_batch(batch, n * m_metric * (q + 1), k)
    for sl in _chunks(k, b):
        cells = [_resample_cells(x, S, DX, sl) for x in [*metrics, human]]
        for idx in range(q):
            out[sl, idx] = _rows_correlation(cells[idx], cells[q], coefficient)
    return out


def _resample_cells(x: np.ndarray, S: np.ndarray | None, D: np.ndarray | None, sl: slice) -> np.ndarray:
    """Resampled matrices of a batch, flattened to (b, N*M) cells."""
    if S is not None and D is not None:
        cells = x[S[sl][:, :, None], D[sl][:, None, :]]
    elif S is not None:
        cells = x[S[sl]]
    elif D is not None:
        cells = x.T[D[sl]]  # (b, M, N): cell order is irrelevant to a global correlation
    else:
        cells = x[None]
    return cells.reshape(cells.shape[0], -1)


_percentile_interval = _mc.percentile_interval


def _fisher_n(metric: np.ndarray, human: np.ndarray, level: str, estimate_n: int) -> int:
    """n of the Fisher interval: systems, the largest count of valid systems in any input, or cells."""
    if level == "input":
        valid = ~np.isnan(metric) & ~np.isnan(human)
        return int(valid.sum(axis=0).max()) if valid.size else 0
    return int(estimate_n)


def fisher_interval(r: float, n: int, *, coefficient: str, confidence_level: float = 0.95) -> tuple[float, float]:
    """Fisher-transformation interval ``tanh(arctanh(r) -/+ z_{a/2} c / sqrt(n - b))``.

    (b, c) = (3, 1) Pearson, (3, sqrt(1 + r^2/2)) Spearman, (4, sqrt(0.437)) Kendall;
    NaN bounds when ``r`` is undefined or ``n <= b``.

    References
    ----------
    docs/methods.md sec. 2; TACL 2021 sec. 3.1 (Bonett & Wright 2000).
    """
    require_correlation(coefficient, "Fisher's interval")
    confidence_level = check_confidence_level(confidence_level)
    b = _FISHER_B[coefficient]
    if not np.isfinite(r) or n <= b:
        return math.nan, math.nan
    c = {"pearson": 1.0, "spearman": math.sqrt(1.0 + r * r / 2.0), "kendall": math.sqrt(0.437)}[coefficient]
    z_crit = stats.norm.ppf(1.0 - (1.0 - confidence_level) / 2.0)
    with np.errstate(divide="ignore"):
        z = np.arctanh(r)  # +/-inf for |r| = 1, giving the degenerate interval [r, r]
    half = z_crit * c / math.sqrt(n - b)
    return float(np.tanh(z - half)), float(np.tanh(z + half))


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------
def _prepare_pool(
    metric: np.ndarray, human: np.ndarray, level: str, metric_pool_judged: np.ndarray | None
) -> tuple[np.ndarray, bool]:
    """Align the metric's inputs with the human's; return (metric, separate_inputs).

    Convention: the human's columns are the judged inputs in order. A metric with the
    same columns shares them (pool ``judged``). A wider metric holds the ``all`` pool:
    ``metric_pool_judged`` marks its judged columns (in the human's order); without it
    the first ``human.shape[1]`` columns are taken to be the judged ones.
    """
    m_metric, m_human = metric.shape[1], human.shape[1]
    if metric_pool_judged is not None:
        mask = np.asarray(metric_pool_judged)
        if mask.dtype != np.bool_ or mask.shape != (m_metric,):
            raise ValueError(
                f"metric_pool_judged must be a boolean mask of length {m_metric} (the metric's inputs); "
                f"got dtype {mask.dtype} and shape {mask.shape}"
            )
        if int(mask.sum()) != m_human:
            raise ValueError(
                f"metric_pool_judged marks {int(mask.sum())} judged inputs but human has {m_human} inputs"
            )
    elif m_metric >= m_human:
        mask = np.zeros(m_metric, dtype=bool)
        mask[:m_human] = True
    else:
        raise ValueError(
            f"metric must cover at least the human's {m_human} judged inputs; got {m_metric} inputs"
        )
    if mask.all():
        return metric, False
    if level == "system":
        return metric, True
    # Input and global correlations compare cells, which exist only on judged inputs.
    return metric[:, mask], False


def _confidence_interval_iv(metric, human, level, coefficient, method, confidence_level, n_resamples, rng, batch,
                            return_distribution, metric_pool_judged):
    metric = _as_matrix(metric, "metric")
    human = _as_matrix(human, "human")
    if metric.shape[0] != human.shape[0]:
        raise ValueError(
            f"metric and human must have the same number of systems; got {metric.shape[0]} and {human.shape[0]}"
        )
    validate_level(level)
    validate_coefficient(coefficient)
    require_level_for(coefficient, level)
    method = check_choice(method, "method", CI_METHODS)
    if method == "fisher":
        require_correlation(coefficient, "method 'fisher'")
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_int(n_resamples, "n_resamples")
    batch = check_int(batch, "batch", allow_none=True)
    rng = as_generator(rng)
    check_bool(return_distribution, "return_distribution")
    metric, separate = _prepare_pool(metric, human, level, metric_pool_judged)
    if method != "fisher":
        check_resampling_size(coefficient, level, human.shape[-2:], n_resamples)
    return metric, human, method, confidence_level, n_resamples, rng, batch, separate


def confidence_interval(
    metric: np.ndarray,
    human: np.ndarray,
    *,
    level: Level,
    coefficient: Coefficient,
    method: CIMethod,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    return_distribution: bool = False,
    metric_pool_judged: np.ndarray | None = None,
) -> ConfidenceInterval:
    """Confidence interval for the correlation of a metric with human judgments.

    Parameters
    ----------
    metric : array_like, shape (N, Mx)
        Metric scores, systems x inputs, NaN where missing. ``Mx`` equals the human's
        ``M`` (pool ``judged``) or is larger (pool ``all``: judged and unjudged inputs).
    human : array_like, shape (N, M)
        Human scores on the judged inputs.
    level : {'system', 'input', 'global'}
    coefficient : {'pearson', 'spearman', 'kendall'}
    method : {'fisher', 'boot-systems', 'boot-inputs', 'boot-both'}
        Fisher transformation, or the percentile bootstrap resampling systems, inputs or
        both (TACL 2021 Algorithm 1) with the same indices for metric and human.
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
        Bootstrap resamples (ignored by Fisher).
    rng : numpy.random.Generator, int or None
        Source of randomness; an int seeds ``numpy.random.default_rng``.
    batch : int, optional
        Resamples evaluated at once (memory/speed trade-off only: results do not depend on it).
    return_distribution : bool, default False
        Keep the resampled values (draw order, NaN where undefined) in the result.
    metric_pool_judged : array_like of bool, shape (Mx,), optional
        Marks the metric's judged inputs when ``metric`` holds the ``all`` pool; they must be
        the human's inputs in the same order. Without it a wider metric matrix is taken to hold
        the judged inputs first. At the system level the ``all`` pool resamples the metric's
        inputs (from all ``Mx``) separately from the human's (from the ``M`` judged);
        systems stay joint. Input and global levels always use the judged columns.

    Returns
    -------
    ConfidenceInterval

    Notes
    -----
    Fisher's ``n`` is the number of systems (system level), the largest number of valid
    systems in any input (input level), or the number of valid cells (global level); the
    interval is undefined when ``n <= b``. A resample whose correlation is undefined (fewer
    than 2 points, a constant vector) is NaN, counted in ``n_resamples - n_defined`` and
    left out of the percentiles; if none is defined the interval is NaN.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> human = rng.normal(size=(8, 20))
    >>> metric = human + rng.normal(size=(8, 20))
    >>> ci = confidence_interval(metric, human, level="system", coefficient="pearson", method="boot-both",
    ...                          n_resamples=200, rng=1)
    >>> bool(ci.low < ci.estimate < ci.high), ci.n_resamples, ci.method
    (True, 200, 'boot-both')
    >>> same = confidence_interval(metric, human, level="system", coefficient="pearson", method="boot-both",
    ...                            n_resamples=200, rng=1, batch=7)  # any batch size: the same numbers
    >>> (same.low, same.high) == (ci.low, ci.high)
    True

    References
    ----------
    docs/methods.md sec. 2; Deutsch, Dror & Roth (TACL 2021) sec. 3; Deutsch et al. (NAACL 2022) sec. 3.
    """
    metric, human, method, confidence_level, n_resamples, rng, batch, separate = _confidence_interval_iv(
        metric, human, level, coefficient, method, confidence_level, n_resamples, rng, batch,
        return_distribution, metric_pool_judged,
    )
    base = correlate_matrices(metric, human, level=level, coefficient=coefficient)
    estimate, n_points = float(base.estimate), int(base.n)
    pool = "all" if separate else "judged"
    if method == "fisher":
        fisher_n = _fisher_n(metric, human, level, n_points)
        low, high = fisher_interval(estimate, fisher_n, coefficient=coefficient, confidence_level=confidence_level)
        return ConfidenceInterval(estimate, low, high, method, confidence_level, 0, 0, n_points, None,
                                  level, coefficient, pool, fisher_n)
    indices = _draw_bootstrap_indices(
        rng, method, n_resamples, metric.shape[0], metric.shape[1], human.shape[1] if separate else None
    )
    values = _bootstrap_correlations([metric], human, level=level, coefficient=coefficient, indices=indices,
                                     batch=batch)[:, 0]
    low, high, n_defined = _percentile_interval(values, confidence_level)
    return ConfidenceInterval(estimate, low, high, method, confidence_level, n_resamples, n_defined, n_points,
                              values if return_distribution else None, level, coefficient, pool, 0)


def dataset_confidence_interval(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    level: Level,
    coefficient: Coefficient,
    method: CIMethod,
    pool: Pool = "judged",
    systems: str | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    return_distribution: bool = False,
) -> ConfidenceInterval:
    """:func:`confidence_interval` for measures of a :class:`Dataset`.

    ``pool='all'`` applies at the system level only (input and global correlations
    compare cells, which exist on judged inputs only); ``systems`` selects a subset
    such as ``"type=abs"``.

    Examples
    --------
    >>> from metaeval_core.data.synthetic import synthetic_dataset
    >>> ci = dataset_confidence_interval(synthetic_dataset(), "metric.strong", "human.quality", level="system",
    ...                                  coefficient="kendall", method="boot-both", n_resamples=200, rng=0)
    >>> round(ci.estimate, 3), bool(ci.low <= ci.estimate <= ci.high)
    (0.883, True)

    References
    ----------
    docs/methods.md sec. 0 and 2; TACL 2021 sec. 3; NAACL 2022 sec. 3.
    """
    check_dataset(dataset)
    check_choice(pool, "pool", POOLS)
    subset = dataset.select_systems(systems).rated_by(human)
    x, z = correlation_inputs(subset, metric, human, level=level, pool=pool)
    mask = subset.judged if (pool == "all" and level == "system") else None
    return confidence_interval(
        x, z, level=level, coefficient=coefficient, method=method, confidence_level=confidence_level,
        n_resamples=n_resamples, rng=rng, batch=batch, return_distribution=return_distribution,
        metric_pool_judged=None if mask is None else np.array(mask, dtype=bool),
    )


def dataset_confidence_intervals(
    dataset: Dataset,
    metrics: Sequence[str],
    human: str,
    *,
    level: Level,
    coefficient: Coefficient,
    method: CIMethod,
    pool: Pool = "judged",
    systems: str | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: int | None = None,
    batch: int | None = None,
) -> list[ConfidenceInterval]:
    """:func:`dataset_confidence_interval` for several metrics against one human measure, in the metrics' order.

    Each interval is the one :func:`dataset_confidence_interval` gives for that metric with the same seed ``rng``
    (the same draws, the same numbers). At the system level the draws, their multiplicities and the human's
    resampled system means are computed once for all metrics instead of once per metric (a WMT leaderboard of 21
    metrics: the human side was 21 times the same work); at the global level the draws, the resampled cells'
    weights and, for Kendall and pairwise accuracy, everything the pair counts take from the human's ranks alone.
    The input level, Fisher, soft pairwise accuracy and a ``rng`` that is not an int seed take the metrics one by
    one.

    Examples
    --------
    >>> from metaeval_core.data.synthetic import synthetic_dataset
    >>> ds = synthetic_dataset()
    >>> both = dataset_confidence_intervals(ds, ["metric.strong", "metric.weak"], "human.quality", level="system",
    ...                                     coefficient="kendall", method="boot-both", n_resamples=200, rng=0)
    >>> one = dataset_confidence_interval(ds, "metric.weak", "human.quality", level="system",
    ...                                   coefficient="kendall", method="boot-both", n_resamples=200, rng=0)
    >>> (both[1].low, both[1].high) == (one.low, one.high)
    True

    References
    ----------
    docs/methods.md sec. 0 and 2; TACL 2021 sec. 3.
    """
    names = list(metrics)
    options = dict(level=level, coefficient=coefficient, method=method, pool=pool, systems=systems,
                   confidence_level=confidence_level, n_resamples=n_resamples, batch=batch)
    seeded = isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)
    if len(names) < 2 or level not in ("system", "global") or method == "fisher" \
            or coefficient == "soft-pairwise-accuracy" or not seeded:
        return [dataset_confidence_interval(dataset, name, human, rng=rng, **options) for name in names]
    check_dataset(dataset)
    check_choice(pool, "pool", POOLS)
    subset = dataset.select_systems(systems).rated_by(human)
    mask = np.array(subset.judged, dtype=bool) if pool == "all" and level == "system" else None
    prepared = []
    for name in names:
        x, z = correlation_inputs(subset, name, human, level=level, pool=pool)
        prepared.append(_confidence_interval_iv(x, z, level, coefficient, method, confidence_level, n_resamples,
                                                int(rng), batch, False, mask))
    # Metrics whose matrices have one shape (and pool) share the draws: the same seed draws the same indices.
    groups: dict[tuple, list[int]] = {}
    for i, (x, z, *_rest, separate) in enumerate(prepared):
        groups.setdefault((x.shape, z.shape, separate), []).append(i)
    out: list[ConfidenceInterval | None] = [None] * len(names)
    for (x_shape, z_shape, separate), members in groups.items():
        z = prepared[members[0]][1]
        indices = _draw_bootstrap_indices(as_generator(int(rng)), method, n_resamples, x_shape[0], x_shape[1],
                                          z_shape[1] if separate else None)
        values = _bootstrap_correlations([prepared[i][0] for i in members], z, level=level, coefficient=coefficient,
                                         indices=indices, batch=batch)
        for column, i in enumerate(members):
            x = prepared[i][0]
            base = correlate_matrices(x, prepared[i][1], level=level, coefficient=coefficient)
            low, high, n_defined = _percentile_interval(values[:, column], confidence_level)
            out[i] = ConfidenceInterval(float(base.estimate), low, high, method, confidence_level, n_resamples,
                                        n_defined, int(base.n), None, level, coefficient,
                                        "all" if separate else "judged", 0)
    return out  # type: ignore[return-value]
