"""REALSumm analyses (Bhandari et al., EMNLP 2020): top-k systems and pairwise comparison F1.

References: docs/methods.md sec. 7.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.random import Generator

from metaeval_core._checks import as_generator, check_choice, check_int, check_probability
from metaeval_core.stats.coefficients import Coefficient, coefficient_function, validate_coefficient, require_point_coefficient
from metaeval_core.stats.correlation import system_means
from metaeval_core.data.dataset import POOLS, Dataset, DatasetError, Pool
from metaeval_core.analyses.papers._common import check_human_measure, check_measures_exist, check_names, float_or_none, select_systems


# Resamples processed at once by the pairwise bootstrap when ``batch`` is None.
_DEFAULT_BATCH = 250
# Two resampled means closer than this (relative) are a tie, not a win: floating-point noise.
_TIE_RTOL = 1e-10


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
            {"metric": m, "k": int(k), "estimate": float_or_none(self.estimate[q, t])}
            for q, m in enumerate(self.metrics)
            for t, k in enumerate(self.ks)
        ]


def _validate_topk(dataset, metrics, human, coefficient, pool, systems, min_k) -> tuple[Dataset, tuple[str, ...]]:
    subset = select_systems(dataset, systems)
    metrics = check_names(metrics, "metrics")
    check_measures_exist(subset, metrics)
    check_human_measure(subset, human)
    validate_coefficient(coefficient)
    require_point_coefficient(coefficient, "the top-k analysis")
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
        return [{"metric": m, "f1": float_or_none(self.f1[q])} for q, m in enumerate(self.metrics)]

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
    subset = select_systems(dataset, systems)
    metrics = check_names(metrics, "metrics")
    check_measures_exist(subset, metrics)
    check_human_measure(subset, human)
    check_int(n_resamples, "n_resamples", minimum=1, wording="at least")
    check_probability(confidence, "confidence")
    if batch is not None:
        check_int(batch, "batch", minimum=1, wording="at least")
    # Only systems the human measure rates: a pair without human scores has no human label to agree with (it
    # would count as 'no difference'; WMT22 zh-en's 4 systems without MQM made 63 of 153 such pairs).
    subset = subset.rated_by(human)
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
