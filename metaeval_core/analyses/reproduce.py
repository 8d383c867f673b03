"""Published numbers the built-in data can reproduce: one frozen table shared by the dashboard, the CLI and tests.

Each :class:`PublishedValue` names its paper, table or figure, what it measures, the published value, the
tolerance within which metaeval's value counts as a reproduction (two-decimal tables: 0.005, i.e. the value
rounds to the published one), the dataset it needs and a ``compute`` function of that dataset. A value the data
cannot reproduce is listed too, with ``reason`` saying why; it is computed on what the data has and shown, but
never ticked.

References: docs/methods.md sec. 1-8 and its References section, which gives the full citation of each paper an
entry's ``paper`` field names (the table, figure or section is in ``where``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Literal, Mapping, get_args

import numpy as np

from metaeval_core.data.dataset import Dataset

SACREROUGE = "SacreROUGE docs / SummEval (Fabbri et al., 2021) via Deutsch et al. (TACL 2021)"
TACL = "Deutsch, Dror & Roth (TACL 2021)"
NAACL = "Deutsch, Dror & Roth (NAACL 2022)"
FABBRI = "Fabbri et al. (TACL 2021), SummEval"
BHANDARI = "Bhandari et al. (EMNLP 2020), REALSumm"
SUMMEVAL_HUMAN = "expert.relevance"
TACL_METRICS = ("rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.recall", "qa-eval.f1", "MoverScore", "METEOR",
                "s3.pyr")
N_RESAMPLES = 1000
SEED = 0


@dataclass(frozen=True)
class PublishedValue:
    """One published number and how metaeval recomputes it.

    ``published`` is a float (matched within ``tolerance``) or a string (matched exactly, e.g. the set of metrics
    a test finds superior, as a comma-separated sorted list). ``reason`` is empty for a value the built-in data
    can reproduce, else it says why it cannot (and the row is never ticked).
    """

    paper: str
    table: str
    description: str
    dataset: str
    published: float | str
    tolerance: float
    compute: Callable[[Dataset], float | str]
    reason: str = ""

    def matches(self, value: float | str) -> bool:
        """True when ``value`` reproduces the published number (never for a row with a ``reason``)."""
        if self.reason:
            return False
        if isinstance(self.published, str) or isinstance(value, str):
            return value == self.published
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        return bool(np.isfinite(number) and abs(number - self.published) <= self.tolerance + 1e-9)


def _correlation(metric: str, human: str, level: str, coefficient: str) -> Callable[[Dataset], float]:
    def compute(dataset: Dataset) -> float:
        from metaeval_core.stats.correlation import correlate

        return float(correlate(dataset, metric, human, level=level, coefficient=coefficient).estimate)
    return compute


def _interval_end(metric: str, end: str) -> Callable[[Dataset], float]:
    def compute(dataset: Dataset) -> float:
        from metaeval_core.stats.resampling import dataset_confidence_interval

        ci = dataset_confidence_interval(dataset, metric, SUMMEVAL_HUMAN, level="system", coefficient="kendall",
                                         method="boot-both", n_resamples=N_RESAMPLES, rng=SEED)
        return float(getattr(ci, end))
    return compute


def _superior(level: str, coefficient: str) -> Callable[[Dataset], str]:
    """The metrics that significantly beat at least one other (PERM-BOTH, Bonferroni per row, alpha 0.05)."""
    def compute(dataset: Dataset) -> str:
        from metaeval_core.stats.significance import compare_all_pairs

        table = compare_all_pairs(dataset, list(TACL_METRICS), SUMMEVAL_HUMAN, level=level, coefficient=coefficient,
                                  method="perm-both", alternative="greater", correction="bonferroni", family="row",
                                  alpha=0.05, n_resamples=N_RESAMPLES, rng=SEED)
        wins = np.asarray(table.significant_corrected, dtype=bool)
        return ", ".join(sorted(m for i, m in enumerate(TACL_METRICS) if wins[i].any()))
    return compute


def _beaten_by(winner: str, level: str, coefficient: str) -> Callable[[Dataset], str]:
    """The ROUGE variants ``winner`` significantly beats (PERM-BOTH, Bonferroni over its row, alpha 0.05).

    Only the winner's row of the all-pairs table is tested (7 comparisons, not 28): the row family's Bonferroni
    factor is the row's size either way, and the summary level is the slow one (~6 s for the whole table).
    """
    def compute(dataset: Dataset) -> str:
        from metaeval_core.stats.significance import compare_metrics

        z = dataset.measure(SUMMEVAL_HUMAN).scores
        x = dataset.measure(winner).scores
        others = [m for m in TACL_METRICS if m != winner]
        beaten = []
        for k, other in enumerate(others):
            result = compare_metrics(x, dataset.measure(other).scores, z, level=level, coefficient=coefficient,
                                     method="perm-both", alternative="greater", n_resamples=N_RESAMPLES, rng=SEED + k)
            significant = np.isfinite(result.pvalue) and min(1.0, result.pvalue * len(others)) < 0.05
            if significant and other.startswith("rouge"):
                beaten.append(other)
        return ", ".join(sorted(beaten))
    return compute


def _alpha(group: str) -> Callable[[Dataset], float]:
    def compute(dataset: Dataset) -> float:
        from metaeval_core.analyses.papers import annotator_agreement

        result = annotator_agreement(dataset)
        return float(next(r.alpha for r in result.alphas if r.group == group and r.dimension == "all"))
    return compute


def _rsys(metric: str, upper: float = np.inf, share: float | None = None) -> Callable[[Dataset], float]:
    """rSYS-Delta(0, u) of ``metric`` vs ground-truth; with ``share``, u = the |dx| of the closest share of pairs."""
    def compute(dataset: Dataset) -> float:
        from metaeval_core.stats.pairs import closest_upper, dataset_rsys_delta

        u = upper
        if share is not None:
            x = np.nanmean(dataset.measure(metric).scores, axis=1)
            u = closest_upper(np.abs(x[:, None] - x[None, :])[np.triu_indices(len(x), 1)], share)
        return float(dataset_rsys_delta(dataset, metric, "ground-truth", lower=0.0, upper=u).estimate)
    return compute


def _topk_full(metric: str) -> Callable[[Dataset], float]:
    def compute(dataset: Dataset) -> float:
        from metaeval_core.analyses.papers import topk_correlations

        result = topk_correlations(dataset, [metric], "litepyramid.recall", coefficient="pearson")
        return float(result.estimate[0, 0])
    return compute


def _not_available(dataset: Dataset) -> float:
    """For a number that needs data the mirror lacks: nothing to compute on (the row's reason says why)."""
    return float("nan")


# SacreROUGE's published SummEval correlations with the expert relevance judgments (peers only), as quoted in
# the data mirror's summeval/SOURCE.md; the BERTScore rows are SOURCE.md's extra values.
# metric: ((system r, rho, tau), (summary r, rho, tau)); None = not published.
SACREROUGE_TABLE: Mapping[str, tuple] = {
    "rouge-1.f1": ((0.61, 0.62, 0.50), (0.28, 0.26, 0.20)),
    "rouge-1.recall": ((0.55, 0.56, 0.42), (0.31, 0.28, 0.23)),
    "rouge-2.f1": ((0.64, 0.60, 0.43), (0.23, 0.19, 0.14)),
    "rouge-2.recall": ((0.65, 0.78, 0.57), (0.26, 0.23, 0.18)),
    "rouge-l.f1": ((0.61, 0.48, 0.32), (0.21, 0.18, 0.14)),
    "rouge-l.recall": ((0.70, 0.83, 0.65), (0.27, 0.26, 0.21)),
    "qa-eval.f1": ((0.82, 0.91, 0.77), (0.30, 0.29, 0.22)),
    "qa-eval.lerc": ((0.80, 0.90, 0.77), (0.34, 0.31, 0.24)),
    "MoverScore": ((0.56, 0.54, 0.42), (0.28, 0.24, 0.18)),
    "bertscore.recall": ((0.84, 0.91, 0.75), (0.37, 0.35, 0.27)),
    "bertscore.f1": ((0.54, 0.40, 0.28), None),
}
COEFFICIENT_NAMES = (("pearson", "r"), ("spearman", "ρ"), ("kendall", "τ"))


def _sacrerouge_rows() -> Iterable[PublishedValue]:
    for metric, rows in SACREROUGE_TABLE.items():
        for level, values in zip(("system", "input"), rows):
            if values is None:
                continue
            for (coefficient, symbol), value in zip(COEFFICIENT_NAMES, values):
                yield PublishedValue(
                    SACREROUGE, "SummEval correlation table",
                    f"{metric}, {'system' if level == 'system' else 'summary'}-level {symbol} with expert relevance", "summeval", value, 0.005,
                    _correlation(metric, SUMMEVAL_HUMAN, level, coefficient))


WMT23 = "Freitag et al. (WMT 2023), WMT23 metrics task"
# The paper's overall table (primary metrics; [noref]: reference-free), 3 decimals; metaeval recomputes the whole
# ranking live with mt-metrics-eval's tasks.WMT23() on the three language pairs (docs/methods.md sec. 13.4).
WMT23_TABLE = (("XCOMET-Ensemble", 0.825), ("XCOMET-QE-Ensemble[noref]", 0.808), ("MetricX-23", 0.808),
               ("GEMBA-MQM[noref]", 0.802), ("MetricX-23-QE[noref]", 0.800), ("mbr-metricx-qe[noref]", 0.788),
               ("MaTESe", 0.782), ("CometKiwi[noref]", 0.782))


def _wmt23_average(metric: str) -> Callable[[Dataset], float]:
    def compute(dataset: Dataset) -> float:
        from metaeval_core.analyses.suites import suite_of

        result = suite_of(dataset, "wmt23")
        return float(dict(zip(result.metrics, result.average))[metric])
    return compute


def _wmt23_leader(dataset: Dataset) -> str:
    from metaeval_core.analyses.suites import suite_of

    return suite_of(dataset, "wmt23").metrics[0]


def _wmt23_rows() -> Iterable[PublishedValue]:
    yield PublishedValue(WMT23, "Table 1 (overall)", "best metric of the official ranking (tasks.WMT23: 10 tasks over "
                         "en-de, he-en, zh-en)", "wmt23", "XCOMET-Ensemble", 0.0, _wmt23_leader)
    for metric, value in WMT23_TABLE:
        yield PublishedValue(WMT23, "Table 1 (overall)", f"{metric}: average over the 10 tasks (system accuracy "
                             "over all pairs x3, per pair system and segment Pearson, item-wise acc23; rescaled)",
                             "wmt23", value, 0.0005, _wmt23_average(metric))


NAACL_FULL_SET = ("the paper scores systems on the whole test set (all inputs); the judged file holds the metric's "
                  "scores on the 100 judged inputs only, and the mirror has no full-test-set scores")

PUBLISHED: tuple[PublishedValue, ...] = (
    *_sacrerouge_rows(),
    PublishedValue(FABBRI, "sec. 3.3", "Krippendorff's alpha, crowd (turker) annotations, pooled dimensions",
                   "summeval", 0.4920, 5e-5, _alpha("turker")),
    PublishedValue(FABBRI, "sec. 3.3", "Krippendorff's alpha, expert annotations (second round), pooled dimensions",
                   "summeval", 0.7187, 5e-5, _alpha("expert")),
    PublishedValue(TACL, "sec. 6, Fig. 4", "ROUGE-2 system-level Kendall τ, BOOT-BOTH 95% interval: lower end",
                   "summeval", -0.09, 0.1, _interval_end("rouge-2.f1", "low")),
    PublishedValue(TACL, "sec. 6, Fig. 4", "ROUGE-2 system-level Kendall τ, BOOT-BOTH 95% interval: upper end",
                   "summeval", 0.84, 0.1, _interval_end("rouge-2.f1", "high")),
    PublishedValue(TACL, "sec. 6, Fig. 5", "metrics significantly better than another, system-level Pearson "
                   "(PERM-BOTH, Bonferroni per row, α = 0.05)", "summeval", "bertscore.recall, qa-eval.f1", 0.0,
                   _superior("system", "pearson")),
    PublishedValue(TACL, "sec. 6", "metrics significantly better than another, system-level Kendall (PERM-BOTH, "
                   "Bonferroni per row, α = 0.05; 'largely consistent' with Pearson)", "summeval",
                   "bertscore.recall, qa-eval.f1", 0.0, _superior("system", "kendall")),
    PublishedValue(TACL, "sec. 6", "ROUGE variants BERTScore significantly beats, summary-level Pearson (PERM-BOTH, "
                   "Bonferroni per row, α = 0.05)", "summeval", "rouge-1.f1, rouge-2.f1, rouge-l.f1", 0.0,
                   _beaten_by("bertscore.recall", "input", "pearson")),
    PublishedValue(BHANDARI, "sec. 4.2, Fig. 3", "ROUGE-2 recall vs LitePyramid, Pearson over all 24 systems "
                   "(top-k with k = 24)", "realsumm", 0.96, 0.01, _topk_full("rouge-2.recall")),
    PublishedValue(NAACL, "sec. 3.3, Fig. 4", "ROUGE-1 BOOT-INPUTS rSYS interval width reduction with all inputs, "
                   "SummEval (%)", "summeval-naacl2022", 51.0, 0.5, _not_available, NAACL_FULL_SET),
    PublishedValue(NAACL, "sec. 3.3, Fig. 4", "ROUGE-1 BOOT-INPUTS rSYS interval width reduction with all inputs, "
                   "REALSumm (%)", "realsumm-naacl2022", 16.0, 0.5, _not_available, NAACL_FULL_SET),
    PublishedValue(NAACL, "sec. 4.2", "BERTScore rSYS (all pairs), SummEval judged file", "summeval-naacl2022",
                   0.77, 0.005, _rsys("BERTScore"), NAACL_FULL_SET),
    PublishedValue(NAACL, "sec. 4.2", "BERTScore rSYS-Δ on the closest 20% of pairs, SummEval judged file",
                   "summeval-naacl2022", 0.42, 0.005, _rsys("BERTScore", share=0.2), NAACL_FULL_SET),
    PublishedValue(NAACL, "sec. 4.2, Fig. 6", "ROUGE-1 rSYS (all pairs), SummEval judged file", "summeval-naacl2022",
                   0.45, 0.005, _rsys("ROUGE-1"), NAACL_FULL_SET),
    PublishedValue(NAACL, "sec. 4.2, Fig. 6", "ROUGE-1 rSYS (all pairs), REALSumm judged file", "realsumm-naacl2022",
                   0.73, 0.005, _rsys("ROUGE-1"), NAACL_FULL_SET),
    PublishedValue(NAACL, "sec. 4.2, Fig. 6", "ROUGE-1 rSYS-Δ(0, 0.5), SummEval judged file", "summeval-naacl2022",
                   0.08, 0.005, _rsys("ROUGE-1", 0.5), NAACL_FULL_SET),
    PublishedValue(NAACL, "sec. 4.2, Fig. 6", "ROUGE-1 rSYS-Δ(0, 0.5), REALSumm judged file", "realsumm-naacl2022",
                   0.0, 0.005, _rsys("ROUGE-1", 0.5), NAACL_FULL_SET),
    *_wmt23_rows(),
)


Verdict = Literal["reproduced", "differs", "not reproducible", "not computed"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
_NOT_COMPUTED = ("data not available", "could not compute")  # the notes reproduce() writes itself


@dataclass(frozen=True)
class Reproduction:
    """One row of the reproduction table: the published value, metaeval's value and whether they agree.

    :attr:`verdict` sorts it into one of :data:`VERDICTS`: ``reproduced`` (✓, within tolerance), ``differs``
    (✗, computed and reproducible but outside tolerance), ``not reproducible`` (the data cannot reproduce it: the
    note says why; any value is shown for comparison, never ticked) or ``not computed`` (data missing or the
    computation failed).
    """

    paper: str
    table: str
    description: str
    dataset: str
    published: float | str
    tolerance: float
    value: float | str | None
    reproduced: bool
    note: str

    @property
    def verdict(self) -> str:
        if self.note.startswith(_NOT_COMPUTED):
            return "not computed"
        if self.note:
            return "not reproducible"
        return "reproduced" if self.reproduced else "differs"


def reproduce(load: Callable[[str], Dataset], *, values: Iterable[PublishedValue] = PUBLISHED,
              datasets: Iterable[str] | None = None) -> tuple[Reproduction, ...]:
    """Recompute every published value with ``load(dataset_id)`` (None value and a note when it fails).

    A dataset ``load`` cannot provide (missing files) gives rows with no value and the loader's message.

    References: the module docstring.
    """
    wanted = None if datasets is None else set(datasets)
    cache: dict[str, Dataset | Exception] = {}
    rows = []
    for item in values:
        if wanted is not None and item.dataset not in wanted:
            continue
        if item.dataset not in cache:
            try:
                cache[item.dataset] = load(item.dataset)
            except Exception as error:  # noqa: BLE001 - a missing dataset becomes a row's note, not a crash
                cache[item.dataset] = error
        dataset = cache[item.dataset]
        value: float | str | None = None
        if isinstance(dataset, Exception):
            note = f"data not available: {dataset}"
        else:
            try:
                value = item.compute(dataset)
                note = item.reason
            except Exception as error:  # noqa: BLE001 - one failing number must not hide the others
                note = f"could not compute: {error}"
        rows.append(Reproduction(item.paper, item.table, item.description, item.dataset, item.published,
                                 item.tolerance, value, value is not None and item.matches(value), note))
    return tuple(rows)


def reproduction_records(rows: Iterable[Reproduction]) -> list[dict]:
    """Rows as plain records (for a table, CSV or JSON)."""
    return [{"paper": r.paper, "table": r.table, "what": r.description, "dataset": r.dataset,
             "published": r.published, "metaeval": r.value, "tolerance": r.tolerance,
             "reproduced": r.reproduced, "verdict": r.verdict, "note": r.note} for r in rows]


def verdict_counts(rows: Iterable[Reproduction]) -> dict[str, int]:
    """How many rows have each :data:`VERDICTS` (every verdict present, 0 when none): the headline counts each
    separately, so "reproduced" is never read as "all published numbers agree"."""
    counts = dict.fromkeys(VERDICTS, 0)
    for row in rows:
        counts[row.verdict] += 1
    return counts
