"""WMT-style significance clusters: metrics no test separates share a rank.

References: docs/methods.md sec. 10.3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from metaeval_core.stats.significance import PairwiseTable
from metaeval_core.analyses.practice._common import finite_or_none


# ============================================================================================
# Significance clusters
# ============================================================================================
@dataclass(frozen=True)
class SignificanceClusters:
    """Metrics grouped into ranks not significantly different (WMT-style clusters).

    ``metrics`` are sorted by ``estimates`` (descending; undefined last), ``rank[k]`` is the
    1-based cluster of ``metrics[k]`` and ``clusters`` lists each cluster's metrics.
    """

    metrics: tuple[str, ...]
    estimates: np.ndarray
    rank: np.ndarray
    clusters: tuple[tuple[str, ...], ...]
    use_corrected: bool
    alpha: float
    method: str
    correction: str

    def to_records(self) -> list[dict]:
        return [{"metric": m, "estimate": finite_or_none(e), "rank": int(r)}
                for m, e, r in zip(self.metrics, self.estimates, self.rank)]

    def to_dict(self) -> dict:
        return {"use_corrected": self.use_corrected, "alpha": self.alpha, "method": self.method,
                "correction": self.correction, "clusters": [list(c) for c in self.clusters],
                "metrics": self.to_records()}


def _clusters_iv(table, use_corrected, estimates):
    if not isinstance(table, PairwiseTable):
        raise TypeError(f"table must be a PairwiseTable (from compare_all_pairs); got {type(table).__name__}")
    if not isinstance(use_corrected, (bool, np.bool_)):
        raise TypeError(f"use_corrected must be True or False; got {use_corrected!r}")
    k = len(table.metrics)
    values = table.estimates if estimates is None else estimates
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("estimates must be numbers, one per metric of the table") from None
    if values.shape != (k,):
        raise ValueError(f"estimates must hold one value per metric ({k}); got shape {values.shape}")
    significant = np.asarray(table.significant_corrected if use_corrected else table.significant, dtype=bool)
    if significant.shape != (k, k):
        raise ValueError(f"table's significance matrix must be {k} x {k}; got shape {significant.shape}")
    return values, significant


def significance_clusters(
    table: PairwiseTable, *, use_corrected: bool = True, estimates: Sequence[float] | None = None
) -> SignificanceClusters:
    """Group metrics into ranks not significantly different, as the WMT metrics tasks do.

    Sort the metrics by their correlation with the humans, best first (undefined estimates
    last, ties kept in table order). The best metric opens cluster 1. Walking down the list,
    a metric joins the current cluster unless some metric already in that cluster
    significantly beats it (``significant[c, m]``: row ``c`` better than column ``m``); then
    it opens the next cluster. So every cluster's first metric is significantly worse than
    some metric of the cluster above, and no metric is significantly beaten by a metric of
    its own cluster. (Metrics of different clusters need not be significantly different
    from each other; clusters are ranks, not a partition into equivalence classes.)

    Parameters
    ----------
    table : PairwiseTable
        From :func:`metaeval_core.stats.significance.compare_all_pairs`; with a two-sided test a
        significant cell means "different", and the higher estimate says which is better.
    use_corrected : bool, default True
        Use the multiple-comparison-corrected significance (``significant_corrected``);
        False uses the raw ``pvalue < alpha``.
    estimates : sequence of float, optional
        Per-metric correlations to sort by (default: ``table.estimates``).

    Returns
    -------
    SignificanceClusters

    References
    ----------
    docs/methods.md sec. 10 and 3; Freitag et al. (2022, 2023), Results of the WMT Metrics Shared
    Task (significance clusters); Deutsch, Dror & Roth (TACL 2021) sec. 6.
    """
    values, significant = _clusters_iv(table, use_corrected, estimates)
    order = sorted(range(len(values)), key=lambda i: (not np.isfinite(values[i]), -values[i] if np.isfinite(values[i])
                                                      else 0.0, i))
    rank = np.zeros(len(order), dtype=np.int64)
    clusters: list[list[int]] = []
    for pos, m in enumerate(order):
        if not clusters or any(significant[c, m] for c in clusters[-1]):
            clusters.append([m])
        else:
            clusters[-1].append(m)
        rank[pos] = len(clusters)
    names = tuple(table.metrics[i] for i in order)
    return SignificanceClusters(
        metrics=names, estimates=values[order], rank=rank,
        clusters=tuple(tuple(table.metrics[i] for i in c) for c in clusters), use_corrected=use_corrected,
        alpha=float(table.alpha), method=table.method, correction=table.correction,
    )
