"""High-scoring range: do metrics disagree on the best outputs? (Peyrard 2019, docs/methods.md sec. 8)"""

import streamlit as st

from metaeval_ui.data import analyses as da
from metaeval_ui import exports, state, widgets
from metaeval_ui.figures import analyses as fa
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.widgets import frames
from metaeval_ui.errors import escape_markdown, guard

st.title("High-scoring range")
ctx = widgets.sidebar(human=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
out = ds.vocabulary  # what the outputs are called: summaries, stories, translations, ...
wa.reset_on_dataset_change(ds, "highrange", ("hr_baseline",))
pool = wa.pool(ds)
systems = wa.systems(ds)

if len(ds.metric_measures) < 2:
    wa.stop("This analysis compares metrics with each other; this dataset has fewer than two automatic metrics.")
if len(ctx.metrics) < 2:
    wa.stop("Pick at least two metrics in the sidebar.")
names = list(ds.select_systems(systems or None).systems) if systems else list(ds.systems)
if len(names) < 3:
    wa.stop(escape_markdown(f"The subset {systems or 'all systems'} has {len(names)} systems; this analysis needs "
                            "a baseline and at least two others."))

left, middle, right = st.columns(3)
key = state.prepare("hr_baseline", options=names, fallback=da.default_baseline(ds, systems))
baseline = state.commit("hr_baseline", left.selectbox(
    "Baseline system", names, key=key,
    help=f"Per input, the top range keeps the {out.outputs} that beat this system's {out.output} on at least one of "
         "the chosen metrics (Peyrard 2019 used Lead-3 on summarization)."))
with middle:
    n_bins = wa.bounded_int("hr_bins", "Score bins", low=2, high=da.MAX_BINS, default=10,
                            reason=f"finer bins hold too few {out.output} pairs to estimate a share")
key = state.prepare("hr_norm", options=("input", "global"), fallback="input")
normalise = state.commit("hr_norm", right.radio(
    "Normalise scores", ("input", "global"), key=key, horizontal=True,
    format_func=lambda v: "per input" if v == "input" else f"over all {out.outputs}",
    help=f"Min-max scaling of each metric to [0, 1] before averaging into a {out.output}'s score."))

result = None
with guard("Could not compute the high-scoring range"), st.spinner("Comparing metric orderings…"):
    result = da.high_range(ds, ctx.key, tuple(ctx.metrics), baseline, n_bins, normalise, pool, systems)
if result is None:
    widgets.finish()
    st.stop()
taus, curve, summary = result

cols = st.columns(4)
cols[0].metric("inputs", f"{summary['n_inputs']:,}")
cols[1].metric(f"{out.outputs} kept per input", fa.fmt(summary["mean_kept"], 1),
               help=f"of {summary['n_systems'] - 1} non-baseline systems")
cols[2].metric(f"mean τ, all {out.outputs}", fa.fmt(summary["mean_tau_all"]))
cols[3].metric("mean τ, top range", fa.fmt(summary["mean_tau_top"]),
               delta=fa.fmt(summary["mean_tau_top"] - summary["mean_tau_all"])
               if summary["mean_tau_all"] == summary["mean_tau_all"] else None)

st.subheader(f"Metric-metric agreement: all {out.outputs} vs the top range")
st.caption(
    f"Kendall τ between two metrics over the {out.outputs} of one input, averaged over inputs: on all {out.outputs} "
    f"(grey) and on those beating {escape_markdown(baseline)} on at least one chosen metric (dark blue). A drop means "
    "the metrics agree on what is bad but not on what is good. Part of any drop is range restriction (a "
    "narrower range alone lowers τ); it does not say which metric is right.")
if taus["tau_top"].isna().all():
    st.warning(escape_markdown(f"No input keeps two or more {out.outputs} above {baseline}: the top-range τ is "
                               "undefined everywhere. Try a weaker baseline."))
exports.chart(fa.dumbbell(taus, outputs=out.outputs), key="dumbbell",
              name=exports.file_name("highrange", ds.id, baseline),
              title=f"Metric-metric agreement: all {out.outputs} vs the top range")

st.subheader("Disagreement vs score")
st.caption(
    f"For every pair of {out.outputs} of the same input: do the two metrics order them differently? Share of such "
    "pairs by the pair's normalised mean score (thin lines: metric pairs; dark blue: all pairs pooled). In the "
    f"extreme bins the two {out.outputs} are close on every metric, so their order is noisy at both ends: compare "
    "the upper bins with the middle ones, not with the lowest.")
exports.chart(fa.disagreement_figure(curve, output=out.output), key="disagreement",
              name=exports.file_name("disagreement", ds.id, baseline), title="Disagreement vs score")

with st.expander("Tables"):
    frames.dataframe(taus, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f") for c in ("tau_all", "tau_top")})
    frames.dataframe(curve, hide_index=True, width="stretch")
exports.table_download(taus, exports.file_name("highrange", ds.id, baseline),
                       title=f"Kendall τ between metrics: all {out.outputs} vs the top range")
exports.collect("Disagreement by normalised score", table=curve)
widgets.finish()
