"""Normality of score distributions (Shapiro-Wilk), which Fisher's interval and Williams' test assume.

References: docs/methods.md sec. 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from metaeval_core._checks import check_choice, check_probability
from metaeval_core.stats.correlation import system_means
from metaeval_core.data.dataset import POOLS, Dataset, Pool
from metaeval_core.analyses.papers._common import check_measures_exist, check_names, float_or_none, select_systems


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
                "system_p": float_or_none(self.system_p), "system_n": self.system_n,
                "input_share": float_or_none(self.input_share), "input_tested": self.input_tested,
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
    subset = select_systems(dataset, systems)
    measures = check_names(measures, "measures")
    check_measures_exist(subset, measures)
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
