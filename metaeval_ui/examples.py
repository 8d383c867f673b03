"""The examples panel: from a headline number to the items behind it (docs/methods.md sec. 19).

A page wires a selection (a table row, a chart point, or the panel's own picker) to :func:`correlation_panel` or
:func:`judge_panel`. The panel lists the items (system pairs, inputs, cells, judged items) with the numbers that
made them appear, their texts side by side (long texts folded), a text view for a meeting, and a download of the
listed items. The choice is kept in the URL (``ex``: the metric or judge whose examples are open, ``ex_item``: the
item shown), so a shared link opens the same examples, and the listed items go into the page's HTML report.

Computations are cached here (the core does the work: :mod:`metaeval_core.analyses.examples`,
:mod:`metaeval_core.judges.examples`); no page code beyond the wiring.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

import pandas as pd
import streamlit as st

from metaeval_core.data.dataset import Dataset
from metaeval_ui import exports, state
from metaeval_ui.errors import escape_markdown, guard

# Items in the panel's table, and items the panel keeps as records (its picker, the meeting view). The cap keeps the
# cached records small: a cache hit copies them, and 26,250 WMT cells with their texts would cost more than the
# page. The downloads hold every item: made from the cached result only when clicked (all_correlation_records).
TOP = 50
KEPT = 500
# Characters of a text shown before it is folded into an expander.
FOLD = 280
DatasetKey = tuple[str, str]


# -- cached computations ------------------------------------------------------------------------------------
@st.cache_resource(max_entries=16, show_spinner=False)
def texts(_dataset: Dataset, key: DatasetKey):
    """The dataset's texts (None when it has none); one copy per dataset version."""
    from metaeval_core.data.texts import example_texts

    return example_texts(_dataset)


@st.cache_resource(max_entries=16, show_spinner=False)
def _correlation_result(_dataset: Dataset, key: DatasetKey, metric: str, human: str, level: str, coefficient: str,
                        pool: str, systems: str, versus: str, lower: float, upper: float):
    """The core's result (arrays, not records; shared, never copied on a hit): the panel's first items and the
    downloads' every item are both made from it."""
    from metaeval_core.analyses.examples import compare_examples, examples, pair_examples

    found = texts(_dataset, key)
    if versus:
        return compare_examples(_dataset, metric, versus, human, level=level, coefficient=coefficient, pool=pool,
                                systems=systems or None, texts=found)
    if lower > 0 or upper != float("inf"):
        return pair_examples(_dataset, metric, human, coefficient=coefficient, pool=pool, systems=systems or None,
                             lower=lower, upper=upper, texts=found)
    return examples(_dataset, metric, human, level=level, coefficient=coefficient, pool=pool,
                    systems=systems or None, texts=found)


def _n_items(result: Any) -> int:
    """How many items a result lists (pairs, inputs, cells or compared items)."""
    for name in ("records", "inputs", "system", "system_a"):
        value = getattr(result, name, None)
        if value is not None:
            return len(value)
    return 0


@st.cache_data(max_entries=64, show_spinner=False)
def correlation_examples(_dataset: Dataset, key: DatasetKey, metric: str, human: str, level: str, coefficient: str,
                         pool: str, systems: str, versus: str = "", lower: float = 0.0,
                         upper: float = float("inf")) -> tuple[dict, list[dict]]:
    """(summary, the first KEPT records) of the items behind one value; texts included where the dataset has them.

    ``summary["n_listed"]`` is how many items there are in all (:func:`all_correlation_records` lists them)."""
    result = _correlation_result(_dataset, key, metric, human, level, coefficient, pool, systems, versus, lower,
                                 upper)
    summary = {**result.summary(), "has_texts": texts(_dataset, key) is not None, "n_listed": _n_items(result)}
    return summary, result.to_records(top=KEPT)


def all_correlation_records(_dataset: Dataset, key: DatasetKey, metric: str, human: str, level: str,
                            coefficient: str, pool: str, systems: str, versus: str = "", lower: float = 0.0,
                            upper: float = float("inf")) -> list[dict]:
    """Every record of the items behind one value (the downloads; made only when one is clicked)."""
    return _correlation_result(_dataset, key, metric, human, level, coefficient, pool, systems, versus, lower,
                               upper).to_records()


# -- the test set's own system scores (docs/methods.md sec. 19.1) -------------------------------------------------
SYSTEM_SCORES = "sys"  # ``ex_scores``: system pairs of the .sys.score files, as WMT's system-level tasks read them


@st.cache_resource(max_entries=4, show_spinner="Loading the test set's system scores…")
def _system_view(dataset_id: str, data_dir: str, lp: str) -> Dataset | None:
    """A built-in test set's ``.sys.score`` view (one pseudo-input per system), or None where it has none."""
    from pathlib import Path

    from metaeval_core.data.dataset import DatasetError
    from metaeval_core.data.registry import dataset_ids, load_dataset

    if dataset_id not in dataset_ids():
        return None
    from metaeval_core.data.mtme import SYSTEM_INPUT

    try:
        view = load_dataset(dataset_id, data_dir=Path(data_dir) if data_dir else None, lp=lp or None,
                            mtme_level="sys")
    except DatasetError:  # one language pair only (no system view), or its files are not here
        return None
    return view if view.inputs == (SYSTEM_INPUT,) else None  # e.g. the demo, which has no score levels


def system_scores_view(dataset: Dataset, metric: str, human: str, systems: str) -> Dataset | None:
    """The open built-in test set's system scores on the systems the panel's pairs use (its system subset, rated by
    ``human``), or None when the dataset has no such view or it lacks ``metric`` or ``human``."""
    from metaeval_ui.data import data_dir_key

    dataset_id = state.get("dataset")
    if not dataset_id or dataset.id != dataset_id:
        return None
    view = _system_view(dataset_id, data_dir_key(), state.get("lp") or "")
    if view is None or metric not in view.measures or human not in view.human_measures:
        return None
    chosen = dataset.select_systems(systems or None).rated_by(human).systems
    return view.subset(systems=[s for s in chosen if s in view.systems])


def _scores_source(dataset: Dataset, key: DatasetKey, metric: str, human: str, level: str, systems: str,
                   plain: bool) -> tuple[Dataset, DatasetKey, str, bool]:
    """(dataset, key, systems, from system scores) the panel lists from: with ``ex_scores=sys`` at the system level
    of a test set with a system view, that view (a toggle, kept in the URL), else the page's dataset."""
    if level != "system" or not plain:
        return dataset, key, systems, False
    view = system_scores_view(dataset, metric, human, systems)
    if view is None:
        if state.get("ex_scores") == SYSTEM_SCORES:
            st.caption("This dataset has no system-score files for this metric: the pairs use the means of its "
                       "segment scores.")
        return dataset, key, systems, False
    on = st.toggle("System scores (.sys.score files)", value=state.get("ex_scores") == SYSTEM_SCORES,
                   key=f"ex_scores:{dataset.id}:{state.get('lp')}",
                   help="the test set's own system scores (e.g. corpus BLEU), which WMT's system-level tasks "
                        "correlate, instead of the means of the segment scores")
    state.put("ex_scores", SYSTEM_SCORES if on else None)
    if not on:
        return dataset, key, systems, False
    return view, (view.id, view.version), "", True


@st.cache_data(max_entries=64, show_spinner=False)
def pair_inputs(_dataset: Dataset, key: DatasetKey, metric: str, human: str, system_a: str, system_b: str,
                systems: str) -> list[dict]:
    """The inputs of one system pair where the metric and the humans disagree most (texts side by side)."""
    import numpy as np

    from metaeval_core.stats.correlation import correlation_inputs

    subset = _dataset.select_systems(systems or None).rated_by(human)
    x, z = correlation_inputs(subset, metric, human, level="input", pool="judged")
    a, b = subset.systems.index(system_a), subset.systems.index(system_b)
    dx, dz = x[a] - x[b], z[a] - z[b]
    inputs = [j for j, keep in zip(subset.inputs, subset.judged) if keep]
    found = texts(_dataset, key)
    rows = {s: i for i, s in enumerate(found.systems)} if found is not None else {}
    cols = {j: k for k, j in enumerate(found.inputs)} if found is not None else {}
    valid = ~(np.isnan(dx) | np.isnan(dz))
    against = valid & (np.sign(dx) * np.sign(dz) < 0)
    order = np.lexsort((-np.abs(np.where(valid, dz, 0.0)), ~against))
    from metaeval_core.stats.exact import grid_scale

    sx, sz = grid_scale(subset, metric), grid_scale(subset, human)
    out = []
    for k in order[:TOP]:
        if not valid[k]:
            continue
        j = inputs[k]
        record = {"input": j, "disagrees": bool(against[k]), "metric a-b": float(dx[k] / sx),
                  "human a-b": float(dz[k] / sz)}
        if found is not None and j in cols:
            c = cols[j]
            record.update(source=found.sources[c] or None, reference=found.references[c] or None,
                          output_a=found.output(rows[system_a], c) if system_a in rows else None,
                          output_b=found.output(rows[system_b], c) if system_b in rows else None)
        out.append(record)
    return out


@st.cache_data(max_entries=32, show_spinner=False)
def judge_examples_records(_data: Any, key: tuple[str, str], judge: str, view: str, reference: str, order: str,
                           ties: str, invalid: str, unit: str = "words") -> tuple[dict, list[dict]]:
    from metaeval_core.judges.agreement import resolve_reference
    from metaeval_core.judges.examples import judge_examples

    result = judge_examples(_data, judge, view=view, reference=reference, order=order, ties=ties, invalid=invalid,
                            unit=unit)
    summary = {**result.summary(), "reference_label": resolve_reference(_data, reference)[1]}
    return summary, result.to_records()


# -- selection wiring -------------------------------------------------------------------------------------------
def selected_rows(event: Any) -> list[int]:
    """Row positions selected in an ``st.dataframe(..., on_select="rerun")`` event (empty when none)."""
    try:
        return [int(r) for r in event.selection.rows]
    except (AttributeError, TypeError, ValueError):
        try:
            return [int(r) for r in event["selection"]["rows"]]
        except (KeyError, TypeError, ValueError):
            return []


def selected_points(event: Any) -> list[dict]:
    """Points selected in an ``st.plotly_chart(..., on_select="rerun")`` event (empty when none)."""
    try:
        return list(event.selection.points)
    except (AttributeError, TypeError):
        try:
            return list(event["selection"]["points"])
        except (KeyError, TypeError):
            return []


def table_selection(labels: Sequence[str], humans: Sequence[str] | None = None,
                    default_human: str | None = None) -> dict | None:
    """``selection_default`` for a table whose rows are ``labels``: the row of the open examples (from the URL).

    With ``humans`` (each row's human dimension, when a table lists several) the row must also be the open
    examples' dimension (``ex_human``, else ``default_human``)."""
    chosen = state.get("ex_metric")
    human = state.get("ex_human") or default_human
    for k, label in enumerate(labels):
        if label == chosen and (humans is None or humans[k] == human):
            return {"selection": {"rows": [k], "columns": []}}
    return None


def clicked_pair(event: Any, metrics: Sequence[str], humans: Sequence[str]) -> tuple[str, str] | None:
    """(metric, human) of the first clicked point: its customdata ``[metric, human]`` (a panel of small multiples),
    else its x or y with the only human dimension; None when nothing of these was clicked."""
    for point in selected_points(event):
        try:
            data = point["customdata"]
        except (KeyError, TypeError):
            data = None
        if isinstance(data, (list, tuple)) and len(data) == 2 and data[0] in metrics and data[1] in humans:
            return str(data[0]), str(data[1])
    metric = clicked_label(event, metrics)
    return (metric, humans[0]) if metric is not None and len(humans) == 1 else None


def choose_against(metrics: Sequence[str], humans: Sequence[str], *, picked: tuple = (),
                   default_human: str) -> tuple[str | None, str]:
    """The metric whose examples are open and the human dimension they are against, on a page that shows several.

    ``picked`` holds one (metric, human) pick (or None) per source (a table row, a chart point); a pick that
    changed since the last run opens that metric against that dimension, and both are kept in the URL (``ex``,
    ``ex_h``). With one dimension, ``ex_h`` is cleared and ``default_human`` is used."""
    humans = list(humans)
    picks = tuple(p if p is not None and p[0] in metrics and p[1] in humans else None for p in picked)
    last = st.session_state.get("_ex_last_pair")
    last = last if isinstance(last, tuple) and len(last) == len(picks) else (None,) * len(picks)
    st.session_state["_ex_last_pair"] = picks
    fresh = [p for p, before in zip(picks, last) if p is not None and p != before]
    if fresh:
        metric, human = fresh[-1]
        if metric != state.get("ex_metric") or human != (state.get("ex_human") or default_human):
            state.put("ex_metric", metric)
            state.put("ex_human", human if len(humans) > 1 else None)
            state.put("ex_item", "")
    metric = choose(metrics, several_humans=len(humans) > 1)
    if len(humans) <= 1 or metric is None:
        if len(humans) <= 1:
            state.put("ex_human", None)
        return metric, default_human
    key = state.prepare("ex_human", options=humans, fallback=default_human if default_human in humans
                        else humans[0])
    human = st.selectbox("Against", humans, key=key, help="the human dimension the examples are listed against")
    state.commit("ex_human", human)
    return metric, human


def choose(options: Sequence[str], *, picked: str | None | tuple = None, label: str = "Examples for",
           format_func=str, several_humans: bool = False) -> str | None:
    """The item whose examples are open: a new click wins, else the URL/session choice, else none.

    ``picked`` is what a table row or a chart point selects, or a tuple of them (one per source: a row, a bar);
    a table keeps its selection across reruns, so only a source whose pick changed since the last run counts, and
    the picker can still change the choice. Returns None when nothing is chosen (the panel then invites a click).
    The choice is a picker too, so it works without a pointer and in tests. Unless the page shows
    ``several_humans`` (:func:`choose_against`), the examples are against its one human measure: ``ex_h`` is cleared.
    """
    if not several_humans and state.get("ex_human") is not None:
        state.put("ex_human", None)
    options = list(options)
    picks = picked if isinstance(picked, tuple) else (picked,)
    last = st.session_state.get("_ex_last_pick")
    last = last if isinstance(last, tuple) and len(last) == len(picks) else (None,) * len(picks)
    st.session_state["_ex_last_pick"] = picks
    fresh = [p for p, before in zip(picks, last) if p != before and p in options]
    if fresh and fresh[-1] != state.get("ex_metric"):
        state.put("ex_metric", fresh[-1])
        state.put("ex_item", "")
    none = "—"
    current = state.get("ex_metric")
    if current not in (None, "") and current not in options:  # another page's choice: closed here, silently
        state.put("ex_metric", None)
    key = state.prepare("ex_metric", options=[none, *options], fallback=none)
    value = st.selectbox(label, [none, *options], key=key,
                         format_func=lambda v: "— click a row, or choose —" if v == none else format_func(v))
    state.commit("ex_metric", None if value == none else value)
    return None if value == none else value


def links(targets: Sequence[tuple[str, str, dict]], *, label: str = "Examples behind:") -> None:
    """In-app links that open another page with its examples panel open: one per (page file, link text,
    changes to the view), e.g. the Correlations page with ``ex_metric`` set. The page opened adopts the link's view
    (:func:`metaeval_ui.state.link_params`), so its URL, once shared, reopens the same examples. Light elements
    only (page links), for the Overview. Pages this build does not register are skipped."""
    from metaeval_ui.navigation import registered_page

    shown = [(path, text, changes) for path, text, changes in targets if registered_page(path) is not None]
    if not shown:
        return
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    row.caption(label, width="content")
    for path, text, changes in shown:
        row.page_link(path, label=text, icon=":material/format_list_bulleted:",
                      query_params=state.link_params(**{"ex_item": None, "ex_human": None, "ex_scores": None,
                                                        "ex_view": None, **changes}))


# A WMT suite's tasks whose statistic metaeval lists no items for: said in one line.
SUITE_NOTE = ("No examples behind {tasks}: metaeval lists no items for that statistic.")


def correlation_link(text: str, metric: str, *, level: str = "system", coefficient: str = "kendall",
                     pool: str = "judged", human: str | None = None, dataset: str | None = None,
                     systems: str | None = None, lp: str | None = None,
                     human_translations: bool | None = None, scores: str | None = None) -> tuple[str, str, dict]:
    """A :func:`links` target: Correlations on ``metric``'s examples at that level, coefficient and pool (system
    level: its system pairs, discordant first). ``human``, ``dataset`` and ``systems`` change the view when given
    (another dataset, or another language pair ``lp`` of a test set, opens with ``metric`` alone: the session's
    metrics may not exist there). ``human_translations``: WMT's system set with or without the human translations
    (the standard reference left out, as WMT does). ``scores='sys'``: the system pairs of the test set's own
    system scores (the ``.sys.score`` files, as WMT's system-level tasks read them; :func:`system_scores_view`)."""
    changes: dict = {"ex_metric": metric, "level": level, "coefficient": coefficient, "pool": pool,
                     "ex_scores": scores}
    other = dataset is not None and dataset != state.get("dataset")
    if other or (lp is not None and lp != state.get("lp")):
        # another dataset opens on its default pair (as averaged) unless a pair is named
        changes.update(dataset=dataset or state.get("dataset"), metrics=[metric], systems=systems, lp=lp)
    else:
        chosen = list(state.get("metrics") or [])
        changes["metrics"] = chosen if metric in chosen else [*chosen, metric]  # Correlations opens a listed metric
        if systems is not None:
            changes["systems"] = systems
    if human is not None:
        changes["human"] = human
    if human_translations is not None:
        changes.update(human_translations=bool(human_translations) or None, all_systems=None)
    return "pages/correlations.py", text, changes


def system_pair_links(metrics: Sequence[str], *, pool: str = "judged", level: str = "system",
                      coefficient: str = "kendall",
                      label: str = "System pairs behind (ordered unlike people first):") -> None:
    """Links to each metric's examples on Correlations against the session's human: at the system level its system
    pairs (Kendall unless ``coefficient``), at the input or global level the items of that level."""
    links([correlation_link(str(m), str(m), level=level, coefficient=coefficient, pool=pool) for m in metrics],
          label=label)


def names_selection(names: Sequence[str]) -> str:
    """The system selection that keeps exactly ``names`` (each quoted as needed), e.g. the top k systems."""
    from metaeval_core.data.selection import quote_term

    return ",".join(quote_term(str(n)) for n in names)


def task_links(result: Any) -> None:
    """For an average over tasks (:class:`metaeval_core.analyses.average.TaskAverage`): one row of links per task,
    each metric's value on it opening that task's examples on Correlations (its dataset, human, level, coefficient,
    pool and systems). Metrics without a value on a task get no link."""
    import numpy as np

    with st.expander(f"Examples behind each task's value ({len(result.tasks)} tasks)"):
        for t, task in enumerate(result.tasks):
            targets = [correlation_link(f"{m} {float(result.values[i, t]):.3f}", str(m), level=task.level,
                                        coefficient=task.coefficient, pool=task.pool, human=task.human,
                                        dataset=task.dataset, systems=task.systems or "")
                       for i, m in enumerate(result.metrics) if np.isfinite(result.values[i, t])]
            if targets:
                links(targets, label=f"{task.label}:")
            else:
                st.caption(escape_markdown(f"{task.label}: no metric has a value on this task."))


def suite_links(result: Any, dataset: str, human: str) -> None:
    """For a WMT suite (:class:`metaeval_core.analyses.suites.SuiteResult`) on the test set ``dataset`` with gold ``human``: one metric
    (a picker, best first) and a link per task opening its examples on Correlations (the task's language pair, gold,
    level, coefficient and system set; the metric is that pair's, with its standard reference). A task pooled over
    several pairs (WMT23's system accuracy) links each pair's part. Tasks on the test set's system scores (system
    Pearson, system accuracy) open the pairs of those scores (``ex_scores=sys``), so the opened panel's value is the
    suite's; soft pairwise accuracy opens each pair's two p-values. Tasks whose statistic the examples core does not
    list items for are named in one line (:data:`SUITE_NOTE`)."""
    import numpy as np

    from typing import get_args

    from metaeval_core.analyses.examples import SPA, ExampleLevel
    from metaeval_core.stats.coefficients import POINT_COEFFICIENTS

    with st.expander("Examples behind each task's value"):
        metric = st.selectbox("Metric", list(result.metrics), key="ex_suite_metric",
                              help="the metric whose items behind each task open on Correlations")
        i = list(result.metrics).index(metric)
        targets, without = [], []
        for t, task in enumerate(result.tasks):
            if task.coefficient not in (*POINT_COEFFICIENTS, SPA) or task.level not in get_args(ExampleLevel):
                without.append(task.short)
                continue
            if not np.isfinite(result.values[i, t]):
                continue
            value = f"{float(result.values[i, t]):.3f}"
            for lp in task.lps:
                text = f"{task.short} {value}" if len(task.lps) == 1 else f"{lp} pairs of {task.short} {value} (pooled)"
                target = correlation_link(text, result.metric_ids[lp][metric], level=task.level,
                                          coefficient=task.coefficient, pool="judged", human=human,
                                          dataset=dataset, systems="", lp=lp, human_translations=task.human,
                                          scores=SYSTEM_SCORES if task.view == "sys" else None)
                # The metric alone: the page opened bootstraps every listed metric (SPA's: seconds each).
                target[2]["metrics"] = [result.metric_ids[lp][metric]]
                targets.append(target)
        if targets:
            links(targets, label=f"{escape_markdown(metric)}:")
        if without:
            st.caption(SUITE_NOTE.format(tasks=", ".join(without)))


# -- rendering --------------------------------------------------------------------------------------------------
def _text(label: str, text: str | None, *, container: Any = None) -> None:
    box = container or st
    if not text:
        box.caption(f"{label}: —")
        return
    if len(text) <= FOLD:
        box.markdown(f"**{label}**  \n{escape_markdown(text)}")
        return
    box.markdown(f"**{label}**  \n{escape_markdown(text[:FOLD].rstrip())}…")
    with box.expander(f"Whole {label.lower()} ({len(text.split()):,} words)"):
        st.markdown(escape_markdown(text))


def _number(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def meeting_text(summary: dict, records: list[dict]) -> str:
    """A plain-text view that reads well on a shared screen: per item its numbers, then its texts aligned."""
    lines = []
    head = {k: v for k, v in summary.items() if v is not None and k != "has_texts"}
    lines.append(" · ".join(f"{k} {_number(v)}" for k, v in head.items()))
    for n, r in enumerate(records, 1):
        lines.append("")
        numbers = {k: v for k, v in r.items()
                   if k not in ("source", "reference", "output", "output_a", "output_b", "instruction", "systems",
                                "raters")}
        lines.append(f"[{n}] " + " · ".join(f"{k} {_number(v)}" for k, v in numbers.items()))
        for key, label in (("instruction", "INSTRUCTION"), ("source", "SOURCE"), ("reference", "REFERENCE"),
                           ("output", "OUTPUT"), ("output_a", "A"), ("output_b", "B")):
            if r.get(key):
                lines.append(f"  {label:<10} {' '.join(str(r[key]).split())}")
        for s in r.get("systems", []) or []:
            text = f"  {s['system']:<22} metric {_number(s['metric'])}  human {_number(s['human'])}"
            if s.get("output"):
                text += f"  | {' '.join(str(s['output']).split())}"
            lines.append(text)
        if r.get("raters"):
            lines.append("  VERDICTS   " + "; ".join(f"{k}: {', '.join(f'{o} {v}' for o, v in vs.items())}"
                                                    for k, vs in r["raters"].items()))
    return "\n".join(lines) + "\n"


# Items the meeting view lays out (the text download holds every listed item).
MEETING = 10


def meeting_view(records: list[dict], total: int | None = None) -> None:
    """The first items laid out to be read on a shared screen: the numbers in one line, then the texts aligned
    (source and reference, then the outputs; the two responses of a pair side by side), nothing folded.
    ``total``: how many items there are in all (default: the records given)."""
    total = len(records) if total is None else total
    st.caption(f"The first {min(MEETING, len(records))} of {total:,} items; the text download holds them all.")
    for n, r in enumerate(records[:MEETING], 1):
        with st.container(border=True):
            numbers = {k: v for k, v in r.items() if not isinstance(v, (list, dict))
                       and k not in ("source", "reference", "output", "output_a", "output_b", "instruction")}
            st.markdown(f"**{n}.** " + " · ".join(f"{escape_markdown(k)} **{escape_markdown(_number(v))}**"
                                                  for k, v in numbers.items()))
            for key, label in (("instruction", "Instruction"), ("source", "Source"), ("reference", "Reference")):
                if r.get(key):
                    st.markdown(f"*{label}:* {escape_markdown(r[key])}")
            if "output_a" in r or "output_b" in r:
                a, b = st.columns(2)
                a.markdown(f"*A{' (' + r['system_a'] + ')' if r.get('system_a') else ''}:* "
                           f"{escape_markdown(r.get('output_a') or '—')}")
                b.markdown(f"*B{' (' + r['system_b'] + ')' if r.get('system_b') else ''}:* "
                           f"{escape_markdown(r.get('output_b') or '—')}")
            if r.get("output"):
                st.markdown(f"*Output of {escape_markdown(r.get('system', ''))}:* {escape_markdown(r['output'])}")
            if r.get("systems"):
                st.dataframe(pd.DataFrame.from_records(r["systems"]), hide_index=True, width="stretch",
                             column_config={"output": st.column_config.TextColumn("output", width="large")})


def _downloads(summary: dict, every: Callable[[], list[dict]], name: str, key: str) -> None:
    """The JSON and text downloads of every item (``every()`` lists them; called only when one is clicked)."""
    left, right = st.columns(2)
    exports.deferred_download(
        "Download the items (JSON)", lambda: json.dumps({"about": summary, "items": every()}, ensure_ascii=False,
                                                        indent=1, default=str),
        name, key=f"{key}:json", suffix=".json", mime="application/json", container=left)
    exports.deferred_download("Download the text view", lambda: meeting_text(summary, every()), name,
                              key=f"{key}:txt", suffix=".txt", mime="text/plain", container=right)


def _cap_note(summary: dict, records: list[dict]) -> None:
    """Say so when the panel lists only the first items (the downloads hold them all)."""
    total = summary.get("n_listed", len(records))
    if total > len(records):
        st.caption(f"The panel lists the first {len(records):,} of {total:,} items (its table the first "
                   f"{min(TOP, len(records))}); the downloads hold all {total:,}.")


def _flat(records: list[dict]) -> pd.DataFrame:
    """The records as a table of numbers (texts and nested lists left out) for the list and the report."""
    rows = [{k: v for k, v in r.items() if not isinstance(v, (list, dict))
             and k not in ("source", "reference", "output", "output_a", "output_b", "instruction")} for r in records]
    return pd.DataFrame.from_records(rows)


def _item_picker(records: list[dict], ident, describe, *, label: str) -> dict | None:
    """A selectable list of the items; the chosen one's id is kept in the URL (``ex_item``)."""
    if not records:
        return None
    ids = [ident(r) for r in records]
    saved = state.get("ex_item") or ""
    frame = _flat(records[:TOP])
    list_key = f"ex_items:{abs(hash(tuple(ids[:TOP]))) % 10**12}"  # a new list starts with a fresh selection
    event = st.dataframe(frame, hide_index=True, width="stretch", key=list_key, on_select="rerun",
                         selection_mode="single-row",
                         selection_default={"selection": {"rows": [ids.index(saved)], "columns": []}}
                         if saved in ids[:TOP] else None)
    rows = selected_rows(event)
    clicked = ids[rows[0]] if rows and rows[0] < len(ids) else None
    fresh = clicked != st.session_state.get(f"_last:{list_key}")
    st.session_state[f"_last:{list_key}"] = clicked
    if state.get("ex_item") not in (None, "", *ids):  # an item of another list (level, metric): the first, silently
        state.put("ex_item", None)
    key = state.prepare("ex_item", options=ids, fallback=ids[0])
    if fresh and clicked is not None:  # a click in the list chooses the item (the picker below follows)
        st.session_state[key] = clicked
    chosen = st.selectbox(label, ids, key=key, format_func=lambda i: describe(records[ids.index(i)]))
    state.commit("ex_item", chosen)
    return records[ids.index(chosen)]


def _meeting_toggle(key: str) -> bool:
    return st.toggle("Text view for a meeting", key=f"ex_meeting:{key}",
                     help="every listed item as plain text: numbers, then source, reference and outputs aligned")


def correlation_panel(dataset: Dataset, key: DatasetKey, metric: str, human: str, level: str, coefficient: str,
                      pool: str, systems: str, *, versus: str = "", lower: float = 0.0,
                      upper: float = float("inf"), title: str = "") -> None:
    """The items behind one correlation (or one two-metric comparison, or one rSYS-Delta cell)."""
    with st.container(border=True):
        st.markdown(f"#### {escape_markdown(title or 'Examples behind the number')}")
        source, source_key, source_systems, system_scores = _scores_source(
            dataset, key, metric, human, level, systems, not versus and lower == 0 and upper == float("inf"))
        found = None
        with guard("Could not list the examples"):
            with st.spinner("Listing the items…"):
                found = correlation_examples(source, source_key, metric, human, level, coefficient, pool,
                                             source_systems, versus, lower, upper)
        if found is None:
            return
        summary, records = found
        if system_scores:  # a pair's inputs (and texts) come from the page's dataset
            summary = {**summary, "has_texts": texts(dataset, key) is not None}
        st.caption(escape_markdown(_summary_sentence(summary, dataset)))
        if not summary["has_texts"]:
            st.info(f"{dataset.title or dataset.id} has no texts in the data directory (they come with the built-in "
                    "datasets whose files hold them and with uploads that have a text column): the numbers are "
                    "listed.")
        name = exports.file_name("examples", dataset.id, metric, versus, human, level, coefficient)
        exports.collect(f"Examples: {metric}{' vs ' + versus if versus else ''} ({level}, {coefficient})",
                        table=_flat(records[:TOP]), text=_summary_sentence(summary, dataset), key="examples")
        _cap_note(summary, records)

        def every() -> list[dict]:
            return all_correlation_records(source, source_key, metric, human, level, coefficient, pool,
                                           source_systems, versus, lower, upper)

        if _meeting_toggle(name):
            meeting_view(records, summary.get("n_listed"))
            _downloads(summary, every, name, key=name)
            return
        left, right = st.columns([2, 3])
        with left:
            chosen = _list_items(records, summary, level, versus)
        with right:
            if chosen is not None:
                _show_item(chosen, dataset, key, summary, level, versus, systems)
        _downloads(summary, every, name, key=name)


def _summary_sentence(summary: dict, dataset: Dataset) -> str:
    if "metric_x" in summary:
        return (f"{summary['metric_x']} vs {summary['metric_y']} against {summary['human']} "
                f"({summary['level']} level, {summary['coefficient']}): {_number(summary['estimate_x'])} vs "
                f"{_number(summary['estimate_y'])}; {summary['n_items']} items where the two differ, the largest "
                "first.")
    if summary["level"] == "system":
        band = ""
        if summary.get("lower") or summary.get("upper") is not None:
            band = (f" Pairs with {_number(summary['lower'])} ≤ |metric difference| ≤ "
                    f"{_number(summary['upper']) if summary['upper'] is not None else '∞'}"
                    f" ({summary['n_pairs']} of {summary['total_pairs']}).")
        if "mean_p_gap" in summary:  # soft pairwise accuracy: the gaps between the two p-values
            return (f"{summary['metric']} vs {summary['human']}: system-level soft pairwise accuracy "
                    f"{_number(summary['estimate'])} = 1 - the mean gap |p_metric - p_human| over "
                    f"{summary['n_spa_pairs']} system pairs (p: the one-sided permutation p-value that a beats b, "
                    "under the metric and under the humans); the largest gaps first.")
        scores = (" The systems' own scores (the test set's .sys.score files, as WMT's system-level tasks read "
                  "them): no permutation p-value." if summary.get("scores") == "system" else
                  " p(human): the humans' paired permutation p-value of the pair's difference.")
        return (f"{summary['metric']} vs {summary['human']}: system-level {summary['coefficient']} "
                f"{_number(summary['estimate'])}. {summary['n_discordant']} of {summary['n_pairs']} system pairs are "
                f"ordered unlike people (discordant, listed first), {summary['n_ties']} tied.{band}{scores}")
    if summary["level"] == "input":
        return (f"{summary['metric']} vs {summary['human']}: input-level {summary['coefficient']} "
                f"{_number(summary['estimate'])} is the mean of {summary['n_defined']} inputs' own values; the lowest "
                "first.")
    return (f"{summary['metric']} vs {summary['human']}: global-level {summary['coefficient']} "
            f"{_number(summary['estimate'])} over {summary['n_cells']:,} cells; the cells whose metric rank and human "
            "rank differ most first.")


def _list_items(records: list[dict], summary: dict, level: str, versus: str) -> dict | None:
    if not records:
        st.caption("No items.")
        return None
    if versus and level == "system" or (not versus and level == "system"):
        return _item_picker(records, lambda r: f"{r['system_a']} | {r['system_b']}",
                            lambda r: f"{r['system_a']} vs {r['system_b']}", label="Pair")
    if level == "input":
        return _item_picker(records, lambda r: str(r["input"]),
                            lambda r: f"{r['input']} ({_number(r.get('value', r.get('difference')))})",
                            label="Input")
    return _item_picker(records, lambda r: f"{r['system']} | {r['input']}",
                        lambda r: f"{r['system']} on {r['input']}", label="Cell")


def _show_item(record: dict, dataset: Dataset, key: DatasetKey, summary: dict, level: str, versus: str,
               systems: str) -> None:
    numbers = {k: v for k, v in record.items() if not isinstance(v, (list, dict))
               and k not in ("source", "reference", "output", "output_a", "output_b")}
    st.markdown(" · ".join(f"**{escape_markdown(k)}** {escape_markdown(_number(v))}" for k, v in numbers.items()))
    if "system_a" in record:
        metric = summary.get("metric") or summary.get("metric_x")
        inputs = pair_inputs(dataset, key, metric, summary["human"], record["system_a"], record["system_b"],
                             systems)
        st.caption(f"The inputs where {record['system_a']} and {record['system_b']} differ most in the humans' "
                   "scores, those the metric orders the other way first:")
        if not summary.get("has_texts", True):
            st.dataframe(pd.DataFrame.from_records(inputs), hide_index=True, width="stretch")
            return
        for n, r in enumerate(inputs[:5]):
            with st.expander(f"{r['input']}: human a-b {_number(r['human a-b'])}, metric a-b "
                             f"{_number(r['metric a-b'])}" + (" — disagree" if r["disagrees"] else ""),
                             expanded=n == 0):
                _text("Source", r.get("source"))
                _text("Reference", r.get("reference"))
                a, b = st.columns(2)
                _text(record["system_a"], r.get("output_a"), container=a)
                _text(record["system_b"], r.get("output_b"), container=b)
        return
    _text("Source", record.get("source"))
    _text("Reference", record.get("reference"))
    if record.get("output") is not None or "system" in record:
        _text(f"Output of {record.get('system', '')}", record.get("output"))
    if record.get("systems"):
        frame = pd.DataFrame.from_records(record["systems"])
        st.dataframe(frame, hide_index=True, width="stretch",
                     column_config={"output": st.column_config.TextColumn("output", width="large")})


JUDGE_VIEWS = {"wrong": "wrong against the reference", "flips": "verdict flips with the order",
               "longer": "chose the longer response"}


def clicked_view(picks: tuple, last: Any, pick_views: Sequence[str], views: Sequence[str]) -> str | None:
    """The view of the one table whose picked row changed since ``last`` (None: no click). The first run (``last``
    not a run of these tables: a link, another page) keeps the URL's view, and several tables changing at once are
    them echoing a judge chosen in the picker, not a click."""
    if not isinstance(last, tuple) or len(last) != len(picks):
        return None
    fresh = [v for p, before, v in zip(picks, last, pick_views) if p is not None and p != before]
    return fresh[0] if len(fresh) == 1 and fresh[0] in views else None


def _judge_view(views: Sequence[str], picks: tuple, pick_views: Sequence[str]) -> str:
    """The judge items' view (``ex_view`` in the URL): a fresh row pick opens its table's view, else the radio."""
    last = st.session_state.get("_ex_last_view_pick")
    st.session_state["_ex_last_view_pick"] = picks
    clicked = clicked_view(picks, last, pick_views, views)
    if clicked is not None:
        state.put("ex_view", clicked)
        state.put("ex_item", "")
    key = state.prepare("ex_view", options=list(views), fallback=views[0])
    return state.commit("ex_view", st.radio("Items", list(views), horizontal=True, key=key,
                                            format_func=JUDGE_VIEWS.get))


def judge_panel(data: Any, key: tuple[str, str], judges: Sequence[str], *, reference: str, order: str, ties: str,
                invalid: str, picked: str | None | tuple = None, views: Sequence[str] = ("wrong", "flips"),
                pick_views: Sequence[str] = (), per_view: dict | None = None, unit: str = "words") -> None:
    """The items a judge gets wrong, flips or where it prefers the longer response (``views``), instruction and
    both responses side by side, every verdict. ``picked``: a judge, or one per table (their views
    ``pick_views``); ``per_view`` overrides the conventions of a view (e.g. the consistency's ``invalid``)."""
    with st.container(border=True):
        st.markdown("#### Examples behind the number")
        picks = picked if isinstance(picked, tuple) else (picked,)
        view = _judge_view(views, picks, tuple(pick_views) or (views[0],) * len(picks))
        judge = choose(judges, picked=picked, label="Judge")
        if judge is None:
            st.caption("Click a judge's row, or choose one, to list the items behind its number.")
            return
        conv = {"order": order, "invalid": invalid, **(per_view or {}).get(view, {})}
        found = None
        with guard("Could not list the examples"):
            found = judge_examples_records(data, key, judge, view, reference, conv["order"], ties, conv["invalid"],
                                           unit)
        if found is None:
            return
        summary, records = found
        what = {"wrong": f"{summary['n_items']} of {summary['n_counted']} counted items are wrong against "
                         f"{summary['reference_label']} (order {conv['order']})",
                "flips": f"{summary['n_items']} of {summary['n_counted']} items judged in both orders change "
                         "verdict",
                "longer": f"{summary.get('n_hits')} of its {summary.get('n_verdicts')} verdicts naming a winner "
                          f"choose the longer response ({unit}; order {conv['order']}), on {summary['n_items']} of "
                          f"the {summary['n_counted']} items counted"}[view]
        st.caption(escape_markdown(f"{judge}: {what}."))
        name = exports.file_name("examples", data.id, judge, view)
        exports.collect(f"Examples: {judge} ({view})", table=_flat(records[:TOP]), text=what, key="examples")
        if _meeting_toggle(name):
            meeting_view(records)
            _downloads(summary, lambda: records, name, key=name)
            return
        chosen = _item_picker(records, lambda r: r["item"],
                              lambda r: f"{r['item']}: judge {r['judge_original'] or '—'}"
                              f"{'/' + r['judge_swapped'] if r['judge_swapped'] else ''}, reference "
                              f"{r['reference'] or '—'}", label="Item")
        if chosen is not None:
            _text("Instruction", chosen.get("instruction"))
            a, b = st.columns(2)
            _text(f"Response A{' (' + chosen['system_a'] + ')' if chosen.get('system_a') else ''}",
                  chosen.get("output_a"), container=a)
            _text(f"Response B{' (' + chosen['system_b'] + ')' if chosen.get('system_b') else ''}",
                  chosen.get("output_b"), container=b)
            verdicts = pd.DataFrame([{"rater": k, **v} for k, v in chosen["raters"].items()])
            st.dataframe(verdicts, hide_index=True, width="stretch")
        _downloads(summary, lambda: records, name, key=name)


def heatmap_cell(event: Any) -> tuple[Any, Any] | None:
    """(x, y) of the first point clicked on a heatmap (``on_select="rerun"``), or None."""
    for point in selected_points(event):
        try:
            return point["x"], point["y"]
        except (KeyError, TypeError):
            continue
    return None


def comparison_panel(dataset: Dataset, key: DatasetKey, metrics: Sequence[str], human: str, level: str,
                     coefficient: str, pool: str, systems: str, *, cell: tuple | None = None,
                     row: tuple[str, str] | None = None) -> None:
    """A significance cell (metric X vs metric Y): the items where the two differ most.

    ``cell`` is a click on the p-value heatmap (its axes are metric positions: x the column Y, y the row X), ``row``
    the (X, Y) of a selected table row; whichever changed last opens its comparison.
    """
    pairs = [f"{x} vs {y}" for x in metrics for y in metrics if x != y]
    from_cell = None
    if cell is not None and all(isinstance(v, (int, float)) for v in cell) and cell[0] != cell[1]:
        from_cell = f"{metrics[int(cell[1])]} vs {metrics[int(cell[0])]}"
    chosen = choose(pairs, picked=(None if row is None else f"{row[0]} vs {row[1]}", from_cell),
                    label="Examples for the comparison")
    if chosen is None:
        st.caption("Click a cell of the heatmap or a row of the table, or choose a comparison, to list the items "
                   "where the two metrics differ most.")
        return
    x, y = chosen.split(" vs ", 1)
    correlation_panel(dataset, key, x, human, level, coefficient, pool, systems, versus=y,
                      title=f"Examples: where {x} and {y} differ")


def band_panel(dataset: Dataset, key: DatasetKey, metric: str, human: str, pool: str, systems: str, lower: float,
               upper: float) -> None:
    """The system pairs of an rSYS-Delta band or decile cell (the page's band), discordant first."""
    show = st.toggle("Examples: the system pairs in this band", key="ex_band",
                     value=state.get("ex_metric") == f"band:{metric}")
    if show:
        state.commit("ex_metric", f"band:{metric}")
    elif str(state.get("ex_metric") or "").startswith("band:"):
        state.commit("ex_metric", None)
    if show:
        correlation_panel(dataset, key, metric, human, "system", "kendall", pool, systems, lower=lower, upper=upper,
                          title="Examples: the pairs in the band")


def clicked_label(event: Any, options: Sequence[str]) -> str | None:
    """The option named by the first clicked point's x, y (a bar's category) or customdata, or None.

    Pass ``st.session_state.get(chart_key)`` to read a click before the chart is drawn again in this run.
    """
    import html

    for point in selected_points(event):
        for axis in ("x", "y", "customdata"):
            try:
                value = point[axis]
                value = value[0] if isinstance(value, (list, tuple)) and value else value
                value = html.unescape(str(value))
            except (KeyError, TypeError):
                continue
            if value in options:
                return value
    return None


def clickable_cells(fig: Any) -> Any:
    """The figure with invisible markers over every cell of its first heatmap, so that a click selects a cell.

    Streamlit reports plotly *selections*, and heatmaps have none; the markers (one per cell, transparent) carry the
    cell's hover text, so hovering reads as before. Returns a copy (a cached figure stays as it was).
    """
    import plotly.graph_objects as go

    fig = go.Figure(fig)
    heat = next((t for t in fig.data if t.type == "heatmap"), None)
    if heat is None or heat.z is None:
        return fig
    n_rows, n_cols = len(heat.z), len(heat.z[0]) if len(heat.z) else 0
    xs = list(heat.x) if heat.x is not None else list(range(n_cols))
    ys = list(heat.y) if heat.y is not None else list(range(n_rows))
    px, py, hover = [], [], []
    for i in range(n_rows):
        for j in range(n_cols):
            px.append(xs[j])
            py.append(ys[i])
            if heat.customdata is not None:
                hover.append(heat.customdata[i][j])
            else:
                text = heat.text[i][j] if heat.text is not None else ""
                hover.append(f"{ys[i]}, {xs[j]}<br>{text}")
    fig.add_scatter(x=px, y=py, mode="markers", marker=dict(size=28, opacity=0), customdata=hover,
                    hovertemplate="%{customdata}<extra></extra>", showlegend=False, name="")
    return fig
