"""How often a 95% interval computed on half of the systems and inputs contains the correlation on the other
halves (TACL 2021 sec. 5.1, Table 1).

References: docs/methods.md sec. 9.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from metaeval_core._checks import (
    as_generator,
    check_callable,
    check_confidence_level,
    check_int,
)
from metaeval_core.stats.coefficients import Coefficient, validate_coefficient, require_point_coefficient
from metaeval_core.stats.correlation import Level, correlate_matrices, validate_level
from metaeval_core.data.dataset import Dataset
from metaeval_core.stats.resampling import CI_METHODS, CIMethod, confidence_interval
from metaeval_core.analyses.simulations._common import _Trials, _binomial_se, _check_names, _dataset_matrices, _num, _root_entropy, _stream


DEFAULT_CI_METHODS: tuple[str, ...] = ("fisher", "boot-systems", "boot-inputs", "boot-both")


# ============================================================================================
# CI coverage (TACL sec. 5.1, Table 1)
# ============================================================================================
@dataclass(frozen=True)
class CoverageSplits:
    """The random halves of every trial, drawn up front (shared by the fast code and the oracles).

    ``systems_a[t]``/``systems_b[t]`` and ``inputs_a[t]``/``inputs_b[t]`` are sorted
    indices of disjoint halves of equal size ``floor(N / 2)`` and ``floor(M / 2)`` (with
    an odd count, one system or input sits out of the trial). ``entropy`` seeds the
    bootstrap streams: :meth:`rng` for trial ``t`` and method ``m``.
    """

    systems_a: np.ndarray
    systems_b: np.ndarray
    inputs_a: np.ndarray
    inputs_b: np.ndarray
    entropy: tuple[int, ...]

    @property
    def n_trials(self) -> int:
        return int(self.systems_a.shape[0])

    def rng(self, trial: int, method: str) -> np.random.Generator:
        """The bootstrap stream of ``method`` in ``trial`` (independent of the other methods)."""
        return _stream(self.entropy, trial, CI_METHODS.index(method))


def draw_coverage_splits(rng: np.random.Generator | int | None, n_trials: int, n_systems: int,
                         n_inputs: int) -> CoverageSplits:
    """Draw the halves of ``n_trials`` coverage trials: system permutations, input permutations, entropy.

    References
    ----------
    docs/methods.md sec. 9; TACL 2021 sec. 5.1.
    """
    generator = as_generator(rng)
    n_trials = check_int(n_trials, "n_trials")
    n_systems = check_int(n_systems, "n_systems")
    n_inputs = check_int(n_inputs, "n_inputs")
    systems = generator.permuted(np.tile(np.arange(n_systems), (n_trials, 1)), axis=1)
    inputs = generator.permuted(np.tile(np.arange(n_inputs), (n_trials, 1)), axis=1)
    hs, hi = n_systems // 2, n_inputs // 2
    return CoverageSplits(
        systems_a=np.sort(systems[:, :hs], axis=1), systems_b=np.sort(systems[:, hs:2 * hs], axis=1),
        inputs_a=np.sort(inputs[:, :hi], axis=1), inputs_b=np.sort(inputs[:, hi:2 * hi], axis=1),
        entropy=_root_entropy(generator),
    )


@dataclass(frozen=True)
class CoverageRow:
    """Coverage of one interval method.

    Attributes
    ----------
    method : str
    coverage : float
        Share of the valid trials whose interval on the A halves contains the
        correlation on the B halves (bounds inclusive); NaN with no valid trial.
    se : float
        Binomial standard error ``sqrt(c (1 - c) / n_valid)``.
    n_covered, n_valid : int
    n_undefined : int
        Trials left out because the interval or the held-out correlation was undefined.
    mean_width : float
        Mean ``high - low`` over the trials whose interval was defined.
    mean_low, mean_high : float
        Mean bounds over the same trials.
    """

    method: str
    coverage: float
    se: float
    n_covered: int
    n_valid: int
    n_undefined: int
    mean_width: float
    mean_low: float
    mean_high: float

    def to_dict(self) -> dict:
        return {"method": self.method, "coverage": _num(self.coverage), "se": _num(self.se),
                "n_covered": self.n_covered, "n_valid": self.n_valid, "n_undefined": self.n_undefined,
                "mean_width": _num(self.mean_width), "mean_low": _num(self.mean_low),
                "mean_high": _num(self.mean_high)}


@dataclass(frozen=True)
class CoverageResult:
    """The outcome of :func:`ci_coverage`.

    Attributes
    ----------
    rows : tuple of CoverageRow
        One per method, in the order asked.
    metric, human, level, coefficient : str
    confidence_level : float
    n_resamples : int
    n_trials : int
        Trials asked for.
    n_completed : int
        Trials run (fewer than ``n_trials`` when stopped).
    stopped : bool
        True when ``should_stop`` ended the run early: the rows summarise the first
        ``n_completed`` trials, exactly those of the full run.
    half_systems, half_inputs : int
        Systems and inputs in each half.
    methods : tuple of str
    low, high : numpy.ndarray, shape (n_completed, n_methods)
        Every trial's interval (NaN where undefined).
    estimate_a, target : numpy.ndarray, shape (n_completed,)
        The correlation on the A halves and on the B halves (the target).
    """

    rows: tuple[CoverageRow, ...]
    metric: str
    human: str
    level: str
    coefficient: str
    confidence_level: float
    n_resamples: int
    n_trials: int
    n_completed: int
    stopped: bool
    half_systems: int
    half_inputs: int
    methods: tuple[str, ...]
    low: np.ndarray
    high: np.ndarray
    estimate_a: np.ndarray
    target: np.ndarray

    def row(self, method: str) -> CoverageRow:
        for r in self.rows:
            if r.method == method:
                return r
        raise KeyError(method)

    def to_records(self) -> list[dict]:
        """One dict per method: the row plus what was simulated."""
        context = {"metric": self.metric, "human": self.human, "level": self.level,
                   "coefficient": self.coefficient, "confidence_level": self.confidence_level,
                   "n_resamples": self.n_resamples, "n_trials": self.n_trials, "n_completed": self.n_completed,
                   "stopped": self.stopped, "half_systems": self.half_systems, "half_inputs": self.half_inputs}
        return [{**r.to_dict(), **context} for r in self.rows]


def _summarise_coverage(methods, low, high, target) -> tuple[CoverageRow, ...]:
    rows = []
    for m, method in enumerate(methods):
        lo, hi = low[:, m], high[:, m]
        defined = np.isfinite(lo) & np.isfinite(hi)
        valid = defined & np.isfinite(target)
        covered = valid & (lo <= target) & (target <= hi)
        n_valid, n_covered = int(valid.sum()), int(covered.sum())
        share = n_covered / n_valid if n_valid else math.nan
        rows.append(CoverageRow(
            method=method, coverage=share, se=_binomial_se(share, n_valid), n_covered=n_covered, n_valid=n_valid,
            n_undefined=int(len(target) - n_valid),
            mean_width=float(np.mean(hi[defined] - lo[defined])) if defined.any() else math.nan,
            mean_low=float(np.mean(lo[defined])) if defined.any() else math.nan,
            mean_high=float(np.mean(hi[defined])) if defined.any() else math.nan,
        ))
    return tuple(rows)


def _ci_coverage_iv(dataset, metric, human, level, coefficient, methods, n_trials, n_resamples, confidence_level,
                    rng, batch, systems, progress, should_stop):
    validate_level(level)
    validate_coefficient(coefficient)
    require_point_coefficient(coefficient, "the coverage simulation")
    methods = _check_names(methods, "methods", CI_METHODS)
    n_trials = check_int(n_trials, "n_trials")
    n_resamples = check_int(n_resamples, "n_resamples")
    confidence_level = check_confidence_level(confidence_level)
    batch = check_int(batch, "batch", allow_none=True)
    generator = as_generator(rng)
    check_callable(progress, "progress", "taking a fraction in [0, 1]")
    check_callable(should_stop, "should_stop", "returning True to stop")
    subset, x, z = _dataset_matrices(dataset, metric, human, level, systems)
    n, m = z.shape
    if n < 4 or m < 2:
        raise ValueError(
            f"dataset must have at least 4 systems and 2 judged inputs to split into halves; got {n} and {m}"
        )
    return x, z, methods, n_trials, n_resamples, confidence_level, generator, batch


def ci_coverage(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    level: Level,
    coefficient: Coefficient,
    methods: Sequence[CIMethod] = DEFAULT_CI_METHODS,
    n_trials: int = 1000,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    systems: str | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> CoverageResult:
    """Coverage of confidence-interval methods on held-out systems and inputs.

    Each trial splits the systems and the judged inputs at random into halves A
    and B, computes each method's interval for ``r(metric, human)`` on (A systems,
    A inputs) and records whether the correlation on (B systems, B inputs) lies
    inside it. A method that generalises to new systems *and* new inputs covers
    the held-out value about ``confidence_level`` of the time.

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
        Measure names (the metric's judged pool).
    level : {'system', 'input', 'global'}
    coefficient : {'pearson', 'spearman', 'kendall'}
        TACL Table 1 uses Pearson.
    methods : sequence of {'fisher', 'boot-systems', 'boot-inputs', 'boot-both'}
        Interval methods, as in :func:`~metaeval_core.stats.resampling.confidence_interval`.
    n_trials : int, default 1000
        Random splits (TACL: 1000).
    n_resamples : int, default 1000
        Bootstrap resamples per interval.
    confidence_level : float, default 0.95
    rng : numpy.random.Generator, int or None
        The splits are drawn up front from it, then the root of the bootstrap streams
        (see the module notes); an int seeds ``numpy.random.default_rng``.
    batch : int, optional
        Passed to the bootstrap (speed/memory only: results do not depend on it).
    systems : str, optional
        A system subset such as ``"type=abs"`` before splitting.
    progress : callable, optional
        Called with the fraction of trials done (0 to 1).
    should_stop : callable, optional
        Polled before every trial; when it returns True the run stops and the result,
        flagged ``stopped``, summarises the trials completed.

    Returns
    -------
    CoverageResult

    Notes
    -----
    Halves have ``floor(N / 2)`` systems and ``floor(M / 2)`` inputs, so A and B are
    equally sized (TACL: "two equally sized disjoint sets"); with an odd count one
    system or input sits out of that trial. A trial counts as covered when
    ``low <= r_B <= high``. Trials whose interval is undefined (e.g. Fisher with
    ``n <= b``, or no defined resample) or whose held-out correlation is undefined are
    left out of that method's coverage and counted in ``n_undefined``. ``se`` is the
    binomial standard error of the coverage. Following TACL (footnote 8), Fisher at the
    input level is applied to the averaged input-level correlation, with docs/methods.md sec. 2's
    ``n`` (the largest number of valid systems in any input).

    References
    ----------
    docs/methods.md sec. 2 and 9; Deutsch, Dror & Roth (TACL 2021) sec. 5.1 and Table 1.
    """
    x, z, methods, n_trials, n_resamples, confidence_level, generator, batch = _ci_coverage_iv(
        dataset, metric, human, level, coefficient, methods, n_trials, n_resamples, confidence_level, rng, batch,
        systems, progress, should_stop,
    )
    splits = draw_coverage_splits(generator, n_trials, z.shape[0], z.shape[1])
    low = np.full((n_trials, len(methods)), np.nan)
    high = np.full((n_trials, len(methods)), np.nan)
    estimate_a = np.full(n_trials, np.nan)
    target = np.full(n_trials, np.nan)
    trials = _Trials(n_trials, progress, should_stop)
    for t in trials:
        a = np.ix_(splits.systems_a[t], splits.inputs_a[t])
        b = np.ix_(splits.systems_b[t], splits.inputs_b[t])
        xa, za = x[a], z[a]
        target[t] = float(correlate_matrices(x[b], z[b], level=level, coefficient=coefficient).estimate)
        for k, method in enumerate(methods):
            ci = confidence_interval(xa, za, level=level, coefficient=coefficient, method=method,
                                     confidence_level=confidence_level, n_resamples=n_resamples,
                                     rng=splits.rng(t, method), batch=batch)
            low[t, k], high[t, k] = ci.low, ci.high
            estimate_a[t] = ci.estimate
    done, stopped = trials.done, trials.stopped
    low, high, estimate_a, target = low[:done], high[:done], estimate_a[:done], target[:done]
    return CoverageResult(
        rows=_summarise_coverage(methods, low, high, target), metric=metric, human=human, level=level,
        coefficient=coefficient, confidence_level=confidence_level, n_resamples=n_resamples, n_trials=n_trials,
        n_completed=done, stopped=stopped, half_systems=int(splits.systems_a.shape[1]),
        half_inputs=int(splits.inputs_a.shape[1]), methods=methods, low=low, high=high, estimate_a=estimate_a,
        target=target,
    )
