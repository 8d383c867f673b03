"""Judged vs all: what scoring systems on every test input buys (NAACL 2022 sec. 3, Fig. 2 and 4)."""

import streamlit as st

from metaeval_core._checks import min_resamples_for
from metaeval_ui.data import pairs as dp
from metaeval_ui import examples, exports, state, widgets
from metaeval_ui.figures import pairs as fp
from metaeval_ui.widgets import pairs as wp
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui import text
from metaeval_ui.text import glossary

st.title("Judged vs all inputs")
ctx = widgets.sidebar(metrics=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
metric = wp.metric_picker(ds)
_, systems = wp.pool_and_systems(ds, pool=False)
if metric is None or ctx.human is None:
    st.info("This page needs an automatic metric and a human measure; "
            + ("this dataset has no metric scores." if metric is None else "this dataset has no human measure."),
            icon=":material/block:")
    widgets.finish()
    st.stop()

simulated = not ds.has_unjudged_pool
n_judged = ds.select_systems(systems or None).n_judged if systems else ds.n_judged
left, right = st.columns([1, 2])
with left:
    k, seed = wp.resamples("pools_k", "pools_seed", default=1000, cap=dp.MAX_POOL_RESAMPLES,
                           low=min_resamples_for(0.95),  # its 95% percentile intervals need one per tail
                           reason="six rSYS intervals (3 methods x 2 pools) are bootstrapped per run")
with right:
    if simulated:
        st.warning("**SIMULATION** — this dataset has no unjudged inputs with metric scores. A random subset of "
                   f"m of its {n_judged} judged inputs plays the 'judged' pool (the simulated part) and all "
                   f"{n_judged} judged inputs play the metric's full pool.", icon=":material/science:")
        if n_judged < 3:
            st.info("Too few judged inputs to simulate (at least 3 are needed).")
            widgets.finish()
            st.stop()
        key = state.prepare("pools_m", fallback=max(2, n_judged // 4), coerce=lambda v: min(max(int(v), 2),
                                                                                            n_judged - 1))
        m = state.commit("pools_m", st.slider("Simulated judged inputs (m)", min_value=2, max_value=n_judged - 1,
                                              key=key, help="Drawn at random (with the seed) from the judged inputs."))
    else:
        st.caption("Each system's metric score is its mean over the judged inputs (grey) or over every input the "
                   "metric scored (dark blue); bootstrapping those inputs gives each mean's 95% interval.")

intervals = summary = widths = None
with guard("Could not compare the pools"), st.spinner(f"Bootstrapping ({k:,} resamples per interval)…"):
    if simulated:
        label, intervals, summary, widths = dp.simulation(ds, ctx.key, metric, ctx.human, systems, m, k, seed)
        st.caption(escape_markdown(label))
    else:
        intervals, summary = dp.score_intervals(ds, ctx.key, metric, systems, k, seed, ctx.human)
        widths = dp.width_comparison(ds, ctx.key, metric, ctx.human, systems, k, seed)
if widths is None:
    widgets.finish()
    st.stop()
n_all = int(intervals.loc[intervals["pool"] == "all", "n_inputs"].max())
names = {"judged": f"simulated judged pool (m = {m} of {n_judged})" if simulated else f"judged ({n_judged} inputs)",
         "all": f"all {n_all} judged inputs, as the full pool" if simulated else f"all ({n_all:,} inputs)"}
wider = [widgets.upper(method) for method, r in zip(widths["method"], widths["reduction_percent"]) if not r > 0]
if simulated:  # what a real, larger full pool would do depends on what happened here: say it after the result
    right.caption("Real test sets are ~100x larger than the judged set, so real reductions would be larger than "
                  "these simulated ones." if not wider else
                  f"Here the rSYS interval did not get narrower with all inputs ({', '.join(wider)}): see 'Why can "
                  "an interval get wider' below. A real full pool removes more metric noise than this one, but "
                  "this simulation cannot say by how much.")

tag = " (SIMULATION)" if simulated else ""
st.subheader("Per-system score uncertainty" + tag)
cols = st.columns(3)
cols[0].metric("Average variance reduction", fp.fmt_percent(summary["average_reduction"]), border=True,
               help=glossary("Average variance reduction"))
cols[1].metric("Pooled reduction", fp.fmt_percent(summary["pooled_reduction"]), border=True,
               help=glossary("Pooled reduction"))
cols[2].metric("rSYS CI width with all inputs", fp.width_change_words(widths["reduction_percent"].mean()),
               border=True, help="Mean over the three bootstrap methods of the change charted below"
               + (" (NAACL 2022 finds 51% narrower on SummEval, 16% on REALSumm)." if ds.task == "summarization"
                  else "."))
exports.chart(fp.score_interval_figure(intervals, metric=metric, pool_names=names), key="score_intervals",
              name=exports.file_name("pools-intervals", ds.id, metric))
if summary["n_undefined"]:
    n_undefined = summary["n_undefined"]
    st.caption(f"{text.count(n_undefined, 'system')} {'has' if n_undefined == 1 else 'have'} no defined reduction "
               "(zero or undefined judged variance).")

st.subheader("Width of the rSYS confidence interval" + tag)
exports.chart(fp.width_figure(widths, pool_names=names), key="widths",
              name=exports.file_name("pools-widths", ds.id, metric))
shown = ["method", "width_judged", "width_all", "with all inputs", "estimate_judged", "low_judged", "high_judged",
         "estimate_all", "low_all", "high_all"]
view = widths.assign(method=widths["method"].map(widgets.upper),
                     **{"with all inputs": widths["reduction_percent"].map(fp.width_change_words)})[shown]
# Short headers (the full name in each header's help): the ten columns fit a 1280 px window without scrolling.
st.dataframe(view, hide_index=True, width="stretch", column_config={
    c: st.column_config.NumberColumn(c.replace("estimate", "τ").replace("_", " ").replace("width ", "width, ")
                                     .replace("τ ", "τ, "), format="%.3f", help=c)
    for c in shown[1:] if c != shown[3]})
st.caption(escape_markdown(f"Kendall τ between the system means of {metric} and {ctx.human}") + "; 95% percentile "
           f"intervals, k = {k:,}, seed {seed}. With pool 'all' the metric's and the humans' inputs are resampled "
           "separately. Why an interval can get wider with all inputs: see below.")
examples.links([examples.correlation_link(names[p] if not simulated else f"all {n_judged} judged inputs", metric,
                                          pool=p) for p in (["judged"] if simulated else ["judged", "all"])],
               label="System pairs behind τ (ordered unlike people first):")
shift = (widths["estimate_all"] - widths["estimate_judged"]).abs().max()
with st.expander("Why can an interval get *wider* with all inputs?", expanded=bool(wider)):
    st.markdown(
        "With the judged inputs only, one bootstrap draw picks the **same** inputs for the metric and the humans. "
        f"Where the metric and the humans are both fooled (or both pleased) by the same {ds.vocabulary.outputs}, "
        "their errors move together and cancel in the correlation: the interval looks narrow, and the estimate "
        "is lifted by that shared luck. With all inputs, the metric's inputs are drawn **separately** from the "
        "humans': the metric's own noise shrinks (the variance reduction above), but the shared-input "
        "cancellation is gone too, so the humans' noise on their few judged inputs is no longer matched. The "
        "interval narrows only when the first effect is larger; here the intervals are "
        f"{fp.width_change_words(widths['reduction_percent'].mean())} on average with all inputs (table above)"
        + (" (NAACL 2022 found 51% narrower on SummEval and 16% on REALSumm, whose metrics' scores of single "
           "summaries agree little with people)" if ds.task == "summarization" else "")
        + ". BOOT-SYSTEMS resamples no inputs: its width only follows the estimate and which systems are drawn. "
        + (f"Here the estimate moves by up to {shift:.3f} between the pools, a sign of that shared dependence. "
           if shift >= 0.02 else "")
        + ("In this simulation the full pool is only the judged inputs, so little metric noise is removed."
           if simulated else "docs/methods.md sec. 6.2."))
exports.table_download(view.assign(reduction_percent=widths["reduction_percent"]),  # CSV: the number, + narrower
                       exports.file_name("pools-widths", ds.id, metric), title="rSYS interval widths" + tag)
exports.table_download(intervals, exports.file_name("pools-intervals", ds.id, metric),
                       label="Download per-system intervals (CSV)", title="Per-system intervals" + tag)
widgets.finish()
