"""Systems from verdicts: does a judge rank the compared systems as people do? And, for judges that score each
output, how accurate are the scores as verdicts? (docs/methods.md sec. 18.8-18.9)"""

import streamlit as st

from metaeval_ui import exports, state, widgets
from metaeval_ui.errors import guard
from metaeval_ui.judges import data as jd, figures as jf, tables as jt, text as jx, widgets as jw

data = jw.begin("Systems from verdicts")
if data is None:
    widgets.finish()
    st.stop()
pair_set = jw.pair_set(data)
with st.sidebar.expander("Ranking settings", expanded=True):
    reference = jw.reference(data, st)
    method = jw._radio("j_method", "System score", ("win-rate", "davidson"),
                       {"win-rate": "win rate (a tie is half a win)", "davidson": "Bradley-Terry with ties (Davidson)"},
                       st)
    coefficient = jw._radio("j_coef", "Ranking agreement", ("kendall", "pearson"),
                            {"kendall": "Kendall tau-b", "pearson": "Pearson"}, st)
    order = jw._radio("j_sys_order", "Judge's verdicts", data.order_modes(("original", "swapped", "average")),
                      jx.ORDERS, st)
    key = state.prepare("j_delta", fallback=0.1, coerce=lambda v: min(max(float(v), 0.01), 0.5))
    delta = state.commit("j_delta", float(st.number_input(
        "Close pair: |people's win rate - 0.5| ≤", 0.01, 0.5, step=0.01, key=key,
        help="System pairs the reference finds close: its win rate of one over the other within this of 50%.")))
res = jw.resampling()
key = jd.key_of(data)
part = jd.part(data, pair_set)
where = exports.file_name(data.id, pair_set)

st.subheader("System rankings")
if jd.n_systems(part) < 3:
    st.info(f"These items name {jd.n_systems(part)} system(s): ranking systems and comparing rankings needs at least "
            "three systems (system_a / system_b in an upload).", icon=":material/info:")
else:
    judges = list(part.judges_of())
    key_j = state.prepare("j_judge", options=judges, fallback=judges[0])
    judge = state.commit("j_judge", st.selectbox("Judge whose ranking is drawn", judges, key=key_j))
    found = None
    with guard("Could not rank the systems"), st.spinner("System rankings…"):
        own = jd.ranking(data, key, pair_set, judge, method, order, res)
        ref = jd.ranking(data, key, pair_set, reference, method, "original", res)
        agreement = jd.rank_agreement(data, key, pair_set, reference, method, coefficient, order, res)
        close = jd.close_pairs(data, key, pair_set, reference, delta, order, res)
        found = own
    if found is not None:
        st.markdown(jx.ranking_sentence(own, ref))
        both = jt.rankings(own, ref)
        exports.chart(jf.interval_dots(both, x_title=jx.METHODS[method]), key="judges_ranking",
                      name=f"judges-ranking_{where}_{method}", title=f"System scores: {judge} vs the reference")
        exports.table_download(both, f"judges-ranking_{where}_{method}", label="Download rankings (CSV)",
                               title="System rankings")
        frame = jt.records(agreement).sort_values("estimate", ascending=False, kind="stable")
        picked = jw.section(
            jx.rank_agreement_sentence(frame), jx.rank_caption(agreement[0], seed=res.seed),
            jf.interval_dots(frame.assign(label=frame["judge"], series=coefficient),
                             x_title=f"{jx.COEFFICIENTS[coefficient]} with the reference's ranking", x_range=(-1, 1)),
            frame, key="judges_rank_agreement", name=f"judges-rank-agreement_{where}",
            title="Ranking agreement with the reference", what="ranking agreement", view="ranking", select=True)
        jw.ranking_pairs_panel(data, pair_set, [str(j) for j in frame["judge"]], reference=reference, method=method,
                               order=order, coefficient=coefficient, picked=picked)
        pairs = jt.records(close).sort_values("estimate", ascending=False, kind="stable")
        st.markdown(jx.close_sentence(pairs))
        st.dataframe(jt.compact(pairs, jt.VIEWS["close"]), hide_index=True, width="stretch")
        exports.table_download(pairs, f"judges-close-pairs_{where}", label="Download close pairs (CSV)",
                               title="Agreement on close system pairs")

st.subheader("Scores as verdicts")
scored = None
with guard("Could not compute the score accuracy"), st.spinner("Tie-calibrated accuracy…"):
    scored = jd.scores(data, key, pair_set, reference, "wrong", res)
if not scored:
    st.info("No judge of these items gives each output a score: tie-calibrated accuracy applies to scoring judges "
            "(score_a / score_b in an upload).", icon=":material/info:")
else:
    frame = jt.records(scored).sort_values("estimate", ascending=False, kind="stable")
    jw.section(jx.score_sentence(frame), jx.score_caption(scored[0], seed=res.seed),
               jf.interval_dots(frame.assign(label=frame["judge"], series="tie-calibrated accuracy"),
                                x_title="accuracy", x_range=(0, 1)),
               frame, key="judges_scores", name=f"judges-scores_{where}", title="Tie-calibrated pairwise accuracy",
               what="score accuracy", view="scores")
jw.other_pages()
widgets.finish()
