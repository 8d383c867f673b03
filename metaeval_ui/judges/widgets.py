"""The LLM-judges pages' own sidebar: a pairwise dataset (built-in or an uploaded verdict file), its pair set and the
agreement conventions, every choice kept in the URL through :mod:`metaeval_ui.state`."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from metaeval_core._paths import shell_command
from metaeval_core.judges import INVALID_CONVENTIONS, ORDER_MODES, STATISTICS, TIE_CONVENTIONS, PairwiseData
from metaeval_core.wording import ranking_pairs_sentence

from metaeval_ui import exports, state
from metaeval_ui.errors import EXPECTED, escape_markdown, guard, message_of
from metaeval_ui.judges import data as jd, tables as jt
from metaeval_ui.judges.text import INVALID, ORDERS, STATISTICS as STAT_NAMES, TIES
from metaeval_ui.navigation import JUDGES_PAGES, ensure_navigation_mode, page_links
from metaeval_ui.widgets import _short_title

UPLOAD_OPTION = "__upload__"
_UPLOADS = "_judges_uploads"  # session-only: dataset id -> PairwiseData
_REJECTED = "_judges_upload_rejected"  # (file name, the core's message)
_ATTACHED = "_judges_attached"  # session-only: built-in dataset id -> its data with the user's judges attached
_LINK_MISSING = "_judges_link_missing"  # the upload id a link named, not loaded in this session
MAX_UPLOAD_MB = 50
PAGES = JUDGES_PAGES
FORMAT_HELP = ("Long CSV/TSV or JSON Lines, one verdict per row: item, system_a, system_b, rater, verdict (A, B or "
               "tie; anything else is kept as invalid), optionally order (original/swapped), score_a, score_b, kind "
               "(human/gold/judge), pair_set, input, output_a, output_b.")


def _uploads() -> dict[str, PairwiseData]:
    return st.session_state.setdefault(_UPLOADS, {})


def _on_upload() -> None:
    file = st.session_state.get(state.widget_key("j_upload"))
    st.session_state.pop(_REJECTED, None)
    if file is None:
        return
    raw = file.getvalue()
    try:
        if len(raw) > MAX_UPLOAD_MB * 1024 * 1024:
            raise ValueError(f"larger than {MAX_UPLOAD_MB} MB")
        loaded = jd.parse_upload(raw, file.name)
    except EXPECTED as error:
        st.session_state[_REJECTED] = (file.name, message_of(error))
        return
    uploads = _uploads()
    while len(uploads) >= jd.MAX_UPLOADS:
        uploads.pop(next(iter(uploads)))
    uploads[loaded.id] = loaded
    state.put("j_dataset", loaded.id)


def _label(choices: dict, uploads: dict, key: str) -> str:
    if key == UPLOAD_OPTION:
        return "Upload verdicts (CSV / JSONL)…"
    if key in uploads:
        return f"Uploaded: {uploads[key].title or key}"
    choice = choices.get(key)
    return key if choice is None else f"{_short_title(choice.title)} [{key}]" + ("" if choice.available else
                                                                              " — unavailable")


def rejected_sentence(name: str, message: str) -> str:
    """One sentence: the file and the first clause of the core's message."""
    head, _, problem = message.partition(": ")
    problem = (problem or head).split("; ", 1)[0].strip().rstrip(". ")
    return f"{name} was not loaded: {problem}."


def dataset_picker() -> PairwiseData | None:
    """The pairwise dataset of the judges pages, or None (with the reason shown)."""
    data_dir = jd.data_dir_key()
    choices = {}
    with guard("Could not list the pairwise datasets"):
        choices = {c.id: c for c in jd.choices(data_dir)}
    uploads = _uploads()
    options = [*choices, *uploads, UPLOAD_OPTION]
    if not state.is_set("j_dataset") and jd.is_pairwise(state.get("dataset")):
        state.put("j_dataset", state.get("dataset"))  # a link made with ?dataset=pandalm
    wanted = state.get("j_dataset")
    if wanted and str(wanted).startswith(jd.UPLOAD_PREFIX) and wanted not in uploads:
        st.session_state[_LINK_MISSING] = str(wanted)
    default = next((c.id for c in choices.values() if c.available), UPLOAD_OPTION)
    key = state.prepare("j_dataset", options=options, fallback=default)
    labels = {k: _label(choices, uploads, k) for k in options}  # fixed now: a format_func reads no session state
    chosen = st.sidebar.selectbox("Pairwise dataset", options, key=key, format_func=labels.__getitem__,
                                  help="Datasets of A-or-B verdicts by LLM judges and by people, or your own file. "
                                       "The score pages' dataset is chosen separately.")
    if chosen != UPLOAD_OPTION:
        state.commit("j_dataset", chosen)
    with st.sidebar.expander("Upload verdicts", expanded=chosen == UPLOAD_OPTION):
        st.file_uploader("Verdicts file (CSV, TSV or JSON Lines; .gz allowed)", key=state.widget_key("j_upload"),
                         on_change=_on_upload, help=FORMAT_HELP)
    rejected = st.session_state.get(_REJECTED)
    if rejected is not None:
        st.error(escape_markdown(rejected_sentence(*rejected)), icon=":material/block:")
        st.sidebar.caption(escape_markdown(f"{rejected[0]}: {rejected[1]}"))
        return None
    missing = st.session_state.get(_LINK_MISSING)
    if missing and (chosen != default or chosen in uploads):
        st.session_state.pop(_LINK_MISSING)  # the reader chose another dataset, or uploaded one
        missing = None
    if missing:
        # A link to an upload opened in a new tab (uploads live in their session): say so first, and show no other
        # dataset's numbers under it.
        st.warning(escape_markdown(f"This link refers to an uploaded verdict file ({missing}) that is not loaded in "
                                   "this session (uploads stay in the tab they were made in). Upload the same file "
                                   "again in the sidebar to reproduce the view; no numbers are shown until then."),
                   icon=":material/link_off:")
        return None
    if chosen == UPLOAD_OPTION:
        st.info("Upload a verdicts file in the sidebar to meta-evaluate your own judges. " + FORMAT_HELP,
                icon=":material/upload:")
        return None
    if chosen in uploads:
        return uploads[chosen]
    choice = choices[chosen]
    if not choice.available:
        st.warning(escape_markdown(f"{choice.title} is not available here: {choice.reason or 'files missing'}. "
                                   "Point METAEVAL_DATA_DIR at a folder holding its files ("
                                   f"`{shell_command('fetch --dataset ' + chosen)}`)."),
                   icon=":material/cloud_off:")
        return None
    with guard(f"Could not load {chosen}"):
        return jd.load_registered(chosen, data_dir)
    return None


def report_panel(data: PairwiseData) -> None:
    """An uploaded file's data check (per-rater counts, invalid verdicts, one-order judges) before any number."""
    if not data.id.startswith(jd.UPLOAD_PREFIX):
        return
    report = jd.report(data, jd.key_of(data))
    with st.expander(data_check_title(len(report.warnings), len(report.notes)),
                     expanded=bool(report.warnings or report.notes), icon=":material/fact_check:"):
        st.markdown(escape_markdown(report.lines()[0] + "."))
        for warning in report.warnings:
            st.warning(escape_markdown(warning), icon=":material/warning:")
        for note in report.notes:
            st.caption(escape_markdown(f"Note: {note}"))
        st.dataframe(report.rows, hide_index=True, width="stretch")


def data_check_title(n_warnings: int, n_notes: int) -> str:
    """The data check's title: never "no warnings" while notes (verdicts kept as invalid, rater kinds read from
    names) wait to be read."""
    from metaeval_core.judges.wording import count

    parts = [count(n_warnings, "warning")] if n_warnings else []
    parts += [count(n_notes, "note")] if n_notes else []
    if not parts:
        return "Data check: nothing to flag"
    return f"Data check: {' and '.join(parts)} to read before the numbers"


def raters_caption(data: PairwiseData) -> str:
    """Who judged: the judges, the people, and what the reference label is (LLMBar's label is a gold label on its
    own sets and the source benchmarks' human preference on MT-Bench, FairEval and LLMEval^2)."""
    from metaeval_core.judges.wording import count

    parts = [count(len(data.judges), "judge")]
    if data.humans:
        parts.append(count(len(data.humans), "human annotator"))
    for gold in data.golds:
        label = data.rater(gold).display_name
        parts.append(f"the reference label {label!r}" if label != gold else f"a reference label ({gold})")
    return ", ".join(parts)


def attach_panel(data: PairwiseData) -> PairwiseData | None:
    """A built-in dataset without judges (JudgeBench): the user's judge's verdicts joined by item id, or None (the
    reason shown)."""
    attached = st.session_state.setdefault(_ATTACHED, {})
    file = st.sidebar.file_uploader(
        f"Your judge's verdicts on {data.id} (CSV, TSV or JSON Lines)", key="j_attach_upload",
        help="Columns item (or pair_id), verdict (A, B or tie, or A>B / B>A), optionally rater and order "
             "(original/swapped). Joined with the dataset's items by id.")
    if file is not None:
        try:
            raw = file.getvalue()
            if len(raw) > MAX_UPLOAD_MB * 1024 * 1024:
                raise ValueError(f"larger than {MAX_UPLOAD_MB} MB")
            attached[data.id] = jd.attach(data, raw, file.name)
        except EXPECTED as error:
            st.error(escape_markdown(f"{file.name} was not attached: {message_of(error)}"), icon=":material/block:")
            return None
    if data.id not in attached:
        st.info(escape_markdown(f"{data.title or data.id} has no judge of its own: upload your judge's verdicts on its "
                                "items in the sidebar (joined by item id) to get every statistic."),
                icon=":material/upload:")
        return None
    return attached[data.id]


def begin(title: str) -> PairwiseData | None:
    """The page's title and sidebar; the dataset, or None (the reason is shown)."""
    ensure_navigation_mode()
    state.init()
    exports.begin()
    st.title(title)
    picked = dataset_picker()
    if picked is not None and not picked.judges:
        picked = attach_panel(picked)
    if picked is not None:
        exports.set_dataset(picked)
        st.caption(escape_markdown(f"{picked.title or picked.id}. {picked.n_items:,} items; "
                                   f"{raters_caption(picked)}."
                                   + "".join(f" {note}" for note in picked.notes if "label" in note.lower())))
        report_panel(picked)
    return picked


def pair_set(data: PairwiseData) -> str:
    """The pair set analysed ('' = every item); a picker only when the dataset has several."""
    if len(data.pair_sets) < 2:
        return jd.ALL_SETS
    counts = {name: int((data.pair_set == k).sum()) for k, name in enumerate(data.pair_sets)}
    options = [jd.ALL_SETS, *data.pair_sets]
    key = state.prepare("j_set", options=options, fallback=jd.ALL_SETS)
    return state.commit("j_set", st.sidebar.selectbox(
        "Pair set", options, key=key, help="Analyse one set of pairs, or all items together.",
        format_func=lambda s: f"{s} ({counts[s]})" if s else f"All items ({data.n_items})"))


def _radio(name: str, label: str, options, names: dict, box, help: str | None = None) -> str:
    key = state.prepare(name, options=list(options), fallback=list(options)[0])
    return state.commit(name, box.radio(label, list(options), key=key, format_func=lambda v: names.get(v, v),
                                        help=help))


def reference(data: PairwiseData, box) -> str:
    options = jd.references(data)
    auto = "gold label" if data.golds else "human majority"
    key = state.prepare("j_ref", options=options, fallback="auto")
    return state.commit("j_ref", box.selectbox(
        "Reference", options, key=key, format_func=lambda r: f"auto ({auto})" if r == "auto" else r,
        help="What the judges are scored against: the gold label, the majority of the human annotators, or one "
             "annotator."))


def conventions(data: PairwiseData, *, statistic: bool = True, order: bool = True) -> jd.VerdictScoring:
    """Statistic, reference, presentation order, ties and invalid verdicts (sidebar expander); ``order=False``
    where a page computes every order itself (no control that does nothing)."""
    modes = data.order_modes(ORDER_MODES)  # what the data has: judges run only swapped offer 'swapped'
    two_orders = len(modes) > 2
    with st.sidebar.expander("Agreement conventions", expanded=True):
        stat = _radio("j_stat", "Statistic", STATISTICS, STAT_NAMES, st) if statistic else "accuracy"
        ref = reference(data, st)
        # 'both' (right in both orders) is an accuracy; kappa and alpha are per order or their average.
        orders = [o for o in modes if stat == "accuracy" or o != "both"]
        chosen_order = (_radio("j_order", "Presentation order", orders, ORDERS, st,
                               help=None if two_orders else "The judges saw each pair in one order only.")
                        if order else orders[0])
        ties = _radio("j_ties", "Ties", TIE_CONVENTIONS, TIES, st)
        invalid = _radio("j_invalid", "Invalid verdicts", INVALID_CONVENTIONS, INVALID, st)
    return jd.VerdictScoring(statistic=stat, reference=ref, order=chosen_order, ties=ties, invalid=invalid)


def resampling() -> jd.ResamplingOptions:
    from metaeval_ui.widgets import resamples_and_seed

    with st.sidebar.expander("Bootstrap", expanded=False):
        # 40: a 95% percentile interval needs a resample in each 2.5% tail
        k, seed = resamples_and_seed("j_k", "j_seed", container=st, low=40)
    return jd.ResamplingOptions(n_resamples=k, seed=seed)


def stop(message: str, icon: str = ":material/info:") -> None:
    """An empty state: say why in the main pane and end the page run."""
    from metaeval_ui.widgets import finish

    st.info(escape_markdown(message), icon=icon)
    finish()
    st.stop()


def section(sentence: str, caption: str, fig, frame, *, key: str, name: str, title: str, what: str,
            view: str, select: bool = False) -> str | None:
    """A result's headline and conventions (both written from the result), its chart, narrow table (``view``: one of
    :data:`tables.VIEWS`) and the full table as a CSV download. With ``select`` a row click picks its judge (returned,
    for the examples panel), the open judge's row selected."""
    st.markdown(sentence)
    st.caption(caption)
    exports.chart(fig, key=key, name=name, title=title)
    narrow = jt.compact(frame, jt.VIEWS[view])
    picked = None
    if select:
        from metaeval_ui import examples

        judges = [str(j) for j in narrow["judge"]]
        rows = examples.selected_rows(st.dataframe(
            narrow, hide_index=True, width="stretch", key=f"{key}_table", on_select="rerun",
            selection_mode="single-row", selection_default=examples.table_selection(judges)))
        picked = judges[rows[0]] if rows else None
        st.caption("Click a judge's row to list the items behind its number below.")
    else:
        st.dataframe(narrow, hide_index=True, width="stretch")
    exports.table_download(frame, name, label=f"Download {what} (CSV)", title=title)
    return picked


def epsilon() -> float:
    """Who the annotators are, hence the judge's allowance epsilon (the alt-test paper's rule of thumb)."""
    from metaeval_ui.judges import text as jx

    key = state.prepare("j_eps", options=list(jx.EPSILON_CHOICES), fallback="experts")
    return jx.EPSILONS[state.commit("j_eps", st.radio("The annotators are", list(jx.EPSILON_CHOICES), key=key,
                                                      format_func=jx.EPSILON_CHOICES.get, horizontal=True))]


def alt_test(tested: tuple | None, *, name: str) -> None:
    """An alt-test result (``(summary, per annotator, why)`` from :func:`jd.alt_test` or
    :func:`jd.alt_test_scores`): its sentence, caption and tables, or why there is none."""
    from metaeval_ui.judges import text as jx

    if tested is None:
        return
    summary, per_annotator, why = tested
    if why:
        st.info(escape_markdown(f"No alt-test here: {why}."), icon=":material/info:")
        return
    st.markdown(jx.alt_test_sentence(summary))
    st.caption(escape_markdown(jx.alt_test_caption(summary)))
    st.dataframe(jt.compact(summary, jt.VIEWS["alt_summary"]), hide_index=True, width="stretch")
    st.dataframe(jt.compact(per_annotator, jt.VIEWS["alt_annotators"]), hide_index=True, width="stretch")
    st.caption(jt.ALT_ANNOTATORS_KEY)
    exports.table_download(per_annotator, name, label="Download alt-test (CSV)", title="Alt-test per annotator")


def other_pages() -> None:
    page_links(PAGES)


def ranking_pairs_panel(data: PairwiseData, pair_set: str, judges: list[str], *, reference: str, method: str,
                        order: str, coefficient: str, picked: str | None) -> None:
    """The system pairs behind a judge's ranking agreement (``ex=`` the judge): those it orders unlike the
    reference first, with both systems' scores from the judge's verdicts and from the reference's."""
    from metaeval_ui import examples

    with st.container(border=True):
        st.markdown("#### Examples behind the number")
        judge = examples.choose(judges, picked=picked, label="Judge")
        if judge is None:
            st.caption("Click a judge's row, or choose one, to list the system pairs behind its ranking agreement.")
            return
        found = None
        with guard("Could not list the system pairs"):
            found = jd.ranking_pairs(data, jd.key_of(data), pair_set, judge, reference, method, order)
        if found is None:
            return
        summary, records, tau = found
        st.caption(escape_markdown(ranking_pairs_sentence(summary, tau, coefficient=coefficient)))
        frame = pd.DataFrame.from_records(records)
        st.dataframe(frame, hide_index=True, width="stretch", height=min(420, 38 + 35 * len(frame)))
        name = exports.file_name("examples", data.id, judge, "system-pairs")
        exports.collect(f"Examples: {judge} (system pairs)", table=frame.head(examples.TOP),
                        text=f"{summary['n_discordant']} of {summary['n_pairs']} system pairs discordant",
                        key="examples")
        exports.table_download(frame, name, label="Download system pairs (CSV)",
                               title=f"System pairs behind {judge}'s ranking agreement")
