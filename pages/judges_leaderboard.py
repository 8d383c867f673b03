"""Judges leaderboard: how well does each LLM judge agree with people, how sure is that, and which judges differ?
(docs/methods.md sec. 18.2-18.4 and 18.7)"""

import streamlit as st

from metaeval_ui import examples, exports, state, widgets
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui.figures import correction_label
from metaeval_ui.judges import data as jd, tables as jt, text as jx, widgets as jw

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
    table = jd.agreement(data, key, pair_set, conv, res)
    ceiling = jd.ceiling(data, key, pair_set, conv, res)
    comparison = jd.comparison(data, key, pair_set, conv, alternative, correction, alpha, res)
    board, chance_frame, forest, heatmap = jd.leaderboard_view(data, key, pair_set, conv, alternative, correction,
                                                               alpha, res)
    found = table
if found is None:
    widgets.finish()
    st.stop()

judges = board[board["kind"] == "judge"]
where = f"{pair_set} ({part.n_items:,} items)" if pair_set else f"all {part.n_items:,} items"
st.markdown(jx.leaderboard_sentence(board, comparison, statistic=conv.statistic))
st.caption(jx.conventions_caption(table, seed=res.seed))
if ceiling is not None and judges["estimate"].notna().any():
    st.caption(escape_markdown(jx.ceiling_sentence(ceiling, float(judges["estimate"].iloc[0]))))
elif part.humans:
    st.caption(escape_markdown(f"No human ceiling: it needs at least three annotators per item; these items have "
                               f"{len(part.humans)}."))
if not chance_frame.empty:
    st.caption(escape_markdown(jx.chance_sentence(chance_frame)))

name = exports.file_name("judges", data.id, pair_set, conv.statistic, conv.order)
exports.chart(forest, key="judges_forest", name=name, title=f"{jx.STATISTICS[conv.statistic]} with people, {where}")
board_rows = jt.board_view(board, conv.statistic)
picked = examples.selected_rows(st.dataframe(
    board_rows, hide_index=True, width="stretch", key="judges_board", on_select="rerun", selection_mode="single-row",
    selection_default=examples.table_selection(list(board_rows["judge"]))))
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
            f"{jx.STATISTICS[conv.statistic]} per {by.replace('_', ' ')} (rows: judges); the p-values against chance "
            f"are {correction_label(correction_name)}-corrected over all {len(subsets):,} subset x judge cells"
            + jx.subset_resolution(len(subsets), res.n_resamples, correction_name) + "."))
        st.dataframe(jt.compact(subsets, jt.VIEWS["subsets"]), hide_index=True, width="stretch",
                     height=min(420, 38 + 35 * len(subsets)))
        exports.table_download(subsets, exports.file_name("judges-subsets", data.id, pair_set, by),
                               label="Download per subset (CSV)", title=f"Agreement per {by}")
jw.other_pages()
widgets.finish()
