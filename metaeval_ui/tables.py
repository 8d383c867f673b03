"""Pure pandas/numpy summaries behind the overview page (no streamlit, no plotly; unit-testable).

Missing values are NaN in the score matrices (docs/methods.md sec. 0); every summary here ignores them and
says how many there were.
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pandas as pd

from metaeval_core.analyses.leaderboard import chance_groups, doubts  # noqa: F401 - the leaderboard lives in core
from metaeval_core.stats.correlation import system_means as _row_means
from metaeval_core.data.dataset import Dataset


def overview_counts(dataset: Dataset) -> dict[str, int]:
    """Headline counts: systems, judged/unjudged inputs, human/metric measures, system attributes."""
    return {
        "systems": dataset.n_systems,
        "judged inputs": dataset.n_judged,
        "unjudged inputs": dataset.n_unjudged,
        "human measures": len(dataset.human_measures),
        "metric measures": len(dataset.metric_measures),
        "system attributes": len(dataset.system_attributes),
    }


def attribute_summary(dataset: Dataset) -> pd.DataFrame:
    """One row per system attribute: its values and how many systems carry each."""
    rows = []
    for attribute, values in dataset.system_attributes.items():
        counts = pd.Series(values).value_counts(sort=False)
        rows.append(
            {
                "attribute": attribute,
                "values": ", ".join(f"{value} ({count})" for value, count in counts.items()),
                "distinct": int(counts.size),
            }
        )
    return pd.DataFrame(rows, columns=["attribute", "values", "distinct"])


def system_means(dataset: Dataset, measures: Sequence[str], *, pool: str = "judged") -> pd.DataFrame:
    """Per-system mean of each measure over its input pool (humans: judged inputs), NaN ignored.

    Index: systems; one column per measure, plus one column per system attribute.
    """
    frame = pd.DataFrame(index=pd.Index(dataset.systems, name="system"))
    for attribute, values in dataset.system_attributes.items():
        frame[attribute] = list(values)
    for name in measures:
        frame[name] = _row_means(dataset.matrix(name, pool=pool))
    return frame


def _values(dataset: Dataset, name: str, pool: str) -> np.ndarray:
    values = dataset.matrix(name, pool=pool).ravel()
    return values[~np.isnan(values)]


def histograms(dataset: Dataset, measures: Sequence[str], *, pool: str = "judged", bins: int = 30) -> pd.DataFrame:
    """Histogram of every cell score per measure: rows (measure, kind, left, right, count, share).

    Binned here so a figure never carries every raw cell (the demo has 33,600 per metric).
    """
    rows = []
    for name in measures:
        values = _values(dataset, name, pool)
        kind = dataset.measure(name).kind
        if values.size == 0:
            continue
        low, high = float(values.min()), float(values.max())
        distinct = np.unique(values)
        if distinct.size <= bins:  # discrete scales (Likert 1-5, binary labels): one bar per value
            counts = np.array([(values == v).sum() for v in distinct])
            width = float(np.min(np.diff(distinct))) if distinct.size > 1 else 1.0
            lefts, rights = distinct - width * 0.4, distinct + width * 0.4
        else:
            counts, edges = np.histogram(values, bins=bins, range=(low, high))
            lefts, rights = edges[:-1], edges[1:]
        for left, right, count in zip(lefts, rights, counts):
            rows.append({"measure": name, "kind": kind, "left": float(left), "right": float(right),
                         "count": int(count), "share": float(count) / values.size})
    return pd.DataFrame(rows, columns=["measure", "kind", "left", "right", "count", "share"])


def box_stats(dataset: Dataset, measures: Sequence[str], *, pool: str = "judged") -> pd.DataFrame:
    """Five-number summary (Tukey fences at 1.5 IQR) plus mean and count of every measure's cell scores."""
    rows = []
    for name in measures:
        values = _values(dataset, name, pool)
        if values.size == 0:
            continue
        q1, median, q3 = np.quantile(values, [0.25, 0.5, 0.75])
        iqr = q3 - q1
        inside = values[(values >= q1 - 1.5 * iqr) & (values <= q3 + 1.5 * iqr)]
        rows.append({
            "measure": name, "kind": dataset.measure(name).kind, "n": int(values.size),
            "min": float(values.min()), "lowerfence": float(inside.min()), "q1": float(q1),
            "median": float(median), "mean": float(values.mean()), "q3": float(q3),
            "upperfence": float(inside.max()), "max": float(values.max()),
        })
    return pd.DataFrame(rows, columns=["measure", "kind", "n", "min", "lowerfence", "q1", "median", "mean", "q3",
                                       "upperfence", "max"])


def missing_summary(dataset: Dataset) -> pd.DataFrame:
    """Missing cells per measure, on judged inputs and (metrics only) on unjudged inputs.

    ``systems with gaps`` / ``inputs with gaps``: how many rows / columns of the judged block miss a score.
    Human measures are judged-only by definition, so their unjudged share is not applicable (None).
    """
    judged = dataset.judged
    rows = []
    for name, measure in dataset.measures.items():
        block = measure.scores[:, judged]
        missing = np.isnan(block)
        row = {
            "measure": name,
            "kind": measure.kind,
            "judged cells": int(block.size),
            "missing (judged)": int(missing.sum()),
            "missing % (judged)": 100.0 * missing.mean() if block.size else 0.0,
            "systems with gaps": int(missing.any(axis=1).sum()),
            "inputs with gaps": int(missing.any(axis=0).sum()),
            "scored unjudged inputs": None,
            "annotators": None if measure.annotators is None else int(measure.annotators.shape[0]),
        }
        if measure.kind == "metric" and dataset.n_unjudged:
            unjudged = measure.scores[:, ~judged]
            row["scored unjudged inputs"] = int((~np.isnan(unjudged)).any(axis=0).sum())
        rows.append(row)
    return pd.DataFrame(rows)


# -- significance ------------------------------------------------------------------------------------------


def correct_table(pvalue: np.ndarray, correction: str, family: str) -> np.ndarray:
    """Adjust a metric x metric p-value table within each family: 'row', 'table' or 'none'
    (docs/methods.md sec. 3); :func:`metaeval_core.stats.significance.correct_table`."""
    from metaeval_core.stats.significance import correct_table as _correct_table

    return _correct_table(pvalue, correction=correction, family=family)


def pairwise_records(metrics, delta, pvalue, corrected, alpha: float, n_defined, *,
                     x_column: str = "X (better?)") -> pd.DataFrame:
    """One row per ordered pair (row metric X, column metric Y), X != Y; ``x_column`` names X's column
    (:func:`metaeval_ui.text.significance_wording`: "better" only for a one-sided test)."""
    rows = []
    for i, x in enumerate(metrics):
        for j, y in enumerate(metrics):
            if i == j:
                continue
            p, pc = float(pvalue[i, j]), float(corrected[i, j])
            rows.append({
                x_column: x, "Y": y, "delta": float(delta[i, j]), "p": p, "p corrected": pc,
                "significant": bool(np.isfinite(p) and p < alpha),
                "significant corrected": bool(np.isfinite(pc) and pc < alpha),
                "defined resamples": int(n_defined[i, j]),
            })
    return pd.DataFrame(rows)


# -- leaderboard -----------------------------------------------------------------------------------------------


def leaderboard_markdown(board: pd.DataFrame, coefficient: str) -> str:
    """The Overview's leaderboard as a markdown table (a light element: no dataframe JavaScript on the landing page).

    One row per metric, best first: rank (its significance cluster; tied metrics share it), the metric, its
    correlation, its tie threshold epsilon when the board has an ``epsilon`` column (tie-calibrated accuracy) and its
    95% interval. Rank-1 rows are bold; a rank-1 metric with a ``doubt`` (interval includes 0, estimate inside the
    chance range) is marked ⚠. Rows whose ``kind`` is not 'metric' (e.g. 'human', a human
    ceiling) are marked as such in the rank column and never ranked.
    """
    from metaeval_ui.errors import escape_markdown

    def number(value: object) -> str:
        try:
            v = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return "undefined"
        return f"{v:.3f}" if np.isfinite(v) else "undefined"

    symbol = {"pearson": "r", "spearman": "ρ", "kendall": "τ"}.get(coefficient, coefficient)
    with_epsilon = "epsilon" in board.columns
    lines = ([f"| rank | metric | {symbol} | ε | 95% interval |", "|---:|:---|---:|---:|:---|"] if with_epsilon
             else [f"| rank | metric | {symbol} | 95% interval |", "|---:|:---|---:|:---|"])
    for row in board.itertuples(index=False):
        kind = getattr(row, "kind", "metric")
        name = escape_markdown(str(row.metric))  # escapes "|" once (escaped twice, the pipe would end the cell)
        if kind == "metric" and int(row.cluster) == 1 and str(getattr(row, "doubt", "") or ""):
            name += " ⚠"  # bold rank 1 that means little; the page says why (tables.doubts)
        rank = str(int(row.cluster)) if kind == "metric" else f"*{escape_markdown(str(kind))}*"
        interval = f"[{number(row.low)}, {number(row.high)}]" if np.isfinite(float(row.low)) else "undefined"
        cells = [rank, name, number(row.estimate), interval]
        if with_epsilon:
            epsilon = float(getattr(row, "epsilon"))
            cells.insert(3, f"{epsilon:.3g}" if np.isfinite(epsilon) else "–")
        if kind == "metric" and int(row.cluster) == 1:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def reference_scored(dataset: Dataset, metrics: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Reference-based metrics (attribute ``reference``) that score some system's outputs as if against
    themselves: that system's lowest score is above every other system's highest (HANNA's human-written stories:
    BLEU 100, BERTScore F1 1). ``{metric: systems}``, only metrics with such systems."""
    out = {}
    for name in metrics:
        measure = dataset.measures.get(name)
        if measure is None or measure.attributes.get("reference") != "reference-based" or dataset.n_systems < 2:
            continue
        scores = dataset.matrix(name)
        with warnings.catch_warnings():  # a system without scores: all-NaN row, never flagged
            warnings.simplefilter("ignore", RuntimeWarning)
            lowest, highest = np.nanmin(scores, axis=1), np.nanmax(scores, axis=1)
        found = tuple(s for i, s in enumerate(dataset.systems)
                      if np.isfinite(lowest[i]) and lowest[i] > np.nanmax(np.delete(highest, i)))
        if found:
            out[name] = found
    return out


# -- display ------------------------------------------------------------------------------------------------


def _cell_text(value: object, number_format: str | None) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)) or (isinstance(value, (float, np.floating)) and float(value).is_integer()
                                                 and number_format is None):
        return f"{int(value):,}" if abs(int(value)) >= 10_000 else str(int(value))
    if isinstance(value, (float, np.floating)):
        if number_format and number_format.startswith("%"):
            return number_format % float(value)
        return f"{float(value):.4g}"
    return str(value)


def without_missing(frame: pd.DataFrame, column_config: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """``frame`` and its ``st.dataframe`` column config with no missing cell left to draw.

    Streamlit draws every missing value (None, NaN, <NA>) of a dataframe as a grey "None", which a reader takes for
    a Python leak ("n: None" on the human-ceiling rows). So a column missing everywhere is left out (it says
    nothing), and a column missing somewhere becomes right-aligned text: its numbers written with the column's
    printf format (``NumberColumn(format="%.4f")``; integers as integers), its missing cells empty. Columns without
    a missing cell are untouched (they keep sorting as numbers). ``column_config`` is a dict of Streamlit column
    configs (plain dicts), returned adjusted.
    """
    config = dict(column_config or {})
    out = frame.copy()
    for column in frame.columns:
        missing = frame[column].isna()
        if (missing | frame[column].astype(object).eq("")).all():  # nothing in it: no column
            out = out.drop(columns=[column])
            config.pop(column, None)
            continue
        if not missing.any():
            continue
        given = config.get(column) or {}
        number_format = (given.get("type_config") or {}).get("format") if isinstance(given, dict) else None
        out[column] = [_cell_text(v, number_format) for v in frame[column]]
        if isinstance(given, dict) and given:
            config[column] = {**given, "alignment": "right", "type_config": {"type": "text"}}
        else:
            config[column] = {"label": str(column), "alignment": "right", "type_config": {"type": "text"}}
    return out, config
