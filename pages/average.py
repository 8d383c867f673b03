"""Overall average: which metric is best over several human dimensions or datasets? (docs/methods.md sec. 13)"""

import streamlit as st

from metaeval_core.stats.correlation import LEVELS
from metaeval_core.stats.significance import method_label
from metaeval_ui import exports, figures, state, widgets
from metaeval_ui.data import average as du
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.widgets import frames

st.title("Overall average")
ctx = widgets.sidebar(human=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
humans_all = list(ds.human_measures)
wa.reset_on_dataset_change(ds, "average", ("avg_humans", "avg_datasets", "avg_other"))
key = state.prepare("avg_humans", options=humans_all, multi=True, fallback=humans_all)
humans = state.commit("avg_humans", st.sidebar.multiselect(
    "Human dimensions", humans_all, key=key,
    help="Each chosen dimension, at each chosen level, is one task; every metric is averaged over all tasks."))
key = state.prepare("avg_levels", options=LEVELS, multi=True, fallback=["system"])
levels = state.commit("avg_levels", st.sidebar.multiselect("Levels", list(LEVELS), key=key,
                                                           help="One task per dimension and level."))
coefficient = wa.coefficient()
pool = wa.pool(ds, applies="system" in levels)
systems = wa.systems(ds)
with st.sidebar.expander("Tasks on other datasets", expanded=bool(state.get("avg_datasets"))):
    choices = du.other_datasets(ds.id)
    key = state.prepare("avg_datasets", options=choices, multi=True, fallback=[])
    others = state.commit("avg_datasets", st.multiselect(
        "Datasets", choices, key=key, help="Built-in datasets that are here; their tasks use the same levels and "
                                           "coefficient, all their systems (default subset) and judged inputs."))
    options = [f"{d}:{h}" for d in others for h in du.humans_of(d)]
    key = state.prepare("avg_other", options=options, multi=True, fallback=[])
    other_tasks = state.commit("avg_other", st.multiselect(
        "Their human dimensions", options, key=key, disabled=not options,
        help="A metric these datasets lack gets no average (it is listed, never averaged over fewer tasks)."))
with st.sidebar.expander("Resampling", expanded=False):
    k = wa.bounded_int("avg_k", "Resamples (k)", low=50, high=du.MAX_AVERAGE_RESAMPLES, default=1000, step=100,
                       reason="every task is resampled for the interval and again for the tests", container=st)
    seed = wa.seed("avg_seed", container=st)

tasks = tuple((ds.id, h, lv, coefficient, pool, systems or None) for h in humans for lv in levels) + tuple(
    (t.split(":", 1)[0], t.split(":", 1)[1], lv, coefficient, "judged", None) for t in other_tasks for lv in levels)
if not ctx.metrics:
    wa.stop("Pick at least one metric in the sidebar.")
if not tasks:
    wa.stop("Pick at least one human dimension and one level: each pair is a task to average over.")
n_tasks = f"{len(tasks)} task" + ("" if len(tasks) == 1 else "s")

result = None
with guard("Could not compute the averages"), st.spinner(f"Averaging {len(ctx.metrics)} metrics over "
                                                         f"{n_tasks} ({k:,} resamples)…"):
    datasets = du.datasets_for(ds, tasks)
    rule = du.rule_picker(datasets)
    du.check_size(datasets, tasks, len(ctx.metrics), int(k))
    result = du.average(datasets, du.dataset_keys(datasets), tasks, tuple(ctx.metrics), int(k), int(seed), rule)
if result is None:
    widgets.finish()
    st.stop()

n_groups = len(set(result.draw_groups))
st.caption(escape_markdown(
    f"Each metric's {coefficient} over {n_tasks}, averaged by {du.rule_sentence(result)}. Whiskers: "
    f"95% BOOT-BOTH interval of the average ({k:,} resamples, seed {seed}); clusters: metrics no one-sided "
    f"{method_label(result.test)} test on the averages separates (Bonferroni per row, alpha 0.05) share a rank. "
    "Tasks on one dataset share "
    "their resamples, since they share systems and inputs"
    + (f"; the {n_groups} datasets are resampled independently." if n_groups > 1 else ".")))
forest = du.forest_frame(result)
name = exports.file_name("average", ds.id, coefficient, *levels)
if not forest.empty:
    title = f"Average {coefficient} over {n_tasks}" + (", rescaled to [0, 1]" if result.rule == "rescaled" else "")
    exports.chart(figures.forest_plot(forest, title=title), key="average", name=name, title=title)
missing = [(m, r) for m, r in zip(result.metrics, result.reasons) if r]
if missing:
    st.warning(escape_markdown("No average (a metric lacking a task is never averaged over fewer): "
                               + "; ".join(f"{m} ({r})" for m, r in missing)), icon=":material/warning:")
if len(result.tasks) == 1:
    st.info("One task: the average is that task's correlation. Add dimensions, levels or datasets to average over.",
            icon=":material/info:")

frame = du.rows_frame(result)
st.subheader("Averages, clusters and each task's value")
frames.dataframe(frame, hide_index=True, width="stretch", column_config={
    "cluster": st.column_config.NumberColumn("cluster", help="1 = best; metrics in one cluster are not "
                                                              "significantly different on the average"),
    "average": st.column_config.NumberColumn("average", format="%.4f"),
    "low": st.column_config.NumberColumn("low", format="%.4f"),
    "high": st.column_config.NumberColumn("high", format="%.4f"),
    "metric": st.column_config.TextColumn("metric", pinned=True),
    **{label: st.column_config.NumberColumn(short, format="%.3f", help=label)
       for label, short in du.short_labels(result).items()}})
exports.table_download(frame, name, title="Averages over tasks")
with st.expander(f"Tasks ({len(result.tasks)}) and draw groups"):
    st.dataframe(du.tasks_frame(result), hide_index=True, width="stretch")
    st.caption("Tasks of one draw group see the same resampled systems and inputs (and the same swapped cells in "
               "the tests); different groups draw from independent child streams of the seed. docs/methods.md "
               "sec. 13.")
widgets.finish()
