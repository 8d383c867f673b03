"""The sidebar's dataset picker: the registry, the demo, uploads, stored and what-if datasets, and the
conventional system and input subsets a dataset opens with.
"""

from __future__ import annotations

import re

import streamlit as st

from metaeval_core._paths import shell_command
from metaeval_core.data.dataset import Dataset
from metaeval_core.data.selection import selection_term
from metaeval_ui import data, state, text, userdata
from metaeval_ui.navigation import JUDGES_PAGES, page_links
from metaeval_ui.widgets.mtme import mtme_box
from metaeval_ui.errors import EXPECTED, escape_markdown, guard, message_of, show_error


DEFAULT_DATASET = "summeval"


UPLOAD_OPTION = "__upload__"


_UPLOADS = "_uploads"  # session-only: sha256 -> Dataset


_UPLOAD_ERROR = "_upload_error"


_UPLOAD_REJECTED = "_upload_rejected"  # (file name, core message, dataset chosen when it was rejected)


def _uploads() -> dict[str, Dataset]:
    return st.session_state.setdefault(_UPLOADS, {})


def _on_upload() -> None:
    """File-uploader callback: parse the file once per content hash and select it (runs before the rerun)."""
    file = st.session_state.get(state.widget_key("upload_file"))
    st.session_state.pop(_UPLOAD_ERROR, None)
    st.session_state.pop(_UPLOAD_REJECTED, None)
    if file is None:
        return
    raw = file.getvalue()
    if len(raw) > data.MAX_UPLOAD_MB * 1024 * 1024:
        st.session_state[_UPLOAD_ERROR] = f"{file.name}: larger than {data.MAX_UPLOAD_MB} MB"
        return
    digest = data.content_sha256(raw)
    uploads = _uploads()
    key = f"{data.UPLOAD_PREFIX}{digest[:12]}"
    if key not in uploads:
        humans = [h.strip() for h in str(st.session_state.get("w:upload_humans", "")).split(",") if h.strip()]
        try:
            dataset = data.parse_upload(raw, file.name, human_measures=humans or None)
        except EXPECTED as error:  # shown by the sidebar on this run
            kind = getattr(error, "kind", "")
            st.session_state[_UPLOAD_ERROR] = f"{file.name}: {message_of(error)}" + (f" ({kind})" if kind else "")
            st.session_state[_UPLOAD_REJECTED] = (file.name, message_of(error), state.get("dataset"))
            return
        while len(uploads) >= data.MAX_UPLOADS_PER_SESSION:
            uploads.pop(next(iter(uploads)))
        uploads[key] = dataset
    state.put("dataset", key)


def upload_sentence(file_name: str, message: str) -> str:
    """One sentence for the main pane: the file, the place and the first clause of the core's message (the
    sidebar keeps the whole message)."""
    head, _, problem = message.partition(": ")
    place = head.split(", ", 1)[1] if ", " in head and head.startswith("file ") else ""
    problem = (problem or message).split("; ", 1)[0].strip()
    problem = re.sub(r"\s*\(?human_measures=\[\.\.\.\]\)?", " in the Human measures box", problem).rstrip(". ")
    return f"{file_name} was not loaded" + (f" ({place})" if place else "") + f": {problem}."


def _rejected_upload_notice(choice: data.DatasetChoice | None) -> bool:
    """After a rejected upload, say so in the main pane (instead of the previous dataset's analysis, until the user
    dismisses it or picks a dataset); True when shown."""
    rejected = st.session_state.get(_UPLOAD_REJECTED)
    if rejected is None:
        return False
    name, message, chosen_then = rejected
    if choice is not None and chosen_then not in (None, choice.id):
        _forget_rejection()  # the user picked another dataset since
        return False
    st.error(escape_markdown(upload_sentence(name, message)), icon=":material/block:")
    if choice is not None:
        st.button(f"Dismiss and go back to {choice.title}", key="upload_dismiss",
                  on_click=_forget_rejection)
    return True


def _forget_rejection() -> None:
    st.session_state.pop(_UPLOAD_REJECTED, None)
    st.session_state.pop(_UPLOAD_ERROR, None)


def _label(choice: data.DatasetChoice | None, key: str) -> str:
    if key == UPLOAD_OPTION:
        return "Upload a file (CSV / JSONL / Parquet)…"
    if choice is None:
        return key
    suffix = "" if choice.available else " — unavailable"
    title = _short_title(choice.title)
    if choice.id.startswith("upload:"):  # "Uploaded: <file>" says which; its content hash would crowd it out
        return _cut(title, PICKER_CHARS) + suffix
    if ":" in choice.id:  # a stored or what-if dataset: its name and key as before
        return f"{title} [{choice.id}]{suffix}"
    room = PICKER_CHARS - _width(choice.id) - 3  # the id must stay readable: the title gives way ("SummEval… [id]")
    if room < 10:  # too little for a title: the id alone (the full title is written under the picker)
        return choice.id + suffix
    return f"{_cut(title, room)} [{choice.id}]{suffix}"


def _width(text: str) -> float:
    """The text's width in average characters of the picker's font (m, w, M and W are half as wide again)."""
    return len(text) + 0.5 * sum(text.count(c) for c in "mwMW")


def _cut(text: str, room: float) -> str:
    if _width(text) <= room:
        return text
    while text and _width(text) + 1 > room:
        text = text[:-1]
    return text.rstrip(" ,:") + "…"


# What the sidebar's dataset picker shows before cutting its text off (1.67, default font, 1280-1600 px windows),
# in _width units: "HANNA story generation [hanna]" fits, "WMT22 metrics ta… [wmt22-zhen]" (wide letters) did not;
# tests/browser/test_every_page.py reads it in the browser.
PICKER_CHARS = 31


def _short_title(title: str) -> str:
    """A title without its parenthesised details, which the sidebar's narrow picker would cut off."""
    head, _, rest = title.partition(" (")
    return head if head and rest.endswith(")") else title


def _pairwise_elsewhere(wanted: str | None) -> bool:
    """A pairwise-verdict dataset in the URL of a score page: say where it is analysed, keep it for the judges pages
    and fall back to the default dataset here (True when so)."""
    if not data.is_pairwise(wanted):
        return False
    if not state.is_set("j_dataset"):
        state.put("j_dataset", wanted)
    state.put("dataset", None)
    st.info(escape_markdown(f"{wanted} holds A-or-B verdicts of LLM judges, not scores of metrics: it is analysed on "
                            "the LLM judges pages (below and in the navigation). This page shows a score dataset "
                            "instead."), icon=":material/gavel:")
    page_links(JUDGES_PAGES)
    return True


def dataset_picker() -> tuple[Dataset, data.DatasetKey] | None:
    """Draw the dataset picker; return the chosen dataset, or None (with the reason shown) if there is none."""
    data_dir = data.data_dir_key()
    choices: dict[str, data.DatasetChoice] = {}
    with guard("Could not list the datasets"):
        choices = {c.id: c for c in data.list_choices(data_dir)}
    if data.DEMO_ID not in choices:
        choices = {data.DEMO_ID: data.DatasetChoice(data.DEMO_ID, "Synthetic demo (offline)"), **choices}
    uploads = _uploads()
    for key, ds in uploads.items():
        choices[key] = data.DatasetChoice(key, f"Uploaded: {ds.title or ds.id}")
    wanted = state.get("dataset")
    if userdata.restore_draft(wanted, state.get("draft")):  # a reload, or a link opened on this machine
        userdata.message("info", f"Reopened the modified dataset {wanted} from its autosaved draft.")
    choices.update(userdata.extra_choices())  # the session's what-if dataset and the local store
    options = [*choices, UPLOAD_OPTION]
    if wanted not in choices and _pairwise_elsewhere(wanted):
        wanted = None
    if now := userdata.renamed(wanted, choices):  # a stored dataset renamed since the link was written
        state.add_note(f"{wanted} was renamed: opened it under its new id {now}.")
        state.put("dataset", now)
    elif wanted and wanted.startswith(data.UPLOAD_PREFIX) and wanted not in choices:
        # At the top of the page, not among the notes at its bottom: every number below is another dataset's.
        st.warning(escape_markdown(f"The link refers to an uploaded file ({wanted}) that is not loaded in this "
                                   "session: the numbers below are another dataset's. Upload the file again to "
                                   "reproduce the view."), icon=":material/link_off:")
    elif userdata.missing_note(wanted, choices):
        st.warning(escape_markdown(userdata.missing_note(wanted, choices)), icon=":material/link_off:")
    default = DEFAULT_DATASET if choices.get(DEFAULT_DATASET, None) and choices[DEFAULT_DATASET].available \
        else data.DEMO_ID
    key = state.prepare("dataset", options=options, fallback=default)
    chosen = st.sidebar.selectbox("Dataset", options, key=key, format_func=lambda k: _label(choices.get(k), k),
                                  help="Built-in human-judgment datasets, the offline synthetic demo, or your file.")
    if chosen == UPLOAD_OPTION:
        _upload_box()
        if not _rejected_upload_notice(None):
            st.info("Upload a file in the sidebar to analyse your own scores.", icon=":material/upload:")
        return None
    state.commit("dataset", chosen)
    if choices.get(chosen) is not None and _short_title(choices[chosen].title) != choices[chosen].title:
        st.sidebar.caption(choices[chosen].title)  # the details the picker's short label leaves out
    with st.sidebar.expander("Upload your own scores"):
        _upload_box(container=st)
    if _rejected_upload_notice(choices.get(chosen)):
        return None
    mtme_box(uploads)
    choice = choices[chosen]
    if not choice.available:
        st.warning(escape_markdown(f"Dataset {choice.title} is not available here: {choice.reason or 'files missing'}"),
                   icon=":material/cloud_off:")
        st.caption("Point METAEVAL_DATA_DIR at a folder holding the human-judgment files (a mirror, or "
                   f"`{shell_command('fetch --dataset ' + chosen)}`), or download them here from their pinned "
                   "upstream URLs:")
        if st.button("Download and verify (sha256)", key="fetch_" + chosen):
            with guard("Download failed"), st.spinner("Downloading…"):
                data.fetch(chosen, data_dir)
                st.rerun()
        return None
    dataset = None
    if chosen in uploads:
        dataset = uploads[chosen]
    elif userdata.owns(chosen):
        with guard(f"Could not load dataset {chosen}"):
            dataset = userdata.load_choice(chosen)
    else:
        lp = language_pair_picker(chosen)
        with guard(f"Could not load dataset {chosen}"):
            dataset = data.load_registered(chosen, data_dir, lp)
    if dataset is None:
        return None
    dataset = input_subset(default_systems_toggle(dataset))
    return dataset, data.dataset_key(dataset)


def language_pair_picker(dataset_id: str) -> str | None:
    """The sidebar's language pair of a test set with several (wmt23; URL ``lp=``), None for any other dataset."""
    pairs = data.language_pairs(dataset_id)
    if not pairs:
        return None
    key = state.prepare("lp", options=list(pairs), fallback=data.default_lp(dataset_id) or pairs[0])
    return state.commit("lp", st.sidebar.selectbox(
        "Language pair", list(pairs), key=key,
        help="This test set has several language pairs; each has its own systems, segments and WMT conventions "
             "(standard reference, outlier systems). The Overall average page's WMT suites span all of them."))


def default_systems_toggle(dataset: Dataset) -> Dataset:
    """A dataset with a conventional system subset (HANNA: kind=model; mt-metrics-eval data: WMT's systems) uses
    it unless the user keeps every system; on WMT data human translations are a second, explicit toggle."""
    if dataset.conventions is not None:
        return _wmt_systems(dataset)
    subset = dataset.with_default_systems()
    if subset is dataset:
        return dataset
    key = state.prepare("all_systems")
    keep_all = state.commit("all_systems", st.sidebar.toggle(
        "Keep every system", key=key,
        help=f"Off: only the systems {dataset.default_systems}, as in this dataset's published figures "
             f"({dataset.n_systems - subset.n_systems} dropped). On: all {dataset.n_systems} systems."))
    if keep_all:
        return dataset
    st.sidebar.caption(escape_markdown(f"Systems: {dataset.default_systems} ({subset.n_systems} of "
                                       f"{dataset.n_systems})."))
    return subset


def _wmt_systems(dataset: Dataset) -> Dataset:
    """WMT's system set (docs/methods.md sec. 0.6): no reference as a system; human translations on request."""
    conventions = dataset.conventions
    others = ", ".join(conventions.human_translations) or "none"
    key = state.prepare("human_translations")
    with_humans = state.commit("human_translations", st.sidebar.toggle(
        "Include human translations", key=key, disabled=not conventions.human_translations,
        help=f"WMT's 'include human translations': the other references ({others}) as systems. The standard "
             f"reference {conventions.std_ref} never is: the metrics use it (mt-metrics-eval's convention)."))
    key = state.prepare("all_systems")
    keep_all = state.commit("all_systems", st.sidebar.toggle(
        "Keep every system", key=key,
        help=f"Not WMT's convention: every system, the standard reference {conventions.std_ref} included "
             "(metaeval's behaviour before it followed WMT)."))
    if keep_all:
        st.sidebar.caption(escape_markdown(f"Systems: all {dataset.n_systems}, {conventions.std_ref} included "
                                           "(not WMT's convention)."))
        return dataset
    subset = dataset.with_default_systems(human_translations=with_humans)
    st.sidebar.caption(escape_markdown(f"Systems: WMT's, {subset.n_systems} of {dataset.n_systems} "
                                       f"({dataset.default_selection(human_translations=with_humans) or 'all'})."))
    return subset


MAX_INPUT_GROUPS = 30  # an attribute with more values (e.g. documents) is not offered as a subset


def input_subset(dataset: Dataset) -> Dataset:
    """Inputs restricted to one value of an input attribute (an MT test set's domain), or all inputs."""
    options = [""] + [selection_term(attr, value) for attr, values in dataset.input_attributes.items()
                      if len(set(values)) <= MAX_INPUT_GROUPS for value in dict.fromkeys(values)]
    if len(options) == 1:
        return dataset
    key = state.prepare("inputs", options=options, fallback="")
    chosen = state.commit("inputs", st.sidebar.selectbox(
        "Inputs", options, key=key, format_func=lambda s: s or "all inputs",
        help="Restrict every page to the inputs of one group (e.g. domain=news)."))
    return dataset.select_inputs(chosen) if chosen else dataset


def _upload_box(container=None) -> None:
    box = container or st.sidebar
    box.text_input("Human measures (comma-separated; empty: the file's kind column, else detect)",
                   key="w:upload_humans",
                   help="Columns or keys holding human judgments; the rest are treated as metrics.")
    # No type= filter: the core names an unsupported format and what to do about it, which is clearer than
    # Streamlit's generic refusal (and the server-side refusal would surface as an exception element).
    box.file_uploader("Scores file (CSV, TSV, JSON Lines or Parquet; .gz allowed)", key=state.widget_key("upload_file"),
                      on_change=_on_upload,
                      help="Wide: one row per (system, input), one column per measure. Long: columns system, input, "
                           "measure, score (and optionally annotator, and kind: human or metric). Or SacreROUGE "
                           "JSON Lines. Human measures are those listed above, else those of the kind column, else "
                           "detected by name (human., expert., relevance, ...).")
    error = st.session_state.get(_UPLOAD_ERROR)
    if error is not None:
        show_error(error, prefix="Upload rejected")
