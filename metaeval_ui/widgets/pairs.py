"""Widgets shared by the NAACL 2022 pages: one metric, the input pool, the system subset, resamples.

Every widget goes through :mod:`metaeval_ui.state` (prepare/commit), so choices survive page switches and live in
the URL. The single metric (``delta_metric``) and the band ``l``/``u`` are reset when the dataset (or, for
the band, the metric: its units) changes.
"""

from __future__ import annotations

import streamlit as st

from metaeval_core.data.dataset import Dataset

from metaeval_ui import state, widgets

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
        has_pool = dataset.has_unjudged_pool
        if not has_pool:
            state.put("pool", "judged")
        key = state.prepare("pool", options=("judged", "all"), fallback="judged")
        chosen = state.commit("pool", side.radio(
            "Metric input pool", ("judged", "all"), key=key, horizontal=True, disabled=not has_pool,
            help="judged: system means over the inputs with human scores; all: the metric's means over every "
                 "test input it scored (NAACL 2022 sec. 3). Human means always use the judged inputs."))
        if not has_pool:
            side.caption("Pool 'all' is disabled: this dataset has no unjudged inputs with metric scores.")
    systems = widgets.system_subset(dataset, side)
    return chosen, systems


def resamples(k_name: str, seed_name: str, *, default: int, cap: int, container=None,
              disabled: bool = False, reason: str = "") -> tuple[int, int]:
    """Number of resamples (default ``default``, capped at ``cap`` with the reason) and the seed."""
    box = container or st
    wanted = state.get(k_name)
    if wanted is not None and int(wanted) > cap:
        state.add_note(f"{state.FIELDS[k_name].param}={wanted}: capped at {cap:,} resamples")

    def clamp(low, high):
        return lambda v: int(min(max(int(v), low), high))

    key = state.prepare(k_name, fallback=default, coerce=clamp(10, cap))
    k = state.commit(k_name, int(box.number_input(
        "Resamples (k)", min_value=10, max_value=cap, step=100, key=key, disabled=disabled,
        help=f"At most {cap:,}{': ' + reason if reason else ''}.")))
    key = state.prepare(seed_name, fallback=0, coerce=clamp(0, 2**32 - 1))
    seed = state.commit(seed_name, int(box.number_input(
        "Seed", min_value=0, max_value=2**32 - 1, step=1, key=key, disabled=disabled,
        help="Same seed, same result.")))
    return k, seed
