"""Annotators: how much do the human judges agree with each other? (SummEval sec. 4-5, docs/methods.md sec. 8)"""

import streamlit as st

from metaeval_ui.data import analyses as da
from metaeval_ui import exports, state, widgets
from metaeval_ui.judges import data as jd, widgets as jw
from metaeval_ui.figures import analyses as fa
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.errors import escape_markdown, guard

st.title("Annotator agreement")
ctx = widgets.sidebar(human=False, metrics=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
systems = wa.systems(ds)
words = ds.vocabulary

if not ds.human_measures:
    wa.stop("This dataset has no human measure.")
if not da.has_annotators(ds):
    wa.stop(escape_markdown(
        f"{ds.title or ds.id} keeps only the mean human score per {words.output}, not each annotator's score, so "
        "inter-annotator agreement cannot be computed here."), icon=":material/group_off:")
if da.n_systems(ds, systems) < 1:
    wa.stop(escape_markdown(f"The subset {systems} has no systems."))

result = None
with guard("Could not compute the annotator agreement"), st.spinner("Krippendorff's alpha…"):
    result = da.annotators(ds, ctx.key, systems)
if result is None:
    widgets.finish()
    st.stop()
alphas, corr, note = result

st.subheader("Krippendorff's alpha (interval)")
st.caption(
    "Agreement among the annotators of each group beyond what chance would give: 1 = identical scores, "
    f"0 = no better than chance, below 0 = systematic disagreement. Each {words.output} is a unit; 'all' pools the "
    "dimensions. High alpha means the annotators are consistent with each other, not that they are right, "
    "and a low alpha bounds how well any metric can correlate with their mean.")
exports.chart(fa.alpha_bar(alphas), key="alpha", name=exports.file_name("alpha", ds.id),
              title="Krippendorff's alpha (interval)")
with st.expander("How units and coders are formed"):
    st.markdown(escape_markdown(note))
undefined = alphas[alphas["alpha"].isna()]
if not undefined.empty:
    st.warning(escape_markdown("Undefined alpha (fewer than 2 units with two scores, or no variation): "
                               + ", ".join(f"{g}.{d}" for g, d in zip(undefined["group"], undefined["dimension"]))))
st.dataframe(alphas, hide_index=True, width="stretch", column_config={
    "alpha": st.column_config.NumberColumn("alpha", format="%.4f"),
    "n_units": st.column_config.NumberColumn("units", help=f"{words.outputs} with at least two scores"),
    "n_values": st.column_config.NumberColumn("values"),
    "n_annotators": st.column_config.NumberColumn("annotator slots")})

st.subheader("Group means against each other")
if corr.empty:
    groups = sorted(set(alphas["group"]))
    shown = (f"One group of annotators rates every dimension ({', '.join(groups)})" if len(groups) == 1
             else f"Annotator groups here: {', '.join(groups)}; no dimension is scored by two of them")
    st.info(escape_markdown(f"{shown}, so there is no comparison between groups."), icon=":material/info:")
else:
    coefficient = wa.coefficient("ann_coef", container=st)
    st.caption(
        f"Correlation of one group's mean score with the other's, per dimension, at each level (global = over "
        f"all {words.outputs}). A low value means the two groups would rank {words.outputs} differently: a metric "
        "cannot please both.")
    exports.chart(fa.group_correlation_bar(corr, coefficient=coefficient), key="groups",
                  name=exports.file_name("groups", ds.id, coefficient),
                  title=" / ".join(dict.fromkeys(f"{a} vs {b}" for a, b in zip(corr["group_a"], corr["group_b"]))))
    wide = corr[corr["coefficient"] == coefficient].pivot(
        index=["dimension", "group_a", "group_b"], columns="level", values="estimate")
    wide = wide[[lv for lv in ("system", "input", "global") if lv in wide.columns]].reset_index()
    st.dataframe(wide, hide_index=True, width="stretch",
                 column_config={lv: st.column_config.NumberColumn(lv, format="%.3f") for lv in ("system", "input",
                                                                                                "global")})
left, right = st.columns(2)
exports.table_download(alphas, exports.file_name("alpha", ds.id), label="Download alphas (CSV)", container=left,
                       title="Krippendorff's alpha per group and dimension")
if not corr.empty:
    exports.table_download(corr, exports.file_name("groups", ds.id), label="Download group correlations (CSV)",
                           container=right, title="Correlation between annotator groups")

st.subheader("Could a metric replace the annotators? (alt-test)")
annotated = da.annotated_measures(ds)
key = state.prepare("human", options=annotated, fallback=annotated[0])
human = state.commit("human", st.selectbox("Annotators of", annotated, key=key,
                                          format_func=lambda m: widgets.measure_label(ds, m)))
metrics = list(ds.metric_measures)
key = state.prepare("metrics", options=metrics, multi=True, fallback=widgets.default_metrics(ds, human))
judges = state.commit("metrics", st.multiselect("Metrics tested as judges", metrics, key=key, format_func=lambda m:
                                                widgets.measure_label(ds, m),
                                                help="On the annotators' scale: scores are compared as numbers."))
eps = jw.epsilon()
alignment = jw._radio("alt_align", "Alignment", ("neg-rmse", "neg-abs"),
                      {"neg-rmse": "negative RMSE", "neg-abs": "negative absolute error"}, st)
persons = False
if ds.annotators_are(human) == "unknown":
    key = state.prepare("alt_persons")
    persons = state.commit("alt_persons", st.toggle(
        "Each annotator is one person throughout", key=key, help="The file does not say; the test leaves out one "
        "person at a time, so it needs the same people throughout, not slots filled by different people."))
tested = None
if not judges:
    st.info("Choose at least one metric to test.", icon=":material/info:")
else:
    with guard("Could not run the alt-test"), st.spinner("Alt-test…"):
        tested = jd.alt_test_scores(ds, ctx.key, human, tuple(judges), alignment, eps,
                                    "persons" if persons else "as-declared")
jw.alt_test(tested, name=exports.file_name("alt-test", ds.id, human))
widgets.finish()
