"""Normality: are the scores normal enough for Fisher intervals and Williams' test? (docs/methods.md sec. 8)"""

import streamlit as st

from metaeval_ui.data import analyses as da
from metaeval_ui import exports, state, widgets
from metaeval_ui.figures import analyses as fa
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui.text import pvalue_decimals

st.title("Normality of the scores")
ctx = widgets.sidebar(human=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
pool = wa.pool(ds)
systems = wa.systems(ds)
alphas = (0.01, 0.05, 0.1)
key = state.prepare("norm_alpha", options=alphas, fallback=0.05, coerce=float)
alpha = state.commit("norm_alpha", st.sidebar.radio(
    "Significance level α", alphas, key=key, horizontal=True, format_func=lambda a: f"{a:g}",
    help="An input counts as rejecting normality when its Shapiro-Wilk p is below α."))

measures = tuple(dict.fromkeys(list(ctx.metrics) + list(ds.human_measures)))
if not measures:
    wa.stop("This dataset has no measures to test.")

frame = None
with guard("Could not run the Shapiro-Wilk tests"), st.spinner(f"Shapiro-Wilk on {len(measures)} measures…"):
    frame = da.normality(ds, ctx.key, measures, pool, systems, alpha)
if frame is None:
    widgets.finish()
    st.stop()

n_sys = da.n_systems(ds, systems)
st.caption(
    f"Shapiro-Wilk tests of normality. **System means p**: one test on the {n_sys} system means of each measure "
    f"(metrics over the {pool} pool, humans over judged inputs); a small p says the means are not normal. "
    f"**Share rejecting**: the share of inputs whose scores across systems give p < {alpha:g}; about {alpha:g} "
    "is expected when scores are normal. Pearson-based Fisher intervals and Williams' test assume normality; "
    "a high share flags where to prefer the bootstrap or permutation. With few systems the test has little "
    "power: a large p is not evidence of normality."
    + (f" Systems: {escape_markdown(systems)}." if systems else ""))
# Three significant digits, unless a p that close to alpha needs more to sit on the right side of it when shown.
digits = pvalue_decimals(frame["system_p"], alpha)
p_format = "%.3g" if digits == 3 else f"%.{digits}f"
st.dataframe(frame, hide_index=True, width="stretch", column_config={
    "system_p": st.column_config.NumberColumn("system means p", format=p_format, help="empty = undefined"),
    "system_n": st.column_config.NumberColumn("systems"),
    "input_share": st.column_config.ProgressColumn(f"share of inputs with p < {alpha:g}", format="%.2f",
                                                   min_value=0.0, max_value=1.0),
    "input_tested": st.column_config.NumberColumn("inputs tested"),
    "input_skipped": st.column_config.NumberColumn("inputs skipped", help="fewer than 3 scores, or constant")})
exports.chart(fa.normality_bar(frame, alpha=alpha), key="normality", name=exports.file_name("normality", ds.id, pool),
              title="Shapiro-Wilk: share of inputs rejecting normality")
if n_sys < 3:
    st.warning("Fewer than 3 systems: the Shapiro-Wilk test is undefined on system means and per input.")
elif frame["input_tested"].eq(0).any():
    st.warning(escape_markdown("No input could be tested (fewer than 3 scores or constant) for: "
                               + ", ".join(frame.loc[frame["input_tested"] == 0, "measure"])))
exports.table_download(frame, exports.file_name("normality", ds.id, pool), title="Shapiro-Wilk tests per measure")
widgets.finish()
