"""How many judgments do I need? rSYS interval width and PERM-BOTH power against the number of judged inputs
(and systems), by subsampling the dataset, with a recommendation for a target width or power.

References: docs/methods.md sec. 10.2; Deutsch, Dror & Roth (TACL 2021).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np

from metaeval_core._checks import (
    as_generator, check_choice, check_confidence_level, check_int, check_probability,
)
from metaeval_core.data.checks import check_dataset, check_human
from metaeval_core.stats.coefficients import Coefficient, pair_kernel_fits, validate_coefficient, require_point_coefficient
from metaeval_core.stats.correlation import nanmean_last
from metaeval_core.data.dataset import Dataset
from metaeval_core.stats.resampling import confidence_interval
from metaeval_core.stats.significance import compare_metrics
from metaeval_core.stats.exact import exact_matrix



PlanMethod = Literal["boot-inputs", "boot-both"]
PLAN_METHODS: tuple[str, ...] = get_args(PlanMethod)


# ============================================================================================
# How many judgments do I need?
# ============================================================================================
@dataclass(frozen=True)
class PlanRecommendation:
    """The smallest design (fewest judged cells ``n_inputs * n_systems``) that meets every target together with
    every larger design tried (at least as many inputs and at least as many systems).

    ``reached`` is False (and the sizes None) when no design in the table does; ``message`` says so in words.
    ``isolated`` lists the designs ``(n_inputs, n_systems)`` that meet the targets on their own while a larger
    design does not (Monte-Carlo noise, never recommended). ``borderline`` is True when the recommended design or
    a larger one is within two Monte-Carlo standard errors of a target (more trials would settle it).
    """

    reached: bool
    n_inputs: int | None
    n_systems: int | None
    message: str
    isolated: tuple[tuple[int, int], ...] = ()
    borderline: bool = False


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
                "isolated": [list(d) for d in self.recommendation.isolated],
                "borderline": self.recommendation.borderline,
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
    subset = dataset.select_systems(systems).rated_by(human)
    check_human(subset, human)
    subset.measure(metric)
    if versus is not None:
        subset.measure(versus)
        if versus == metric:
            raise ValueError("versus must name a measure other than metric")
    validate_coefficient(coefficient)
    require_point_coefficient(coefficient, "judgment planning")
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

    Width and power are averaged over trials. The recommendation (:func:`recommend_design`) is the
    design with the fewest judged cells (``n_inputs * n_systems``; ties: fewer systems) whose mean
    width is at most ``target_width`` and whose power is at least ``target_power`` (each when
    given) *and* such that every larger design in the table (at least as many inputs and systems)
    meets them too: a single noisy cell meeting the target below a larger design that misses it is
    reported as noise, not recommended. Else "not reached within the dataset's size". With
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
    z_all = exact_matrix(subset, human)
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


def _near(row: dict, target_width, target_power) -> bool:
    """Within two Monte-Carlo standard errors of a target (the width's sd / sqrt(trials); sqrt(p(1-p)/trials))."""
    trials = row.get("n_trials") or 0
    if target_width is not None and row["width_mean"] is not None and row.get("width_sd") is not None:
        se = row["width_sd"] / math.sqrt(max(row.get("n_width_defined", trials), 1))
        if abs(row["width_mean"] - target_width) < 2 * se:
            return True
    if target_power is not None and row["power"] is not None:
        p = row["power"]
        se = math.sqrt(p * (1 - p) / max(trials, 1))
        if abs(p - target_power) < 2 * se:
            return True
    return False


# Rough CPU seconds on the project's 2-core machine (its wall seconds when idle; a loaded machine stretches both
# alike), fitted over 15 shapes (1 to 200 trials, 20 to 2,000 resamples, 10 to 1,875 inputs, with and without
# power: within 1.4x of each; benchmarks/bench_plan_estimate.py): per interval or test run (validation, draws,
# set-up: the term the first model lacked, 2.5x to 14x low on plans of many small trials), per resample, per
# resampled cell, and per resample whose system-level coefficient goes slice by slice to scipy (Kendall beyond 150
# systems, pairwise accuracy beyond 300: 1,000 systems x 10 inputs, 5 trials of 200 resamples with power, 5.2 s).
# Used to refuse or announce long plans, not a promise.
_PLAN_SECONDS_PER_CALL = 1.2e-3
_PLAN_SECONDS_PER_RESAMPLE = 1.1e-6
_PLAN_SECONDS_PER_CELL = 4e-9
_PLAN_SECONDS_PER_SLICE = 1.7e-3
# A plan estimated to take longer than this is refused up front, with what to change, by the dashboard and by
# `metaeval plan` alike (docs/methods.md sec. 10.2).
MAX_PLAN_SECONDS = 300.0


def estimated_plan_seconds(designs: Sequence[tuple[int, int]], *, n_trials: int, n_resamples: int,
                           coefficient: str = "kendall", power: bool = True) -> float:
    """Rough seconds :func:`plan_judgments` takes for ``designs`` ``(n_inputs, n_systems)`` on this project's machine.

    Each trial runs one bootstrap interval of ``n_resamples`` resamples of the design (and, with ``power``, one
    permutation test of as many permutations): a fixed cost per run, a cost per resample, one per resampled cell,
    and one per resample where the coefficient is computed by scipy slice by slice (Kendall beyond 150 systems:
    about 1.7 ms each).

    References: docs/methods.md sec. 10.2.
    """
    runs = 2 if power else 1
    total = 0.0
    for n_inputs, n_systems in designs:
        per_slice = ((coefficient == "kendall" and not pair_kernel_fits(n_systems))
                     or (coefficient == "pairwise-accuracy" and n_systems > 300))
        per_run = (_PLAN_SECONDS_PER_CALL + n_resamples * (_PLAN_SECONDS_PER_RESAMPLE
                                                            + n_inputs * n_systems * _PLAN_SECONDS_PER_CELL))
        total += n_trials * (runs * per_run + (3 if power else 1) * per_slice * n_resamples * _PLAN_SECONDS_PER_SLICE)
    return total


def recommend_design(table: Sequence[dict], *, target_width: float | None = None,
                     target_power: float | None = None) -> PlanRecommendation:
    """The recommendation read from a plan's ``table`` (:attr:`PlanResult.table` records).

    A design qualifies when it meets every given target (mean width at most ``target_width``, power at least
    ``target_power``) and so does every larger design of the table (at least as many inputs and as many systems):
    width and power are monotone in the design size in expectation, so a design meeting the target below a larger
    one that misses it is Monte-Carlo noise (listed in ``isolated``). Among qualifying designs, the one with the
    fewest judged cells (ties: fewer systems, then fewer inputs).

    References
    ----------
    docs/methods.md sec. 10.2.
    """
    rows = list(table)
    if target_width is None and target_power is None:
        return PlanRecommendation(False, None, None, "no target given (set target_width or target_power)")
    wanted = " and ".join(
        part for part in (
            None if target_width is None else f"mean width <= {target_width:g}",
            None if target_power is None else f"power >= {target_power:g}",
        ) if part
    )

    def larger(r: dict) -> list[dict]:
        return [o for o in rows if o["n_inputs"] >= r["n_inputs"] and o["n_systems"] >= r["n_systems"]]

    meeting = [r for r in rows if _meets(r, target_width, target_power)]
    closed = [r for r in meeting if all(_meets(o, target_width, target_power) for o in larger(r))]
    isolated = tuple((r["n_inputs"], r["n_systems"]) for r in meeting if r not in closed)
    noise = ""
    if isolated:
        shown = ", ".join(f"{m} x {n}" for m, n in isolated)
        trials = rows[0].get("n_trials")
        noise = (f"; {shown} met it alone while a larger design did not (Monte-Carlo noise"
                 + (f", {trials} trials per design" if trials else "") + "), so {'it is' if len(isolated) == 1 else 'they are'} "
                 "not recommended")
    if not closed:
        largest = max(rows, key=lambda r: (r["n_systems"], r["n_inputs"]))
        return PlanRecommendation(
            False, None, None,
            f"not reached within the dataset's size: no design up to {largest['n_inputs']} judged inputs x "
            f"{largest['n_systems']} systems gives {wanted} together with every larger design tried{noise}",
            isolated=isolated)
    best = min(closed, key=lambda r: (r["n_inputs"] * r["n_systems"], r["n_systems"], r["n_inputs"]))
    borderline = any(_near(o, target_width, target_power) for o in larger(best))
    return PlanRecommendation(
        True, best["n_inputs"], best["n_systems"],
        f"{best['n_inputs']} judged inputs x {best['n_systems']} systems is the smallest design tried giving "
        f"{wanted}, as does every larger design tried"
        + (" (borderline: within two Monte-Carlo standard errors of the target; more trials would settle it)"
           if borderline else "") + noise,
        isolated=isolated, borderline=borderline)


def _recommend(rows, target_width, target_power, inputs=None, sys_sizes=None) -> PlanRecommendation:
    """:func:`recommend_design` (``inputs`` and ``sys_sizes`` are read from the rows themselves)."""
    return recommend_design(rows, target_width=target_width, target_power=target_power)
