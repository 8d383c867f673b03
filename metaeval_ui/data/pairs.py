"""Cached core calls of the NAACL 2022 pages (realistic pairs, ranking stability, judged vs all).

Same pattern as :mod:`metaeval_ui.data`: the dataset is passed as ``_dataset`` (leading underscore: never hashed)
with its small :data:`metaeval_ui.data.DatasetKey` ``(id, version)`` and plain option values; ``max_entries`` bounds
every cache. Results are small frames / dicts / dataclasses of arrays (bootstrap distributions are dropped),
and the Realistic pairs page's plotly figures (``st.cache_resource``: one shared object per band, never modified).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from metaeval_core.stats import pairs, pools, stability
from metaeval_core.data.dataset import Dataset

from metaeval_ui.figures import pairs as fp
from metaeval_ui.data.datasets import DatasetKey

# Resample caps (the reason is shown next to the widgets): bounds move by < 0.01 beyond them while the
# time grows linearly; the stability curves repeat the work for ~19 sample sizes per measure and pool.
MAX_DELTA_RESAMPLES = 5_000
MAX_STABILITY_RESAMPLES = 2_000
MAX_POOL_RESAMPLES = 5_000
CONFIDENCE = 0.95


def _subset(systems: str) -> str | None:
    return systems or None


# -- pure helpers (unit-tested) -----------------------------------------------------------------------------


def slider_step(max_dx: float) -> float:
    """A step giving about 1,000-10,000 slider positions over ``[0, max_dx]`` (a power of ten)."""
    if not (max_dx > 0 and math.isfinite(max_dx)):
        return 0.01
    return 10.0 ** (math.floor(math.log10(max_dx)) - 3)


def nice_cut(abs_dx, count: int, *, max_digits: int = 6) -> float:
    """The roundest ``u`` selecting exactly the ``count`` pairs closest in metric score (ties kept together).

    ``u`` lies in ``[t, next)`` where ``t`` is the ``count``-th smallest ``|dx|`` and ``next`` the first larger
    one, so rounding in a URL or on a slider does not change which pairs are selected.
    """
    values = np.sort(np.asarray(abs_dx, dtype=np.float64))
    if values.size == 0:
        return 0.0
    count = min(max(int(count), 1), values.size)
    t = float(values[count - 1])
    larger = values[values > t]
    if larger.size == 0:
        return t
    nxt = float(larger[0])
    for digits in range(0, max_digits + 1):
        scale = 10.0**digits
        candidate = math.ceil(t * scale) / scale
        if t <= candidate < nxt:
            return candidate
    return t


# -- realistic pairs ----------------------------------------------------------------------------------------


@st.cache_data(max_entries=64, show_spinner=False)
def pair_table(_dataset: Dataset, key: DatasetKey, metric: str, human: str, pool: str, systems: str) -> pd.DataFrame:
    """Every system pair, oriented so the metric's winner comes first (``dx >= 0``); ``dz`` is then signed
    so that positive means the humans agree. ``agreement``: concordant / discordant / tie."""
    x, z, subset = pairs.dataset_means(_dataset, metric, human, pool=pool, systems=_subset(systems))
    sp = pairs.system_pairs(x, z)
    names = np.asarray(subset.systems, dtype=object)
    flip = sp.dx < 0
    winner = np.where(flip, names[sp.second], names[sp.first])
    loser = np.where(flip, names[sp.first], names[sp.second])
    dz = np.where(flip, -sp.dz, sp.dz)
    agreement = np.where((sp.dx == 0) | (sp.dz == 0), "tie", np.where(dz > 0, "concordant", "discordant"))
    return pd.DataFrame({
        "winner": winner, "loser": loser, "abs_dx": np.abs(sp.dx), "dz": dz, "agreement": agreement,
    }).sort_values("abs_dx", kind="stable", ignore_index=True)


@st.cache_data(max_entries=256, show_spinner=False)
def delta(_dataset: Dataset, key: DatasetKey, metric: str, human: str, pool: str, systems: str,
          lower: float, upper: float) -> dict:
    """rSYS-Delta(lower, upper) with its pair counts (``DeltaResult.to_dict()``)."""
    return pairs.dataset_rsys_delta(_dataset, metric, human, lower=lower, upper=upper, pool=pool,
                                    systems=_subset(systems)).to_dict()


@st.cache_data(max_entries=64, show_spinner=False)
def grid(_dataset: Dataset, key: DatasetKey, metric: str, human: str, pool: str, systems: str,
         min_pairs: int) -> pairs.DecileGrid:
    x, z, _ = pairs.dataset_means(_dataset, metric, human, pool=pool, systems=_subset(systems))
    return pairs.decile_grid(x, z, min_pairs=int(min_pairs))


@st.cache_data(max_entries=64, show_spinner=False)
def curve(_dataset: Dataset, key: DatasetKey, metric: str, human: str, pool: str, systems: str) -> pd.DataFrame:
    """rSYS-Delta(0, u) at every distinct cut ``u``: columns upper, share, n_pairs, tau."""
    x, z, _ = pairs.dataset_means(_dataset, metric, human, pool=pool, systems=_subset(systems))
    c = pairs.delta_curve(x, z)
    return pd.DataFrame({"upper": c.upper, "share": c.share_of_pairs, "n_pairs": c.n_pairs, "tau": c.tau})


@st.cache_data(max_entries=128, show_spinner=False)
def delta_interval(_dataset: Dataset, key: DatasetKey, metric: str, human: str, pool: str, systems: str,
                   lower: float, upper: float, method: str, n_resamples: int, seed: int) -> dict:
    """The bootstrap interval of rSYS-Delta(lower, upper) (pairs re-selected in every resample)."""
    ci = pairs.dataset_delta_confidence_interval(
        _dataset, metric, human, lower=lower, upper=upper, method=method, pool=pool, systems=_subset(systems),
        confidence_level=CONFIDENCE, n_resamples=int(n_resamples), rng=int(seed))
    return {"estimate": ci.estimate, "low": ci.low, "high": ci.high, "n_defined": ci.n_defined,
            "n_resamples": ci.n_resamples, "median_pairs": float(np.median(ci.pairs_per_resample))}


@st.cache_resource(max_entries=64, show_spinner=False)
def band_figures(_dataset: Dataset, key: DatasetKey, metric: str, human: str, pool: str, systems: str,
                 lower: float, upper: float, colour: str | None = None) -> tuple[go.Figure, go.Figure]:
    """The rSYS-Delta(0, u) curve and the pair scatter for the band [lower, upper], built once per band.

    Building and validating the plotly figures was half of the page's script time on every slider or metric
    change; revisited bands (the slider moved back, a metric picked again) now reuse them. Shared by every
    session (``st.cache_resource``): the figures are never modified after they are built.
    """
    args = (_dataset, key, metric, human, pool, systems)
    full = delta(*args, 0.0, math.inf)["estimate"]
    return (fp.delta_curve_figure(curve(*args), upper=upper, full=full, metric=metric, colour=colour),
            fp.pair_scatter(pair_table(*args), lower=lower, upper=upper, metric=metric, human=human))


@st.cache_resource(max_entries=64, show_spinner=False)
def decile_figure(_dataset: Dataset, key: DatasetKey, metric: str, human: str, pool: str, systems: str,
                  lower: float, upper: float, min_pairs: int) -> tuple[go.Figure, pairs.DecileGrid]:
    """The decile heatmap (the band's cell outlined, if one selects exactly its pairs) and its grid; shared
    and never modified, as :func:`band_figures`."""
    args = (_dataset, key, metric, human, pool, systems)
    cells = grid(*args, min_pairs)
    selected = matching_cell(cells, pair_table(*args)["abs_dx"], lower, upper)
    return fp.decile_heatmap(cells, metric=metric, selected=selected), cells


# -- ranking stability --------------------------------------------------------------------------------------


# Curves estimated to take longer than this in all are refused with the reason, as the Significance page's tables.
MAX_STABILITY_PAGE_SECONDS = 60.0


def stability_seconds(_dataset: Dataset, jobs, systems: str, n_resamples: int) -> float:
    """The estimated seconds of the curves ``jobs`` ``(measure, pool)``."""
    return sum(stability.dataset_stability_seconds(_dataset, measure, pool=pool, n_resamples=int(n_resamples),
                                                   systems=_subset(systems)) for measure, pool in jobs)


def check_stability_size(_dataset: Dataset, jobs, systems: str, n_resamples: int) -> float:
    """The page's estimated seconds for ``jobs`` ``(measure, pool)``; ValueError naming what to change beyond
    :data:`MAX_STABILITY_PAGE_SECONDS`."""
    seconds = stability_seconds(_dataset, jobs, systems, n_resamples)
    if seconds > MAX_STABILITY_PAGE_SECONDS:
        n_systems = _dataset.select_systems(_subset(systems)).n_systems
        raise ValueError(
            f"{len(jobs)} curves of ~19 sample sizes x {n_resamples:,} resamples on {n_systems:,} systems would take "
            f"about {seconds / 60:.1f} min here (the page stops at {MAX_STABILITY_PAGE_SECONDS:.0f} s): use fewer "
            "resamples, metrics or systems, or run metaeval stability on the command line")
    return seconds


# The first view of Ranking stability computes the curves that fit in this many estimated seconds (the human's and
# the first metrics'); the rest wait for the page's "every measure" toggle (32 WMT23 metrics: ~20 s of curves).
STABILITY_PREVIEW_SECONDS = 2.0


def stability_preview(_dataset: Dataset, groups, systems: str, n_resamples: int) -> int:
    """How many leading ``groups`` (each a measure's list of ``(measure, pool)`` curves) fit
    :data:`STABILITY_PREVIEW_SECONDS` of estimated time (at least two; all of them when they fit)."""
    kept, seconds = 0, 0.0
    for jobs in groups:
        try:
            cost = stability_seconds(_dataset, jobs, systems, n_resamples)
        except ValueError:  # the page's own check names the problem
            return len(groups)
        if kept >= 2 and seconds + cost > STABILITY_PREVIEW_SECONDS:
            break
        kept += 1
        seconds += cost
    return kept


@st.cache_data(max_entries=128, show_spinner=False)
def stability_curve(_dataset: Dataset, key: DatasetKey, measure: str, pool: str, systems: str,
                    n_resamples: int, seed: int) -> pd.DataFrame:
    """Mean and std of the split-sample Kendall tau per sample size m (columns measure, pool, m, mean, std,
    n_defined, n_inputs)."""
    result = stability.dataset_ranking_stability(_dataset, measure, pool=pool, n_resamples=int(n_resamples),
                                                 rng=int(seed), systems=_subset(systems))
    frame = pd.DataFrame(result.rows())
    frame["mean"] = frame["mean"].astype(float)
    frame["std"] = frame["std"].astype(float)
    frame["n_inputs"] = result.n_inputs
    return frame


# -- judged vs all ------------------------------------------------------------------------------------------


def _intervals_frame(reduction: pools.VarianceReduction) -> pd.DataFrame:
    frames = []
    for side in (reduction.judged, reduction.all):
        frames.append(pd.DataFrame({"system": side.systems, "pool": side.pool, "n_inputs": side.n_inputs,
                                    "mean": side.mean, "low": side.low, "high": side.high,
                                    "variance": side.variance}))
    return pd.concat(frames, ignore_index=True)


def _summary(reduction: pools.VarianceReduction) -> dict:
    return {"average_reduction": reduction.average_reduction, "pooled_reduction": reduction.pooled_reduction,
            "n_undefined": reduction.n_undefined, "simulated": reduction.simulated}


def _widths_frame(widths: pools.WidthComparison) -> pd.DataFrame:
    frame = pd.DataFrame(widths.to_records())
    return frame.astype({c: float for c in frame.columns if c not in ("method", "simulated")})


@st.cache_data(max_entries=32, show_spinner=False)
def score_intervals(_dataset: Dataset, key: DatasetKey, metric: str, systems: str, n_resamples: int,
                    seed: int, human: str | None = None) -> tuple[pd.DataFrame, dict]:
    """Per-system bootstrap intervals under both pools (long frame) and the variance reduction summary; with
    ``human``, only the systems it scored (as every statistic against it, docs/methods.md sec. 0.2: WMT22 zh-en's
    4 systems without MQM are not in the chart or its reduction)."""
    if human is not None:
        _dataset = _dataset.rated_by(human)
    reduction = pools.variance_reduction(_dataset, metric, confidence_level=CONFIDENCE,
                                         n_resamples=int(n_resamples), rng=int(seed), systems=_subset(systems))
    return _intervals_frame(reduction), _summary(reduction)


@st.cache_data(max_entries=32, show_spinner=False)
def width_comparison(_dataset: Dataset, key: DatasetKey, metric: str, human: str, systems: str,
                     n_resamples: int, seed: int) -> pd.DataFrame:
    """rSYS interval widths, pool judged vs all, for BOOT-SYSTEMS / BOOT-INPUTS / BOOT-BOTH."""
    widths = pools.rsys_width_comparison(_dataset, metric, human, confidence_level=CONFIDENCE,
                                         n_resamples=int(n_resamples), rng=int(seed), systems=_subset(systems))
    return _widths_frame(widths)


@st.cache_data(max_entries=16, show_spinner=False)
def simulation(_dataset: Dataset, key: DatasetKey, metric: str, human: str, systems: str, m: int,
               n_resamples: int, seed: int) -> tuple[str, pd.DataFrame, dict, pd.DataFrame]:
    """The labelled SIMULATION for datasets without an unjudged pool: (label, intervals, summary, widths); only
    the systems ``human`` scored (docs/methods.md sec. 0.2)."""
    _dataset = _dataset.rated_by(human)
    sim = pools.simulate_labelled_subset(_dataset, metric, human, m=int(m), confidence_level=CONFIDENCE,
                                         n_resamples=int(n_resamples), rng=int(seed), systems=_subset(systems))
    return sim.label, _intervals_frame(sim.variance), _summary(sim.variance), _widths_frame(sim.widths)


def matching_cell(grid: pairs.DecileGrid, abs_dx, lower: float, upper: float) -> tuple[int, int] | None:
    """The existing decile-grid cell selecting exactly the pairs of the band [lower, upper], if any."""
    adx = np.asarray(abs_dx, dtype=np.float64)
    band = (adx >= lower) & (adx <= upper)
    for r in range(grid.exists.shape[0]):
        for c in range(grid.exists.shape[1]):
            if grid.exists[r, c] and np.array_equal(band, (adx >= grid.lower[r]) & (adx <= grid.upper[c])):
                return r, c
    return None
