"""Top-k systems: does a metric still rank the best systems well? (Bhandari et al. 2020, docs/methods.md sec. 7)"""

import pandas as pd
import streamlit as st

from metaeval_ui.data import analyses as da
from metaeval_ui import examples, exports, figures, state, widgets
from metaeval_ui.figures import analyses as fa
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.errors import escape_markdown, guard

st.title("Top-k systems")
ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
st.sidebar.markdown("**Correlation**")
coefficient = wa.coefficient()
pool = wa.pool(ds)
systems = wa.systems(ds)

if not widgets.need_measures(ctx):
    widgets.finish()
    st.stop()
n_sys = da.n_systems(ds, systems)
if n_sys < 3:
    wa.stop(escape_markdown(f"The subset {systems or 'all systems'} has {n_sys} systems; top-k needs at least 3."))

result = None
with guard("Could not compute the top-k correlations"), st.spinner("Correlating the top-k systems…"):
    result = da.topk(ds, ctx.key, tuple(ctx.metrics), ctx.human, coefficient, pool, systems)
if result is None:
    widgets.finish()
    st.stop()
frame, ranking, unranked = result

st.caption(
    f"Systems are sorted by their mean **{escape_markdown(ctx.human)}** score; for each k from "
    f"{len(ranking)} down to 3 the {coefficient} correlation of the system means is computed on the top k "
    "systems only. A curve that falls as k shrinks means the metric separates good from bad systems but not "
    "the best systems from each other. Few systems make the right end noisy (3 points!), and a low value "
    "there does not say the metric is wrong about any particular pair."
    + (f" Systems: {escape_markdown(systems)}." if systems else ""))
frame = figures.fisher_bounds(frame, coefficient)  # whiskers: 95% Fisher interval from the k systems
if frame["low"].isna().all():
    st.caption(escape_markdown(f"No whiskers: Fisher's interval does not apply to {coefficient}, or k is too small."))
event = exports.chart(fa.topk_figure(frame, coefficient=coefficient, human=ctx.human), key="topk",
                      name=exports.file_name("topk", ds.id, coefficient, pool), on_select="rerun",
                      selection_mode="points")
# The examples of one k: the pairs among the top k systems only, named in the link so that a shared link reopens them
ks = list(range(len(ranking), 2, -1))
# a clicked point chooses its k (x is k, spread by under 0.5 per metric); a chart keeps its selection across reruns,
# so only a new click counts and the picker can still change k
clicked = next((round(float(p["x"])) for p in examples.selected_points(event) if "x" in p), None)
if clicked != st.session_state.get("_topk_clicked") and clicked in ks:
    state.put("topk_k", clicked)
st.session_state["_topk_clicked"] = clicked
key = state.prepare("topk_k", options=ks, fallback=ks[0], coerce=int)
k_ex = state.commit("topk_k", st.selectbox(
    "Examples among the top k", ks, key=key, format_func=lambda k: f"top {k}" + (" (all)" if k == ks[0] else ""),
    help="The links below open each metric's system pairs among these k systems on Correlations; clicking a point "
         "of the chart chooses its k."))
top = systems if k_ex == ks[0] and not unranked else examples.names_selection(ranking[:k_ex])
at_k = frame[frame["k"] == k_ex].set_index("metric")["estimate"]
examples.links([examples.correlation_link(f"{m} {at_k[m]:.3f}" if pd.notna(at_k.get(m)) else m, m,
                                          coefficient=coefficient, pool=pool, systems=top) for m in ctx.metrics],
               label=f"System pairs among the top {k_ex} (unlike people first):")

undefined = frame[frame["estimate"].isna()]
if not undefined.empty:
    st.warning(escape_markdown(
        f"{len(undefined)} correlations are undefined (constant scores among the top k) and are shown as gaps: "
        + ", ".join(sorted(set(undefined["metric"].astype(str))))))
if unranked:
    st.caption(escape_markdown(f"Left out (no {ctx.human} mean): {', '.join(unranked)}"))

wide = frame.pivot(index="k", columns="metric", values="estimate").sort_index(ascending=False)
wide = wide[[m for m in ctx.metrics if m in wide.columns]]
left, right = st.columns([2, 1])  # the ranking is two short columns; the correlations need the room
with left:
    st.markdown("**Correlation by k**")
    st.dataframe(wide, width="stretch", column_config={m: st.column_config.NumberColumn(m, format="%.3f")
                                                       for m in wide.columns})
with right:
    st.markdown("**Ranking by the human score**")
    st.dataframe({"rank": list(range(1, len(ranking) + 1)), "system": list(ranking)}, hide_index=True,
                 width="stretch")
exports.collect("Ranking by the human score", table=pd.DataFrame({"rank": range(1, len(ranking) + 1),
                                                                  "system": list(ranking)}))
exports.table_download(frame, exports.file_name("topk", ds.id, coefficient, pool),
                       title="Correlation on the top k systems")
widgets.finish()
