"""REALSumm, SummEval and Peyrard analyses: top-k, pairwise F1, metric correlation
matrix, annotator agreement, the high-scoring range and normality.

Every public function takes the dataset first and its options as keyword-only
arguments, validates them in one helper (a ``ValueError``/``TypeError`` naming
the parameter and the rule, or a :class:`~metaeval_core.data.dataset.DatasetError`
for an unknown measure, system or attribute) and returns a frozen dataclass
with named fields and a ``to_records()`` method giving plain rows.

Undefined pieces (a correlation on fewer than 2 points or on a constant vector)
are NaN, never 0, and every result counts what it dropped (docs/methods.md sec. 1).

References: docs/methods.md sec. 7 (Bhandari et al., EMNLP 2020) and sec. 8
(Fabbri et al., TACL 2021; Peyrard, ACL 2019).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np
from numpy.random import Generator
from scipy import stats

from metaeval_core._checks import as_generator, check_choice, check_dataset, check_human, check_int, check_probability
from metaeval_core.stats.coefficients import Coefficient, coefficient_function, kendall, validate_coefficient
from metaeval_core.stats.correlation import Level, correlate_matrices, system_means, validate_level
from metaeval_core.data.dataset import POOLS, Dataset, DatasetError, Pool

__all__ = [
    "TopKResult",
    "topk_correlations",
    "PairwiseF1Result",
    "pairwise_f1",
    "weighted_f1",
    "CorrelationMatrix",
    "correlation_matrix",
    "AlphaRow",
    "GroupCorrelationRow",
    "AnnotatorAgreement",
    "annotator_agreement",
    "HighRangeResult",
    "high_range",
    "NormalityRow",
    "NormalityTable",
    "normality_table",
]

MatrixOrder = Literal["given", "clustered"]
MATRIX_ORDERS: tuple[str, ...] = get_args(MatrixOrder)
Normalise = Literal["input", "global"]
NORMALISATIONS: tuple[str, ...] = get_args(Normalise)

# Resamples processed at once by the pairwise bootstrap when ``batch`` is None.
_DEFAULT_BATCH = 250
# Two resampled means closer than this (relative) are a tie, not a win: floating-point noise.
_TIE_RTOL = 1e-10


# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------
def _check_names(names: object, parameter: str, *, minimum: int = 1) -> tuple[str, ...]:
    """A tuple of unique measure ids from a sequence of strings (a bare string is refused)."""
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise TypeError(f"{parameter} must be a sequence of measure ids (e.g. a list of str); got {names!r}")
    names = tuple(names)
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"{parameter} must hold measure ids as str; got {names!r}")
    if len(names) < minimum:
        raise ValueError(f"{parameter} must name at least {minimum} measure(s); got {len(names)}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{parameter} must not repeat a measure; repeated: {', '.join(duplicates)}")
    return names


def _check_measures_exist(dataset: Dataset, names: Sequence[str]) -> None:
    for name in names:
        dataset.measure(name)  # DatasetError naming the known measures


def _check_human(dataset: Dataset, human: object) -> None:
    if not isinstance(human, str):
        raise TypeError(f"human must be a measure id (str); got {human!r}")
    check_human(dataset, human)


def _select(dataset: object, systems: object) -> Dataset:
    check_dataset(dataset)
    if systems is not None and not isinstance(systems, (str, dict)):
        raise TypeError(f"systems must be a selection such as 'type=abs' (str) or None; got {systems!r}")
    return dataset.select_systems(systems)


def _float_or_none(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


# ---------------------------------------------------------------------------
# Top-k systems (Bhandari et al. 2020, sec. 4.2)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TopKResult:
    """System-level correlations among the top-k systems by mean human score.

    ``estimate[q, t]`` is metric ``metrics[q]`` at ``ks[t]`` (``ks`` runs from the
    number of ranked systems down to ``min_k``); ``n[q, t]`` counts the systems
    with both means among those ``k``. ``ranking`` lists the ranked systems, best
    first (ties in the human mean keep dataset order); ``unranked`` lists systems
    without a human mean, which are left out.
    """

    metrics: tuple[str, ...]
    human: str
    coefficient: str
    pool: str
    systems: str
    ks: np.ndarray
    estimate: np.ndarray
    n: np.ndarray
    ranking: tuple[str, ...]
    unranked: tuple[str, ...]

    @property
    def n_undefined(self) -> int:
        """How many (metric, k) correlations are undefined (NaN)."""
        return int(np.isnan(self.estimate).sum())

    def curve(self, metric: str) -> np.ndarray:
        """The estimates of one metric, aligned with ``ks``."""
        return self.estimate[self.metrics.index(metric)]

    def to_records(self) -> list[dict]:
        """Rows ``{metric, k, estimate}`` (estimate None when undefined), k descending."""
        return [
            {"metric": m, "k": int(k), "estimate": _float_or_none(self.estimate[q, t])}
            for q, m in enumerate(self.metrics)
            for t, k in enumerate(self.ks)
        ]


def _validate_topk(dataset, metrics, human, coefficient, pool, systems, min_k) -> tuple[Dataset, tuple[str, ...]]:
    subset = _select(dataset, systems)
    metrics = _check_names(metrics, "metrics")
    _check_measures_exist(subset, metrics)
    _check_human(subset, human)
    validate_coefficient(coefficient)
    check_choice(pool, "pool", POOLS)
    check_int(min_k, "min_k", minimum=2, wording="at least")
    if min_k > subset.n_systems:
        raise ValueError(f"min_k must not exceed the number of systems ({subset.n_systems}); got {min_k}")
    return subset, metrics


def topk_correlations(
    dataset: Dataset,
    metrics: Sequence[str],
    human: str,
    *,
    coefficient: Coefficient = "pearson",
    pool: Pool = "judged",
    systems: str | None = None,
    min_k: int = 3,
) -> TopKResult:
    """System-level metric-human correlation among the top-k systems, for k = N down to ``min_k``.

    Systems are sorted by their mean human score (best first; ties keep dataset
    order; systems without a human mean are left out). For each ``k`` the
    correlation of the system means (docs/methods.md sec. 1, system level) is computed on
    the top ``k`` systems only: one curve per metric.

    Parameters
    ----------
    dataset : Dataset
    metrics : sequence of str
        Metric ids (any measure may serve as a metric).
    human : str
        The human measure that ranks the systems and that the metrics are correlated with.
    coefficient : {'pearson', 'spearman', 'kendall'}
        Bhandari et al. Fig. 3 use Pearson (the default), Fig. 8 Kendall.
    pool : {'judged', 'all'}
        The metrics' input pool for their system means.
    systems : str, optional
        A system subset such as ``"type=abs"``; ranks and k refer to that subset.
    min_k : int
        The smallest k (at least 2; the paper stops at 3).

    Returns
    -------
    TopKResult

    References
    ----------
    docs/methods.md sec. 7; Bhandari et al. (EMNLP 2020) sec. 4.2, Fig. 3 and 8.
    """
    subset, metrics = _validate_topk(dataset, metrics, human, coefficient, pool, systems, min_k)
    z = system_means(subset.matrix(human))
    ranked = np.flatnonzero(~np.isnan(z))
    order = ranked[np.argsort(-z[ranked], kind="stable")]
    n_ranked = order.size
    if n_ranked < min_k:
        raise ValueError(
            f"min_k must not exceed the number of systems with a {human!r} mean ({n_ranked}); got {min_k}"
        )
    x = np.stack([system_means(subset.matrix(m, pool=pool))[order] for m in metrics])  # (Q, K)
    ks = np.arange(n_ranked, min_k - 1, -1)
    inside = np.arange(n_ranked)[None, :] < ks[:, None]  # (T, K): position p is in the top k
    xk = np.where(inside[None, :, :], x[:, None, :], np.nan)  # (Q, T, K)
    zk = np.where(inside, z[order][None, :], np.nan)  # (T, K)
    estimate = coefficient_function(coefficient)(xk, zk[None, :, :])
    n = (~np.isnan(xk) & ~np.isnan(zk)[None]).sum(axis=-1)
    return TopKResult(
        metrics=metrics,
        human=human,
        coefficient=coefficient,
        pool=pool,
        systems=systems or "",
        ks=ks,
        estimate=estimate,
        n=n,
        ranking=tuple(subset.systems[i] for i in order),
        unranked=tuple(subset.systems[i] for i in range(subset.n_systems) if np.isnan(z[i])),
    )


# ---------------------------------------------------------------------------
# Pairwise comparison F1 (Bhandari et al. 2020, sec. 4.3)
# ---------------------------------------------------------------------------
def weighted_f1(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    """Support-weighted F1 of predicted labels against true labels (sklearn's ``average='weighted'``).

    For each class ``c`` present in ``y_true``: ``F1_c = 2 TP / (2 TP + FP + FN)``
    (0 when the class is never predicted correctly), weighted by its share of
    ``y_true``; classes absent from ``y_true`` have weight 0. ``y_pred`` may have
    leading batch axes (one row of predictions per metric). NaN when ``y_true``
    is empty.

    References
    ----------
    docs/methods.md sec. 7; scikit-learn ``f1_score(..., average='weighted')``.
    """
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.ndim != 1 or y_pred.shape[-1:] != y_true.shape:
        raise ValueError(
            f"y_pred must end with the length of y_true ({y_true.shape}); got shape {y_pred.shape}"
        )
    if y_true.size == 0:
        return np.full(y_pred.shape[:-1], np.nan)
    score = np.zeros(y_pred.shape[:-1])
    for label in np.unique(y_true):
        true_c = y_true == label
        pred_c = y_pred == label
        tp = (pred_c & true_c).sum(axis=-1)
        fp = (pred_c & ~true_c).sum(axis=-1)
        fn = (~pred_c & true_c).sum(axis=-1)
        f1 = 2.0 * tp / np.maximum(2 * tp + fp + fn, 1)
        score = score + true_c.mean() * f1
    return score


@dataclass(frozen=True)
class PairwiseF1Result:
    """Pairwise-comparison labels from a paired bootstrap and the weighted F1 of each metric.

    For the system pair ``(pair_a[p], pair_b[p])`` (indices into ``system_names``,
    ``a < b``), ``human_share[p]`` is the share of resamples in which A's mean
    human score beats B's, ``human_share_b[p]`` the share in which B beats A;
    the label is 1 if ``human_share >= confidence``, 2 if ``human_share_b >=
    confidence``, else 0. ``metric_*`` arrays hold the same per metric (rows
    aligned with ``metrics``). ``f1[q]`` is :func:`weighted_f1` of the metric
    labels against the human labels.
    """

    metrics: tuple[str, ...]
    human: str
    systems: str
    system_names: tuple[str, ...]
    n_resamples: int
    confidence: float
    pair_a: np.ndarray
    pair_b: np.ndarray
    human_labels: np.ndarray
    human_share: np.ndarray
    human_share_b: np.ndarray
    metric_labels: np.ndarray
    metric_share: np.ndarray
    metric_share_b: np.ndarray
    f1: np.ndarray

    @property
    def n_pairs(self) -> int:
        return int(self.pair_a.size)

    def to_records(self) -> list[dict]:
        """Rows ``{metric, f1}``."""
        return [{"metric": m, "f1": _float_or_none(self.f1[q])} for q, m in enumerate(self.metrics)]

    def label_records(self, metric: str | None = None) -> list[dict]:
        """Per-pair rows ``{metric, system_a, system_b, human_label, metric_label, human_share, metric_share, ...}``."""
        chosen = self.metrics if metric is None else (metric,)
        rows = []
        for m in chosen:
            q = self.metrics.index(m)
            for p in range(self.n_pairs):
                rows.append({
                    "metric": m,
                    "system_a": self.system_names[self.pair_a[p]],
                    "system_b": self.system_names[self.pair_b[p]],
                    "human_label": int(self.human_labels[p]),
                    "metric_label": int(self.metric_labels[q, p]),
                    "human_share": float(self.human_share[p]),
                    "metric_share": float(self.metric_share[q, p]),
                    "human_share_b": float(self.human_share_b[p]),
                    "metric_share_b": float(self.metric_share_b[q, p]),
                })
        return rows


def _validate_pairwise(dataset, metrics, human, n_resamples, confidence, systems, rng, batch):
    subset = _select(dataset, systems)
    metrics = _check_names(metrics, "metrics")
    _check_measures_exist(subset, metrics)
    _check_human(subset, human)
    check_int(n_resamples, "n_resamples", minimum=1, wording="at least")
    check_probability(confidence, "confidence")
    if batch is not None:
        check_int(batch, "batch", minimum=1, wording="at least")
    if subset.n_systems < 2:
        raise ValueError(f"systems must leave at least 2 systems to compare; got {subset.n_systems}")
    if subset.n_judged < 1:
        raise DatasetError(f"dataset {subset.id!r} has no judged inputs to resample")
    return subset, metrics, as_generator(rng)


def _pair_labels(wins_a: np.ndarray, wins_b: np.ndarray, defined: np.ndarray, confidence: float):
    """Labels 1/2/0 and shares from win counts over the defined resamples."""
    with np.errstate(invalid="ignore", divide="ignore"):
        share_a = np.where(defined > 0, wins_a / np.maximum(defined, 1), np.nan)
        share_b = np.where(defined > 0, wins_b / np.maximum(defined, 1), np.nan)
    # Compare counts, not rounded shares: 950 of 1000 must count as 95%.
    threshold = confidence * defined * (1.0 - 1e-12)
    labels = np.where((defined > 0) & (wins_a >= threshold), 1, np.where((defined > 0) & (wins_b >= threshold), 2, 0))
    return labels.astype(np.int8), share_a, share_b


def pairwise_f1(
    dataset: Dataset,
    metrics: Sequence[str],
    human: str,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    systems: str | None = None,
    rng: Generator | int | None = None,
    batch: int | None = None,
) -> PairwiseF1Result:
    """Can a metric tell which of two systems is significantly better? Weighted F1 against humans.

    For every pair of systems (A, B), a paired bootstrap over the judged inputs
    (``n_resamples`` resamples of all inputs with replacement, the same indices
    for every system and every measure) gives the share of resamples in which
    A's mean beats B's. The label is 1 if A beats B in at least ``confidence``
    of the resamples, 2 if B beats A as often, else 0 (ties count for neither;
    a resample in which a system has no score counts for neither and is left out
    of that pair's denominator). Human and metric labels come from the same
    resamples. A metric's score is the support-weighted F1 of its labels against
    the human labels (:func:`weighted_f1`).

    All resample indices are drawn up front, so the result is identical for any
    ``batch`` (resamples processed at once; only memory changes).

    Parameters
    ----------
    dataset : Dataset
    metrics : sequence of str
    human : str
    n_resamples : int
        Bootstrap resamples (the paper: 1000).
    confidence : float
        The share of resamples needed for a label 1 or 2 (the paper: 0.95).
    systems : str, optional
        A system subset such as ``"type=abs"``.
    rng : numpy.random.Generator, int or None
    batch : int, optional
        Resamples per vectorised step (default 250).

    Returns
    -------
    PairwiseF1Result

    Notes
    -----
    Metrics use the judged inputs (their resamples must be the human's).

    References
    ----------
    docs/methods.md sec. 7; Bhandari et al. (EMNLP 2020) sec. 4.3, Fig. 4; Koehn (2004).
    """
    subset, metrics, generator = _validate_pairwise(
        dataset, metrics, human, n_resamples, confidence, systems, rng, batch
    )
    names = (human,) + metrics
    scores = np.stack([subset.matrix(name) for name in names])  # (Q, N, M), judged inputs
    n_inputs = scores.shape[-1]
    valid = ~np.isnan(scores)
    filled = np.where(valid, scores, 0.0)
    indices = generator.integers(0, n_inputs, size=(n_resamples, n_inputs))  # drawn up front
    pair_a, pair_b = np.triu_indices(subset.n_systems, 1)
    q_count = len(names)
    wins_a = np.zeros((q_count, pair_a.size), dtype=np.int64)
    wins_b = np.zeros_like(wins_a)
    defined = np.zeros_like(wins_a)
    step = batch or _DEFAULT_BATCH
    offsets = np.arange(step)[:, None] * n_inputs
    for start in range(0, n_resamples, step):
        chunk = indices[start:start + step]
        rows = chunk.shape[0]
        # (rows x M) count weights: how often each input is drawn in each resample.
        weights = np.bincount((chunk + offsets[:rows]).ravel(), minlength=rows * n_inputs)
        weights = weights.reshape(rows, n_inputs).astype(np.float64)
        totals = np.einsum("bm,qnm->qbn", weights, filled)
        counts = np.einsum("bm,qnm->qbn", weights, valid.astype(np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, totals / np.maximum(counts, 1.0), np.nan)  # (Q, rows, N)
        first = means[:, :, pair_a]
        second = means[:, :, pair_b]
        # Means equal up to floating-point noise are ties (Likert averages tie often).
        apart = np.abs(first - second) > _TIE_RTOL * np.maximum(np.abs(first), np.abs(second))
        wins_a += (apart & (first > second)).sum(axis=1)
        wins_b += (apart & (first < second)).sum(axis=1)
        defined += (~np.isnan(first) & ~np.isnan(second)).sum(axis=1)
    labels, share_a, share_b = _pair_labels(wins_a, wins_b, defined, confidence)
    f1 = weighted_f1(labels[0], labels[1:])
    return PairwiseF1Result(
        metrics=metrics,
        human=human,
        systems=systems or "",
        system_names=subset.systems,
        n_resamples=n_resamples,
        confidence=float(confidence),
        pair_a=pair_a,
        pair_b=pair_b,
        human_labels=labels[0],
        human_share=share_a[0],
        human_share_b=share_b[0],
        metric_labels=labels[1:],
        metric_share=share_a[1:],
        metric_share_b=share_b[1:],
        f1=f1,
    )


# ---------------------------------------------------------------------------
# Metric-by-metric correlation matrix (SummEval Fig. 1)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CorrelationMatrix:
    """A symmetric measure-by-measure correlation matrix.

    Rows and columns follow ``measures`` (the given order, or the clustered
    order when ``order == 'clustered'``). ``matrix[a, b]`` is the correlation of
    the two measures at ``level`` (NaN where undefined; the diagonal is 1 for
    every measure whose self-correlation is defined). ``n[a, b]`` counts the points behind
    it (systems, inputs used, or cells) and ``n_undefined[a, b]`` the inputs
    skipped at the input level. ``linkage`` is the scipy linkage matrix of the
    clustering (average linkage on ``1 - |r|``, undefined r as distance 1), or None.
    """

    measures: tuple[str, ...]
    matrix: np.ndarray
    n: np.ndarray
    n_undefined: np.ndarray
    level: str
    coefficient: str
    pool: str
    systems: str
    order: str
    linkage: np.ndarray | None = None

    def get(self, a: str, b: str) -> float:
        return float(self.matrix[self.measures.index(a), self.measures.index(b)])

    def to_records(self) -> list[dict]:
        """Long rows ``{row, column, estimate, n}`` for every ordered pair."""
        return [
            {"row": a, "column": b, "estimate": _float_or_none(self.matrix[i, j]), "n": int(self.n[i, j])}
            for i, a in enumerate(self.measures)
            for j, b in enumerate(self.measures)
        ]

    def to_dict(self) -> dict:
        return {
            "measures": list(self.measures),
            "matrix": [[_float_or_none(v) for v in row] for row in self.matrix],
            "n": self.n.astype(int).tolist(),
            "level": self.level,
            "coefficient": self.coefficient,
            "pool": self.pool,
            "systems": self.systems,
            "order": self.order,
        }


def _kendall_global(x: np.ndarray, z: np.ndarray) -> float:
    """Kendall tau-b over pairwise-complete points with scipy; NaN on < 2 points or a constant vector."""
    valid = ~np.isnan(x) & ~np.isnan(z)
    x, z = x[valid], z[valid]
    if x.size < 2 or x.max() == x.min() or z.max() == z.min():
        return math.nan
    return float(stats.kendalltau(x, z).statistic)


def _validate_matrix(dataset, measures, level, coefficient, pool, systems, order):
    subset = _select(dataset, systems)
    measures = _check_names(measures, "measures", minimum=2)
    _check_measures_exist(subset, measures)
    validate_level(level)
    validate_coefficient(coefficient)
    check_choice(pool, "pool", POOLS)
    check_choice(order, "order", MATRIX_ORDERS)
    return subset, measures


def correlation_matrix(
    dataset: Dataset,
    measures: Sequence[str],
    *,
    level: Level = "system",
    coefficient: Coefficient = "kendall",
    pool: Pool = "judged",
    systems: str | None = None,
    order: MatrixOrder = "given",
) -> CorrelationMatrix:
    """Correlation of every pair of measures (metrics and humans alike) at one level.

    Each pair is correlated exactly as a metric with a human in docs/methods.md sec. 1:
    system means (each metric over its ``pool``, humans over the judged inputs)
    at the system level; per judged input, then averaged, at the input level;
    over all judged cells at the global level.

    Parameters
    ----------
    dataset : Dataset
    measures : sequence of str
        At least two measure ids.
    level : {'system', 'input', 'global'}
    coefficient : {'pearson', 'spearman', 'kendall'}
    pool : {'judged', 'all'}
        The metrics' input pool (system level only).
    systems : str, optional
        A system subset such as ``"type=abs"``.
    order : {'given', 'clustered'}
        ``'clustered'`` reorders the measures by average-linkage hierarchical
        clustering (``scipy.cluster.hierarchy``) on the distance ``1 - |r|``,
        leaves in optimal order, so that measures that agree sit together.

    Returns
    -------
    CorrelationMatrix

    References
    ----------
    docs/methods.md sec. 8; Fabbri et al. (TACL 2021) sec. 5.2, Fig. 1 (pairwise Pearson correlations of all metrics).
    """
    subset, measures = _validate_matrix(dataset, measures, level, coefficient, pool, systems, order)
    effective_pool = pool if level == "system" else "judged"
    q_count = len(measures)
    first, second = np.triu_indices(q_count, 0)  # include the diagonal
    if level == "system":
        # Human and metric pools may differ in width; their system means do not.
        means = np.stack([system_means(subset.matrix(m, pool=effective_pool)) for m in measures])  # (Q, N)
        corr = coefficient_function(coefficient)
        estimate = corr(means[first], means[second])
        n_points = (~np.isnan(means[first]) & ~np.isnan(means[second])).sum(axis=-1)
        skipped = np.zeros_like(n_points)
    elif level == "global" and coefficient == "kendall":
        # Thousands of cells: scipy's O(n log n) tau-b per pair beats the O(n^2) batch kernel.
        cells = np.stack([subset.matrix(m).ravel() for m in measures])  # (Q, N * M_judged)
        estimate = np.array([_kendall_global(cells[a], cells[b]) for a, b in zip(first, second)])
        n_points = (~np.isnan(cells[first]) & ~np.isnan(cells[second])).sum(axis=-1)
        skipped = np.zeros_like(n_points)
    else:
        stacked = np.stack([subset.matrix(m) for m in measures])  # (Q, N, M_judged)
        result = correlate_matrices(stacked[first], stacked[second], level=level, coefficient=coefficient)
        estimate, n_points, skipped = result.estimate, result.n, result.n_undefined
    matrix = np.full((q_count, q_count), np.nan)
    n = np.zeros((q_count, q_count), dtype=np.int64)
    n_undefined = np.zeros_like(n)
    for arr, values in ((matrix, estimate), (n, n_points), (n_undefined, skipped)):
        arr[first, second] = values
        arr[second, first] = values
    diagonal = np.arange(q_count)
    matrix[diagonal, diagonal] = np.where(np.isnan(matrix[diagonal, diagonal]), np.nan, 1.0)
    linkage = None
    if order == "clustered" and q_count > 2:
        from scipy.cluster import hierarchy
        from scipy.spatial.distance import squareform

        distance = 1.0 - np.abs(matrix)
        distance = np.where(np.isnan(distance), 1.0, distance)
        distance = np.clip((distance + distance.T) / 2.0, 0.0, None)
        np.fill_diagonal(distance, 0.0)
        linkage = hierarchy.linkage(squareform(distance, checks=False), method="average", optimal_ordering=True)
        permutation = hierarchy.leaves_list(linkage)
        matrix = matrix[np.ix_(permutation, permutation)]
        n = n[np.ix_(permutation, permutation)]
        n_undefined = n_undefined[np.ix_(permutation, permutation)]
        measures = tuple(measures[i] for i in permutation)
    return CorrelationMatrix(
        measures=measures,
        matrix=matrix,
        n=n,
        n_undefined=n_undefined,
        level=level,
        coefficient=coefficient,
        pool=effective_pool,
        systems=systems or "",
        order=order,
        linkage=linkage,
    )


# ---------------------------------------------------------------------------
# Annotators: expert vs crowd, Krippendorff's alpha (SummEval sec. 4)
# ---------------------------------------------------------------------------
ALPHA_NOTE = (
    "Krippendorff's alpha (interval) treats every summary (system x judged input) as a unit and the "
    "annotator slots as coders. Alpha depends only on the multiset of values within each unit (its "
    "coincidence matrix), not on which coder gave which value, so it is well defined even where slot i "
    "is not the same person across units (SummEval's crowd workers). dimension 'all' pools the dimensions "
    "by concatenating their units (one unit per summary and dimension), as one alpha per annotator group "
    "in the SummEval paper; between-dimension differences in level then count as between-unit variation."
)


@dataclass(frozen=True)
class AlphaRow:
    """Krippendorff's alpha of one annotator group on one dimension (or ``'all'``).

    ``n_units`` counts the pairable units (at least two values), ``n_values``
    the values in them, ``n_annotators`` the annotator slots.
    """

    group: str
    dimension: str
    alpha: float
    n_units: int
    n_values: int
    n_annotators: int

    def to_dict(self) -> dict:
        return {"group": self.group, "dimension": self.dimension, "alpha": _float_or_none(self.alpha),
                "n_units": self.n_units, "n_values": self.n_values, "n_annotators": self.n_annotators}


@dataclass(frozen=True)
class GroupCorrelationRow:
    """Correlation of two annotator groups' mean scores on one dimension at one level."""

    dimension: str
    group_a: str
    group_b: str
    level: str
    coefficient: str
    estimate: float
    n: int
    n_undefined: int

    def to_dict(self) -> dict:
        return {"dimension": self.dimension, "group_a": self.group_a, "group_b": self.group_b,
                "level": self.level, "coefficient": self.coefficient, "estimate": _float_or_none(self.estimate),
                "n": self.n, "n_undefined": self.n_undefined}


@dataclass(frozen=True)
class AnnotatorAgreement:
    """Inter-annotator agreement per group and dimension, and group-mean correlations.

    Human measures with per-annotator scores are read as ``GROUP.DIMENSION``
    (``expert.relevance``); a measure id without a dot is its own group with
    dimension ``'score'``.
    """

    alphas: tuple[AlphaRow, ...]
    correlations: tuple[GroupCorrelationRow, ...]
    systems: str
    note: str = ALPHA_NOTE

    def alpha(self, group: str, dimension: str) -> float:
        for row in self.alphas:
            if row.group == group and row.dimension == dimension:
                return row.alpha
        raise KeyError(f"no alpha for group {group!r}, dimension {dimension!r}")

    def to_records(self) -> list[dict]:
        """Rows ``{group, dimension, alpha, n_units, n_values, n_annotators}``."""
        return [row.to_dict() for row in self.alphas]

    def correlation_records(self) -> list[dict]:
        return [row.to_dict() for row in self.correlations]


def _split_measure(name: str) -> tuple[str, str]:
    group, dot, dimension = name.partition(".")
    return (group, dimension) if dot else (name, "score")


def krippendorff_interval(units: np.ndarray) -> tuple[float, int, int]:
    """Interval alpha of a (coders x units) matrix via the ``krippendorff`` package, with unit counts.

    Returns ``(alpha, n_pairable_units, n_values_in_them)``; alpha is NaN when
    fewer than two units are pairable or there is no variation at all.
    """
    import krippendorff

    units = np.asarray(units, dtype=np.float64)
    counts = (~np.isnan(units)).sum(axis=0)
    pairable = counts >= 2
    n_units, n_values = int(pairable.sum()), int(counts[pairable].sum())
    data = units[:, pairable]
    if n_units < 2 or np.unique(data[~np.isnan(data)]).size < 2:
        return math.nan, n_units, n_values
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval")), n_units, n_values


def _validate_annotators(dataset, groups, levels, coefficients, systems):
    subset = _select(dataset, systems)
    with_annotators = [n for n in subset.human_measures if subset.measure(n).annotators is not None]
    if not with_annotators:
        raise DatasetError(f"dataset {subset.id!r} keeps no per-annotator scores; annotator agreement needs them")
    known = list(dict.fromkeys(_split_measure(n)[0] for n in with_annotators))
    if groups is not None:
        if isinstance(groups, str) or not isinstance(groups, Sequence) or not all(isinstance(g, str) for g in groups):
            raise TypeError(f"groups must be a sequence of group names (str); got {groups!r}")
        unknown = [g for g in groups if g not in known]
        if unknown:
            raise DatasetError(f"groups: unknown annotator group(s) {', '.join(unknown)}; known: {', '.join(known)}")
        known = list(dict.fromkeys(groups))
    if isinstance(levels, str) or not isinstance(levels, Sequence) or not levels:
        raise TypeError(f"levels must be a non-empty sequence of levels; got {levels!r}")
    for level in levels:
        validate_level(level)
    if isinstance(coefficients, str) or not isinstance(coefficients, Sequence) or not coefficients:
        raise TypeError(f"coefficients must be a non-empty sequence of coefficients; got {coefficients!r}")
    for coefficient in coefficients:
        validate_coefficient(coefficient)
    return subset, with_annotators, known


def annotator_agreement(
    dataset: Dataset,
    *,
    groups: Sequence[str] | None = None,
    levels: Sequence[Level] = ("global", "system"),
    coefficients: Sequence[Coefficient] = ("kendall", "pearson"),
    systems: str | None = None,
) -> AnnotatorAgreement:
    """Krippendorff's alpha per annotator group and dimension; group-mean correlations per dimension.

    * **Alpha** (interval), via the maintained ``krippendorff`` package, for each
      human measure with per-annotator scores and for ``dimension='all'``
      (the group's dimensions pooled by concatenating their units). Units are
      the summaries (system x judged input); see :data:`ALPHA_NOTE` for why the
      annotator slot may serve as the coder even when slots are not people.
    * **Correlations**: for each dimension held by two groups, the correlation
      of the two groups' mean scores (e.g. SummEval ``expert.relevance`` vs
      ``turker.relevance``) at each of ``levels`` and ``coefficients``, computed
      as in docs/methods.md sec. 1 (``'global'`` = over all summaries, the paper's
      summary-level comparison).

    Parameters
    ----------
    dataset : Dataset
    groups : sequence of str, optional
        Annotator groups to use (default: every group with per-annotator scores,
        in dataset order).
    levels : sequence of {'system', 'input', 'global'}
    coefficients : sequence of {'pearson', 'spearman', 'kendall'}
    systems : str, optional
        A system subset such as ``"type=abs"``.

    Returns
    -------
    AnnotatorAgreement

    Notes
    -----
    On SummEval, pooling by concatenating units gives expert 0.7187 and crowd
    0.4920: the paper's published values (sec. 5.1), to four decimals.

    References
    ----------
    docs/methods.md sec. 8; Fabbri et al. (TACL 2021) sec. 4.3 and 5.1 (Krippendorff's alpha: crowd 0.4920,
    experts 0.4286 in the first round and 0.7187 in the second); Krippendorff (2011).
    """
    subset, with_annotators, chosen = _validate_annotators(dataset, groups, levels, coefficients, systems)
    by_group: dict[str, list[tuple[str, str]]] = {}
    for name in with_annotators:
        group, dimension = _split_measure(name)
        if group in chosen:
            by_group.setdefault(group, []).append((dimension, name))
    alphas = []
    for group in chosen:
        pooled = []
        width = max(subset.measure(n).annotators.shape[0] for _, n in by_group[group])
        for dimension, name in by_group[group]:
            annotators = subset.measure(name).annotators[:, :, subset.judged]
            units = annotators.reshape(annotators.shape[0], -1)
            alpha, n_units, n_values = krippendorff_interval(units)
            alphas.append(AlphaRow(group, dimension, alpha, n_units, n_values, units.shape[0]))
            padded = np.full((width, units.shape[1]), np.nan)
            padded[: units.shape[0]] = units
            pooled.append(padded)
        # Always present (equal to the single dimension's alpha when a group has one dimension).
        alpha, n_units, n_values = krippendorff_interval(np.concatenate(pooled, axis=1))
        alphas.append(AlphaRow(group, "all", alpha, n_units, n_values, width))
    correlations = []
    dimensions = list(dict.fromkeys(d for g in chosen for d, _ in by_group[g]))
    for dimension in dimensions:
        holders = [(g, dict(by_group[g])[dimension]) for g in chosen if dimension in dict(by_group[g])]
        for a in range(len(holders)):
            for b in range(a + 1, len(holders)):
                (group_a, name_a), (group_b, name_b) = holders[a], holders[b]
                x, z = subset.matrix(name_a), subset.matrix(name_b)
                for level in levels:
                    for coefficient in coefficients:
                        r = correlate_matrices(x, z, level=level, coefficient=coefficient)
                        correlations.append(GroupCorrelationRow(
                            dimension, group_a, group_b, level, coefficient, float(r.estimate), int(r.n),
                            int(r.n_undefined),
                        ))
    return AnnotatorAgreement(tuple(alphas), tuple(correlations), systems or "")


# ---------------------------------------------------------------------------
# High-scoring range (Peyrard 2019)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class HighRangeResult:
    """Metric-metric agreement on all summaries vs the high-scoring range.

    ``pair_a``/``pair_b`` index ``metrics`` (``a < b``). ``tau_all[p]`` is the
    Kendall tau between the two metrics over the summaries of an input, averaged
    over the inputs where it is defined (``n_inputs_all[p]`` of them);
    ``tau_top``/``n_inputs_top`` the same on the kept (high-range) summaries.
    ``kept[i, j]`` marks the kept summaries (system ``i``, input ``j`` of
    ``input_names``). The disagreement curve: ``disagreement[p, b]`` is the
    share of within-input summary pairs, among those both metrics order (no tie
    in either), that the two metrics order differently, for pairs whose
    normalised mean score falls in bin ``[bin_edges[b], bin_edges[b+1])``;
    ``n_pairs[p, b]`` counts those pairs.
    """

    metrics: tuple[str, ...]
    selection_metrics: tuple[str, ...]
    baseline: str
    systems: str
    pool: str
    normalise: str
    system_names: tuple[str, ...]
    input_names: tuple[str, ...]
    kept: np.ndarray
    pair_a: np.ndarray
    pair_b: np.ndarray
    tau_all: np.ndarray
    tau_top: np.ndarray
    n_inputs_all: np.ndarray
    n_inputs_top: np.ndarray
    bin_edges: np.ndarray
    disagreement: np.ndarray
    n_pairs: np.ndarray

    @property
    def mean_kept(self) -> float:
        """Summaries kept per input, on average."""
        return float(self.kept.sum(axis=0).mean()) if self.kept.size else math.nan

    @property
    def mean_tau_all(self) -> float:
        return float(np.nanmean(self.tau_all)) if np.any(~np.isnan(self.tau_all)) else math.nan

    @property
    def mean_tau_top(self) -> float:
        return float(np.nanmean(self.tau_top)) if np.any(~np.isnan(self.tau_top)) else math.nan

    def to_records(self) -> list[dict]:
        """Rows ``{metric_a, metric_b, tau_all, tau_top, n_inputs_all, n_inputs_top}``."""
        return [
            {"metric_a": self.metrics[a], "metric_b": self.metrics[b],
             "tau_all": _float_or_none(self.tau_all[p]), "tau_top": _float_or_none(self.tau_top[p]),
             "n_inputs_all": int(self.n_inputs_all[p]), "n_inputs_top": int(self.n_inputs_top[p])}
            for p, (a, b) in enumerate(zip(self.pair_a, self.pair_b))
        ]

    def curve_records(self) -> list[dict]:
        """Rows ``{metric_a, metric_b, bin_low, bin_high, disagreement, n_pairs}``."""
        return [
            {"metric_a": self.metrics[a], "metric_b": self.metrics[b],
             "bin_low": float(self.bin_edges[k]), "bin_high": float(self.bin_edges[k + 1]),
             "disagreement": _float_or_none(self.disagreement[p, k]), "n_pairs": int(self.n_pairs[p, k])}
            for p, (a, b) in enumerate(zip(self.pair_a, self.pair_b))
            for k in range(self.bin_edges.size - 1)
        ]

    def to_dict(self) -> dict:
        return {
            "baseline": self.baseline,
            "metrics": list(self.metrics),
            "selection_metrics": list(self.selection_metrics),
            "systems": self.systems,
            "pool": self.pool,
            "normalise": self.normalise,
            "mean_kept_per_input": self.mean_kept,
            "mean_tau_all": self.mean_tau_all,
            "mean_tau_top": self.mean_tau_top,
            "correlations": self.to_records(),
            "disagreement": self.curve_records(),
        }


def _validate_high_range(dataset, metrics, baseline, selection_metrics, n_bins, normalise, pool, systems):
    subset = _select(dataset, systems)
    metrics = _check_names(metrics, "metrics", minimum=2)
    _check_measures_exist(subset, metrics)
    selection = metrics if selection_metrics is None else _check_names(selection_metrics, "selection_metrics")
    _check_measures_exist(subset, selection)
    if not isinstance(baseline, str):
        raise TypeError(f"baseline must be a system name (str); got {baseline!r}")
    if baseline not in subset.systems:
        where = f" (after selecting systems {systems!r})" if systems else ""
        raise DatasetError(
            f"baseline: unknown system {baseline!r}{where}; systems: {', '.join(subset.systems)}"
        )
    check_int(n_bins, "n_bins", minimum=1, wording="at least")
    check_choice(normalise, "normalise", NORMALISATIONS)
    check_choice(pool, "pool", POOLS)
    if subset.n_systems < 3:
        raise ValueError(f"systems must leave at least 3 systems (a baseline and two to compare); got {subset.n_systems}")
    return subset, metrics, selection


def _min_max(scores: np.ndarray, axis) -> np.ndarray:
    """Scale to [0, 1] by min and max over ``axis``, ignoring NaN; NaN where the range is 0."""
    valid = ~np.isnan(scores)
    low = np.where(valid, scores, np.inf).min(axis=axis, keepdims=True)
    high = np.where(valid, scores, -np.inf).max(axis=axis, keepdims=True)
    span = high - low
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(valid & (span > 0), (scores - low) / np.where(span > 0, span, 1.0), np.nan)


def high_range(
    dataset: Dataset,
    metrics: Sequence[str],
    *,
    baseline: str,
    selection_metrics: Sequence[str] | None = None,
    n_bins: int = 10,
    normalise: Normalise = "input",
    pool: Pool = "judged",
    systems: str | None = None,
) -> HighRangeResult:
    """Do metrics agree less on high-scoring summaries? Peyrard's analysis on a dataset's summaries.

    * **Top range**: per input, keep the summaries (other than the baseline's)
      that score higher than the ``baseline`` system's summary of that input on
      at least one of ``selection_metrics`` (default: ``metrics``). Peyrard's
      union over metrics of the summaries above the baseline.
    * **Agreement**: for every pair of metrics, Kendall tau-b between their
      scores over the summaries of each input, averaged over inputs where it is
      defined: on all summaries and on the kept ones.
    * **Disagreement curve**: for every pair of metrics and every pair of
      summaries of the same input (all summaries), whether the metrics order
      the two summaries differently (pairs tied by either metric are left
      out), against the pair's normalised mean score in ``n_bins`` equal bins
      of [0, 1]. A summary's normalised score is the mean over ``metrics`` of
      each metric min-max scaled to [0, 1] (per input with ``normalise='input'``,
      the default, or over all cells with ``'global'``); a pair's score is the
      mean of its two summaries'.

    Parameters
    ----------
    dataset : Dataset
    metrics : sequence of str
        At least two measures (human measures are allowed; they exist on judged inputs only).
    baseline : str
        The baseline system (e.g. SummEval ``M0``, Lead-3).
    selection_metrics : sequence of str, optional
    n_bins : int
    normalise : {'input', 'global'}
    pool : {'judged', 'all'}
        Inputs used: the judged ones, or all inputs (metrics only need scores).
    systems : str, optional
        A system subset such as ``"type=abs"`` (it must contain the baseline).

    Returns
    -------
    HighRangeResult

    Notes
    -----
    "All summaries" includes the baseline's. The kept range is narrower than the
    whole range, which by itself lowers tau (range restriction); Peyrard argues
    the drop exceeds that. In the extreme bins of the curve the two summaries of a
    pair are necessarily close on every metric, so their order is noisy: with
    per-input scaling disagreement rises at *both* ends; read the upper bins
    against the middle ones, not against the lowest.

    References
    ----------
    docs/methods.md sec. 8; Peyrard (ACL 2019) sec. 3-4, Table 1, Fig. 2, App. B (Algorithm 2).
    """
    subset, metrics, selection = _validate_high_range(
        dataset, metrics, baseline, selection_metrics, n_bins, normalise, pool, systems
    )
    columns = subset.judged if pool == "judged" else np.ones(subset.n_inputs, dtype=bool)
    input_names = tuple(name for name, keep in zip(subset.inputs, columns) if keep)
    scores = np.stack([subset.measure(m).scores[:, columns] for m in metrics])  # (Q, N, M)
    chosen = np.stack([subset.measure(m).scores[:, columns] for m in selection])
    b = subset.systems.index(baseline)
    kept = np.any(chosen > chosen[:, b:b + 1, :], axis=0)  # NaN compares False
    kept[b] = False

    pair_a, pair_b = np.triu_indices(len(metrics), 1)
    by_input = np.swapaxes(scores, 1, 2)  # (Q, M, N)
    tau_inputs_all = kendall(by_input[pair_a], by_input[pair_b])  # (P, M)
    top = np.where(kept.T[None], by_input, np.nan)
    tau_inputs_top = kendall(top[pair_a], top[pair_b])

    def _average(per_input: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        defined = ~np.isnan(per_input)
        count = defined.sum(axis=-1)
        total = np.where(defined, per_input, 0.0).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / np.maximum(count, 1), np.nan), count

    tau_all, n_all = _average(tau_inputs_all)
    tau_top, n_top = _average(tau_inputs_top)

    normalised = _min_max(scores, axis=1 if normalise == "input" else (1, 2))  # (Q, N, M)
    valid = ~np.isnan(normalised)
    with np.errstate(invalid="ignore", divide="ignore"):
        summary_score = np.where(valid, normalised, 0.0).sum(axis=0) / valid.sum(axis=0)  # (N, M)
    first, second = np.triu_indices(subset.n_systems, 1)
    pair_score = (summary_score[first] + summary_score[second]) / 2.0  # (S, M)
    signs = np.sign(scores[:, first, :] - scores[:, second, :])  # (Q, S, M), NaN when missing
    signs = np.where(np.isnan(signs), 0.0, signs)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.clip(np.searchsorted(edges, pair_score, side="right") - 1, 0, n_bins - 1)
    bins = np.where(np.isnan(pair_score), -1, bins)
    disagreement = np.full((pair_a.size, n_bins), np.nan)
    n_pairs = np.zeros((pair_a.size, n_bins), dtype=np.int64)
    for p, (qa, qb) in enumerate(zip(pair_a, pair_b)):
        product = signs[qa] * signs[qb]
        ordered = (product != 0) & (bins >= 0)
        both = np.bincount(bins[ordered], minlength=n_bins)
        differ = np.bincount(bins[ordered & (product < 0)], minlength=n_bins)
        n_pairs[p] = both
        with np.errstate(invalid="ignore", divide="ignore"):
            disagreement[p] = np.where(both > 0, differ / np.maximum(both, 1), np.nan)
    return HighRangeResult(
        metrics=metrics,
        selection_metrics=selection,
        baseline=baseline,
        systems=systems or "",
        pool=pool,
        normalise=normalise,
        system_names=subset.systems,
        input_names=input_names,
        kept=kept,
        pair_a=pair_a,
        pair_b=pair_b,
        tau_all=tau_all,
        tau_top=tau_top,
        n_inputs_all=n_all,
        n_inputs_top=n_top,
        bin_edges=edges,
        disagreement=disagreement,
        n_pairs=n_pairs,
    )


# ---------------------------------------------------------------------------
# Normality (docs/methods.md sec. 8)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class NormalityRow:
    """Shapiro-Wilk results for one measure.

    ``system_p``: p of the test on the system means (NaN with fewer than 3
    systems or constant means). ``input_share``: share of the tested inputs with
    p < ``alpha`` (Shapiro over the systems' scores on that input);
    ``input_tested``/``input_skipped`` count inputs tested and skipped (fewer
    than 3 scores, or constant).
    """

    measure: str
    kind: str
    pool: str
    system_p: float
    system_n: int
    input_share: float
    input_tested: int
    input_skipped: int

    def to_dict(self) -> dict:
        return {"measure": self.measure, "kind": self.kind, "pool": self.pool,
                "system_p": _float_or_none(self.system_p), "system_n": self.system_n,
                "input_share": _float_or_none(self.input_share), "input_tested": self.input_tested,
                "input_skipped": self.input_skipped}


@dataclass(frozen=True)
class NormalityTable:
    rows: tuple[NormalityRow, ...]
    alpha: float
    systems: str

    def to_records(self) -> list[dict]:
        return [row.to_dict() for row in self.rows]


def _shapiro_p(values: np.ndarray) -> float:
    """Shapiro-Wilk p of the non-NaN values; NaN with fewer than 3 or constant values."""
    values = values[~np.isnan(values)]
    if values.size < 3 or values.max() == values.min():
        return math.nan
    return float(stats.shapiro(values).pvalue)


def _validate_normality(dataset, measures, pool, systems, alpha):
    subset = _select(dataset, systems)
    measures = _check_names(measures, "measures")
    _check_measures_exist(subset, measures)
    check_choice(pool, "pool", POOLS)
    check_probability(alpha, "alpha")
    return subset, measures


def normality_table(
    dataset: Dataset,
    measures: Sequence[str],
    *,
    pool: Pool = "judged",
    systems: str | None = None,
    alpha: float = 0.05,
) -> NormalityTable:
    """Shapiro-Wilk normality of each measure at the system and input levels.

    System level: the p-value of the test on the measure's system means (each
    metric over ``pool``, humans over judged inputs). Input level: for each
    input of the pool, the test over the systems' scores on that input; the
    share of tested inputs with p < ``alpha``. Inputs with fewer than 3 scores or
    constant scores are skipped and counted. Pearson-based intervals and
    Williams' test assume normality; a high share flags where they are shaky.

    Parameters
    ----------
    dataset : Dataset
    measures : sequence of str
    pool : {'judged', 'all'}
    systems : str, optional
    alpha : float

    Returns
    -------
    NormalityTable

    References
    ----------
    docs/methods.md sec. 8; Shapiro & Wilk (1965); Deutsch, Dror & Roth (TACL 2021) sec. 3.
    """
    subset, measures = _validate_normality(dataset, measures, pool, systems, alpha)
    rows = []
    for name in measures:
        kind = subset.measure(name).kind
        effective = pool if kind == "metric" else "judged"
        matrix = subset.matrix(name, pool=effective)
        means = system_means(matrix)
        system_p = _shapiro_p(means)
        valid = ~np.isnan(matrix)
        count = valid.sum(axis=0)
        high = np.where(valid, matrix, -np.inf).max(axis=0, initial=-np.inf)
        low = np.where(valid, matrix, np.inf).min(axis=0, initial=np.inf)
        testable = (count >= 3) & (high > low)
        pvalues = []
        complete = testable & (count == matrix.shape[0])
        if complete.any():
            pvalues.append(np.atleast_1d(stats.shapiro(matrix[:, complete], axis=0).pvalue))
        for j in np.flatnonzero(testable & ~complete):
            pvalues.append(np.array([_shapiro_p(matrix[:, j])]))
        pvalues = np.concatenate(pvalues) if pvalues else np.array([])
        tested = int(testable.sum())
        share = float((pvalues < alpha).mean()) if tested else math.nan
        rows.append(NormalityRow(name, kind, effective, system_p, int((~np.isnan(means)).sum()), share, tested,
                                 int(matrix.shape[1] - tested)))
    return NormalityTable(tuple(rows), float(alpha), systems or "")
