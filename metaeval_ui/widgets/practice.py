"""Widgets shared by the practitioner's pages (docs/methods.md sec. 10): a single-metric picker and the page's gate.

Each goes through :mod:`metaeval_ui.state` (prepare/commit), so the choice is restored across pages and from the URL.
"""

from __future__ import annotations

import streamlit as st

from metaeval_core.data.dataset import Dataset
from metaeval_core.stats.significance import default_test, method_label, methods_for

from metaeval_ui import state, widgets


def metric_picker(name: str, dataset: Dataset, *, label: str = "Metric", container=None,
                  help: str = "The automatic metric to study.") -> str | None:
    """One metric of ``dataset`` (default: the first sidebar metric, else the dataset's usual first); None if none."""
    options = list(dataset.metric_measures)
    if not options:
        return None
    chosen = [m for m in (state.get("metrics") or ()) if m in options]
    fallback = (chosen or widgets.default_metrics(dataset) or options)[0]
    key = state.prepare(name, options=options, fallback=fallback)
    return state.commit(name, (container or st.sidebar).selectbox(label, options, key=key, help=help))


DEFAULT_TEST = "default"  # the dataset's own default test (WMT's on WMT data), resolved per dataset and level


def test_picker(name: str, dataset: Dataset, level: str, coefficient: str, *, container=None) -> tuple[str, bool]:
    """The significance test: ``(method, chosen)``; the option 'default' follows the dataset (WMT-PERM-SYS at the
    system level on WMT data, else PERM-BOTH) and is kept as 'default' when the dataset or level changes."""
    methods = list(methods_for(level, coefficient))
    default = default_test(dataset, level, coefficient)
    options = [DEFAULT_TEST, *methods]
    key = state.prepare(name, options=options, fallback=DEFAULT_TEST)
    choice = state.commit(name, (container or st).selectbox(
        "Test", options, key=key,
        # the name alone ("WMT-PERM-SYS"): with its origin in brackets the picker cut it off; the help says it
        format_func=lambda m: "Default: " + method_label(default).split(" (")[0] if m == DEFAULT_TEST
        else method_label(m).split(" (")[0],
        help="PERM-*: permutation (swap X and Y scores by system, input or cell); BOOT-*: paired bootstrap; "
             "WILLIAMS: analytic, assumes normality (system and global levels only); WMT-PERM-SYS: WMT's system-level "
             "test (swaps z-scored system scores). Default: WMT's test on WMT data at the system level, else "
             "PERM-BOTH (docs/methods.md sec. 3.6)."))
    return (default, False) if choice == DEFAULT_TEST else (choice, True)


def gate(dataset: Dataset, metric: str | None, human: str | None, *, min_systems: int, n_systems: int,
         why: str) -> bool:
    """Whether the page can run; otherwise show the empty state (the caller finishes and stops)."""
    if metric is None:
        st.info(widgets.NO_METRICS, icon=":material/info:")
        return False
    if human is None:
        st.warning("This dataset has no human measure to compare the metric with.")
        return False
    if n_systems < min_systems:
        st.info(f"This needs at least {min_systems} systems ({why}); the selection has {n_systems}.",
                icon=":material/info:")
        return False
    return True
