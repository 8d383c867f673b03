"""The judges leaderboard: one result with every judge's agreement with people, its interval, cluster and chance
level, a chance row, and the human ceiling under one stated rule. The CLI (``metaeval judges --view
leaderboard``) and the Judges leaderboard page both render this object; neither builds its own.

References: docs/methods.md sec. 18.2-18.4 and 18.7.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from metaeval_core._frames import ToFrame
from metaeval_core.analyses.practice.clusters import SignificanceClusters
from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges._kernel import Invalid, OrderMode, Statistic, Ties
from metaeval_core.judges.agreement import (
    AgreementTable, JudgeChanceBaseline, chance_baseline, human_ceiling, judge_agreement,
)
from metaeval_core.judges.biases import Estimate
from metaeval_core.judges.compare import JudgeComparison, compare_judges
from metaeval_core.judges.model import NoMajority, PairwiseData
from metaeval_core.stats.significance import Alternative, Correction, Family, correct_pvalues

RowKind = Literal["judge", "chance", "annotator", "human-ceiling"]
ROW_KINDS: tuple[str, ...] = ("judge", "chance", "annotator", "human-ceiling")
CHANCE_ROW = "chance (verdicts permuted)"
CEILING_ROW = "human ceiling"
#: How the chance p-values of the judges of one leaderboard are corrected together (sec. 18.4).
CHANCE_CORRECTION = "holm"

#: The one ceiling rule (sec. 18.3), stated wherever a ceiling is shown.
CEILING_RULE = ("each annotator scored against the strict majority of the other annotators (with one other "
                "annotator: their plain agreement; items where the others have no strict majority are left out), "
                "in the original order, with the judges' statistic and conventions; the ceiling is the mean of "
                "the annotators' values, each on its own items")


@dataclass(frozen=True)
class JudgeLeaderboardRow:
    """One row of the leaderboard.

    ``kind`` is ``'judge'`` (``cluster`` its significance rank, None when its value is undefined; ``chance_*``
    its chance level, one-sided permutation p-value and that p-value corrected over the board's judges),
    ``'chance'`` (the judges' chance levels summarised: mean of their means, lowest low to highest high),
    ``'annotator'`` (one person against the others' majority) or ``'human-ceiling'`` (the annotators' mean).
    ``n_items`` is None where the row's items differ between its parts (the chance row of judges counted on
    different items, the ceiling of annotators each on their own items). ``n_ties`` counts the rater's own tie
    verdicts on its items (not the reference's).
    """

    name: str
    kind: str
    estimate: float
    low: float
    high: float
    n_items: int | None
    n_invalid: int
    n_ties: int
    cluster: int | None
    chance_mean: float
    chance_low: float
    chance_high: float
    chance_pvalue: float
    chance_pvalue_corrected: float

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "estimate": kern.num(self.estimate), "low": kern.num(self.low),
                "high": kern.num(self.high), "n_items": self.n_items, "n_invalid": self.n_invalid,
                "n_ties": self.n_ties, "cluster": self.cluster, "chance_mean": kern.num(self.chance_mean),
                "chance_low": kern.num(self.chance_low), "chance_high": kern.num(self.chance_high),
                "chance_pvalue": kern.num(self.chance_pvalue),
                "chance_pvalue_corrected": kern.num(self.chance_pvalue_corrected)}


@dataclass(frozen=True)
class JudgeLeaderboard(ToFrame):
    """Judges in cluster order (best first; within a cluster by estimate; undefined last), a chance row, then
    the annotators and the human ceiling.

    ``agreement`` is the judges' :class:`~metaeval_core.judges.agreement.AgreementTable`, ``chance`` their
    :class:`~metaeval_core.judges.agreement.JudgeChanceBaseline` (one-sided permutation p-values, also corrected
    with ``chance_correction`` over the judges in the rows), ``comparison`` the judge-vs-judge tests and
    clusters (None with fewer than two defined judges), ``ceiling`` the annotators' table and ``ceiling_mean``
    their mean with the interval of the mean over the same resamples (None when there is no ceiling, and
    ``no_ceiling`` says why), ``ceiling_rule`` the rule applied. ``warnings`` are sentences a reader must see
    (judges scored on different items, judges undefined under the order asked).
    """

    rows: tuple[JudgeLeaderboardRow, ...]
    agreement: AgreementTable
    chance: tuple[JudgeChanceBaseline, ...]
    comparison: JudgeComparison | None
    ceiling: AgreementTable | None
    ceiling_mean: Estimate | None
    ceiling_rule: str
    no_ceiling: str
    warnings: tuple[str, ...]
    statistic: str
    reference: str
    order: str
    ties: str
    invalid: str
    confidence_level: float
    n_resamples: int
    alpha: float
    alternative: str
    correction: str
    chance_correction: str
    n_items: int

    @property
    def clusters(self) -> SignificanceClusters | None:
        return None if self.comparison is None else self.comparison.clusters

    def judge_rows(self) -> tuple[JudgeLeaderboardRow, ...]:
        return tuple(r for r in self.rows if r.kind == "judge")

    def kind_rows(self, kind: str) -> tuple[JudgeLeaderboardRow, ...]:
        return tuple(r for r in self.rows if r.kind == kind)

    def to_records(self) -> list[dict]:
        common = {"statistic": self.statistic, "reference": self.reference, "order": self.order, "ties": self.ties,
                  "invalid": self.invalid, "confidence_level": self.confidence_level,
                  "n_resamples": self.n_resamples}
        return [{**row.to_dict(), **common} for row in self.rows]


def _coverage_warning(data: PairwiseData, names: list[str], table: AgreementTable) -> str | None:
    """A sentence when the judges are scored on different items (LLMBar's "All items": the Rating judges cover
    the LLMBar sets only), naming each group's pair sets; None when every judge has the same items."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for name in names:
        covered = data.covered(name)
        sets = tuple(data.pair_sets[k] for k in np.unique(data.pair_set[covered]))
        groups.setdefault(sets, []).append(name)
    if len(groups) < 2:
        return None
    n_of = {r.judge: r.n_items for r in table.rows}
    parts = []
    for sets, judges in sorted(groups.items(), key=lambda g: -len(g[1])):
        counts = sorted({n_of[j] for j in judges})
        span = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
        who = judges[0] if len(judges) == 1 else f"{len(judges)} judges"
        parts.append(f"{who} on {span} items ({', '.join(sets)})")
    return ("The judges are scored on different items, so their values are not comparable across these groups: "
            + "; ".join(parts) + ". Choose one pair set to rank them on the same items; the judge-vs-judge tests "
            "and clusters use each pair's common items.")


def _no_ceiling(data: PairwiseData, reference: str) -> str:
    if reference == "gold" or (reference == "auto" and data.golds) or reference in data.golds:
        return ("No human ceiling: the reference is a gold label; a ceiling compares each annotator with the "
                "majority of the others, so it is shown only when the judges are scored against the human majority.")
    if reference not in ("majority", "auto"):
        return (f"No human ceiling: the reference is one annotator ({reference}); a ceiling compares each annotator "
                "with the majority of the others, so it is shown only when the judges are scored against the human "
                "majority.")
    return f"No human ceiling: it needs at least two human annotators; these items have {len(data.humans)}."


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
    alternative: Alternative = "two-sided",
    correction: Correction = "holm",
    family: Family = "row",
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> JudgeLeaderboard:
    """Agreement with intervals, significance clusters, chance levels and the human ceiling in one result.

    Every part uses one seed (``rng``): the agreement bootstrap, the judge-vs-judge permutations
    (``alternative``, ``correction`` within ``family``), the chance permutations and the ceiling's bootstrap.
    Judges whose value is undefined (no verdict in the order asked) get no cluster and are named in a warning;
    when no judge is defined the call is refused (``order='average'`` on one-order data). The human ceiling
    follows :data:`CEILING_RULE` (sec. 18.3) and is added only when the reference is the human majority of at
    least two annotators.

    Raises
    ------
    ValueError
        When no judge has a verdict in the presentation order(s) asked.

    References
    ----------
    docs/methods.md sec. 18.2-18.4 and 18.7.
    """
    # the chance permutations are the dearest resampling here: priced first, the resamples a refusal names fit all
    judges_priced = len(getattr(data, "judges", ())) if judges is None else len(judges)
    if isinstance(data, PairwiseData) and isinstance(n_resamples, (int, np.integer)) and not isinstance(
            n_resamples, bool):  # anything else: judge_agreement names the problem
        # the permutations' numbers, and the agreement bootstrap's drawn with them (a resample of each)
        kern.price_draws("permutations", int(n_resamples), data.n_items,
                         data.n_items * (max(judges_priced, 1) * 2 + kern.DRAW_COST["items"]))
    seed = kern.seed_of(rng)
    options = dict(statistic=statistic, reference=reference, order=order, ties=ties, invalid=invalid,
                   no_majority=no_majority)
    resampling = dict(n_resamples=n_resamples, rng=seed, batch=batch)
    table = judge_agreement(data, judges=judges, confidence_level=confidence_level, **options, **resampling)
    names = list(table.judges)
    in_order = kern.judges_in_order(data, names, order)
    warnings = []
    left_out = [j for j in names if j not in in_order]
    if left_out:
        warnings.append(f"{len(left_out)} judge(s) have no verdicts in the order asked ({order}) and no value: "
                        + ", ".join(left_out) + ".")
    chance = chance_baseline(data, judges=names, confidence_level=confidence_level, **options, **resampling)
    defined = [j for j, row in zip(names, table.rows) if np.isfinite(row.estimate)]
    comparison = (compare_judges(data, judges=defined, alternative=alternative, correction=correction, family=family,
                                 alpha=alpha, **options, **resampling) if len(defined) >= 2 else None)
    rank = ({defined[0]: 1} if len(defined) == 1 else {} if comparison is None
            else dict(zip(comparison.clusters.metrics, (int(r) for r in comparison.clusters.rank))))
    pvalues = np.array([c.pvalue for c in chance], dtype=float)
    corrected = np.full(len(names), np.nan)
    finite = np.isfinite(pvalues)
    if finite.any():
        corrected[finite] = correct_pvalues(pvalues[finite], method=CHANCE_CORRECTION)
    order_rows = sorted(range(len(names)), key=lambda j: (
        names[j] not in rank, rank.get(names[j], 0), -np.nan_to_num(table.rows[j].estimate, nan=-np.inf), j))
    rows = []
    for j in order_rows:
        r = table.rows[j]
        rows.append(JudgeLeaderboardRow(
            name=names[j], kind="judge", estimate=r.estimate, low=r.low, high=r.high, n_items=r.n_items,
            n_invalid=r.n_invalid, n_ties=r.n_judge_ties, cluster=rank.get(names[j]), chance_mean=chance[j].mean,
            chance_low=chance[j].low, chance_high=chance[j].high, chance_pvalue=chance[j].pvalue,
            chance_pvalue_corrected=float(corrected[j])))
    nan = float("nan")
    shown = [c for c in chance if np.isfinite(c.mean)]
    if shown:
        counts = {table.row(c.judge).n_items for c in shown}
        rows.append(JudgeLeaderboardRow(
            name=CHANCE_ROW, kind="chance", estimate=float(np.mean([c.mean for c in shown])),
            low=float(min(c.low for c in shown)), high=float(max(c.high for c in shown)),
            n_items=counts.pop() if len(counts) == 1 else None, n_invalid=0, n_ties=0, cluster=None,
            chance_mean=nan, chance_low=nan, chance_high=nan, chance_pvalue=nan, chance_pvalue_corrected=nan))
    coverage = _coverage_warning(data, defined, table)
    if coverage:
        warnings.append(coverage)
    ceiling = mean = None
    wants_majority = reference == "majority" or (reference == "auto" and not data.golds)
    no_ceiling = ""
    if wants_majority and len(data.humans) >= 2:
        ceiling = human_ceiling(data, statistic=statistic, ties=ties, invalid=invalid, no_majority="drop",
                                confidence_level=confidence_level, return_distribution=True, **resampling)
        for row in ceiling.rows:
            rows.append(JudgeLeaderboardRow(
                name=row.judge, kind="annotator", estimate=row.estimate, low=row.low, high=row.high,
                n_items=row.n_items, n_invalid=row.n_invalid, n_ties=row.n_judge_ties, cluster=None,
                chance_mean=nan, chance_low=nan, chance_high=nan, chance_pvalue=nan, chance_pvalue_corrected=nan))
        resampled = ceiling.distribution.mean(axis=1)
        low, high, n_defined = kern.percentile_bounds(resampled[:, None], table.confidence_level)
        counts = {r.n_items for r in ceiling.rows}
        mean = Estimate(float(np.mean(ceiling.estimates)), float(low[0]), float(high[0]),
                        int(min(counts)), int(n_defined[0]))
        rows.append(JudgeLeaderboardRow(
            name=CEILING_ROW, kind="human-ceiling", estimate=mean.estimate, low=mean.low, high=mean.high,
            n_items=counts.pop() if len(counts) == 1 else None, n_invalid=0, n_ties=0, cluster=None,
            chance_mean=nan, chance_low=nan, chance_high=nan, chance_pvalue=nan, chance_pvalue_corrected=nan))
    else:
        no_ceiling = _no_ceiling(data, reference)
    return JudgeLeaderboard(
        rows=tuple(rows), agreement=table, chance=tuple(chance), comparison=comparison, ceiling=ceiling,
        ceiling_mean=mean, ceiling_rule=CEILING_RULE if ceiling is not None else "", no_ceiling=no_ceiling,
        warnings=tuple(warnings), statistic=statistic, reference=table.reference, order=order, ties=table.ties,
        invalid=table.invalid, confidence_level=table.confidence_level, n_resamples=table.n_resamples,
        alpha=float(alpha), alternative=alternative, correction=correction, chance_correction=CHANCE_CORRECTION,
        n_items=data.n_items)


__all__ = ["CEILING_RULE", "CHANCE_ROW", "CEILING_ROW", "JudgeLeaderboard", "JudgeLeaderboardRow", "ROW_KINDS",
           "judge_leaderboard"]
