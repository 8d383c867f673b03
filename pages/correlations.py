"""Correlations: how well each chosen metric agrees with a human dimension."""

import streamlit as st

from metaeval_ui import data, examples, exports, figures, state, text, widgets
from metaeval_ui.errors import escape_markdown, guard

st.title("Correlations with human judgments")

ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
level, coefficient, pool, systems = widgets.correlation_settings(ds)

key = state.prepare("corr_layout", options=("chosen", "all"), fallback="chosen")
layout = state.commit("corr_layout", st.radio(
    "Human dimensions", ("chosen", "all"), key=key, horizontal=True,
    format_func=lambda v: "the chosen one" if v == "chosen" else "all of this dataset's"))

if not widgets.need_measures(ctx):
    widgets.finish()
    st.stop()

humans = (ctx.human,) if layout == "chosen" else tuple(ds.human_measures)
table = None
with guard("Could not compute the correlations"):
    table = data.correlation_table(ds, ctx.key, tuple(ctx.metrics), humans, level, coefficient, pool, systems)
if table is None:
    widgets.finish()
    st.stop()

n_systems = ds.select_systems(systems or None).rated_by(ctx.human).n_systems  # as the statistics (unrated dropped)
explain = {
    "system": f"{text.system_level_measure(coefficient)} the {n_systems} systems' mean scores (metric means over "
              f"the {pool} pool, human means over judged inputs); n = systems with both means.",
    "input": "for every judged input, the correlation across systems; the value is the **mean of the defined "
             "per-input correlations**. n = inputs used; skipped = inputs where it was undefined (fewer than "
             "2 systems scored, or constant scores).",
    "global": "one correlation over every (system, input) cell holding both scores; n = cells used.",
}[level]
st.caption(escape_markdown(f"{coefficient.capitalize()} at the {level} level") + ": " + explain
           + (" Systems: " + escape_markdown(systems) + "." if systems else ""))

calibrated = coefficient == "tie-calibrated-accuracy"
if calibrated:
    st.caption(text.epsilon_note(level))
else:
    table = table.drop(columns="epsilon")  # only the tie-calibrated accuracy has a threshold
view = table.rename(columns={"n_undefined": "skipped"})
shown = (["metric", "human", "estimate"] + (["epsilon"] if calibrated else []) + ["n", "skipped"]
         + (["systems"] if systems else []))
selection = st.dataframe(
    view[shown], hide_index=True, width="stretch", key="corr_table", on_select="rerun", selection_mode="single-row",
    selection_default=examples.table_selection(list(view["metric"]), list(view["human"]), ctx.human),
    column_config={
        "estimate": st.column_config.NumberColumn(f"{coefficient} ({level})", format="%.4f",
                                                  help="empty = undefined (never silently 0)"),
        "n": st.column_config.NumberColumn("n used", help={"system": "systems", "input": "inputs",
                                                            "global": "cells"}[level]),
        "epsilon": st.column_config.NumberColumn("epsilon", format="%.4g",
                                                 help="tie threshold in metric units: |metric difference| <= epsilon "
                                                      "counts as a tie; one value for the whole level"),
        "skipped": st.column_config.NumberColumn("undefined skipped",
                                                 help="input level: inputs whose correlation was undefined"),
    },
)
rows = examples.selected_rows(selection)
row = (view["metric"].iloc[rows[0]], view["human"].iloc[rows[0]]) if rows else None
# a click on a bar (or, with every dimension, on a panel's dot: that dimension)
bar = examples.clicked_pair(st.session_state.get("correlation_bar"), list(ctx.metrics), list(humans))
chosen_metric, against = examples.choose_against(list(ctx.metrics), humans, picked=(row, bar),
                                                 default_human=ctx.human)
if chosen_metric is not None:
    examples.correlation_panel(ds, ctx.key, chosen_metric, against, level, coefficient, pool, systems)
if level == "system":  # one system set, stated once; metrics that could not score all of it are named
    lacking = data.unscored_systems(ds, ctx.key, tuple(ctx.metrics), ctx.human, pool, systems)
    chosen = table[table["human"] == ctx.human]
    note = text.fewer_systems_note(dict(zip(chosen["metric"], chosen["n"])), n_systems, lacking)
    if note:
        st.caption(escape_markdown(note))
undefined = view[view["estimate"].isna()]
if not undefined.empty:
    st.warning(escape_markdown(
        "Undefined (fewer than 2 points or constant scores): " + ", ".join(undefined["metric"].astype(str))))

if layout == "all" and len(humans) > 1:
    st.markdown("**Human dimension x metric**")
    # human dimensions as rows: many dimensions would push metric columns off the right edge
    pivot = table.pivot(index="human", columns="metric", values="estimate").reindex(columns=list(ctx.metrics))
    st.dataframe(pivot, width="stretch", column_config={m: st.column_config.NumberColumn(m, format="%.3f")
                                                        for m in pivot.columns})
    exports.collect("Human dimension x metric", table=pivot.reset_index())

# Uncertainty on every bar: the Overview's own interval (BOOT-BOTH 95%, k = 1,000, seed 0: the same cached calls), so
# the two pages never disagree about zero; Fisher's closed form is compared beside it, and any disagreement named.
def intervals(method: str) -> list[dict]:
    try:
        found = {}
        for h in dict.fromkeys(table["human"]):  # one call per human: the Overview's cached key for its metrics
            ms = tuple(table.loc[table["human"] == h, "metric"])
            rows = data.confidence_intervals(ds, ctx.key, ms, h, level, coefficient, method, pool, systems, 0.95,
                                             1000, 0)
            found.update({(m, h): row for m, row in zip(ms, rows)})
        return [found[m, h] for m, h in zip(table["metric"], table["human"])]
    except ValueError as error:  # e.g. a soft-pairwise-accuracy bootstrap too slow for a page: no whiskers, say why
        return [{"low": None, "high": None, "error": str(error)}] * len(table)


with st.spinner("Bootstrapping the intervals (BOOT-BOTH, k = 1,000)…"):
    bounds = intervals("boot-both")
table = table.assign(low=[b["low"] for b in bounds], high=[b["high"] for b in bounds])
interval_note = ("Whiskers: 95% BOOT-BOTH interval (systems and inputs resampled, k = 1,000, seed 0), the interval of "
                 "the Overview's leaderboard; the Confidence intervals page has the other methods."
                 if "error" not in bounds[0] else text.sentence(f"No whiskers: {bounds[0]['error']}"))
if coefficient in widgets.CORRELATIONS:
    fisher = intervals("fisher")
    split = text.zero_disagreement_sentence(
        [f"{m} ({h})" if len(humans) > 1 else m for m, h in zip(table["metric"], table["human"])],
        zip(table["low"], table["high"]), [(f["low"], f["high"]) for f in fisher],
        shown_label="BOOT-BOTH", other_label="Fisher")
    if split:
        interval_note += (f" Fisher's interval, which treats the {level}-level points as independent and normal and "
                          f"ignores which inputs were judged, disagrees about zero for {split}.")
exports.chart(figures.correlation_bar(table, title=f"{coefficient} correlation, {level} level",
                                      interval_label="95% BOOT-BOTH interval"),
              key="correlation_bar", name=exports.file_name("correlations", ds.id, level, coefficient, pool),
              on_select="rerun", selection_mode="points")
st.caption(escape_markdown(interval_note))
exports.table_download(table, exports.file_name("correlations", ds.id, level, coefficient, pool),
                       title=f"Correlations ({coefficient}, {level} level, {pool} pool)")

widgets.finish()
