"""Ranking stability: how much would a measure's system ranking change with other inputs? (NAACL 2022 Fig. 3)"""

import pandas as pd
import streamlit as st

from metaeval_ui.data import pairs as dp
from metaeval_ui import examples, exports, state, widgets
from metaeval_ui.figures import pairs as fp
from metaeval_ui.widgets import pairs as wp
from metaeval_ui.errors import escape_markdown, guard

st.title("Ranking stability")
ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
_, systems = wp.pool_and_systems(ds, pool=False)
measures = list(ctx.metrics) + ([ctx.human] if ctx.human else [])
if not measures:
    st.info("Pick at least one metric (sidebar); this dataset has no human measure either.",
            icon=":material/touch_app:")
    widgets.finish()
    st.stop()

left, right = st.columns([1, 2])
with left:
    k, seed = wp.resamples("stab_k", "stab_seed", default=200, cap=dp.MAX_STABILITY_RESAMPLES,
                           reason="every resample is repeated for ~19 sample sizes, per measure and pool")
right.caption(
    "For a sample size m: draw two independent sets of m inputs (with replacement) from the measure's pool, "
    "rank the systems by their means on each, and take Kendall τ between the two rankings; repeat k times and "
    "plot the mean ± 1 standard deviation. τ near 1: the ranking hardly depends on which inputs were scored. "
    f"k defaults to 200 here for speed (the paper uses 1,000; the bands are then slightly noisier). Seed {seed}.")

pools = ["judged"] + (["all"] if ds.has_unjudged_pool else [])
groups = {m: [(m, "judged")] + ([(m, "all")] if m in ctx.metrics and "all" in pools else []) for m in measures}
order = sorted(measures, key=lambda m: m != ctx.human)  # the human's curve first: the reference
shown = dp.stability_preview(ds, [groups[m] for m in order], systems, k)
if shown < len(order):
    key = state.prepare("stab_all")
    every = state.commit("stab_all", right.toggle(f"All {len(order)} measures", key=key, help=(
        f"About {dp.stability_seconds(ds, [j for m in order for j in groups[m]], systems, k):.0f} s of resampling.")))
    if not every:
        measures = [m for m in measures if m in order[:shown]]
        right.info(escape_markdown(
            f"First view: {', '.join(order[:shown])} ({shown} of {len(order)} measures: what is computed in "
            f"about {dp.STABILITY_PREVIEW_SECONDS:.0f} s). Switch on 'All {len(order)} measures' for the others, "
            "or pick fewer metrics in the sidebar."), icon=":material/speed:")
jobs = [j for m in measures for j in groups[m] if j[1] == "judged"] + \
    [j for m in measures for j in groups[m] if j[1] == "all"]
frames = []
bar = st.progress(0.0, text="Resampling…")
with guard("Could not compute the stability curves"), st.spinner(f"{len(jobs)} curves, {k:,} resamples per size…"):
    dp.check_stability_size(ds, jobs, systems, k)
    for done, (measure, pool) in enumerate(jobs, start=1):
        frames.append(dp.stability_curve(ds, ctx.key, measure, pool, systems, k, seed))
        bar.progress(done / len(jobs), text=f"{done} of {len(jobs)} curves")
bar.empty()
if len(frames) < len(jobs):
    widgets.finish()
    st.stop()
curves = pd.concat(frames, ignore_index=True)

n_judged = int(curves.loc[curves["pool"] == "judged", "n_inputs"].max())
for pool in pools:  # one full-width row of small multiples per pool (one panel per measure)
    part = curves[curves["pool"] == pool]
    if pool == "judged":
        title = f"Judged inputs: the {n_judged:,} inputs with human scores (linear m)"
    else:
        title = f"All inputs: the {int(part['n_inputs'].max()):,} inputs the metrics scored (log m) — metrics only"
    exports.chart(fp.stability_figure(part, log_x=pool == "all", title=title, human=ctx.human),
                  key=f"stability_{pool}", name=exports.file_name("stability", ds.id, pool))
if "all" not in pools:
    st.caption("This dataset has no unjudged inputs, so only the judged pool is shown (the paper's right-hand "
               "curves need metric scores on the whole test set).")
else:
    st.caption("Human judgments exist for the judged inputs only, so the human measure has no panel in the "
               "all-inputs row. Each panel: one measure's mean τ (line) ± 1 standard deviation (band); grey lines "
               "are the other measures, for comparison.")

last = curves.sort_values("m").groupby(["measure", "pool"], sort=False).tail(1)
table = last[["measure", "pool", "m", "mean", "std", "n_defined"]].rename(columns={"m": "m (largest)"})
st.dataframe(table, hide_index=True, width="stretch",
             column_config={"mean": st.column_config.NumberColumn("mean τ", format="%.3f"),
                            "std": st.column_config.NumberColumn("std τ", format="%.3f"),
                            "n_defined": st.column_config.NumberColumn(
                                "defined resamples", help="resamples where τ was defined (not constant means)")})
undefined = curves[curves["n_defined"] < k]
if not undefined.empty:
    st.warning(escape_markdown("Some resamples had an undefined τ (constant system means) and were dropped: "
                               + ", ".join(sorted(set(undefined["measure"])))))
if ctx.human and ctx.metrics:  # the pairs a metric orders unlike people are what its unstable ranking swaps
    examples.system_pair_links(ctx.metrics)
exports.collect("Stability at the largest sample size", table=table)
exports.table_download(curves, exports.file_name("stability", ds.id, f"k{k}", f"seed{seed}"),
                       title="Ranking stability curves")
widgets.finish()
