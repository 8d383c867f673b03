"""Which metric is best overall? Averages over tasks, with intervals and significance clusters.

A task is one dataset and human measure at one level and coefficient (with a metric pool and a system subset). A
metric's average is, by rule, either the plain unweighted mean of its values over a fixed list of tasks
(``'mean'``), or WMT's average (``'rescaled'``, mt-metrics-eval's ``TaskSetResults.AverageCorrs`` since WMT23):
each task's value is first mapped to [0, 1] by its coefficient's range (``(r + 1) / 2`` for a correlation, an
accuracy as it is), then the mapped values are averaged. A metric lacking a task, or undefined on one, gets no
average (it is listed with the reason). Resample ``s`` of the average is the same average of each task's resample
``s``: intervals are percentiles of these, and tests between metrics compare them.

Draws: tasks on the same dataset with the same system subset and the same effective input pool (``all`` applies
at the system level only) form one *draw group* and share one set of draws (the same resampled systems and inputs,
or the same swapped cells), since their errors are correlated; each draw group has its own child stream of the
seed (``Generator.spawn``), so groups are resampled independently and adding a dataset never changes the draws
of the others.

References: docs/methods.md sec. 13; sec. 10.3 (clusters); Freitag et al. (2023, 2024); google-research/mt-metrics-eval
``tasks.py`` (TaskResults.range, TaskSetResults.AverageCorrs).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Literal, Mapping, Sequence

import numpy as np

from metaeval_core._checks import as_generator, check_choice, check_confidence_level, check_int, check_probability
from metaeval_core.wording import finite_or_none
from metaeval_core._frames import ToFrame
from metaeval_core.analyses.practice.clusters import SignificanceClusters, significance_clusters
from metaeval_core.data.dataset import POOLS, Dataset, DatasetError
from metaeval_core.stats.coefficients import (
    COEFFICIENT_RANGES,
    check_resampling_size,
    require_level_for,
    validate_coefficient,
)
from metaeval_core.stats.correlation import correlate_matrices, correlation_inputs, validate_level
from metaeval_core.stats.resampling import _bootstrap_correlations, _draw_bootstrap_indices, _percentile_interval
from metaeval_core.stats.significance import (
    ALTERNATIVES,
    CORRECTIONS,
    FAMILIES,
    PAIRED_BOOTSTRAP_METHODS,
    PairwiseTable,
    _count_pvalue,
    _shared_seed,
    correct_table,
    WMT_SYSTEM_TEST,
    method_problem,
    permutation_pair_nulls,
    wmt_pair_nulls,
)

__all__ = ["AVERAGE_RULES", "Task", "TaskAverage", "average_over_tasks", "default_rule", "parse_task"]

AverageInterval = Literal["boot-both", "boot-systems", "boot-inputs"]
AverageTest = Literal["perm-both", "perm-systems", "perm-inputs", "boot-both", "boot-systems", "boot-inputs",
                      "wmt-perm-sys"]
AVERAGE_INTERVALS: tuple[str, ...] = ("boot-both", "boot-systems", "boot-inputs")
AVERAGE_TESTS: tuple[str, ...] = ("perm-both", "perm-systems", "perm-inputs", *PAIRED_BOOTSTRAP_METHODS,
                                  WMT_SYSTEM_TEST)
AverageRule = Literal["rescaled", "mean"]
AVERAGE_RULES: tuple[str, ...] = ("rescaled", "mean")
RULE_LABELS = {
    "rescaled": "WMT's average: each task rescaled to [0, 1] by its coefficient's range, then averaged "
                "(mt-metrics-eval AverageCorrs, WMT23 on)",
    "mean": "plain mean of the task values",
}


def default_rule(datasets) -> str:
    """``'rescaled'`` (WMT's average) when every dataset follows WMT's conventions, else the plain ``'mean'``.

    References: docs/methods.md sec. 13.3.
    """
    from metaeval_core.data.mtme import follows_wmt

    values = [datasets] if isinstance(datasets, Dataset) else list(datasets.values())
    return "rescaled" if values and all(follows_wmt(d) for d in values) else "mean"


def default_average_test(datasets, tasks) -> str:
    """WMT's system-level test when every dataset follows WMT and every task is at the system level with a
    coefficient it tests; else PERM-BOTH (docs/methods.md sec. 3.6 and 13.3)."""
    wmt = default_rule(datasets) == "rescaled" and all(
        not method_problem(WMT_SYSTEM_TEST, t.level, t.coefficient) for t in tasks)
    return WMT_SYSTEM_TEST if wmt else "perm-both"


@dataclass(frozen=True)
class Task:
    """One dataset and human measure at one level and coefficient (docs/methods.md sec. 13.1).

    ``dataset`` names a dataset of the mapping given to :func:`average_over_tasks`; ``pool`` is the metrics'
    input pool (system level only) and ``systems`` a system subset such as ``"type=abs"``.
    """

    dataset: str
    human: str
    level: str = "system"
    coefficient: str = "kendall"
    pool: str = "judged"
    systems: str | None = None

    def __post_init__(self) -> None:
        for name in ("dataset", "human"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise TypeError(f"Task.{name} must be a non-empty string; got {getattr(self, name)!r}")
        validate_level(self.level)
        validate_coefficient(self.coefficient)
        require_level_for(self.coefficient, self.level)
        check_choice(self.pool, "pool", POOLS)
        if self.systems is not None and not isinstance(self.systems, str):
            raise TypeError(f"Task.systems must be a string such as 'type=abs', or None; got {self.systems!r}")

    @property
    def label(self) -> str:
        """``dataset:human:level:coefficient`` (plus pool and subset when not the defaults): the CLI's spelling."""
        text = f"{self.dataset}:{self.human}:{self.level}:{self.coefficient}"
        if self.pool != "judged" and self.level == "system":
            text += f" (pool {self.pool})"
        if self.systems:
            text += f" [{self.systems}]"
        return text


def parse_task(text: str, *, level: str = "system", coefficient: str = "kendall", pool: str = "judged",
               systems: str | None = None) -> Task:
    """A :class:`Task` from ``DATASET:HUMAN[:LEVEL[:COEFFICIENT]]`` (omitted parts take the keyword defaults).

    A human measure whose name holds ``:`` is read whole: only a trailing known level and coefficient are split off.

    References: docs/methods.md sec. 13.1.
    """
    if not isinstance(text, str):
        raise TypeError(f"a task must be a string DATASET:HUMAN[:LEVEL[:COEFFICIENT]]; got {type(text).__name__}")
    dataset, sep, rest = text.partition(":")
    if not sep or not dataset or not rest:
        raise ValueError(f"a task must read DATASET:HUMAN[:LEVEL[:COEFFICIENT]]; got {text!r}")
    from metaeval_core.stats.coefficients import COEFFICIENTS
    from metaeval_core.stats.correlation import LEVELS

    parts = rest.split(":")
    if len(parts) > 1 and parts[-1] in COEFFICIENTS:
        coefficient = parts.pop()
    if len(parts) > 1 and parts[-1] in LEVELS:
        level = parts.pop()
    human = ":".join(parts)
    if not human:
        raise ValueError(f"a task must name a human measure: DATASET:HUMAN[:LEVEL[:COEFFICIENT]]; got {text!r}")
    return Task(dataset, human, level, coefficient, pool, systems)


@dataclass(frozen=True)
class TaskAverage(ToFrame):
    """Metrics averaged over a fixed list of tasks, with intervals, pairwise tests and clusters.

    Attributes
    ----------
    tasks : tuple of Task
    metrics : tuple of str
        Every metric asked for, in the order given.
    values : numpy.ndarray, shape (n_metrics, n_tasks)
        Each metric's value on each task (NaN where the dataset lacks the metric or the value is undefined).
    average, low, high : numpy.ndarray, shape (n_metrics,)
        The average over all tasks and its percentile interval; NaN for a metric without an average.
    n_defined : numpy.ndarray of int
        Resamples of the average that were defined (every task's resample defined).
    reasons : tuple of str
        Per metric, why it has no average ('' when it has one).
    draw_groups : tuple of int
        Per task, the draw group it belongs to (tasks of one group share their draws).
    table : PairwiseTable or None
        Tests on the averages between the metrics that have one (None with fewer than two).
    clusters : SignificanceClusters or None
        WMT-style clusters on the averages (None with fewer than two averaged metrics).
    distribution : numpy.ndarray or None
        With ``return_distribution=True``: (n_resamples, n_metrics) averaged resamples in draw order.
    rule : {'rescaled', 'mean'}
        How the task values were averaged (``values`` are always the tasks' own values).
    """

    tasks: tuple[Task, ...]
    metrics: tuple[str, ...]
    values: np.ndarray
    average: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_defined: np.ndarray
    reasons: tuple[str, ...]
    draw_groups: tuple[int, ...]
    table: PairwiseTable | None
    clusters: SignificanceClusters | None
    method: str
    test: str
    alternative: str
    correction: str
    family: str
    alpha: float
    confidence_level: float
    n_resamples: int
    distribution: np.ndarray | None = field(default=None, repr=False)
    rule: str = "mean"

    @property
    def averaged(self) -> tuple[str, ...]:
        """The metrics that have an average."""
        return tuple(m for m, r in zip(self.metrics, self.reasons) if not r)

    def rank(self, metric: str) -> int | None:
        """The metric's cluster (1 = best), None without an average."""
        if self.clusters is None:
            return 1 if metric in self.averaged else None
        for name, rank in zip(self.clusters.metrics, self.clusters.rank):
            if name == metric:
                return int(rank)
        return None

    def to_records(self) -> list[dict]:
        """One row per metric, ranked (averaged metrics by cluster and average, then those without an average);
        each task's value in a column named by its label."""
        num = finite_or_none
        order = sorted(range(len(self.metrics)), key=lambda i: (
            bool(self.reasons[i]), self.rank(self.metrics[i]) or 0,
            -self.average[i] if np.isfinite(self.average[i]) else 0.0, i))
        rows = []
        for i in order:
            row = {"cluster": self.rank(self.metrics[i]), "metric": self.metrics[i], "average": num(self.average[i]),
                   "low": num(self.low[i]), "high": num(self.high[i]), "n_defined": int(self.n_defined[i]),
                   "reason": self.reasons[i]}
            for t, task in enumerate(self.tasks):
                row[task.label] = num(self.values[i, t])
            rows.append(row)
        return rows

    def task_records(self) -> list[dict]:
        """The per-task values in long form: one row per (metric, task)."""
        return [{"metric": m, "task": task.label, "dataset": task.dataset, "human": task.human, "level": task.level,
                 "coefficient": task.coefficient, "draw_group": self.draw_groups[t],
                 "value": finite_or_none(self.values[i, t])}
                for i, m in enumerate(self.metrics) for t, task in enumerate(self.tasks)]

    def to_dict(self) -> dict:
        """Everything, JSON-ready (``None`` for undefined numbers): tasks, rows, pairwise tests, clusters."""
        return {
            "tasks": [{"label": t.label, "dataset": t.dataset, "human": t.human, "level": t.level,
                       "coefficient": t.coefficient, "pool": t.pool, "systems": t.systems,
                       "draw_group": g} for t, g in zip(self.tasks, self.draw_groups)],
            "rule": self.rule, "method": self.method, "test": self.test, "alternative": self.alternative,
            "correction": self.correction, "family": self.family, "alpha": self.alpha,
            "confidence_level": self.confidence_level, "n_resamples": self.n_resamples,
            "metrics": self.to_records(),
            "pairs": [] if self.table is None else self.table.to_records(),
            "clusters": [] if self.clusters is None else [list(c) for c in self.clusters.clusters],
        }


@dataclass(frozen=True)
class _PreparedTask:
    task: Task
    group: int
    matrices: dict  # metric -> (N, Mx) matrix, for the metrics the dataset has
    human: np.ndarray
    separate: bool  # metric inputs drawn apart from the human's (pool 'all' at the system level)


def _average_iv(datasets, tasks, metrics, method, test, alternative, correction, family, alpha, confidence_level,
                n_resamples, batch, rule):
    if isinstance(datasets, Dataset):
        datasets = {datasets.id: datasets}
    if not isinstance(datasets, Mapping) or not all(isinstance(d, Dataset) for d in datasets.values()):
        raise TypeError("datasets must be a Dataset or a mapping of name -> Dataset")
    if isinstance(tasks, (str, Task)) or not isinstance(tasks, Sequence):
        raise TypeError("tasks must be a sequence of Task")
    tasks = tuple(tasks)
    if not tasks:
        raise ValueError("tasks must hold at least one Task")
    for task in tasks:
        if not isinstance(task, Task):
            raise TypeError(f"tasks must hold Task objects; got {type(task).__name__}")
        if task.dataset not in datasets:
            raise ValueError(f"task {task.label!r} names dataset {task.dataset!r}, which is not among the datasets "
                             f"given ({', '.join(map(repr, datasets)) or 'none'})")
    if len(set(tasks)) != len(tasks):
        raise ValueError("tasks must not repeat a task")
    if isinstance(metrics, str) or not isinstance(metrics, Sequence):
        raise TypeError("metrics must be a sequence of measure names")
    metrics = tuple(metrics)
    if not metrics or not all(isinstance(m, str) for m in metrics):
        raise ValueError("metrics must name at least one measure")
    if len(set(metrics)) != len(metrics):
        raise ValueError("metrics must not repeat a name")
    check_choice(method, "method", AVERAGE_INTERVALS)
    rule = default_rule(datasets) if rule is None else check_choice(rule, "rule", AVERAGE_RULES)
    test = default_average_test(datasets, tasks) if test is None else check_choice(test, "test", AVERAGE_TESTS)
    for task in tasks:
        if method_problem(test, task.level, task.coefficient):
            raise ValueError(f"test {test!r} on task {task.label!r}: {method_problem(test, task.level, task.coefficient)}")
    check_choice(alternative, "alternative", ALTERNATIVES)
    check_choice(correction, "correction", CORRECTIONS)
    check_choice(family, "family", FAMILIES)
    alpha = check_probability(alpha, "alpha")
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_int(n_resamples, "n_resamples")
    batch = check_int(batch, "batch", allow_none=True)
    return datasets, tasks, metrics, float(alpha), float(confidence_level), n_resamples, batch, rule, test


def _prepare(datasets: Mapping[str, Dataset], tasks: tuple[Task, ...], metrics: tuple[str, ...]):
    """Each task's matrices, and its draw group (first appearance order)."""
    groups: dict[tuple, int] = {}
    prepared = []
    for task in tasks:
        subset = datasets[task.dataset].select_systems(task.systems).rated_by(task.human)
        if subset.measure(task.human).kind != "human":
            raise DatasetError(f"task {task.label!r}: {task.human!r} is not a human measure of dataset "
                               f"{task.dataset!r}")
        matrices, z = {}, subset.matrix(task.human)
        for m in metrics:
            if m in subset.measures:
                matrices[m], z = correlation_inputs(subset, m, task.human, level=task.level, pool=task.pool)
        check_resampling_size(task.coefficient, task.level, z.shape[-2:])
        width = next(iter(matrices.values())).shape[1] if matrices else z.shape[1]
        separate = task.level == "system" and width != z.shape[1]
        # Tasks share draws only over the same systems: human measures of one dataset may rate different ones
        # (systems a measure never scored are removed first, docs/methods.md sec. 0.2).
        key = (task.dataset, task.systems or None, separate, subset.systems)
        group = groups.setdefault(key, len(groups))
        prepared.append(_PreparedTask(task, group, matrices, np.asarray(z, dtype=np.float64), separate))
    return prepared, len(groups)


def average_over_tasks(
    datasets: Dataset | Mapping[str, Dataset],
    tasks: Sequence[Task],
    metrics: Sequence[str],
    *,
    method: AverageInterval = "boot-both",
    test: AverageTest | None = None,
    alternative: Literal["greater", "two-sided"] = "greater",
    correction: Literal["bonferroni", "holm", "bh", "none"] = "bonferroni",
    family: Literal["row", "table", "none"] = "row",
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    return_distribution: bool = False,
    rule: AverageRule | None = None,
) -> TaskAverage:
    """Average each metric over a fixed list of tasks, with an interval, tests between metrics and clusters.

    Parameters
    ----------
    datasets : Dataset or mapping of name -> Dataset
        The datasets the tasks name (a single Dataset is ``{dataset.id: dataset}``).
    tasks : sequence of Task
        The fixed task list; every metric is averaged over all of them.
    metrics : sequence of str
        Metric names. A metric a task's dataset lacks, or whose value on a task is undefined, gets no average
        (``reasons`` says why) and takes no part in the tests.
    method : {'boot-both', 'boot-systems', 'boot-inputs'}, default 'boot-both'
        The bootstrap of the interval (docs/methods.md sec. 2.2), applied to every task.
    test : {'perm-both', 'perm-systems', 'perm-inputs', 'boot-both', 'boot-systems', 'boot-inputs', 'wmt-perm-sys'}
        The test between two metrics' averages (sec. 3.1-3.2, 3.6): ``delta_s`` is the average over tasks of the
        per-task differences on resample ``s``. Default: ``'wmt-perm-sys'`` when every dataset follows WMT's
        conventions and every task is at the system level (WMT's test), else ``'perm-both'``.
    alternative, correction, family, alpha
        As in :func:`metaeval_core.stats.significance.compare_all_pairs`; clusters use the corrected significance.
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
    rng : numpy.random.Generator, int or None
        Each draw group (tasks on one dataset with one system subset and effective pool) gets its own child stream
        (``Generator.spawn``, in order of first appearance); its tasks share that stream's draws, and all metrics
        and pairs share them too (common random numbers).
    batch : int, optional
        Resamples evaluated at once; results do not depend on it.
    return_distribution : bool, default False
        Keep the averaged resamples of the interval, (n_resamples, n_metrics) in draw order.
    rule : {'rescaled', 'mean'}, optional
        ``'rescaled'``: WMT's average (mt-metrics-eval ``AverageCorrs``, WMT23 on), each task's value mapped to
        [0, 1] by its coefficient's range before the unweighted mean; ``'mean'``: the plain unweighted mean.
        Default: ``'rescaled'`` when every dataset follows WMT's conventions (mt-metrics-eval data), else ``'mean'``
        (docs/methods.md sec. 13.3). With one coefficient on every task the two rank metrics alike.

    Returns
    -------
    TaskAverage

    References
    ----------
    docs/methods.md sec. 13, 2.2, 3 and 10.3; Freitag et al. (2023, 2024).
    """
    datasets, tasks, metrics, alpha, confidence_level, n_resamples, batch, rule, test = _average_iv(
        datasets, tasks, metrics, method, test, alternative, correction, family, alpha, confidence_level,
        n_resamples, batch, rule)
    prepared, n_groups = _prepare(datasets, tasks, metrics)
    seeds = [_shared_seed(child) for child in as_generator(rng).spawn(n_groups)]

    q, n_tasks = len(metrics), len(tasks)
    values = np.full((q, n_tasks), np.nan)
    for t, p in enumerate(prepared):
        for i, m in enumerate(metrics):
            if m in p.matrices:
                values[i, t] = float(correlate_matrices(p.matrices[m], p.human, level=p.task.level,
                                                        coefficient=p.task.coefficient).estimate)
    reasons = []
    for i, m in enumerate(metrics):
        lacking = [p.task.dataset for p in prepared if m not in p.matrices]
        undefined = [p.task.label for t, p in enumerate(prepared) if m in p.matrices and not np.isfinite(values[i, t])]
        parts = (["not in dataset " + ", ".join(dict.fromkeys(lacking))] if lacking else []) + (
            ["undefined on " + ", ".join(undefined)] if undefined else [])
        reasons.append("; ".join(parts))
    complete = [i for i in range(q) if not reasons[i]]
    names = [metrics[i] for i in complete]
    # Per task: value -> (value - offset) / scale; WMT's rule maps each coefficient's range onto [0, 1].
    offset, scale = _task_scales(prepared, rule)
    average = np.full(q, np.nan)
    average[complete] = ((values[complete] - offset) / scale).mean(axis=1)

    def bootstrap_average(boot: str) -> np.ndarray:
        """(k, len(complete)) mean over tasks of each task's resampled values; tasks of a group share indices."""
        total = np.zeros((n_resamples, len(complete)))
        indices = {}
        for t, p in enumerate(prepared):
            if p.group not in indices:
                n, width = p.matrices[names[0]].shape
                indices[p.group] = _draw_bootstrap_indices(np.random.default_rng(seeds[p.group]), boot, n_resamples,
                                                           n, width, p.human.shape[1] if p.separate else None)
            # In task order, one task at a time: the sum is the same whatever the batch.
            total += (_bootstrap_correlations([p.matrices[m] for m in names], p.human, level=p.task.level,
                                              coefficient=p.task.coefficient, indices=indices[p.group],
                                              batch=batch) - offset[t]) / scale[t]
        return total / n_tasks

    low = np.full(q, np.nan)
    high = np.full(q, np.nan)
    n_defined = np.zeros(q, dtype=np.int64)
    distribution = None
    resampled = {}
    if complete:
        resampled[method] = bootstrap_average(method)
        for col, i in enumerate(complete):
            low[i], high[i], n_defined[i] = _percentile_interval(resampled[method][:, col], confidence_level)
        if return_distribution:
            distribution = np.full((n_resamples, q), np.nan)
            distribution[:, complete] = resampled[method]

    table = clusters = None
    if len(complete) >= 2:
        table = _average_table(prepared, names, average[complete], test, alternative, correction, family, alpha,
                               n_resamples, seeds, batch, resampled, bootstrap_average, scale)
        clusters = significance_clusters(table, use_corrected=True)
    return TaskAverage(
        tasks=tasks, metrics=metrics, values=values, average=average, low=low, high=high, n_defined=n_defined,
        reasons=tuple(reasons), draw_groups=tuple(p.group for p in prepared), table=table, clusters=clusters,
        method=method, test=test, alternative=alternative, correction=correction, family=family, alpha=alpha,
        confidence_level=confidence_level, n_resamples=n_resamples, distribution=distribution, rule=rule,
    )


def _task_scales(prepared, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Per task ``(offset, scale)``: its coefficient's range ``(lo, hi - lo)`` under WMT's rule, ``(0, 1)`` otherwise."""
    if rule == "mean":
        return np.zeros(len(prepared)), np.ones(len(prepared))
    ranges = np.array([COEFFICIENT_RANGES[p.task.coefficient] for p in prepared])
    return ranges[:, 0], ranges[:, 1] - ranges[:, 0]


def _average_table(prepared, names, estimates, test, alternative, correction, family, alpha, n_resamples, seeds,
                   batch, resampled, bootstrap_average, scale) -> PairwiseTable:
    """All ordered pairs tested on the averages (sec. 13.2), then corrected like any table (sec. 3.4)."""
    k = len(names)
    n_tasks = len(prepared)
    pairs = list(itertools.combinations(range(k), 2))
    delta = estimates[:, None] - estimates[None, :]
    pvalue = np.full((k, k), np.nan)
    counted = np.zeros((k, k), dtype=np.int64)
    thresholds = np.array([delta[a, b] for a, b in pairs])
    if test in PAIRED_BOOTSTRAP_METHODS:
        averaged = resampled[test] if test in resampled else bootstrap_average(test)
        nulls = np.stack([(averaged[:, a] - averaged[:, b]) - delta[a, b] for a, b in pairs]) if pairs else None
    else:
        # Each task's delta_s of every pair (offsets cancel in differences: only the scale applies); a group's
        # tasks swap the same cells, or the same systems (one seed per group).
        total = np.zeros((len(pairs), n_resamples))
        wmt_thresholds = np.zeros(len(pairs))
        for t, p in enumerate(prepared):
            stack = [p.matrices[m] for m in names]
            if test == WMT_SYSTEM_TEST:
                task_nulls, task_thresholds = wmt_pair_nulls(
                    stack, p.human, coefficient=p.task.coefficient, n_resamples=n_resamples,
                    rng=np.random.default_rng(seeds[p.group]), batch=batch, pairs=pairs)
                wmt_thresholds += task_thresholds / scale[t]
            else:
                task_nulls = permutation_pair_nulls(stack, p.human, level=p.task.level,
                                                    coefficient=p.task.coefficient, method=test,
                                                    n_resamples=n_resamples, seed=seeds[p.group], batch=batch)
            total += task_nulls / scale[t]
        nulls = total / n_tasks
        if test == WMT_SYSTEM_TEST:
            # WMT's test compares on the systems every pair's three measures score (sec. 3.6).
            thresholds = wmt_thresholds / n_tasks
    for u, (a, b) in enumerate(pairs):
        pvalue[a, b], counted[a, b] = _count_pvalue(nulls[u], thresholds[u], alternative)
        pvalue[b, a], counted[b, a] = _count_pvalue(-nulls[u], -thresholds[u], alternative)
    corrected = correct_table(pvalue, correction=correction, family=family)
    with np.errstate(invalid="ignore"):
        significant = np.nan_to_num(pvalue, nan=1.0) < alpha
        significant_corrected = np.nan_to_num(corrected, nan=1.0) < alpha
    levels = {p.task.level for p in prepared}
    coefficients = {p.task.coefficient for p in prepared}
    return PairwiseTable(
        metrics=tuple(names), human=f"average over {n_tasks} tasks", estimates=np.asarray(estimates, dtype=float),
        delta=delta, pvalue=pvalue, pvalue_corrected=corrected, significant=significant,
        significant_corrected=significant_corrected, alpha=alpha, correction=correction, family=family, method=test,
        alternative=alternative, level=levels.pop() if len(levels) == 1 else "mixed",
        coefficient=coefficients.pop() if len(coefficients) == 1 else "mixed", n_resamples=n_resamples,
        n_defined=counted,
    )
