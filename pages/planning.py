"""How many judgments do I need? rSYS interval width and PERM-BOTH power by design (docs/methods.md sec. 10)."""

import math

import pandas as pd
import streamlit as st

from metaeval_core.analyses.practice import PLAN_METHODS
from metaeval_ui.data import practice as dp
from metaeval_ui import exports, state, text, widgets
from metaeval_ui.figures import practice as fp
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.widgets import practice as wpr
from metaeval_ui.errors import escape_markdown, guard

REQUESTED = "_plan_requested"  # the plan key the Run button asked for
TARGETS = {"both": "width and power", "width": "interval width only", "power": "power only"}

st.title("How many judgments do I need?")
st.caption("Subsample this dataset to smaller designs (fewer judged inputs, fewer systems) and see how wide the "
           "interval of the system-level correlation gets, and how often a permutation test still shows the metric "
           "beats a worse one. The smallest design meeting your target is the recommendation.")
ctx = widgets.sidebar(metrics=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
wa.reset_on_dataset_change(ds, "planning", ("plan_inputs", "plan_systems", "plan_versus"))
metric = wpr.metric_picker("plan_metric", ds, help="The metric whose correlation with the humans you will report.")
coefficient = wa.coefficient()
systems = wa.systems(ds)
with st.sidebar.expander("Trials", expanded=False):
    others = [""] + [m for m in ds.metric_measures if m != metric]
    key = state.prepare("plan_versus", options=others, fallback="")
    versus = state.commit("plan_versus", st.selectbox(
        "Power against", others, key=key, format_func=lambda m: m or "the metric, degraded",
        help="Power to show the metric beats this comparator (PERM-BOTH, one-sided, system level)."))
    noise = 1.0
    if not versus:
        key = state.prepare("plan_noise", fallback=1.0, coerce=lambda v: min(max(float(v), 0.05), 10.0))
        noise = state.commit("plan_noise", st.number_input(
            "Degradation (sd)", min_value=0.05, max_value=10.0, step=0.25, key=key,
            help="The copy adds a per-system offset ~ N(0, (noise x sd of the system means)^2): bigger = easier."))
    key = state.prepare("plan_ci", options=PLAN_METHODS, fallback="boot-both")
    ci_method = state.commit("plan_ci", st.radio("Interval", PLAN_METHODS, key=key, horizontal=True,
                                                 format_func=widgets.upper))
    trials = wa.bounded_int("plan_trials", "Trials per design", low=2, high=dp.MAX_PLAN_TRIALS, default=20, step=5,
                            reason="each trial is a bootstrap and a permutation test", container=st)
    k = wa.bounded_int("plan_k", "Resamples per trial", low=50, high=dp.MAX_PLAN_RESAMPLES, default=200, step=50,
                       reason="planning needs rough widths, not precise ones", container=st)
    seed = wa.seed("plan_seed", container=st)

n_sys, n_in = dp.n_systems(ds, systems, ctx.human), dp.n_judged(ds, systems)
if not wpr.gate(ds, metric, ctx.human, min_systems=3, n_systems=n_sys, why="a system-level correlation"):
    widgets.finish()
    st.stop()

left, right = st.columns(2)
options = dp.input_size_options(n_in)
key = state.prepare("plan_inputs", options=options, multi=True, fallback=dp.default_input_sizes(n_in),
                    coerce=lambda v: [int(x) for x in v])
inputs = state.commit("plan_inputs", left.multiselect(
    f"Judged inputs to try (this dataset has {n_in})", options, key=key,
    help="Each design judges this many inputs, drawn without replacement in every trial."))
key = state.prepare("plan_systems", options=list(range(3, n_sys + 1)), multi=True,
                    fallback=dp.default_system_sizes(n_sys), coerce=lambda v: [int(x) for x in v])
sys_sizes = state.commit("plan_systems", left.multiselect(
    f"Systems to try (this dataset has {n_sys})", list(range(3, n_sys + 1)), key=key,
    help="One line per number of systems."))
key = state.prepare("plan_target", options=tuple(TARGETS), fallback="both")
target = state.commit("plan_target", right.radio("Recommend a design for", tuple(TARGETS), key=key,
                                                 horizontal=True, format_func=TARGETS.get))
# Default to a width the largest design can reach (a 0.5 default was often below the floor, so the page opened on
# "Not reached"): the full data's own interval width, plus a fifth, rounded up to the slider's step; stated below.
full_width = dp.full_width(ds, ctx.key, metric, ctx.human, coefficient, ci_method, systems, k, seed)
reachable = min(1.5, max(0.05, math.ceil(1.2 * full_width / 0.05) * 0.05)) if math.isfinite(full_width) else 0.5
key = state.prepare("plan_width", fallback=round(reachable, 2),
                    coerce=lambda v: min(max(round(float(v), 2), 0.05), 1.5))
width = state.commit("plan_width", right.slider(
    "Target interval width", 0.05, 1.5, step=0.05, key=key, disabled=target == "power",
    help=f"Width of the {coefficient} interval you can live with (e.g. 0.5: estimate ± 0.25)."))
if target != "power":
    right.caption(text.target_width_sentence(width, coefficient=coefficient, default=reachable, full_width=full_width))
key = state.prepare("plan_power", fallback=0.8, coerce=lambda v: min(max(round(float(v), 2), 0.5), 0.99))
power = state.commit("plan_power", right.slider("Target power", 0.5, 0.99, step=0.01, key=key,
                                                disabled=target == "width"))
if not inputs or not sys_sizes:
    st.info("Pick at least one number of inputs and one number of systems.", icon=":material/touch_app:")
    widgets.finish()
    st.stop()
n_designs = len(inputs) * len(sys_sizes)
if n_designs > dp.MAX_PLAN_DESIGNS:
    wa.stop(f"{n_designs} designs is too many: pick at most {dp.MAX_PLAN_DESIGNS} (inputs x systems).")

key = dp.plan_key(ctx.key, metric, ctx.human, inputs, sys_sizes, None if target == "power" else float(width),
                  None if target == "width" else float(power), versus, noise, coefficient, ci_method, k, trials, seed,
                  systems)
cost = dp.plan_cost(n_designs, trials, k)
try:
    seconds = dp.plan_seconds(inputs, sys_sizes, trials, k, coefficient)
except ValueError as error:
    wa.stop(str(error), icon=":material/block:")
result = None
if dp.plan_is_cached(key) or cost <= dp.AUTO_RUN_BUDGET or st.session_state.get(REQUESTED) == key:
    with guard("Could not plan"):
        bar = st.progress(0.0, text=f"Subsampling {n_designs} designs…")
        with st.spinner(f"{n_designs} designs x {trials} trials, {k} resamples each…"):
            result = dp.plan(ds, key, progress=lambda f: bar.progress(min(f, 1.0), text=f"{f:.0%} of the designs"))
        bar.empty()
else:  # the request is kept in the session (a callback), so a rerun before the plan starts does not lose it
    st.button(f"Run {n_designs} designs x {trials} trials", type="primary", icon=":material/play_arrow:",
              key="plan_run", on_click=lambda: st.session_state.__setitem__(REQUESTED, key))
    st.info(f"This plan runs {n_designs * trials:,} subsampled bootstraps and permutation tests (about "
            f"{max(1, round(seconds)):,} s here): press Run.", icon=":material/hourglass_empty:")
if result is None:
    widgets.finish()
    st.stop()

rec = result.recommendation
(st.success if rec.reached else st.warning)(escape_markdown(
    ("Recommendation: " + rec.message if rec.reached
     else rec.message[:1].upper() + rec.message[1:]) + "."),
    icon=":material/check_circle:" if rec.reached else ":material/warning:")
table = pd.DataFrame(result.table)
name = exports.file_name("plan", ds.id, metric, coefficient, ci_method, f"seed{seed}")
exports.collect("Recommendation", text=rec.message)
exports.chart(fp.plan_figure(table, target_width=result.target_width, target_power=result.target_power,
                             recommended=(rec.n_inputs, rec.n_systems) if rec.reached else None,
                             confidence_level=result.confidence_level), key="plan", name=name,
              title="Interval width and power by design")
st.caption(escape_markdown(
    f"Each point: {trials} trials drawing that many systems and judged inputs without replacement from {ds.id}"
    + (f" ({systems})" if systems else "") + f". Width: the {widgets.upper(ci_method)} {result.confidence_level:.0%} "
    f"interval of the system-level {coefficient} between {metric} and {ctx.human} ({k} resamples; bars ±1 sd). "
    f"Power: share of trials where PERM-BOTH ({k} permutations, alpha {result.alpha:g}) shows {metric} beats "
    f"{result.versus}. The recommendation is the design with the fewest judged cells (inputs x systems) that meets "
    "the target together with every larger design in the table (a lone cell meeting it below a larger one that "
    "misses it is Monte-Carlo noise); nothing beyond the dataset's size is extrapolated.")
    + (" With BOOT-BOTH the width has a floor set by the number of systems: more inputs cannot remove it."
       if ci_method == "boot-both" else ""))
st.dataframe(table, hide_index=True, width="stretch", column_config={
    "n_inputs": "inputs", "n_systems": "systems",
    "width_mean": st.column_config.NumberColumn("mean width", format="%.3f"),
    "width_sd": st.column_config.NumberColumn("width sd", format="%.3f"),
    "power": st.column_config.NumberColumn("power", format="%.2f"),
    "estimate_mean": st.column_config.NumberColumn(f"mean {coefficient}", format="%.3f"),
    "n_trials": "trials", "n_width_defined": "defined widths"})
exports.table_download(table, name, label="Download plan (CSV)", title="Designs")
widgets.finish()
