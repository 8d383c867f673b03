"""WMT's task suites over several language pairs: the WMT23 official ranking and the WMT24 protocol on WMT23.

A *suite* is mt-metrics-eval's fixed list of tasks with its weights (``tasks.WMT23()``, ``tasks.WMT24OnWMT23()``),
run on one mt-metrics-eval test set with several language pairs (the built-in ``wmt23``). Each task is one
statistic on one language pair (or, for WMT23's first task, on all of them pooled):

* ``wmt23`` (Freitag et al., 2023, the paper's overall table): system-level pairwise accuracy over all pairs
  (weight 3 of 12 with three pairs), then per pair system-level Pearson, segment-level Pearson (no grouping) and
  item-wise tie-calibrated accuracy (acc23, one epsilon over all items; weight 1 each);
* ``wmt24`` (the WMT24 protocol on WMT23, Freitag et al., 2024): per pair system-level soft pairwise accuracy
  and item-wise acc23, all weighted alike.

As mt-metrics-eval does: each pair uses its standard reference and gold (``Conventions``), leaves out its outlier
systems, includes the human translations where WMT's tasks do (he-en, whose second reference refA is scored as a
system), keeps the primary metrics whose references are within the standard one, and matches metrics across
pairs by their base name (``[noref]`` marks a reference-free metric, as mt-metrics-eval's display names do). The
system-level tasks read the test set's own system scores (the ``.sys.score`` files: corpus BLEU, not the mean of
sentence BLEU); segment-level tasks the segment files. A task's value is mapped to [0, 1] by its range
(correlations ``(r + 1) / 2``, accuracies as they are) and the weighted sum is the average
(``TaskSetResults.AverageCorrs``); a metric missing from a task has no average.

Intervals: each language pair's systems (and, with ``boot-inputs``/``boot-both``, its segments) are redrawn
independently per resample (one child stream of ``rng`` per pair), every task of the pair on the same draws; the
average of each resample gives the percentile interval.

Clusters (``test``), WMT-style ranks (metrics no test separates share a rank):

* ``'wmt-perm'`` (default for wmt23; mt-metrics-eval's ``TaskSetResults.AverageCorrMatrix``): every task draws its own
  permutation null for each pair of metrics, swapping the two metrics' z-scored scores unit by unit (systems for
  the system-level tasks, the pooled systems of all pairs for the accuracy task, judged segment cells for segment
  Pearson and SPA: ``PermutationSigDiff``), or, for acc23, their tie-calibrated comparisons of each system pair on
  each segment, each metric keeping its own epsilon (``perm_test='pairs'``, ``PairwisePermutationSigDiff``); the
  null of the average difference is the weighted sum of the tasks' rescaled null differences, and
  ``p = (1 + #{null >= observed}) / (1 + k)``, no correction, alpha 0.05, ranks by ``data.AssignRanks``;
* ``'paired-bootstrap'`` (metaeval's; default for wmt24, where SPA makes the permutation test slow): a paired bootstrap test on the resampled averages' differences (shifted to
  the null), Bonferroni over each row.

References: docs/methods.md sec. 13.4; google-research/mt-metrics-eval ``tasks.py`` (WMT23, WMT24OnWMT23,
TaskSetResults.AverageCorrs) and ``data.py`` (GetCorrelations, CompareMetricsWithGlobalAccuracy); Freitag et al.
(WMT 2023, 2024).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, Mapping, Sequence

import numpy as np

from metaeval_core._checks import as_generator, check_choice, check_confidence_level, check_int, check_probability
from metaeval_core._frames import ToFrame
from metaeval_core.analyses.practice.clusters import SignificanceClusters, significance_clusters
from metaeval_core.data.dataset import Dataset, DatasetError
from metaeval_core.stats.coefficients import COEFFICIENT_RANGES
from metaeval_core.stats.correlation import correlate_matrices, judged_cells
from metaeval_core.stats.montecarlo import block_draws, count_pvalue
from metaeval_core.stats.resampling import (
    _bootstrap_correlations,
    _BootstrapIndices,
    _draw_bootstrap_indices,
    _percentile_interval,
)
from metaeval_core.stats.significance import PairwiseTable, _count_pvalue, correct_table
from metaeval_core.wording import finite_or_none

__all__ = ["SUITES", "SuiteTask", "SuiteResult", "suite_tasks", "run_suite", "load_suite_data"]

Suite = Literal["wmt23", "wmt24"]
SUITES: tuple[str, ...] = ("wmt23", "wmt24")
SUITE_LABELS = {
    "wmt23": "WMT23 official ranking (mt-metrics-eval tasks.WMT23: system accuracy over all pairs x3, per pair "
             "system Pearson, segment Pearson, item-wise acc23)",
    "wmt24": "WMT24 protocol on WMT23 (mt-metrics-eval tasks.WMT24OnWMT23: per pair system soft pairwise accuracy "
             "and item-wise acc23)",
}
SuiteInterval = Literal["boot-systems", "boot-inputs", "boot-both"]
SUITE_INTERVALS: tuple[str, ...] = ("boot-systems", "boot-inputs", "boot-both")
SuiteTest = Literal["wmt-perm", "paired-bootstrap"]
SUITE_TESTS: tuple[str, ...] = ("wmt-perm", "paired-bootstrap")
SUITE_TEST_LABELS = {
    "wmt-perm": "WMT-PERM: mt-metrics-eval's AverageCorrMatrix (per-task permutation draws; perm_test='pairs' for "
                "acc23), no correction",
    "paired-bootstrap": "paired bootstrap test on the averages, Bonferroni per row",
}


def default_suite_test(suite: str) -> str:
    """mt-metrics-eval's test for ``wmt23``; the paired bootstrap for ``wmt24``, whose SPA permutation test
    recomputes SPA's 1,000 permutation p-values of both swapped metrics for every pair of metrics and draw (about
    25 s per draw for its 32 metrics on the shared 2-core machine, so k = 100 takes some 40 minutes).

    References: docs/methods.md sec. 13.4.
    """
    check_choice(suite, "suite", SUITES)
    return "wmt-perm" if suite == "wmt23" else "paired-bootstrap"
# mt-metrics-eval tasks.py: language pairs whose WMT tasks score the second reference as a system.
PAIRS_WITH_HUMAN_SYSTEMS = frozenset({"en-he", "he-en"})
# Statistic -> (metaeval level, coefficient, view): 'sys' reads the .sys.score files, 'seg' the segment files.
_STATISTICS = {
    "accuracy": ("system", "pairwise-accuracy", "sys"),
    "pearson-sys": ("system", "pearson", "sys"),
    "pearson-seg": ("global", "pearson", "seg"),
    "acc23": ("input", "tie-calibrated-accuracy", "seg"),
    "spa": ("system", "soft-pairwise-accuracy", "seg"),
}


@dataclass(frozen=True)
class SuiteTask:
    """One task of a suite, named as mt-metrics-eval names it.

    ``statistic``: ``'accuracy'`` (system pairwise accuracy, pooled over ``lps``), ``'pearson-sys'``,
    ``'pearson-seg'`` (no grouping), ``'acc23'`` (item-wise, tie-calibrated, sample rate 1) or ``'spa'`` (soft
    pairwise accuracy, mt-metrics-eval's ``pce``). ``human``: the pair's human translations are systems.
    """

    lps: tuple[str, ...]
    statistic: str
    weight: float
    human: bool

    @property
    def level(self) -> str:
        return _STATISTICS[self.statistic][0]

    @property
    def coefficient(self) -> str:
        return _STATISTICS[self.statistic][1]

    @property
    def view(self) -> str:
        return _STATISTICS[self.statistic][2]

    @property
    def label(self) -> str:
        """mt-metrics-eval's words: ``lang=en-de,he-en,zh-en level=sys corr_fcn=accuracy``, ``... seg
        KendallWithTiesOpt avg_by=item``."""
        fcn, level, extra = {
            "accuracy": ("accuracy", "sys", ""), "pearson-sys": ("pearson", "sys", ""),
            "pearson-seg": ("pearson", "seg", ""), "acc23": ("KendallWithTiesOpt", "seg", " avg_by=item"),
            "spa": ("pce", "sys", ""),
        }[self.statistic]
        return f"lang={','.join(self.lps)} level={level} corr_fcn={fcn}{extra}"

    @property
    def short(self) -> str:
        """A column name: ``en-de sys pearson``, ``all sys accuracy``."""
        where = "all" if len(self.lps) > 1 else self.lps[0]
        return f"{where} {self.statistic.replace('pearson-sys', 'sys pearson').replace('pearson-seg', 'seg pearson')}"


def suite_tasks(suite: Suite, lps: Sequence[str] = ("en-de", "he-en", "zh-en")) -> tuple[SuiteTask, ...]:
    """The suite's tasks and weights, in mt-metrics-eval's order (``tasks.WMT23`` / ``tasks.WMT24OnWMT23``).

    References: docs/methods.md sec. 13.4; mt-metrics-eval ``tasks.py``.
    """
    check_choice(suite, "suite", SUITES)
    pairs = tuple(sorted(lps))
    if not pairs:
        raise ValueError("lps must name at least one language pair")
    tasks: list[tuple[tuple[str, ...], str, float, bool]] = []
    if suite == "wmt23":
        tasks.append((pairs, "accuracy", float(len(pairs)), bool(PAIRS_WITH_HUMAN_SYSTEMS & set(pairs))))
        for lp in pairs:
            human = lp in PAIRS_WITH_HUMAN_SYSTEMS
            tasks += [((lp,), "pearson-sys", 1.0, human), ((lp,), "pearson-seg", 1.0, human),
                      ((lp,), "acc23", 1.0, human)]
    else:
        for lp in pairs:
            human = lp in PAIRS_WITH_HUMAN_SYSTEMS
            tasks += [((lp,), "spa", 1.0, human), ((lp,), "acc23", 1.0, human)]
    total = sum(t[2] for t in tasks)
    return tuple(SuiteTask(lps=p, statistic=s, weight=w / total, human=h) for p, s, w, h in tasks)


@dataclass(frozen=True)
class _Pair:
    """One language pair's data as a suite's tasks use it."""

    lp: str
    seg: Dataset
    sys: Dataset
    metrics: dict  # display name -> metric id (the primary metrics within the standard reference)


def display_name(basename: str, references: str) -> str:
    """mt-metrics-eval's display name of a primary metric: its base name, ``[noref]`` when it uses no reference."""
    return basename + ("[noref]" if references in ("src", "") else "")


def _pair(lp: str, seg: Dataset, sys: Dataset) -> _Pair:
    conventions = seg.conventions
    if conventions is None:
        raise DatasetError(f"language pair {lp}: the dataset carries no WMT conventions (an mt-metrics-eval test set "
                           "in mt-metrics-eval's meta-info, such as the built-in wmt23)")
    primary = conventions.primary_metrics or conventions.eligible_metrics
    metrics = {}
    for m in primary:
        view = seg if m in seg.measures else sys
        attributes = view.measure(m).attributes
        metrics[display_name(attributes.get("basename", m), attributes.get("references", ""))] = m
    return _Pair(lp, seg, sys, metrics)


def load_suite_data(dataset_id: str = "wmt23", lps: Sequence[str] | None = None, *, data_dir=None,
                    download: bool = False) -> dict[str, _Pair]:
    """Each language pair of a built-in test set with several (``wmt23``), its segment and system views, each with
    the gold and the primary metrics only (``mtme_measures='gold-and-primary'``: what the suites use).

    References: docs/methods.md sec. 13.4.
    """
    from metaeval_core.data.registry import language_pairs_of, load_dataset

    pairs = tuple(lps) if lps is not None else language_pairs_of(dataset_id)
    if not pairs:
        raise DatasetError(f"dataset {dataset_id!r} has one language pair; a suite needs a test set with several "
                           "(such as wmt23)")
    out = {}
    # The suites read the gold and the primary metrics only: a third of each pair's files, no per-rater or
    # side-by-side MQM (the same matrices as a full reading; a WMT23 Overall average's first render was mostly
    # the other pairs' unused files).
    light = dict(data_dir=data_dir, download=download, mtme_measures="gold-and-primary")
    for lp in sorted(pairs):
        seg = load_dataset(dataset_id, lp=lp, **light)
        sys = load_dataset(dataset_id, lp=lp, mtme_level="sys", **light)
        out[lp] = _pair(lp, seg, sys)
    return out


def suite_of(dataset: Dataset, suite: Suite) -> "SuiteResult":
    """The suite on every language pair of the test set ``dataset`` (one pair of a built-in test set such as
    wmt23) was loaded from, from the same data directory; point values, computed once per process.

    References: docs/methods.md sec. 13.4.
    """
    root = _test_set_root(dataset)
    return _suite_cached(dataset.id, str(root), suite)


def _test_set_root(dataset: Dataset):
    from pathlib import Path

    # read_mtme's first note names the test-set folder: "mt-metrics-eval test set wmt23, language pair zh-en (DIR)."
    for note in dataset.notes:
        if note.startswith("mt-metrics-eval test set ") and note.endswith(").") and "(" in note:
            return Path(note[note.rindex("(") + 1:-2])
    raise DatasetError(f"dataset {dataset.id!r} was not read from an mt-metrics-eval test set")


@lru_cache(maxsize=4)
def _suite_cached(dataset_id: str, root: str, suite: str) -> "SuiteResult":
    from pathlib import Path

    data_dir = Path(root).parents[1]  # <data dir>/<id>/<test set>/
    return run_suite(load_suite_data(dataset_id, data_dir=data_dir), suite)


@dataclass(frozen=True)
class SuiteResult(ToFrame):
    """A suite run: each metric's value on each task, its weighted rescaled average, interval and cluster.

    Attributes
    ----------
    suite : str
    tasks : tuple of SuiteTask
    metrics : tuple of str
        Display names of the metrics in every task, ranked by average (then name).
    values : numpy.ndarray, shape (n_metrics, n_tasks)
    average, low, high : numpy.ndarray, shape (n_metrics,)
    clusters : SignificanceClusters or None
        From ``test`` (None without resampling).
    metric_ids : dict
        Per language pair, display name -> that pair's metric id (e.g. ``BLEU`` -> ``BLEU-refB`` on he-en).
    left_out : dict
        Display names of metrics missing from some task -> the tasks they miss.
    """

    suite: str
    tasks: tuple[SuiteTask, ...]
    metrics: tuple[str, ...]
    values: np.ndarray
    average: np.ndarray
    low: np.ndarray
    high: np.ndarray
    clusters: SignificanceClusters | None
    metric_ids: dict
    left_out: dict
    method: str
    confidence_level: float
    n_resamples: int
    table: PairwiseTable | None = field(default=None, repr=False)
    test: str = "wmt-perm"

    def rank(self, metric: str) -> int | None:
        if self.clusters is None:
            return None
        return dict(zip(self.clusters.metrics, (int(r) for r in self.clusters.rank))).get(metric)

    def to_records(self) -> list[dict]:
        """One record per metric: cluster, average, interval, and each task's value under its short name."""
        num = finite_or_none

        rows = []
        for i, m in enumerate(self.metrics):
            row = {"metric": m, "cluster": self.rank(m), "average": num(self.average[i]), "low": num(self.low[i]),
                   "high": num(self.high[i])}
            for t, task in enumerate(self.tasks):
                row[task.short] = num(self.values[i, t])
            rows.append(row)
        return rows

    def to_dict(self) -> dict:
        return {"suite": self.suite, "label": SUITE_LABELS[self.suite],
                "tasks": [{"label": t.label, "column": t.short, "weight": t.weight, "level": t.level,
                           "coefficient": t.coefficient, "human_systems": t.human} for t in self.tasks],
                "method": self.method, "test": self.test, "test_label": SUITE_TEST_LABELS[self.test],
                "confidence_level": self.confidence_level, "n_resamples": self.n_resamples,
                "metrics": self.to_records(), "left_out": self.left_out,
                "clusters": [] if self.clusters is None else [list(c) for c in self.clusters.clusters]}


def _subset(pair: _Pair, view: str, human: bool) -> Dataset:
    ds = pair.seg if view == "seg" else pair.sys
    gold = ds.conventions.gold if ds.conventions is not None else "mqm"
    # mt-metrics-eval GetCorrelations: sys_names - main_refs - (human_sys_names unless include_human) - outliers,
    # then only systems with a gold score.
    return ds.select_systems(ds.conventions.systems(human_translations=human)).rated_by(gold)


def run_suite(data: Mapping[str, _Pair], suite: Suite = "wmt23", *, n_resamples: int = 0,
              method: SuiteInterval = "boot-systems", test: SuiteTest | None = None, confidence_level: float = 0.95,
              alpha: float = 0.05, rng: np.random.Generator | int | None = None,
              batch: int | None = None) -> SuiteResult:
    """Run a suite on each language pair's data (from :func:`load_suite_data`).

    Parameters
    ----------
    data : mapping lp -> pair data
    suite : {'wmt23', 'wmt24'}
    n_resamples : int, default 0
        0: point values only (mt-metrics-eval's ``k=0``). Otherwise bootstrap resamples for the intervals of the
        average, and as many draws of ``test`` for the clusters (mt-metrics-eval's ``k``).
    method : {'boot-systems', 'boot-inputs', 'boot-both'}
        What a resample redraws in each pair (inputs: the segments of the segment-level tasks; a system-level task
        on the system files has no segments to redraw and keeps its systems with ``boot-inputs``).
    test : {'wmt-perm', 'paired-bootstrap'}, optional
        How the clusters are found (module docstring): mt-metrics-eval's per-task permutation draws summed over
        the tasks (``AverageCorrMatrix``), or a paired bootstrap test on the averages. Default:
        :func:`default_suite_test` (``'wmt-perm'`` for wmt23, ``'paired-bootstrap'`` for wmt24: SPA's cost).
    confidence_level, alpha : float
    rng : Generator, int or None
        One child stream per language pair (``Generator.spawn``), in sorted order.
    batch : int, optional
        Resamples evaluated at once; results do not depend on it.

    Returns
    -------
    SuiteResult

    References
    ----------
    docs/methods.md sec. 13.4; mt-metrics-eval ``tasks.py`` (``TaskSet.Run``, ``AverageCorrs``).
    """
    check_choice(suite, "suite", SUITES)
    if not isinstance(data, Mapping) or not data:
        raise TypeError("data must map language pairs to their data (load_suite_data)")
    n_resamples = check_int(n_resamples, "n_resamples", minimum=0)
    check_choice(method, "method", SUITE_INTERVALS)
    test = default_suite_test(suite) if test is None else check_choice(test, "test", SUITE_TESTS)
    confidence_level = check_confidence_level(confidence_level)
    alpha = float(check_probability(alpha, "alpha"))
    tasks = suite_tasks(suite, tuple(data))
    # Metrics in every task: by display name, present in each pair the task uses, at the task's level.
    candidates = set.intersection(*(set(p.metrics) for p in data.values()))
    left_out: dict[str, list[str]] = {}
    for name in sorted(set.union(*(set(p.metrics) for p in data.values()))):
        missing = [t.short for t in tasks if not all(
            name in data[lp].metrics and data[lp].metrics[name] in (data[lp].seg if t.view == "seg"
                                                                    else data[lp].sys).measures for lp in t.lps)]
        if missing:
            left_out[name] = missing
    names = sorted(candidates - set(left_out))
    if not names:
        raise DatasetError("no metric is in every task of the suite")

    subsets = {(lp, view, human): _subset(data[lp], view, human)
               for t in tasks for lp in t.lps for view, human in [(t.view, t.human)]}
    values = np.full((len(names), len(tasks)), np.nan)
    for t, task in enumerate(tasks):
        values[:, t] = _task_values(task, names, data, subsets)
    lo = np.array([COEFFICIENT_RANGES[t.coefficient][0] for t in tasks])
    hi = np.array([COEFFICIENT_RANGES[t.coefficient][1] for t in tasks])
    weights = np.array([t.weight for t in tasks])
    average = ((values - lo) / (hi - lo)) @ weights

    low = np.full(len(names), np.nan)
    high = np.full(len(names), np.nan)
    clusters = table = None
    if n_resamples:
        gen = as_generator(rng)  # the bootstrap spawns its children first: its draws do not depend on ``test``
        draws = _resampled_values(tasks, names, data, subsets, n_resamples, method, gen, batch)
        averaged = ((draws - lo) / (hi - lo)) @ weights  # (k, q)
        for i in range(len(names)):
            low[i], high[i], _ = _percentile_interval(averaged[:, i], confidence_level)
        if len(names) >= 2 and test == "paired-bootstrap":
            table = _paired_table(names, average, averaged, method, alpha, n_resamples)
            clusters = significance_clusters(table, use_corrected=True)
        elif len(names) >= 2:
            table = _permutation_table(tasks, names, data, subsets, average, (hi - lo), weights, n_resamples,
                                       alpha, gen.spawn(1)[0], batch)
            clusters = significance_clusters(table, use_corrected=False)
    order = sorted(range(len(names)), key=lambda i: (-average[i] if np.isfinite(average[i]) else np.inf, names[i]))
    return SuiteResult(
        suite=suite, tasks=tasks, metrics=tuple(names[i] for i in order), values=values[order],
        average=average[order], low=low[order], high=high[order], clusters=clusters,
        metric_ids={lp: {n: p.metrics[n] for n in names} for lp, p in data.items()}, left_out=left_out,
        method=method, confidence_level=confidence_level, n_resamples=n_resamples, table=table, test=test)


def _matrices(ds: Dataset, names, data_pair: _Pair):
    """The raw floats (as mt-metrics-eval reads them); a metric's cells where the gold has no score are dropped,
    as ``GetCorrelations`` + ``filter_gold_nones`` do (the judged pool, docs/methods.md sec. 0.2)."""
    human = ds.matrix(ds.conventions.gold)
    # Only the segments the gold scored: mt-metrics-eval drops the others (filter_gold_nones) before PCE draws its
    # permutation signs, one per remaining segment; SPA's signs are drawn per column alike (sec. 11.3).
    judged = ~np.isnan(human).all(axis=0)
    return [judged_cells(ds.matrix(data_pair.metrics[n]), human)[:, judged] for n in names], human[:, judged]


def _task_values(task: SuiteTask, names, data, subsets) -> np.ndarray:
    if task.statistic == "accuracy":
        agree = np.zeros(len(names))
        pairs = 0
        for lp in task.lps:
            ds = subsets[(lp, task.view, task.human)]
            metrics, human = _matrices(ds, names, data[lp])
            n = ds.n_systems
            acc = np.array([float(correlate_matrices(x, human, level="system", coefficient="pairwise-accuracy")
                                  .estimate) for x in metrics])
            agree += acc * (n * (n - 1) // 2)
            pairs += n * (n - 1) // 2
        return agree / pairs
    (lp,) = task.lps
    ds = subsets[(lp, task.view, task.human)]
    metrics, human = _matrices(ds, names, data[lp])
    return np.array([float(correlate_matrices(x, human, level=task.level, coefficient=task.coefficient).estimate)
                     for x in metrics])


def _resampled_values(tasks, names, data, subsets, n_resamples, method, rng, batch) -> np.ndarray:
    """(k, q, n_tasks): each task on each resample; a pair's tasks share its draws."""
    lps = sorted(data)
    children = dict(zip(lps, as_generator(rng).spawn(len(lps))))
    indices: dict[tuple[str, str], _BootstrapIndices] = {}
    for lp in lps:
        seg = next(s for (l, v, _), s in subsets.items() if l == lp and v == "seg") if any(
            l == lp and v == "seg" for (l, v, _) in subsets) else None
        views = {v: s for (l, v, _), s in subsets.items() if l == lp}
        n = next(iter(views.values())).n_systems
        if any(s.n_systems != n for s in views.values()):
            raise DatasetError(f"language pair {lp}: the segment and system files score different systems; a "
                               "resample cannot redraw them together")
        width = 1 if seg is None else int((~np.isnan(seg.matrix(seg.conventions.gold)).all(axis=0)).sum())
        seg_indices = _draw_bootstrap_indices(children[lp], method, n_resamples, n, width)
        indices[(lp, "seg")] = seg_indices
        # The system files have one pseudo-input: only systems are redrawn there.
        indices[(lp, "sys")] = _BootstrapIndices(seg_indices.systems, None, None) if seg_indices.systems is not None \
            else _BootstrapIndices(np.tile(np.arange(n), (n_resamples, 1)), None, None)
    out = np.full((n_resamples, len(names), len(tasks)), np.nan)
    for t, task in enumerate(tasks):
        if task.statistic == "accuracy":
            agree = np.zeros((n_resamples, len(names)))
            pairs = 0
            for lp in task.lps:
                ds = subsets[(lp, task.view, task.human)]
                metrics, human = _matrices(ds, names, data[lp])
                n = ds.n_systems
                agree += _bootstrap_correlations(metrics, human, level="system", coefficient="pairwise-accuracy",
                                                 indices=indices[(lp, task.view)], batch=batch) * (n * (n - 1) // 2)
                pairs += n * (n - 1) // 2
            out[:, :, t] = agree / pairs
            continue
        (lp,) = task.lps
        ds = subsets[(lp, task.view, task.human)]
        metrics, human = _matrices(ds, names, data[lp])
        out[:, :, t] = _bootstrap_correlations(metrics, human, level=task.level, coefficient=task.coefficient,
                                               indices=indices[(lp, task.view)], batch=batch)
    return out


def _paired_table(names, estimates, averaged, method, alpha, n_resamples) -> PairwiseTable:
    """Paired bootstrap test of every ordered pair on the averages (docs/methods.md sec. 3.2), Bonferroni per row."""
    k = len(names)
    delta = estimates[:, None] - estimates[None, :]
    pvalue = np.full((k, k), np.nan)
    counted = np.zeros((k, k), dtype=np.int64)
    for a, b in itertools.combinations(range(k), 2):
        null = (averaged[:, a] - averaged[:, b]) - delta[a, b]
        pvalue[a, b], counted[a, b] = _count_pvalue(null, delta[a, b], "greater")
        pvalue[b, a], counted[b, a] = _count_pvalue(-null, -delta[a, b], "greater")
    corrected = correct_table(pvalue, correction="bonferroni", family="row")
    with np.errstate(invalid="ignore"):
        significant = np.nan_to_num(pvalue, nan=1.0) < alpha
        significant_corrected = np.nan_to_num(corrected, nan=1.0) < alpha
    return PairwiseTable(
        metrics=tuple(names), human="suite average", estimates=np.asarray(estimates, dtype=float), delta=delta,
        pvalue=pvalue, pvalue_corrected=corrected, significant=significant,
        significant_corrected=significant_corrected, alpha=alpha, correction="bonferroni", family="row",
        method=method, alternative="greater", level="mixed", coefficient="mixed", n_resamples=n_resamples,
        n_defined=counted)


# -- mt-metrics-eval's significance of the average (test='wmt-perm', docs/methods.md sec. 13.4) --------------------------
def _zscore(values: np.ndarray) -> np.ndarray:
    """Each row z-scored as WMT's system test does (significance.wmt: population sd; a constant row centred)."""
    from metaeval_core.stats.significance.wmt import _standardise

    values = np.asarray(values, dtype=np.float64)
    return _standardise(values) if values.ndim == 1 else np.stack([_standardise(row) for row in values])


def _cells(task, names, data, subsets, lp):
    """The task's units as mt-metrics-eval's 'scores' test swaps them: (q, C) metric scores and (C,) human scores
    on the cells every metric and the human score (all judged segment cells; the system files' systems)."""
    ds = subsets[(lp, task.view, task.human)]
    metrics, human = _matrices(ds, names, data[lp])
    x = np.stack([m.ravel() for m in metrics])
    z = human.ravel()
    keep = ~np.isnan(z) & ~np.isnan(x).any(axis=0)
    return x[:, keep], z[keep], metrics, human


def _moved(w: np.ndarray, feats: np.ndarray) -> np.ndarray:
    """(b, F) sums of each feature over the swapped units: one matrix-vector product per resample, so a
    resample's rounding never depends on how many are evaluated at once (a matrix product may block differently)."""
    return np.stack([feats @ row for row in w])


def _pearson_rows(sum_h, sum_hz, sum_h2, c, sum_z, sum_z2):
    with np.errstate(invalid="ignore", divide="ignore"):
        return (c * sum_hz - sum_h * sum_z) / np.sqrt((c * sum_h2 - sum_h ** 2) * (c * sum_z2 - sum_z ** 2))


def _task_nulls(task, names, data, subsets, pairs, n_resamples, rng, batch) -> np.ndarray:
    """(k, n_pairs): for each pair (a, b), the task's value on the a-side minus the b-side of swapped metrics."""
    first = np.array([a for a, _ in pairs])
    second = np.array([b for _, b in pairs])
    out = np.empty((n_resamples, len(pairs)))
    if task.statistic in ("pearson-sys", "pearson-seg"):
        # Pearson of the swapped z-scores h = x_a + w (x_b - x_a) (binary w): its sums are linear in w, so one
        # product of the swap bits with every metric's x, x z and x^2 gives every pair's sums (h' swaps the other way).
        (lp,) = task.lps
        x, z, _, _ = _cells(task, names, data, subsets, lp)
        x = _zscore(x)
        c = float(z.size)
        feats = np.concatenate([x, x * z, x * x])  # (3q, C)
        base = feats.sum(axis=1)
        q = len(names)
        for sl, w in block_draws("swaps", rng, n_resamples, z.size, 3 * q, batch):
            moved = _moved(w, feats)  # (b, 3q)
            gain = moved[:, :q][:, second] - moved[:, :q][:, first], moved[:, q:2 * q][:, second] - \
                moved[:, q:2 * q][:, first], moved[:, 2 * q:][:, second] - moved[:, 2 * q:][:, first]
            sums_a = [base[j * q:(j + 1) * q][first] + g for j, g in enumerate(gain)]
            sums_b = [base[j * q:(j + 1) * q][second] - g for j, g in enumerate(gain)]
            out[sl] = (_pearson_rows(*sums_a[:2], sums_a[2], c, z.sum(), (z * z).sum())
                       - _pearson_rows(*sums_b[:2], sums_b[2], c, z.sum(), (z * z).sum()))
        return out
    if task.statistic == "accuracy":
        # CompareMetricsWithGlobalAccuracy: the pairs' system scores pooled and z-scored together, each system
        # swapped with probability 1/2, pairwise accuracy summed over each pair's own system pairs.
        blocks = [_cells(task, names, data, subsets, lp)[:2] for lp in task.lps]
        x = _zscore(np.concatenate([b[0] for b in blocks], axis=1))
        z = np.concatenate([b[1] for b in blocks])
        offsets = np.cumsum([0] + [b[1].size for b in blocks])
        left, right = zip(*[np.triu_indices(hi - lo, 1) for lo, hi in zip(offsets[:-1], offsets[1:])])
        left = np.concatenate([i + lo for i, lo in zip(left, offsets[:-1])])
        right = np.concatenate([i + lo for i, lo in zip(right, offsets[:-1])])
        sign_z = np.sign(z[left] - z[right])
        for sl, w in block_draws("swaps", rng, n_resamples, z.size, 4 * left.size, batch):
            on = w.astype(bool)
            for u, (a, b) in enumerate(pairs):
                ha = np.where(on, x[b], x[a])
                hb = np.where(on, x[a], x[b])
                out[sl, u] = ((np.sign(ha[:, left] - ha[:, right]) == sign_z).mean(axis=1)
                              - (np.sign(hb[:, left] - hb[:, right]) == sign_z).mean(axis=1))
        return out
    (lp,) = task.lps
    ds = subsets[(lp, task.view, task.human)]
    metrics, human = _matrices(ds, names, data[lp])
    if task.statistic == "acc23":
        # PairwisePermutationSigDiff: each metric's comparisons at its own calibrated epsilon; each (system pair,
        # segment) comparison swapped with probability 1/2. The item-averaged accuracy is linear in the swap bits.
        from metaeval_core.stats.tiecal import input_tie_calibrated, pair_agreement

        agree, valid = [], True
        for m in metrics:
            ok, right = pair_agreement(m, human, float(input_tie_calibrated(m, human).epsilon))
            agree.append(right.astype(np.float64))
            valid = valid & ok
        n_pairs = valid.sum(axis=0)  # (M,): the human's and every metric's valid pairs (metrics score all cells)
        items = n_pairs > 0
        factor = np.where(items, 1.0 / np.maximum(n_pairs, 1), 0.0) / items.sum()
        keep = valid[:, items]
        feats = np.stack([(a[:, items] * factor[items])[keep] for a in agree])  # (q, E)
        base = feats.sum(axis=1)
        for sl, w in block_draws("swaps", rng, n_resamples, feats.shape[1], feats.shape[1] + len(names), batch):
            moved = _moved(w, feats)  # (b, q)
            out[sl] = base[first] - base[second] + 2.0 * (moved[:, second] - moved[:, first])
        return out
    # SPA (pce, perm_test='scores'): z-scored judged cells swapped with probability 1/2, SPA of both sides.
    from metaeval_core.stats.spa import SwapDeltas

    n, m = human.shape
    judged = ~np.isnan(human)
    z_scored = []
    for mat in metrics:
        scaled = np.full((n, m), np.nan)
        scaled[judged] = _zscore(mat[judged])
        z_scored.append(scaled)
    engines = {}
    for sl, w in block_draws("swaps", rng, n_resamples, n * m, n * m, batch):
        mask = w.reshape(-1, n, m).astype(bool)
        for u, (a, b) in enumerate(pairs):
            if (a, b) not in engines:
                engines[(a, b)] = SwapDeltas(z_scored[a], z_scored[b], human)
            out[sl, u] = engines[(a, b)].deltas(mask)
    return out


def _permutation_table(tasks, names, data, subsets, average, spans, weights, n_resamples, alpha, rng,
                       batch) -> PairwiseTable:
    """AverageCorrMatrix: each pair's null average difference is the weighted sum of its tasks' rescaled null
    differences, each task on its own draws (a child stream of ``rng`` per task); one-sided p of the better one."""
    k = len(names)
    pairs = list(itertools.combinations(range(k), 2))
    null = np.zeros((n_resamples, len(pairs)))
    for task, weight, span, child in zip(tasks, weights, spans, as_generator(rng).spawn(len(tasks))):
        null += (weight / span) * _task_nulls(task, names, data, subsets, pairs, n_resamples, child, batch)
    delta = average[:, None] - average[None, :]
    pvalue = np.full((k, k), np.nan)
    counted = np.zeros((k, k), dtype=np.int64)
    for u, (a, b) in enumerate(pairs):
        pvalue[a, b], counted[a, b] = count_pvalue(null[:, u], delta[a, b])
        pvalue[b, a], counted[b, a] = count_pvalue(-null[:, u], delta[b, a])
    with np.errstate(invalid="ignore"):
        significant = np.nan_to_num(pvalue, nan=1.0) < alpha
    return PairwiseTable(
        metrics=tuple(names), human="suite average", estimates=np.asarray(average, dtype=float), delta=delta,
        pvalue=pvalue, pvalue_corrected=pvalue.copy(), significant=significant, significant_corrected=significant,
        alpha=alpha, correction="none", family="none", method="wmt-perm", alternative="greater", level="mixed",
        coefficient="mixed", n_resamples=n_resamples, n_defined=counted)
