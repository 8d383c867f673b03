"""Is my improvement real? How likely humans agree with a metric gain of size d (docs/methods.md sec. 10)."""

import math

import streamlit as st

from metaeval_core.stats.pairs import DELTA_METHODS
from metaeval_core.analyses.practice import HUMAN_TIES
from metaeval_ui.data import practice as dp
from metaeval_ui import examples, exports, state, text, widgets
from metaeval_ui.figures import practice as fp
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.widgets import practice as wpr
from metaeval_ui.errors import escape_markdown, guard

UNITS = "_improvement_units"

st.title("Is my improvement real?")
ctx = widgets.sidebar(metrics=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
metric = wpr.metric_picker("imp_metric", ds, help="The metric in which you measured your gain.")
pool = wa.pool(ds)
systems = wa.systems(ds)
with st.sidebar.expander("Bootstrap band", expanded=False):
    key = state.prepare("imp_method", options=DELTA_METHODS, fallback="boot-both")
    method = state.commit("imp_method", st.selectbox(
        "Resample", DELTA_METHODS, key=key, format_func=widgets.upper,
        help="What the band resamples: systems, judged inputs, or both (TACL 2021 sec. 3)."))
    key = state.prepare("imp_ties", options=HUMAN_TIES, fallback="half")
    ties = state.commit("imp_ties", st.radio(
        "Pairs tied in the human", HUMAN_TIES, key=key, horizontal=True,
        format_func={"half": "count as 1/2", "exclude": "leave out"}.get,
        help="A human tie prefers neither system: worth a coin flip (1/2), or left out."))
    k = wa.bounded_int("imp_k", "Resamples (k)", low=50, high=dp.MAX_IMPROVEMENT_RESAMPLES, default=1000, step=100,
                       reason="the band's ends move by under 0.01 beyond that, while the time grows linearly",
                       container=st)
    seed = wa.seed("imp_seed", container=st)

n_sys = dp.n_systems(ds, systems, ctx.human)
if not wpr.gate(ds, metric, ctx.human, min_systems=3, n_systems=n_sys, why="the curve is fitted to system pairs"):
    widgets.finish()
    st.stop()

gaps = None
with guard("Could not read the metric's system means"):
    gaps = dp.metric_gaps(ds, ctx.key, metric, pool, systems)
if gaps is None or gaps["n"] == 0:
    if gaps is not None:
        st.info("Every pair of systems is tied in this metric: there is no direction to check.")
    widgets.finish()
    st.stop()

# d is in the metric's units: forget it when the units change (another dataset, metric or pool).
ss = st.session_state
if ss.get(UNITS) not in (None, (ds.id, metric, pool)):
    state.put("imp_delta", None)
ss[UNITS] = (ds.id, metric, pool)
default = dp.nice(gaps["median"])
digits = max(0, 2 - math.floor(math.log10(default))) if default > 0 else 3
key = state.prepare("imp_delta", fallback=default, coerce=lambda v: abs(float(v)))
left, right = st.columns([1, 2])
delta = state.commit("imp_delta", left.number_input(
    f"Your metric gain d ({metric})", min_value=0.0, step=float(10 ** -digits * 10) if digits else 1.0,
    format=f"%.{digits}f", key=key,
    help=f"In the metric's own units; its sign does not matter. Default: the median gap between two of this "
         f"dataset's systems ({default:g}); the largest gap is {gaps['max']:.{digits}g}."))
if not delta or not math.isfinite(delta):
    right.info("Type a non-zero gain d.", icon=":material/edit:")
    widgets.finish()
    st.stop()

result = None
with guard("Could not estimate the probability"), st.spinner(f"Fitting the curve, {k:,} bootstrap resamples…"):
    result = dp.improvement(ds, ctx.key, metric, ctx.human, float(delta), pool, systems, method, ties, k, seed)
if result is None:
    widgets.finish()
    st.stop()

p, low, high = result.probability, result.low, result.high
with right:
    c1, c2, c3 = st.columns(3)
    c1.metric("P(humans agree)", "undefined" if math.isnan(p) else f"{p:.0%}",
              help="Fitted share of system pairs this far apart in the metric that the humans order the same way.")
    # "88–100%", not "88% – 100%": the metric's third of the column must hold it at 1280 px (else cut off: "88% –…")
    c2.metric(f"{result.confidence_level:.0%} band",
              "undefined" if math.isnan(low) else f"{100 * low:.0f}–{100 * high:.0f}%",
              help=f"{widgets.upper(method)} percentile band over {result.n_defined:,} of {k:,} resamples.")
    c3.metric("Pairs supporting it", f"{result.n_pairs} of {result.total_pairs}",
              help="Pairs in the isotonic block(s) whose value gives the curve at d.")
    st.caption(escape_markdown(
        f"If a system beats another by {abs(delta):g} {metric}, {ctx.human} judges prefer it "
        f"{'with probability about ' + format(p, '.2f') if not math.isnan(p) else '(undefined)'} "
        f"(band {low:.2f} to {high:.2f}), judging from the {result.total_pairs} system pairs of {ds.id}"
        + (f" ({systems})" if systems else "") + f"; {result.window_pairs} of them differ by between d/2 and 2d."))
if math.isfinite(low) and low == high and p in (0.0, 1.0):
    # A percentile band of zero width ("100% – 100%"): every resample's fit gives the same value, because every pair
    # supporting it agrees (or disagrees). Say what the band cannot: how few pairs that rests on.
    n = max(result.n_pairs, 1)
    bound = 0.025 ** (1 / n)
    exact = f"{100 * bound:.0f}% – 100%" if p >= 0.5 else f"0% – {100 - 100 * bound:.0f}%"
    st.info(f"The band has no width: in every resample all {result.n_pairs} pairs behind the value "
            f"{'agree' if p >= 0.5 else 'disagree'} with the metric. That is not certainty: with {result.n_pairs} "
            f"pairs the exact binomial 95% interval is {exact}.", icon=":material/info:")
if result.extrapolated:
    st.warning(escape_markdown(
        f"d = {abs(delta):g} lies outside the observed gaps (up to {gaps['max']:.4g}): the curve is held constant "
        "there, so this is an extrapolation."), icon=":material/warning:")
elif result.window_pairs < 5:
    st.warning(f"Only {text.count(result.window_pairs, 'pair')} of this dataset "
               f"{'differs' if result.window_pairs == 1 else 'differ'} by about d (between d/2 and 2d): the "
               "estimate leans on the monotone fit more than on data.", icon=":material/warning:")

if result.total_pairs < 20:
    st.caption(f"Only {len(result.system_names)} systems ({result.total_pairs} usable pairs): the curve has few steps "
               "and the band is wide; a dataset with more systems answers this question better.")
labels = [f"{result.system_names[a]} vs {result.system_names[b]}"
          for a, b in zip(result.pair_first, result.pair_second)]
name = exports.file_name("improvement", ds.id, metric, f"d{abs(delta):g}", method, f"seed{seed}")
exports.chart(fp.improvement_figure(
    result.grid, result.curve, result.curve_low, result.curve_high, result.pair_abs_dx, result.pair_agreement,
    delta=delta, probability=p, low=low, high=high, pair_labels=labels, metric=metric, human=ctx.human,
    confidence_level=result.confidence_level), key="improvement", name=name,
    title=f"P(humans agree with a {metric} gain of {abs(delta):g})")

st.markdown(
    "**What the number means.** Every pair of this dataset's systems is a small experiment: the metric says "
    "one system is better by |dx|, and the human means either agree (1), disagree (0) or tie (½). A curve that "
    "never decreases with |dx| (isotonic regression) is fitted to these outcomes and read at your d. The band "
    "redoes everything on bootstrap resamples of systems and/or judged inputs.\n\n"
    "**What it does not mean.** It is not a guarantee, nor a significance test of *your* result: it describes "
    "systems like this dataset's (same kind of inputs, systems and annotation protocol), compared on the "
    f"dataset's {ds.n_judged} judged inputs. Your systems, domain or test set may behave differently, and a "
    "gain measured on few inputs may itself be noise (test your own outputs with a paired bootstrap). With "
    "few system pairs the curve is coarse, and beyond the largest observed gap it is only held constant.")
with st.expander(f"The {result.total_pairs} system pairs behind the curve"):
    frame = dp.pair_frame(result)
    st.dataframe(frame, hide_index=True, width="stretch",
                 column_config={"|dx|": st.column_config.NumberColumn(format="%.4g")})
    exports.table_download(frame, exports.file_name("improvement_pairs", ds.id, metric), label="Download pairs (CSV)",
                           title="System pairs behind the curve")
    examples.system_pair_links([metric], pool=pool, coefficient="pairwise-accuracy",
                               label="These pairs with their outputs (disagreeing with people first):")
widgets.finish()
