"""Dataset: the chosen dataset in detail — citation, system attributes, per-system means, score distributions
and missing data (kept off the Overview, which must not load the chart and table scripts on first open)."""

import streamlit as st

from metaeval_ui import data, exports, figures, state, tables, widgets
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui.widgets import frames

st.title("Dataset")

ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset

st.header(escape_markdown(ds.title or ds.id))
if ds.licence:  # e.g. WMT23: the repository's GPL-3.0 and WMT23's own data terms
    st.caption(escape_markdown(f"Licence: {ds.licence}"))
if ds.citation:
    with st.expander("Citation"):
        st.code(ds.citation, language=None)

attributes = tables.attribute_summary(ds)
if not attributes.empty:
    st.dataframe(attributes, hide_index=True, width="stretch")

measures = tuple(([ctx.human] if ctx.human else []) + list(ctx.metrics))
pool = "judged"
if ds.has_unjudged_pool or ds.conventions is not None:  # WMT data: 'all' by convention (docs/methods.md sec. 0.6)
    fallback = ds.conventions.pool if ds.conventions is not None else "judged"
    key = state.prepare("pool", options=("judged", "all"), fallback=fallback)
    pool = state.commit("pool", st.radio(
        "Metric input pool", ("judged", "all"), key=key, horizontal=True,
        help="all: metric means and distributions also use the unjudged inputs (human measures never do)."))

st.subheader("Per-system means")
if not measures:
    st.info("Pick a human dimension or at least one metric in the sidebar.", icon=":material/touch_app:")
else:
    with guard("Could not compute the system means"):
        means = data.system_means(ds, ctx.key, measures, pool, "")
        frames.dataframe(means, width="stretch",
                     column_config={m: st.column_config.NumberColumn(m, format="%.3f") for m in measures})
        exports.table_download(means, exports.file_name("system-means", ds.id, pool), index=True,
                               title="Per-system means")
        st.caption(
            f"Mean of each measure over its inputs, missing scores ignored: human measures over the "
            f"{ds.n_judged} judged inputs; metrics over the {pool} pool"
            + (f" ({ds.n_inputs} inputs)." if pool == "all" else f" ({ds.n_judged} inputs).")
        )

st.subheader("Score distributions")
if measures:
    key = state.prepare("dist_kind", options=("histogram", "box"), fallback="histogram")
    kind = state.commit("dist_kind", st.radio("Show as", ("histogram", "box"), key=key, horizontal=True))
    with guard("Could not draw the distributions"):
        if kind == "histogram":
            fig = figures.histogram_grid(data.distribution_stats(ds, ctx.key, measures, pool, 30))
        else:
            fig = figures.box_grid(data.box_stats(ds, ctx.key, measures, pool))
        exports.chart(fig, key="distributions", name=exports.file_name("distributions", ds.id, kind),
                      title=f"Score distributions ({kind})")
    st.caption("Every (system, input) score of each measure, each on its own scale (near-black: human measures; "
               "each metric in its own colour, from its id, the same on every page). Box: quartiles, whiskers at 1.5 IQR.")

st.subheader("Missing data")
with guard("Could not summarise missing data"):
    missing = data.missing_summary(ds, ctx.key)
    # Short headers (the full meaning in each header's help) so the whole table fits without scrolling sideways.
    short = {"judged cells": ("cells", "system x judged-input cells"),
             "missing (judged)": ("missing", "missing cells among the judged inputs"),
             "missing % (judged)": ("missing %", "share of the judged cells that are missing"),
             "systems with gaps": ("systems w/ gaps", "systems missing at least one judged score"),
             "inputs with gaps": ("inputs w/ gaps", "judged inputs missing at least one system's score"),
             "scored unjudged inputs": ("unjudged scored", "unjudged inputs the metric has scores for")}
    frames.dataframe(missing, hide_index=True, width="stretch", column_config={
        column: st.column_config.NumberColumn(label, help=text, format="%.1f" if "%" in column else None)
        for column, (label, text) in short.items()})
    exports.collect("Missing data", table=missing)
st.caption("Missing cells among the judged inputs per measure; 'scored unjudged inputs' counts the unjudged "
           "inputs a metric has scores for. Correlations drop missing cells pairwise and report how many "
           "points they used.")

widgets.finish()
