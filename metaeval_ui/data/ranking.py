"""The Overview's leaderboard and its reference rows: chance baselines and the human ceiling.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from metaeval_core.analyses.ceilings import HumanCeiling
from metaeval_core.analyses.leaderboard import MetricsLeaderboard, assemble_leaderboard
from metaeval_core.stats import significance as _significance
from metaeval_core.data.dataset import Dataset
from metaeval_ui import tables
from metaeval_ui.data.datasets import DatasetKey
from metaeval_ui.data.resampled import (
    confidence_intervals, intervals_deadline, intervals_seconds, pairwise_decision, pairwise_is_cached, pairwise_key,
    pairwise_uncorrected,
)
from metaeval_ui.data.summaries import correlation_table


# The test is the dataset's default (PERM-BOTH, TACL 2021; WMT-PERM-SYS at the system level on WMT data), as on
# Significance; then one-sided, Bonferroni per row metric, alpha 0.05.
LEADERBOARD_TEST = ("greater", "bonferroni", "row", 0.05)


def metrics_board(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, level: str,
                  coefficient: str, pool: str, systems: str, n_resamples: int = 1000,
                  seed: int = 0) -> MetricsLeaderboard:
    """The Overview's leaderboard: :class:`metaeval_core.analyses.leaderboard.MetricsLeaderboard`, the object
    ``metaeval clusters --view leaderboard`` prints, assembled from this module's cached parts.

    Built from the same cached calls as the Confidence intervals and Significance pages (same keys, so opening one
    fills the others' caches): BOOT-BOTH 95% intervals, the dataset's default test (PERM-BOTH, or WMT-PERM-SYS at the
    system level on WMT data), one-sided, Bonferroni per row metric, alpha 0.05; chance baselines and the human
    ceiling with the same resamples and seed.
    """
    from metaeval_core._checks import min_resamples_for

    # One clock for the board: the intervals, then the table, stop at the page's budget (docs/methods.md sec. 16.5).
    started = time.perf_counter()
    tick = intervals_deadline(len(metrics), "boot-both", n_resamples, started=started)
    intervals = dict(zip(metrics, confidence_intervals(_dataset, key, tuple(metrics), human, level, coefficient,
                                                       "boot-both", pool, systems, 0.95, n_resamples, seed,
                                                       progress=tick)))
    alternative, correction, family, alpha = LEADERBOARD_TEST
    method = _significance.default_test(_dataset, level, coefficient)
    table = None
    if len(metrics) >= 2:
        pkey = pairwise_key(key, tuple(metrics), human, level, coefficient, method, alternative, pool, systems,
                            n_resamples, seed)
        table = pairwise_uncorrected(_dataset, pkey, started=started)
    epsilons = None
    if coefficient == "tie-calibrated-accuracy":
        # The value is only meaningful with its tie threshold (docs/methods.md sec. 11.2).
        chosen = correlation_table(_dataset, key, tuple(metrics), (human,), level, coefficient, pool, systems)
        epsilons = dict(zip(chosen["metric"], chosen["epsilon"].astype(float)))
    chance, chance_note = [], ""
    try:  # a page's k may be below what a percentile range needs (40 at 95%); the range then uses that many
        k = max(int(n_resamples), min_resamples_for(0.95))
        chance = chance_rows(_dataset, key, tuple(metrics), human, level, coefficient, pool, systems, 0.95, k, seed)
    except ValueError as error:
        chance_note = str(error).split(";")[0]
    ceiling, ceiling_note = ceiling_result(_dataset, key, human, level, coefficient, systems, n_resamples, seed)
    return assemble_leaderboard(metrics, human, level=level, coefficient=coefficient, intervals=intervals,
                                table=table, chance=chance, chance_note=chance_note, ceiling=ceiling,
                                ceiling_note=ceiling_note, epsilons=epsilons, test=method, alternative=alternative,
                                correction=correction, family=family, alpha=alpha, interval_method="boot-both",
                                confidence_level=0.95, n_resamples=n_resamples, seed=seed)


def leaderboard_decision(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, level: str,
                         coefficient: str, pool: str, systems: str, n_resamples: int = 1000, seed: int = 0):
    """The cost decision of the leaderboard's all-pairs table (:func:`pairwise_decision`, docs/methods.md sec.
    16.5), for the Overview to state a refusal with its lighter settings before it starts; None when there is no
    table (fewer than two metrics) or it is cached."""
    if len(metrics) < 2:
        return None
    alternative = LEADERBOARD_TEST[0]
    method = _significance.default_test(_dataset, level, coefficient)
    pkey = pairwise_key(key, tuple(metrics), human, level, coefficient, method, alternative, pool, systems,
                        n_resamples, seed)
    if pairwise_is_cached(pkey):
        return None
    # The intervals come first on the page's one clock (metrics_board): the table has what they leave.
    spent = intervals_seconds(_dataset, key, tuple(metrics), human, level, coefficient, "boot-both", pool, systems,
                              0.95, n_resamples, seed)
    return pairwise_decision(_dataset, pkey, spent=spent)


def leaderboard(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, level: str,
                coefficient: str, pool: str, systems: str, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """:func:`metrics_board` as the table the Overview renders (``MetricsLeaderboard.to_frame()``): cluster, metric,
    estimate, low, high, kind ('metric', then 'chance' and 'human ceiling' rows, never ranked), [epsilon], doubt;
    ``attrs['chance_note']`` says why there is no chance row ('' when there is), ``attrs['test']`` names the test
    and ``attrs['board']`` is the result object itself."""
    board = metrics_board(_dataset, key, metrics, human, level, coefficient, pool, systems, n_resamples, seed)
    frame = board.to_frame()
    frame.attrs.update(chance_note=board.chance_note, test=board.test, board=board)
    return frame


@st.cache_data(max_entries=512, show_spinner=False)
def chance_baseline(_dataset: Dataset, key: DatasetKey, metric: str, human: str, level: str, coefficient: str,
                    pool: str, systems: str, confidence_level: float = 0.95, n_resamples: int = 1000,
                    seed: int = 0) -> dict:
    """One metric's chance baseline (docs/methods.md sec. 12) as ``ChanceBaseline.to_dict()``; with one seed every
    metric sees the same permutations, so a metric's entry is the same whichever metrics are shown with it."""
    from metaeval_core.analyses.chance import chance_baseline as compute

    return compute(_dataset, metric, human, level=level, coefficient=coefficient, pool=pool,
                   systems=systems or None, confidence_level=confidence_level, n_resamples=n_resamples,
                   rng=seed).to_dict()


@st.cache_data(max_entries=128, show_spinner=False)
def chance_rows(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, level: str,
                coefficient: str, pool: str, systems: str, confidence_level: float = 0.95, n_resamples: int = 1000,
                seed: int = 0) -> list[dict]:
    """:func:`chance_baseline` of several metrics from one ``chance_baselines`` call: the same dicts (one seed,
    the same permutations for every metric), but the permutations' shared work is done once, not once per metric
    (WMT22 zh-en's 21 metrics at the global level: ~8 s instead of ~150 s)."""
    from metaeval_core.analyses.chance import chance_baselines

    found = chance_baselines(_dataset, list(metrics), human, level=level, coefficient=coefficient, pool=pool,
                             systems=systems or None, confidence_level=confidence_level, n_resamples=n_resamples,
                             rng=seed)
    return [row.to_dict() for row in found.rows]


def chance_groups(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, level: str,
                  coefficient: str, pool: str, systems: str, confidence_level: float = 0.95,
                  n_resamples: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, str]:
    """The chance baselines of ``metrics`` grouped for display (:func:`metaeval_ui.tables.chance_groups`), and a
    note saying why there are none (e.g. tie-calibrated accuracy on too many cells at the global level) or ''."""
    from metaeval_core._checks import min_resamples_for

    # A page's k may be below what a percentile range needs (40 at 95%); the range then uses that many instead.
    n_resamples = max(int(n_resamples), min_resamples_for(confidence_level))
    try:
        rows = chance_rows(_dataset, key, tuple(metrics), human, level, coefficient, pool, systems, confidence_level,
                           n_resamples, seed)
    except ValueError as error:
        return tables.chance_groups(pd.DataFrame()), str(error).split(";")[0]
    return tables.chance_groups(pd.DataFrame(rows)), ""


@st.cache_data(max_entries=32, show_spinner=False)
def ceiling_intervals(_dataset: Dataset, key: DatasetKey, human: str, level: str, coefficient: str, method: str,
                      systems: str, confidence_level: float, n_resamples: int, seed: int) -> tuple[list[dict], str]:
    """Human-ceiling rows for the forest plot (docs/methods.md sec. 14), in :func:`confidence_interval`'s format:
    each annotator of ``human`` against the mean of the others with the metrics' interval method, and why there
    are none ('' when the measure keeps fewer than two annotators' scores: nothing to say)."""
    from metaeval_core.analyses.ceilings import ceiling_measure
    from metaeval_core.analyses.ceilings import human_ceiling as compute

    source = ceiling_measure(_dataset, human)
    if source is None:
        return [], ""
    try:
        result = compute(_dataset, source, level=level, coefficient=coefficient, method=method,
                         confidence_level=confidence_level, n_resamples=n_resamples, rng=seed,
                         systems=systems or None)
    except ValueError as error:  # e.g. a coefficient or size the ceiling's resampling refuses: say why
        return [], str(error).split(";")[0]
    named = f" ({source})" if source != human else ""
    return [{"metric": f"human ceiling: {r.annotator}{named}", "human": human, "method": method, "estimate": r.estimate,
             "low": r.low, "high": r.high, "n_defined": r.n_defined,
             "n_resamples": 0 if method == "fisher" else n_resamples, "confidence_level": confidence_level,
             "kind": "human ceiling"} for r in result.rows], ""


@st.cache_data(max_entries=32, show_spinner=False)
def ceiling_result(_dataset: Dataset, key: DatasetKey, human: str, level: str, coefficient: str, systems: str,
                   n_resamples: int = 1000, seed: int = 0) -> tuple[HumanCeiling | None, str]:
    """The leaderboard's human ceiling (docs/methods.md sec. 14): each annotator of ``human`` against the mean of
    the others, BOOT-BOTH 95% interval like the metrics' rows; (None, '') when the measure keeps fewer than two
    annotators' scores, (None, why) when the ceiling cannot be computed."""
    from metaeval_core.analyses.ceilings import ceiling_measure
    from metaeval_core.analyses.ceilings import human_ceiling as compute

    source = ceiling_measure(_dataset, human)  # the gold's per-rater release when it keeps no annotators (WMT23)
    if source is None:
        return None, ""
    try:
        return compute(_dataset, source, level=level, coefficient=coefficient, method="boot-both",
                       n_resamples=n_resamples, rng=seed, systems=systems or None), ""
    except ValueError as error:
        return None, str(error).split(";")[0]


def human_ceiling(_dataset: Dataset, key: DatasetKey, human: str, level: str, coefficient: str, systems: str,
                  n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """The leaderboard's human-ceiling rows as a table (kind 'human ceiling', no cluster); empty when there is none."""
    ceiling, _ = ceiling_result(_dataset, key, human, level, coefficient, systems, n_resamples, seed)
    return assemble_leaderboard((), human, level=level, coefficient=coefficient, intervals={},
                                ceiling=ceiling).to_frame()
