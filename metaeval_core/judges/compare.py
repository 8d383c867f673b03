"""Is judge X closer to people than judge Y? Paired permutation tests, corrections and significance clusters.

For a pair of judges on the items both judged, ``delta = s(X) - s(Y)`` (accuracy, kappa or alpha against the
same reference, under the same conventions). Under H0 the two judges are exchangeable on every item, so a
permutation swaps their verdicts (both orders together) on each item with probability 1/2. Every statistic is a
function of sums of per-item columns, so the swapped sums are ``S_X + M @ (c_Y - c_X)`` with ``M`` the
resamples' swap bits: one matrix product per pair, the same swaps for every pair (drawn in fixed blocks from
child streams of one seed: ``batch`` does not change them). ``p = (1 + #{delta_s >= delta}) / (1 + k)`` (``|.|`` two-sided).
The p-values of all ordered pairs are corrected with the project's Bonferroni/Holm/BH
(:func:`metaeval_core.stats.significance.correct_table`) and the judges grouped into WMT-style significance
clusters (:func:`metaeval_core.analyses.practice.significance_clusters`).

References: docs/methods.md sec. 18.7 and sec. 3 (corrections), sec. 10.3 (clusters); Good (2005);
Deutsch, Dror & Roth (TACL 2021) (permutation tests between metrics).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from metaeval_core._checks import check_choice, check_probability
from metaeval_core._frames import ToFrame
from metaeval_core.analyses.practice.clusters import SignificanceClusters, significance_clusters
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges._kernel import Invalid, OrderMode, Statistic, Ties
from metaeval_core.judges.agreement import _setup
from metaeval_core.judges.model import MISSING, NoMajority, PairwiseData
from metaeval_core.stats.significance import (
    ALTERNATIVES, CORRECTIONS, FAMILIES, Alternative, Correction, Family, PairwiseTable, _count_pvalue, correct_pvalues, correct_table,
)

PERMUTATION_METHOD = "paired permutation over items"


@dataclass(frozen=True)
class JudgeComparison(ToFrame):
    """All pairwise tests between judges and their significance clusters.

    ``table`` is a :class:`~metaeval_core.stats.significance.PairwiseTable` whose "metrics" are the judges
    (``delta[i, j] = s(judge i) - s(judge j)`` on the items both judged, ``pvalue[i, j]`` tests "row i
    better than column j", or "different" when two-sided); ``clusters`` the judges in ranks no corrected test
    separates; ``n_common[i, j]`` the items both judged. The conventions are named.
    """

    table: PairwiseTable
    clusters: SignificanceClusters
    n_common: np.ndarray
    reference: str
    statistic: str
    order: str
    ties: str
    invalid: str

    @property
    def judges(self) -> tuple[str, ...]:
        return self.table.metrics

    def to_records(self) -> list[dict]:
        records = self.table.to_records()
        index = {name: k for k, name in enumerate(self.table.metrics)}
        for record in records:
            record.update(n_common=int(self.n_common[index[record["x"]], index[record["y"]]]),
                          statistic=self.statistic, order=self.order, ties=self.ties, invalid=self.invalid,
                          reference=self.reference)
        return records

    def to_dict(self) -> dict:
        return {"reference": self.reference, "statistic": self.statistic, "order": self.order, "ties": self.ties,
                "invalid": self.invalid, "method": self.table.method, "alternative": self.table.alternative,
                "correction": self.table.correction, "family": self.table.family, "alpha": self.table.alpha,
                "n_resamples": self.table.n_resamples, "pairs": self.to_records(),
                "clusters": self.clusters.to_dict()}


def draw_swaps(rng: np.random.Generator | int | None, n_resamples: int, n: int) -> np.ndarray:
    """All (k, n) swap bits (1: the two judges' verdicts on the item trade places), as :func:`compare_judges`
    draws them (block by block from fixed streams, :func:`metaeval_core.judges._kernel.draw_chunks`).

    References
    ----------
    docs/methods.md sec. 18.2 and 18.7.
    """
    return np.concatenate([d for _, d in kern.draw_chunks("swaps", rng, n_resamples, n, n, None)], axis=0)


class _Swaps:
    """The permutations' swap bits, chunk by chunk, the same for every judge pair: kept in memory when they are
    few (as bytes), drawn again from the same seed for each pair otherwise."""

    _KEEP = 64_000_000  # swap bits kept (1 byte each)

    def __init__(self, seed: int, n_resamples: int, n: int, per_resample: int, batch: int | None) -> None:
        self.args = ("swaps", seed, n_resamples, n, per_resample, batch)
        self.kept = None
        if n_resamples * n <= self._KEEP:
            self.kept = [(sl, d.astype(np.uint8)) for sl, d in kern.draw_chunks(*self.args)]

    def chunks(self):
        if self.kept is None:
            yield from kern.draw_chunks(*self.args)
        else:
            for sl, bits in self.kept:
                yield sl, bits.astype(np.float64)


# Python work per judge pair (slicing, sums, the p-values), in operations of the cost model.
_PER_PAIR = 20_000


def _price(n_judges: int, n_items: int, n_resamples: int, width: int) -> None:
    """Refuse before it runs a comparison over the cost budget: judges^2 / 2 pairs, each ``n_resamples``
    permutations of the items' swap bits (drawn, then one product with the (items, width) differences)."""
    pairs = n_judges * (n_judges - 1) // 2
    per_pair = n_resamples * n_items * (width + 3) + _PER_PAIR
    fits = int((kern.MAX_OPERATIONS / pairs - _PER_PAIR) // (n_items * (width + 3))) if pairs else 0
    most = next((j for j in range(n_judges, 1, -1) if j * (j - 1) // 2 * per_pair <= kern.MAX_OPERATIONS), 1)
    options = ([f"n_resamples={fits:,}"] if fits >= 100 else []) + (
        [f"at most {most} judges"] if most >= 2 else ["a subset of the items or one pair set"])
    kern.check_cost(f"the judge-vs-judge tests of {n_judges:,} judges ({pairs:,} pairs, {n_items:,} items, "
                    f"{n_resamples:,} permutations)", pairs * per_pair, "lighter: " + ", ".join(options))


# Judge pairs whose (items, columns) differences are stacked into one product with the swap bits: ~32 MB of floats.
_GROUP_CELLS = 4_000_000


def _pair_nulls(columns, present: np.ndarray, chunk: list[tuple[int, int]], swaps: _Swaps, stat,
                n_resamples: int) -> tuple[np.ndarray, list[float], np.ndarray]:
    """The permutation nulls (k, G), observed differences and common item counts of the judge pairs ``chunk``.

    Every pair's swapped sums are ``S_X + bits @ (c_Y - c_X)`` on its common items; the pairs' differences are
    stacked so that a block of swaps is one matrix product for all of them (a product per pair was most of LLMBar's
    leaderboard). The columns are 0/1 indicators or halves (order 'average'), so every sum is exact in float64 and
    the same in any summation order: the nulls equal the product per pair bit for bit.
    """
    parts, si, sj, common = [], [], [], []
    for i, j in chunk:
        both = (present[:, i] & present[:, j]).astype(np.float64)[:, None]
        ci, cj = kern.judge_columns(columns, i) * both, kern.judge_columns(columns, j) * both
        si.append(ci.sum(axis=0))
        sj.append(cj.sum(axis=0))
        parts.append(cj - ci)
        common.append(both.sum())
    si_, sj_ = np.stack(si), np.stack(sj)  # (G, C)
    diff = np.stack(parts, axis=1)  # (n, G, C)
    n, G, C = diff.shape
    flat = diff.reshape(n, G * C)
    observed = [float(a - b) for a, b in zip(stat(si_), stat(sj_))]
    null = np.empty((n_resamples, G))
    for sl, bits in swaps.chunks():
        moved = (bits @ flat).reshape(-1, G, C)
        null[sl] = stat(si_ + moved) - stat(sj_ - moved)
    return null, observed, np.array(common)


def compare_judges(
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
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> JudgeComparison:
    """Paired permutation tests between every two judges, corrected, and the judges' significance clusters.

    Parameters
    ----------
    data, judges, statistic, reference, order, ties, invalid, no_majority
        As :func:`~metaeval_core.judges.judge_agreement`; at least two judges.
    alternative : {'two-sided', 'greater'}
        ``'greater'`` tests "row judge better than column judge" for each ordered pair.
    correction : {'bonferroni', 'holm', 'bh', 'none'}
    family : {'row', 'table', 'none'}
        Which p-values are corrected together: each row judge's ``J - 1`` tests (default, as the metrics'
        tables), all pairs (two-sided: each unordered pair once), or none. A corrected p-value can be
        significant only when ``n_resamples`` is at least about ``m / alpha`` (``m`` tests in the family): the
        smallest permutation p-value is ``1 / (1 + n_resamples)``.
    alpha : float
        The significance level of the corrected and uncorrected cells and of the clusters.
    n_resamples, rng, batch
        Permutations (each item's two verdicts swapped with probability 1/2), drawn up front from ``rng``.

    Returns
    -------
    JudgeComparison

    References
    ----------
    docs/methods.md sec. 18.7, sec. 3 and sec. 10.3.
    """
    check_choice(alternative, "alternative", ALTERNATIVES)
    check_choice(correction, "correction", CORRECTIONS)
    check_choice(family, "family", FAMILIES)
    alpha = check_probability(alpha, "alpha")
    s = _setup(data, judges, statistic, reference, order, ties, invalid, no_majority, None, n_resamples, batch)
    n_resamples = s.k
    if len(s.names) < 2:
        raise ValueError(f"judges: comparing needs at least two judges; got {len(s.names)}")
    stat = lambda sums: kern.statistic_from_sums(statistic, sums)  # noqa: E731
    columns = kern.columns_for(statistic, s.judge, s.refs, order, s.conv)  # (n, J, C)
    slots = list(kern.order_slots(order))
    present = (s.judge[:, :, slots] != MISSING).all(axis=2) & (s.refs != MISSING)  # (n, J)
    J = len(s.names)
    _price(J, data.n_items, n_resamples, kern.judge_columns(columns, 0).shape[-1])
    swaps = _Swaps(kern.seed_of(rng), n_resamples, data.n_items,
                   data.n_items + kern.judge_columns(columns, 0).shape[-1], s.batch)
    delta = np.full((J, J), np.nan)
    pvalue = np.full((J, J), np.nan)
    n_defined = np.zeros((J, J), dtype=np.int64)
    n_common = np.zeros((J, J), dtype=np.int64)
    pairs = [(i, j) for i in range(J) for j in range(i + 1, J)]
    width = kern.judge_columns(columns, 0).shape[-1]
    group = max(1, _GROUP_CELLS // max(data.n_items * width, 1))
    for start in range(0, len(pairs), group):
        chunk = pairs[start:start + group]
        null, observed, common = _pair_nulls(columns, present, chunk, swaps, stat, n_resamples)
        for g, (i, j) in enumerate(chunk):
            n_common[i, j] = n_common[j, i] = int(common[g])
            delta[i, j], delta[j, i] = observed[g], -observed[g]
            pvalue[i, j], n_defined[i, j] = _count_pvalue(null[:, g], observed[g], alternative)
            pvalue[j, i], n_defined[j, i] = _count_pvalue(-null[:, g], -observed[g], alternative)
    if alternative == "two-sided" and family == "table":
        # p[i, j] == p[j, i]: one test per unordered pair, corrected once and mirrored.
        upper = np.triu_indices(J, 1)
        corrected = np.full_like(pvalue, np.nan)
        corrected[upper] = correct_pvalues(pvalue[upper], method=correction)
        corrected.T[upper] = corrected[upper]
    else:
        corrected = correct_table(pvalue, correction=correction, family=family)
    estimates = stat(columns.sum(axis=0))
    with np.errstate(invalid="ignore"):
        table = PairwiseTable(
            metrics=tuple(s.names), human=s.what, estimates=estimates, delta=delta, pvalue=pvalue,
            pvalue_corrected=corrected, significant=np.nan_to_num(pvalue, nan=1.0) < alpha,
            significant_corrected=np.nan_to_num(corrected, nan=1.0) < alpha, alpha=alpha, correction=correction,
            family=family, method=PERMUTATION_METHOD, alternative=alternative, level="item", coefficient=statistic,
            n_resamples=n_resamples, n_defined=n_defined)
    return JudgeComparison(table=table, clusters=significance_clusters(table, use_corrected=True),
                           n_common=n_common, reference=s.what, statistic=statistic, order=order, ties=s.conv.ties,
                           invalid=s.conv.invalid)


__all__ = ["JudgeComparison", "PERMUTATION_METHOD", "compare_judges", "draw_swaps"]
