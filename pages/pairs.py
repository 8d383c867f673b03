"""Realistic pairs: does the metric order *close* systems the way humans do? (NAACL 2022 sec. 4)"""

import math

import streamlit as st

from metaeval_core.stats.pairs import DELTA_METHODS, closest_count
from metaeval_ui.data import pairs as dp
from metaeval_ui import examples, exports, figures, state, text, widgets
from metaeval_ui.figures import pairs as fp
from metaeval_ui.widgets import pairs as wp
from metaeval_ui.errors import escape_markdown, guard


st.title("Realistic system pairs: rSYS-Δ(l, u)")
ctx = widgets.sidebar(metrics=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
metric = wp.metric_picker(ds)
pool, systems = wp.pool_and_systems(ds)
if metric is None or ctx.human is None:
    st.info("This page needs an automatic metric and a human measure; "
            + ("this dataset has no metric scores." if metric is None else "this dataset has no human measure."),
            icon=":material/block:")
    widgets.finish()
    st.stop()

args = (ds, ctx.key, metric, ctx.human, pool, systems)
table = None
with guard("Could not compute the system pairs"):
    table = dp.pair_table(*args)
if table is None or table.empty:
    if table is not None:
        st.warning("Fewer than two systems have both a metric and a human mean: there is no system pair.")
    widgets.finish()
    st.stop()
n_total = len(table)

# -- the band [l, u]: moved in share of pairs, kept in the metric's units --
def cut(k: int) -> float:  # the roundest u selecting the closest k tenths (core closest_count, as the Overview)
    return float(table["abs_dx"].max()) if k >= 10 else dp.nice_cut(table["abs_dx"], closest_count(n_total, k / 10))


left, right = st.columns([3, 2])
lo, hi = wp.band_slider(ds.id, metric, table["abs_dx"], default_upper=cut(2), container=left)
right.caption("Quick bands (l = 0), the closest:")
for column, k in zip(right.columns(4), (1, 2, 5, 10)):
    column.button(f"{10 * k}%" if k < 10 else "all", key=f"band_{k}", on_click=wp.set_band, args=(0.0, cut(k)),
                  width="stretch", help=f"u = {cut(k):.4g}: the {closest_count(n_total, k / 10)} of {n_total} system pairs closest in "
                       f"metric score (the paper's {10 * k}% bins; the Overview's headline is the 20% one)")

# -- rSYS-Delta, its interval, the full rSYS --
result = full = None
with guard("Could not compute rSYS-Δ"):
    result, full = dp.delta(*args, lo, hi), dp.delta(*args, 0.0, math.inf)
if result is None:
    widgets.finish()
    st.stop()
summary = st.container()
with st.expander("Interval settings (bootstrap)", expanded=False):
    c1, c2, c3 = st.columns(3)
    key = state.prepare("delta_ci", options=DELTA_METHODS, fallback="boot-inputs")
    method = state.commit("delta_ci", c1.selectbox(
        "Method", DELTA_METHODS, key=key, format_func=widgets.upper,
        help="What is resampled; the close pairs are re-selected from the resampled metric means every time."))
    k, seed = wp.resamples("delta_k", "delta_seed", default=1000, cap=dp.MAX_DELTA_RESAMPLES, container=c2,
                           reason="the bounds move by < 0.01 beyond that while the time grows linearly")
ci = None
with guard("Could not compute the interval"), st.spinner(f"Bootstrapping ({k:,} resamples)…"):
    ci = dp.delta_interval(*args, lo, hi, method, k, seed)
c3.caption(f"95% percentile interval over the defined resamples"
           + (f" ({ci['n_defined']:,} of {ci['n_resamples']:,} defined)" if ci else "") + ".")

estimate, everything = result["estimate"], full["estimate"]
cols = summary.columns([1, 1.4, 1, 1], border=True)
cols[0].metric(f"rSYS-Δ({lo:.4g}, {hi:.4g})", fp.fmt(estimate, 2),
               delta=None if estimate is None or everything is None else f"{estimate - everything:+.2f} vs rSYS",
               help="Kendall τ-b between the metric's and the humans' system orderings, over the pairs in the band.")
low_high = "undefined" if ci is None or not math.isfinite(ci["low"]) else f"[{ci['low']:.2f}, {ci['high']:.2f}]"
cols[1].metric(f"95% CI ({method.upper()})", low_high, help=f"{k:,} resamples, seed {seed}.")
cols[2].metric("rSYS (all pairs)", fp.fmt(everything, 2), help="The standard system-level Kendall τ.")
cols[3].metric("Pairs in band", f"{result['n_pairs']}", help="System pairs with l ≤ |Δ| ≤ u.",
               delta=f"{result['share_of_pairs']:.0%} of {n_total} pairs", delta_color="off", delta_arrow="off")
summary.caption(
    f"{result['concordant']} concordant, {result['discordant']} discordant, {result['ties_metric']} tied in the "
    f"metric only, {result['ties_human']} tied in the humans only, {result['ties_both']} tied in both "
    f"({full['n_systems']} systems; metric pool: {pool}).")
if estimate is None:
    summary.warning("rSYS-Δ is undefined for this band: it holds no pair, or every pair is tied in the metric "
                    "or in the humans. Widen the band.")
elif result["n_pairs"] < 10:
    summary.warning(f"Only {text.count(result['n_pairs'], 'pair')} in the band: the estimate is very noisy (see the interval).")
exports.collect("rSYS-Δ", text=f"{metric} vs {ctx.human}, band [{lo:.4g}, {hi:.4g}]: rSYS-Δ {fp.fmt(estimate, 3)}, "
                f"95% CI ({method.upper()}, {k:,} resamples, seed {seed}) {low_high}; rSYS on all {n_total} pairs "
                f"{fp.fmt(everything, 3)}; {result['n_pairs']} pairs in the band ({result['share_of_pairs']:.0%}).")
# The margin in this metric's own units (not another dataset's "~0.5 ROUGE").
margin = escape_markdown(f", here at most {hi:.3g} in {metric}'s units") if math.isfinite(hi) else ""
st.caption(
    "**What it means.** rSYS-Δ(l, u) is the system-level Kendall τ counted only over the pairs of systems whose "
    "metric scores differ by between l and u: when the metric says one system beats another by such a margin, "
    "how often do the humans agree? With small u it is the question researchers face when a new system improves "
    f"by a small margin{margin} (Deutsch et al., NAACL 2022). **What it does not mean.** It is not a "
    "significance test of any pair, it says nothing about pairs outside the band, it is computed from few pairs "
    "(wide intervals), and a low value can also mean the human judgments themselves cannot separate close systems.")

left, right = st.columns(2)
curve_figure, scatter_figure = dp.band_figures(*args, lo, hi, figures.measure_colour(metric))
name = exports.file_name(ds.id, metric, ctx.human)
exports.chart(curve_figure, key="delta_curve", name="delta-curve_" + name, container=left)
exports.chart(scatter_figure, key="pair_scatter", name="pairs_" + name, container=right)

key = state.prepare("delta_min_pairs", fallback=5, coerce=lambda v: min(max(int(v), 1), 100))
min_pairs = state.commit("delta_min_pairs", int(st.number_input(
    "Smallest number of pairs in a grid cell", min_value=1, max_value=100, step=1, key=key,
    help="Cells with fewer pairs are left blank (the paper uses 5).")))
heatmap, grid = dp.decile_figure(*args, lo, hi, min_pairs)
cell = examples.heatmap_cell(exports.chart(examples.clickable_cells(heatmap), key="decile_heatmap", name="deciles_" + name, on_select="rerun",
                                           selection_mode="points"))
if cell is not None and cell != st.session_state.get("_decile_cell"):  # a click on a cell selects its band
    st.session_state["_decile_cell"] = cell
    columns, rows = fp.decile_labels(grid)
    if cell[0] in columns and cell[1] in rows:
        wp.set_band(float(grid.lower[rows.index(cell[1])]), float(grid.upper[columns.index(cell[0])]))
        st.rerun()
if not grid.exists.all(where=grid.lower[:, None] < grid.upper[None, :]):
    st.caption(escape_markdown(
        f"{n_total} system pairs ({full['n_systems']} systems), bucket size {grid.bucket_size}: cells with fewer "
        f"than {min_pairs} pairs, or with l ≥ u (tied thresholds), do not exist and are left blank."))
st.caption(escape_markdown(text.decile_grid_sentence(grid))
           + " The outlined cell, if any, selects exactly the pairs of the band above.")
exports.table_download(table.assign(in_band=table["abs_dx"].between(lo, hi)), "pairs_" + name,
                       label="Download the system pairs (CSV)", title="System pairs")
examples.band_panel(ds, ctx.key, metric, ctx.human, pool, systems, lo, hi)
widgets.finish()
