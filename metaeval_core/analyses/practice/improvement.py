"""Is my improvement real? The probability that humans order two systems as a metric difference of size
``delta`` does, from a monotone fit over the dataset's system pairs, with a bootstrap band.

References: docs/methods.md sec. 10.1; Deutsch, Dror & Roth (NAACL 2022); Kocmi et al. (2021, 2024).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from scipy.optimize import isotonic_regression

from metaeval_core._checks import (
    as_generator, check_choice, check_confidence_level, check_int,
)
from metaeval_core.data.checks import check_dataset, check_human
from metaeval_core.stats.correlation import correlation_inputs, nanmean_last
from metaeval_core.stats.exact import grid_scale, units_means
from metaeval_core.data.dataset import Dataset, Pool, POOLS
from metaeval_core.stats.pairs import DELTA_METHODS, DeltaMethod, draw_delta_resamples, percentile_interval, resampled_system_means
from metaeval_core.analyses.practice._common import finite_or_none


HumanTies = Literal["half", "exclude"]
HUMAN_TIES: tuple[str, ...] = get_args(HumanTies)

# Elements (resamples x systems x inputs) gathered at once when recomputing resampled means.
_GATHER_BUDGET = 4_000_000
# Points of the fitted curve returned for plotting.
_GRID_POINTS = 101


# ============================================================================================
# Is my improvement real?
# ============================================================================================
@dataclass(frozen=True)
class AgreementCurve:
    """An isotonic (non-decreasing) fit of human agreement against ``|dx|``.

    ``knots`` are the distinct ``|dx|`` of the pairs used (ascending), ``fit`` the fitted
    agreement at each knot, ``weight`` the number of pairs at each knot, and ``block`` the
    isotonic block (pool of adjacent knots sharing one fitted value) of each knot.
    Between knots the curve is linearly interpolated; outside them it is constant.
    """

    knots: np.ndarray
    fit: np.ndarray
    weight: np.ndarray
    block: np.ndarray

    @property
    def n_pairs(self) -> int:
        return int(self.weight.sum())

    def __call__(self, abs_dx) -> np.ndarray:
        if self.knots.size == 0:
            return np.full(np.shape(abs_dx), np.nan)
        return np.interp(abs_dx, self.knots, self.fit)

    def support(self, abs_dx: float) -> int:
        """Pairs in the isotonic block(s) whose fitted values give the curve at ``abs_dx``.

        Inside a block (or at one of its knots) that block; strictly between two blocks
        both of them (the interpolation mixes their values); beyond the ends the first or
        last block.
        """
        if self.knots.size == 0:
            return 0
        right = int(np.searchsorted(self.knots, abs_dx, side="left"))
        if right < self.knots.size and self.knots[right] == abs_dx:
            blocks = {int(self.block[right])}
        else:
            left = max(right - 1, 0)
            right = min(right, self.knots.size - 1)
            blocks = {int(self.block[left]), int(self.block[right])}
        return int(sum(self.weight[self.block == b].sum() for b in blocks))


def pair_agreement(dx, dz, *, human_ties: HumanTies = "half") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``|dx|``, agreement and a usable-pair mask for system pairs (any leading batch axes).

    Agreement is 1 when ``sign(dx) == sign(dz) != 0``, 0 when the signs are opposite and,
    when the human means are tied (``dz == 0``), 0.5 (``human_ties='half'``: humans
    indifferent, ties broken at random) or the pair is unused (``'exclude'``). Pairs tied in
    the metric (``dx == 0``) say nothing about the direction of an improvement and are
    always unused, as are pairs with a NaN difference.
    """
    dx = np.asarray(dx, dtype=np.float64)
    dz = np.asarray(dz, dtype=np.float64)
    sx, sz = np.sign(dx), np.sign(dz)
    agreement = np.where(sx * sz > 0, 1.0, np.where(sz == 0, 0.5, 0.0))
    usable = (sx != 0) & ~np.isnan(dx) & ~np.isnan(dz)
    if human_ties == "exclude":
        usable &= sz != 0
    return np.abs(dx), agreement, usable


def fit_agreement_curve(abs_dx, agreement) -> AgreementCurve:
    """Isotonic regression of ``agreement`` on ``abs_dx`` (pairs pooled at equal ``|dx|``).

    Uses :func:`scipy.optimize.isotonic_regression` (pool-adjacent-violators) with the
    number of pairs at each distinct ``|dx|`` as weights, so the fit is a function of
    ``|dx|`` whatever the order of tied pairs.
    """
    adx = np.asarray(abs_dx, dtype=np.float64).ravel()
    agr = np.asarray(agreement, dtype=np.float64).ravel()
    if adx.size == 0:
        empty = np.empty(0)
        return AgreementCurve(empty, empty, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    knots, inverse, weight = np.unique(adx, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=agr, minlength=knots.size) / weight
    result = isotonic_regression(means, weights=weight.astype(np.float64), increasing=True)
    block = np.repeat(np.arange(result.blocks.size - 1), np.diff(result.blocks))
    return AgreementCurve(knots, np.clip(result.x, 0.0, 1.0), weight.astype(np.int64), block)


@dataclass(frozen=True)
class ImprovementResult:
    """How likely humans agree with a metric improvement of ``delta``.

    Attributes
    ----------
    probability : float
        The fitted agreement curve at ``|delta|`` (NaN if no usable pair).
    low, high : float
        Percentile bootstrap band of the curve at ``|delta|`` over the ``n_defined`` resamples
        whose curve was defined. A percentile band need not contain ``probability`` (it
        almost always does; the isotonic fit is slightly biased near its ends).
    n_pairs : int
        Pairs supporting the estimate: those in the isotonic block(s) whose value gives the
        curve at ``|delta|`` (:meth:`AgreementCurve.support`).
    window_pairs : int
        Pairs with ``|delta| / 2 <= |dx| <= 2 |delta|`` (a scale-free "how many comparisons
        of about this size did the data hold").
    total_pairs : int
        Usable pairs (not tied in the metric; with ``human_ties='exclude'`` not tied in the
        human either).
    extrapolated : bool
        ``|delta|`` lies outside the observed ``|dx|`` range: the curve is held constant there.
    grid, curve, curve_low, curve_high : numpy.ndarray
        The fitted curve and its pointwise band on a grid of ``|dx|`` from the smallest to the largest
        observed ``|dx|`` (for the plot).
    pair_abs_dx, pair_agreement, pair_first, pair_second : numpy.ndarray
        The usable pairs: ``|dx|``, agreement (0, 0.5 or 1) and the two systems' positions in
        ``system_names``.
    distribution : numpy.ndarray
        The curve at ``|delta|`` on every resample (NaN where undefined).
    """

    metric: str
    human: str
    delta: float
    probability: float
    low: float
    high: float
    n_pairs: int
    window_pairs: int
    total_pairs: int
    extrapolated: bool
    method: str
    pool: str
    human_ties: str
    confidence_level: float
    n_resamples: int
    n_defined: int
    grid: np.ndarray
    curve: np.ndarray
    curve_low: np.ndarray
    curve_high: np.ndarray
    pair_abs_dx: np.ndarray
    pair_agreement: np.ndarray
    pair_first: np.ndarray
    pair_second: np.ndarray
    system_names: tuple[str, ...]
    distribution: np.ndarray
    fitted: AgreementCurve

    def to_dict(self, *, curve: bool = False) -> dict:
        """A JSON-ready summary; with ``curve=True`` also the grid, band and raw pairs."""
        out = {
            "metric": self.metric, "human": self.human, "delta": self.delta,
            "probability": finite_or_none(self.probability), "low": finite_or_none(self.low),
            "high": finite_or_none(self.high), "n_pairs": self.n_pairs, "window_pairs": self.window_pairs,
            "total_pairs": self.total_pairs, "extrapolated": self.extrapolated, "method": self.method,
            "pool": self.pool, "human_ties": self.human_ties, "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples, "n_defined": self.n_defined,
        }
        if curve:
            out["curve"] = [
                {"abs_dx": float(g), "fit": finite_or_none(f), "low": finite_or_none(lo),
                 "high": finite_or_none(hi)}
                for g, f, lo, hi in zip(self.grid, self.curve, self.curve_low, self.curve_high)
            ]
            out["pairs"] = [
                {"system_a": self.system_names[a], "system_b": self.system_names[b], "abs_dx": float(d),
                 "agreement": float(g)}
                for a, b, d, g in zip(self.pair_first, self.pair_second, self.pair_abs_dx, self.pair_agreement)
            ]
        return out


def _improvement_iv(dataset, metric, human, delta, pool, systems, method, human_ties, n_resamples,
                    confidence_level, rng, batch):
    check_dataset(dataset)
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a number (a metric difference in the metric's units); got {delta!r}")
    delta = float(delta)
    if not math.isfinite(delta) or delta == 0.0:
        raise ValueError(f"delta must be a finite, non-zero metric difference; got {delta}")
    check_choice(pool, "pool", POOLS)
    check_choice(method, "method", DELTA_METHODS)
    check_choice(human_ties, "human_ties", HUMAN_TIES)
    n_resamples = check_int(n_resamples, "n_resamples")
    confidence_level = check_confidence_level(confidence_level)
    batch = check_int(batch, "batch", allow_none=True)
    rng = as_generator(rng)
    subset = dataset.select_systems(systems).rated_by(human)
    check_human(subset, human)
    x_mat, z_mat = correlation_inputs(subset, metric, human, level="system", pool=pool)
    if subset.n_systems < 2:
        raise ValueError(f"systems must leave at least 2 systems; got {subset.n_systems}")
    return subset, x_mat, z_mat, delta, n_resamples, confidence_level, batch, rng


def _curve_values(x: np.ndarray, z: np.ndarray, points: np.ndarray, human_ties: str) -> np.ndarray:
    """Fitted curve at ``points`` for each row of system means ``x``, ``z`` (b, N) -> (b, len(points))."""
    first, second = np.triu_indices(x.shape[-1], 1)
    adx, agr, usable = pair_agreement(x[:, first] - x[:, second], z[:, first] - z[:, second], human_ties=human_ties)
    out = np.full((x.shape[0], points.size), np.nan)
    for s in range(x.shape[0]):
        keep = usable[s]
        if keep.any():
            out[s] = fit_agreement_curve(adx[s, keep], agr[s, keep])(points)
    return out


def improvement_probability(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    delta: float,
    pool: Pool = "judged",
    systems: str | None = None,
    method: DeltaMethod = "boot-both",
    human_ties: HumanTies = "half",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> ImprovementResult:
    """The probability that humans agree with a metric improvement of size ``delta``.

    From the dataset's system means ``x_i`` (metric) and ``z_i`` (human), every pair
    ``i < i'`` gives ``|dx| = |x_i - x_i'|`` and an agreement: 1 when the humans order the
    pair as the metric does, 0 when they order it the other way, 0.5 when the human means
    are tied (``human_ties='half'``; ``'exclude'`` drops those pairs). Pairs tied in the
    metric carry no direction and are dropped. A non-decreasing curve of agreement against
    ``|dx|`` is fitted by isotonic regression (larger metric gaps are assumed never to be
    *less* reliable) and read at ``|delta|`` by linear interpolation between the distinct
    ``|dx|``; beyond the observed range it is held constant (``extrapolated``). The curve is
    not clipped at 0.5: a value below 0.5 means the metric orders such pairs worse than a
    coin flip, which the user should see.

    The band: each bootstrap resample recomputes the system means, the pairs and the fit,
    and the band is the percentile interval of the curve at ``|delta|`` (and pointwise on
    the plotting grid).

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
        Measure ids; ``human`` must be a human measure.
    delta : float
        The metric difference to judge, in the metric's own units (say 0.5 ROUGE-1 points);
        its sign is ignored, it must be non-zero.
    pool : {'judged', 'all'}, default 'judged'
        The metric's input pool (docs/methods.md sec. 0); the human always uses the judged inputs.
    systems : str, optional
        A system subset such as ``"type=abs"``.
    method : {'boot-both', 'boot-inputs', 'boot-systems'}, default 'boot-both'
        What the band resamples (TACL 2021 sec. 3); indices are drawn up front as in
        :func:`metaeval_core.stats.pairs.draw_delta_resamples` (inputs separately for metric and
        human with pool ``all``). A system drawn twice forms a pair with its copy, tied in
        the metric, hence unused.
    human_ties : {'half', 'exclude'}, default 'half'
        Agreement credited to pairs whose human means are tied. Deutsch et al. (2023)'s
        pairwise accuracy counts such a pair as a miss; here the question is whether humans
        would *prefer* the metric's winner, and a human tie prefers neither, so it is worth
        a coin flip.
    n_resamples : int, default 1000
    confidence_level : float, default 0.95
    rng : numpy.random.Generator, int or None
    batch : int, optional
        Resamples whose means are computed at once (memory only; the result does not depend on it).

    Returns
    -------
    ImprovementResult

    References
    ----------
    docs/methods.md sec. 10 and 4; Deutsch, Dror & Roth (NAACL 2022) sec. 4; Deutsch, Foster &
    Freitag (2023) "Ties matter"; Kocmi et al. (2024) "Navigating the metrics maze"
    (delta-accuracy); Barlow et al. (1972) for isotonic regression.
    """
    subset, x_mat, z_mat, delta, n_resamples, confidence_level, batch, rng = _improvement_iv(
        dataset, metric, human, delta, pool, systems, method, human_ties, n_resamples, confidence_level, rng, batch)
    target = abs(delta)
    # A metric on an integer grid comes as L * scores (docs/methods.md sec. 15): its means, full and resampled, in
    # its units (delta is), with exact ties.
    x_denominator = grid_scale(subset, metric)
    x = units_means(x_mat, x_denominator)
    z = nanmean_last(z_mat)
    first, second = np.triu_indices(x.size, 1)
    adx, agr, usable = pair_agreement(x[first] - x[second], z[first] - z[second], human_ties=human_ties)
    curve = fit_agreement_curve(adx[usable], agr[usable])
    top = float(curve.knots[-1]) if curve.knots.size else 0.0
    # The grid spans the observed gaps only: below the smallest one the curve would be held constant down to d = 0,
    # drawing a (misleading) P at d = 0, where a metric tie says nothing and the honest value is a coin flip.
    grid = np.linspace(float(curve.knots[0]) if curve.knots.size else 0.0, top, _GRID_POINTS)
    points = np.concatenate([[target], grid])

    draws = draw_delta_resamples(
        rng, method=method, n_systems=x.size, n_metric_inputs=x_mat.shape[1], n_human_inputs=z_mat.shape[1],
        paired_inputs=(pool == "judged"), n_resamples=n_resamples,
    )
    if batch is None:
        batch = max(1, _GATHER_BUDGET // max(1, x.size * (x_mat.shape[1] + z_mat.shape[1])))
    values = np.empty((n_resamples, points.size))
    for start in range(0, n_resamples, batch):
        stop = min(n_resamples, start + batch)
        xb, zb = resampled_system_means(x_mat, z_mat, draws, start, stop, x, z, x_denominator=x_denominator)
        values[start:stop] = _curve_values(xb, zb, points, human_ties)
    at_delta = values[:, 0]
    defined = ~np.isnan(at_delta)
    alpha = 1.0 - confidence_level
    low, high, _ = percentile_interval(at_delta, confidence_level)
    band = values[:, 1:]
    with np.errstate(all="ignore"):
        if defined.any():
            curve_low, curve_high = np.nanquantile(band[defined], [alpha / 2, 1 - alpha / 2], axis=0)
        else:
            curve_low = curve_high = np.full(grid.size, np.nan)
    window = int(np.count_nonzero((adx[usable] >= target / 2) & (adx[usable] <= 2 * target)))
    return ImprovementResult(
        metric=metric, human=human, delta=delta, probability=float(curve(target)) if curve.knots.size else math.nan,
        low=float(low), high=float(high), n_pairs=curve.support(target), window_pairs=window,
        total_pairs=curve.n_pairs,
        extrapolated=bool(curve.knots.size == 0 or target < curve.knots[0] or target > curve.knots[-1]),
        method=method, pool=pool, human_ties=human_ties, confidence_level=confidence_level,
        n_resamples=n_resamples, n_defined=int(defined.sum()), grid=grid, curve=curve(grid),
        curve_low=np.asarray(curve_low), curve_high=np.asarray(curve_high), pair_abs_dx=adx[usable],
        pair_agreement=agr[usable], pair_first=first[usable], pair_second=second[usable],
        system_names=subset.systems, distribution=at_delta, fitted=curve,
    )
