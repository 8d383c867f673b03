"""How often a test detects that a metric X is better than a degraded copy Y_k of it (TACL 2021 sec. 5.2,
Fig. 3): ROUGE-1 on k% of the tokens with texts, X plus Gaussian noise without.

References: docs/methods.md sec. 9.2.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Callable, Literal, Sequence, get_args

import numpy as np

from metaeval_core._checks import (
    as_generator,
    check_callable,
    check_choice,
    check_int,
    check_probability,
)
from metaeval_core.stats.coefficients import Coefficient, validate_coefficient, require_point_coefficient
from metaeval_core.stats.correlation import Level, correlate_matrices, validate_level
from metaeval_core.data.dataset import Dataset
from metaeval_core.stats.significance import TEST_METHODS, TestMethod, compare_metrics, method_problem
from metaeval_core.data.texts import SummaryTexts
from metaeval_core.analyses.simulations._common import _Trials, _binomial_se, _check_names, _dataset_matrices, _num, _root_entropy, _stream
from metaeval_core.analyses.simulations.rouge import Rouge1Counts, rouge1_variant


Degrade = Literal["tokens", "noise"]
DEGRADES: tuple[str, ...] = get_args(Degrade)

DEFAULT_TESTS: tuple[str, ...] = ("perm-both", "boot-both", "williams")
# TACL Fig. 3 varies k over 10%..90% of the tokens; k = 100 would be X itself.
DEFAULT_TOKEN_KS: tuple[float, ...] = (10, 20, 30, 40, 50, 60, 70, 80, 90)
# Noise sd as multiples of the sd of X's cells: from barely visible to swamping X.
DEFAULT_NOISE_KS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)


# ============================================================================================
# Power (TACL sec. 5.2, Fig. 3)
# ============================================================================================
class _TokenDegrader:
    """Y_k = ROUGE-1 on a random k% of each summary's tokens; X = the same on all tokens."""

    def __init__(self, counts: Rouge1Counts, variant: str):
        self.counts, self.variant = counts, variant
        self.x = counts.scores(variant)

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        return self.counts.draw_ranks(rng)

    def degrade(self, draw: np.ndarray, k: float) -> np.ndarray:
        return self.counts.scores(self.variant, k, draw)


class _NoiseDegrader:
    """Y_k = X + k * sd(X) * eps, eps standard normal per cell (one draw per trial, scaled by k)."""

    def __init__(self, x: np.ndarray):
        self.x = x
        values = x[~np.isnan(x)]
        self.sd = float(values.std()) if values.size else 0.0

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal(self.x.shape)

    def degrade(self, draw: np.ndarray, k: float) -> np.ndarray:
        return self.x + (float(k) * self.sd) * draw


@dataclass(frozen=True)
class PowerRow:
    """Power of one test at one degradation level ``k``.

    Attributes
    ----------
    test : str
    k : float
        Percent of tokens kept (``degrade='tokens'``) or noise sd in units of X's sd
        (``degrade='noise'``).
    power : float
        Share of the valid trials with ``p < alpha`` (H0 rejected in favour of X).
    se : float
        Binomial standard error.
    n_rejected, n_valid : int
    n_undefined : int
        Trials whose p-value was undefined (left out).
    mean_pvalue : float
    mean_delta : float
        Mean ``r(X, Z) - r(Y_k, Z)`` over the trials.
    mean_estimate_y : float
        Mean ``r(Y_k, Z)``.
    """

    test: str
    k: float
    power: float
    se: float
    n_rejected: int
    n_valid: int
    n_undefined: int
    mean_pvalue: float
    mean_delta: float
    mean_estimate_y: float

    def to_dict(self) -> dict:
        return {"test": self.test, "k": self.k, "power": _num(self.power), "se": _num(self.se),
                "n_rejected": self.n_rejected, "n_valid": self.n_valid, "n_undefined": self.n_undefined,
                "mean_pvalue": _num(self.mean_pvalue), "mean_delta": _num(self.mean_delta),
                "mean_estimate_y": _num(self.mean_estimate_y)}


@dataclass(frozen=True)
class PowerResult:
    """The outcome of :func:`power_curve`.

    Attributes
    ----------
    rows : tuple of PowerRow
        Test-major, then ``k`` in the order asked.
    metric, human, level, coefficient, degrade : str
    variant : str
        The ROUGE-1 variant (``degrade='tokens'``), else ``''``.
    estimate_x : float
        ``r(X, Z)`` on the full data.
    alpha : float
    n_resamples, n_trials, n_completed : int
    stopped : bool
        True when ``should_stop`` ended the run early (every ``k`` has ``n_completed`` trials,
        exactly the first trials of the full run).
    tests : tuple of str
    ks : tuple of float
    pvalues : numpy.ndarray, shape (n_completed, n_ks, n_tests)
    estimate_y : numpy.ndarray, shape (n_completed, n_ks)
    noise_sd : float
        The sd of X's cells (``degrade='noise'``; NaN otherwise).
    """

    rows: tuple[PowerRow, ...]
    metric: str
    human: str
    level: str
    coefficient: str
    degrade: str
    variant: str
    estimate_x: float
    alpha: float
    n_resamples: int
    n_trials: int
    n_completed: int
    stopped: bool
    tests: tuple[str, ...]
    ks: tuple[float, ...]
    pvalues: np.ndarray
    estimate_y: np.ndarray
    noise_sd: float = math.nan

    def power(self, test: str, k: float) -> float:
        for r in self.rows:
            if r.test == test and r.k == k:
                return r.power
        raise KeyError((test, k))

    def to_records(self) -> list[dict]:
        """One dict per (test, k): the row plus what was simulated."""
        context = {"metric": self.metric, "human": self.human, "level": self.level,
                   "coefficient": self.coefficient, "degrade": self.degrade, "alpha": self.alpha,
                   "estimate_x": _num(self.estimate_x), "n_resamples": self.n_resamples,
                   "n_trials": self.n_trials, "n_completed": self.n_completed, "stopped": self.stopped}
        return [{**r.to_dict(), **context} for r in self.rows]


def _summarise_power(tests, ks, pvalues, estimate_y, estimate_x, alpha) -> tuple[PowerRow, ...]:
    rows = []
    for s, test in enumerate(tests):
        for q, k in enumerate(ks):
            p = pvalues[:, q, s]
            valid = ~np.isnan(p)
            n_valid = int(valid.sum())
            n_rejected = int((p[valid] < alpha).sum())
            share = n_rejected / n_valid if n_valid else math.nan
            ey = estimate_y[:, q]
            rows.append(PowerRow(
                test=test, k=k, power=share, se=_binomial_se(share, n_valid), n_rejected=n_rejected,
                n_valid=n_valid, n_undefined=int(p.size - n_valid),
                mean_pvalue=float(p[valid].mean()) if n_valid else math.nan,
                mean_delta=float(np.nanmean(estimate_x - ey)) if np.isfinite(ey).any() else math.nan,
                mean_estimate_y=float(np.nanmean(ey)) if np.isfinite(ey).any() else math.nan,
            ))
    return tuple(rows)


def _check_ks(ks: object, degrade: str) -> tuple[float, ...]:
    if ks is None:
        return DEFAULT_TOKEN_KS if degrade == "tokens" else DEFAULT_NOISE_KS
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence):
        raise TypeError(f"ks must be a sequence of numbers; got {ks!r}")
    values = []
    for k in ks:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real) or not math.isfinite(float(k)):
            raise TypeError(f"ks must hold finite numbers; got {k!r}")
        if degrade == "tokens" and not 0.0 < float(k) <= 100.0:
            raise ValueError(f"ks must be percentages of tokens kept, in (0, 100], with degrade='tokens'; got {k}")
        if degrade == "noise" and float(k) < 0.0:
            raise ValueError(
                f"ks must be non-negative noise levels (multiples of X's sd) with degrade='noise'; got {k}"
            )
        values.append(int(k) if float(k).is_integer() else float(k))
    if not values:
        raise ValueError("ks must hold at least one value")
    if len(set(values)) != len(values):
        raise ValueError(f"ks must not repeat a value; got {tuple(values)!r}")
    return tuple(values)


def _power_curve_iv(dataset, metric, human, level, coefficient, tests, ks, n_trials, n_resamples, alpha, degrade,
                    texts, rng, batch, systems, progress, should_stop):
    validate_level(level)
    validate_coefficient(coefficient)
    require_point_coefficient(coefficient, "the power simulation")
    check_choice(degrade, "degrade", DEGRADES)
    if tests is None:
        tests = tuple(t for t in DEFAULT_TESTS if not (t == "williams" and level == "input"))
    tests = _check_names(tests, "tests", TEST_METHODS)
    if "williams" in tests and level == "input":
        raise ValueError("tests must not include 'williams' at the input level (it is defined at the system "
                         "and global levels only, docs/methods.md sec. 3)")
    for test in tests:
        if test != "williams" and method_problem(test, level, coefficient):
            raise ValueError(f"tests: {method_problem(test, level, coefficient)}")
    ks = _check_ks(ks, degrade)
    n_trials = check_int(n_trials, "n_trials")
    n_resamples = check_int(n_resamples, "n_resamples")
    alpha = check_probability(alpha, "alpha")
    batch = check_int(batch, "batch", allow_none=True)
    generator = as_generator(rng)
    check_callable(progress, "progress", "taking a fraction in [0, 1]")
    check_callable(should_stop, "should_stop", "returning True to stop")
    variant = ""
    if degrade == "tokens":
        variant = rouge1_variant(metric) if isinstance(metric, str) else None
        if variant is None:
            raise ValueError(
                "metric must name a ROUGE-1 variant ('rouge-1.f1', 'rouge-1.recall' or 'rouge-1.precision') with "
                f"degrade='tokens' (X is ROUGE-1 recomputed from the texts); got {metric!r}"
            )
        if not isinstance(texts, SummaryTexts):
            raise TypeError(
                "texts must be SummaryTexts (see metaeval_core.data.texts.load_texts) with degrade='tokens'; "
                f"got {type(texts).__name__}"
            )
        subset, _, z = _dataset_matrices(dataset, metric, human, level, systems, metric_needed=False)
        aligned = texts.aligned(subset)
        if aligned.n_summaries == 0:
            raise ValueError(f"texts ({texts.dataset_id}) share no system and input with dataset {subset.id!r}")
        degrader = _TokenDegrader(Rouge1Counts.from_texts(aligned), variant)
    else:
        if texts is not None and not isinstance(texts, SummaryTexts):
            raise TypeError(f"texts must be SummaryTexts or None; got {type(texts).__name__}")
        _, x, z = _dataset_matrices(dataset, metric, human, level, systems)
        degrader = _NoiseDegrader(x)
    if z.shape[0] < 4:
        raise ValueError(f"dataset must have at least 4 systems to compare correlations; got {z.shape[0]}")
    return z, tests, ks, n_trials, n_resamples, float(alpha), generator, batch, degrader, variant


def power_curve(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    level: Level,
    coefficient: Coefficient,
    tests: Sequence[TestMethod] | None = None,
    ks: Sequence[float] | None = None,
    n_trials: int = 1000,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    degrade: Degrade = "tokens",
    texts: SummaryTexts | None = None,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    systems: str | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> PowerResult:
    """Power of tests that a metric ``X`` correlates better than a degraded copy ``Y_k``.

    H1 is true by construction: ``Y_k`` sees less of each summary (or more noise) than
    ``X``. Every trial draws a fresh ``Y_k`` for each ``k`` and runs each test of
    ``H0: rho(X, Z) - rho(Y_k, Z) <= 0`` (one-sided) on all systems and inputs; power is
    the share of trials with ``p < alpha``.

    Parameters
    ----------
    dataset : Dataset
    metric : str
        ``degrade='tokens'``: a ROUGE-1 variant, ``'rouge-1.f1'`` (TACL on SummEval),
        ``'rouge-1.recall'`` (TACL on TAC'08 and REALSumm) or ``'rouge-1.precision'``;
        ``X`` is that variant recomputed from ``texts`` on the full summaries, so ``X`` and
        ``Y_k`` differ only in the tokens seen. ``degrade='noise'``: any measure; it is ``X``.
    human : str
    level : {'system', 'input', 'global'}
    coefficient : {'pearson', 'spearman', 'kendall'}
        TACL Fig. 3 uses Pearson.
    tests : sequence of test names, optional
        From :data:`~metaeval_core.stats.significance.TEST_METHODS`. Default: PERM-BOTH,
        BOOT-BOTH and Williams (Williams is left out by default at the input level,
        where it is undefined; asking for it there is an error).
    ks : sequence of float, optional
        ``degrade='tokens'``: percent of each summary's tokens kept, in (0, 100]
        (default 10, 20, ..., 90); ``degrade='noise'``: noise sd as multiples of the sd of
        ``X``'s cells (default 0.25, 0.5, 1, 2, 4).
    n_trials : int, default 1000
    n_resamples : int, default 1000
        Resamples per test (ignored by Williams).
    alpha : float, default 0.05
        A trial rejects H0 when ``p < alpha`` (the heatmap convention of docs/methods.md sec. 3).
    degrade : {'tokens', 'noise'}, default 'tokens'
        ``'tokens'`` needs ``texts``; ``'noise'`` is the generic fallback for any dataset.
    texts : SummaryTexts, optional
        Summaries and references (:func:`metaeval_core.data.texts.load_texts`); aligned to the
        dataset's systems and judged inputs by name. Cells without a text are missing.
    rng : numpy.random.Generator, int or None
        Root of every stream (see the module notes).
    batch : int, optional
        Passed to the resampling tests; results do not depend on it.
    systems : str, optional
        A system subset such as ``"type=abs"``.
    progress : callable, optional
        Called with the fraction of trials done (0 to 1).
    should_stop : callable, optional
        Polled before every trial; True stops the run (the result is flagged ``stopped``).

    Returns
    -------
    PowerResult

    Notes
    -----
    ROUGE-1 on ``k``% of the tokens keeps ``floor(length * k / 100)`` tokens of each
    summary, sampled uniformly without replacement, and scores them against the
    reference with rouge-score's tokenizer and Porter stemmer: precision over the kept
    tokens, recall over the reference's tokens, clipped unigram counts (as SacreROUGE's
    simulation of TACL does with its own ROUGE). ``Y_100`` equals ``X``. The noise
    fallback adds ``N(0, (k sd)^2)`` to every cell of ``X``, ``sd`` over all of ``X``'s
    judged cells. A trial whose p-value is undefined (e.g. a constant ``Y_k``) is left
    out of that test's power and counted in ``n_undefined``.

    References
    ----------
    docs/methods.md sec. 3 and 9; Deutsch, Dror & Roth (TACL 2021) sec. 5.2 and Fig. 3.
    """
    z, tests, ks, n_trials, n_resamples, alpha, generator, batch, degrader, variant = _power_curve_iv(
        dataset, metric, human, level, coefficient, tests, ks, n_trials, n_resamples, alpha, degrade, texts, rng,
        batch, systems, progress, should_stop,
    )
    entropy = _root_entropy(generator)
    x = degrader.x
    estimate_x = float(correlate_matrices(x, z, level=level, coefficient=coefficient).estimate)
    pvalues = np.full((n_trials, len(ks), len(tests)), np.nan)
    estimate_y = np.full((n_trials, len(ks)), np.nan)
    trials = _Trials(n_trials, progress, should_stop)
    for t in trials:
        draw = degrader.draw(_stream(entropy, t, 0))
        for q, k in enumerate(ks):
            y = degrader.degrade(draw, k)
            for s, test in enumerate(tests):
                result = compare_metrics(
                    x, y, z, level=level, coefficient=coefficient, method=test, alternative="greater",
                    n_resamples=n_resamples, rng=_stream(entropy, t, 1 + TEST_METHODS.index(test)), batch=batch,
                )
                pvalues[t, q, s] = result.pvalue
                estimate_y[t, q] = result.estimate_y
    done, stopped = trials.done, trials.stopped
    pvalues, estimate_y = pvalues[:done], estimate_y[:done]
    return PowerResult(
        rows=_summarise_power(tests, ks, pvalues, estimate_y, estimate_x, alpha), metric=metric, human=human,
        level=level, coefficient=coefficient, degrade=degrade, variant=variant, estimate_x=estimate_x, alpha=alpha,
        n_resamples=n_resamples, n_trials=n_trials, n_completed=done, stopped=stopped, tests=tests, ks=ks,
        pvalues=pvalues, estimate_y=estimate_y,
        noise_sd=degrader.sd if isinstance(degrader, _NoiseDegrader) else math.nan,
    )
