"""The items behind a correlation: the system pairs, inputs or cells its value is made of, with their texts.

A correlation at the system level is a statement about system pairs (Kendall's tau-b counts the pairs the metric
orders like people and unlike them), at the input level an average of one coefficient per input, at the global
level one coefficient over every (system, input) cell. This module lists those items so a reader can go from the
number to what the metric got wrong:

* :func:`pair_examples` - every system pair with both systems' metric and human means and differences, whether
  the metric orders it unlike people (``discordant``), the coefficient's credit for it (``agrees``), and the
  humans' paired permutation p-value for the pair; discordant pairs first. ``lower``/``upper`` keep the pairs of
  an rSYS-Delta band or decile cell (:mod:`metaeval_core.stats.pairs`). With soft pairwise accuracy each pair also
  carries SPA's two one-sided p-values (metric and humans) and their gap, the largest gaps first: the gaps average
  to ``1 - SPA``. On a dataset of system scores (an mt-metrics-eval test set read with ``mtme_level='sys'``, as
  WMT's system-level tasks read it) the pairs and means are those system scores.
* :func:`input_examples` - each input's own coefficient (the values the input level averages), lowest first,
  with every system's metric and human score on it.
* :func:`cell_examples` - the (system, input) cells with the largest gap between their metric rank and their
  human rank (Spearman's ``d``: without ties ``rho = 1 - 6 sum d^2 / (n (n^2 - 1))``).
* :func:`compare_examples` - a significance cell (metric X vs metric Y): the items where the two metrics differ
  most (pairs one orders right and the other wrong; inputs by the difference of their coefficients; cells by the
  difference of their rank gaps).

Every result keeps the dataset's texts (:func:`metaeval_core.data.texts.example_texts`) when it has them, and
``to_records(top=...)`` puts them beside each item.

References: docs/methods.md sec. 19.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Sequence, get_args

import numpy as np
from scipy import stats

from metaeval_core._checks import check_choice, check_probability
from metaeval_core.data.checks import check_dataset, check_human
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import Dataset, Pool
from metaeval_core.data.mtme import SYSTEM_INPUT
from metaeval_core.data.texts import ExampleTexts
from metaeval_core.stats.coefficients import (
    COEFFICIENTS,
    Coefficient,
    POINT_COEFFICIENTS,
    coefficient_function,
    kendall_counts_from_signs,
    tie_calibrated_accuracy,
)
from metaeval_core.stats.correlation import correlate, correlation_inputs, nanmean_last
from metaeval_core.stats.exact import grid_scale
from metaeval_core.stats.pairs import dataset_means, system_pairs
from metaeval_core.stats.tiecal import input_tie_calibrated
from metaeval_core.wording import finite_or_none

ExampleLevel = Literal["system", "input", "global"]
EXAMPLE_LEVELS: tuple[str, ...] = get_args(ExampleLevel)
# Human paired permutation p-values (docs/methods.md sec. 11.3) are computed up to this many pair x input
# products (WMT22 zh-en: 120 pairs x 1,875 inputs = 225,000, ~0.2 s); beyond it they are left out (None).
_SIGNIFICANCE_MAX_PRODUCTS = 2_000_000
_TEXT_FIELDS = ("source", "reference")
SPA = "soft-pairwise-accuracy"


_plain = finite_or_none


def _texts_for(texts: ExampleTexts | None, systems: Sequence[str], inputs: Sequence[str]):
    """Row and column indices of ``systems`` and ``inputs`` in ``texts`` (-1 where it has none)."""
    if texts is None:
        return None, None
    row = {s: i for i, s in enumerate(texts.systems)}
    col = {j: k for k, j in enumerate(texts.inputs)}
    return (np.array([row.get(s, -1) for s in systems], dtype=np.int64),
            np.array([col.get(j, -1) for j in inputs], dtype=np.int64))


def _input_texts(texts: ExampleTexts | None, column: int) -> dict:
    if texts is None or column < 0:
        return {}
    return {"source": texts.sources[column] or None, "reference": texts.references[column] or None}


def _output_text(texts: ExampleTexts | None, row: int, column: int) -> str | None:
    if texts is None or row < 0 or column < 0:
        return None
    return texts.output(row, column)


def _validate(dataset, metric, human, level, coefficient, pool, texts) -> None:
    check_dataset(dataset)
    check_human(dataset, human)
    dataset.measure(metric)
    check_choice(level, "level", EXAMPLE_LEVELS)
    if level != "system" and coefficient == SPA:
        raise ValueError(f"coefficient {SPA!r} is a system-level statistic (of system pairs); use level 'system', "
                         f"or one of {', '.join(POINT_COEFFICIENTS)} at the {level} level")
    check_choice(coefficient, "coefficient", COEFFICIENTS if level == "system" else POINT_COEFFICIENTS)
    check_choice(pool, "pool", ("judged", "all"))
    if texts is not None and not isinstance(texts, ExampleTexts):
        raise TypeError(f"texts must be ExampleTexts or None; got {type(texts).__name__}")


def _judged_inputs(dataset: Dataset) -> tuple[str, ...]:
    return tuple(j for j, keep in zip(dataset.inputs, dataset.judged) if keep)


# ---------------------------------------------------------------------------------------------------------
# System level: pairs
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PairExamples(ToFrame):
    """Every system pair behind a system-level value, discordant pairs first.

    Arrays are aligned, one entry per pair (systems with both a metric and a human mean). ``metric_difference``
    and ``human_difference`` are ``a - b`` in the measures' units; ``discordant`` is True when the metric and the
    humans order the pair in opposite directions (with tie-calibrated accuracy a metric difference within
    ``epsilon`` is a tie); ``agrees`` is the coefficient's credit (Kendall, Pearson, Spearman: ordered the same
    way; the pairwise accuracies: the same way, or tied by both); ``tie`` names a tie in the metric, the humans or
    both. ``human_p_value`` is the two-sided paired permutation p-value of the humans' difference (SPA's
    convention, docs/methods.md sec. 11.3), None where not computed; ``significant`` compares it with ``alpha``.

    With soft pairwise accuracy, ``p_metric`` and ``p_human`` are SPA's one-sided permutation p-values that
    ``system_a`` beats ``system_b`` under the metric and under the humans (the very values SPA is computed from,
    :func:`metaeval_core.stats.spa.pairwise_pvalues`), ``p_gap`` their absolute difference and ``p_gap_share`` its
    share of ``1 - SPA`` (``p_gap / n_spa_pairs``): the shares of the pairs with a gap sum to ``1 - estimate``. The
    pairs come largest gap first. Other coefficients leave the three None.

    References: docs/methods.md sec. 19.1.
    """

    dataset: str
    metric: str
    human: str
    coefficient: str
    estimate: float
    pool: str
    systems: str
    system_a: tuple[str, ...]
    system_b: tuple[str, ...]
    metric_a: np.ndarray
    metric_b: np.ndarray
    human_a: np.ndarray
    human_b: np.ndarray
    discordant: np.ndarray
    agrees: np.ndarray
    tie: tuple[str, ...]
    human_p_value: np.ndarray
    alpha: float = 0.05
    epsilon: float = math.nan
    lower: float = 0.0
    upper: float = math.inf
    total_pairs: int = 0
    texts: ExampleTexts | None = field(default=None, repr=False)
    p_metric: np.ndarray | None = None
    p_human: np.ndarray | None = None
    scores: str = "segments"

    @property
    def n_pairs(self) -> int:
        return len(self.system_a)

    @property
    def p_gap(self) -> np.ndarray | None:
        """``|p_metric - p_human|`` per pair (NaN where a p-value is undefined); None without SPA."""
        if self.p_metric is None or self.p_human is None:
            return None
        return np.abs(self.p_metric - self.p_human)

    @property
    def n_spa_pairs(self) -> int:
        """The pairs SPA averages over (both p-values defined); 0 without SPA."""
        gap = self.p_gap
        return 0 if gap is None else int(np.count_nonzero(~np.isnan(gap)))

    @property
    def n_discordant(self) -> int:
        return int(np.count_nonzero(self.discordant))

    @property
    def n_concordant(self) -> int:
        both_ordered = np.array([t == "" for t in self.tie], dtype=bool)
        return int(np.count_nonzero(both_ordered & ~self.discordant))

    @property
    def metric_difference(self) -> np.ndarray:
        return self.metric_a - self.metric_b

    @property
    def human_difference(self) -> np.ndarray:
        return self.human_a - self.human_b

    @property
    def significant(self) -> np.ndarray:
        """True/False where the p-value was computed, else NaN (as floats: 1.0, 0.0, NaN)."""
        p = self.human_p_value
        return np.where(np.isnan(p), np.nan, (p <= self.alpha).astype(np.float64))

    def to_records(self, top: int | None = None) -> list[dict]:
        out = []
        dx, dz = self.metric_difference, self.human_difference
        gap, n_spa = self.p_gap, self.n_spa_pairs
        for k in range(self.n_pairs if top is None else min(top, self.n_pairs)):
            p = self.human_p_value[k]
            out.append({
                "system_a": self.system_a[k], "system_b": self.system_b[k],
                "discordant": bool(self.discordant[k]), "agrees": bool(self.agrees[k]), "tie": self.tie[k],
                "metric_a": _plain(self.metric_a[k]), "metric_b": _plain(self.metric_b[k]),
                "metric_difference": _plain(dx[k]),
                "human_a": _plain(self.human_a[k]), "human_b": _plain(self.human_b[k]),
                "human_difference": _plain(dz[k]),
                "human_p_value": _plain(p), "significant": None if np.isnan(p) else bool(p <= self.alpha),
            })
            if gap is not None:
                out[-1].update(p_metric=_plain(self.p_metric[k]), p_human=_plain(self.p_human[k]),
                               p_gap=_plain(gap[k]), p_gap_share=_plain(gap[k] / max(n_spa, 1)))
        return out

    def summary(self) -> dict:
        return {"dataset": self.dataset, "metric": self.metric, "human": self.human, "level": "system",
                "coefficient": self.coefficient, "estimate": _plain(self.estimate), "pool": self.pool,
                "n_pairs": self.n_pairs, "n_discordant": self.n_discordant, "n_concordant": self.n_concordant,
                "n_ties": int(sum(t != "" for t in self.tie)), "lower": _plain(self.lower),
                "upper": _plain(self.upper), "total_pairs": self.total_pairs, "epsilon": _plain(self.epsilon),
                "scores": self.scores,
                **({"n_spa_pairs": self.n_spa_pairs,
                    "mean_p_gap": _plain(np.nanmean(self.p_gap)) if self.n_spa_pairs else None}
                   if self.p_gap is not None else {})}


def _two_sided_pvalues(human: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    from metaeval_core.stats.spa import pairwise_pvalues

    n, m = human.shape
    out = np.full(first.size, np.nan)
    if n < 2 or n * (n - 1) // 2 * m > _SIGNIFICANCE_MAX_PRODUCTS:
        return out
    greater, defined = pairwise_pvalues(human)
    smaller, _ = pairwise_pvalues(-human)
    two_sided = np.where(defined, np.minimum(1.0, 2.0 * np.minimum(greater, smaller)), np.nan)
    # pair_indices enumerates i < i' row by row, as np.triu_indices does.
    index = first * n - first * (first + 1) // 2 + (second - first - 1)
    return two_sided[index]


def pair_examples(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    coefficient: Coefficient = "kendall",
    pool: Pool = "judged",
    systems: str | None = None,
    lower: float = 0.0,
    upper: float = math.inf,
    significance: bool = True,
    alpha: float = 0.05,
    texts: ExampleTexts | None = None,
) -> PairExamples:
    """The system pairs behind a system-level correlation, discordant pairs first.

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
    coefficient : {'pearson', 'spearman', 'kendall', 'pairwise-accuracy', 'tie-calibrated-accuracy', 'pdp',
                   'soft-pairwise-accuracy'}
        Decides ``agrees`` (and, for the tie-calibrated accuracy, which metric differences are ties). With
        ``'soft-pairwise-accuracy'`` every pair carries SPA's p-values and their gap, largest gap first
        (:class:`PairExamples`); ``agrees`` is then whether the means are ordered alike.
    pool : {'judged', 'all'}
    systems : str, optional
        A system subset such as ``"type=abs"``.
    lower, upper : float
        Keep the pairs with ``lower <= |metric difference| <= upper`` (an rSYS-Delta band or decile cell,
        metric units, inclusive); by default every pair.
    significance : bool
        Compute the humans' paired permutation p-value of each pair (skipped on very large matrices).
    alpha : float
        Level of ``significant``.
    texts : ExampleTexts, optional
        Kept on the result (pairs have no single text; a caller lists a pair's inputs with :func:`cell_examples`).

    Returns
    -------
    PairExamples
        Sorted: discordant first, then by the size of the humans' difference (largest first); with soft pairwise
        accuracy by the gap between the two p-values (largest first, undefined last). With Kendall's tau-b,
        ``n_discordant`` is its ``Q`` and ``n_concordant`` its ``P``.

    Notes
    -----
    A dataset of system scores (one pseudo-input per system: an mt-metrics-eval test set read with
    ``mtme_level='sys'``, the ``.sys.score`` files WMT's system-level tasks read) gives the pairs of those scores;
    its humans' p-values are left out (a permutation test needs the inputs).

    References
    ----------
    docs/methods.md sec. 19.1; Deutsch, Dror & Roth (NAACL 2022) sec. 4.
    """
    _validate(dataset, metric, human, "system", coefficient, pool, texts)
    alpha = check_probability(alpha, "alpha")
    lower, upper = float(lower), float(upper)
    if not (0.0 <= lower <= upper):
        raise ValueError(f"lower and upper must satisfy 0 <= lower <= upper; got {lower} and {upper}")
    x, z, subset = dataset_means(dataset, metric, human, pool=pool, systems=systems)
    pairs = system_pairs(x, z)
    first, second, dx, dz = pairs.first, pairs.second, pairs.dx, pairs.dz
    epsilon = math.nan
    metric_tied = dx == 0
    if coefficient == "tie-calibrated-accuracy":
        valid = ~(np.isnan(x) | np.isnan(z))
        epsilon = float(tie_calibrated_accuracy(x[valid], z[valid]).epsilon)
        metric_tied = np.abs(dx) <= epsilon
    human_tied = dz == 0
    sx = np.where(metric_tied, 0, np.sign(dx)).astype(np.int8)
    sz = np.sign(dz).astype(np.int8)
    discordant = sx * sz < 0
    if coefficient in ("pairwise-accuracy", "tie-calibrated-accuracy"):
        agrees = (sx == sz)
    else:
        agrees = (sx * sz) > 0
    tie = np.select([metric_tied & human_tied, metric_tied, human_tied], ["both", "metric", "human"], "")
    # Computed first: correlate refuses a soft-pairwise-accuracy that would take minutes, with the reason.
    estimate = correlate(dataset, metric, human, level="system", coefficient=coefficient, pool=pool,
                         systems=systems).estimate
    x_matrix, z_matrix = correlation_inputs(subset, metric, human, level="system", pool=pool)
    system_scores = z_matrix.shape[-1] == 1 and subset.inputs == (SYSTEM_INPUT,)
    if significance and not system_scores:
        p_values = _two_sided_pvalues(z_matrix, first, second)
    else:
        p_values = np.full(first.size, np.nan)
    p_metric = p_human = None
    if coefficient == SPA:
        p_metric, p_human = _spa_pvalues(x_matrix, z_matrix, first, second)
    keep = (np.abs(dx) >= lower) & (np.abs(dx) <= upper)
    if p_metric is None:
        order = np.lexsort((-np.abs(dz), ~discordant))
    else:
        gap = np.abs(p_metric - p_human)
        order = np.lexsort((-np.abs(dz), -np.nan_to_num(gap, nan=-1.0)))
    order = order[keep[order]]
    names = np.array(subset.systems, dtype=object)
    return PairExamples(
        dataset=dataset.id, metric=metric, human=human, coefficient=coefficient, estimate=float(estimate),
        pool=pool, systems=systems or "",
        system_a=tuple(names[first[order]]), system_b=tuple(names[second[order]]),
        metric_a=x[first[order]], metric_b=x[second[order]], human_a=z[first[order]], human_b=z[second[order]],
        discordant=discordant[order], agrees=agrees[order], tie=tuple(str(t) for t in tie[order]),
        human_p_value=p_values[order], alpha=alpha, epsilon=epsilon, lower=lower, upper=upper,
        total_pairs=pairs.n_pairs, texts=texts,
        p_metric=None if p_metric is None else p_metric[order], p_human=None if p_human is None else p_human[order],
        scores="system" if system_scores else "segments",
    )


def _spa_pvalues(metric: np.ndarray, human: np.ndarray, first: np.ndarray, second: np.ndarray):
    """SPA's one-sided p-values that system ``first`` beats ``second`` (``first < second``), metric and humans:
    those :func:`metaeval_core.stats.spa.soft_pairwise_accuracy` averages the gaps of (NaN where undefined)."""
    from metaeval_core.stats.spa import pairwise_pvalues

    n = human.shape[0]
    index = first * n - first * (first + 1) // 2 + (second - first - 1)  # pair_indices' row-major order
    return pairwise_pvalues(metric)[0][index], pairwise_pvalues(human)[0][index]


def kendall_pair_counts(examples: PairExamples):
    """Kendall's P, Q, T, U of the listed pairs (to check them against the level's tau-b)."""
    dx, dz = examples.metric_difference, examples.human_difference
    return kendall_counts_from_signs(np.sign(dx).astype(np.int8), np.sign(dz).astype(np.int8))


# ---------------------------------------------------------------------------------------------------------
# Input level: one coefficient per input
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class InputExamples(ToFrame):
    """Each input's own coefficient (the values the input level averages), lowest first; undefined ones last.

    ``values[k]`` is input ``inputs[k]``'s coefficient across the systems (NaN: undefined, left out of the mean);
    ``metric_scores[k]`` and ``human_scores[k]`` are every system's scores on it (``systems`` order, measure
    units). ``estimate`` is the input-level value: the mean of the defined ``values``.

    References: docs/methods.md sec. 19.2.
    """

    dataset: str
    metric: str
    human: str
    coefficient: str
    estimate: float
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    values: np.ndarray
    metric_scores: np.ndarray
    human_scores: np.ndarray
    epsilon: float = math.nan
    texts: ExampleTexts | None = field(default=None, repr=False)

    @property
    def n_defined(self) -> int:
        return int(np.count_nonzero(~np.isnan(self.values)))

    def to_records(self, top: int | None = None, *, texts: bool = True) -> list[dict]:
        rows, cols = _texts_for(self.texts if texts else None, self.systems, self.inputs)
        out = []
        for k in range(len(self.inputs) if top is None else min(top, len(self.inputs))):
            record = {"input": self.inputs[k], "value": _plain(self.values[k]), "rank": k + 1}
            if cols is not None:
                record.update(_input_texts(self.texts, int(cols[k])))
            record["systems"] = [
                {"system": s, "metric": _plain(self.metric_scores[k, i]), "human": _plain(self.human_scores[k, i]),
                 **({"output": _output_text(self.texts, int(rows[i]), int(cols[k]))} if cols is not None else {})}
                for i, s in enumerate(self.systems)
                if not (np.isnan(self.metric_scores[k, i]) and np.isnan(self.human_scores[k, i]))
            ]
            out.append(record)
        return out

    def summary(self) -> dict:
        return {"dataset": self.dataset, "metric": self.metric, "human": self.human, "level": "input",
                "coefficient": self.coefficient, "estimate": _plain(self.estimate), "n_inputs": len(self.inputs),
                "n_defined": self.n_defined, "epsilon": _plain(self.epsilon)}


def _input_values(x: np.ndarray, z: np.ndarray, coefficient: str) -> tuple[np.ndarray, float]:
    """Per-input coefficient across systems; with tie calibration, each input's accuracy at the shared epsilon."""
    if coefficient != "tie-calibrated-accuracy":
        return coefficient_function(coefficient)(x.T, z.T), math.nan
    epsilon = float(input_tie_calibrated(x, z).epsilon)
    n = x.shape[0]
    first, second = np.triu_indices(n, 1)
    dx = x[first] - x[second]
    dz = z[first] - z[second]
    valid = ~(np.isnan(dx) | np.isnan(dz))
    if not np.isfinite(epsilon):
        return np.full(x.shape[1], np.nan), epsilon
    tied = np.abs(dx) <= epsilon
    agree = np.where(tied, dz == 0, (np.sign(dx) == np.sign(dz)) & (dz != 0)) & valid
    count = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, agree.sum(axis=0) / np.maximum(count, 1), np.nan), epsilon


def input_examples(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    coefficient: Coefficient = "kendall",
    systems: str | None = None,
    texts: ExampleTexts | None = None,
) -> InputExamples:
    """Each judged input's own coefficient across the systems, lowest first.

    The values are exactly those the input level averages (:func:`metaeval_core.stats.correlation.correlate`
    with ``level='input'``): their mean over the defined inputs is the input-level value. With the tie-calibrated
    accuracy every input uses the level's one epsilon (docs/methods.md sec. 11.2).

    References
    ----------
    docs/methods.md sec. 19.2.
    """
    _validate(dataset, metric, human, "input", coefficient, "judged", texts)
    subset = dataset.select_systems(systems).rated_by(human)
    x, z = correlation_inputs(subset, metric, human, level="input", pool="judged")
    values, epsilon = _input_values(x, z, coefficient)
    order = np.lexsort((values, np.isnan(values)))
    inputs = np.array(_judged_inputs(subset), dtype=object)
    metric_units = x / grid_scale(subset, metric)
    human_units = z / grid_scale(subset, human)
    return InputExamples(
        dataset=dataset.id, metric=metric, human=human, coefficient=coefficient,
        estimate=float(nanmean_last(values)), systems=tuple(subset.systems), inputs=tuple(inputs[order]),
        values=values[order], metric_scores=metric_units[:, order].T, human_scores=human_units[:, order].T,
        epsilon=epsilon / grid_scale(subset, metric) if np.isfinite(epsilon) else math.nan, texts=texts,
    )


# ---------------------------------------------------------------------------------------------------------
# Global level: cells with the largest rank gaps
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CellExamples(ToFrame):
    """The (system, input) cells of a global-level value, largest gap between metric and human rank first.

    Ranks are average ranks (1 = lowest score) over the cells holding both scores; ``rank_gap`` is the metric's
    rank minus the humans' (positive: the metric ranks the cell higher than people do). Without ties Spearman's
    rho over the cells is ``1 - 6 sum rank_gap^2 / (n (n^2 - 1))``, so the first cells are those that cost the
    most.

    References: docs/methods.md sec. 19.3.
    """

    dataset: str
    metric: str
    human: str
    coefficient: str
    estimate: float
    system: tuple[str, ...]
    input: tuple[str, ...]
    metric_score: np.ndarray
    human_score: np.ndarray
    metric_rank: np.ndarray
    human_rank: np.ndarray
    n_cells: int
    texts: ExampleTexts | None = field(default=None, repr=False)

    @property
    def rank_gap(self) -> np.ndarray:
        return self.metric_rank - self.human_rank

    def to_records(self, top: int | None = None, *, texts: bool = True) -> list[dict]:
        rows, cols = _texts_for(self.texts if texts else None, self.system, self.input)
        gap = self.rank_gap
        out = []
        for k in range(len(self.system) if top is None else min(top, len(self.system))):
            record = {"system": self.system[k], "input": self.input[k], "metric": _plain(self.metric_score[k]),
                      "human": _plain(self.human_score[k]), "metric_rank": _plain(self.metric_rank[k]),
                      "human_rank": _plain(self.human_rank[k]), "rank_gap": _plain(gap[k])}
            if cols is not None:
                record.update(_input_texts(self.texts, int(cols[k])))
                record["output"] = _output_text(self.texts, int(rows[k]), int(cols[k]))
            out.append(record)
        return out

    def summary(self) -> dict:
        return {"dataset": self.dataset, "metric": self.metric, "human": self.human, "level": "global",
                "coefficient": self.coefficient, "estimate": _plain(self.estimate), "n_cells": self.n_cells}


def cell_examples(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    coefficient: Coefficient = "kendall",
    systems: str | None = None,
    texts: ExampleTexts | None = None,
) -> CellExamples:
    """Every (system, input) cell behind a global-level value, largest rank gap first.

    References
    ----------
    docs/methods.md sec. 19.3.
    """
    _validate(dataset, metric, human, "global", coefficient, "judged", texts)
    subset = dataset.select_systems(systems).rated_by(human)
    x, z = correlation_inputs(subset, metric, human, level="global", pool="judged")
    valid = ~(np.isnan(x) | np.isnan(z))
    rows, cols = np.nonzero(valid)
    xs, zs = x[rows, cols], z[rows, cols]
    rx, rz = stats.rankdata(xs), stats.rankdata(zs)
    order = np.lexsort((rows, -np.abs(rx - rz)))
    inputs = np.array(_judged_inputs(subset), dtype=object)
    names = np.array(subset.systems, dtype=object)
    estimate = correlate(dataset, metric, human, level="global", coefficient=coefficient, systems=systems).estimate
    return CellExamples(
        dataset=dataset.id, metric=metric, human=human, coefficient=coefficient, estimate=float(estimate),
        system=tuple(names[rows[order]]), input=tuple(inputs[cols[order]]),
        metric_score=xs[order] / grid_scale(subset, metric), human_score=zs[order] / grid_scale(subset, human),
        metric_rank=rx[order], human_rank=rz[order], n_cells=int(xs.size), texts=texts,
    )


def examples(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    level: ExampleLevel = "system",
    coefficient: Coefficient = "kendall",
    pool: Pool = "judged",
    systems: str | None = None,
    texts: ExampleTexts | None = None,
    significance: bool = True,
) -> PairExamples | InputExamples | CellExamples:
    """The items behind ``correlate(dataset, metric, human, level=level, coefficient=coefficient)``.

    System level: :func:`pair_examples`; input level: :func:`input_examples`; global level: :func:`cell_examples`.

    References
    ----------
    docs/methods.md sec. 19.
    """
    check_choice(level, "level", EXAMPLE_LEVELS)
    if level == "system":
        return pair_examples(dataset, metric, human, coefficient=coefficient, pool=pool, systems=systems,
                             texts=texts, significance=significance)
    if level == "input":
        return input_examples(dataset, metric, human, coefficient=coefficient, systems=systems, texts=texts)
    return cell_examples(dataset, metric, human, coefficient=coefficient, systems=systems, texts=texts)


# ---------------------------------------------------------------------------------------------------------
# A significance cell: two metrics, the items where they differ
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ComparisonExamples(ToFrame):
    """The items where metric X and metric Y differ most, against one human measure (a significance cell).

    ``records`` are per item (a system pair, an input or a cell) with both metrics' numbers and ``difference``:
    system level, the pairs one metric orders like people and the other does not (``x_agrees``, ``y_agrees``);
    input level, ``x_value - y_value`` of each input's coefficient, largest magnitude first; global level,
    ``|y rank gap| - |x rank gap|`` per cell (positive: X is closer to people there), largest magnitude first.

    References: docs/methods.md sec. 19.4.
    """

    dataset: str
    metric_x: str
    metric_y: str
    human: str
    level: str
    coefficient: str
    estimate_x: float
    estimate_y: float
    records: tuple[dict, ...]

    def to_records(self, top: int | None = None) -> list[dict]:
        return [dict(r) for r in (self.records if top is None else self.records[:top])]

    def summary(self) -> dict:
        return {"dataset": self.dataset, "metric_x": self.metric_x, "metric_y": self.metric_y, "human": self.human,
                "level": self.level, "coefficient": self.coefficient, "estimate_x": _plain(self.estimate_x),
                "estimate_y": _plain(self.estimate_y), "n_items": len(self.records)}


def compare_examples(
    dataset: Dataset,
    metric_x: str,
    metric_y: str,
    human: str,
    *,
    level: ExampleLevel = "system",
    coefficient: Coefficient = "kendall",
    pool: Pool = "judged",
    systems: str | None = None,
    texts: ExampleTexts | None = None,
) -> ComparisonExamples:
    """The items behind a comparison of two metrics (a cell of the significance table).

    References
    ----------
    docs/methods.md sec. 19.4.
    """
    check_choice(level, "level", EXAMPLE_LEVELS)
    if level == "system":
        a = pair_examples(dataset, metric_x, human, coefficient=coefficient, pool=pool, systems=systems,
                          significance=False)
        b = pair_examples(dataset, metric_y, human, coefficient=coefficient, pool=pool, systems=systems,
                          significance=False)
        other = {(r["system_a"], r["system_b"]): r for r in b.to_records()}
        records = []
        for r in a.to_records():
            s = other.get((r["system_a"], r["system_b"]))
            if s is None or r["agrees"] == s["agrees"]:
                continue
            records.append({"system_a": r["system_a"], "system_b": r["system_b"],
                            "human_difference": r["human_difference"], "x_difference": r["metric_difference"],
                            "y_difference": s["metric_difference"], "x_agrees": r["agrees"],
                            "y_agrees": s["agrees"]})
        records.sort(key=lambda r: -abs(r["human_difference"] or 0.0))
        return ComparisonExamples(dataset.id, metric_x, metric_y, human, level, coefficient, a.estimate, b.estimate,
                                  tuple(records))
    if level == "input":
        a = input_examples(dataset, metric_x, human, coefficient=coefficient, systems=systems, texts=texts)
        b = input_examples(dataset, metric_y, human, coefficient=coefficient, systems=systems, texts=texts)
        y_value = dict(zip(b.inputs, b.values))
        x_records = {r["input"]: r for r in a.to_records()}
        records = []
        for name, value in zip(a.inputs, a.values):
            other = y_value.get(name, np.nan)
            difference = value - other
            if np.isnan(difference):
                continue
            record = {"input": name, "x_value": _plain(value), "y_value": _plain(other),
                      "difference": _plain(difference)}
            record.update({k: x_records[name][k] for k in _TEXT_FIELDS if k in x_records[name]})
            records.append(record)
        records.sort(key=lambda r: -abs(r["difference"]))
        return ComparisonExamples(dataset.id, metric_x, metric_y, human, level, coefficient, a.estimate, b.estimate,
                                  tuple(records))
    a = cell_examples(dataset, metric_x, human, coefficient=coefficient, systems=systems, texts=texts)
    b = cell_examples(dataset, metric_y, human, coefficient=coefficient, systems=systems)
    y_gap = {(s, j): g for s, j, g in zip(b.system, b.input, b.rank_gap)}
    records = []
    for k, (s, j, g) in enumerate(zip(a.system, a.input, a.rank_gap)):
        other = y_gap.get((s, j))
        if other is None:
            continue
        records.append({"system": s, "input": j, "x_rank_gap": _plain(g), "y_rank_gap": _plain(other),
                        "difference": _plain(abs(other) - abs(g)), "_k": k})
    records.sort(key=lambda r: -abs(r["difference"]))
    records = records[:1000]
    rows, cols = _texts_for(texts, [r["system"] for r in records], [r["input"] for r in records])
    for i, r in enumerate(records):
        r.pop("_k")
        if cols is not None:
            r.update(_input_texts(texts, int(cols[i])))
            r["output"] = _output_text(texts, int(rows[i]), int(cols[i]))
    return ComparisonExamples(dataset.id, metric_x, metric_y, human, level, coefficient, a.estimate, b.estimate,
                              tuple(records))
