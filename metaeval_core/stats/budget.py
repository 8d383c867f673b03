"""One cost decision per analysis, made before it starts: run it, run it with a stated early-stopping rule, or
refuse it with its estimated cost and a lighter setting that fits the budget.

The pages and the CLI ask :func:`table_decision` (all-pairs significance tables) before they start; a page also
wraps its progress callback in :func:`deadline` so that it never runs past the time it promised, whatever the
estimate said. The estimates are the core's own (:func:`~metaeval_core.stats.significance.estimated_table_seconds`,
:func:`~metaeval_core.stats.spa.estimated_spa_seconds`), measured on this project's 2-core benchmark machine.

References
----------
docs/methods.md sec. 16.2 (sequential stopping) and 16.5 (the decision rule); docs/speed.md.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Literal, Mapping, Sequence, get_args

import numpy as np

from metaeval_core import wording

Action = Literal["run", "early-stop", "refuse"]
ACTIONS: tuple[str, ...] = get_args(Action)

# The expected share of the full run's time Besag-Clifford takes (sec. 16.2). It stops only the pairs that cannot be
# significant; a pair significant in either direction runs to k. On large test sets most metric pairs differ: on
# WMT22 zh-en's global level (7 metrics, 21 pairs) it took 1.23 s per pair against 1.37 s for the full run (0.90;
# 469 of 1,000 resamples per one-sided cell). Its worst case is the full run.
BESAG_CLIFFORD_SHARE = 0.9
# The rules a table can stop early with, in order of preference: Besag-Clifford keeps the full run's decisions at
# alpha, the blocks rule does not quite (docs/methods.md sec. 16.2).
STOPPING_ORDER = ("besag-clifford", "blocks")
# Lighter resample counts offered, largest first; below the last the p-values' resolution is too coarse for a
# corrected table (1 / 101 against 0.05 / 20 cells of a row).
RESAMPLE_LADDER = (5000, 2000, 1000, 500, 200, 100)


class BudgetError(ValueError):
    """An analysis refused (or stopped) for its cost; the message is the decision's sentence."""


@dataclass(frozen=True)
class Lighter:
    """One lighter setting that fits the budget: the option to change, its value, the estimated (expected) seconds
    and the stopping rule it would run with."""

    setting: Literal["n_resamples", "n_metrics", "correction", "family"]
    value: int | str
    estimated_seconds: float
    stopping: str = "none"


@dataclass(frozen=True)
class CostDecision:
    """What an analysis will do, decided before it starts (docs/methods.md sec. 16.5).

    Attributes
    ----------
    action : {'run', 'early-stop', 'refuse'}
    estimated_seconds : float
        The full run's estimate on the benchmark machine.
    budget_seconds : float
        What the surface promises (a page: the time it stops at; the CLI: ``--budget``).
    what : str
        The analysis in words, counting the systems and inputs it uses.
    stopping : {'none', 'besag-clifford', 'blocks'}
        The rule the run uses (a rule other than 'none' exactly when ``action == 'early-stop'``).
    lighter : tuple of Lighter
        Settings that fit the budget (empty when the analysis fits, or nothing simple does).
    advice : str
        Other changes that help, in words.
    where : str
        How the budget is named in the sentence ("the page stops at 60 s").
    expected : dict
        The expected seconds of each stopping rule the analysis allows (``{'besag-clifford': 357.0, 'blocks':
        159.0}``; empty when it has none).
    rules : dict
        Each stopping rule's details in words, for the sentence (the blocks rule's thresholds).
    unreachable : str
        Why no result can be significant with these settings ('' when one can): then the action is 'refuse'.
    """

    action: Action
    estimated_seconds: float
    budget_seconds: float
    what: str
    stopping: str = "none"
    lighter: tuple[Lighter, ...] = ()
    advice: str = ""
    where: str = ""
    expected: dict = field(default_factory=dict)
    rules: dict = field(default_factory=dict)
    unreachable: str = ""

    @property
    def sentence(self) -> str:
        return wording.cost_sentence(self)

    def check(self) -> "CostDecision":
        """Raise :class:`BudgetError` with :attr:`sentence` when the analysis is refused; else return self."""
        if self.action == "refuse":
            raise BudgetError(self.sentence)
        return self


def _check_decide(budget_seconds: float, n_resamples: int, n_metrics: int | None) -> None:
    if not budget_seconds > 0:
        raise ValueError(f"budget_seconds must be positive; got {budget_seconds!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 0:
        raise ValueError(f"n_resamples must be a non-negative whole number; got {n_resamples!r}")
    if n_metrics is not None and (isinstance(n_metrics, bool) or not isinstance(n_metrics, int) or n_metrics < 1):
        raise ValueError(f"n_metrics must be a positive whole number; got {n_metrics!r}")


def _cheapest_fitting(seconds: float, shares: Mapping[str, float], budget_seconds: float) -> tuple[str, float] | None:
    """``(rule, expected seconds)`` of the full run ('none') or the first rule of ``shares`` whose expected cost
    fits the budget; None when none does."""
    if seconds <= budget_seconds:
        return "none", seconds
    for rule, share in shares.items():
        if seconds * share <= budget_seconds:
            return rule, seconds * share
    return None


def decide(estimate: Callable[[int, int | None], float], *, what: str, budget_seconds: float, n_resamples: int,
           n_metrics: int | None = None, min_metrics: int = 1,
           stopping: Mapping[str, float] | Callable[[int, int | None], Mapping[str, float]] | None = None,
           min_resamples: int | Callable[[int | None], int] = 0, alternatives: Sequence[tuple] = (),
           unreachable: str = "", rules: Mapping[str, str] | None = None, advice: str = "",
           where: str = "") -> CostDecision:
    """The decision for an analysis whose full run costs ``estimate(n_resamples, n_metrics)`` seconds.

    Parameters
    ----------
    estimate : callable
        ``estimate(n_resamples, n_metrics) -> seconds``, non-decreasing in both.
    what : str
        The analysis in words (for the sentence).
    budget_seconds : float
    n_resamples : int
    n_metrics : int, optional
        The number of metrics, when fewer metrics would make the analysis lighter.
    min_metrics : int, default 1
        The fewest metrics the analysis accepts (2 for a pairwise table).
    stopping : mapping or callable, optional
        The early-stopping rules the analysis allows, in order of preference, each with its *expected* share of
        the full run's time (``{'besag-clifford': 0.9, 'blocks': 0.4}``), or ``stopping(n_resamples, n_metrics)``
        giving them for a lighter setting. None: it always runs to the end.
    min_resamples : int or callable, default 0
        The fewest resamples with which a result can be significant (``min_resamples(n_metrics)``, or a number):
        lighter resample counts below it are not offered.
    alternatives : sequence of (setting, value, estimate, stopping)
        Other settings (a lighter correction) priced like the analysis itself: offered when one fits.
    unreachable : str
        Why no result can be significant as asked (``n_resamples`` below ``min_resamples``): the analysis is then
        refused whatever its cost, naming the settings that can.
    rules : mapping, optional
        Each rule's details in words, for the sentence.
    advice : str
        Other changes that help, in words.
    where : str
        The budget in words ("the page stops at 60 s").

    Returns
    -------
    CostDecision
        'run' within the budget; else 'early-stop' with the first rule of ``stopping`` whose expected cost fits;
        else 'refuse', naming the largest resample count of :data:`RESAMPLE_LADDER` (not below ``min_resamples``),
        the most metrics and the alternatives that fit, each with the rule it would run with.

    References
    ----------
    docs/methods.md sec. 16.5.
    """
    _check_decide(budget_seconds, n_resamples, n_metrics)

    def shares(k: int, m: int | None) -> Mapping[str, float]:
        return dict((stopping(k, m) if callable(stopping) else stopping) or {})

    def floor(m: int | None) -> int:
        return int(min_resamples(m) if callable(min_resamples) else min_resamples)

    seconds = float(estimate(n_resamples, n_metrics))
    own = shares(n_resamples, n_metrics)
    expected = {rule: seconds * share for rule, share in own.items()}
    common = dict(estimated_seconds=seconds, budget_seconds=float(budget_seconds), what=what, advice=advice,
                  where=where, expected=expected, rules=dict(rules or {}))
    if not unreachable:
        chosen = _cheapest_fitting(seconds, own, budget_seconds)
        if chosen is not None and chosen[0] == "none":
            return CostDecision("run", **common)
        if chosen is not None:
            return CostDecision("early-stop", stopping=chosen[0], **common)
    lighter = []
    if unreachable and floor(n_metrics) > n_resamples:
        k = floor(n_metrics)
        full = float(estimate(k, n_metrics))
        rule, cost = _cheapest_fitting(full, shares(k, n_metrics), budget_seconds) or ("none", full)
        lighter.append(Lighter("n_resamples", k, cost, rule))
    else:
        for k in RESAMPLE_LADDER:
            if floor(n_metrics) <= k < n_resamples:
                fit = _cheapest_fitting(float(estimate(k, n_metrics)), shares(k, n_metrics), budget_seconds)
                if fit is not None:
                    lighter.append(Lighter("n_resamples", k, fit[1], fit[0]))
                    break
        if n_metrics is not None:
            for m in range(n_metrics - 1, min_metrics - 1, -1):
                fit = _cheapest_fitting(float(estimate(n_resamples, m)), shares(n_resamples, m), budget_seconds)
                if fit is not None and floor(m) <= n_resamples:
                    lighter.append(Lighter("n_metrics", m, fit[1], fit[0]))
                    break
    for setting, value, alt_estimate, alt_shares in alternatives:
        fit = _cheapest_fitting(float(alt_estimate), dict(alt_shares or {}), budget_seconds)
        if fit is not None:
            lighter.append(Lighter(setting, value, fit[1], fit[0]))
    return CostDecision("refuse", lighter=tuple(lighter), unreachable=unreachable, **common)


def fewest_resamples(alpha: float, correction: str, family: str, n_metrics: int) -> int:
    """The fewest resamples ``k`` with which a table's corrected p-value can fall below ``alpha``: a resampled
    p-value is at least ``1 / (k + 1)``, and Bonferroni and Holm multiply the smallest of a family of ``m`` tests
    by ``m``, so ``1 / (k + 1) < alpha / m``: ``k >= m / alpha`` (``m = 1`` without correction, and for
    Benjamini-Hochberg, whose smallest adjusted p-value can equal the smallest raw one).

    References
    ----------
    docs/methods.md sec. 16.5.
    """
    tests = _family_tests(correction, family, n_metrics) if correction in ("bonferroni", "holm") else 1
    k = max(int(math.floor(tests / alpha)) - 1, 0)
    while 1.0 / (k + 1) >= alpha / tests:  # the float bound, exactly as the tables compare it
        k += 1
    return k


def _family_tests(correction: str, family: str, n_metrics: int) -> int:
    if correction == "none" or family == "none":
        return 1
    return max(n_metrics - 1, 1) if family == "row" else max(n_metrics * (n_metrics - 1), 1)


_CORRECTION_NAMES = {"bonferroni": "Bonferroni", "holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}


def human_distinct_values(z: np.ndarray) -> int:
    """The distinct finite values of a human score matrix: the global-level pair counts recurse over them
    (:func:`~metaeval_core.stats.significance.estimated_table_seconds`' ``human_distinct``)."""
    values = np.asarray(z, dtype=np.float64)
    return int(np.unique(values[np.isfinite(values)]).size)


def table_decision(n_systems: int, n_inputs: int, n_metrics: int, *, level: str, coefficient: str, method: str,
                   n_resamples: int, budget_seconds: float, allow_early_stop: bool = True,
                   blocks: bool = False, alpha: float = 0.05, correction: str = "bonferroni", family: str = "row",
                   refuse_unreachable: bool = False, human_distinct: int | None = None,
                   where: str = "") -> CostDecision:
    """:func:`decide` for :func:`~metaeval_core.stats.significance.compare_all_pairs` on the systems and inputs
    it uses (those every compared measure scores: name those, not the selection's).

    Each stopping rule the test allows is priced at its expected cost: Besag-Clifford at
    :data:`BESAG_CLIFFORD_SHARE` of the full run (it saves only the draws of pairs that cannot be significant),
    mt-metrics-eval's blocks rule (``blocks=True``: surfaces that apply the correction the table is run with) at the
    first block that can stop a significant pair over ``n_resamples``
    (:func:`~metaeval_core.stats.significance.blocks_settled_draws`, which depends on ``alpha``, ``correction``
    and ``family``). The run uses the first that fits, preferring the full run, then Besag-Clifford.
    ``refuse_unreachable``: refuse a table whose corrected p-values cannot fall below ``alpha`` with
    ``n_resamples`` (:func:`fewest_resamples`), naming the resamples and the corrections that can; lighter resample
    counts below that bound are never offered. ``human_distinct``: the human measure's distinct values on those
    cells (:func:`human_distinct_values`), which set the global-level pair counts' cost; None prices every value
    distinct (the worst case).

    References
    ----------
    docs/methods.md sec. 16.5.
    """
    from metaeval_core.stats.significance import (
        block_early_min, blocks_settled_draws, estimated_table_seconds, method_label, sequential_stopping_applies,
    )
    from metaeval_core.stats.significance.permutation import BLOCK_EARLY_MAX, BLOCK_SIZE

    def estimate(k: int, m: int | None) -> float:
        return estimated_table_seconds(n_systems, n_inputs, n_metrics if m is None else m, level=level,
                                       coefficient=coefficient, method=method, n_resamples=k,
                                       human_distinct=human_distinct)

    sequential = allow_early_stop and sequential_stopping_applies(level, coefficient, method)

    def shares_for(corr: str, fam: str) -> Callable[[int, int | None], dict]:
        def shares(k: int, m: int | None) -> dict:
            out = {}
            if sequential:
                out["besag-clifford"] = BESAG_CLIFFORD_SHARE
            if sequential and blocks and k:
                settled = blocks_settled_draws(k, block_early_min(alpha, corr, fam, n_metrics if m is None else m))
                if settled < k:
                    out["blocks"] = settled / k
            return out
        return shares

    def floor_for(corr: str, fam: str) -> Callable[[int | None], int]:
        return lambda m: fewest_resamples(alpha, corr, fam, n_metrics if m is None else m)

    what = (f"{method_label(method)} on {wording.pairs_count(n_metrics * (n_metrics - 1) // 2)} of "
            f"{wording.count(n_systems, 'system')} x {wording.count(n_inputs, 'input')} with "
            f"{n_resamples:,} resamples")
    if coefficient == "soft-pairwise-accuracy":
        advice = "PERM-SYSTEMS or BOOT-SYSTEMS (soft pairwise accuracy's p-values are then computed once)"
    elif level == "system":
        advice = "fewer resamples or metrics"
    elif level == "input" and coefficient in ("kendall", "pairwise-accuracy"):
        advice = "the system level"
    else:
        advice = "Kendall or pairwise accuracy at the input level, or the system level"
    early_min = block_early_min(alpha, correction, family, n_metrics)
    settled = blocks_settled_draws(n_resamples, early_min) if n_resamples else 0
    rules = {"blocks": (f"a pair stops once its p-value is below {early_min:.2g} or above {BLOCK_EARLY_MAX:g}; a "
                        f"significant pair after {settled:,} draws at the earliest")}
    tests = _family_tests(correction, family, n_metrics)
    floor = fewest_resamples(alpha, correction, family, n_metrics)
    unreachable = ""
    if refuse_unreachable and n_resamples < floor:
        per = {"row": "per row", "table": "over the table"}.get(family, "")
        unreachable = (f"no pair can be significant after {_CORRECTION_NAMES.get(correction, correction)} {per} "
                       f"({wording.count(tests, 'test')}): the smallest p-value of {n_resamples:,} resamples, "
                       f"1/{n_resamples + 1:,}, is not below alpha/{tests:,} = {alpha / tests:.2g}")
    # Lighter corrections: a table-wide family's row, Benjamini-Hochberg (when the resamples cannot reach
    # Bonferroni's bound), none (the blocks rule's lower threshold is then mt-metrics-eval's 0.02).
    candidates = []
    if family == "table" and correction != "none":
        candidates.append(("family", "row", correction, "row"))
    if unreachable and correction in ("bonferroni", "holm"):
        candidates.append(("correction", "bh", "bh", family))
    if correction != "none" and family != "none":
        candidates.append(("correction", "none", "none", "none"))
    alternatives = []
    for setting, value, corr, fam in candidates:
        if fewest_resamples(alpha, corr, fam, n_metrics) <= n_resamples:
            shares = shares_for(corr, fam)(n_resamples, n_metrics)
            if unreachable or shares != shares_for(correction, family)(n_resamples, n_metrics):
                alternatives.append((setting, value, estimate(n_resamples, None), shares))
    return decide(estimate, what=what, budget_seconds=budget_seconds, n_resamples=n_resamples, n_metrics=n_metrics,
                  min_metrics=2, stopping=shares_for(correction, family), min_resamples=floor_for(correction, family),
                  alternatives=alternatives, unreachable=unreachable, rules=rules, advice=advice, where=where)


def unpriced(what: str, *, budget_seconds: float, advice: str = "", where: str = "") -> CostDecision:
    """The decision for an analysis the core has no estimate for: it runs, under a :func:`deadline` (its
    ``estimated_seconds`` is NaN, and a stop names ``advice`` as what to change).

    References
    ----------
    docs/methods.md sec. 16.5.
    """
    _check_decide(budget_seconds, 0, None)
    return CostDecision("run", math.nan, float(budget_seconds), what, advice=advice, where=where)


def deadline(decision: CostDecision, progress: Callable[[float], None] | None = None, *,
             started: float | None = None,
             clock: Callable[[], float] = time.perf_counter) -> Callable[[float], None]:
    """A ``progress(fraction)`` callback that forwards to ``progress`` and raises :class:`BudgetError` once the
    run has taken longer than ``decision.budget_seconds``: a surface never runs past the time it promised, even
    where the estimate was wrong (the run stops at its next progress report). ``started``: the ``clock()`` time the
    surface's work began, when this run is one part of it (default: now).

    References
    ----------
    docs/methods.md sec. 16.5.
    """
    start = clock() if started is None else started

    def report(fraction: float) -> None:
        elapsed = clock() - start
        if elapsed > decision.budget_seconds and fraction < 1.0:
            raise BudgetError(wording.stopped_sentence(decision, elapsed=elapsed, fraction=fraction))
        if progress is not None:
            progress(fraction)

    return report


# The resamples a pilot runs: enough that one call's fixed overhead is not the whole of its time, few enough that
# the pilot costs a small share of any run worth deciding about.
PILOT_RESAMPLES = 8


def pilot_decision(run_one: Callable[[int], object], *, what: str, n_resamples: int, n_metrics: int,
                   budget_seconds: float, pilot_resamples: int = PILOT_RESAMPLES, advice: str = "",
                   where: str = "", pilot_on: Literal["one metric", "all metrics", "the whole analysis"] = "one metric",
                   clock: Callable[[], float] | None = None) -> CostDecision:
    """:func:`decide` for a resampling analysis of ``n_metrics`` metrics priced by pilots of the real kernel.

    ``run_one(k)`` runs the analysis with ``k`` resamples (same data, same level) on one metric, or on all of
    them when ``pilot_on="all metrics"`` (analyses whose metrics share the work of a resample, as the global
    level's chance baselines do), or ``"the whole analysis"`` (a command priced as a whole, as a judges view).
    Two pilots, of ``pilot_resamples`` and twice that, give a fixed cost and a cost
    per resample, extrapolated linearly in resamples (and in metrics for a one-metric pilot, the fixed cost
    counted once per metric: the estimate errs high). The pilots' draws are discarded (the real run uses its own
    generator, so its results are unchanged). No constant goes stale when a kernel gets faster. ``clock``: the
    timer (default :func:`time.perf_counter`).

    References
    ----------
    docs/methods.md sec. 16.5.
    """
    _check_decide(budget_seconds, n_resamples, n_metrics)
    if isinstance(pilot_resamples, bool) or not isinstance(pilot_resamples, int) or pilot_resamples < 1:
        raise ValueError(f"pilot_resamples must be a positive whole number; got {pilot_resamples!r}")
    if pilot_on not in ("one metric", "all metrics", "the whole analysis"):
        raise ValueError(f"pilot_on must be 'one metric', 'all metrics' or 'the whole analysis'; got {pilot_on!r}")
    k = min(pilot_resamples, max(n_resamples, 1))
    clock = clock or time.perf_counter  # looked up per call: a test swaps the module's timer
    # Two pilots, k and 2k resamples: their difference is the cost per resample, the rest the fixed cost of a run
    # (set-up, sorting), which one pilot would multiply by n_resamples / k.
    start = clock()
    run_one(k)
    first = max(clock() - start, 0.0)
    two = 2 * k <= n_resamples
    if not two:  # the run itself is about as small as the pilots: one pilot, its time per resample
        per_resample = first / k
    else:
        start = clock()
        run_one(2 * k)
        second = max(clock() - start, 0.0)
        per_resample = (second - first) / k if second > first else second / (2 * k)  # noise: one-pilot rule
    fixed = max(first - k * per_resample, 0.0)
    one = pilot_on == "one metric"

    def estimate(resamples: int, metrics: int | None) -> float:
        share = (n_metrics if metrics is None else metrics) if one else \
            (1.0 if metrics is None else metrics / max(n_metrics, 1))
        return (fixed + per_resample * max(resamples, 1)) * share

    pilots = f"pilots of {k} and {2 * k} resamples" if two else f"a {k}-resample pilot"
    return decide(estimate, what=f"{what} (estimated from {pilots} on {pilot_on})", budget_seconds=budget_seconds,
                  n_resamples=n_resamples, n_metrics=n_metrics, advice=advice, where=where)
