"""Correlation matrix: how do the measures (metrics and humans) agree with each other? (docs/methods.md sec. 8)"""

import numpy as np
import pandas as pd
import streamlit as st

from metaeval_ui.data import analyses as da
from metaeval_ui import exports, state, text, widgets
from metaeval_ui.figures import analyses as fa
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.errors import escape_markdown, guard

st.title("Correlation matrix")
ctx = widgets.sidebar(human=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
humans_all = list(ds.human_measures)
wa.reset_on_dataset_change(ds, "matrix", ("mx_humans",))
key = state.prepare("mx_humans", options=humans_all, multi=True, fallback=humans_all)
humans = tuple(state.commit("mx_humans", st.sidebar.multiselect(
    "Human measures", humans_all, key=key, help="Human dimensions to include as rows/columns of the matrix.")))
st.sidebar.markdown("**Correlation**")
level = wa.level()
coefficient = wa.coefficient()
pool = wa.pool(ds, applies=level == "system")
systems = wa.systems(ds)
key = state.prepare("mx_order", options=("given", "clustered"), fallback="given")
order = state.commit("mx_order", st.radio(
    "Order", ("given", "clustered"), key=key, horizontal=True,
    format_func=lambda o: "as chosen (humans last)" if o == "given" else "clustered (similar measures together)",
    help="Clustered: average-linkage hierarchical clustering on 1 − |r|."))

measures = tuple(dict.fromkeys(ctx.metrics + humans))
if len(measures) < 2:
    wa.stop("Pick at least two measures (metrics and/or human measures in the sidebar).")

result = None
with guard("Could not compute the correlation matrix"), st.spinner(f"Correlating {len(measures)} measures…"):
    result = da.matrix(ds, ctx.key, measures, level, coefficient, pool, systems, order)
if result is None:
    widgets.finish()
    st.stop()

explain = {
    "system": "correlation of the per-system mean scores",
    "input": "mean over judged inputs of the per-input correlation across systems",
    "global": "correlation over every (system, input) cell scored by both",
}[level]
st.caption(
    f"{coefficient.capitalize()} at the {level} level ({explain}) for every pair of measures. High values mean two "
    "measures rank the same way; they do not say that either is right — two metrics can agree with each other "
    "and both miss what the humans judge. Blank cells are undefined (constant scores), never 0."
    + (f" Systems: {escape_markdown(systems)}." if systems else ""))
title = f"{coefficient}, {level} level" + (f", {systems}" if systems else "")
exports.chart(fa.matrix_heatmap(result.measures, result.matrix, n=result.n, humans=humans, title=title,
                                coefficient=coefficient),
              key="matrix", name=exports.file_name("matrix", ds.id, level, coefficient))

undefined = [m for i, m in enumerate(result.measures) if np.isnan(result.matrix[i]).all()]
if undefined:
    st.warning(escape_markdown("Undefined for every pair (constant or missing scores): " + ", ".join(undefined)))
if level == "input" and result.n_undefined.any():
    st.caption(f"Input level: up to {text.count(int(result.n_undefined.max()), 'input')} per pair "
               f"{'was' if int(result.n_undefined.max()) == 1 else 'were'} skipped (undefined).")

table = pd.DataFrame(result.matrix, index=list(result.measures), columns=list(result.measures))
with st.expander("Matrix as a table"):
    st.dataframe(table, width="stretch", column_config={m: st.column_config.NumberColumn(m, format="%.3f")
                                                        for m in result.measures})
exports.table_download(pd.DataFrame(result.to_records()), exports.file_name("matrix", ds.id, level, coefficient),
                       title=f"Correlation matrix ({title})")
widgets.finish()
