"""Leave one system out: how much each system moves the metric-human correlation.

References: docs/methods.md sec. 10.4.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

import numpy as np

from metaeval_core._checks import (
    as_generator, check_bool, check_choice, check_confidence_level, check_int,
)
from metaeval_core.data.checks import check_dataset
from metaeval_core.stats.coefficients import (
    Coefficient, check_resampling_size, coefficient_function, require_point_coefficient, validate_coefficient,
)
from metaeval_core.stats.correlation import Level, correlate_matrices, correlation_inputs, nanmean_last, validate_level
from metaeval_core.data.dataset import Dataset, Pool, POOLS
from metaeval_core.stats.resampling import BOOTSTRAP_METHODS, confidence_interval
from metaeval_core.analyses.practice._common import finite_or_none


# ============================================================================================
# Leave-one-system-out influence
# ============================================================================================
@dataclass(frozen=True)
class InfluenceResult:
    """The metric-human correlation with each system left out.

    ``estimate`` (with ``low``/``high`` when intervals were asked for) is the correlation on
    all systems. Per system (``systems`` order): ``without`` is the correlation with that
    system removed, ``change = without - estimate``, ``low_without``/``high_without`` its
    interval (NaN without intervals), and ``flagged`` (decisive) is True when ``|change|``
    exceeds :attr:`limit` or ``without`` falls outside the full interval ``[low, high]``;
    ``reasons`` says which.

    ``resolution`` is the change one system pair switching between concordant and discordant
    makes on ``N - 1`` systems (Kendall at the system level: ``2 / sqrt((n0 - n1)(n0 - n2))``,
    the largest over the leave-one-out sets; NaN for other coefficients and levels): changes
    come in multiples of it. ``noise`` is the change leaving out an ordinary system makes:
    the robust spread of the ``N`` changes, ``1.4826 * MAD`` (so a few influential systems do
    not inflate it), at least ``resolution``.
    """

    metric: str
    human: str
    level: str
    coefficient: str
    pool: str
    estimate: float
    low: float
    high: float
    threshold: float
    systems: tuple[str, ...]
    without: np.ndarray
    change: np.ndarray
    low_without: np.ndarray
    high_without: np.ndarray
    flagged: np.ndarray
    reasons: tuple[str, ...]
    ci_method: str | None
    resolution: float = math.nan
    noise: float = math.nan

    @property
    def limit(self) -> float:
        """The smallest decisive change: the threshold, or twice the leave-one-out noise when that is larger (a move
        within the granularity and sampling noise of the coefficient decides nothing)."""
        return max(self.threshold, 2 * self.noise) if math.isfinite(self.noise) else self.threshold

    @property
    def most_influential(self) -> str | None:
        """The system whose removal moves the correlation most (None if none is defined)."""
        moved = np.abs(self.change)
        if not np.isfinite(moved).any():
            return None
        return self.systems[int(np.nanargmax(moved))]

    def to_records(self) -> list[dict]:
        return [
            {"system": s, "without": finite_or_none(w), "change": finite_or_none(c),
             "low_without": finite_or_none(lo), "high_without": finite_or_none(hi), "flagged": bool(f),
             "reason": r}
            for s, w, c, lo, hi, f, r in zip(self.systems, self.without, self.change, self.low_without,
                                             self.high_without, self.flagged, self.reasons)
        ]

    def to_dict(self) -> dict:
        return {"metric": self.metric, "human": self.human, "level": self.level, "coefficient": self.coefficient,
                "pool": self.pool, "estimate": finite_or_none(self.estimate), "low": finite_or_none(self.low),
                "high": finite_or_none(self.high), "threshold": self.threshold, "ci_method": self.ci_method,
                "resolution": finite_or_none(self.resolution), "noise": finite_or_none(self.noise),
                "limit": finite_or_none(self.limit),
                "most_influential": self.most_influential, "systems": self.to_records()}


def _influence_iv(dataset, metric, human, level, coefficient, pool, systems, threshold, with_intervals, method,
                  confidence_level, n_resamples, rng):
    check_dataset(dataset)
    validate_level(level)
    validate_coefficient(coefficient)
    require_point_coefficient(coefficient, "leave-one-system-out influence")
    check_choice(pool, "pool", POOLS)
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, numbers.Real) \
            or not 0 <= float(threshold) or not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number >= 0 (a change in correlation); got {threshold!r}")
    check_bool(with_intervals, "with_intervals")
    check_choice(method, "method", ("fisher", *BOOTSTRAP_METHODS))
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_int(n_resamples, "n_resamples")
    rng = as_generator(rng)
    subset = dataset.select_systems(systems).rated_by(human)
    if subset.n_systems < 3:
        raise ValueError(f"systems must leave at least 3 systems (2 after a removal); got {subset.n_systems}")
    x, z = correlation_inputs(subset, metric, human, level=level, pool=pool)
    _check_plan(x.shape[0], z.shape[1], level, coefficient, with_intervals, method, n_resamples)
    return subset, x, z, float(threshold), confidence_level, n_resamples, rng


# Leave-one-out stacks (rows, N - 1, M) built at once: ~32 MB of float64 whatever N and M.
_STACK_BUDGET = 4_000_000
# Values the N leave-one-out correlations recompute in all (N x (N - 1) system means, or N x (N - 1) x M cells
# at the input and global levels), and, with intervals, resampled cells over the N + 1 intervals: beyond these a
# run takes minutes here (benchmarks/bench_hostile.py).
MAX_INFLUENCE_VALUES = 100_000_000
MAX_INFLUENCE_RESAMPLED_CELLS = 2_000_000_000


def _check_plan(n: int, m: int, level: str, coefficient: str, with_intervals: bool, method: str,
                n_resamples: int) -> None:
    """Refuse up front, with the reason and what to change, a leave-one-out run that would take minutes."""
    # N leave-one-out sets cost what N resamples of N - 1 systems cost (tie calibration's search above all).
    check_resampling_size(coefficient, level, (n - 1, m), n, unit="leave-one-out set")
    values = n * (n - 1) * (1 if level == "system" else m)
    if values > MAX_INFLUENCE_VALUES:
        raise ValueError(
            f"leave-one-system-out influence at the {level} level recomputes {n:,} correlations on {n - 1:,} "
            f"systems x {m:,} inputs ({values:,} values in all; more than {MAX_INFLUENCE_VALUES:,} takes minutes "
            "here); use the system level or a subset of the systems"
        )
    if with_intervals and method != "fisher":
        cells = (n + 1) * n_resamples * n * m
        if cells > MAX_INFLUENCE_RESAMPLED_CELLS:
            raise ValueError(
                f"with intervals, leave-one-system-out influence draws {n + 1:,} {method} intervals of "
                f"{n_resamples:,} resamples over {n:,} systems x {m:,} inputs ({cells:,} resampled cells; more "
                f"than {MAX_INFLUENCE_RESAMPLED_CELLS:,} takes minutes here); leave the intervals out, use fewer "
                "resamples or Fisher intervals, or a subset of the systems"
            )


def system_influence(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    level: Level = "system",
    coefficient: Coefficient = "kendall",
    pool: Pool = "judged",
    systems: str | None = None,
    threshold: float = 0.1,
    with_intervals: bool = False,
    method: Literal["fisher", "boot-systems", "boot-inputs", "boot-both"] = "boot-both",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> InfluenceResult:
    """Leave-one-system-out influence on the metric-human correlation.

    For each system ``i`` the correlation is recomputed at ``level`` on the other ``N - 1``
    systems (all computed at once along a batch axis). A system is flagged (decisive) when its removal
    moves the correlation by more than ``threshold`` *and* by more than twice the change an
    ordinary system's removal makes (``noise``: the robust spread of the ``N`` changes, at
    least the change one pair flip makes; on 10 systems one discordant pair moves Kendall's
    tau by 2/36 = 0.056), or, with ``with_intervals``, out of the full data's confidence
    interval.

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
    level : {'system', 'input', 'global'}, default 'system'
    coefficient : {'kendall', 'pearson', 'spearman'}, default 'kendall'
    pool : {'judged', 'all'}, default 'judged'
        The metric's input pool (system level only, docs/methods.md sec. 0).
    systems : str, optional
        A system subset such as ``"type=abs"`` (the leave-one-out runs within it).
    threshold : float, default 0.1
        Flag a removal that changes the correlation by more than this (correlation units).
    with_intervals : bool, default False
        Also compute the interval on all systems and on each leave-one-out set (``method``;
        :func:`metaeval_core.stats.resampling.confidence_interval`).
    method : {'boot-both', 'boot-systems', 'boot-inputs', 'fisher'}, default 'boot-both'
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
    rng : numpy.random.Generator, int or None
        The full interval uses child 0 of ``rng.spawn(N + 1)``, the set without system ``i``
        child ``i + 1``.

    Returns
    -------
    InfluenceResult

    References
    ----------
    docs/methods.md sec. 10, 1 and 2; Cook (1977) for deletion diagnostics; Mathur, Baldwin &
    Cohn (2020) "Tangled up in BLEU" on outlier systems.
    """
    subset, x, z, threshold, confidence_level, n_resamples, rng = _influence_iv(
        dataset, metric, human, level, coefficient, pool, systems, threshold, with_intervals, method,
        confidence_level, n_resamples, rng)
    n = x.shape[0]
    full = float(correlate_matrices(x, z, level=level, coefficient=coefficient).estimate)
    # keep[i] lists every system but i: (N, N - 1) row indices, so (N, N - 1, M) stacks.
    keep = np.array([np.delete(np.arange(n), i) for i in range(n)])
    if level == "system":
        xm, zm = nanmean_last(x), nanmean_last(z)
        without = coefficient_function(coefficient)(xm[keep], zm[keep])
    else:
        # In chunks of removals: all N stacks at once are N x (N - 1) x M values (GBs at 2,000 systems).
        without = np.empty(n)
        step = max(1, _STACK_BUDGET // max(1, (n - 1) * max(x.shape[1], 1)))
        for start in range(0, n, step):
            rows = keep[start:start + step]
            without[start:start + step] = correlate_matrices(x[rows], z[rows], level=level,
                                                             coefficient=coefficient).estimate
    without = np.asarray(without, dtype=np.float64)
    change = without - full
    low = high = math.nan
    low_w = np.full(n, np.nan)
    high_w = np.full(n, np.nan)
    mask = None
    if pool == "all" and level == "system":
        mask = np.array(subset.judged, dtype=bool)
    if with_intervals:
        children = rng.spawn(n + 1)
        options = dict(level=level, coefficient=coefficient, method=method, confidence_level=confidence_level,
                       n_resamples=n_resamples, metric_pool_judged=mask)
        ci = confidence_interval(x, z, rng=children[0], **options)
        low, high = ci.low, ci.high
        for i in range(n):
            ci_i = confidence_interval(x[keep[i]], z[keep[i]], rng=children[i + 1], **options)
            low_w[i], high_w[i] = ci_i.low, ci_i.high
    resolution = _pair_resolution(x, z, keep) if level == "system" and coefficient == "kendall" else math.nan
    noise = _leave_one_out_noise(change, resolution)
    limit = max(threshold, 2 * noise) if math.isfinite(noise) else threshold
    moved = np.nan_to_num(np.abs(change), nan=0.0) > limit + 1e-12  # changes are multiples of a resolution
    outside = np.zeros(n, dtype=bool)
    if with_intervals and np.isfinite(low) and np.isfinite(high):
        outside = np.isfinite(without) & ((without < low) | (without > high))
    reasons = tuple(
        ", ".join(r for r, on in ((f"|change| > {limit:.3g}", moved[i]), ("outside the full interval",
                                                                            outside[i])) if on)
        for i in range(n)
    )
    return InfluenceResult(
        metric=metric, human=human, level=level, coefficient=coefficient,
        pool=pool if level == "system" else "judged", estimate=full, low=float(low), high=float(high),
        threshold=threshold, systems=subset.systems, without=without, change=change, low_without=low_w,
        high_without=high_w, flagged=moved | outside, reasons=reasons,
        ci_method=method if with_intervals else None, resolution=resolution, noise=noise,
    )


def _pair_resolution(x: np.ndarray, z: np.ndarray, keep: np.ndarray) -> float:
    """The change in Kendall's tau-b one pair flip makes on the leave-one-out sets (the largest of them): the
    numerator P - Q moves by 2, the denominator sqrt((n0 - n1)(n0 - n2)) stays.

    The untied pairs of each leave-one-out set follow from the full set's tie groups in O(N log N) (removing
    system i, in a group of g tied values among k, removes k - g untied pairs); enumerating the pairs of every
    set was O(N^3) (2,000 systems: minutes). ``keep`` holds the N sets (each system left out once).
    """
    xm, zm = nanmean_last(x), nanmean_last(z)
    ok = np.isfinite(xm) & np.isfinite(zm)
    k = int(ok.sum())
    untied, group = [], []
    for means in (xm, zm):
        values = means[ok]
        _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
        untied.append(k * (k - 1) // 2 - int((counts * (counts - 1) // 2).sum()))
        size = np.zeros(means.size, dtype=np.int64)
        size[ok] = counts[inverse]
        group.append(size)
    steps = []
    for left_out in range(keep.shape[0]):
        # keep[i] lists every system but i: the one left out is i.
        lost = [(k - g[left_out]) if ok[left_out] else 0 for g in group]
        denominator = math.sqrt(float(untied[0] - lost[0]) * float(untied[1] - lost[1]))
        if denominator > 0:
            steps.append(2.0 / denominator)
    return max(steps) if steps else math.nan


def _leave_one_out_noise(change: np.ndarray, resolution: float) -> float:
    """The change an ordinary system's removal makes: 1.4826 x the median absolute deviation of the changes (robust
    to the few systems that matter), at least ``resolution``; NaN when fewer than 3 changes are defined."""
    defined = change[np.isfinite(change)]
    if defined.size < 3:
        return math.nan
    spread = 1.4826 * float(np.median(np.abs(defined - np.median(defined))))
    return max(spread, resolution) if math.isfinite(resolution) else spread
