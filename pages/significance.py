"""Significance: is metric X really closer to the humans than metric Y? (TACL 2021 sec. 4)"""

import numpy as np
import streamlit as st

from metaeval_core.stats import significance
from metaeval_ui import data, examples, exports, figures, state, tables, text, widgets
from metaeval_ui.data import practice as practice_data
from metaeval_ui.widgets import practice as practice_widgets
from metaeval_ui.figures import practice as practice_figures
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui.text import format_pvalue, pvalue_decimals, method_description
from metaeval_ui.widgets.progress import STOPPING_NOTE, decided_table

st.title("Pairwise significance: do two metrics match the humans differently?")

ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
level, coefficient, pool, systems = widgets.correlation_settings(ds)

c1, c2, c3, c4 = st.columns(4)
# The dataset's default (WMT's test on WMT data) unless a test is chosen; only tests defined here are offered.
method, _ = practice_widgets.test_picker("sig_method", ds, level, coefficient, container=c1)
key = state.prepare("sig_alternative", options=significance.ALTERNATIVES, fallback="greater")
alternative = state.commit("sig_alternative", c1.radio(
    "Alternative", significance.ALTERNATIVES, key=key, horizontal=True,
    help="greater: H1 is 'row X correlates better than column Y'; two-sided: 'they differ'."))
key = state.prepare("sig_family", options=significance.FAMILIES, fallback="row")
family = state.commit("sig_family", c2.selectbox(
    "Family", significance.FAMILIES, key=key,
    format_func={"row": "rows (TACL Fig. 5)", "table": "table (TACL App. B)",  # short: 1280 px cut them off
                 "none": "none"}.get))
key = state.prepare("sig_correction", options=significance.CORRECTIONS, fallback="bonferroni")
correction = state.commit("sig_correction", c2.selectbox("Correction", significance.CORRECTIONS, key=key,
                                                         format_func=figures.correction_label))
key = state.prepare("sig_alpha", fallback=0.05, coerce=lambda v: min(max(float(v), 0.001), 0.5))
alpha = state.commit("sig_alpha", c3.number_input("alpha", min_value=0.001, max_value=0.5, step=0.01,
                                                  format="%.3f", key=key))
with c4:
    k, seed = widgets.resamples_and_seed("sig_k", "sig_seed", disabled=method == "williams")
if level == "input":
    st.caption("Williams' test is defined at the system and global levels only, so it is not offered here.")

if not widgets.need_measures(ctx, min_metrics=2, what=" to compare them"):
    widgets.finish()
    st.stop()

metrics = tuple(ctx.metrics)
key = data.pairwise_key(ctx.key, metrics, ctx.human, level, coefficient, method, alternative, pool, systems,
                        int(k), int(seed))
table = None
with guard("Could not run the tests"):  # decided before it starts: run, stop early, or refused with what fits
    table = decided_table(ds, key, name="sig", k_name="sig_k")
if table is None:
    widgets.finish()
    st.stop()
if table.stopping == "besag-clifford":
    st.caption(STOPPING_NOTE)

corrected = tables.correct_table(table.pvalue, correction, family)
significant = np.nan_to_num(table.pvalue, nan=1.0) < alpha
still = np.nan_to_num(corrected, nan=1.0) < alpha
label = significance.method_label(method)
n_res = None if method == "williams" else int(k)
hover = [[figures.comparison_sentence(
    x, y, ctx.human, delta=table.delta[i, j], pvalue=table.pvalue[i, j], method=label, n_resamples=n_res,
    significant=bool(significant[i, j]), significant_corrected=bool(still[i, j]), alpha=alpha,
    correction=correction, family=family, alternative=alternative) if i != j else x
    for j, y in enumerate(metrics)] for i, x in enumerate(metrics)]
words = text.significance_wording(table, method_label=label)
clicked = examples.heatmap_cell(exports.chart(
    examples.clickable_cells(figures.pvalue_heatmap(metrics, table.pvalue, significant, still, hover=hover,
                                                    alpha=alpha, title=words.title, row_axis=words.row_axis)),
    key="heatmap", name=exports.file_name("significance", ds.id, level, coefficient, method), on_select="rerun",
    selection_mode="points"))
st.caption(
    f"Cell (X, Y): p-value of {escape_markdown(words.hypothesis)}. **Filled** ({words.cell}): p < {alpha:g}. "
    f"{figures.outline_note(alpha, correction, family)} "
    "Hover a cell for the comparison in words."
)
st.markdown(method_description(method, k=int(k), alternative=alternative))
if table.approximate:
    st.caption("Williams' test assumes normality; with Spearman or Kendall its p-values are approximate.")

records = tables.pairwise_records(metrics, table.delta, table.pvalue, corrected, alpha, table.n_defined,
                                  x_column=words.x_column)
if method == "williams":  # no resampling: a 'defined resamples' count would read as 0 of 0
    records = records.drop(columns=["defined resamples"])
digits = pvalue_decimals([*records["p"], *records["p corrected"]], alpha)
winners = records[records["significant corrected"]]
if winners.empty:
    st.info("No comparison stays significant after the correction." if figures.corrects(correction, family)
            else f"No comparison is significant at alpha = {alpha:g} (no correction).")
else:
    st.markdown(("**Still significant after correction:** " if figures.corrects(correction, family)
                 else "**Significant (no correction):** ") + escape_markdown("; ".join(text.significant_pairs(
        winners[words.x_column], winners["Y"], winners["delta"], alternative=alternative))))
rows = examples.selected_rows(st.dataframe(
    records, hide_index=True, width="stretch", key="sig_table", on_select="rerun", selection_mode="single-row",
    column_config={"delta": st.column_config.NumberColumn("delta", format="%.4f")}
    | {c: st.column_config.NumberColumn(c, format=f"%.{digits}f") for c in ("p", "p corrected")}))
examples.comparison_panel(ds, ctx.key, metrics, ctx.human, level, coefficient, pool, systems, cell=clicked,
                          row=(records[words.x_column].iloc[rows[0]], records["Y"].iloc[rows[0]]) if rows else None)
exports.table_download(records, exports.file_name("significance", ds.id, level, coefficient, method),
                       collect_it=False)
# The report shows p as text with the digits its decision needs (the CSV keeps full precision).
exports.collect(f"Pairwise comparisons ({label}, {correction}, alpha {alpha:g})", table=records.assign(
    **{c: records[c].map(lambda v: format_pvalue(v, alpha)) for c in ("p", "p corrected")}))

# -- significance clusters (docs/methods.md sec. 10): ranks of metrics not significantly different, as in WMT ----------
st.subheader("Significance clusters")
key = state.prepare("clu_raw")
raw = state.commit("clu_raw", st.toggle("Use uncorrected p-values", key=key,
                                        help="Off: a cell counts as significant only after the correction above."))
grouped = practice_data.clusters(table, significant if raw else still, alpha,
                                 "none" if raw else correction)
ranks = practice_data.cluster_frame(grouped)
st.caption(
    f"Metrics sorted by their {coefficient} with {escape_markdown(ctx.human)}, best first. Cluster 1 opens with the "
    "best metric; walking down, a metric joins the current cluster unless a metric already in it is "
    f"significantly better ({label}, p < {alpha:g}"
    + ("" if raw or not figures.corrects(correction, family) else f" after {figures.correction_label(correction)}")
    + "), and then opens the next cluster. So a cluster's first metric is significantly worse than some metric "
    "above, and no metric is beaten by one of its own cluster: within a cluster the data cannot tell the metrics "
    "apart. Clusters are ranks, not equivalence classes (metrics of neighbouring clusters need not differ). "
    f"{len(grouped.clusters)} cluster{'s' if len(grouped.clusters) != 1 else ''} from {len(metrics)} metrics.")
if alternative == "two-sided":
    st.caption("Two-sided tests: a significant cell means 'different', and the higher correlation is the better one.")
chance, chance_note = data.chance_groups(ds, ctx.key, metrics, ctx.human, level, coefficient, pool, systems, 0.95,
                                         int(k), int(seed))  # honest beside estimates; no line on a p-value heatmap
st.caption(escape_markdown(text.chance_sentence(chance, symbol=coefficient, note=chance_note)))
left, right = st.columns([3, 2])
exports.chart(practice_figures.clusters_figure(ranks, coefficient=coefficient, human=ctx.human, chance=chance),
              key="clusters",
              name=exports.file_name("clusters", ds.id, level, coefficient, method), container=left,
              title="Significance clusters")
right.dataframe(ranks, hide_index=True, width="stretch",
                column_config={"estimate": st.column_config.NumberColumn(coefficient, format="%.4f")})
exports.collect("Significance clusters (table)", table=ranks)

widgets.finish()
