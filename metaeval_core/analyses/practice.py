"""Beyond the papers: the questions a practitioner asks of a meta-evaluation (docs/methods.md sec. 10).

* :func:`improvement_probability` -- "is my improvement real?": the probability that humans
  order two systems the same way as a metric difference of size ``delta``, from a monotone
  (isotonic) fit of agreement against ``|dx|`` over the dataset's system pairs, with a
  bootstrap band.
* :func:`plan_judgments` -- "how many judgments do I need?": rSYS interval width and
  PERM-BOTH power against the number of judged inputs (and systems), by subsampling the
  dataset, with a recommendation for a target width or power.
* :func:`significance_clusters` -- WMT-style clusters of metrics that are not significantly
  different, from a :class:`~metaeval_core.stats.significance.PairwiseTable`.
* :func:`system_influence` -- leave-one-system-out: how much each system moves the
  metric-human correlation.

References: docs/methods.md sec. 10; Deutsch, Dror & Roth (TACL 2021, NAACL 2022);
Deutsch, Foster & Freitag (2023) on ties; Kocmi et al. (2021, 2024) on metric deltas.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np
from scipy.optimize import isotonic_regression

from metaeval_core._checks import (
    as_generator,
    check_bool,
    check_choice,
    check_confidence_level,
    check_dataset,
    check_human,
    check_int,
    check_probability,
)
from metaeval_core.stats.coefficients import Coefficient, coefficient_function, validate_coefficient
from metaeval_core.stats.correlation import Level, correlate_matrices, correlation_inputs, nanmean_last, validate_level
from metaeval_core.data.dataset import Dataset, Pool, POOLS
from metaeval_core.stats.pairs import DELTA_METHODS, DeltaMethod, draw_delta_resamples, percentile_interval, resampled_system_means
from metaeval_core.stats.resampling import BOOTSTRAP_METHODS, confidence_interval
from metaeval_core.stats.significance import PairwiseTable, compare_metrics

HumanTies = Literal["half", "exclude"]
HUMAN_TIES: tuple[str, ...] = get_args(HumanTies)
PlanMethod = Literal["boot-inputs", "boot-both"]
PLAN_METHODS: tuple[str, ...] = get_args(PlanMethod)

# Elements (resamples x systems x inputs) gathered at once when recomputing resampled means.
_GATHER_BUDGET = 4_000_000
# Points of the fitted curve returned for plotting.
_GRID_POINTS = 101


def _finite_or_none(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


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
            "probability": _finite_or_none(self.probability), "low": _finite_or_none(self.low),
            "high": _finite_or_none(self.high), "n_pairs": self.n_pairs, "window_pairs": self.window_pairs,
            "total_pairs": self.total_pairs, "extrapolated": self.extrapolated, "method": self.method,
            "pool": self.pool, "human_ties": self.human_ties, "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples, "n_defined": self.n_defined,
        }
        if curve:
            out["curve"] = [
                {"abs_dx": float(g), "fit": _finite_or_none(f), "low": _finite_or_none(lo),
                 "high": _finite_or_none(hi)}
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
    subset = dataset.select_systems(systems)
    check_human(subset, human)
    x_mat = subset.matrix(metric, pool=pool)
    z_mat = subset.matrix(human)
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
    x = nanmean_last(x_mat)
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
        xb, zb = resampled_system_means(x_mat, z_mat, draws, start, stop, x, z)
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


# ============================================================================================
# How many judgments do I need?
# ============================================================================================
@dataclass(frozen=True)
class PlanRecommendation:
    """The smallest design (fewest judged cells ``n_inputs * n_systems``) meeting every target.

    ``reached`` is False (and the sizes None) when no design in the table meets them;
    ``message`` says so in words.
    """

    reached: bool
    n_inputs: int | None
    n_systems: int | None
    message: str


@dataclass(frozen=True)
class PlanResult:
    """rSYS interval width and PERM-BOTH power by design, from subsampling a dataset.

    ``table`` holds one record per design (ascending ``n_systems``, then ``n_inputs``):
    ``n_inputs``, ``n_systems``, ``width_mean``, ``width_sd``, ``power`` (share of trials in
    which PERM-BOTH rejects H0 in favour of the metric at ``alpha``; None without a power
    analysis), ``estimate_mean`` (mean system-level correlation over trials), ``n_trials``
    and ``n_width_defined`` (trials with a defined interval).
    """

    metric: str
    human: str
    versus: str
    coefficient: str
    ci_method: str
    confidence_level: float
    alpha: float
    noise: float
    n_resamples: int
    n_trials: int
    target_width: float | None
    target_power: float | None
    table: tuple[dict, ...]
    recommendation: PlanRecommendation
    max_inputs: int
    max_systems: int

    def to_dict(self) -> dict:
        return {
            "metric": self.metric, "human": self.human, "versus": self.versus, "coefficient": self.coefficient,
            "ci_method": self.ci_method, "confidence_level": self.confidence_level, "alpha": self.alpha,
            "noise": self.noise, "n_resamples": self.n_resamples, "n_trials": self.n_trials,
            "target_width": self.target_width, "target_power": self.target_power,
            "max_inputs": self.max_inputs, "max_systems": self.max_systems,
            "table": [dict(row) for row in self.table],
            "recommendation": {
                "reached": self.recommendation.reached, "n_inputs": self.recommendation.n_inputs,
                "n_systems": self.recommendation.n_systems, "message": self.recommendation.message,
            },
        }


def _sizes(values, name: str, upper: int, lower: int) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) == 0:
        raise TypeError(f"{name} must be a non-empty sequence of integers")
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must hold integers; got {v!r}")
        if not lower <= int(v) <= upper:
            raise ValueError(f"{name} must lie between {lower} and {upper} (the dataset's size); got {v}")
        out.append(int(v))
    return tuple(sorted(set(out)))


def _plan_iv(dataset, metric, human, input_sizes, system_sizes, target_width, target_power, versus, noise,
             coefficient, ci_method, confidence_level, alpha, n_resamples, n_trials, rng, systems):
    check_dataset(dataset)
    subset = dataset.select_systems(systems)
    check_human(subset, human)
    subset.measure(metric)
    if versus is not None:
        subset.measure(versus)
        if versus == metric:
            raise ValueError("versus must name a measure other than metric")
    validate_coefficient(coefficient)
    check_choice(ci_method, "ci_method", PLAN_METHODS)
    confidence_level = check_confidence_level(confidence_level)
    alpha = check_probability(alpha, "alpha")
    if isinstance(noise, (bool, np.bool_)) or not isinstance(noise, numbers.Real) or not float(noise) > 0 \
            or not math.isfinite(float(noise)):
        raise ValueError(f"noise must be a positive finite number (offset sd in units of the sd of the metric's "
                         f"system means); got {noise!r}")
    if target_width is not None:
        if isinstance(target_width, bool) or not isinstance(target_width, numbers.Real) \
                or not 0 < float(target_width) <= 2:
            raise ValueError(f"target_width must lie in (0, 2] (a correlation interval's width); got {target_width!r}")
        target_width = float(target_width)
    if target_power is not None:
        target_power = check_probability(target_power, "target_power")
    n_resamples = check_int(n_resamples, "n_resamples")
    n_trials = check_int(n_trials, "n_trials")
    rng = as_generator(rng)
    n_judged, n_sys = subset.n_judged, subset.n_systems
    if n_sys < 3:
        raise ValueError(f"systems must leave at least 3 systems; got {n_sys}")
    inputs = _sizes(input_sizes, "input_sizes", n_judged, 2)
    sys_sizes = (n_sys,) if system_sizes is None else _sizes(system_sizes, "system_sizes", n_sys, 3)
    return (subset, inputs, sys_sizes, target_width, target_power, float(alpha), float(noise), confidence_level,
            n_resamples, n_trials, rng)


def plan_judgments(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    input_sizes: Sequence[int],
    system_sizes: Sequence[int] | None = None,
    target_width: float | None = None,
    target_power: float | None = None,
    versus: str | None = None,
    noise: float = 1.0,
    power: bool = True,
    coefficient: Coefficient = "kendall",
    ci_method: PlanMethod = "boot-both",
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    n_resamples: int = 200,
    n_trials: int = 20,
    rng: np.random.Generator | int | None = None,
    systems: str | None = None,
) -> PlanResult:
    """rSYS interval width and PERM-BOTH power against the number of judged inputs and systems.

    For every design ``(n_inputs, n_systems)`` and each of ``n_trials`` trials: draw
    ``n_systems`` systems and ``n_inputs`` judged inputs *without* replacement, then on that
    subsample (metric on the judged pool)

    * the width of the bootstrap interval (``ci_method``, ``n_resamples`` resamples) of the
      system-level ``coefficient`` between metric and human;
    * whether PERM-BOTH (``n_resamples`` permutations, one-sided, system level) rejects
      ``H0: rho(metric) <= rho(comparator)`` at ``alpha``. The comparator is ``versus`` (a
      second metric: power to tell them apart, meaningful when the metric is really better)
      or, by default, a degraded copy: the metric plus a per-system offset ``b_i`` (the same
      on every input of system ``i``), ``b_i ~ N(0, (noise * s)^2)`` with ``s`` the standard
      deviation of the metric's system means on the full dataset, drawn afresh in each
      trial. A system-level offset does not average out over inputs, so the copy is worse
      than the metric by the same expected amount whatever the number of inputs, and power
      against the number of inputs reflects sampling noise only. (Cell-level noise, the
      generic simulation of docs/methods.md sec. 9, would shrink the gap itself as inputs grow.)

    Width and power are averaged over trials. The recommendation is the design with the
    fewest judged cells (``n_inputs * n_systems``; ties: fewer systems) whose mean width is
    at most ``target_width`` and whose power is at least ``target_power`` (each when given),
    taken literally from the table, or "not reached within the dataset's size". With
    ``ci_method='boot-both'`` the width has a floor set by the number of systems, which more
    inputs cannot lower. At the full size the subsample is the dataset itself, so only the
    resampling varies between trials.

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
    input_sizes : sequence of int
        Numbers of judged inputs, each in ``[2, n_judged]``.
    system_sizes : sequence of int, optional
        Numbers of systems, each in ``[3, N]``; default all ``N`` systems only.
    target_width : float, optional
        Wanted interval width, in (0, 2].
    target_power : float, optional
        Wanted power, in (0, 1).
    versus : str, optional
        A second metric to compare against (default: a noisier copy of ``metric``).
    noise : float, default 1.0
        Per-system offset sd of the degraded copy, in units of the sd of the metric's system means.
    power : bool, default True
        Run the power analysis (False: widths only, faster).
    coefficient : {'kendall', 'pearson', 'spearman'}, default 'kendall'
    ci_method : {'boot-both', 'boot-inputs'}, default 'boot-both'
    confidence_level : float, default 0.95
    alpha : float, default 0.05
    n_resamples : int, default 200
        Bootstrap resamples and permutations per trial (modest: this is a planning tool).
    n_trials : int, default 20
        Subsamples per design.
    rng : numpy.random.Generator, int or None
        Trial ``t`` of design ``d`` (in table order) uses child ``rng.spawn(D * T)[d * T + t]``.
    systems : str, optional
        A system subset such as ``"type=abs"`` to plan from.

    Returns
    -------
    PlanResult

    References
    ----------
    docs/methods.md sec. 10, 2, 3 and 9; Deutsch, Dror & Roth (TACL 2021) sec. 3-5.
    """
    (subset, inputs, sys_sizes, target_width, target_power, alpha, noise, confidence_level, n_resamples, n_trials,
     rng) = _plan_iv(dataset, metric, human, input_sizes, system_sizes, target_width, target_power, versus, noise,
                     coefficient, ci_method, confidence_level, alpha, n_resamples, n_trials, rng, systems)
    if not isinstance(power, (bool, np.bool_)):
        raise TypeError(f"power must be True or False; got {power!r}")
    if target_power is not None and not power:
        raise ValueError("target_power needs power=True")
    x_all = subset.matrix(metric)
    z_all = subset.matrix(human)
    y_all = subset.matrix(versus) if versus is not None else None
    means = nanmean_last(x_all)
    means = means[np.isfinite(means)]
    metric_sd = float(means.std()) if means.size > 1 else 0.0
    metric_sd = metric_sd if metric_sd > 0 else 1.0
    designs = [(m, n) for n in sys_sizes for m in inputs]
    children = rng.spawn(len(designs) * n_trials)
    n_total, m_total = x_all.shape
    rows = []
    for d, (m, n) in enumerate(designs):
        widths = np.full(n_trials, np.nan)
        estimates = np.full(n_trials, np.nan)
        rejects = np.zeros(n_trials, dtype=bool)
        for t in range(n_trials):
            gen = children[d * n_trials + t]
            sys_idx = np.sort(gen.choice(n_total, size=n, replace=False))
            inp_idx = np.sort(gen.choice(m_total, size=m, replace=False))
            x = x_all[np.ix_(sys_idx, inp_idx)]
            z = z_all[np.ix_(sys_idx, inp_idx)]
            ci = confidence_interval(x, z, level="system", coefficient=coefficient, method=ci_method,
                                     confidence_level=confidence_level, n_resamples=n_resamples, rng=gen)
            widths[t] = ci.high - ci.low
            estimates[t] = ci.estimate
            if power:
                if y_all is None:
                    y = x + gen.normal(0.0, noise * metric_sd, (n, 1))
                else:
                    y = y_all[np.ix_(sys_idx, inp_idx)]
                test = compare_metrics(x, y, z, level="system", coefficient=coefficient, method="perm-both",
                                       n_resamples=n_resamples, rng=gen)
                rejects[t] = bool(np.isfinite(test.pvalue) and test.pvalue < alpha)
        defined = ~np.isnan(widths)
        rows.append({
            "n_inputs": m, "n_systems": n,
            "width_mean": float(widths[defined].mean()) if defined.any() else None,
            "width_sd": float(widths[defined].std()) if defined.any() else None,
            "power": float(rejects.mean()) if power else None,
            "estimate_mean": float(np.nanmean(estimates)) if np.isfinite(estimates).any() else None,
            "n_trials": n_trials, "n_width_defined": int(defined.sum()),
        })
    recommendation = _recommend(rows, target_width, target_power, inputs, sys_sizes)
    return PlanResult(
        metric=metric, human=human, versus=versus if versus is not None else f"{metric} + system offsets ({noise:g} sd)",
        coefficient=coefficient, ci_method=ci_method, confidence_level=confidence_level, alpha=alpha, noise=noise,
        n_resamples=n_resamples, n_trials=n_trials, target_width=target_width, target_power=target_power,
        table=tuple(rows), recommendation=recommendation, max_inputs=subset.n_judged, max_systems=subset.n_systems,
    )


def _meets(row: dict, target_width, target_power) -> bool:
    if target_width is not None and (row["width_mean"] is None or row["width_mean"] > target_width):
        return False
    if target_power is not None and (row["power"] is None or row["power"] < target_power):
        return False
    return True


def _recommend(rows, target_width, target_power, inputs, sys_sizes) -> PlanRecommendation:
    if target_width is None and target_power is None:
        return PlanRecommendation(False, None, None, "no target given (set target_width or target_power)")
    wanted = " and ".join(
        part for part in (
            None if target_width is None else f"mean width <= {target_width:g}",
            None if target_power is None else f"power >= {target_power:g}",
        ) if part
    )
    meeting = [r for r in rows if _meets(r, target_width, target_power)]
    if not meeting:
        return PlanRecommendation(
            False, None, None,
            f"not reached within the dataset's size: no design up to {max(inputs)} judged inputs x "
            f"{max(sys_sizes)} systems gives {wanted}",
        )
    best = min(meeting, key=lambda r: (r["n_inputs"] * r["n_systems"], r["n_systems"], r["n_inputs"]))
    return PlanRecommendation(
        True, best["n_inputs"], best["n_systems"],
        f"{best['n_inputs']} judged inputs x {best['n_systems']} systems is the smallest design tried giving {wanted}",
    )


# ============================================================================================
# Significance clusters
# ============================================================================================
@dataclass(frozen=True)
class SignificanceClusters:
    """Metrics grouped into ranks not significantly different (WMT-style clusters).

    ``metrics`` are sorted by ``estimates`` (descending; undefined last), ``rank[k]`` is the
    1-based cluster of ``metrics[k]`` and ``clusters`` lists each cluster's metrics.
    """

    metrics: tuple[str, ...]
    estimates: np.ndarray
    rank: np.ndarray
    clusters: tuple[tuple[str, ...], ...]
    use_corrected: bool
    alpha: float
    method: str
    correction: str

    def to_records(self) -> list[dict]:
        return [{"metric": m, "estimate": _finite_or_none(e), "rank": int(r)}
                for m, e, r in zip(self.metrics, self.estimates, self.rank)]

    def to_dict(self) -> dict:
        return {"use_corrected": self.use_corrected, "alpha": self.alpha, "method": self.method,
                "correction": self.correction, "clusters": [list(c) for c in self.clusters],
                "metrics": self.to_records()}


def _clusters_iv(table, use_corrected, estimates):
    if not isinstance(table, PairwiseTable):
        raise TypeError(f"table must be a PairwiseTable (from compare_all_pairs); got {type(table).__name__}")
    if not isinstance(use_corrected, (bool, np.bool_)):
        raise TypeError(f"use_corrected must be True or False; got {use_corrected!r}")
    k = len(table.metrics)
    values = table.estimates if estimates is None else estimates
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("estimates must be numbers, one per metric of the table") from None
    if values.shape != (k,):
        raise ValueError(f"estimates must hold one value per metric ({k}); got shape {values.shape}")
    significant = np.asarray(table.significant_corrected if use_corrected else table.significant, dtype=bool)
    if significant.shape != (k, k):
        raise ValueError(f"table's significance matrix must be {k} x {k}; got shape {significant.shape}")
    return values, significant


def significance_clusters(
    table: PairwiseTable, *, use_corrected: bool = True, estimates: Sequence[float] | None = None
) -> SignificanceClusters:
    """Group metrics into ranks not significantly different, as the WMT metrics tasks do.

    Sort the metrics by their correlation with the humans, best first (undefined estimates
    last, ties kept in table order). The best metric opens cluster 1. Walking down the list,
    a metric joins the current cluster unless some metric already in that cluster
    significantly beats it (``significant[c, m]``: row ``c`` better than column ``m``); then
    it opens the next cluster. So every cluster's first metric is significantly worse than
    some metric of the cluster above, and no metric is significantly beaten by a metric of
    its own cluster. (Metrics of different clusters need not be significantly different
    from each other; clusters are ranks, not a partition into equivalence classes.)

    Parameters
    ----------
    table : PairwiseTable
        From :func:`metaeval_core.stats.significance.compare_all_pairs`; with a two-sided test a
        significant cell means "different", and the higher estimate says which is better.
    use_corrected : bool, default True
        Use the multiple-comparison-corrected significance (``significant_corrected``);
        False uses the raw ``pvalue < alpha``.
    estimates : sequence of float, optional
        Per-metric correlations to sort by (default: ``table.estimates``).

    Returns
    -------
    SignificanceClusters

    References
    ----------
    docs/methods.md sec. 10 and 3; Freitag et al. (2022, 2023), Results of the WMT Metrics Shared
    Task (significance clusters); Deutsch, Dror & Roth (TACL 2021) sec. 6.
    """
    values, significant = _clusters_iv(table, use_corrected, estimates)
    order = sorted(range(len(values)), key=lambda i: (not np.isfinite(values[i]), -values[i] if np.isfinite(values[i])
                                                      else 0.0, i))
    rank = np.zeros(len(order), dtype=np.int64)
    clusters: list[list[int]] = []
    for pos, m in enumerate(order):
        if not clusters or any(significant[c, m] for c in clusters[-1]):
            clusters.append([m])
        else:
            clusters[-1].append(m)
        rank[pos] = len(clusters)
    names = tuple(table.metrics[i] for i in order)
    return SignificanceClusters(
        metrics=names, estimates=values[order], rank=rank,
        clusters=tuple(tuple(table.metrics[i] for i in c) for c in clusters), use_corrected=use_corrected,
        alpha=float(table.alpha), method=table.method, correction=table.correction,
    )


# ============================================================================================
# Leave-one-system-out influence
# ============================================================================================
@dataclass(frozen=True)
class InfluenceResult:
    """The metric-human correlation with each system left out.

    ``estimate`` (with ``low``/``high`` when intervals were asked for) is the correlation on
    all systems. Per system (``systems`` order): ``without`` is the correlation with that
    system removed, ``change = without - estimate``, ``low_without``/``high_without`` its
    interval (NaN without intervals), and ``flagged`` is True when ``|change| > threshold``
    or ``without`` falls outside the full interval ``[low, high]``; ``reasons`` says which.
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

    @property
    def most_influential(self) -> str | None:
        """The system whose removal moves the correlation most (None if none is defined)."""
        moved = np.abs(self.change)
        if not np.isfinite(moved).any():
            return None
        return self.systems[int(np.nanargmax(moved))]

    def to_records(self) -> list[dict]:
        return [
            {"system": s, "without": _finite_or_none(w), "change": _finite_or_none(c),
             "low_without": _finite_or_none(lo), "high_without": _finite_or_none(hi), "flagged": bool(f),
             "reason": r}
            for s, w, c, lo, hi, f, r in zip(self.systems, self.without, self.change, self.low_without,
                                             self.high_without, self.flagged, self.reasons)
        ]

    def to_dict(self) -> dict:
        return {"metric": self.metric, "human": self.human, "level": self.level, "coefficient": self.coefficient,
                "pool": self.pool, "estimate": _finite_or_none(self.estimate), "low": _finite_or_none(self.low),
                "high": _finite_or_none(self.high), "threshold": self.threshold, "ci_method": self.ci_method,
                "most_influential": self.most_influential, "systems": self.to_records()}


def _influence_iv(dataset, metric, human, level, coefficient, pool, systems, threshold, with_intervals, method,
                  confidence_level, n_resamples, rng):
    check_dataset(dataset)
    validate_level(level)
    validate_coefficient(coefficient)
    check_choice(pool, "pool", POOLS)
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, numbers.Real) \
            or not 0 <= float(threshold) or not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number >= 0 (a change in correlation); got {threshold!r}")
    check_bool(with_intervals, "with_intervals")
    check_choice(method, "method", ("fisher", *BOOTSTRAP_METHODS))
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_int(n_resamples, "n_resamples")
    rng = as_generator(rng)
    subset = dataset.select_systems(systems)
    if subset.n_systems < 3:
        raise ValueError(f"systems must leave at least 3 systems (2 after a removal); got {subset.n_systems}")
    x, z = correlation_inputs(subset, metric, human, level=level, pool=pool)
    return subset, x, z, float(threshold), confidence_level, n_resamples, rng


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
    systems (all computed at once along a batch axis). A system is flagged when its removal
    moves the correlation by more than ``threshold`` or, with ``with_intervals``, out of the
    full data's confidence interval.

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
        without = correlate_matrices(x[keep], z[keep], level=level, coefficient=coefficient).estimate
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
    moved = np.nan_to_num(np.abs(change), nan=0.0) > threshold
    outside = np.zeros(n, dtype=bool)
    if with_intervals and np.isfinite(low) and np.isfinite(high):
        outside = np.isfinite(without) & ((without < low) | (without > high))
    reasons = tuple(
        ", ".join(r for r, on in ((f"|change| > {threshold:g}", moved[i]), ("outside the full interval",
                                                                            outside[i])) if on)
        for i in range(n)
    )
    return InfluenceResult(
        metric=metric, human=human, level=level, coefficient=coefficient,
        pool=pool if level == "system" else "judged", estimate=full, low=float(low), high=float(high),
        threshold=threshold, systems=subset.systems, without=without, change=change, low_without=low_w,
        high_without=high_w, flagged=moved | outside, reasons=reasons,
        ci_method=method if with_intervals else None,
    )
