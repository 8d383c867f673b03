"""Simulations: do the intervals cover, and can the tests tell a better metric? (TACL 2021 sec. 5, docs/methods.md sec. 9)"""

import time

import streamlit as st

from metaeval_core.stats.resampling import CI_METHODS
from metaeval_core.stats.significance import methods_for
from metaeval_ui import data, exports, state, text, widgets
from metaeval_ui.data import analyses as da
from metaeval_ui.figures import analyses as fa
from metaeval_ui.widgets import analyses as wa
from metaeval_ui.errors import escape_markdown

JOBS = "_simulation_jobs"  # session: kind -> SimJob
st.title("Simulations")
ctx = widgets.sidebar(metrics=False)
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
wa.reset_on_dataset_change(ds, "simulations", ("sim_metric", "sim_degrade"))
if not ds.metric_measures or not ctx.human:
    wa.stop("Simulations need an automatic metric and a human measure; this dataset lacks "
            + ("metric scores." if not ds.metric_measures else "a human measure."))
options = list(ds.metric_measures)
fallback = next((m for m in state.get("metrics") or [] if m in options), None) or widgets.default_metrics(ds)[0]
key = state.prepare("sim_metric", options=options, fallback=fallback)
metric = state.commit("sim_metric", st.sidebar.selectbox("Metric", options, key=key,
                                                         help="The metric X whose correlation is simulated."))
st.sidebar.markdown("**Correlation**")
level = wa.level()
coefficient = wa.coefficient()
systems = wa.systems(ds)
with st.sidebar.expander("Simulation size", expanded=True):
    n_resamples = wa.bounded_int("sim_k", "Resamples per interval / test", low=10, high=da.MAX_SIM_RESAMPLES,
                                 default=200, step=50, container=st,
                                 reason="repeated in every trial; bounds and p-values settle well before")
    seed = wa.seed("sim_seed", container=st)
jobs = st.session_state.setdefault(JOBS, {})


def show_job(kind: str, config, run_label: str, start) -> None:
    """Run button (or progress + Stop while running), then the finished or stopped summary for ``config``."""
    job = jobs.get(kind)
    if job is not None and job.running:
        @st.fragment(run_every=1.0)
        def poll():
            if job.done:
                st.rerun()
            elapsed = time.monotonic() - job.started
            st.progress(job.fraction, text=f"{job.fraction:.0%} of {job.config.n_trials:,} trials, {elapsed:.0f} s"
                        + (" (stopping after the current trial…)" if job.stop_requested else ""))
            if st.button("Stop", key=f"stop_{kind}", icon=":material/stop_circle:",
                         help="Ends the run after the current trial and shows the trials done so far."):
                job.stop_requested = True
            if job.config != config:
                st.caption("Running with the previous settings; run again once it has finished.")
        poll()
        return
    if st.button(run_label, key=f"run_{kind}", type="primary", icon=":material/play_arrow:"):
        jobs[kind] = start(ds, config)
        st.rerun()
    if job is None or job.config != config:
        st.info("Nothing runs until you press the button; finished runs are cached.", icon=":material/touch_app:")
        return
    if job.error:
        st.error(escape_markdown(f"The simulation failed: {job.error}"), icon=":material/error:")
    elif job.stopped:
        meta = job.summary["meta"]
        st.warning(f"Stopped after {meta['n_completed']:,} of {meta['n_trials']:,} trials: the numbers below "
                   "summarise those trials only (exactly the first trials of a full run).")


# A keyed tab bar keeps the chosen tab across the reruns of a run (its button, the poll, Stop).
tab_cov, tab_power = st.tabs(["CI coverage", "Power"], key="sim_tab", on_change="rerun")
with tab_cov:
    st.caption(
        "Each trial splits the systems and the judged inputs at random into halves A and B, computes each "
        "method's 95% interval on A, and checks whether the correlation on B falls inside. A method that "
        "generalises to new systems **and** new inputs covers about 95% of the time (TACL Table 1: BOOT-BOTH "
        "comes closest). Coverage is about the method, not about this metric's quality.")
    offered = tuple(m for m in CI_METHODS if m != "fisher" or coefficient in widgets.CORRELATIONS)
    key = state.prepare("sim_methods", options=offered, multi=True, fallback=list(offered))
    methods = tuple(state.commit("sim_methods", st.multiselect("Interval methods", offered, key=key,
                                                               format_func=widgets.upper)))
    trials = wa.bounded_int("sim_trials", "Trials", low=10, high=da.MAX_COVERAGE_TRIALS, default=100, step=50,
                            reason="TACL used 1,000; the coverage's standard error is then about 0.007")
    if not methods:
        st.info("Pick at least one interval method.", icon=":material/touch_app:")
    else:
        config = da.CoverageConfig(ctx.key, metric, ctx.human, level, coefficient, systems, methods, trials,
                                   n_resamples, seed)
        show_job("coverage", config, "Run coverage", da.start_coverage)
        job = jobs.get("coverage")
        if job is not None and job.done and job.summary and job.config == config:
            table, meta = job.summary["table"], job.summary["meta"]
            st.caption(f"{meta['n_completed']:,} trials; halves of {meta['half_systems']} systems × "
                       f"{meta['half_inputs']} inputs; ± is one binomial standard error.")
            view = table.assign(method=table["method"].map(widgets.upper))
            left, right = st.columns([3, 2])
            left.dataframe(view, hide_index=True, width="stretch", column_config={
                "coverage": st.column_config.NumberColumn("coverage", format="%.3f"),
                "se": st.column_config.NumberColumn("± se", format="%.3f"),
                "n_covered": "covered", "n_valid": "valid trials",
                "n_undefined": st.column_config.NumberColumn("undefined", help="trials left out (undefined)"),
                "mean_width": st.column_config.NumberColumn("mean width", format="%.3f")})
            exports.chart(fa.coverage_figure(view, target=meta["confidence_level"]), key="coverage",
                          name=exports.file_name("coverage", ds.id, metric, level), container=right)
            exports.table_download(view, exports.file_name("coverage", ds.id, metric, level), container=left,
                                   title="Coverage of the intervals")

with tab_power:
    st.caption(
        f"A metric Y known to be worse than X: ROUGE-1 on a random k% of each {ds.vocabulary.output}'s tokens (with "
        "texts), or "
        "X plus noise of k times its sd. Power = share of trials in which a test rejects H0 (Y as good as X) at "
        "α = 0.05. Higher is better at equal validity; it says how many judgments a test needs, not which "
        "metric to use.")
    reason = da.token_degrade_possible(ds, metric, data.data_dir_key())
    degrades = ("noise",) if reason else ("tokens", "noise")
    key = state.prepare("sim_degrade", options=degrades, fallback=degrades[0])
    degrade = state.commit("sim_degrade", st.radio(
        "Worse metric", degrades, key=key, horizontal=True,
        format_func=lambda d: "ROUGE-1 on k% of the tokens" if d == "tokens" else "X + noise (sd × k)"))
    if reason:
        st.caption(escape_markdown(text.sentence(f"Token sampling unavailable: {reason}")))
    allowed = list(methods_for(level, coefficient))
    key = state.prepare("sim_tests", options=allowed, multi=True,
                        fallback=[t for t in ("perm-both", "boot-both", "williams") if t in allowed])
    tests = tuple(state.commit("sim_tests", st.multiselect("Tests", allowed, key=key, format_func=widgets.upper,
                                                           help="Williams is undefined at the input level.")))
    ptrials = wa.bounded_int("sim_ptrials", "Trials", low=5, high=da.MAX_POWER_TRIALS, default=20, step=5,
                             reason="every trial runs one test per k and per test method")
    if not tests:
        st.info("Pick at least one test.", icon=":material/touch_app:")
    else:
        config = da.PowerConfig(ctx.key, metric, ctx.human, level, coefficient, systems, tests, degrade, ptrials,
                                n_resamples, seed, data.data_dir_key())
        show_job("power", config, "Run power", da.start_power)
        job = jobs.get("power")
        if job is not None and job.done and job.summary and job.config == config:
            table, meta = job.summary["table"], job.summary["meta"]
            st.caption(escape_markdown(f"r(X, human) = {fa.fmt(meta['estimate_x'])}; {meta['n_completed']:,} "
                                       f"trials; k = {', '.join(f'{k:g}' for k in meta['ks'])}."))
            view = table.assign(test=table["test"].map(widgets.upper))
            exports.chart(fa.power_figure(view, degrade=meta["degrade"], output=ds.vocabulary.output), key="power",
                          name=exports.file_name("power", ds.id, metric, level))
            wide = view.pivot(index="k", columns="test", values="power")
            st.dataframe(wide, width="stretch", column_config={
                t: st.column_config.NumberColumn(t, format="%.2f", help="power") for t in wide.columns})
            exports.table_download(view, exports.file_name("power", ds.id, metric, level), title="Power per k")
widgets.finish()
