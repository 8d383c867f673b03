"""The metrics leaderboard: one result, computed once, rendered by the Overview, the CLI and the reports alike.

Each metric's correlation with the humans, its percentile-bootstrap interval and its significance cluster (metrics
no test separates share a cluster), then the rows a reader compares the metrics with: chance (a metric whose scores
are randomly permuted; one row, or one per distinct baseline) and the human ceiling (each annotator against the
mean of the others). Which rows come first and when a ceiling is shown are stated in the result's ``ordering`` and
``ceiling_rule`` fields, so every surface says the same.

References
----------
docs/methods.md sec. 10 (clusters), sec. 12 (chance baselines) and sec. 14 (human ceilings).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import Dataset, Pool
from metaeval_core.stats.coefficients import Coefficient
from metaeval_core.stats.correlation import Level
from metaeval_core.stats.significance import (
    ALTERNATIVES, CORRECTIONS, FAMILIES, Alternative, Correction, Family,
)
from metaeval_core.stats.montecarlo import finite_or_none
from metaeval_core.wording import bounds as _bounds
from metaeval_core.wording import correction_label, separation_sentence

__all__ = ["CEILING_RULE", "ORDERING", "MetricsLeaderboardRow", "MetricsLeaderboard", "assemble_leaderboard",
           "chance_groups", "doubts", "metrics_leaderboard"]

RowKind = Literal["metric", "chance", "human ceiling"]

ORDERING = ("metrics first, by significance cluster (1 = best), then by estimate, highest first (undefined last); "
            "then the chance rows, then the human-ceiling rows, never ranked")
CEILING_RULE = ("one row per annotator of the human measure, scored against the mean of the other annotators with "
                "the metrics' interval method, whenever the measure keeps at least two annotators' scores; when it "
                "keeps none, one row per rater of its per-rater release (<human>.raters, <human>.sxs: WMT23's MQM "
                "raters beside the gold mqm), each against the other raters on the cells they share")


@dataclass(frozen=True)
class MetricsLeaderboardRow:
    """One row: a metric (ranked), a chance baseline or a human ceiling (never ranked).

    ``cluster`` is the significance cluster of a metric (None on other rows); ``epsilon`` the tie threshold of the
    tie-calibrated accuracy (NaN otherwise); ``doubt`` why a metric's rank means little ('' when it does not:
    :func:`doubts`); ``covers`` the metrics a chance row stands for.
    """

    kind: RowKind
    name: str
    estimate: float
    low: float
    high: float
    cluster: int | None = None
    epsilon: float = math.nan
    doubt: str = ""
    covers: tuple[str, ...] = ()


_num = finite_or_none


@dataclass(frozen=True)
class MetricsLeaderboard(ToFrame):
    """Each metric's correlation, interval and significance cluster, with chance and human-ceiling rows.

    ``rows`` follow ``ordering``; ``table`` is the pairwise table the clusters come from (its p-values corrected
    with ``correction`` over ``family``; None with one metric); ``chance_note`` and ``ceiling_note`` say why
    there is no chance row or ceiling row ('' when there is one, or nothing to say).

    References
    ----------
    docs/methods.md sec. 10, 12 and 14.
    """

    human: str
    level: str
    coefficient: str
    rows: tuple[MetricsLeaderboardRow, ...]
    test: str
    alternative: str
    correction: str
    family: str
    alpha: float
    interval_method: str
    confidence_level: float
    n_resamples: int
    table: object | None = field(default=None, repr=False, compare=False)
    chance_note: str = ""
    ceiling_note: str = ""
    seed: int | None = None
    ordering: str = ORDERING
    ceiling_rule: str = CEILING_RULE

    @property
    def metrics(self) -> tuple[MetricsLeaderboardRow, ...]:
        """The ranked rows (kind 'metric')."""
        return tuple(r for r in self.rows if r.kind == "metric")

    @property
    def has_epsilon(self) -> bool:
        return self.coefficient == "tie-calibrated-accuracy"

    def rule(self) -> str:
        """How the ranks and intervals were made, in one sentence (the Overview's caption and the CLI's note).

        Examples
        --------
        >>> board = assemble_leaderboard(["m"], "h", level="system", coefficient="kendall",
        ...                              intervals={"m": {"estimate": 0.5, "low": 0.1, "high": 0.8}}, seed=0)
        >>> print(board.rule())
        Rank = significance cluster: metrics no test separates share a rank (PERM-BOTH, one-sided, Bonferroni per metric, α = 0.05, k = 1,000, seed 0). Interval: BOOT-BOTH 95%.
        """
        from metaeval_core.stats.significance import method_label

        sided = "one-sided" if self.alternative == "greater" else "two-sided"
        if self.correction == "none" or self.family == "none":
            corrected = "no correction"
        else:
            corrected = f"{correction_label(self.correction)} {'per metric' if self.family == 'row' else 'over the table'}"
        seed = "" if self.seed is None else f", seed {self.seed}"
        return (f"Rank = significance cluster: metrics no test separates share a rank ({method_label(self.test)}, "
                f"{sided}, {corrected}, α = {self.alpha:g}, k = {self.n_resamples:,}{seed}). Interval: "
                f"{self.interval_method.upper()} {100 * self.confidence_level:g}%.")

    def separation(self) -> str:
        """The sentence for a table whose corrected tests separate no pair ('' otherwise):
        :func:`metaeval_core.wording.separation_sentence`."""
        return separation_sentence(self.table) if self.table is not None else ""

    def to_records(self) -> list[dict]:
        """One dict per row, in ``ordering``: kind, metric (the row's name), cluster, estimate, low, high, doubt,
        and epsilon with the tie-calibrated accuracy. Undefined numbers are None."""
        out = []
        for r in self.rows:
            record = {"kind": r.kind, "metric": r.name, "cluster": r.cluster, "estimate": _num(r.estimate),
                      "low": _num(r.low), "high": _num(r.high)}
            if self.has_epsilon:
                record["epsilon"] = _num(r.epsilon)
            record["doubt"] = r.doubt
            out.append(record)
        return out

    def to_dict(self) -> dict:
        return {"human": self.human, "level": self.level, "coefficient": self.coefficient, "test": self.test,
                "alternative": self.alternative, "correction": self.correction, "family": self.family,
                "alpha": self.alpha, "interval_method": self.interval_method,
                "confidence_level": self.confidence_level, "n_resamples": self.n_resamples,
                "ordering": self.ordering, "ceiling_rule": self.ceiling_rule, "chance_note": self.chance_note,
                "ceiling_note": self.ceiling_note, "seed": self.seed, "rule": self.rule(),
                "separation": self.separation(), "rows": self.to_records()}

    def to_frame(self) -> pd.DataFrame:
        """The rows as a table (cluster, metric, estimate, low, high, kind, [epsilon], doubt); NaN for undefined."""
        columns = ["cluster", "metric", "estimate", "low", "high", "kind"] + (["epsilon"] if self.has_epsilon else [])
        frame = pd.DataFrame(
            [{"cluster": np.nan if r.cluster is None else r.cluster, "metric": r.name, "estimate": r.estimate,
              "low": r.low, "high": r.high, "kind": r.kind, "epsilon": r.epsilon, "doubt": r.doubt}
             for r in self.rows], columns=columns + ["doubt"])
        for column in ("estimate", "low", "high"):
            frame[column] = frame[column].astype(float)
        return frame


# -- chance rows: baselines that agree within Monte Carlo error share one row (docs/methods.md sec. 12) ------------
def _float(value: object) -> float:
    number = pd.to_numeric(value, errors="coerce")
    return float(number) if number is not None and np.isfinite(number) else float("nan")


def _same_chance(a: Mapping, b: Mapping) -> bool:
    """Two metrics' chance baselines agree within Monte Carlo error (docs/methods.md sec. 12, 'In the product')."""
    values = [[_float(r.get(c)) for c in ("estimate", "low", "high")] for r in (a, b)]
    if values[0] == values[1] or not np.isfinite(values[0] + values[1]).any():
        return True  # identical (rank-based coefficients and the same ties), or both undefined
    if not all(np.isfinite(v) for row in values for v in row):
        return False
    (e1, l1, h1), (e2, l2, h2) = values
    se = np.hypot(_float(a.get("mc_se")), _float(b.get("mc_se")))
    k = max(min(_float(a.get("n_resamples")), _float(b.get("n_resamples"))), 1.0)
    # A percentile of k draws has a standard error of about 0.68 * width / sqrt(k) (normal case); allow two.
    bound = 1.4 * max(h1 - l1, h2 - l2) / np.sqrt(k)
    return bool(np.isfinite(se) and abs(e1 - e2) <= 3 * se and abs(l1 - l2) <= bound and abs(h1 - h2) <= bound)


def chance_groups(rows: pd.DataFrame | Sequence[Mapping] | None) -> pd.DataFrame:
    """Chance baselines (docs/methods.md sec. 12) grouped for display: one row per baseline a reader should tell apart.

    ``rows``: one per metric, as ``ChanceBaseline.to_dict()`` (metric, estimate, low, high, mc_se, n_resamples). A
    metric joins the first group whose first metric's baseline agrees with its own within Monte Carlo error
    (estimates within 3 standard errors, range bounds within about two standard errors of a percentile);
    rank-based coefficients give metrics with the same ties identical baselines. A group shows its members' mean
    estimate and bounds. Columns: metrics (tuple), label, estimate, low, high, n_resamples. Label: 'random scores
    (permuted)' when one group covers every metric, else the metrics it covers (the first two and a count beyond
    three), then 'permuted'; ``metrics`` lists them all.

    Examples
    --------
    >>> rows = [{"metric": m, "estimate": 0.0, "low": -0.2, "high": 0.2, "mc_se": 0.003, "n_resamples": 1000}
    ...         for m in ("a", "b")]
    >>> chance_groups(rows)[["metrics", "label", "low", "high"]].to_dict("records")
    [{'metrics': ('a', 'b'), 'label': 'random scores (permuted)', 'low': -0.2, 'high': 0.2}]
    """
    columns = ["metrics", "label", "estimate", "low", "high", "n_resamples"]
    records = rows.to_dict("records") if isinstance(rows, pd.DataFrame) else list(rows or [])
    if not records:
        return pd.DataFrame(columns=columns)
    groups: list[list[Mapping]] = []
    for row in records:
        home = next((g for g in groups if _same_chance(g[0], row)), None)
        if home is None:
            groups.append([row])
        else:
            home.append(row)
    out = []
    for members in groups:
        names = tuple(str(m["metric"]) for m in members)
        # A long group is counted, not listed: an input-level row once held 19 metric names in one cell.
        shown = ", ".join(names) if len(names) <= 3 else f"{names[0]}, {names[1]} and {len(names) - 2} more metrics"
        label = "random scores (permuted)" if len(groups) == 1 else f"{shown} permuted"
        values = {c: float(np.mean([_float(m.get(c)) for m in members])) for c in ("estimate", "low", "high")}
        out.append({"metrics": names, "label": label, **values,
                    "n_resamples": int(max(np.nan_to_num(_float(m.get("n_resamples"))) for m in members))})
    return pd.DataFrame(out, columns=columns)


def doubts(ranks: pd.DataFrame, groups: pd.DataFrame) -> list[str]:
    """Why each ranked metric's place says little, or '': its interval includes 0, and/or its estimate lies inside
    its chance range (``groups``: :func:`chance_groups`). A rank-1 metric with both is tied with the others, not
    better than random scores, whatever the bold type suggests (issue 24)."""
    ranges = {m: (float(g["low"]), float(g["high"])) for _, g in groups.iterrows() for m in g["metrics"]}
    out = []
    for row in ranks.itertuples(index=False):
        reasons = []
        low, high, estimate = _float(row.low), _float(row.high), _float(row.estimate)
        if np.isfinite(low) and np.isfinite(high) and low <= 0 <= high:
            reasons.append("its interval includes 0")
        lo, hi = ranges.get(str(row.metric), (np.nan, np.nan))
        if np.isfinite(estimate) and np.isfinite(lo) and lo <= estimate <= hi:
            reasons.append(f"its estimate lies inside the chance range {_bounds(lo, hi)}")
        out.append(" and ".join(reasons))
    return out


# -- assembling and computing ----------------------------------------------------------------------------------------
def assemble_leaderboard(
    metrics: Sequence[str],
    human: str,
    *,
    level: str,
    coefficient: str,
    intervals: Mapping[str, Mapping],
    table=None,
    chance: Sequence[Mapping] = (),
    chance_note: str = "",
    ceiling=None,
    ceiling_note: str = "",
    epsilons: Mapping[str, float] | None = None,
    test: str = "perm-both",
    alternative: str = "greater",
    correction: str = "bonferroni",
    family: str = "row",
    alpha: float = 0.05,
    interval_method: str = "boot-both",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = None,
) -> MetricsLeaderboard:
    """The leaderboard from its computed parts (what :func:`metrics_leaderboard` computes; the dashboard passes its
    cached ones, so the page and the CLI order, cluster and label the same numbers the same way).

    ``intervals``: per metric a mapping with estimate, low, high (``ConfidenceInterval.to_dict()``); ``table``:
    the metrics' :class:`~metaeval_core.stats.significance.PairwiseTable` (its p-values are corrected here with
    ``correction`` over ``family``); ``chance``: ``ChanceBaseline.to_dict()`` per metric; ``ceiling``: a
    :class:`~metaeval_core.analyses.ceilings.HumanCeiling` or None.

    References
    ----------
    docs/methods.md sec. 10, 12 and 14.
    """
    from metaeval_core.analyses.practice import significance_clusters
    from metaeval_core.stats.significance import correct_table

    metrics = list(metrics)
    if len(metrics) >= 2 and table is not None:
        corrected = correct_table(np.asarray(table.pvalue, dtype=float), correction=correction, family=family)
        still = np.nan_to_num(corrected, nan=1.0) < alpha
        table = replace(table, pvalue_corrected=corrected, significant_corrected=still, alpha=float(alpha),
                        correction=correction, family=family)
        clusters = significance_clusters(table, use_corrected=True)
        ranked = list(zip(clusters.metrics, clusters.rank.tolist(), clusters.estimates.tolist()))
    else:
        table = None
        ranked = [(m, 1, _float(intervals[m].get("estimate"))) for m in metrics]
    ranks = pd.DataFrame({"cluster": [int(r) for _, r, _ in ranked], "metric": [m for m, _, _ in ranked],
                          "estimate": [float(e) for _, _, e in ranked],
                          "low": [_float(intervals[m].get("low")) for m, _, _ in ranked],
                          "high": [_float(intervals[m].get("high")) for m, _, _ in ranked]})
    groups = chance_groups(list(chance))
    reasons = doubts(ranks, groups)
    epsilons = dict(epsilons or {})
    rows = [MetricsLeaderboardRow("metric", m, float(e), float(lo), float(hi), cluster=int(c),
                                  epsilon=_float(epsilons.get(m, math.nan)), doubt=d)
            for (c, m, e, lo, hi), d in zip(ranks.itertuples(index=False, name=None), reasons)]
    rows += [MetricsLeaderboardRow("chance", str(g["label"]), _float(g["estimate"]), _float(g["low"]),
                                   _float(g["high"]), covers=tuple(g["metrics"])) for _, g in groups.iterrows()]
    if ceiling is not None:
        others = "the others" if getattr(ceiling, "annotators", "persons") == "persons" else "the other slots"
        # Rows from another measure (the gold's per-rater release) name it: they are not the gold's own annotators.
        source = f" ({ceiling.human})" if getattr(ceiling, "human", human) != human else ""
        rows += [MetricsLeaderboardRow("human ceiling", f"{r.annotator}{source} vs {others}", float(r.estimate),
                                       float(r.low), float(r.high)) for r in ceiling.rows]
    return MetricsLeaderboard(human, level, coefficient, tuple(rows), test, alternative, correction, family,
                              float(alpha), interval_method, float(confidence_level), int(n_resamples), table,
                              chance_note, ceiling_note, seed)


def _validate_leaderboard(dataset, metrics, human, alternative, correction, family, alpha):
    from metaeval_core._checks import check_choice
    from metaeval_core.data.checks import check_dataset, check_human

    dataset = check_dataset(dataset)
    check_human(dataset, human)
    if isinstance(metrics, str) or not len(metrics):
        raise ValueError("metrics must be a non-empty list of metric names")
    check_choice(alternative, "alternative", ALTERNATIVES)
    check_choice(correction, "correction", CORRECTIONS)
    check_choice(family, "family", FAMILIES)
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be a number strictly between 0 and 1; got {alpha!r}")
    return dataset


def metrics_leaderboard(
    dataset: Dataset, metrics: Sequence[str], human: str, *, level: Level = "system",
    coefficient: Coefficient = "kendall", pool: Pool = "judged", systems: str | None = None, test: str | None = None,
    alternative: Alternative = "greater", correction: Correction = "bonferroni", family: Family = "row",
    alpha: float = 0.05, confidence_level: float = 0.95, n_resamples: int = 1000, rng: int = 0,
) -> MetricsLeaderboard:
    """Rank ``metrics`` by their correlation with ``human``: BOOT-BOTH interval, significance cluster, chance rows
    and human-ceiling rows (the Overview's leaderboard and ``metaeval clusters --view leaderboard``).

    Parameters
    ----------
    dataset : Dataset
    metrics : sequence of str
    human : str
    level, coefficient, pool, systems
        As for :func:`~metaeval_core.stats.correlation.correlate`.
    test : str, optional
        The pairwise test (default: the dataset's, :func:`~metaeval_core.stats.significance.default_test`).
    alternative, correction, family, alpha
        The clusters' test: a metric opens a new cluster when one of the cluster above beats it after
        ``correction`` over ``family`` at ``alpha``.
    confidence_level, n_resamples
        The metrics' and ceilings' BOOT-BOTH intervals, and the chance ranges (at least the resamples a
        percentile range needs at ``confidence_level``).
    rng : int
        One seed for every part (intervals, tests, chance, ceilings), so each part equals the one computed alone.

    Returns
    -------
    MetricsLeaderboard

    Examples
    --------
    >>> from metaeval_core.data.synthetic import synthetic_dataset
    >>> ds = synthetic_dataset()
    >>> board = metrics_leaderboard(ds, ["metric.noise", "metric.strong"], "human.quality", n_resamples=100)
    >>> [(r.kind, r.name, r.cluster) for r in board.rows][:3]
    [('metric', 'metric.strong', 1), ('metric', 'metric.noise', 2), ('chance', 'random scores (permuted)', None)]

    References
    ----------
    docs/methods.md sec. 10, 12 and 14.
    """
    from metaeval_core._checks import min_resamples_for
    from metaeval_core.analyses.ceilings import ceiling_measure, human_ceiling
    from metaeval_core.analyses.chance import chance_baseline
    from metaeval_core.stats.correlation import correlate
    from metaeval_core.stats.resampling import dataset_confidence_intervals
    from metaeval_core.stats.significance import compare_all_pairs, default_test

    dataset = _validate_leaderboard(dataset, metrics, human, alternative, correction, family, alpha)
    metrics = list(metrics)
    method = test or default_test(dataset, level, coefficient)
    common = dict(level=level, coefficient=coefficient, pool=pool, systems=systems)
    # Each metric's own interval; the metrics share the draws and the human's side where the level allows.
    intervals = {m: ci.to_dict() for m, ci in zip(metrics, dataset_confidence_intervals(
        dataset, metrics, human, method="boot-both", confidence_level=confidence_level, n_resamples=n_resamples,
        rng=rng, **common))}
    table = None
    if len(metrics) >= 2:
        table = compare_all_pairs(dataset, metrics, human, method=method, alternative=alternative, correction="none",
                                  family="none", alpha=alpha, n_resamples=n_resamples, rng=rng, **common)
    epsilons = None
    if coefficient == "tie-calibrated-accuracy":
        epsilons = {m: correlate(dataset, m, human, **common).epsilon for m in metrics}
    chance, chance_note = [], ""
    try:
        k = max(int(n_resamples), min_resamples_for(confidence_level))
        chance = [chance_baseline(dataset, m, human, confidence_level=confidence_level, n_resamples=k, rng=rng,
                                  **common).to_dict() for m in metrics]
    except ValueError as error:  # e.g. too many cells for the coefficient's permutations: say why, keep the rest
        chance_note = str(error).split(";")[0]
    ceiling, ceiling_note = None, ""
    source = ceiling_measure(dataset, human)
    if source is not None:
        try:
            ceiling = human_ceiling(dataset, source, level=level, coefficient=coefficient, method="boot-both",
                                    confidence_level=confidence_level, n_resamples=n_resamples, rng=rng,
                                    systems=systems)
        except ValueError as error:
            ceiling_note = str(error).split(";")[0]
    return assemble_leaderboard(metrics, human, level=level, coefficient=coefficient, intervals=intervals,
                                table=table, chance=chance, chance_note=chance_note, ceiling=ceiling,
                                ceiling_note=ceiling_note, epsilons=epsilons, test=method, alternative=alternative,
                                correction=correction, family=family, alpha=alpha, interval_method="boot-both",
                                confidence_level=confidence_level, n_resamples=n_resamples, seed=rng)
