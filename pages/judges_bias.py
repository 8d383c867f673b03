"""Judge biases: does a judge's verdict depend on the order of the two outputs, or on their length?
(docs/methods.md sec. 18.5-18.6)"""

import pandas as pd
import streamlit as st

from metaeval_ui import examples, exports, widgets
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui.judges import data as jd, figures as jf, tables as jt, text as jx, widgets as jw

data = jw.begin("Judge biases")
if data is None:
    widgets.finish()
    st.stop()
pair_set = jw.pair_set(data)
conv = jw.conventions(data, statistic=False, order=False)
with st.sidebar.expander("Bias settings", expanded=True):
    cons_invalid = jw._radio("j_cons_invalid", "Invalid verdicts in the consistency", ("wrong", "drop", "tie",
                             "as-verdict"), jx.INVALID, st)
    unit = jw._radio("j_unit", "Length unit", ("words", "characters"), {}, st)
    two_orders = any(len(data.orders_of(j)) == 2 for j in data.judges)
    len_order = jw._radio("j_len_order", "Judge's verdicts for length",
                          ("average", "original", "swapped") if two_orders else ("original",), jx.LENGTH_ORDERS, st,
                          help=None if two_orders else "The judges saw each pair in one order only.")
res = jw.resampling()
key = jd.key_of(data)
part = jd.part(data, pair_set)
where = exports.file_name(data.id, pair_set)

st.subheader("Position")
positional = per_order = lengths = None
picks = [None, None]  # the judge of a clicked row: its flipped items, its items choosing the longer response
with guard("Could not compute the positional bias"), st.spinner("Positional consistency…"):
    positional = jd.positional(data, key, pair_set, cons_invalid, res)
    per_order = jd.per_order(data, key, pair_set, conv, res)
if not positional:
    st.info("The judges of these items saw each pair in one presentation order only: positional consistency, the "
            "first-position preference and accuracy per order need verdicts in both orders.", icon=":material/info:")
else:
    frame = jt.positional(positional)
    dots = pd.concat([jt.dots(frame, "consistency", "same winner in both orders"),
                      jt.dots(frame, "first_position", "chose the output shown first")], ignore_index=True)
    picks[0] = jw.section(
        jx.position_sentence(frame), jx.position_caption(positional[0], seed=res.seed),
        jf.interval_dots(dots, x_title="share", reference=0.5, reference_label="0.5: no preference", x_range=(0, 1)),
        frame, key="judges_position", name=f"judges-position_{where}",
        title="Positional consistency and first-position preference", what="position", view="position", select=True)
    for note in filter(None, (jx.wording.tie_break(p) for p in positional)):
        st.info(escape_markdown(note), icon=":material/info:")
    if per_order is not None and not per_order.empty:
        st.markdown(jx.order_sentence(per_order))
        exports.chart(jf.interval_dots(jt.per_order_dots(per_order), x_title=jx.STATISTICS[conv.statistic]),
                      key="judges_orders", name=f"judges-orders_{where}", title="Accuracy per presentation order")
        st.dataframe(jt.per_order_view(per_order), hide_index=True, width="stretch")
        exports.table_download(per_order, f"judges-orders_{where}", label="Download per order (CSV)",
                               title="Agreement per presentation order")

st.subheader("Length")
if not part.has_texts:
    st.info("These items carry no output texts: the length preference needs them.", icon=":material/info:")
else:
    with guard("Could not compute the length preference"), st.spinner("Length preference…"):
        lengths = jd.length(data, key, pair_set, conv.reference, len_order, unit, res)
if lengths:
    frame = jt.length(lengths)
    picks[1] = jw.section(
        jx.length_sentence(frame), jx.length_caption(lengths[0], seed=res.seed),
        jf.interval_dots(jt.length_dots(frame), x_title="share choosing the longer output", reference=0.5,
                         reference_label="0.5: length-neutral", x_range=(0, 1)),
        frame, key="judges_length", name=f"judges-length_{where}", title="Preference for the longer output",
        what="length preference", view="length", select=True)
views = (("flips",) if positional else ()) + (("longer",) if lengths else ())
if views:
    listed = [*(p.judge for p in positional or ()), *(p.judge for p in lengths or ())]
    examples.judge_panel(part, jd.key_of(part), list(dict.fromkeys(listed)), reference=conv.reference, order=len_order, ties=conv.ties, invalid=conv.invalid, picked=tuple(picks),
                         views=views, pick_views=("flips", "longer"), per_view={"flips": {"invalid": cons_invalid}},
                         unit=unit)
jw.other_pages()
widgets.finish()
