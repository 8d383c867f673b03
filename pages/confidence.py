"""Confidence intervals: how certain is each metric's correlation? (TACL 2021 sec. 3)"""

import pandas as pd
import streamlit as st

from metaeval_core.stats.resampling import CI_METHODS
from metaeval_ui import data, examples, exports, figures, state, text, widgets
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui.widgets import frames
from metaeval_ui.widgets.progress import long_run

st.title("Confidence intervals")

ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
level, coefficient, pool, systems = widgets.correlation_settings(ds)
left, middle, right = st.columns([2, 1, 1])
# Every method stays selectable, so the user's choice survives a change of coefficient; Fisher's interval is only
# skipped (and said so) while the coefficient is a pairwise accuracy, and comes back with a correlation.
key = state.prepare("ci_methods", options=CI_METHODS, multi=True, fallback=["boot-both"])
chosen = state.commit("ci_methods", left.multiselect(
    "CI methods", CI_METHODS, key=key, format_func=widgets.upper,
    help="FISHER: analytic (assumes normality); BOOT-SYSTEMS / BOOT-INPUTS / BOOT-BOTH: percentile bootstrap "
         "resampling systems, inputs or both (BOOT-BOTH is the best calibrated, TACL 2021 Table 1)."))
key = state.prepare("ci_conf", fallback=0.95, coerce=lambda v: min(max(float(v), 0.5), 0.999))
confidence = state.commit("ci_conf", middle.number_input(
    "Confidence level", min_value=0.5, max_value=0.999, step=0.01, format="%.3f", key=key))
methods = [m for m in chosen if m != "fisher" or coefficient in widgets.CORRELATIONS]
if len(methods) < len(chosen):
    st.info(f"FISHER is skipped: it transforms a correlation r (arctanh), and {coefficient} is a pairwise accuracy, "
            "a share of pairs with no such transform. It comes back with Pearson, Spearman or Kendall.",
            icon=":material/info:")
with right:
    k, seed = widgets.resamples_and_seed("ci_k", "ci_seed", disabled=methods == ["fisher"])

if not widgets.need_measures(ctx) or not methods:
    if not methods:
        st.info("Pick at least one CI method" + (" other than FISHER." if chosen else "."), icon=":material/touch_app:")
    widgets.finish()
    st.stop()

rows = []
jobs = [(m, method) for m in ctx.metrics for method in methods]
job = (ctx.key, tuple(jobs), ctx.human, level, coefficient, pool, systems, float(confidence), int(k), int(seed))
stop_at = data.intervals_deadline(len(jobs), "/".join(methods), int(k))  # never past the page's 60 s
found = {}
with long_run("ci", job, f"{len(jobs)} intervals ({k:,} resamples each)") as report, \
        guard("Could not compute the intervals"):
    for i, method in enumerate(methods if report is not None else []):  # the metrics of a method share the draws
        def tick(fraction, i=i):
            report((i + fraction) / len(methods))
            stop_at((i + fraction) / len(methods))
        found.update({(row["metric"], method): row for row in data.confidence_intervals(
            ds, ctx.key, tuple(ctx.metrics), ctx.human, level, coefficient, method, pool, systems,
            float(confidence), int(k), int(seed), progress=tick)})
rows = [found[j] for j in jobs if j in found]
if len(rows) < len(jobs):
    widgets.finish()
    st.stop()
ceiling, ceiling_note = [], ""
with guard("Could not compute the human ceiling"), st.spinner("Scoring each annotator against the others…"):
    for method in methods:
        part, ceiling_note = data.ceiling_intervals(ds, ctx.key, ctx.human, level, coefficient, method, systems,
                                                    float(confidence), int(k), int(seed))
        ceiling += part
frame = pd.DataFrame(rows + ceiling)
chance, chance_note = None, ""
with guard("Could not compute the chance baseline"), st.spinner("Permuting the metrics' scores…"):
    chance, chance_note = data.chance_groups(ds, ctx.key, tuple(ctx.metrics), ctx.human, level, coefficient, pool,
                                             systems, float(confidence), int(k), int(seed))
frame["method"] = frame["method"].map(widgets.upper)
frame["width"] = frame["high"] - frame["low"]


@st.fragment
def results(frame: pd.DataFrame) -> None:
    key = state.prepare("ci_sort", options=figures.SORTS, fallback="estimate")
    sort = state.commit("ci_sort", st.radio("Sort by", figures.SORTS, key=key, horizontal=True))
    title = f"{coefficient} correlation with {ctx.human}, {level} level, {100 * confidence:g}% intervals"
    event = exports.chart(figures.forest_plot(frame, sort=sort, title=title, chance=chance), key="forest",
                          name=exports.file_name("intervals", ds.id, level, coefficient), on_select="rerun",
                          selection_mode="points")
    # a row of the table below (its selection is in the session before the table is drawn again) or an interval
    rows = examples.selected_rows(st.session_state.get("ci_table"))
    row = str(frame["metric"].iloc[rows[0]]) if rows and rows[0] < len(frame) else None
    metric = examples.choose(list(ctx.metrics), picked=(row, examples.clicked_label(event, list(ctx.metrics))))
    if metric is not None:  # a click on a metric's interval (or the picker) opens the items behind its estimate
        examples.correlation_panel(ds, ctx.key, metric, ctx.human, level, coefficient, pool, systems)
    state.sync_url()


results(frame)
st.caption(
    "Each marker is the correlation on the full data; the bar is its interval. Bootstrap: the "
    f"[{(1 - confidence) / 2:.3g}, {1 - (1 - confidence) / 2:.3g}] percentiles of the **defined** resampled "
    f"correlations (k = {k:,}, seed {seed}); resamples where the correlation is undefined are dropped and counted. "
    "Fisher: tanh(arctanh(r) ± z·c/√(n−b)), with n = systems (system level), the most systems in any input "
    "(input level) or cells (global level). With pool 'all', the metric's inputs are resampled separately "
    "from the human's."
)
if coefficient == "tie-calibrated-accuracy":
    st.caption(text.epsilon_note(level) + " Each metric's epsilon on the full data is on the Correlations page.")
st.caption(escape_markdown(text.chance_sentence(chance, symbol=coefficient, confidence_level=confidence,
                                                note=chance_note)))
if ceiling_note:
    st.caption(escape_markdown(text.sentence(f"No human-ceiling rows: {ceiling_note}")))
if ceiling:
    what, negative = text.ceiling_sentences(ds.annotators_are(ctx.human), ds.vocabulary.outputs,
                                            [(r["metric"], r["estimate"]) for r in ceiling], level=level)
    st.caption("*human ceiling* rows (grey, at the bottom), with the metrics' interval method: "
               + escape_markdown(what))
    if negative:
        st.warning(escape_markdown(negative), icon=":material/warning:")
table = frame[["metric", "method", "estimate", "low", "high", "width", "n_defined", "n_resamples", "n"]].copy()
analytic = table["method"] == "FISHER"  # no resampling: show no resample counts rather than "0 defined of 0"
table["n_defined"] = table["n_defined"].astype("Int64").mask(analytic)
table["n_resamples"] = table["n_resamples"].astype("Int64").mask(analytic)
table["n"] = pd.to_numeric(table["n"]).astype("Int64")  # empty on the human-ceiling rows
frames.dataframe(table, hide_index=True, width="stretch", key="ci_table", on_select="rerun",
                 selection_mode="single-row", selection_default=examples.table_selection(list(table["metric"])),
                 column_config={c: st.column_config.NumberColumn(c, format="%.4f")
                            for c in ("estimate", "low", "high", "width")}
             | {"n_defined": st.column_config.NumberColumn("defined resamples", help=(
                 "Bootstrap resamples where the correlation is defined (the percentiles use these); the others, e.g. "
                 "a resample where every system ties, are dropped and counted. Empty for FISHER: nothing is "
                 "resampled.")),
                "n_resamples": st.column_config.NumberColumn("resamples (k)", help="Empty for FISHER (analytic)."),
                "n": st.column_config.NumberColumn("n", help="Points behind the estimate: systems (system level), "
                                                             "inputs (input level) or cells (global level).")})
undefined = frame[frame["low"].isna()]
if not undefined.empty:
    st.warning(escape_markdown("No interval (estimate or every resample undefined): "
                               + ", ".join(f"{m} ({meth})" for m, meth in zip(undefined["metric"],
                                                                              undefined["method"]))))
exports.table_download(frame, exports.file_name("intervals", ds.id, level, coefficient),
                       title=f"Confidence intervals ({100 * confidence:g}%, k = {k:,}, seed {seed})")

widgets.finish()
