"""Pairwise comparison F1: can a metric tell which of two systems is significantly better? (docs/methods.md sec. 7)"""

import pandas as pd
import streamlit as st

from metaeval_ui.data import analyses as da
from metaeval_ui import examples, exports, state, widgets
from metaeval_ui.figures import analyses as fa
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.errors import escape_markdown, guard

st.title("Pairwise comparison F1")
ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
systems = wa.systems(ds)
with st.sidebar.expander("Bootstrap", expanded=True):
    k = wa.bounded_int("f1_k", "Resamples (k)", low=10, high=da.MAX_F1_RESAMPLES, default=1000, step=100,
                       reason="time grows linearly in k, while the 95% labels of all but borderline pairs are "
                              "settled well before", container=st)
    seed = wa.seed("f1_seed", container=st)

if not widgets.need_measures(ctx):
    widgets.finish()
    st.stop()
if da.n_systems(ds, systems) < 2:
    wa.stop(escape_markdown(f"The subset {systems} has fewer than 2 systems: there is no pair to compare."))

result = None
with guard("Could not compute the pairwise F1"), st.spinner(f"Paired bootstrap, {k:,} resamples…"):
    result = da.pairwise(ds, ctx.key, tuple(ctx.metrics), ctx.human, systems, k, seed)
if result is None:
    widgets.finish()
    st.stop()

st.caption(
    f"For each of the {result.n_pairs:,} system pairs (A, B), {k:,} paired bootstrap resamples of the judged "
    "inputs: label **A better** if A's mean beats B's in at least 95% of them, **B better** likewise, else "
    f"**no difference** (not significant); human ({escape_markdown(ctx.human)}) and metric labels come from the same "
    "resamples. The score is the support-weighted F1 of the metric's labels against the human's (1 = the "
    "metric reaches the same significant verdict on every pair). It rewards agreeing on *confident* verdicts, "
    f"not on the size of differences; with few inputs most labels are 'no difference'. Seed {seed}."
    + (f" Systems: {escape_markdown(systems)}." if systems else ""))

scores = pd.DataFrame(result.to_records(), columns=["metric", "f1"]).astype({"f1": float})
options = list(result.metrics)
fallback = max(options, key=lambda m: scores.set_index("metric")["f1"].fillna(-1)[m])
key = state.prepare("f1_metric", options=options, fallback=fallback)
chart, controls = st.columns([3, 2])
with controls:
    st.markdown("**Drill down**")
    metric = state.commit("f1_metric", st.selectbox("Per-pair labels of", options, key=key,
                                                    help="The metric whose pair labels are listed below."))
    key = state.prepare("f1_only")
    only = state.commit("f1_only", st.toggle("Disagreements only", key=key))
    labels = da.label_frame(result, metric)
    n_disagree = int((~labels["agree"]).sum()) if not labels.empty else 0
    st.caption(escape_markdown(f"{metric}: weighted F1 {fa.fmt(scores.set_index('metric')['f1'][metric])}; "
                               f"{n_disagree} of {len(labels)} pairs labelled differently from the humans "
                               "(highlighted below)."))
    human_counts = pd.Series(result.human_labels).map(da.LABEL_NAMES).value_counts()
    st.caption("Human labels: " + "; ".join(f"{name} {human_counts.get(name, 0)}"
                                            for name in da.LABEL_NAMES.values()) + ".")
with chart:
    exports.chart(fa.f1_bar(scores, selected=metric), key="f1_bar", name=exports.file_name("pairwise-f1", ds.id),
                  title="Pairwise F1 against the human labels")
shown = labels[~labels["agree"]] if only else labels
if shown.empty:
    st.info("No pair is labelled differently from the humans." if only else "No system pairs.")
else:
    styled = shown.style.apply(
        lambda row: ["background-color: rgba(214, 39, 40, 0.15)" if not row["agree"] else ""] * len(row), axis=1)
    share = {"format": "%.3f"}
    st.dataframe(styled, hide_index=True, width="stretch", height=420, column_config={
        "system_a": "system A", "system_b": "system B", "human_label": "human label",
        "metric_label": "metric label", "agree": st.column_config.CheckboxColumn("same label"),
        "human_share": st.column_config.NumberColumn("human: A wins", help="share of resamples", **share),
        "human_share_b": st.column_config.NumberColumn("human: B wins", **share),
        "metric_share": st.column_config.NumberColumn("metric: A wins", **share),
        "metric_share_b": st.column_config.NumberColumn("metric: B wins", **share)})
f1 = scores.set_index("metric")["f1"]
examples.links([examples.correlation_link(f"{m} {f1[m]:.3f}" if pd.notna(f1.get(m)) else str(m), str(m),
                                          pool="judged", systems=systems) for m in options],
               label="System pairs behind (Correlations, Kendall; ordered unlike people first):")
exports.collect("Pairwise F1 per metric", table=scores)
exports.table_download(pd.DataFrame(result.label_records()),
                       exports.file_name("pairwise", ds.id, f"k{k}", f"seed{seed}"),
                       label="Download pair labels (CSV)", title="Pair labels (human and every metric)")
widgets.finish()
