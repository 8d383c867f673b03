"""Widgets shared by the NAACL 2022 pages: one metric, the input pool, the system subset, resamples.

Every widget goes through :mod:`metaeval_ui.state` (prepare/commit), so choices survive page switches and live in
the URL. The single metric (``delta_metric``) and the band ``l``/``u`` are reset when the dataset (or, for
the band, the metric: its units) changes.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from metaeval_core.data.dataset import Dataset

from metaeval_ui import state, widgets
from metaeval_ui.errors import escape_markdown

_LAST = "_pairs_last_dataset"


def metric_picker(dataset: Dataset) -> str | None:
    """The one metric these pages analyse (sidebar); None, with the reason shown, when there is none."""
    ss = st.session_state
    if ss.get(_LAST) not in (None, dataset.id):
        state.put("delta_metric", None)
    ss[_LAST] = dataset.id
    options = list(dataset.metric_measures)
    if not options:
        st.sidebar.warning("This dataset has no automatic metric scores.")
        return None
    chosen = list(state.get("metrics") or [])
    fallback = next((m for m in chosen if m in options), None) or widgets.default_metrics(dataset)[0]
    key = state.prepare("delta_metric", options=options, fallback=fallback)
    return state.commit("delta_metric", st.sidebar.selectbox(
        "Metric", options, key=key, help="The automatic metric whose system ranking is meta-evaluated."))


def pool_and_systems(dataset: Dataset, *, pool: bool = True) -> tuple[str, str]:
    """The metric's input pool (judged / all; 'all' disabled with the reason) and the system subset."""
    side = st.sidebar
    chosen = "judged"
    if pool:
        # On WMT data 'all' is the convention the conventions caption names (docs/methods.md sec. 0.6).
        has_pool = dataset.has_unjudged_pool or dataset.conventions is not None
        if not has_pool:
            state.put("pool", "judged")
        fallback = dataset.conventions.pool if dataset.conventions is not None else "judged"
        key = state.prepare("pool", options=("judged", "all"), fallback=fallback)
        chosen = state.commit("pool", side.radio(
            "Metric input pool", ("judged", "all"), key=key, horizontal=True, disabled=not has_pool,
            help="judged: system means over the inputs with human scores; all: the metric's means over every "
                 "test input it scored (NAACL 2022 sec. 3). Human means always use the judged inputs."))
        if not has_pool:
            side.caption("Pool 'all' is disabled: this dataset has no unjudged inputs with metric scores.")
    systems = widgets.system_subset(dataset, side)
    return chosen, systems


def resamples(k_name: str, seed_name: str, *, default: int, cap: int, container=None,
              disabled: bool = False, reason: str = "", low: int = 10) -> tuple[int, int]:
    """Number of resamples (default ``default``, ``low`` to ``cap`` with the reason) and the seed."""
    box = container or st
    wanted = state.get(k_name)
    if wanted is not None and int(wanted) > cap:
        state.add_note(f"{state.FIELDS[k_name].param}={wanted}: capped at {cap:,} resamples")

    def clamp(low, high):
        return lambda v: int(min(max(int(v), low), high))

    key = state.prepare(k_name, fallback=default, coerce=clamp(low, cap))
    k = state.commit(k_name, int(box.number_input(
        "Resamples (k)", min_value=low, max_value=cap, step=100, key=key, disabled=disabled,
        help=f"At most {cap:,}{': ' + reason if reason else ''}.")))
    key = state.prepare(seed_name, fallback=0, coerce=clamp(0, 2**32 - 1))
    seed = state.commit(seed_name, int(box.number_input(
        "Seed", min_value=0, max_value=2**32 - 1, step=1, key=key, disabled=disabled,
        help="Same seed, same result.")))
    return k, seed


# -- the band [l, u] of Realistic pairs, moved in share of pairs ---------------------------------------------------

BAND = state.widget_key("delta_band")  # the range slider (% of pairs); its ends are the fields delta_l / delta_u
_UNITS = "_pairs_units"
MAX_POSITIONS = 400  # slider positions: one per pair up to this many pairs, an even grid beyond


def share_step(n_pairs: int) -> float:
    """The slider's step in % of pairs: one pair up to MAX_POSITIONS pairs, an even grid beyond."""
    return 100.0 / max(min(n_pairs, MAX_POSITIONS), 1)


def to_share(count: int, n_pairs: int) -> float:
    """A pair count as the slider's value: % of pairs, on the slider's grid."""
    step = share_step(n_pairs)
    return round(round(100.0 * count / max(n_pairs, 1) / step) * step, 9)


def to_count(share: float, n_pairs: int) -> int:
    return int(min(max(round(float(share) * n_pairs / 100.0), 0), n_pairs))


def lower_cut(abs_dx, count: int, *, max_digits: int = 6) -> float:
    """The roundest ``l`` leaving out exactly the ``count`` pairs closest in metric score (ties kept together):
    ``l`` lies in ``(t, next]`` with ``t`` the ``count``-th smallest ``|dx|`` and ``next`` the first larger one."""
    values = np.sort(np.asarray(abs_dx, dtype=np.float64))
    if count <= 0 or values.size == 0:
        return 0.0
    t = float(values[min(count, values.size) - 1])
    larger = values[values > t]
    if larger.size == 0:
        return t  # every pair is at least this close: nothing to leave in
    nxt = float(larger[0])
    for digits in range(0, max_digits + 1):
        scale = 10.0 ** digits
        candidate = math.floor(nxt * scale) / scale
        if t < candidate <= nxt:
            return candidate
    return nxt


def band_counts(abs_dx, lower: float, upper: float) -> tuple[int, int]:
    """(pairs closer than l, pairs at most u apart): the band [l, u] as slider positions."""
    values = np.asarray(abs_dx, dtype=np.float64)
    return int((values < lower).sum()), int((values <= upper).sum())


def band_from_counts(abs_dx, low_count: int, high_count: int) -> tuple[float, float]:
    """The band [l, u] (metric units) between the ``low_count``-th and the ``high_count``-th closest pair."""
    from metaeval_ui.data.pairs import nice_cut

    upper = nice_cut(abs_dx, high_count) if high_count > 0 else 0.0
    return min(lower_cut(abs_dx, low_count), upper), upper


def band_slider(dataset_id: str, metric: str, abs_dx, *, default_upper: float, container=None) -> tuple[float, float]:
    """The band [l, u] of Realistic pairs: a range slider over the share of system pairs, closest first, so every
    decile is reachable by mouse whatever the spread of the metric's differences; the metric values of l and u are
    written under it. l and u are kept in metric units (URL ``l``/``u``; older URLs read the same), reset when the
    units change (another dataset or metric)."""
    box = container or st
    ss = st.session_state
    values = np.sort(np.asarray(abs_dx, dtype=np.float64))
    n = int(values.size)
    top = float(values[-1]) if n else 0.0
    if ss.get(_UNITS) not in (None, (dataset_id, metric)):
        for name in ("delta_l", "delta_u"):
            state.put(name, None)
        ss.pop(BAND, None)
    ss[_UNITS] = (dataset_id, metric)
    lower = min(max(float(state.get("delta_l") or 0.0), 0.0), top)
    upper = min(max(float(state.get("delta_u", default_upper)), 0.0), top)
    lower, upper = sorted((lower, upper))
    counts = band_counts(values, lower, upper)
    ss[BAND] = (to_share(counts[0], n), to_share(counts[1], n))

    def moved() -> None:
        low, high = ss[BAND]
        new_lower, new_upper = band_from_counts(values, to_count(low, n), to_count(high, n))
        state.commit("delta_l", new_lower)
        state.commit("delta_u", new_upper)

    box.slider(
        f"Band: the share of system pairs, closest in {escape_markdown(metric)} first", min_value=0.0,
        max_value=100.0, step=share_step(n), format="%.0f%%", key=BAND, on_change=moved,
        help="The left end leaves out the closest pairs (l), the right end adds pairs up to u; both are shown in "
             "the metric's units below. 0-20% is the NAACL 2022 'realistic' band: the pairs a new system's "
             "small improvement creates.")
    state.commit("delta_l", lower)
    state.commit("delta_u", upper)
    box.caption(f"l = {lower:.4g}, u = {upper:.4g} (|Δ {escape_markdown(metric)}|, metric units): the pairs "
                f"{counts[0] + 1 if counts[1] > counts[0] else 0}–{counts[1]} of {n} by closeness.")
    return lower, upper


def set_band(lower: float, upper: float) -> None:
    """A quick-band button's callback: the band in metric units (the slider follows on the rerun)."""
    state.commit("delta_l", float(lower))
    state.commit("delta_u", float(upper))
