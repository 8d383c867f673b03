"""Leave one system out: does a single system drive the metric-human correlation? (docs/methods.md sec. 10)"""

import math

import streamlit as st

from metaeval_ui.data import practice as dp
from metaeval_ui import examples, exports, state, text, widgets
from metaeval_ui.figures import practice as fp
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.widgets import practice as wpr
from metaeval_ui.errors import escape_markdown, guard

st.title("Leave one system out")
ctx = widgets.sidebar(metrics=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
metric = wpr.metric_picker("infl_metric", ds)
level, coefficient, pool, systems = widgets.correlation_settings(ds, coefficients=widgets.POINT_COEFFICIENTS)
with st.sidebar.expander("Flags and intervals", expanded=False):
    key = state.prepare("infl_threshold", fallback=0.1, coerce=lambda v: min(max(float(v), 0.0), 2.0))
    threshold = state.commit("infl_threshold", st.number_input(
        "Flag a change larger than", min_value=0.0, max_value=2.0, step=0.05, format="%.2f", key=key,
        help="In correlation units: flag a system whose removal moves the correlation by more than this, and by "
             "more than twice what leaving out an ordinary system does (the noise floor, stated under the chart)."))
    key = state.prepare("infl_ci")
    intervals = state.commit("infl_ci", st.toggle(
        "Bootstrap intervals (BOOT-BOTH)", key=key,
        help="Also compute the interval on all systems and on each leave-one-out set; a removal that leaves the "
             "full interval is flagged too. N + 1 bootstraps: slower."))
    k = wa.bounded_int("infl_k", "Resamples (k)", low=50, high=dp.MAX_INFLUENCE_RESAMPLES, default=500, step=100,
                       reason="there are N + 1 intervals to bootstrap", container=st) if intervals else 500
    seed = wa.seed("infl_seed", container=st) if intervals else 0

n_sys = dp.n_systems(ds, systems, ctx.human)
if not wpr.gate(ds, metric, ctx.human, min_systems=3, n_systems=n_sys,
                why="two must remain after leaving one out"):
    widgets.finish()
    st.stop()
if n_sys < 5:
    st.caption(f"With {n_sys} systems, every leave-one-out correlation rests on {n_sys - 1} points: expect large "
               "changes whatever the metric.")

result = None
with guard("Could not compute the leave-one-out correlations"), st.spinner(
        f"{n_sys + 1} correlations" + (f" with {k:,}-resample intervals…" if intervals else "…")):
    result = dp.influence(ds, ctx.key, metric, ctx.human, level, coefficient, pool, systems, float(threshold),
                          bool(intervals), int(k), int(seed))
if result is None:
    widgets.finish()
    st.stop()

frame = dp.influence_frame(result)
flagged = frame[frame["flagged"]]
top = result.most_influential
c1, c2, c3 = st.columns(3)
c1.metric(f"{coefficient} on all {n_sys} systems", "undefined" if math.isnan(result.estimate) else
          f"{result.estimate:.3f}", help=f"{level} level, metric pool {result.pool}")
if intervals:
    c1.caption(f"95% BOOT-BOTH interval [{result.low:.3f}, {result.high:.3f}]")
if top is not None:
    change = float(frame.loc[frame["system"] == top, "change"].iloc[0])
    c2.metric("Most influential system", top, f"{change:+.3f} when left out", delta_color="off")
c3.metric("Decisive systems", f"{len(flagged)} of {n_sys}")

name = exports.file_name("influence", ds.id, metric, level, coefficient)
exports.chart(fp.influence_figure(frame, estimate=result.estimate, threshold=result.limit, low=result.low,
                                  high=result.high, intervals=intervals, coefficient=coefficient, level=level),
              key="influence", name=name, title=f"Change in {coefficient} when each system is left out")
st.caption(escape_markdown(
    f"Each bar: the {coefficient} correlation ({level} level) between {metric} and {ctx.human} recomputed without "
    f"that system, minus the one on all systems. Red: decisive (|change| > {result.limit:.3f}, dashed"
    + (", or the leave-one-out value falls outside the full interval" if intervals else "") + "). "
    + text.decisive_sentence(result, coefficient=coefficient)
    + (f" Whiskers: each leave-one-out {k:,}-resample BOOT-BOTH interval (seed {seed}); grey band: the full one."
       if intervals else "")))
if flagged.empty:
    st.info(f"No single system moves the correlation by more than {result.limit:.3f}"
            + (" or out of the full interval" if intervals else "") + ": the result does not hinge on one system.",
            icon=":material/check_circle:")
else:
    st.warning(escape_markdown(
        "The correlation hinges on " + ", ".join(f"{s} ({c:+.3f})" for s, c in zip(flagged["system"],
                                                                                  flagged["change"]))
        + ". Report the correlation with and without them, and look at what sets them apart (an outlier system "
          "can make a metric look good or bad on its own; Mathur et al., 2020)."), icon=":material/warning:")
examples.system_pair_links([metric], pool=pool, level=level, coefficient=coefficient,
                           label=f"Items behind the {level}-level value on all systems:")
st.dataframe(frame, hide_index=True, width="stretch", column_config={
    "without": st.column_config.NumberColumn(f"{coefficient} without", format="%.4f"),
    "change": st.column_config.NumberColumn("change", format="%+.4f"),
    "low_without": st.column_config.NumberColumn("low", format="%.4f"),
    "high_without": st.column_config.NumberColumn("high", format="%.4f"),
    "flagged": st.column_config.CheckboxColumn("decisive")},
    column_order=["system", "without", "change"] + (["low_without", "high_without"] if intervals else [])
    + ["flagged", "reason"])
exports.table_download(frame, name, title="Leave-one-system-out correlations")
widgets.finish()
