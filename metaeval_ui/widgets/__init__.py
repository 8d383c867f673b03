"""The shared sidebar: dataset picker (registry, demo, upload) and measure / correlation pickers.

Every view-defining widget goes through :mod:`metaeval_ui.state` (restored across pages and from the URL).
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Sequence

import streamlit as st

from metaeval_core._paths import shell_command
from metaeval_core.stats.coefficients import (  # noqa: F401 - CORRELATIONS, POINT_COEFFICIENTS for pages
    COEFFICIENTS,
    CORRELATIONS,
    POINT_COEFFICIENTS,
    SYSTEM_ONLY_COEFFICIENTS,
)
from metaeval_core.stats.correlation import LEVELS
from metaeval_core.data.dataset import Dataset, DatasetError

from metaeval_ui import data, exports, state, tables, text, userdata
from metaeval_ui.figures import colours
from metaeval_ui.navigation import ensure_navigation_mode
from metaeval_ui.widgets.mtme import mtme_box
from metaeval_ui.errors import EXPECTED, escape_markdown, guard, message_of, show_error

DEFAULT_DATASET = "summeval"
DEFAULT_HUMAN = "expert.relevance"
WELL_KNOWN_METRICS = ("rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.recall", "qa-eval.f1")
UPLOAD_OPTION = "__upload__"
_UPLOADS = "_uploads"  # session-only: sha256 -> Dataset
_UPLOAD_ERROR = "_upload_error"
_UPLOAD_REJECTED = "_upload_rejected"  # (file name, core message, dataset chosen when it was rejected)
_LAST_DATASET = "_last_dataset"
_LAST_CONVENTIONS = "_last_dataset_has_conventions"

NO_METRICS = ("This dataset has no automatic-metric scores (only human judgments), so there is nothing to "
              "meta-evaluate here. The Overview and Dataset pages still describe it.")

LEVEL_HELP = {
    "system": "correlation of the per-system mean scores (one point per system)",
    "input": "mean over judged inputs of the per-input correlation across systems (the papers' summary or segment "
             "level)",
    "global": "correlation over every (system, input) cell that has both scores",
}


@dataclass(frozen=True)
class Context:
    """What the sidebar chose, for the page to use."""

    dataset: Dataset
    key: data.DatasetKey
    human: str | None
    metrics: tuple[str, ...]


# -- datasets ----------------------------------------------------------------------------------------------


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
    from metaeval_ui.judges import data as judges_data, widgets as judges_widgets

    if not judges_data.is_pairwise(wanted):
        return False
    if not state.is_set("j_dataset"):
        state.put("j_dataset", wanted)
    state.put("dataset", None)
    st.info(escape_markdown(f"{wanted} holds A-or-B verdicts of LLM judges, not scores of metrics: it is analysed on "
                            "the LLM judges pages (below and in the navigation). This page shows a score dataset "
                            "instead."), icon=":material/gavel:")
    judges_widgets.other_pages()
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
        with guard(f"Could not load dataset {chosen}"):
            dataset = data.load_registered(chosen, data_dir)
    if dataset is None:
        return None
    dataset = input_subset(default_systems_toggle(dataset))
    return dataset, data.dataset_key(dataset)


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


def conventions_caption(dataset: Dataset, *, human: str | None = None, pool: str | None = None,
                        systems: str = "") -> str | None:
    """The sentence naming the WMT conventions a page's numbers follow (None on data without conventions).

    It is built from the dataset's conventions record and the sidebar's choices, the same objects the numbers
    come from (docs/methods.md sec. 0.6).
    """
    conventions = dataset.conventions
    if conventions is None:
        return None
    with_humans = bool(state.get("human_translations"))
    chosen = None
    if state.get("all_systems"):
        chosen = "every system (Keep every system)"
    elif systems:
        chosen = f"{dataset.default_selection(human_translations=with_humans) or 'WMT'}, then {systems}"
    return conventions.caption(human_translations=with_humans, pool=pool, human=human, systems=chosen)


MAX_INPUT_GROUPS = 30  # an attribute with more values (e.g. documents) is not offered as a subset


def input_subset(dataset: Dataset) -> Dataset:
    """Inputs restricted to one value of an input attribute (an MT test set's domain), or all inputs."""
    options = [""] + [f"{attr}={value}" for attr, values in dataset.input_attributes.items()
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


# -- measures ----------------------------------------------------------------------------------------------


def default_human(dataset: Dataset) -> str | None:
    humans = dataset.human_measures
    if dataset.conventions is not None and dataset.conventions.gold in humans:
        return dataset.conventions.gold  # WMT's standard human score
    if DEFAULT_HUMAN in humans:
        return DEFAULT_HUMAN
    relevance = [h for h in humans if h.endswith("relevance")]
    return (relevance or list(humans) or [None])[0]


N_DEFAULT_METRICS = 5


def default_metrics(dataset: Dataset, human: str | None = None) -> list[str]:
    """The metrics a dataset opens with: the well-known ones it has; else, where metrics carry a ``family``, the
    first of each family with the LLM judges of ``human``'s criterion (default: the default human measure) among
    them, one per judge, so a dataset advertising LLM judges opens with some (HANNA); else its first five."""
    if dataset.conventions is not None and dataset.conventions.primary_metrics:
        return [m for m in dataset.conventions.primary_metrics if m in dataset.metric_measures]  # WMT's primaries
    known = [m for m in WELL_KNOWN_METRICS if m in dataset.metric_measures]
    if known:
        return known
    metrics = dataset.metric_measures
    families = {}
    for m in metrics:
        families.setdefault(dataset.measures[m].attributes.get("family"), m)
    families.pop(None, None)
    if not families:
        return list(metrics[:N_DEFAULT_METRICS])
    human = human if human in dataset.measures else default_human(dataset)
    criterion = dataset.measures[human].attributes.get("criterion") if human else None
    judges: dict[str, str] = {}
    for m in dataset.measures_with("family", "llm-judge", kind="metric"):
        attributes = dataset.measures[m].attributes
        if criterion is None or attributes.get("criterion") == criterion:
            judges.setdefault(attributes.get("judge", m), m)
    picked = [m for family, m in families.items() if family != "llm-judge"][:N_DEFAULT_METRICS - 2]
    picked += list(judges.values())[:N_DEFAULT_METRICS - len(picked)]
    picked += [m for m in metrics if m not in picked][:N_DEFAULT_METRICS - len(picked)]
    return [m for m in metrics if m in set(picked)]  # dataset order


def measure_pickers(dataset: Dataset, *, human: bool = True, metrics: bool = True) -> tuple[str | None, tuple[str, ...]]:
    """Human dimension (single) and metrics (multi); reset to the dataset's defaults when the dataset changes."""
    ss = st.session_state
    current = userdata.family(dataset.id)  # a what-if copy keeps its base's choices
    if ss.get(_LAST_DATASET) not in (None, current):
        for name in ("human", "metrics", "systems"):
            state.put(name, None)
        ss.pop(state.widget_key("systems_expr"), None)  # the system picker's expression box (system_subset)
        if dataset.conventions is not None or ss.get(_LAST_CONVENTIONS):
            state.put("pool", None)  # to or from WMT data: the new dataset's own default pool
    ss[_LAST_DATASET] = current
    ss[_LAST_CONVENTIONS] = dataset.conventions is not None
    for name in MEASURE_FIELDS:
        canonical_choice(dataset, name)
    chosen_human = None
    if human:
        options = list(dataset.human_measures)
        if not options:
            st.sidebar.warning("This dataset has no human measure.")
        else:
            key = state.prepare("human", options=options, fallback=default_human(dataset))
            chosen_human = state.commit("human", st.sidebar.selectbox(
                "Human dimension", options, key=key, format_func=lambda m: measure_label(dataset, m),
                help="The human judgments the metrics are compared with."))
    chosen_metrics: tuple[str, ...] = ()
    if metrics:
        options = list(dataset.metric_measures)
        fallback = default_metrics(dataset, chosen_human)
        if not state.is_set("metrics") and state.widget_key("metrics") not in ss:
            state.put("metrics", fallback)
        key = state.prepare("metrics", options=options, multi=True, fallback=fallback)
        chosen_metrics = tuple(state.commit("metrics", st.sidebar.multiselect(
            "Metrics", options, key=key, format_func=lambda m: measure_label(dataset, m),
            help="Automatic metrics to meta-evaluate. LLM judges are marked as such.")))
    return chosen_human, chosen_metrics


# Every choice that names measures (state.FIELDS): a link may name them by label or upstream name.
MEASURE_FIELDS = ("human", "metrics", "delta_metric", "f1_metric", "mx_humans", "sim_metric", "imp_metric",
                  "plan_metric", "plan_versus", "infl_metric")


def canonical_choice(dataset: Dataset, name: str) -> None:
    """Replace the measures of choice ``name`` by their ids (a link may name them by label, in any case, or by an
    upstream name such as HANNA's ``BLEU Ξ§``: Dataset.resolve); unknown names stay, for the widget to drop with a
    note."""
    value = state.get(name)
    if not value or not state.is_set(name):
        return
    items = [value] if isinstance(value, str) else list(value)
    resolved = []
    for item in items:
        try:
            resolved.append(dataset.resolve(str(item)))
        except DatasetError:
            resolved.append(item)
    if resolved != items:
        state.put(name, resolved[0] if isinstance(value, str) else resolved)


def measure_label(dataset: Dataset, name: str) -> str:
    """A picker entry: the measure's display name, marked when it is an LLM judge, and its id when it differs."""
    measure = dataset.measures.get(name)
    if measure is None:
        return name
    text = measure.display_name + (" · LLM judge" if measure.attributes.get("family") == "llm-judge" else "") + (
        " · primary" if measure.attributes.get("primary") == "yes" else "")  # WMT's primary metrics (sec. 0.6)
    return text if measure.display_name == name else f"{text} [{name}]"


def correlation_settings(dataset: Dataset, *, coefficients: Sequence[str] = COEFFICIENTS) -> tuple[str, str, str, str]:
    """Level, coefficient, input pool and system subset (shared by the correlation-based pages).

    System-only coefficients (soft pairwise accuracy, docs/methods.md sec. 11.3) are offered at the system level
    only; ``coefficients`` narrows the offer for pages that need a coefficient of two vectors.
    """
    side = st.sidebar
    side.markdown("**Correlation**")
    key = state.prepare("level", options=LEVELS, fallback="system")
    level = state.commit("level", side.radio("Level", LEVELS, key=key, horizontal=True,
                                             help="; ".join(f"{k}: {v}" for k, v in LEVEL_HELP.items())))
    offered = [c for c in coefficients if level == "system" or c not in SYSTEM_ONLY_COEFFICIENTS]
    key = state.prepare("coefficient", options=offered, fallback="kendall")
    coefficient = state.commit("coefficient", side.radio(
        "Coefficient", offered, key=key, horizontal=True,
        help="Kendall = tau-b (ties handled as in scipy). soft-pairwise-accuracy (system level only): agreement of "
             "the metric's and the humans' pairwise permutation p-values (docs/methods.md sec. 11.3)."))
    # On WMT data 'all' (every segment) is the convention even where every segment has some human score: the
    # judged pool is the chosen human measure's own cells (docs/methods.md sec. 0.2).
    has_pool = dataset.has_unjudged_pool or dataset.conventions is not None
    if not has_pool:
        if state.get("pool") == "all":
            state.add_note("pool=all is not available: this dataset has no unjudged inputs; using judged")
        state.put("pool", "judged")
    fallback = dataset.conventions.pool if dataset.conventions is not None else "judged"
    key = state.prepare("pool", options=("judged", "all"), fallback=fallback)
    pool = state.commit("pool", side.radio(
        "Metric input pool", ("judged", "all"), key=key, horizontal=True, disabled=not has_pool,
        help="judged: each system's inputs the human measure scored (standard); all: every input for the metric's "
             "system means (NAACL 2022; WMT's convention, the default on mt-metrics-eval data). Applies at the "
             "system level; input/global levels always use judged.",
    ))
    if not has_pool:
        side.caption("Pool 'all' is disabled: this dataset has no unjudged inputs with metric scores.")
    elif pool == "all" and level != "system":
        side.caption("Pool 'all' only changes system-level means; this level uses judged inputs.")
    systems = system_subset(dataset, side)
    caption = conventions_caption(dataset, human=state.get("human"), pool=pool, systems=systems)
    if caption:  # the page's numbers follow these conventions: say so above them (docs/methods.md sec. 0.6)
        st.caption(":material/rule: " + escape_markdown(caption))
    return level, coefficient, pool, systems


CUSTOM_SYSTEMS = "expression…"
SYSTEMS_EXPRESSION_HELP = ("Comma-separated terms: ATTR=VALUE, system names, all, and !TERM or -TERM to remove "
                           "(e.g. !refA; kind=mt,refB; all,-Online-A). Terms on one attribute are alternatives, on "
                           "different attributes all must hold (docs: methods sec. 0.3).")


def _selection_error(dataset: Dataset, text: str) -> str | None:
    """Why a selection expression cannot be used on ``dataset`` (unknown name, keeps nothing), or None."""
    if not text:
        return None
    try:
        dataset.select_systems(text)
    except EXPECTED as error:
        return message_of(error)
    return None


def system_subset(dataset: Dataset, container=None) -> str:
    """The system selection: a preset (``attr=value`` or '' for all systems) or an expression in the selection
    grammar (``!refA``, ``kind=mt,refB``; docs/methods.md sec. 0.3), typed when "expression…" is picked."""
    box = container or st.sidebar
    presets = [""] + [f"{attr}={value}" for attr, values in dataset.system_attributes.items()
                      for value in dict.fromkeys(values)]
    options = [*presets, CUSTOM_SYSTEMS]
    current = state.get("systems") or ""
    if current and current not in presets and _selection_error(dataset, current) is not None:
        state.add_note(f"systems={current}: {_selection_error(dataset, current)}; using all systems")
        state.put("systems", "")
        current = ""
    pick_key, text_key = state.widget_key("systems"), state.widget_key("systems_expr")
    ss = st.session_state
    # Written on every run, as state.prepare does: a widget drawn on another page starts from its default.
    pick = ss.get(pick_key)
    ss[pick_key] = pick if pick in options else (current if current in presets else CUSTOM_SYSTEMS)
    ss[text_key] = ss.get(text_key) if ss.get(text_key) is not None else ("" if current in presets else current)
    choice = box.selectbox("Systems", options, key=pick_key, format_func=lambda s: s or "all systems",
                           help="Restrict to systems with a given attribute (e.g. type=abs: abstractive), or pick "
                                f"'{CUSTOM_SYSTEMS}' to type a selection such as !refA.")
    if choice != CUSTOM_SYSTEMS:
        return state.commit("systems", choice)
    text = box.text_input("Selection expression", key=text_key, placeholder="!refA", help=SYSTEMS_EXPRESSION_HELP)
    error = _selection_error(dataset, text.strip())
    if error is not None:
        box.error(escape_markdown(f"{error}; using all systems"), icon=":material/error:")
        return state.commit("systems", "")
    return state.commit("systems", text.strip())


def need_measures(ctx: Context, *, min_metrics: int = 1, what: str = "") -> bool:
    """Whether the page can run; otherwise show the right empty state (and the caller stops)."""
    ds = ctx.dataset
    if not ds.metric_measures:
        st.info(NO_METRICS, icon=":material/info:")
        return False
    if len(ds.metric_measures) < min_metrics:
        st.info(f"This dataset has fewer than {min_metrics} metrics.", icon=":material/info:")
        return False
    if not ctx.human:
        st.warning("This dataset has no human measure to compare the metrics with.")
        return False
    if len(ctx.metrics) < min_metrics:
        need = "at least one metric" if min_metrics == 1 else f"at least {_WORDS.get(min_metrics, min_metrics)} metrics"
        st.info(f"Pick {need} in the sidebar{what}.", icon=":material/touch_app:")
        return False
    return True


_WORDS = {2: "two", 3: "three"}

# Streamlit caps a multiselect's height and scrolls inside it, which cut the fifth chosen metric in half in the
# sidebar (and the fourth CI method on Confidence intervals): let every picker grow with its chips instead.
_SIDEBAR_CSS = """<style>
[data-testid="stMultiSelect"] div { max-height: none !important; }
[data-testid="stMultiSelect"] div:has(> span > span > button) { flex-wrap: wrap !important;
  overflow: visible !important; mask-image: none !important; -webkit-mask-image: none !important; }
[data-testid="stMultiSelect"] div > span:has(> span > button) { flex-wrap: wrap !important; }
</style>"""


def sidebar(*, human: bool = True, metrics: bool = True) -> Context | None:
    """Dataset + measure pickers; None when there is no usable dataset (the reason is already shown)."""
    ensure_navigation_mode()
    state.init()
    exports.begin()
    picked = dataset_picker()
    if picked is None:
        return None
    dataset, key = picked
    exports.set_dataset(dataset)
    userdata.banner(dataset)
    userdata.report_panel(dataset)
    chosen_human, chosen_metrics = measure_pickers(dataset, human=human, metrics=metrics)
    caution = text.reference_caution(tables.reference_scored(dataset, chosen_metrics), can_drop=bool(
        dataset.default_systems), inputs=dataset.vocabulary.inputs)
    if caution:
        st.warning(escape_markdown(caution), icon=":material/warning:")
    # One colour per measure on every page: a hash of its id; the chosen metrics (also on pages without the metric
    # picker) are shown together, so their hash collisions are resolved (figures.colours.resolve_collisions).
    chosen = chosen_metrics or tuple(m for m in state.get("metrics") or () if m in dataset.metric_measures)
    colours.use_measures(dataset.metric_measures, dataset.human_measures,
                         chosen=chosen or tuple(default_metrics(dataset)))
    st.html(_SIDEBAR_CSS)
    return Context(dataset, key, chosen_human, chosen_metrics)


def show_notes() -> None:
    """Show (once) what was dropped from the URL or from an earlier dataset's choices."""
    for note in state.notes():
        st.caption(":material/info: " + escape_markdown(note))
    state.clear_notes()


def finish() -> None:
    """End of every page: show notes and write the choices into the URL."""
    show_notes()
    state.sync_url()
    exports.report_button()


# -- resampling controls -----------------------------------------------------------------------------------


def _clamp_int(low: int, high: int):
    def coerce(value):
        return int(min(max(int(value), low), high))
    return coerce


def resamples_and_seed(k_name: str, seed_name: str, *, container=None, disabled: bool = False,
                       low: int = 10) -> tuple[int, int]:
    """Number of resamples (``low`` to data.MAX_RESAMPLES, with the reason) and the random seed."""
    box = container or st
    cap = data.MAX_RESAMPLES
    wanted = state.get(k_name)
    if wanted is not None and int(wanted) > cap:
        state.add_note(f"{state.FIELDS[k_name].param}={wanted}: capped at {cap:,} resamples")
    key = state.prepare(k_name, fallback=1000, coerce=_clamp_int(low, cap))
    k = state.commit(k_name, int(box.number_input(
        "Resamples (k)", min_value=low, max_value=cap, step=100, key=key, disabled=disabled,
        help=f"At most {cap:,}: the percentile bounds and p-values move by well under 0.01 beyond that, while "
             "the time grows linearly (global-level resampling of 1,000 takes seconds per metric).")))
    key = state.prepare(seed_name, fallback=0, coerce=_clamp_int(0, 2**32 - 1))
    seed = state.commit(seed_name, int(box.number_input(
        "Seed", min_value=0, max_value=2**32 - 1, step=1, key=key, disabled=disabled,
        help="Same seed, same result (whatever the batch size).")))
    return k, seed


def upper(value: str) -> str:
    """Method names as the papers write them (boot-both -> BOOT-BOTH)."""
    return str(value).upper()
