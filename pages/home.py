"""Overview: what metaeval is, and what the chosen dataset holds."""

import streamlit as st

from ui import data, exports, figures, state, tables, widgets
from ui.errors import escape_markdown, guard

st.title("metaeval — can I trust this evaluation metric?")
st.markdown(
    "metaeval **meta-evaluates** automatic summarization metrics: it measures how well a metric's scores agree "
    "with human judgments of the same summaries (correlations at the system, input and global levels), how "
    "certain those correlations are (confidence intervals) and whether one metric is really better than another "
    "(significance tests), following Deutsch, Dror & Roth (TACL 2021, NAACL 2022)."
)

ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset

st.header(escape_markdown(ds.title or ds.id))
if ds.description:
    st.markdown(escape_markdown(ds.description))
meta = [f"id: {ds.id}", f"version: {ds.version}"] + ([f"licence: {ds.licence}"] if ds.licence else [])
st.caption(escape_markdown(" · ".join(meta)))
if ds.citation:
    with st.expander("Citation"):
        st.code(ds.citation, language=None)

counts = tables.overview_counts(ds)
for column, (label, value) in zip(st.columns(len(counts)), counts.items()):
    column.metric(label, f"{value:,}")
st.caption(
    "Judged inputs have human scores; unjudged inputs have only metric scores (a larger pool some analyses can "
    "use for the metric side, NAACL 2022). Human measures: "
    + escape_markdown(", ".join(ds.human_measures) or "none") + "."
)
# The NAACL 2022 headline on first open: a metric that ranks all systems well can be far less reliable on
# the close pairs that researchers actually compare.
if ctx.human and ctx.metrics:
    from ui import data_pairs

    headline_metric = ctx.metrics[0]
    with guard("Could not compute the close-pairs headline"):
        pair_rows = data_pairs.pair_table(ds, ctx.key, headline_metric, ctx.human, "judged", "")
        if len(pair_rows) >= 10:
            u20 = float(pair_rows["abs_dx"].iloc[data_pairs.share_count(len(pair_rows), 0.2) - 1])
            full = data_pairs.delta(ds, ctx.key, headline_metric, ctx.human, "judged", "", 0.0, float("inf"))
            close = data_pairs.delta(ds, ctx.key, headline_metric, ctx.human, "judged", "", 0.0, u20)
            st.subheader("Headline: agreement on close system pairs")
            left, right, link = st.columns([1, 1, 1])
            left.metric(f"rSYS, all {full['n_pairs']} pairs", figures.fmt(full["estimate"], 2))
            right.metric(f"rSYS-Δ(0, {u20:.3g}), closest 20%", figures.fmt(close["estimate"], 2),
                         help="Kendall τ over only the system pairs whose metric scores differ by at most u.")
            link.page_link("pages/pairs.py", label="Explore realistic pairs", icon=":material/join_inner:")
            st.caption(escape_markdown(
                f"{headline_metric} vs {ctx.human}: the system-level Kendall τ on all pairs, and on the 20% of "
                "pairs closest in metric score (Deutsch, Dror & Roth, NAACL 2022)."))

attributes = tables.attribute_summary(ds)
if not attributes.empty:
    st.dataframe(attributes, hide_index=True, width="stretch")

measures = tuple(([ctx.human] if ctx.human else []) + list(ctx.metrics))
pool = "judged"
if ds.has_unjudged_pool:
    key = state.prepare("pool", options=("judged", "all"), fallback="judged")
    pool = state.commit("pool", st.radio(
        "Metric input pool", ("judged", "all"), key=key, horizontal=True,
        help="all: metric means and distributions also use the unjudged inputs (human measures never do)."))

st.subheader("Per-system means")
if not measures:
    st.info("Pick a human dimension or at least one metric in the sidebar.", icon=":material/touch_app:")
else:
    with guard("Could not compute the system means"):
        means = data.system_means(ds, ctx.key, measures, pool, "")
        st.dataframe(means, width="stretch",
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
    st.caption("Every (system, input) score of each measure, each on its own scale (red: human, blue: metric). "
               "Box: quartiles, whiskers at 1.5 IQR.")

st.subheader("Missing data")
with guard("Could not summarise missing data"):
    missing = data.missing_summary(ds, ctx.key)
    st.dataframe(missing, hide_index=True, width="stretch")
    exports.collect("Missing data", table=missing)
st.caption("Missing cells among the judged inputs per measure; 'scored unjudged inputs' counts the unjudged "
           "inputs a metric has scores for. Correlations drop missing cells pairwise and report how many "
           "points they used.")

widgets.finish()
