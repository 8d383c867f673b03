"""The sidebar's measure pickers: the human dimension and the metrics, their defaults per dataset, and
measure names from a link resolved to ids.
"""

from __future__ import annotations

import streamlit as st

from metaeval_core.data.dataset import Dataset, DatasetError
from metaeval_ui import state, text, userdata


DEFAULT_HUMAN = "expert.relevance"


WELL_KNOWN_METRICS = ("rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.recall", "qa-eval.f1")


_LAST_DATASET = "_last_dataset"


_LAST_CONVENTIONS = "_last_dataset_has_conventions"


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
