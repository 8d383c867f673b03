"""SummEval analyses (Fabbri et al., TACL 2021): the metric-by-metric correlation matrix and annotator
agreement (expert vs crowd, Krippendorff's alpha).

References: docs/methods.md sec. 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np
from scipy import stats

from metaeval_core._checks import check_choice
from metaeval_core.stats.coefficients import Coefficient, coefficient_function, validate_coefficient, require_point_coefficient
from metaeval_core.stats.correlation import Level, correlate_matrices, system_means, validate_level
from metaeval_core.data.dataset import POOLS, Dataset, DatasetError, Pool
from metaeval_core.analyses.papers._common import check_measures_exist, check_names, float_or_none, select_systems


MatrixOrder = Literal["given", "clustered"]
MATRIX_ORDERS: tuple[str, ...] = get_args(MatrixOrder)


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
            {"row": a, "column": b, "estimate": float_or_none(self.matrix[i, j]), "n": int(self.n[i, j])}
            for i, a in enumerate(self.measures)
            for j, b in enumerate(self.measures)
        ]

    def to_dict(self) -> dict:
        return {
            "measures": list(self.measures),
            "matrix": [[float_or_none(v) for v in row] for row in self.matrix],
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
    subset = select_systems(dataset, systems)
    measures = check_names(measures, "measures", minimum=2)
    check_measures_exist(subset, measures)
    validate_level(level)
    validate_coefficient(coefficient)
    require_point_coefficient(coefficient, "the correlation matrix of measures")
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
def alpha_note(output: str = "summary") -> str:
    """How alpha's units and coders are formed, naming the dataset's scored ``output`` (summary, story, ...)."""
    return (
        f"Krippendorff's alpha (interval) treats every {output} (system x judged input) as a unit and the "
        "annotator slots as coders. Alpha depends only on the multiset of values within each unit (its "
        "coincidence matrix), not on which coder gave which value, so it is well defined even where slot i "
        "is not the same person across units (crowd workers who differ from one unit to the next). dimension "
        f"'all' pools the dimensions by concatenating their units (one unit per {output} and dimension), for one "
        "alpha per annotator group as in Fabbri et al. (2021); between-dimension differences in level then count "
        "as between-unit variation."
    )


ALPHA_NOTE = alpha_note()
# The group of a human measure whose id has no GROUP. prefix (HANNA's 'Relevance', an upload's 'fluency'): its
# criteria share one group of raters rather than each becoming a group of its own.
DEFAULT_GROUP = "annotators"


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
        return {"group": self.group, "dimension": self.dimension, "alpha": float_or_none(self.alpha),
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
                "level": self.level, "coefficient": self.coefficient, "estimate": float_or_none(self.estimate),
                "n": self.n, "n_undefined": self.n_undefined}


@dataclass(frozen=True)
class AnnotatorAgreement:
    """Inter-annotator agreement per group and dimension, and group-mean correlations.

    Human measures with per-annotator scores are read as ``GROUP.DIMENSION``
    (``expert.relevance``); a measure id without a dot is a dimension of the group
    :data:`DEFAULT_GROUP` (HANNA's six criteria are six dimensions rated by one
    group, not six groups).
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
    return (group, dimension) if dot else (DEFAULT_GROUP, name)


def krippendorff_interval(units: np.ndarray) -> tuple[float, int, int]:
    """Interval alpha of a (coders x units) matrix, with unit counts.

    Returns ``(alpha, n_pairable_units, n_values_in_them)``; alpha is NaN when
    fewer than two units are pairable or there is no variation at all.

    With the interval metric every sum of squared differences has a closed form in per-unit sums:
    ``alpha = 1 - (n - 1) sum_u D_u / (m_u - 1) / D``, ``D_u = 2 (m_u S2_u - S1_u^2)`` over a unit's ``m_u``
    values and ``D = 2 (n S2 - S1^2)`` over all ``n`` pairable values (Krippendorff 2011, sec. on the interval
    metric), O(values). The ``krippendorff`` package's coincidence matrix is values x distinct values: 2.7 s per
    call on WMT23 en-de's MQM raters, whose scores take thousands of distinct values. The same alpha as the
    package's (tests/core/test_analyses_summeval.py checks both it and a pairwise loop).

    References: docs/methods.md sec. 8.2.
    """
    units = np.asarray(units, dtype=np.float64)
    counts = (~np.isnan(units)).sum(axis=0)
    pairable = counts >= 2
    n_units, n_values = int(pairable.sum()), int(counts[pairable].sum())
    data = units[:, pairable]
    if n_units < 2 or np.unique(data[~np.isnan(data)]).size < 2:
        return math.nan, n_units, n_values
    valid = ~np.isnan(data)
    centred = np.where(valid, data - data[valid].mean(), 0.0)  # differences do not move; sums stay small
    m = counts[pairable].astype(np.float64)
    s1, s2 = centred.sum(axis=0), (centred ** 2).sum(axis=0)
    within = (2.0 * (m * s2 - s1 ** 2) / (m - 1.0)).sum()
    n, total1, total2 = m.sum(), s1.sum(), s2.sum()
    overall = 2.0 * (n * total2 - total1 ** 2)
    return float(1.0 - (n - 1.0) * within / overall), n_units, n_values


def _validate_annotators(dataset, groups, levels, coefficients, systems):
    subset = select_systems(dataset, systems)
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
        require_point_coefficient(coefficient, "annotator agreement")
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
    return AnnotatorAgreement(tuple(alphas), tuple(correlations), systems or "", alpha_note(subset.vocabulary.output))
