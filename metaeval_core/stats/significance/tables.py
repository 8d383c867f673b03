"""All-pairs tables: every ordered pair of metrics tested on common random numbers, then corrected.

References: docs/methods.md sec. 3; Deutsch, Dror & Roth (TACL 2021) sec. 6.2, Fig. 5 and App. B.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from metaeval_core._checks import as_generator, check_callable, check_choice, check_int, check_probability
from metaeval_core.wording import finite_or_none
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import Dataset, Pool, POOLS
from metaeval_core.stats.coefficients import (
    Coefficient,
    check_resampling_size,
    pair_kernel_fits,
    require_correlation,
    require_level_for,
    validate_coefficient,
)
from metaeval_core.stats.correlation import Level, correlate_matrices, correlation_inputs, validate_level
from metaeval_core.stats.resampling import _as_matrix, _auto_batch, _bootstrap_correlations, _draw_bootstrap_indices
from metaeval_core.stats.significance._common import (
    ALTERNATIVES,
    PERMUTATION_METHODS,
    STOPPING_RULES,
    Stopping,
    CORRECTIONS,
    FAMILIES,
    PAIRED_BOOTSTRAP_METHODS,
    TEST_METHODS,
    Alternative,
    Correction,
    Family,
    TestMethod,
    WMT_METHODS,
    _count_pvalue,
    method_problem,
)
from metaeval_core.stats.significance.compare import _williams
from metaeval_core.stats.significance.wmt import wmt_pair_nulls
from metaeval_core.stats.significance.corrections import correct_table
from metaeval_core.stats.paircounts import WEIGHTED_PAIR_COEFFICIENTS
from metaeval_core.stats.spa import estimated_spa_seconds
from metaeval_core.stats.significance.linear import (
    LINEAR_COEFFICIENTS, InputLinearPermutation, input_permutation_nulls, linear_fits,
)
from metaeval_core.stats.significance.permutation import (
    _PermutationEngine,
    _iter_swap_masks,
    _permutation_chunks,
    _screened_chunks,
    _sequential_pvalues,
    _block_pvalues,
    BLOCK_EARLY_MIN,
    BLOCK_SIZE,
    _permutation_null,
    _SystemPermutation,
    _zscore_params,
)

@dataclass(frozen=True)
class PairwiseTable(ToFrame):
    """All ordered pairwise comparisons of a set of metrics (row X better than column Y?).

    ``delta[i, j] = r(metric_i) - r(metric_j)``; ``pvalue[i, j]`` tests "row i better than
    column j" (NaN on the diagonal); ``pvalue_corrected`` is adjusted within each family;
    ``significant`` is ``pvalue < alpha`` (the filled heatmap cell) and
    ``significant_corrected`` is ``pvalue_corrected < alpha`` (the outlined cell).

    References
    ----------
    docs/methods.md sec. 3; TACL 2021 Fig. 5 and App. B.
    """

    metrics: tuple[str, ...]
    human: str
    estimates: np.ndarray
    delta: np.ndarray
    pvalue: np.ndarray
    pvalue_corrected: np.ndarray
    significant: np.ndarray
    significant_corrected: np.ndarray
    alpha: float
    correction: str
    family: str
    method: str
    alternative: str
    level: str
    coefficient: str
    n_resamples: int
    n_defined: np.ndarray
    approximate: bool = False
    stopping: str = "none"

    def to_records(self) -> list[dict]:
        """One dict per ordered pair (x, y), x != y, in row-major order."""
        num = finite_or_none
        records = []
        for i, x in enumerate(self.metrics):
            for j, y in enumerate(self.metrics):
                if i == j:
                    continue
                records.append({
                    "x": x, "y": y, "delta": num(self.delta[i, j]), "pvalue": num(self.pvalue[i, j]),
                    "pvalue_corrected": num(self.pvalue_corrected[i, j]),
                    "significant": bool(self.significant[i, j]),
                    "significant_corrected": bool(self.significant_corrected[i, j]),
                    "n_defined": int(self.n_defined[i, j]),
                })
        return records


def _shared_seed(rng: object) -> np.random.SeedSequence:
    """The seed every pair of a table starts from (common random numbers).

    An int seed ``s`` gives ``SeedSequence(s)``, so a pair's generator equals
    ``numpy.random.default_rng(s)``; a Generator contributes 128 bits of entropy (and advances).
    """
    generator = as_generator(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        return np.random.SeedSequence(int(rng))
    return np.random.SeedSequence([int(v) for v in generator.integers(0, 2**32, size=4)])


def _compare_all_pairs_iv(data, metrics, human, level, coefficient, method, alternative, correction, family,
                          alpha, n_resamples, rng, batch, pool, systems, progress, stopping):
    check_choice(stopping, "stopping", STOPPING_RULES)
    validate_level(level)
    validate_coefficient(coefficient)
    require_level_for(coefficient, level)
    method = check_choice(method, "method", TEST_METHODS)
    if method == "williams":
        require_correlation(coefficient, "method 'williams'")
    if method_problem(method, level, coefficient):
        raise ValueError(method_problem(method, level, coefficient))
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    correction = check_choice(correction, "correction", CORRECTIONS)
    family = check_choice(family, "family", FAMILIES)
    alpha = check_probability(alpha, "alpha")
    n_resamples = check_int(n_resamples, "n_resamples")
    batch = check_int(batch, "batch", allow_none=True)
    rng = _shared_seed(rng)
    check_choice(pool, "pool", POOLS)
    check_callable(progress, "progress", "taking a fraction in [0, 1]")
    if isinstance(metrics, str) or not isinstance(metrics, Sequence):
        raise TypeError("metrics must be a sequence of measure names")
    metrics = tuple(metrics)
    if len(metrics) < 2:
        raise ValueError(f"metrics must name at least two measures; got {len(metrics)}")
    if len(set(metrics)) != len(metrics):
        raise ValueError("metrics must not repeat a name")
    if method == "williams" and level == "input":
        raise ValueError(
            "method 'williams' is defined at the system and global levels only (docs/methods.md sec. 3); got level='input'"
        )
    if isinstance(data, Dataset):
        # One system set for every pair: those the human measure rated and every metric scored (a metric without
        # a score for the reference it uses would otherwise compare on fewer systems than its neighbours).
        subset = data.select_systems(systems).scored_by([human, *metrics])
        matrices = {}
        for name in metrics:
            matrices[name], z = correlation_inputs(subset, name, human, level=level, pool=pool)
    elif isinstance(data, Mapping):
        if pool != "judged" or systems is not None:
            raise ValueError("pool and systems apply to a Dataset only; pass the matrices you want to compare")
        missing = [k for k in (*metrics, human) if k not in data]
        if missing:
            raise ValueError(f"data has no matrix for {', '.join(map(repr, missing))}")
        matrices = {name: _as_matrix(data[name], name) for name in metrics}
        z = _as_matrix(data[human], human)
    else:
        raise TypeError(f"data must be a Dataset or a mapping of name -> matrix; got {type(data).__name__}")
    return (matrices, np.asarray(z, dtype=np.float64), metrics, method, alternative, correction, family, float(alpha),
            n_resamples, rng, batch)


def compare_all_pairs(
    data: Dataset | Mapping[str, np.ndarray],
    metrics: Sequence[str],
    human: str,
    *,
    level: Level,
    coefficient: Coefficient,
    method: TestMethod,
    alternative: Alternative = "greater",
    correction: Correction = "bonferroni",
    family: Family = "row",
    alpha: float = 0.05,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    pool: Pool = "judged",
    systems: str | None = None,
    progress: Callable[[float], None] | None = None,
    stopping: Stopping = "none",
) -> PairwiseTable:
    """Test every ordered pair of metrics and correct for multiple comparisons.

    Parameters
    ----------
    data : Dataset or mapping of name -> (N, M) matrix
        A dataset (measures looked up by name, ``pool`` and ``systems`` applied) or the
        matrices themselves (``human`` included).
    metrics : sequence of str
        At least two metric names; the table's rows and columns in this order.
    human : str
    level, coefficient, method, alternative, n_resamples, batch
        As in :func:`compare_metrics`.
    correction : {'bonferroni', 'holm', 'bh', 'none'}, default 'bonferroni'
    family : {'row', 'table', 'none'}, default 'row'
        The family a correction runs over: each row metric's ``k - 1`` tests (TACL Fig. 5),
        all ``k (k - 1)`` tests of the table (TACL App. B), or none (no correction).
    alpha : float, default 0.05
    rng : numpy.random.Generator, int or None
        Common random numbers: every pair is tested on the same resamples, drawn from one
        seed (an int ``s`` gives exactly ``compare_metrics(..., rng=s)`` for every cell; a
        Generator contributes the seed). Shared resamples keep the table internally
        consistent and let each metric's resampled sums be computed once; each test is
        still a valid test on its own, and Bonferroni and Holm hold under any dependence.
        The reverse cell ``(b, a)`` reuses the resamples of ``(a, b)`` with ``delta_s``
        negated.
    pool : {'judged', 'all'}
        The metrics' input pool (system level only; Dataset input only).
    systems : str, optional
        System subset such as ``"type=abs"`` (Dataset input only).
    progress : callable, optional
        Called with the fraction of pairs done (0 to 1).
    stopping : {'none', 'besag-clifford', 'blocks'}, default 'none'
        ``'besag-clifford'``: sequential Monte Carlo p-values (docs/methods.md sec. 16.2). A cell stops
        at its ``h = ceil(alpha (k + 1))``-th exceedance after ``l`` resamples with ``p = h / l`` (valid,
        and not significant at ``alpha``, as the full run would be); other cells get the full-run
        p-value. ``'blocks'``: mt-metrics-eval's rule (CompareMetrics): every 100 draws a cell whose
        p-value so far is below :func:`block_early_min` (0.02, or ``alpha`` over the correction's family
        size) or above 0.5 stops with that p-value, an estimate from fewer draws; its decision at ``alpha``
        can differ from the full run's only near the thresholds. ``n_defined`` holds each cell's ``l``. Applied where pairs run one at a time
        (permutation tests at the global level, PERM-INPUTS, Pearson/Spearman/tie-calibrated at the
        input level); elsewhere every pair already shares the draws and the full run is kept.
        ``PairwiseTable.stopping`` says which rule the table used.

    Returns
    -------
    PairwiseTable

    References
    ----------
    docs/methods.md sec. 3; Deutsch, Dror & Roth (TACL 2021) sec. 6.2, Fig. 5 and App. B.
    """
    (matrices, z, metrics, method, alternative, correction, family, alpha, n_resamples, rng,
     batch) = _compare_all_pairs_iv(data, metrics, human, level, coefficient, method, alternative, correction,
                                    family, alpha, n_resamples, rng, batch, pool, systems, progress, stopping)
    first_shape = next(iter(matrices.values())).shape
    for name, mat in matrices.items():
        if mat.shape != first_shape:
            raise ValueError(f"metric {name!r} has shape {mat.shape}, expected {first_shape} like the others")
    if first_shape[0] != z.shape[0] or (level != "system" and first_shape[1] != z.shape[1]):
        raise ValueError(f"metric matrices {first_shape} do not match human {human!r} of shape {z.shape}")
    if method != "williams":
        check_resampling_size(coefficient, level, z.shape[-2:], n_resamples)
    k = len(metrics)
    pairs = list(itertools.combinations(range(k), 2))
    estimates = np.array([
        float(correlate_matrices(matrices[m], z, level=level, coefficient=coefficient).estimate) for m in metrics
    ])
    delta = estimates[:, None] - estimates[None, :]
    pvalue = np.full((k, k), np.nan)
    n_defined = np.zeros((k, k), dtype=int)
    report = progress if progress is not None else (lambda fraction: None)
    used_stopping = "none"
    report(0.0)

    def fill(u: int, a: int, b: int, null: np.ndarray | None, threshold: float) -> None:
        pvalue[a, b], n_defined[a, b] = _count_pvalue(null, threshold, alternative)
        # Reverse cell from the same resamples: swapping the roles of X and Y negates
        # delta and every delta_s (and every centred bootstrap delta_s - delta).
        pvalue[b, a], n_defined[b, a] = _count_pvalue(-null, -threshold, alternative)

    stack = [matrices[m] for m in metrics]
    if method == "williams":
        for u, (a, b) in enumerate(pairs):
            for i, j in ((a, b), (b, a)):
                pvalue[i, j] = _williams(stack[i], stack[j], z, level=level, coefficient=coefficient,
                                         alternative=alternative)[1]
            report((u + 1) / len(pairs))
    elif method in WMT_METHODS:
        # One (k, N) set of system swaps for every pair; each pair's threshold is its delta on the systems it keeps.
        nulls, thresholds = wmt_pair_nulls(stack, z, coefficient=coefficient, n_resamples=n_resamples,
                                           rng=np.random.default_rng(rng), batch=batch, pairs=pairs, progress=report)
        for u, (a, b) in enumerate(pairs):
            fill(u, a, b, nulls[u], thresholds[u])
    elif method in PAIRED_BOOTSTRAP_METHODS:
        # One set of indices for all metrics: each metric's resampled correlation once.
        n, m = stack[0].shape
        separate = m != z.shape[1]
        indices = _draw_bootstrap_indices(np.random.default_rng(rng), method, n_resamples, n, m,
                                          z.shape[1] if separate else None)
        values = _bootstrap_correlations(stack, z, level=level, coefficient=coefficient, indices=indices,
                                         batch=batch)
        report(0.5)
        for u, (a, b) in enumerate(pairs):
            centred = (values[:, a] - values[:, b]) - delta[a, b]
            fill(u, a, b, centred, delta[a, b])
        report(1.0)
    elif (level == "global" and coefficient in WEIGHTED_PAIR_COEFFICIENTS and method in PERMUTATION_METHODS
          and stopping == "none"):
        # Only exceedances count here: each pair's draws are decided from bounds, exactly counted where they are
        # unsure (``_PermutationEngine.screened_deltas``); the p-values equal ``permutation_pair_nulls``'s.
        for u, (a, b) in enumerate(pairs):
            engine = _PermutationEngine(stack[a], stack[b], z, level, coefficient, method)
            chunks = _table_chunks(engine, rng, method, n_resamples, z.shape, batch, delta[a, b], alternative)
            null = np.full(n_resamples, np.nan)
            for sl, values in chunks:
                null[sl] = values
            fill(u, a, b, null, delta[a, b])
            report((u + 1) / len(pairs))
    elif stopping == "none" or not sequential_stopping_applies(level, coefficient, method):
        nulls = permutation_pair_nulls(stack, z, level=level, coefficient=coefficient, method=method,
                                       n_resamples=n_resamples, seed=rng, batch=batch, progress=report)
        for u, (a, b) in enumerate(pairs):
            fill(u, a, b, nulls[u], delta[a, b])
    else:
        h = math.ceil(alpha * (n_resamples + 1))
        early_min = block_early_min(alpha, correction, family, k)
        used_stopping = stopping
        for u, (a, b) in enumerate(pairs):
            engine = _PermutationEngine(stack[a], stack[b], z, level, coefficient, method)
            chunks = _table_chunks(engine, rng, method, n_resamples, z.shape, batch, delta[a, b], alternative,
                                   blocks=stopping == "blocks")
            if stopping == "blocks":
                cells = _block_pvalues(chunks, delta[a, b], alternative, n_resamples, early_min=early_min)
            else:
                cells = _sequential_pvalues(chunks, delta[a, b], alternative, n_resamples, h)
            (pvalue[a, b], n_defined[a, b]), (pvalue[b, a], n_defined[b, a]), _ = cells
            report((u + 1) / len(pairs))
    corrected = correct_table(pvalue, correction=correction, family=family)
    with np.errstate(invalid="ignore"):
        significant = np.nan_to_num(pvalue, nan=1.0) < alpha
        significant_corrected = np.nan_to_num(corrected, nan=1.0) < alpha
    return PairwiseTable(
        metrics=metrics, human=human, estimates=estimates, delta=delta, pvalue=pvalue, pvalue_corrected=corrected,
        significant=significant, significant_corrected=significant_corrected, alpha=alpha, correction=correction,
        family=family, method=method, alternative=alternative, level=level, coefficient=coefficient,
        n_resamples=0 if method == "williams" else n_resamples, n_defined=n_defined,
        approximate=method == "williams" and coefficient != "pearson", stopping=used_stopping,
    )


def _table_chunks(engine, seed, method, n_resamples, shape, batch, threshold, alternative, *, blocks=False):
    """A pair's ``(slice, delta_s)`` chunks for counting exceedances of ``threshold``: screened where the engine
    can (global-level pair counts), else exact."""
    rng = np.random.default_rng(seed)
    if engine.screens:
        return _screened_chunks(engine, rng, method, n_resamples, shape, batch, threshold, alternative)
    size = _auto_batch(batch, engine.per_resample * 4, n_resamples)
    if blocks and batch is None:
        # Chunks no larger than a block, so a pair that stops draws no resample past its block.
        size = min(size, BLOCK_SIZE)
    return _permutation_chunks(engine, rng, method, n_resamples, shape, size)


def block_early_min(alpha: float, correction: str, family: str, n_metrics: int) -> float:
    """The lower threshold of ``stopping='blocks'``: mt-metrics-eval's 0.02, lowered to ``alpha / m`` when the
    table's correction runs over families of ``m`` tests, so that a pair stopped as significant has a p-value that
    can stay significant after Bonferroni (a stopped p-value is at least ``1 / (l + 1)``).

    References: docs/methods.md sec. 16.2.
    """
    if correction == "none" or family == "none":
        tests = 1
    elif family == "row":
        tests = n_metrics - 1
    else:
        tests = n_metrics * (n_metrics - 1)
    return min(BLOCK_EARLY_MIN, alpha / max(tests, 1))


def blocks_settled_draws(n_resamples: int, early_min: float) -> int:
    """The fewest draws after which ``stopping='blocks'`` can stop a pair as significant: the first block boundary
    ``l < n_resamples`` where ``1 / (l + 1) < early_min`` (no exceedance yet), else ``n_resamples``. The cost model
    of :func:`metaeval_core.stats.budget.table_decision` for tables whose pairs are mostly settled.

    References: docs/methods.md sec. 16.2 and 16.5.
    """
    blocks = max(1, math.ceil((1.0 / early_min - 1.0) / BLOCK_SIZE))
    if 1.0 / (blocks * BLOCK_SIZE + 1.0) >= early_min:
        blocks += 1
    return min(blocks * BLOCK_SIZE, n_resamples)


def sequential_stopping_applies(level: str, coefficient: str, method: str) -> bool:
    """Whether :func:`compare_all_pairs` applies ``stopping='besag-clifford'`` to this test: permutation tests whose
    pairs run one at a time (elsewhere every pair shares the draws and the full run is kept).

    References: docs/methods.md sec. 16.2.
    """
    if method == "williams" or method in WMT_METHODS or method in PAIRED_BOOTSTRAP_METHODS or level == "system":
        return False
    return not (level == "input" and coefficient in LINEAR_COEFFICIENTS and method != "perm-inputs")


def _input_engine(stack: Sequence[np.ndarray], z: np.ndarray, coefficient: str) -> InputLinearPermutation:
    """The input-level engine of every pair ``itertools.combinations(range(len(stack)), 2)``, on the metrics
    z-scored over their cells (TACL Algorithm 2, step 1)."""
    zscored = [(x - mu) / sd for x, (mu, sd) in ((x, _zscore_params(x)) for x in stack)]
    return InputLinearPermutation(zscored, z, coefficient, list(itertools.combinations(range(len(stack)), 2)))


def permutation_pair_nulls(
    stack: Sequence[np.ndarray],
    z: np.ndarray,
    *,
    level: str,
    coefficient: str,
    method: str,
    n_resamples: int,
    seed: np.random.SeedSequence,
    batch: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> np.ndarray:
    """(pairs, k) permutation ``delta_s`` of every pair ``itertools.combinations(range(len(stack)), 2)``.

    Every pair is swapped with the masks of ``numpy.random.default_rng(seed)`` (common random numbers), so
    two calls with the same seed and matrix shape swap the same cells on every resample, whatever the metrics,
    the human measure, the level or ``batch``; averages over tasks rely on this (docs/methods.md sec. 13).

    References: docs/methods.md sec. 3.1, 3.5 and 16.1.
    """
    report = progress if progress is not None else (lambda fraction: None)
    pairs = list(itertools.combinations(range(len(stack)), 2))
    n, m = stack[0].shape
    if level == "system" and coefficient != "soft-pairwise-accuracy":
        # Shared swap masks: every metric's swapped partial sums once per chunk, then pairs.
        # (SPA needs each swapped matrix's pairwise p-values: pair by pair below.)
        engine = _SystemPermutation(stack, z, coefficient, method)
        nulls = np.full((len(pairs), n_resamples), np.nan)
        size = _auto_batch(batch, n * m, n_resamples)
        for sl, mask in _iter_swap_masks(np.random.default_rng(seed), method, n_resamples, n, m, size):
            moved = engine.moved(mask)
            # Pair by pair (measured faster than vectorising over pairs, whose gathers thrash the cache).
            for u, (a, b) in enumerate(pairs):
                nulls[u, sl] = engine.deltas(moved, a, b)
            report(sl.stop / n_resamples)
        return nulls
    if level == "input" and coefficient in LINEAR_COEFFICIENTS and method != "perm-inputs" and linear_fits(n, m):
        # Every pair's delta_s is a linear form in the shared swap bits: one product per chunk.
        engine = _input_engine(stack, z, coefficient)
        # Taller chunks than elsewhere (about 16M swap bits, 64 MB of float32 features): the product
        # shares its coefficient matrix over the chunk's rows (measured: 44 -> 256 rows, 4.0 -> 2.9 s).
        size = _auto_batch(batch, max(1, (n * m + len(pairs)) // 8), n_resamples)
        return input_permutation_nulls(
            engine, lambda: _iter_swap_masks(np.random.default_rng(seed), method, n_resamples, n, m, size),
            n_resamples, report)
    nulls = np.full((len(pairs), n_resamples), np.nan)
    for u, (a, b) in enumerate(pairs):
        nulls[u] = _permutation_null(stack[a], stack[b], z, level=level, coefficient=coefficient, method=method,
                                     rng=np.random.default_rng(seed), n_resamples=n_resamples, batch=batch)
        report((u + 1) / len(pairs))
    return nulls


# Seconds per (resample x cell x unit of work) on the 2-core benchmark machine, per path
# (benchmarks/bench_scale.py; rough: the estimate only decides whether to refuse a table outright).
_SECONDS_PER_ELEMENT = {
    "system": 2e-9,  # per metric: swapped sums of every metric once per chunk
    "linear": 2e-10,  # per pair: input-level Kendall / pairwise accuracy, linear in the swap bits
    "cells": 5e-8,  # per pair: the swapped or resampled cells materialised
    # per metric (bootstrap) or per pair and outcome (permutation), per resample x systems^2 x inputs:
    # input-level tie-calibrated accuracy, one epsilon over all (pair, input) entries (benchmarks/bench_tiecal.py)
    "tiecal": 2e-8,
}
# Global-level Kendall and pairwise accuracy (stats.paircounts): seconds per point x resample x (recursion levels
# + 4), the levels being log2 of the coarser coordinate's distinct values; a point is a cell (bootstrap, per metric)
# or one of a pair's two cells (permutation). Measured on WMT22 zh-en (178 MQM values: 8 levels) and on continuous
# scores of the same shape (15 levels), CPU seconds (benchmarks/bench_wmt.py --levels).
_SECONDS_PER_PAIRCOUNT_POINT_LEVEL = 1.8e-9
# The bootstrap's counts on packed weightings (four resamples per 64-bit word, metrics sharing them;
# stats.paircounts.PreparedWeights): 4.5-6.5 s of CPU for WMT22 zh-en's 21 global-level intervals, 0.9e-9 with all
# metrics together, 1.1e-9 one at a time.
_SECONDS_PER_BOOTSTRAP_POINT_LEVEL = 1.0e-9


# Global-level permutation tables are decided from bounds (``_PermutationEngine.screened_deltas``): per pair the
# counter and its concordance vector (per point x (levels + 4)), per resample and point the bounds' passes, and the
# exact count for the resamples whose bounds come near a decision boundary (0.1-0.3% of WMT22 zh-en's; priced at 2%).
# CPU seconds of the 210-pair WMT22 zh-en table (benchmarks/bench_wmt.py --levels --heavy): 34-38 s, estimate 34 s.
_SECONDS_PER_SCREEN_SETUP_POINT_LEVEL = 5e-8
_SECONDS_PER_SCREENED_POINT = 2e-9
_SCREENED_EXACT_SHARE = 0.02


def _paircount_seconds(points: float, n_points: int, human_distinct: int | None,
                       per_point_level: float = _SECONDS_PER_PAIRCOUNT_POINT_LEVEL) -> float:
    return points * (_paircount_levels(n_points, human_distinct) + 4) * per_point_level


def _paircount_levels(n_points: int, human_distinct: int | None) -> int:
    distinct = n_points if human_distinct is None else min(max(human_distinct, 1), n_points)
    return math.ceil(math.log2(max(distinct, 2)))


def _screened_pair_seconds(n_resamples: int, n_points: int, human_distinct: int | None) -> float:
    setup = n_points * (_paircount_levels(n_points, human_distinct) + 4) * _SECONDS_PER_SCREEN_SETUP_POINT_LEVEL
    draws = n_resamples * n_points * _SECONDS_PER_SCREENED_POINT
    return setup + draws + _SCREENED_EXACT_SHARE * _paircount_seconds(n_resamples * n_points, n_points, human_distinct)


# The input-level Kendall tie path (significance.linear.TiedInputs), per resample x input x metric pair: two key
# look-ups and the weights, and per system pair the dot product giving the keys. Fitted to the CPU seconds of
# benchmarks/bench_wmt.py --levels (one BLAS thread): WMT22 zh-en (14 systems x 1,875 inputs, 210 pairs) 3.2-3.6 s and
# WMT23 zh-en (15 x 1,177, 496 pairs) 6.5-7.4 s for the whole table at 1,000 resamples (load 4, docs/speed.md
# "third pass"), estimates 4.0 s and 6.3 s.
_SECONDS_PER_TIED_ENTRY = 5e-9
_SECONDS_PER_TIED_PAIR = 2.5e-11
# Seconds per input column whose coefficient is computed slice by slice (Kendall beyond the pair kernel's 150
# systems: scipy's tau-b; pairwise accuracy beyond 300: tau-b and tie counts), per resample, metric or side:
# 2,000 systems x 20 inputs, PERM-BOTH, 200 resamples took 18 s (Kendall) and 35 s (pairwise accuracy).
_SECONDS_PER_SLICE = {"kendall": 2e-3, "pairwise-accuracy": 4e-3}


def _slice_seconds(level: str, coefficient: str, n_systems: int) -> float:
    if level != "input":
        return 0.0
    if coefficient == "kendall" and not pair_kernel_fits(n_systems):
        return _SECONDS_PER_SLICE["kendall"]
    if coefficient == "pairwise-accuracy" and n_systems > 300:
        return _SECONDS_PER_SLICE["pairwise-accuracy"]
    return 0.0


def estimated_table_seconds(n_systems: int, n_inputs: int, n_metrics: int, *, level: str, coefficient: str,
                            method: str, n_resamples: int, human_distinct: int | None = None,
                            nulls: bool = False) -> float:
    """A rough estimate of :func:`compare_all_pairs`' time on this project's benchmark machine.

    Used to refuse, with the reason, a table that would run for minutes; not a promise. ``human_distinct``, the
    number of distinct human scores, prices the global level's pair counts (fewer values, fewer recursion levels;
    None: all distinct, the worst case). ``nulls``: the null values themselves are needed
    (:func:`permutation_pair_nulls`, averaged over tasks), so the global level counts every resample exactly
    instead of deciding most from bounds (docs/methods.md sec. 16.1).

    References: docs/methods.md sec. 16.
    """
    if method == "williams":
        return 0.0
    cells = n_resamples * n_systems * n_inputs
    pairs = n_metrics * (n_metrics - 1) / 2
    if method in WMT_METHODS:
        # System scores only: the system means once, then k x N swaps per pair.
        return cells * n_metrics * 1e-9 + n_resamples * n_systems * pairs * _SECONDS_PER_ELEMENT["system"]
    if coefficient == "soft-pairwise-accuracy":
        # One matrix's p-values (all system pairs) are recomputed per resample for every measure when inputs
        # are resampled, per metric pair when cells or inputs are swapped; resampled or swapped whole systems
        # reuse p-values computed once (PERM-SYSTEMS: four per metric pair, one row per system pair).
        # Complete matrices are assumed (docs/methods.md sec. 11.3).
        one = estimated_spa_seconds(n_systems, n_inputs, 1)
        if method == "boot-systems":
            return (n_metrics + 1) * one
        if method in PAIRED_BOOTSTRAP_METHODS:
            return n_resamples * (n_metrics + 1) * one
        if method == "perm-systems":
            return 4 * pairs * estimated_spa_seconds(n_systems, n_inputs, 1, complete=False)
        return n_resamples * pairs * 2 * one
    if level == "system":
        return cells * n_metrics * _SECONDS_PER_ELEMENT["system"]
    if level == "input" and coefficient == "tie-calibrated-accuracy":
        entries = cells * n_systems
        if method in PAIRED_BOOTSTRAP_METHODS:
            return entries * n_metrics * _SECONDS_PER_ELEMENT["tiecal"]
        return entries * pairs * 4 * _SECONDS_PER_ELEMENT["tiecal"]
    per_slice = _slice_seconds(level, coefficient, n_systems) * n_resamples * n_inputs
    if method in PAIRED_BOOTSTRAP_METHODS:
        if level == "global" and coefficient in ("kendall", "pairwise-accuracy"):
            return n_metrics * _paircount_seconds(cells, n_systems * n_inputs, human_distinct,
                                                  _SECONDS_PER_BOOTSTRAP_POINT_LEVEL)
        return cells * n_metrics * _SECONDS_PER_ELEMENT["cells"] + per_slice * n_metrics
    if level == "input" and method == "perm-inputs":
        return n_resamples * n_inputs * pairs * _SECONDS_PER_ELEMENT["system"]
    if level == "input" and coefficient in LINEAR_COEFFICIENTS and linear_fits(n_systems, n_inputs):
        # Priced as if every input had ties within a metric (integer or rounded scores, identical outputs), the
        # worst case of the shared per-input product: the estimate then depends on the shape only.
        tied = n_resamples * n_inputs * pairs * (_SECONDS_PER_TIED_ENTRY + _SECONDS_PER_TIED_PAIR * n_systems ** 2 / 2)
        return cells * pairs * _SECONDS_PER_ELEMENT["linear"] + (tied if coefficient == "kendall" else 0.0)
    if level == "global" and coefficient in ("kendall", "pairwise-accuracy"):
        if nulls:
            return pairs * _paircount_seconds(2 * cells, 2 * n_systems * n_inputs, human_distinct)
        return pairs * _screened_pair_seconds(n_resamples, 2 * n_systems * n_inputs, human_distinct)
    return cells * pairs * _SECONDS_PER_ELEMENT["cells"] + per_slice * pairs * 2
