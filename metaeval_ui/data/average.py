"""Cached core calls of the Overall average page (docs/methods.md sec. 13): metrics averaged over several tasks.

Same pattern as :mod:`metaeval_ui.data`: datasets are passed as ``_datasets`` (leading underscore: never hashed) with
their small keys ``(name, (id, version))``; tasks are plain tuples. Other built-in datasets are loaded once per
process (with their default system subset, as the sidebar loads them).
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd
import streamlit as st

from metaeval_core.analyses.average import RULE_LABELS, Task, TaskAverage, average_over_tasks, default_rule
from metaeval_core.data.dataset import Dataset
from metaeval_core.stats.significance import estimated_table_seconds

from metaeval_ui import data

MAX_AVERAGE_RESAMPLES = 5_000  # every task is resampled twice (interval and test): 5,000 x 4 tasks take seconds
TaskTuple = tuple[str, str, str, str, str, str | None]  # dataset, human, level, coefficient, pool, systems


def other_datasets(current: str) -> list[str]:
    """Built-in datasets that are here (the demo included), except the current one."""
    return [c.id for c in data.list_choices(data.data_dir_key()) if c.available and c.id != current]


@st.cache_resource(max_entries=6, show_spinner="Loading dataset…")
def load_other(dataset_id: str, data_dir: str) -> Dataset:
    """A built-in dataset with its default system subset (HANNA without the human-written stories)."""
    return data.load_registered(dataset_id, data_dir).with_default_systems()


def humans_of(dataset_id: str) -> tuple[str, ...]:
    return load_other(dataset_id, data.data_dir_key()).human_measures


def datasets_for(current: Dataset, tasks: tuple[TaskTuple, ...]) -> dict[str, Dataset]:
    """The datasets the tasks name: the sidebar's dataset under its id, the others from the registry."""
    out = {current.id: current}
    for task in tasks:
        if task[0] not in out:
            out[task[0]] = load_other(task[0], data.data_dir_key())
    return out


def check_size(datasets: Mapping[str, Dataset], tasks: tuple[TaskTuple, ...], n_metrics: int,
               n_resamples: int) -> None:
    """Raise ValueError, with what to change, when the intervals and tests of all tasks would run for minutes."""
    seconds = 0.0
    for name, _human, level, coefficient, _pool, systems in tasks:
        subset = datasets[name].select_systems(systems)
        for method in ("boot-both", "perm-both"):
            # The tests average each task's null values (not only their exceedances): priced as exact nulls.
            seconds += estimated_table_seconds(subset.n_systems, subset.n_judged, n_metrics, level=level,
                                               coefficient=coefficient, method=method, n_resamples=n_resamples,
                                               nulls=True)
    if seconds > data.MAX_TABLE_SECONDS:
        raise ValueError(
            f"{n_metrics} metrics over {len(tasks)} tasks with {n_resamples:,} resamples would take about "
            f"{seconds / 60:.0f} min here (the page stops at {data.MAX_TABLE_SECONDS:.0f} s): use fewer metrics, tasks "
            "or resamples, or the system level (or `metaeval average` on the command line)")


DEFAULT_RULE = "default"  # the datasets' own rule: WMT's rescaled average on WMT data, else the plain mean


def rule_picker(datasets: Mapping[str, Dataset]) -> str:
    """The averaging rule (sidebar); 'default' follows the datasets and stays 'default' when they change."""
    from metaeval_ui import state

    default = default_rule(dict(datasets))
    names = {"rescaled": "WMT: rescaled to [0, 1]", "mean": "plain mean"}
    options = [DEFAULT_RULE, "rescaled", "mean"]
    key = state.prepare("avg_rule", options=options, fallback=DEFAULT_RULE)
    choice = state.commit("avg_rule", st.sidebar.selectbox(
        "Average", options, key=key,
        format_func=lambda r: f"Default: {names[default]}" if r == DEFAULT_RULE else names[r],
        help="WMT (mt-metrics-eval AverageCorrs, WMT23 on): each task's value is mapped to [0, 1] by its coefficient's "
             "range ((r + 1) / 2 for a correlation) before averaging; plain mean: the task values as they are. "
             "Default: WMT's on WMT data. docs/methods.md sec. 13.3."))
    return default if choice == DEFAULT_RULE else choice


def rule_sentence(result: TaskAverage) -> str:
    """How the average was taken, in words."""
    return RULE_LABELS[result.rule]


@st.cache_data(max_entries=32, show_spinner=False)
def average(_datasets: Mapping[str, Dataset], keys: tuple, tasks: tuple[TaskTuple, ...], metrics: tuple[str, ...],
            n_resamples: int, seed: int, rule: str = "mean") -> TaskAverage:
    """BOOT-BOTH 95% intervals, one-sided tests (the datasets' default test: WMT-PERM-SYS on WMT data at the system
    level, else PERM-BOTH), Bonferroni per row metric, alpha 0.05 (as the Overview); ``rule`` averages the tasks.

    ``keys`` is ``tuple((name, data.dataset_key(dataset)) for each dataset)``: the cache key of ``_datasets``.
    """
    return average_over_tasks(dict(_datasets), [Task(*t) for t in tasks], list(metrics), n_resamples=int(n_resamples),
                              rng=int(seed), rule=rule)


def dataset_keys(datasets: Mapping[str, Dataset]) -> tuple:
    return tuple((name, data.dataset_key(ds)) for name, ds in datasets.items())


def rows_frame(result: TaskAverage) -> pd.DataFrame:
    """One row per metric: cluster, metric, average, low, high, reason, then each task's value."""
    frame = result.to_frame().drop(columns=["n_defined"])
    frame["cluster"] = pd.array(frame["cluster"], dtype="Int64")
    return frame


def short_labels(result: TaskAverage) -> dict[str, str]:
    """Task label -> the parts of it that differ between the tasks (dataset, human, level, coefficient, pool,
    systems), so the table's task columns read 'expert.coherence' rather than 'summeval:expert.coherence:system:
    kendall' eight times over and fit beside the averages. Falls back to the full label when two would clash."""
    fields = ("dataset", "human", "level", "coefficient", "pool", "systems")
    varying = [f for f in fields if len({getattr(t, f) for t in result.tasks}) > 1] or ["human"]
    short = {t.label: ":".join(str(getattr(t, f)) for f in varying) for t in result.tasks}
    return short if len(set(short.values())) == len(short) else {t.label: t.label for t in result.tasks}


def forest_frame(result: TaskAverage) -> pd.DataFrame:
    """The averaged metrics in :func:`metaeval_ui.figures.forest_plot`'s layout."""
    rows = [r for r in result.to_records() if not r["reason"]]
    return pd.DataFrame({"metric": [r["metric"] for r in rows], "method": f"average, {result.method.upper()}",
                         "estimate": [r["average"] for r in rows], "low": [r["low"] for r in rows],
                         "high": [r["high"] for r in rows], "n_defined": [r["n_defined"] for r in rows],
                         "n_resamples": result.n_resamples, "confidence_level": result.confidence_level},
                        columns=["metric", "method", "estimate", "low", "high", "n_defined", "n_resamples",
                                 "confidence_level"])


def tasks_frame(result: TaskAverage) -> pd.DataFrame:
    return pd.DataFrame([{"task": t.label, "dataset": t.dataset, "human": t.human, "level": t.level,
                          "coefficient": t.coefficient, "draw group": g + 1}
                         for t, g in zip(result.tasks, result.draw_groups)])


# -- WMT's task suites over a test set's language pairs (docs/methods.md sec. 13.4) ------------------------------------
SUITE_NONE = "chosen"
SUITE_OPTIONS = {SUITE_NONE: "Tasks chosen below", "wmt23": "WMT23 official ranking (tasks.WMT23)",
                 "wmt24": "WMT24 protocol on WMT23 (tasks.WMT24OnWMT23)"}
MAX_SUITE_RESAMPLES = 200  # ~0.4 s (wmt23) to ~1.5 s (wmt24, SPA) per resample on the shared machine


# How the suite's clusters are found; the default is the core's (default_suite_test: mt-metrics-eval's for wmt23).
SUITE_TEST_OPTIONS = {"wmt-perm": "mt-metrics-eval's (AverageCorrMatrix: permutation draws per task)",
                      "paired-bootstrap": "metaeval's paired bootstrap on the averages (Bonferroni per row)"}


def default_suite_test(name: str) -> str:
    from metaeval_core.analyses.suites import default_suite_test as core_default

    return core_default(name)


def reset_suite_test_on_suite_change(name: str) -> None:
    """Back to the suite's default test when the user switches suites in a session (a link's explicit choice is
    kept: nothing to compare with on its first run)."""
    from metaeval_ui import state

    previous = st.session_state.get("_avg_suite_previous")
    st.session_state["_avg_suite_previous"] = name
    if previous is not None and previous != name:
        state.put("avg_suite_test", default_suite_test(name))


def suite_offered(dataset_id: str) -> bool:
    """Whether the dataset is a built-in test set with several language pairs (wmt23), where the suites run."""
    return len(data.language_pairs(dataset_id)) > 1


@st.cache_resource(max_entries=2, show_spinner="Loading every language pair…")
def suite_data(dataset_id: str, data_dir: str):
    from metaeval_core.analyses.suites import load_suite_data

    return load_suite_data(dataset_id, data_dir=data_dir or None)


@st.cache_data(max_entries=8, show_spinner=False)
def suite(dataset_id: str, data_dir: str, name: str, n_resamples: int, seed: int, test: str | None = None):
    """mt-metrics-eval's suite on every language pair, BOOT-BOTH intervals and clusters by ``test`` with
    ``n_resamples``."""
    from metaeval_core.analyses.suites import run_suite

    return run_suite(suite_data(dataset_id, data_dir), name, n_resamples=int(n_resamples),
                     method="boot-both" if n_resamples else "boot-systems", test=test, rng=int(seed))


def suite_frame(result) -> pd.DataFrame:
    """One row per metric: cluster, metric, average, interval, then each task's value (columns named by pair and
    statistic; mt-metrics-eval's task name and weight in :func:`suite_tasks_frame`)."""
    frame = pd.DataFrame(result.to_records())
    frame["cluster"] = pd.array(frame["cluster"], dtype="Int64")
    return frame


def suite_tasks_frame(result) -> pd.DataFrame:
    return pd.DataFrame([{"column": t.short, "mt-metrics-eval task": t.label, "weight": round(t.weight, 4),
                          "human translations as systems": t.human} for t in result.tasks])
