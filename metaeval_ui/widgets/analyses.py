"""Sidebar widgets of the paper-analysis pages: level, coefficient, input pool, system subset, a resample count.

Each one goes through :mod:`metaeval_ui.state` (prepare/commit) and reuses the shared fields (``level``, ``coefficient``,
``pool``, ``systems``), so a choice made on the correlations page carries over, and the URL reproduces the view.
"""

from __future__ import annotations

from typing import Sequence

import streamlit as st

from metaeval_core.stats.coefficients import POINT_COEFFICIENTS as COEFFICIENTS
from metaeval_core.stats.correlation import LEVELS
from metaeval_core.data.dataset import Dataset

from metaeval_ui import state, widgets
from metaeval_ui.widgets.correlation import pool_picker


def reset_on_dataset_change(dataset: Dataset, page: str, names: Sequence[str]) -> None:
    """Forget the page's dataset-specific choices (a baseline system, a measure list) when the dataset changes."""
    marker = f"_analyses_last_dataset:{page}"
    last = st.session_state.get(marker)
    if last not in (None, dataset.id):
        for name in names:
            state.put(name, None)
    st.session_state[marker] = dataset.id


def level(*, options: Sequence[str] = LEVELS) -> str:
    key = state.prepare("level", options=options, fallback="system")
    return state.commit("level", st.sidebar.radio(
        "Level", list(options), key=key, horizontal=True,
        help="; ".join(f"{k}: {v}" for k, v in widgets.LEVEL_HELP.items() if k in options)))


def coefficient(name: str = "coefficient", *, label: str = "Coefficient", container=None) -> str:
    box = container or st.sidebar
    key = state.prepare(name, options=COEFFICIENTS, fallback=state.FIELDS[name].default)
    return state.commit(name, box.radio(label, COEFFICIENTS, key=key, horizontal=True,
                                        help="Kendall = tau-b (ties handled as in scipy)."))


def pool(dataset: Dataset, *, applies: bool = True) -> str:
    """The metrics' input pool (:func:`metaeval_ui.widgets.correlation.pool_picker`, the one pool control)."""
    return pool_picker(dataset, applies=applies)


def systems(dataset: Dataset) -> str:
    """The system subset (``""`` = all systems), e.g. ``type=abs``."""
    return widgets.system_subset(dataset)


def bounded_int(name: str, label: str, *, low: int, high: int, default: int, step: int = 1, reason: str = "",
                container=None) -> int:
    """An integer widget clamped to ``[low, high]``; a URL value beyond ``high`` is capped with a note."""
    box = container or st
    wanted = state.get(name)
    try:
        if wanted is not None and int(wanted) > high:
            state.add_note(f"{state.FIELDS[name].param}={wanted}: capped at {high:,}" + (f" ({reason})" if reason else ""))
    except (TypeError, ValueError):
        pass

    def clamp(value):
        return int(min(max(int(value), low), high))

    key = state.prepare(name, fallback=default, coerce=clamp)
    return state.commit(name, int(box.number_input(
        label, min_value=low, max_value=high, step=step, key=key,
        help=f"At most {high:,}" + (f": {reason}" if reason else "") + ".")))


def seed(name: str, *, container=None) -> int:
    return bounded_int(name, "Seed", low=0, high=2**32 - 1, default=0, container=container)


def stop(message: str, *, icon: str = ":material/info:") -> None:
    """An empty state: show why there is nothing to compute, finish the page (notes, URL) and stop."""
    st.info(message, icon=icon)
    widgets.finish()
    st.stop()
