"""Overall average: which metric is best over several human dimensions or datasets? (docs/methods.md sec. 13)"""

import streamlit as st

from metaeval_core.stats.correlation import LEVELS
from metaeval_core.stats.significance import method_label
from metaeval_ui import data, examples, exports, figures, state, widgets
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
if du.suite_offered(state.get("dataset") or ""):  # WMT23: mt-metrics-eval's suites over every language pair
    options = list(du.SUITE_OPTIONS)
    key = state.prepare("avg_suite", options=options, fallback="wmt23")
    chosen_suite = state.commit("avg_suite", st.sidebar.radio(
        "Tasks", options, key=key, format_func=du.SUITE_OPTIONS.get,
        help="WMT's suites span all language pairs, with mt-metrics-eval's tasks, weights and rescaled average "
             "(docs/methods.md sec. 13.4); 'Tasks chosen below' averages tasks on this pair's data."))
    if chosen_suite != du.SUITE_NONE:
        k = wa.bounded_int("avg_suite_k", "Resamples (k)", low=0, high=du.MAX_SUITE_RESAMPLES, default=0, step=10,
                           reason="every task of every pair is recomputed per resample")
        seed = wa.seed("avg_seed")
        du.reset_suite_test_on_suite_change(chosen_suite)  # WMT24's default spares its minutes-long SPA test
        key = state.prepare("avg_suite_test", options=list(du.SUITE_TEST_OPTIONS),
                            fallback=du.default_suite_test(chosen_suite))
        suite_test = state.commit("avg_suite_test", st.sidebar.radio(
            "Clusters", list(du.SUITE_TEST_OPTIONS), key=key, format_func=du.SUITE_TEST_OPTIONS.get,
            disabled=not k, help="Default: mt-metrics-eval's own test for WMT23; for WMT24 the paired bootstrap, as "
                                 "its SPA permutation test takes ~25 s per draw (docs/methods.md sec. 13.4)."))
        suite_result = None
        with guard("Could not run the suite"), st.spinner("Running the suite on every language pair…"):
            suite_result = du.suite(state.get("dataset"), data.data_dir_key(), chosen_suite, int(k), int(seed),
                                    suite_test)
        if suite_result is not None:
            st.caption(escape_markdown(
                f"{du.SUITE_OPTIONS[chosen_suite]} on {', '.join(suite_result.metric_ids)}: each task's value "
                "rescaled to [0, 1] by its range and weighted as mt-metrics-eval does (AverageCorrs); metrics matched "
                "by base name, each pair with its standard reference; "
                + (f"95% BOOT-BOTH intervals ({k:,} resamples, seed {seed}); clusters by "
                   f"{du.SUITE_TEST_OPTIONS[suite_test]}, {k:,} draws, alpha 0.05." if k else "no intervals (set Resamples above 0 for intervals and "
                                                     "clusters).")))
            frame = du.suite_frame(suite_result)
            frames.dataframe(frame, hide_index=True, width="stretch", column_config={
                "metric": st.column_config.TextColumn("metric", pinned=True),
                **{c: st.column_config.NumberColumn(c, format="%.4f") for c in ("average", "low", "high")},
                **{t.short: st.column_config.NumberColumn(t.short, format="%.3f", help=t.label)
                   for t in suite_result.tasks}})
            exports.table_download(frame, exports.file_name("suite", chosen_suite), title=du.SUITE_OPTIONS[
                chosen_suite])
            st.dataframe(du.suite_tasks_frame(suite_result), hide_index=True, width="stretch")
            examples.suite_links(suite_result, state.get("dataset"), ds.conventions.gold)
        widgets.finish()
        st.stop()
humans_all = list(ds.human_measures)
wa.reset_on_dataset_change(ds, "average", ("avg_humans", "avg_datasets", "avg_other"))
# On WMT data the gold alone (its DA variants are other judgments, some the same ones twice: wmt and wmt-z).
gold = getattr(ds.conventions, "gold", "") if ds.conventions is not None else ""
key = state.prepare("avg_humans", options=humans_all, multi=True, fallback=[gold] if gold in humans_all else humans_all)
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
    "Tasks on one dataset and system set share their resamples, since they share systems and inputs"
    + (f"; the {n_groups} draw groups ({len({t.dataset for t in result.tasks})} dataset(s)) are resampled "
       "independently." if n_groups > 1 else ".")))
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
examples.task_links(result)
with st.expander(f"Tasks ({len(result.tasks)}) and draw groups"):
    st.dataframe(du.tasks_frame(result), hide_index=True, width="stretch")
    st.caption("Tasks of one draw group see the same resampled systems and inputs (and the same swapped cells in "
               "the tests); different groups draw from independent child streams of the seed. docs/methods.md "
               "sec. 13.")
widgets.finish()
