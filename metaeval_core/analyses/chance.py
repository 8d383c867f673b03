"""Chance baselines: what a metric with no information scores on *this* dataset.

The metric's scores are permuted within the level's grouping (system means across systems; each input's scores
across the systems scored by both measures on it; all cells scored by both), the human scores stay fixed, and the
coefficient is recomputed at the level on every permutation. The baseline is the mean over the permutations; the
band is the central ``confidence_level`` range of the permutation distribution. For Pearson, Spearman and tau-b on
complete data the mean is exactly 0; for the pairwise accuracies it depends on the ties of both measures, and for
tie-calibrated accuracy ``epsilon`` is re-chosen on every permutation (the coefficient calibrates itself).

How a permutation is drawn: every point of the grouping (every system at the system level, every cell at the input
and global levels, scored or not, so the draws never depend on the metric's missing cells) gets a uniform random
key; within each group the scored point with the r-th smallest key receives the metric's r-th smallest value.
This is a uniform random permutation of the metric's values, and it makes the result depend on the metric only
through its sorted values per group: metrics with the same ties (and missing cells) get bit-identical baselines
for rank-based coefficients with the same seed, which is what lets a page draw one line for them. Keys come from
one generator stream in permutation order (``Generator.random`` fills row by row), so any batch size gives the
same numbers, and every metric of a call sees the same permutations (common random numbers).

References: docs/methods.md sec. 12.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from metaeval_core._checks import (
    as_generator, check_bool, check_choice, check_int, check_interval_resamples, check_confidence_level,
)
from metaeval_core.data.checks import check_dataset, check_human
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import POOLS, Dataset, Pool
from metaeval_core.stats.coefficients import (
    Coefficient,
    check_resampling_size,
    require_point_coefficient,
    validate_coefficient,
)
from metaeval_core.stats.correlation import (
    Level, correlate_matrices, correlation_inputs, nanmean_last, system_means, validate_level,
)
from metaeval_core.stats.montecarlo import finite_or_none, percentile_interval
from metaeval_core.stats.resampling import _rows_correlation

__all__ = ["ChanceBaseline", "ChanceBaselines", "chance_baseline", "chance_baselines", "chance_distributions"]

# Permuted values materialised per batch when ``batch`` is None (a few tens of MB).
_BATCH_ELEMENT_BUDGET = 2_000_000


@dataclass(frozen=True)
class ChanceBaseline(ToFrame):
    """The chance baseline of one metric: its coefficient with the humans after permuting its scores.

    Attributes
    ----------
    estimate : float
        Mean of the defined permutation values (the expected value of a random metric), NaN if none is defined.
    low, high : float
        The central ``confidence_level`` range (percentiles) of the defined permutation values.
    mc_se : float
        Monte Carlo standard error of ``estimate``: sd of the permutation values / sqrt(n_defined).
    observed : float
        The metric's own (unpermuted) value, for reference.
    n_resamples, n_defined : int
        Permutations drawn; those whose coefficient was defined.
    n : int
        Points behind the observed value (systems, defined inputs or cells).
    distribution : numpy.ndarray or None
        With ``return_distribution=True``, the permutation values in draw order (NaN where undefined).
    """

    metric: str
    human: str
    level: str
    coefficient: str
    pool: str
    estimate: float
    low: float
    high: float
    mc_se: float
    observed: float
    confidence_level: float
    n_resamples: int
    n_defined: int
    n: int
    systems: str = ""
    distribution: np.ndarray | None = None

    @property
    def defined(self) -> bool:
        return bool(np.isfinite(self.estimate))

    def to_dict(self) -> dict:
        num = finite_or_none
        return {"metric": self.metric, "human": self.human, "level": self.level, "coefficient": self.coefficient,
                "pool": self.pool, "estimate": num(self.estimate), "low": num(self.low), "high": num(self.high),
                "mc_se": num(self.mc_se), "observed": num(self.observed),
                "confidence_level": self.confidence_level, "n_resamples": self.n_resamples,
                "n_defined": self.n_defined, "n": self.n, "systems": self.systems}


@dataclass(frozen=True)
class ChanceBaselines(ToFrame):
    """Chance baselines of several metrics against one human measure, from the same permutations.

    References: docs/methods.md sec. 12.
    """

    rows: tuple[ChanceBaseline, ...]

    @property
    def shared(self) -> bool:
        """True when every metric's baseline and band are identical (same ties; see the module docstring)."""
        values = {(r.estimate, r.low, r.high) for r in self.rows}
        return len(values) <= 1 or all(not r.defined for r in self.rows)

    def to_records(self) -> list[dict]:
        return [r.to_dict() for r in self.rows]


# ---------------------------------------------------------------------------
# The engine: permutation values of q metrics against one human matrix
# ---------------------------------------------------------------------------
def _arrange(sorted_values: np.ndarray, keys: np.ndarray, valid: np.ndarray, axis: int) -> np.ndarray:
    """The scored point with the r-th smallest key (along ``axis``) gets ``sorted_values``'s r-th entry.

    ``sorted_values`` holds each group's scored values ascending, then +inf (as many as unscored points);
    unscored points get keys above every scored one, so they take the +inf tail and come back NaN.
    """
    keyed = np.where(valid, keys, 2.0)  # keys lie in [0, 1)
    order = np.argsort(keyed, axis=axis, kind="stable")
    out = np.empty(np.broadcast_shapes(keys.shape, sorted_values.shape))
    np.put_along_axis(out, order, np.broadcast_to(sorted_values, out.shape), axis=axis)
    return np.where(np.isinf(out), np.nan, out)


def _sorted_scored(values: np.ndarray, valid: np.ndarray, axis: int) -> np.ndarray:
    return np.sort(np.where(valid, values, np.inf), axis=axis)


class _InputKendall:
    """Input-level tau-b of permuted metrics, sharing the work that depends only on the keys and the humans.

    A permutation moves a metric's values within each input, so each input's tie counts (the denominator) do not
    change, only the numerator. With ``r`` the keys' ranks among the scored points of an input and ``xs`` the
    metric's sorted values, the permuted value of system ``a`` is ``xs[r_a]``; so the numerator is
    ``sum_{a<a'} sz sign(r_a - r_a')`` (the same for every metric scoring the same cells) plus, over the
    metric's tied sorted positions ``t < t'``, ``sign(z at t - z at t')``: per metric, work only where it ties.

    References: docs/methods.md sec. 12.
    """

    def __init__(self, metrics: Sequence[np.ndarray], human: np.ndarray, valids: Sequence[np.ndarray],
                 ordered: Sequence[np.ndarray]):
        n, m = human.shape
        self.human = human
        self.first, self.second = np.triu_indices(n, 1)
        groups: dict[bytes, list[int]] = {}
        for idx, valid in enumerate(valids):
            groups.setdefault(np.packbits(valid).tobytes(), []).append(idx)
        self.groups = [(valids[members[0]], members) for members in groups.values()]
        self.ties = []
        for values, valid in zip(ordered, valids):
            scored = valid.sum(axis=0)
            f, s = self.first, self.second
            # Sorted positions t < t' both scored and equal (the +inf tail is unscored).
            tied = (values[f] == values[s]) & (s[:, None] < scored[None, :])  # (P, M)
            pair, column = np.nonzero(tied.T)[1], np.nonzero(tied.T)[0]
            nz = self._untied_human(valid)
            n0 = scored * (scored - 1) // 2
            nx = n0 - tied.sum(axis=0)
            starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]]) if column.size else column
            # Flat indices of the tied positions in a (N, M) block.
            self.ties.append((f[pair] * m + column, s[pair] * m + column, column, starts,
                              (nx * nz).astype(np.float64)))

    def _untied_human(self, valid: np.ndarray) -> np.ndarray:
        z, f, s = self.human, self.first, self.second
        return ((z[f] != z[s]) & valid[f] & valid[s]).sum(axis=0)

    def values(self, keys: np.ndarray, out: np.ndarray) -> None:
        """Fill ``out`` (b, q) with every metric's input-level tau-b for the keys (b, N, M)."""
        f, s = self.first, self.second
        z = self.human
        b, n, m = keys.shape
        for valid, members in self.groups:
            order = np.argsort(np.where(valid, keys, 2.0), axis=1, kind="stable")  # (b, N, M): system at rank t
            ranks = np.empty_like(order)
            np.put_along_axis(ranks, order, np.broadcast_to(np.arange(n)[None, :, None], order.shape), axis=1)
            compared = valid[f] & valid[s]
            sz = np.where(compared, np.sign(np.where(compared, z[f] - z[s], 0.0)), 0.0).astype(np.int8)  # (P, M)
            small = ranks.astype(np.int16 if n < 2**15 else np.int64)
            shared = np.einsum("pj,bpj->bj", sz, np.sign(small[:, f] - small[:, s]).astype(np.int8), dtype=np.int64)
            z_at = np.take_along_axis(np.broadcast_to(z, keys.shape), order, axis=1)  # human score at rank t
            for idx in members:
                low, high, column, starts, denominator = self.ties[idx]
                numerator = shared.astype(np.float64)
                if column.size:
                    flat = z_at.reshape(b, -1)
                    signs = np.sign(np.take(flat, low, axis=1) - np.take(flat, high, axis=1))  # (b, tied pairs)
                    # The tied pairs are grouped by input: one segment sum per input that has ties.
                    numerator[:, column[starts]] += np.add.reduceat(signs, starts, axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    tau = np.where(denominator > 0, np.clip(numerator / np.sqrt(denominator), -1.0, 1.0), np.nan)
                out[:, idx] = nanmean_last(tau)


class _GlobalKendall:
    """Global-level tau-b of permuted metrics, one O(n log n) pass per permutation shared by the metrics.

    The metric's values move over the cells scored by both measures: with the cells in key order (``order``) and
    ``xs`` the metric's sorted values, the cell at key rank ``t`` gets ``xs[t]``, so the tie counts (the
    denominator) never change and the numerator is ``S(L) - sum over tied positions t < t' of sign(L_t' - L_t)``,
    ``L`` the human scores in key order and ``S(L)`` Kendall's numerator of the keys against the humans (one scipy
    tau-b per permutation for every metric scoring the same cells). A metric with many ties takes its numerator
    from the (value x human score) table of counts instead, when that table is small; otherwise scipy's tau-b of
    its permuted values, as before.

    References: docs/methods.md sec. 12.
    """

    def __init__(self, metrics: Sequence[np.ndarray], human: np.ndarray, valids: Sequence[np.ndarray],
                 ordered: Sequence[np.ndarray]):
        zf = human.ravel()
        groups: dict[bytes, list[int]] = {}
        for idx, valid in enumerate(valids):
            groups.setdefault(np.packbits(valid.ravel()).tobytes(), []).append(idx)
        self.groups = []
        for members in groups.values():
            valid = valids[members[0]].ravel()
            zv = zf[valid]
            nv = zv.size
            z_values, z_rank, z_counts = np.unique(zv, return_inverse=True, return_counts=True)
            n0 = nv * (nv - 1) // 2
            nz = n0 - int((z_counts * (z_counts - 1) // 2).sum())
            plans = []
            for idx in members:
                xs = ordered[idx][:nv]  # the scored values ascending (the +inf tail is unscored)
                starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]]) if nv else np.zeros(0, dtype=np.intp)
                sizes = np.diff(np.append(starts, nv))
                tied_pairs = int((sizes * (sizes - 1) // 2).sum())
                denominator = float(n0 - tied_pairs) * float(nz)
                small_table = starts.size * z_values.size <= 4 * nv
                if tied_pairs <= 8 * nv or (not small_table and tied_pairs <= _MAX_TIED_PAIRS_PER_CELL * nv):
                    # Every pair of tied sorted positions, listed once: the per-permutation correction.
                    pairs = _tied_position_pairs(starts, sizes)
                    plans.append((idx, "pairs", pairs, denominator))
                elif small_table:
                    plans.append((idx, "table", (np.repeat(np.arange(starts.size), sizes), starts.size), denominator))
                else:
                    plans.append((idx, "scipy", None, denominator))
            self.groups.append((valid, zv, z_rank, z_values.size, n0, nz, plans))

    def values(self, keys: np.ndarray, ordered: Sequence[np.ndarray], out: np.ndarray) -> None:
        """Fill ``out`` (b, q) with every metric's global-level tau-b for the keys (b, cells)."""
        from scipy import stats

        b = keys.shape[0]
        for valid, zv, z_rank, n_z, n0, nz, plans in self.groups:
            kv = keys[:, valid]
            shared = np.zeros(b)
            if any(kind == "pairs" for _, kind, _, _ in plans) and n0 > 0 and nz > 0:
                for r in range(b):
                    # No ties among the keys: tau-b = S / sqrt(n0 nz), S an integer.
                    shared[r] = np.rint(stats.kendalltau(kv[r], zv).statistic * math.sqrt(float(n0) * nz))
            order = np.argsort(kv, axis=1) if any(kind != "scipy" for _, kind, _, _ in plans) else None
            for idx, kind, plan, denominator in plans:
                if kind == "scipy":
                    permuted = _arrange(ordered[idx], keys, valid, axis=1)[:, valid]
                    out[:, idx] = _rows_correlation(permuted, zv[None, :], "kendall")
                    continue
                if denominator <= 0:
                    out[:, idx] = np.nan
                    continue
                if kind == "pairs":
                    numerator = shared.copy()
                    if plan is not None:
                        at = z_rank[order]  # (b, nv): human score rank at key rank t
                        # In slices of tied pairs: a metric with ~30 tied pairs per cell would otherwise hold a
                        # (b, pairs) array of hundreds of MB.
                        for lo in range(0, plan[0].size, _TIED_PAIRS_SLICE):
                            hi = lo + _TIED_PAIRS_SLICE
                            numerator -= np.sign(np.take(at, plan[1][lo:hi], axis=1)
                                                 - np.take(at, plan[0][lo:hi], axis=1)).sum(axis=1, dtype=np.int64)
                else:
                    group, n_groups = plan
                    counts = np.bincount((np.arange(b)[:, None] * (n_groups * n_z) + group[None, :] * n_z
                                          + z_rank[order]).ravel(), minlength=b * n_groups * n_z)
                    table = counts.reshape(b, n_groups, n_z).astype(np.int64)
                    # Cells of later value groups, with a higher / lower human score than each cell's.
                    later = np.cumsum(table[:, ::-1], axis=1)[:, ::-1]
                    later = np.concatenate([later[:, 1:], np.zeros((b, 1, n_z), dtype=np.int64)], axis=1)
                    above = np.cumsum(later[:, :, ::-1], axis=2)[:, :, ::-1] - later
                    below = np.cumsum(later, axis=2) - later
                    numerator = np.einsum("bgk,bgk->b", table, above - below).astype(np.float64)
                out[:, idx] = np.clip(numerator / math.sqrt(denominator), -1.0, 1.0)


# A metric's tied sorted positions are corrected pair by pair up to 8 tied pairs per scored cell, then by the
# (value x human score) table when it is small, else pair by pair up to this many: a pair costs two gathers per
# permutation, scipy's tau-b an O(n log n) sort and its call (WMT23 zh-en: BLEU and the Calibri metrics tie 12-26
# pairs per cell with too many values for the table; on scipy they took ~60% of the global-level chance baselines).
_MAX_TIED_PAIRS_PER_CELL = 64
_TIED_PAIRS_SLICE = 1 << 17


def _tied_position_pairs(starts: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Every pair ``t < t'`` of sorted positions inside one run of ties (runs given by ``starts`` and ``sizes``)."""
    first, second = [], []
    for size in np.unique(sizes[sizes > 1]):
        f, t = np.triu_indices(int(size), 1)
        at = starts[sizes == size]
        first.append((at[:, None] + f[None, :]).ravel())
        second.append((at[:, None] + t[None, :]).ravel())
    return (np.concatenate(first), np.concatenate(second)) if first else None


def chance_distributions(
    metrics: Sequence[np.ndarray],
    human: np.ndarray,
    *,
    level: Level,
    coefficient: Coefficient,
    n_resamples: int,
    rng: np.random.Generator,
    batch: int | None = None,
) -> np.ndarray:
    """(k, q) coefficient values of each metric with ``human`` on ``k`` permutations of the metric's scores.

    ``metrics`` are systems x inputs matrices (at the system level they may hold more inputs than ``human``: the
    ``all`` pool); ``human`` is systems x judged inputs. Undefined values are NaN. Every metric sees the same
    keys. Low-level: :func:`chance_baseline` validates and summarises.

    References: docs/methods.md sec. 12.
    """
    n, m = human.shape
    q = len(metrics)
    out = np.full((n_resamples, q), np.nan)
    if level == "system":
        z = system_means(human)
        means = [system_means(x) for x in metrics]
        valids = [~np.isnan(x) & ~np.isnan(z) for x in means]
        ordered = [_sorted_scored(x, v, 0) for x, v in zip(means, valids)]
        size = n
    else:
        valids = [~np.isnan(x) & ~np.isnan(human) for x in metrics]
        if level == "input":
            ordered = [_sorted_scored(x, v, 0) for x, v in zip(metrics, valids)]
        else:
            ordered = [_sorted_scored(x.ravel(), v.ravel(), 0) for x, v in zip(metrics, valids)]
        size = n * m
    # Input-level Kendall shares the keys' ranks between metrics (no permuted matrices): larger batches.
    shared = _InputKendall(metrics, human, valids, ordered) if level == "input" and coefficient == "kendall" else None
    global_kendall = (_GlobalKendall(metrics, human, valids, ordered)
                      if level == "global" and coefficient == "kendall" else None)
    b = batch or int(max(1, min(n_resamples, _BATCH_ELEMENT_BUDGET // max(size * (4 if shared else max(q, 1)), 1))))
    for start in range(0, n_resamples, b):
        stop = min(start + b, n_resamples)
        keys = rng.random((stop - start, size))
        if shared is not None:
            shared.values(keys.reshape(-1, n, m), out[start:stop])
            continue
        if global_kendall is not None:
            global_kendall.values(keys, ordered, out[start:stop])
            continue
        for idx in range(q):
            if level == "system":
                permuted = _arrange(ordered[idx], keys, valids[idx], axis=1)  # (b, N) system means
                out[start:stop, idx] = correlate_matrices(permuted[:, :, None], z[:, None], level="system",
                                                          coefficient=coefficient).estimate
            elif level == "input":
                cells = keys.reshape(-1, n, m)
                permuted = _arrange(ordered[idx], cells, valids[idx], axis=1)  # (b, N, M), per input column
                out[start:stop, idx] = correlate_matrices(permuted, human, level="input",
                                                          coefficient=coefficient).estimate
            else:
                valid = valids[idx].ravel()
                permuted = _arrange(ordered[idx], keys, valid, axis=1)[:, valid]  # (b, cells scored by both)
                out[start:stop, idx] = _rows_correlation(permuted, human.ravel()[valid][None, :], coefficient)
    return out


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------
def _validate_chance(dataset, metrics, human, level, coefficient, pool, systems, n_resamples, confidence_level,
                     rng, batch, return_distribution):
    dataset = check_dataset(dataset)
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics) or not metrics:
        raise TypeError("metrics must be a non-empty sequence of measure names")
    validate_level(level)
    validate_coefficient(coefficient)
    require_point_coefficient(coefficient, "the chance baseline (it permutes system means)")
    check_choice(pool, "pool", POOLS)
    check_human(dataset, human)
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_interval_resamples(n_resamples, confidence_level)
    batch = check_int(batch, "batch", allow_none=True)
    check_bool(return_distribution, "return_distribution")
    if systems is not None and not isinstance(systems, str):
        raise TypeError(f"systems must be a selection string such as 'type=abs', or None; got {systems!r}")
    subset = dataset.select_systems(systems).rated_by(human)
    matrices = [correlation_inputs(subset, m, human, level=level, pool=pool)[0] for m in metrics]
    z = correlation_inputs(subset, human, human, level=level, pool="judged")[1]  # the integer grid (sec. 15)
    check_resampling_size(coefficient, level, z.shape, n_resamples)
    return subset, matrices, z, n_resamples, confidence_level, as_generator(rng), batch


def _summary(values: np.ndarray, confidence_level: float) -> tuple[float, float, float, float, int]:
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return math.nan, math.nan, math.nan, math.nan, 0
    low, high, _ = percentile_interval(defined, confidence_level)
    se = float(np.std(defined, ddof=1) / math.sqrt(defined.size)) if defined.size > 1 else math.nan
    return float(defined.mean()), low, high, se, int(defined.size)


def chance_baselines(
    dataset: Dataset,
    metrics: Sequence[str],
    human: str,
    *,
    level: Level = "system",
    coefficient: Coefficient = "kendall",
    pool: Pool = "judged",
    systems: str | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    return_distribution: bool = False,
) -> ChanceBaselines:
    """:func:`chance_baseline` for several metrics, all on the same permutations.

    Each metric's row equals ``chance_baseline(dataset, metric, ...)`` with the same seed.

    References
    ----------
    docs/methods.md sec. 12.
    """
    subset, matrices, z, n_resamples, confidence_level, generator, batch = _validate_chance(
        dataset, metrics, human, level, coefficient, pool, systems, n_resamples, confidence_level, rng, batch,
        return_distribution)
    values = chance_distributions(matrices, z, level=level, coefficient=coefficient, n_resamples=n_resamples,
                                  rng=generator, batch=batch)
    rows = []
    for idx, (metric, x) in enumerate(zip(metrics, matrices)):
        observed = correlate_matrices(x, z, level=level, coefficient=coefficient)
        estimate, low, high, se, n_defined = _summary(values[:, idx], confidence_level)
        rows.append(ChanceBaseline(
            metric=metric, human=human, level=level, coefficient=coefficient,
            pool=pool if level == "system" else "judged", estimate=estimate, low=low, high=high, mc_se=se,
            observed=float(observed.estimate), confidence_level=confidence_level, n_resamples=n_resamples,
            n_defined=n_defined, n=int(observed.n), systems=systems or "",
            distribution=values[:, idx].copy() if return_distribution else None))
    return ChanceBaselines(tuple(rows))


def chance_baseline(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    level: Level = "system",
    coefficient: Coefficient = "kendall",
    pool: Pool = "judged",
    systems: str | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    return_distribution: bool = False,
) -> ChanceBaseline:
    """The expected coefficient of a random metric on this dataset, by permuting the metric's scores.

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
        The metric whose scores are permuted (any measure), and the human measure (kept fixed).
    level : {'system', 'input', 'global'}
        System: permute the metric's system means across systems. Input: within each judged input, permute the
        metric's scores across the systems scored by both measures. Global: permute across all cells scored by
        both.
    coefficient : {'pearson', 'spearman', 'kendall', 'pairwise-accuracy', 'tie-calibrated-accuracy'}
        Tie-calibrated accuracy re-chooses ``epsilon`` on every permutation; at the global level it is refused on
        more than 400 cells, as for every resampling method.
    pool : {'judged', 'all'}
        The metric's inputs for its system means (system level only).
    systems : str, optional
        A system subset such as ``"type=abs"``.
    n_resamples : int, default 1000
        Permutations ``k``; at least ``ceil(2 / (1 - confidence_level))``.
    confidence_level : float, default 0.95
        Width of the reported central range of the permutation distribution.
    rng : numpy.random.Generator, int or None
    batch : int, optional
        Permutations evaluated at once (memory only: results do not depend on it).
    return_distribution : bool, default False
        Keep the ``k`` permutation values (draw order) in the result.

    Returns
    -------
    ChanceBaseline
        ``estimate`` (mean over defined permutations), ``low``/``high`` (central range), ``mc_se``, the metric's
        ``observed`` value, ``n_defined``.

    References
    ----------
    docs/methods.md sec. 12; Deutsch, Foster & Freitag (2023) sec. 4-5.
    """
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a measure name; got {type(metric).__name__}")
    return chance_baselines(dataset, [metric], human, level=level, coefficient=coefficient, pool=pool,
                            systems=systems, n_resamples=n_resamples, confidence_level=confidence_level, rng=rng,
                            batch=batch, return_distribution=return_distribution).rows[0]
