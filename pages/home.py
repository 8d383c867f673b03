"""Overview: what metaeval is, and what the chosen dataset holds.

The first page a visitor opens must render fast on a cold browser, and Streamlit loads each element type's
JavaScript the first time it is shown: plotly (~4.7 MB), dataframes (~1.2 MB) and code blocks (~1.5 MB) would
dominate. So this page draws only light elements (text, markdown tables, metrics, page links): no chart,
dataframe/table element, st.code, download button or exports item (which would add the report's download button);
the leaderboard is a markdown table, from the same cached calls as the Confidence and Significance pages.
The citation, per-system
means, score distributions and missing data live on the Dataset page (pages/dataset.py).
"""

import streamlit as st

from metaeval_core.stats.pairs import closest_upper
from metaeval_ui import data, examples, figures, navigation, state, tables, text, widgets
from metaeval_ui.errors import escape_markdown, guard
from metaeval_ui.text import epsilon_note, glossary
from metaeval_ui.widgets.progress import refused

FEW_PAIRS = 10  # below this many pairs, one pair moves Kendall's tau by more than 0.2: warn instead of headlining
NEXT = (  # (page file, what it answers); pages this build does not register are left out
    ("pages/dataset.py", "citation, per-system means, score distributions and missing data"),
    ("pages/correlations.py", "how well each metric agrees with the human judgments, at three levels"),
    ("pages/confidence.py", "how certain those correlations are: bootstrap and Fisher intervals"),
    ("pages/significance.py", "whether one metric really beats another: pairwise tests"),
    ("pages/average.py", "which metric is best overall, averaged over several human dimensions or datasets"),
    ("pages/pairs.py", "agreement on the close system pairs researchers actually compare"),
    ("pages/improvement.py", "how likely people agree with a metric gain of a given size"),
    ("pages/judges_leaderboard.py", "LLM judges' A-or-B verdicts against people's: agreement, biases, rankings"),
)

st.title("metaeval — can I trust this evaluation metric?")
st.markdown(
    "metaeval **meta-evaluates** automatic metrics for text generation (summarization, translation, story "
    "generation, …): it measures how well a metric's scores agree with human judgments of the same outputs "
    "(correlations at the system, input and global levels), how certain those correlations are (confidence "
    "intervals) and whether one metric is really better than another (significance tests), following Deutsch, "
    "Dror & Roth (TACL 2021, NAACL 2022)."
)

ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
level, coefficient, pool, systems = widgets.correlation_settings(ds)

st.header(escape_markdown(ds.title or ds.id))
# Lead with the answer: the leaderboard (as the papers' tables) and, beside it, the NAACL 2022 headline: a metric that
# ranks all systems well can be far less reliable on the close pairs that researchers actually compare.
if ctx.human and ctx.metrics:
    from metaeval_ui.data import pairs as data_pairs

    board_col, headline_col = st.columns([3, 2], gap="large")
    k = int(state.get("ov_k"))  # 1,000 unless a refusal's lighter-setting button chose fewer (docs/methods.md 16.5)
    with board_col, guard("Could not compute the leaderboard"), st.spinner("Ranking the metrics…"):
        if not refused(data.leaderboard_decision(ds, ctx.key, tuple(ctx.metrics), ctx.human, level, coefficient, pool,
                                                 systems, k), k_name="ov_k", metrics=ctx.metrics):
            board = data.leaderboard(ds, ctx.key, tuple(ctx.metrics), ctx.human, level, coefficient, pool, systems, k)
            name = {"pearson": "Pearson r", "spearman": "Spearman ρ",
                    "kendall": "Kendall τ"}.get(coefficient, coefficient)
            st.subheader(f"Leaderboard: {name} with {escape_markdown(ctx.human)}, {level} level")
            st.markdown(tables.leaderboard_markdown(board, coefficient))
            st.caption(escape_markdown(
                text.clause(board.attrs["board"].rule()) + " (TACL 2021), as the whiskers on Correlations. "
                f"{ds.select_systems(systems or None).rated_by(ctx.human).n_systems} systems"
                + (f" ({systems})" if systems else "") + f", pool '{pool}'. Change the level and coefficient in the "
                "sidebar; details on Confidence intervals and Significance."))
            # A row's examples open on Correlations (same view), light page links rather than a selectable table.
            examples.links([("pages/correlations.py", str(m), {"ex_metric": str(m)})
                            for m in board.loc[board["kind"] == "metric", "metric"]], label="Examples behind a row:")
            if coefficient == "tie-calibrated-accuracy":
                st.caption("ε: " + epsilon_note(level))
            if (board["kind"] == "chance").any():
                st.caption(f"*chance*: the same coefficient for a metric whose scores are randomly permuted (mean "
                           f"of {max(k, 40):,} permutations; bracket: their central 95%; docs/methods.md sec. 12). A "
                           "metric inside that range does no better than random scores on this dataset.")
            elif board.attrs.get("chance_note"):
                st.caption(escape_markdown(text.sentence(f"No chance row: {board.attrs['chance_note']}")))
            ceiling_rows = board[board["kind"] == "human ceiling"]
            if not ceiling_rows.empty:
                what, negative = text.ceiling_sentences(ds.annotators_are(ctx.human), ds.vocabulary.outputs,
                                                        zip(ceiling_rows["metric"], ceiling_rows["estimate"]),
                                                        level=level)
                st.caption("*human ceiling*: " + escape_markdown(what))
                if negative:
                    st.warning(escape_markdown(negative), icon=":material/warning:")
            if doubt := text.doubt_sentence(board):
                st.warning(escape_markdown(doubt), icon=":material/help:")
            if separation := board.attrs["board"].separation():  # not separated is not a tie (metaeval_core.wording)
                st.info(escape_markdown(separation), icon=":material/balance:")
    headline_metric = ctx.metrics[0]
    with headline_col, guard("Could not compute the close-pairs headline"):
        # The pool the Realistic pairs page uses (the same sidebar choice), so the two pages give one number.
        pair_rows = data_pairs.pair_table(ds, ctx.key, headline_metric, ctx.human, pool, systems)
        if len(pair_rows) >= 10:
            u20 = closest_upper(pair_rows["abs_dx"], 0.2)  # the Realistic pairs page's 20% band: one definition
            full = data_pairs.delta(ds, ctx.key, headline_metric, ctx.human, pool, systems, 0.0, float("inf"))
            close = data_pairs.delta(ds, ctx.key, headline_metric, ctx.human, pool, systems, 0.0, u20)
            st.subheader("Headline: close system pairs")
            left, right = st.columns(2)
            left.metric(f"rSYS, all {full['n_pairs']} pairs", figures.fmt(full["estimate"], 2), help=glossary("rSYS"))
            right.metric("rSYS-Δ, closest 20%", figures.fmt(close["estimate"], 2),
                         help=glossary("rSYS-Δ") + f" Here: the closest 20% of pairs, u = {u20:.3g}.")
            if close["n_pairs"] < FEW_PAIRS:
                st.warning(f"Only {text.count(close['n_pairs'], 'system pair')} among the closest 20% "
                           f"({full['n_systems']} systems): one pair changes rSYS-Δ by "
                           f"{2 / max(close['n_pairs'], 1):.2g}, so this number says little. A dataset with more "
                           "systems answers this question.", icon=":material/warning:")
            st.caption(escape_markdown(
                f"{headline_metric} vs {ctx.human}: the system-level Kendall τ on all {full['n_pairs']} pairs, and on "
                f"the {close['n_pairs']} pairs ({close['share_of_pairs']:.0%}) closest in metric score, |Δ| ≤ {u20:.3g}: "
                "the closest 20% in the paper's bins of ⌈10% of the pairs⌉, as on Realistic pairs (Deutsch, Dror & "
                f"Roth, NAACL 2022); metric pool: {pool}."))
            st.page_link("pages/pairs.py", label="Explore realistic pairs", icon=":material/join_inner:")
            examples.links([
                ("pages/correlations.py", f"all {full['n_pairs']} pairs",
                 {"ex_metric": headline_metric, "level": "system", "coefficient": "kendall"}),
                ("pages/pairs.py", "the closest 20%", {"delta_metric": headline_metric, "delta_l": 0.0,
                                                       "delta_u": float(u20), "ex_metric": f"band:{headline_metric}"}),
            ])

st.subheader("About this dataset")
if ds.description:
    st.markdown(escape_markdown(ds.description))
meta = [f"id: {ds.id}", f"version: {ds.version}"] + ([f"licence: {ds.licence}"] if ds.licence else [])
st.caption(escape_markdown(" · ".join(meta)))

counts = tables.overview_counts(ds)
for column, (label, value) in zip(st.columns(len(counts)), counts.items()):
    column.metric(label, f"{value:,}")
st.caption(
    "Judged inputs have human scores; unjudged inputs have only metric scores (a larger pool some analyses can "
    "use for the metric side, NAACL 2022). Human measures: "
    + escape_markdown(", ".join(ds.human_measures) or "none") + "."
)

# Page links, not previews: the details (tables, charts) are one click away on their own pages.
st.subheader("Where to go next")
navigation.page_links(NEXT)

widgets.finish()
