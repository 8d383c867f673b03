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
from dataclasses import dataclass
from typing import Callable, Literal, get_args

from metaeval_core import wording

Action = Literal["run", "early-stop", "refuse"]
ACTIONS: tuple[str, ...] = get_args(Action)

# A table whose full run is estimated within this many budgets is run with sequential stopping (sec. 16.2) where
# the test allows it: the pairs the data settle stop early, most pairs of a large table. Beyond, it is refused.
EARLY_STOP_FACTOR = 4.0
# Lighter resample counts offered, largest first; below the last the p-values' resolution is too coarse for a
# corrected table (1 / 101 against 0.05 / 20 cells of a row).
RESAMPLE_LADDER = (5000, 2000, 1000, 500, 200, 100)


class BudgetError(ValueError):
    """An analysis refused (or stopped) for its cost; the message is the decision's sentence."""


@dataclass(frozen=True)
class Lighter:
    """One lighter setting that fits the budget: the option to change, its value and the estimated seconds."""

    setting: Literal["n_resamples", "n_metrics"]
    value: int
    estimated_seconds: float


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
    """

    action: Action
    estimated_seconds: float
    budget_seconds: float
    what: str
    stopping: str = "none"
    lighter: tuple[Lighter, ...] = ()
    advice: str = ""
    where: str = ""

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


def decide(estimate: Callable[[int, int | None], float], *, what: str, budget_seconds: float, n_resamples: int,
           n_metrics: int | None = None, min_metrics: int = 1, early_stop: bool = False,
           blocks_fraction: float | None = None, advice: str = "", where: str = "") -> CostDecision:
    """The decision for an analysis whose cost is ``estimate(n_resamples, n_metrics)`` seconds.

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
    early_stop : bool, default False
        Whether the analysis can stop resampling once its decision is settled (sec. 16.2).
    blocks_fraction : float, optional
        When given (and ``early_stop``), mt-metrics-eval's blocks rule (sec. 16.2) is offered too, priced at this
        fraction of the full run: the draws after which a settled pair stops over ``n_resamples`` (the cost when
        most pairs are settled, as at WMT's global level; close pairs run longer).
    advice : str
        Other changes that help, in words.
    where : str
        The budget in words ("the page stops at 60 s").

    Returns
    -------
    CostDecision
        'run' within the budget; 'early-stop' within ``EARLY_STOP_FACTOR`` budgets when ``early_stop``
        (Besag-Clifford), or when ``blocks_fraction`` times the estimate fits (the blocks rule); else 'refuse', naming the largest resample count of :data:`RESAMPLE_LADDER` and the most metrics that fit.

    References
    ----------
    docs/methods.md sec. 16.5.
    """
    _check_decide(budget_seconds, n_resamples, n_metrics)
    seconds = float(estimate(n_resamples, n_metrics))
    common = dict(estimated_seconds=seconds, budget_seconds=float(budget_seconds), what=what, advice=advice,
                  where=where)
    if seconds <= budget_seconds:
        return CostDecision("run", **common)
    lighter = []
    for k in RESAMPLE_LADDER:
        if k < n_resamples:
            fit = float(estimate(k, n_metrics))
            if fit <= budget_seconds:
                lighter.append(Lighter("n_resamples", k, fit))
                break
    if n_metrics is not None:
        for m in range(n_metrics - 1, min_metrics - 1, -1):
            fit = float(estimate(n_resamples, m))
            if fit <= budget_seconds:
                lighter.append(Lighter("n_metrics", m, fit))
                break
    if early_stop and seconds <= EARLY_STOP_FACTOR * budget_seconds:
        return CostDecision("early-stop", stopping="besag-clifford", lighter=tuple(lighter), **common)
    if early_stop and blocks_fraction is not None and seconds * blocks_fraction <= budget_seconds:
        return CostDecision("early-stop", stopping="blocks", lighter=tuple(lighter), **common)
    return CostDecision("refuse", lighter=tuple(lighter), **common)


def table_decision(n_systems: int, n_inputs: int, n_metrics: int, *, level: str, coefficient: str, method: str,
                   n_resamples: int, budget_seconds: float, allow_early_stop: bool = True,
                   blocks: bool = False, alpha: float = 0.05, correction: str = "bonferroni", family: str = "row",
                   where: str = "") -> CostDecision:
    """:func:`decide` for :func:`~metaeval_core.stats.significance.compare_all_pairs` on the systems and inputs
    it uses (those every compared measure scores: name those, not the selection's).

    ``blocks=True`` offers mt-metrics-eval's blocks rule when Besag-Clifford does not fit; its expected cost is
    the full run's times the draws after which a settled pair stops (which depend on ``alpha``, ``correction``
    and ``family``: :func:`~metaeval_core.stats.significance.block_early_min`) over ``n_resamples``.

    References
    ----------
    docs/methods.md sec. 16.5.
    """
    from metaeval_core.stats.significance import (
        block_early_min, blocks_settled_draws, estimated_table_seconds, method_label, sequential_stopping_applies,
    )

    def estimate(k: int, m: int | None) -> float:
        return estimated_table_seconds(n_systems, n_inputs, m, level=level, coefficient=coefficient, method=method,
                                       n_resamples=k)

    what = (f"{method_label(method)} on {wording.pairs_count(n_metrics * (n_metrics - 1) // 2)} of "
            f"{wording.count(n_systems, 'system')} x {wording.count(n_inputs, 'input')} with "
            f"{n_resamples:,} resamples")
    fraction = None
    if blocks and n_resamples:
        early_min = block_early_min(alpha, correction, family, n_metrics)
        fraction = blocks_settled_draws(n_resamples, early_min) / n_resamples
    if coefficient == "soft-pairwise-accuracy":
        advice = "PERM-SYSTEMS or BOOT-SYSTEMS (soft pairwise accuracy's p-values are then computed once)"
    elif level == "system":
        advice = "fewer resamples or metrics"
    elif level == "input" and coefficient in ("kendall", "pairwise-accuracy"):
        advice = "the system level"
    else:
        advice = "Kendall or pairwise accuracy at the input level, or the system level"
    return decide(estimate, what=what, budget_seconds=budget_seconds, n_resamples=n_resamples, n_metrics=n_metrics,
                  min_metrics=2, early_stop=allow_early_stop and sequential_stopping_applies(level, coefficient, method),
                  blocks_fraction=fraction,
                  advice=advice, where=where)


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
                   where: str = "", pilot_on: Literal["one metric", "all metrics"] = "one metric",
                   clock: Callable[[], float] | None = None) -> CostDecision:
    """:func:`decide` for a resampling analysis of ``n_metrics`` metrics priced by pilots of the real kernel.

    ``run_one(k)`` runs the analysis with ``k`` resamples (same data, same level) on one metric, or on all of
    them when ``pilot_on="all metrics"`` (analyses whose metrics share the work of a resample, as the global
    level's chance baselines do). Two pilots, of ``pilot_resamples`` and twice that, give a fixed cost and a cost
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
    if pilot_on not in ("one metric", "all metrics"):
        raise ValueError(f"pilot_on must be 'one metric' or 'all metrics'; got {pilot_on!r}")
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
