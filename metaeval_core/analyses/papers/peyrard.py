"""The high-scoring range (Peyrard, ACL 2019): do metrics agree on the best summaries?

References: docs/methods.md sec. 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np

from metaeval_core._checks import check_choice, check_int
from metaeval_core.stats.coefficients import kendall, pair_kernel_fits, pair_signs, tau_b_from_counts
from metaeval_core.data.dataset import POOLS, Dataset, DatasetError, Pool
from metaeval_core.analyses.papers._common import check_measures_exist, check_names, float_or_none, select_systems


Normalise = Literal["input", "global"]
NORMALISATIONS: tuple[str, ...] = get_args(Normalise)


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
             "tau_all": float_or_none(self.tau_all[p]), "tau_top": float_or_none(self.tau_top[p]),
             "n_inputs_all": int(self.n_inputs_all[p]), "n_inputs_top": int(self.n_inputs_top[p])}
            for p, (a, b) in enumerate(zip(self.pair_a, self.pair_b))
        ]

    def curve_records(self) -> list[dict]:
        """Rows ``{metric_a, metric_b, bin_low, bin_high, disagreement, n_pairs}``."""
        return [
            {"metric_a": self.metrics[a], "metric_b": self.metrics[b],
             "bin_low": float(self.bin_edges[k]), "bin_high": float(self.bin_edges[k + 1]),
             "disagreement": float_or_none(self.disagreement[p, k]), "n_pairs": int(self.n_pairs[p, k])}
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
    subset = select_systems(dataset, systems)
    metrics = check_names(metrics, "metrics", minimum=2)
    check_measures_exist(subset, metrics)
    selection = metrics if selection_metrics is None else check_names(selection_metrics, "selection_metrics")
    check_measures_exist(subset, selection)
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


_COUNT_ENTRIES = 4_000_000  # (measure, input, system pair) sign entries per chunk of _pairwise_kendall


def _pairwise_kendall(values: np.ndarray, pair_a: np.ndarray, pair_b: np.ndarray) -> np.ndarray:
    """``kendall(values[pair_a], values[pair_b])`` for (Q, M, N) ``values``: each measure's system-pair signs
    drawn once, not once per pair of measures it is in (32 WMT23 metrics: 496 pairs); the same P, Q, T, U
    counts, so the same tau."""
    n = values.shape[-1]
    if n < 2 or not pair_kernel_fits(n):
        return kendall(values[pair_a], values[pair_b])
    first, second = np.triu_indices(n, 1)
    # Per input, every pair of measures at once: with s the system-pair signs (0 where a score is missing or tied),
    # |s| and d the pairs both scores define, the counts over the pairs both measures define are bilinear:
    # P - Q = s_a.s_b, P + Q = |s_a|.|s_b|, T = d_a.|s_b| - |s_a|.|s_b|, U = |s_a|.d_b - |s_a|.|s_b| (exact
    # integers in float32 below 2^24 system pairs), then the same tau-b formula as kendall's.
    dtype = np.float32 if first.size < 2 ** 24 else np.float64
    out = np.empty((pair_a.size, values.shape[1]))
    step = max(1, _COUNT_ENTRIES // max(values.shape[0] * first.size, 1))  # inputs per chunk: bounded memory
    for start in range(0, values.shape[1], step):
        part = values[:, start:start + step]
        signs = np.moveaxis(pair_signs(part, first, second), 0, 1).astype(dtype)  # (M, Q, S)
        defined = ~np.isnan(part)
        defined = np.moveaxis(defined[..., first] & defined[..., second], 0, 1).astype(dtype)
        size = np.abs(signs)
        signed = np.rint(signs @ np.swapaxes(signs, 1, 2)).astype(np.int64)  # (M, Q, Q)
        ordered = np.rint(size @ np.swapaxes(size, 1, 2)).astype(np.int64)
        cross = np.rint(defined @ np.swapaxes(size, 1, 2)).astype(np.int64)  # [m, a, b] = d_a.|s_b|
        d = signed[:, pair_a, pair_b]
        both = ordered[:, pair_a, pair_b]
        tau = tau_b_from_counts((both + d) // 2, (both - d) // 2, cross[:, pair_a, pair_b] - both,
                                cross[:, pair_b, pair_a] - both)
        out[:, start:start + step] = tau.T
    return out


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
    tau_inputs_all = _pairwise_kendall(by_input, pair_a, pair_b)  # (P, M)
    top = np.where(kept.T[None], by_input, np.nan)
    tau_inputs_top = _pairwise_kendall(top, pair_a, pair_b)

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
    signs = np.where(np.isnan(signs), 0.0, signs).astype(np.float32).reshape(len(metrics), -1)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.clip(np.searchsorted(edges, pair_score, side="right") - 1, 0, n_bins - 1)
    bins = np.where(np.isnan(pair_score), -1, bins).reshape(-1)
    # Per bin, every pair of metrics at once: the summary pairs both order (|s_a| |s_b| = 1) and their signs' sum
    # (agree - differ) are two products of the bin's sign columns, exact integers in float32 below 2^24 per entry.
    both = np.zeros((pair_a.size, n_bins), dtype=np.int64)
    differ = np.zeros((pair_a.size, n_bins), dtype=np.int64)
    for j in range(n_bins):
        cells = signs[:, bins == j]
        cells = cells if cells.shape[1] < 2 ** 24 else cells.astype(np.float64)
        ordered = np.rint(np.abs(cells) @ np.abs(cells).T).astype(np.int64)[pair_a, pair_b]
        agreement = np.rint(cells @ cells.T).astype(np.int64)[pair_a, pair_b]
        both[:, j] = ordered
        differ[:, j] = (ordered - agreement) // 2
    n_pairs = both
    with np.errstate(invalid="ignore", divide="ignore"):
        disagreement = np.where(both > 0, differ / np.maximum(both, 1), np.nan)
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
