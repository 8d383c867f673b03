"""Pure plotly figure builders of the LLM-judges pages (frames in, figures out; no Streamlit)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from metaeval_ui import figures as base
from metaeval_ui.figures import esc, fmt

STATISTIC_LABELS = {"accuracy": "accuracy", "kappa": "Cohen's kappa", "alpha": "Krippendorff's alpha"}
SERIES_SYMBOLS = ("circle", "diamond", "square", "triangle-up", "x")
SERIES_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b")


def leaderboard_forest(frame: pd.DataFrame, *, statistic: str, chance: pd.DataFrame | None = None,
                       title: str = "") -> go.Figure:
    """Each judge's agreement with its interval, best first, human-ceiling rows last (grey) and each judge's chance
    range as a dashed line and band (the metrics' forest plot, :func:`metaeval_ui.figures.forest_plot`).

    ``frame``: judge, estimate, low, high, kind ('judge' / 'human ceiling'), n_items, n_defined, n_resamples,
    confidence_level. ``chance``: judge, estimate, low, high (the permuted verdicts' mean and range).
    """
    if frame is None or frame.empty:
        return base.empty_figure("No judge to show")
    rows = frame.rename(columns={"judge": "metric", "n_items": "n"}).assign(method="percentile bootstrap")
    groups = None
    if chance is not None and not chance.empty:
        groups = pd.DataFrame({"metrics": [(j,) for j in chance["judge"]], "label": "verdicts permuted",
                               "estimate": chance["estimate"], "low": chance["low"], "high": chance["high"]})
    fig = base.forest_plot(rows, sort="estimate", title=title, chance=groups)
    fig.update_layout(xaxis_title=STATISTIC_LABELS.get(statistic, statistic), legend_title="interval")
    fig.for_each_trace(lambda t: t.update(name="chance (verdicts permuted)"), selector={"name": base.CHANCE_NAME})
    return fig


def judge_heatmap(comparison, *, title: str, row_axis: str, hover: Sequence[Sequence[str]] | None = None) -> go.Figure:
    """Judge x judge permutation-test p-values: filled when p < alpha, outlined when significant after the
    correction (:func:`metaeval_ui.figures.pvalue_heatmap`)."""
    table = comparison.table
    order = [table.metrics.index(j) for j in comparison.clusters.metrics]
    pick = np.ix_(order, order)
    fig = base.pvalue_heatmap([table.metrics[k] for k in order], table.pvalue[pick], table.significant[pick],
                              table.significant_corrected[pick], alpha=table.alpha, title=title, row_axis=row_axis,
                              hover=None if hover is None else [[hover[i][j] for j in order] for i in order])
    fig.update_layout(xaxis_title="column judge (Y)")
    return fig


def interval_dots(frame: pd.DataFrame, *, x_title: str, label: str = "label", series: str = "series",
                  reference: float | None = None, reference_label: str = "", title: str = "",
                  x_range: tuple[float, float] | None = None) -> go.Figure:
    """One row per ``label``, one marker with its interval per ``series`` (estimate, low, high), rows in the frame's
    order from the top; an optional vertical reference line (e.g. 0.5 = no preference)."""
    if frame is None or frame.empty:
        return base.empty_figure("Nothing to show")
    labels = list(dict.fromkeys(frame[label].astype(str)))
    names = list(dict.fromkeys(frame[series].astype(str)))
    position = {name: len(labels) - 1 - k for k, name in enumerate(labels)}
    span = 0.0 if len(names) == 1 else min(0.6, 0.2 * (len(names) - 1))
    offsets = {s: (0.0 if len(names) == 1 else span / 2 - k * span / (len(names) - 1)) for k, s in enumerate(names)}
    fig = go.Figure()
    for k, name in enumerate(names):
        part = frame[frame[series].astype(str) == name]
        est, low, high = (part[c].astype(float).to_numpy() for c in ("estimate", "low", "high"))
        colour = SERIES_COLOURS[k % len(SERIES_COLOURS)]
        hover = [f"<b>{esc(lab)}</b> — {esc(name)}<br>{fmt(e)} [{fmt(lo)}, {fmt(hi)}]"
                 for lab, e, lo, hi in zip(part[label].astype(str), est, low, high)]
        fig.add_scatter(
            x=est, y=[position[lab] + offsets[name] for lab in part[label].astype(str)], mode="markers", name=esc(name),
            marker={"color": colour, "size": 9, "symbol": SERIES_SYMBOLS[k % len(SERIES_SYMBOLS)]},
            error_x={"type": "data", "symmetric": False, "array": np.nan_to_num(high - est, nan=0.0),
                     "arrayminus": np.nan_to_num(est - low, nan=0.0), "thickness": 2, "width": 4, "color": colour},
            hovertext=hover, hoverinfo="text")
    if reference is not None:
        fig.add_vline(x=reference, line={"color": "#444", "dash": "dash", "width": 1.5},
                      annotation_text=esc(reference_label) if reference_label else None,
                      annotation_position="top", annotation_font_size=12)
    fig.update_layout(
        title=esc(title) if title else None,
        xaxis={"title": esc(x_title), "range": list(x_range) if x_range else None},
        yaxis={"tickvals": [position[s] for s in labels], "ticktext": [esc(s) for s in labels],
               "range": [-0.5, len(labels) - 0.5], "showgrid": False, "zeroline": False},
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 1, "xanchor": "right"},
        height=max(260, 120 + (30 + 12 * len(names)) * len(labels)), margin={"t": 80 if title else 50})
    return fig


def rater_matrix(result, *, statistic: str, title: str = "") -> go.Figure:
    """Rater x rater heatmap (people first, then gold labels, then judges) of a
    :class:`~metaeval_core.judges.raters.RaterAgreement`: the chosen statistic in each cell, the common items in the
    hover."""
    values = result.matrix(statistic)
    names = [esc(r) for r in result.raters]
    text = [[fmt(v, 2) for v in row] for row in values]
    hover = [[f"{names[i]} vs {names[j]}<br>{STATISTIC_LABELS.get(statistic, statistic)} = {fmt(values[i, j])}"
              f"<br>common items: {int(result.n_common[i, j]):,}" for j in range(len(names))]
             for i in range(len(names))]
    fig = go.Figure(go.Heatmap(z=np.where(np.isfinite(values), values, None), x=names, y=names, text=text,
                               texttemplate="%{text}", hovertext=hover, hoverinfo="text", colorscale="Blues",
                               zmin=0 if statistic == "accuracy" else None, zmax=1,
                               colorbar={"title": STATISTIC_LABELS.get(statistic, statistic)}))
    fig.update_layout(title=title, yaxis={"autorange": "reversed"}, height=max(320, 60 + 28 * len(names)))
    return fig
