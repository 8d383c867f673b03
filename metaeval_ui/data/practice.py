"""Cached core calls of the practitioner's pages (docs/methods.md sec. 10): "is my improvement real?", "how many
judgments?", leave-one-system-out influence, significance clusters.

Same pattern as :mod:`metaeval_ui.data`: the dataset is passed as ``_dataset`` (leading underscore: never hashed) with
its small :data:`metaeval_ui.data.DatasetKey` ``(id, version)`` and plain option values; every cache is bounded. The
planning runs design by design with a progress callback, so (like the significance page's pairwise tables) its
results live in a small LRU shared by sessions instead of ``st.cache_data``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from metaeval_core.analyses import practice
from metaeval_core.data.dataset import Dataset

from metaeval_ui.data.datasets import DatasetKey
from metaeval_ui.data.resampled import _ResultStore

MAX_IMPROVEMENT_RESAMPLES = 5_000  # ~2 s on 24 systems; the band's ends move by < 0.01 beyond
MAX_INFLUENCE_RESAMPLES = 2_000  # N + 1 intervals: 2,000 resamples x 25 intervals take a few seconds
MAX_PLAN_RESAMPLES = 1_000
MAX_PLAN_TRIALS = 100
MAX_PLAN_DESIGNS = 40
AUTO_RUN_BUDGET = 15_000  # designs x trials x resamples below which the plan runs without a button (~1 s)
DEFAULT_INPUT_SIZES = (10, 20, 50, 100)
CANDIDATE_INPUT_SIZES = (5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000)


def _subset(systems: str) -> str | None:
    return systems or None


def n_systems(dataset: Dataset, systems: str, human: str | None = None) -> int:
    """The systems a statistic against ``human`` uses: the selection, without those ``human`` never scored."""
    subset = dataset.select_systems(_subset(systems))
    return (subset.rated_by(human) if human else subset).n_systems


def n_judged(dataset: Dataset, systems: str) -> int:
    return dataset.select_systems(_subset(systems)).n_judged if systems else dataset.n_judged


# -- is my improvement real? ----------------------------------------------------------------------------------


def nice(value: float) -> float:
    """``value`` rounded to two significant digits (a default the user can read and retype)."""
    if not math.isfinite(value) or value <= 0:
        return 0.0
    digits = 1 - int(math.floor(math.log10(value)))
    return round(value, digits)


@st.cache_data(max_entries=64, show_spinner=False)
def metric_gaps(_dataset: Dataset, key: DatasetKey, metric: str, pool: str, systems: str) -> dict:
    """The |dx| of the system pairs not tied in the metric: median (the default d), max, count."""
    sub = _dataset.select_systems(_subset(systems))
    matrix = sub.matrix(metric, pool=pool)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a system without scores: NaN, dropped below
        means = np.nanmean(matrix, axis=1) if matrix.size else np.empty(0)
    means = means[np.isfinite(means)]
    first, second = np.triu_indices(means.size, 1)
    gaps = np.abs(means[first] - means[second])
    gaps = gaps[gaps > 0]
    if gaps.size == 0:
        return {"median": 0.0, "max": 0.0, "n": 0}
    return {"median": float(np.median(gaps)), "max": float(gaps.max()), "n": int(gaps.size)}


@st.cache_data(max_entries=64, show_spinner=False)
def improvement(_dataset: Dataset, key: DatasetKey, metric: str, human: str, delta: float, pool: str, systems: str,
                method: str, human_ties: str, n_resamples: int, seed: int) -> practice.ImprovementResult:
    return practice.improvement_probability(
        _dataset, metric, human, delta=float(delta), pool=pool, systems=_subset(systems), method=method,
        human_ties=human_ties, n_resamples=int(n_resamples), rng=int(seed))


def pair_frame(result: practice.ImprovementResult) -> pd.DataFrame:
    """The usable system pairs behind the curve, largest |dx| first."""
    names = result.system_names
    label = {1.0: "agree", 0.0: "disagree", 0.5: "humans tied"}
    frame = pd.DataFrame({
        "system A": [names[i] for i in result.pair_first], "system B": [names[i] for i in result.pair_second],
        "|dx|": result.pair_abs_dx, "humans": [label.get(float(a), str(a)) for a in result.pair_agreement]})
    return frame.sort_values("|dx|", ascending=False, ignore_index=True)


# -- how many judgments? --------------------------------------------------------------------------------------


def input_size_options(n_inputs: int) -> list[int]:
    return sorted({s for s in CANDIDATE_INPUT_SIZES if 2 <= s <= n_inputs} | {n_inputs})


def default_input_sizes(n_inputs: int) -> list[int]:
    return sorted({s for s in DEFAULT_INPUT_SIZES if s <= n_inputs} | {n_inputs})


def default_system_sizes(n_sys: int) -> list[int]:
    return sorted({max(3, round(n_sys / 2)), max(3, round(3 * n_sys / 4)), n_sys})


def plan_cost(n_designs: int, n_trials: int, n_resamples: int) -> int:
    return n_designs * n_trials * n_resamples


# A plan estimated to take longer than this is refused with the reason and what to change (so is `metaeval plan`).
MAX_PLAN_SECONDS = practice.MAX_PLAN_SECONDS


def plan_seconds(inputs: Sequence[int], sys_sizes: Sequence[int], trials: int, k: int, coefficient: str) -> float:
    """The plan's estimated seconds; ValueError naming the size and what to change beyond ``MAX_PLAN_SECONDS``."""
    designs = [(m, n) for n in sys_sizes for m in inputs]
    seconds = practice.estimated_plan_seconds(designs, n_trials=trials, n_resamples=k, coefficient=coefficient)
    if seconds > MAX_PLAN_SECONDS:
        raise ValueError(
            f"{len(designs)} designs (up to {max(sys_sizes):,} systems x {max(inputs):,} inputs) x {trials} trials "
            f"x {k} resamples would take about {seconds / 60:.0f} min here (the page stops at "
            f"{MAX_PLAN_SECONDS / 60:.0f} min): pick fewer or smaller designs, fewer trials or resamples")
    return seconds


@st.cache_resource
def _plan_store() -> _ResultStore:
    return _ResultStore(max_entries=16)


def plan_key(dataset_key: DatasetKey, metric: str, human: str, input_sizes: Sequence[int],
             system_sizes: Sequence[int], target_width: float | None, target_power: float | None, versus: str,
             noise: float, coefficient: str, ci_method: str, n_resamples: int, n_trials: int, seed: int,
             systems: str) -> tuple:
    return ("plan", dataset_key, metric, human, tuple(sorted(set(input_sizes))), tuple(sorted(set(system_sizes))),
            target_width, target_power, versus, float(noise), coefficient, ci_method, int(n_resamples),
            int(n_trials), int(seed), systems)


def plan_is_cached(key: tuple) -> bool:
    return _plan_store().get(key) is not None


def plan(_dataset: Dataset, key: tuple, *, progress: Callable[[float], None] | None = None) -> practice.PlanResult:
    """:func:`metaeval_core.analyses.practice.plan_judgments`, one design at a time (for the progress bar).

    Design ``d`` (ascending systems, then inputs) uses child ``d`` of ``default_rng(seed).spawn(D)``. The
    recommendation is the core's :func:`~metaeval_core.analyses.practice.recommend_design` applied to the union of
    the designs (a design counts only when every larger design tried meets the target too).
    """
    found = _plan_store().get(key)
    if found is not None:
        return found
    (_, _, metric, human, inputs, sys_sizes, width, power, versus, noise, coefficient, ci_method, k, trials,
     seed, systems) = key
    designs = [(m, n) for n in sys_sizes for m in inputs]
    children = np.random.default_rng(seed).spawn(len(designs))
    parts = []
    for d, (m, n) in enumerate(designs):
        parts.append(practice.plan_judgments(
            _dataset, metric, human, input_sizes=[m], system_sizes=[n], target_width=width, target_power=power,
            versus=versus or None, noise=noise, coefficient=coefficient, ci_method=ci_method, n_resamples=k,
            n_trials=trials, rng=children[d], systems=_subset(systems)))
        if progress is not None:
            progress((d + 1) / len(designs))
    rows = tuple(row for p in parts for row in p.table)
    best = practice.recommend_design(rows, target_width=width, target_power=power)
    result = replace(parts[-1], table=rows, recommendation=best)
    _plan_store().put(key, result)
    return result


# -- leave one system out -------------------------------------------------------------------------------------


@st.cache_data(max_entries=64, show_spinner=False)
def influence(_dataset: Dataset, key: DatasetKey, metric: str, human: str, level: str, coefficient: str, pool: str,
              systems: str, threshold: float, with_intervals: bool, n_resamples: int,
              seed: int) -> practice.InfluenceResult:
    return practice.system_influence(
        _dataset, metric, human, level=level, coefficient=coefficient, pool=pool, systems=_subset(systems),
        threshold=float(threshold), with_intervals=bool(with_intervals), n_resamples=int(n_resamples),
        rng=int(seed))


def influence_frame(result: practice.InfluenceResult) -> pd.DataFrame:
    frame = pd.DataFrame(result.to_records())
    for column in ("without", "change", "low_without", "high_without"):
        frame[column] = frame[column].astype(float)
    order = frame["change"].abs().fillna(-1).sort_values(ascending=False).index
    return frame.loc[order].reset_index(drop=True)


# -- significance clusters ------------------------------------------------------------------------------------


def clusters(table, significant: np.ndarray, alpha: float, correction: str) -> practice.SignificanceClusters:
    """WMT-style clusters from a pairwise table with the page's own significance matrix (after its correction)."""
    marked = replace(table, significant_corrected=np.asarray(significant, dtype=bool), alpha=float(alpha),
                     correction=correction)
    return practice.significance_clusters(marked, use_corrected=True)


def cluster_frame(result: practice.SignificanceClusters) -> pd.DataFrame:
    frame = pd.DataFrame(result.to_records(), columns=["metric", "estimate", "rank"])
    frame["estimate"] = frame["estimate"].astype(float)
    return frame.rename(columns={"rank": "cluster"})[["cluster", "metric", "estimate"]]


def full_width(_dataset: Dataset, key: DatasetKey, metric: str, human: str, coefficient: str, method: str,
               systems: str, n_resamples: int, seed: int) -> float:
    """Width of the system-level interval on all judged inputs and systems (the planner's largest design); NaN if
    undefined. From the cached :func:`metaeval_ui.data.confidence_interval`."""
    from metaeval_ui import data

    ci = data.confidence_interval(_dataset, key, metric, human, "system", coefficient, method, "judged", systems,
                                  0.95, int(n_resamples), int(seed))
    low, high = ci.get("low"), ci.get("high")
    return float(high - low) if low is not None and high is not None else float("nan")
