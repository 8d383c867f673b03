"""Judges leaderboard: how well does each LLM judge agree with people, how sure is that, and which judges differ?
(docs/methods.md sec. 18.2-18.4 and 18.7)"""

import streamlit as st

from metaeval_ui import examples, exports, state, widgets
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui.figures import correction_label
from metaeval_ui.judges import data as jd, figures as jf, tables as jt, text as jx, widgets as jw

data = jw.begin("Judges leaderboard")
if data is None:
    widgets.finish()
    st.stop()
pair_set = jw.pair_set(data)
conv = jw.conventions(data)
res = jw.resampling()
with st.sidebar.expander("Judge vs judge test", expanded=False):
    alternative = jw._radio("j_alt", "Alternative", ("two-sided", "greater"),
                            {"two-sided": "two-sided (do they differ?)", "greater": "one-sided (row better?)"}, st)
    correction = jw._radio("j_correction", "Correction", ("holm", "bonferroni", "bh", "none"),
                           {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
                            "none": "none"}, st)
    key = state.prepare("j_alpha", fallback=0.05, coerce=lambda v: min(max(float(v), 0.001), 0.2))
    alpha = state.commit("j_alpha", float(st.number_input("alpha", 0.001, 0.2, step=0.01, key=key)))

key = jd.key_of(data)
part = jd.part(data, pair_set)
if not part.judges_of():
    jw.stop("No judge has a verdict on these items.")
found = None
with guard("Could not compute the agreement"), st.spinner(f"Bootstrap and permutation tests, {res.n_resamples:,}…"):
    result, board, chance_frame, forest, heatmap = jd.leaderboard_view(data, key, pair_set, conv, alternative,
                                                                       correction, alpha, res)
    found = result
if found is None:
    widgets.finish()
    st.stop()
comparison = result.comparison

where = f"{pair_set} ({part.n_items:,} items)" if pair_set else f"all {part.n_items:,} items"
st.markdown(jx.wording.headline(result, mark=lambda name: f"**{escape_markdown(name)}**"))
for warning in result.warnings:
    st.warning(escape_markdown(warning), icon=":material/warning:")
st.caption(escape_markdown(jx.wording.conventions(result)))
for sentence in (jx.wording.ceiling(result), jx.wording.chance(result)):
    if sentence:
        st.caption(escape_markdown(sentence))

name = exports.file_name("judges", data.id, pair_set, conv.statistic, conv.order)
exports.chart(forest, key="judges_forest", name=name, title=f"{jx.STATISTICS[conv.statistic]} with people, {where}")
board_rows = jt.board_view(board, conv.statistic)
picked = examples.selected_rows(st.dataframe(
    board_rows, hide_index=True, width="stretch", key="judges_board", on_select="rerun", selection_mode="single-row",
    selection_default=examples.table_selection(list(board_rows["judge"]))))
st.caption(jt.BOARD_NOTE)
exports.table_download(board, name, label="Download leaderboard (CSV)", title="Judges leaderboard")
examples.judge_panel(part, jd.key_of(part), [*part.judges_of(), *part.humans], reference=conv.reference, order=conv.order,
                     ties=conv.ties, invalid=conv.invalid,
                     picked=board_rows["judge"].iloc[picked[0]] if picked else None)

st.subheader("Which judges differ?")
if comparison is None:
    st.info("One judge on these items: there is no other judge to compare it with.", icon=":material/info:")
else:
    title = heatmap.layout.title.text
    st.caption(escape_markdown(jx.comparison_caption(comparison)))
    if jx.resolution_warning(comparison):
        st.warning(escape_markdown(jx.resolution_warning(comparison)), icon=":material/warning:")
    exports.chart(heatmap, key="judges_pvalues", name=exports.file_name("judges-pvalues", data.id, pair_set),
                  title=title)
    exports.table_download(comparison.to_frame(), exports.file_name("judges-tests", data.id, pair_set),
                           label="Download tests (CSV)", title="Judge vs judge tests")

st.subheader("How much do the raters agree with each other?")
agreeing = None
with guard("Could not compute the agreement between raters"), st.spinner("Rater x rater agreement…"):
    agreeing = jd.raters(data, key, pair_set, conv)
if agreeing is not None:
    matrix, classes = agreeing
    st.caption(escape_markdown(jx.raters_caption(matrix, conv.statistic)))
    exports.chart(jf.rater_matrix(matrix, statistic=conv.statistic, title="Rater x rater agreement"),
                  key="judges_raters", name=exports.file_name("judges-raters", data.id, pair_set),
                  title="Rater x rater agreement")
    exports.table_download(matrix.to_frame(), exports.file_name("judges-raters", data.id, pair_set),
                           label="Download rater x rater agreement (CSV)", title="Rater x rater agreement")
    if not classes.empty:
        st.caption(escape_markdown(jx.classification_caption(classes)))
        st.dataframe(jt.compact(classes, jt.VIEWS["classification"]), hide_index=True, width="stretch")

st.subheader("Could a judge replace the annotators? (alt-test)")
if len(part.humans) < 2:
    st.info(escape_markdown(f"The alt-test leaves out one human annotator at a time: it needs at least two; these "
                            f"items have {len(part.humans)} (a gold label is not a person)."), icon=":material/info:")
else:
    eps = jw.epsilon()
    tested = None
    with guard("Could not run the alt-test"), st.spinner("Alt-test…"):
        tested = jd.alt_test(data, key, pair_set, eps, conv.order)
    jw.alt_test(tested, name=exports.file_name("judges-alt-test", data.id, pair_set))

options = jd.breakdowns(part)
if options:
    st.subheader("Per subset")
    key_by = state.prepare("j_by", options=options, fallback=options[0])
    by = state.commit("j_by", st.selectbox("Break down by", options, key=key_by,
                                           format_func=lambda b: "pair set" if b == "pair_set" else b))
    subsets = None
    with guard("Could not compute the agreement per subset"), st.spinner("Agreement per subset…"):
        subsets = jd.by_subset(data, key, pair_set, by, conv, res)
    if subsets is not None and not subsets.empty:
        correction_name = subsets["correction"].iloc[0]
        st.caption(escape_markdown(
            f"{jx.STATISTICS[conv.statistic]} per {by.replace('_', ' ')} (rows: one per subset and judge); the "
            "one-sided p-values against chance "
            f"are {correction_label(correction_name)}-corrected over all {len(subsets):,} subset x judge cells"
            + jx.subset_resolution(len(subsets), res.n_resamples, correction_name) + "."))
        st.dataframe(jt.compact(subsets, jt.VIEWS["subsets"]), hide_index=True, width="stretch",
                     height=min(420, 38 + 35 * len(subsets)))
        exports.table_download(subsets, exports.file_name("judges-subsets", data.id, pair_set, by),
                               label="Download per subset (CSV)", title=f"Agreement per {by}")
jw.other_pages()
widgets.finish()
