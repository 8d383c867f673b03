"""The judges leaderboard: every judge's agreement with people, its interval, cluster and chance level, and the
human ceiling, from one call (what a leaderboard page or report shows, all from the same resamples).

References: docs/methods.md sec. 18.2-18.4 and 18.7.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from metaeval_core._frames import ToFrame
from metaeval_core.analyses.practice.clusters import SignificanceClusters
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges._kernel import Invalid, OrderMode, Statistic, Ties
from metaeval_core.judges.agreement import AgreementTable, chance_baseline, human_ceiling, judge_agreement
from metaeval_core.judges.biases import Estimate
from metaeval_core.judges.compare import JudgeComparison, compare_judges
from metaeval_core.judges.model import NoMajority, PairwiseData
from metaeval_core.stats.significance import Correction, Family

RowKind = Literal["judge", "annotator", "human-ceiling"]


@dataclass(frozen=True)
class LeaderboardRow:
    """One row: a judge (``cluster`` its significance rank, ``chance_*`` its chance level and permutation
    p-value), an annotator against the others' majority, or their mean, the human ceiling (``cluster`` None)."""

    name: str
    kind: str
    estimate: float
    low: float
    high: float
    n_items: int
    n_invalid: int
    cluster: int | None
    chance_mean: float
    chance_low: float
    chance_high: float
    chance_pvalue: float

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "estimate": kern.num(self.estimate), "low": kern.num(self.low),
                "high": kern.num(self.high), "n_items": self.n_items, "n_invalid": self.n_invalid,
                "cluster": self.cluster, "chance_mean": kern.num(self.chance_mean),
                "chance_low": kern.num(self.chance_low), "chance_high": kern.num(self.chance_high),
                "chance_pvalue": kern.num(self.chance_pvalue)}


@dataclass(frozen=True)
class JudgeLeaderboard(ToFrame):
    """Judges best first (by estimate, undefined last), then the annotators and the human ceiling.

    ``agreement`` is the judges' :class:`~metaeval_core.judges.agreement.AgreementTable`, ``comparison`` the
    tests and clusters (None with one judge), ``ceiling`` the annotators' table (None without two
    annotators or when the reference is not the human majority) and ``ceiling_mean`` their mean with the
    interval of the mean over the same resamples. The conventions are the agreement table's.
    """

    rows: tuple[LeaderboardRow, ...]
    agreement: AgreementTable
    comparison: JudgeComparison | None
    ceiling: AgreementTable | None
    ceiling_mean: Estimate | None
    statistic: str
    reference: str
    order: str
    ties: str
    invalid: str
    confidence_level: float
    n_resamples: int
    alpha: float
    correction: str

    @property
    def clusters(self) -> SignificanceClusters | None:
        return None if self.comparison is None else self.comparison.clusters

    def to_records(self) -> list[dict]:
        common = {"statistic": self.statistic, "reference": self.reference, "order": self.order, "ties": self.ties,
                  "invalid": self.invalid, "confidence_level": self.confidence_level,
                  "n_resamples": self.n_resamples}
        return [{**row.to_dict(), **common} for row in self.rows]


def judge_leaderboard(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    statistic: Statistic = "accuracy",
    reference: str = "auto",
    order: OrderMode = "original",
    ties: Ties = "three-class",
    invalid: Invalid = "wrong",
    no_majority: NoMajority = "tie",
    correction: Correction = "holm",
    family: Family = "row",
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> JudgeLeaderboard:
    """Agreement with intervals, significance clusters, chance levels and the human ceiling in one result.

    Every part uses one seed (``rng``): the agreement bootstrap, the judge-vs-judge permutations (two-sided,
    ``correction`` within ``family``), the chance permutations and the ceiling's bootstrap. The human ceiling
    (sec. 18.3) is added when the reference is the human majority and there are at least two annotators; it
    uses the same statistic and conventions in the original order (people see one order) and leaves out items
    where the other annotators have no majority.

    References
    ----------
    docs/methods.md sec. 18.2-18.4 and 18.7.
    """
    seed = kern.seed_of(rng)
    options = dict(statistic=statistic, reference=reference, order=order, ties=ties, invalid=invalid,
                   no_majority=no_majority)
    resampling = dict(n_resamples=n_resamples, rng=seed, batch=batch)
    table = judge_agreement(data, judges=judges, confidence_level=confidence_level, **options, **resampling)
    names = list(table.judges)
    chance = chance_baseline(data, judges=names, confidence_level=confidence_level, **options, **resampling)
    comparison = (compare_judges(data, judges=names, correction=correction, family=family, alpha=alpha, **options,
                                 **resampling) if len(names) >= 2 else None)
    rank = {} if comparison is None else dict(zip(comparison.clusters.metrics, comparison.clusters.rank.tolist()))
    order_rows = sorted(range(len(names)), key=lambda j: (not np.isfinite(table.rows[j].estimate),
                                                          -np.nan_to_num(table.rows[j].estimate), j))
    rows = [LeaderboardRow(name=names[j], kind="judge", estimate=table.rows[j].estimate, low=table.rows[j].low,
                           high=table.rows[j].high, n_items=table.rows[j].n_items, n_invalid=table.rows[j].n_invalid,
                           cluster=rank.get(names[j], 1 if comparison is None else None),
                           chance_mean=chance[j].mean, chance_low=chance[j].low, chance_high=chance[j].high,
                           chance_pvalue=chance[j].pvalue)
            for j in order_rows]
    ceiling = mean = None
    nan = float("nan")
    wants_majority = reference == "majority" or (reference == "auto" and not data.golds)
    if wants_majority and len(data.humans) >= 2:
        ceiling = human_ceiling(data, statistic=statistic, ties=ties, invalid=invalid,
                                confidence_level=confidence_level, return_distribution=True, **resampling)
        for row in ceiling.rows:
            rows.append(LeaderboardRow(name=row.judge, kind="annotator", estimate=row.estimate, low=row.low,
                                       high=row.high, n_items=row.n_items, n_invalid=row.n_invalid, cluster=None,
                                       chance_mean=nan, chance_low=nan, chance_high=nan, chance_pvalue=nan))
        resampled = ceiling.distribution.mean(axis=1)
        low, high, defined = kern.percentile_bounds(resampled[:, None], table.confidence_level)
        mean = Estimate(float(np.mean(ceiling.estimates)), float(low[0]), float(high[0]),
                        int(min(r.n_items for r in ceiling.rows)), int(defined[0]))
        rows.append(LeaderboardRow(name="human ceiling", kind="human-ceiling", estimate=mean.estimate, low=mean.low,
                                   high=mean.high, n_items=mean.n, n_invalid=0, cluster=None, chance_mean=nan,
                                   chance_low=nan, chance_high=nan, chance_pvalue=nan))
    return JudgeLeaderboard(rows=tuple(rows), agreement=table, comparison=comparison, ceiling=ceiling,
                            ceiling_mean=mean, statistic=statistic, reference=table.reference, order=order,
                            ties=table.ties, invalid=table.invalid, confidence_level=table.confidence_level,
                            n_resamples=table.n_resamples, alpha=float(alpha), correction=correction)


__all__ = ["JudgeLeaderboard", "LeaderboardRow", "judge_leaderboard"]
