"""Every page's frame: the shared sidebar (:func:`sidebar`), the empty states when a page cannot run, and
the closing notes and URL (:func:`finish`).

Every view-defining widget goes through :mod:`metaeval_ui.state` (restored across pages and from the URL).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from metaeval_core.data.dataset import Dataset
from metaeval_ui import data, exports, state, tables, text, userdata
from metaeval_ui.figures import colours
from metaeval_ui.navigation import ensure_navigation_mode
from metaeval_ui.errors import escape_markdown
from metaeval_ui.widgets.datasets import dataset_picker
from metaeval_ui.widgets.measures import default_metrics, measure_pickers


NO_METRICS = ("This dataset has no automatic-metric scores (only human judgments), so there is nothing to "
              "meta-evaluate here. The Overview and Dataset pages still describe it.")


@dataclass(frozen=True)
class Context:
    """What the sidebar chose, for the page to use."""

    dataset: Dataset
    key: data.DatasetKey
    human: str | None
    metrics: tuple[str, ...]


def need_measures(ctx: Context, *, min_metrics: int = 1, what: str = "") -> bool:
    """Whether the page can run; otherwise show the right empty state (and the caller stops)."""
    ds = ctx.dataset
    if not ds.metric_measures:
        st.info(NO_METRICS, icon=":material/info:")
        return False
    if len(ds.metric_measures) < min_metrics:
        st.info(f"This dataset has fewer than {min_metrics} metrics.", icon=":material/info:")
        return False
    if not ctx.human:
        st.warning("This dataset has no human measure to compare the metrics with.")
        return False
    if len(ctx.metrics) < min_metrics:
        need = "at least one metric" if min_metrics == 1 else f"at least {_WORDS.get(min_metrics, min_metrics)} metrics"
        st.info(f"Pick {need} in the sidebar{what}.", icon=":material/touch_app:")
        return False
    return True


_WORDS = {2: "two", 3: "three"}


# Streamlit caps a multiselect's height and scrolls inside it, which cut the fifth chosen metric in half in the
# sidebar (and the fourth CI method on Confidence intervals): let every picker grow with its chips instead.
_SIDEBAR_CSS = """<style>
[data-testid="stMultiSelect"] div { max-height: none !important; }
[data-testid="stMultiSelect"] div:has(> span > span > button) { flex-wrap: wrap !important;
  overflow: visible !important; mask-image: none !important; -webkit-mask-image: none !important; }
[data-testid="stMultiSelect"] div > span:has(> span > button) { flex-wrap: wrap !important; }
</style>"""


def sidebar(*, human: bool = True, metrics: bool = True) -> Context | None:
    """Dataset + measure pickers; None when there is no usable dataset (the reason is already shown)."""
    ensure_navigation_mode()
    state.init()
    exports.begin()
    picked = dataset_picker()
    if picked is None:
        return None
    dataset, key = picked
    exports.set_dataset(dataset)
    userdata.banner(dataset)
    userdata.report_panel(dataset)
    chosen_human, chosen_metrics = measure_pickers(dataset, human=human, metrics=metrics)
    caution = text.reference_caution(tables.reference_scored(dataset, chosen_metrics), can_drop=bool(
        dataset.default_systems), inputs=dataset.vocabulary.inputs)
    if caution:
        st.warning(escape_markdown(caution), icon=":material/warning:")
    # One colour per measure on every page: a hash of its id; the chosen metrics (also on pages without the metric
    # picker) are shown together, so their hash collisions are resolved (figures.colours.resolve_collisions).
    chosen = chosen_metrics or tuple(m for m in state.get("metrics") or () if m in dataset.metric_measures)
    colours.use_measures(dataset.metric_measures, dataset.human_measures,
                         chosen=chosen or tuple(default_metrics(dataset)))
    st.html(_SIDEBAR_CSS)
    return Context(dataset, key, chosen_human, chosen_metrics)


def show_notes() -> None:
    """Show (once) what was dropped from the URL or from an earlier dataset's choices."""
    for note in state.notes():
        st.caption(":material/info: " + escape_markdown(note))
    state.clear_notes()


def finish() -> None:
    """End of every page: show notes and write the choices into the URL."""
    show_notes()
    state.sync_url()
    exports.report_button()
