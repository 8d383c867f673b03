"""Correlation bar charts (one bar per metric and human measure, with its interval).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from metaeval_ui.figures.colours import measure_colour
from metaeval_ui.figures.layout import _number, empty_figure, esc, fmt


def fisher_bounds(frame: pd.DataFrame, coefficient: str, *, confidence_level: float = 0.95,
                  n_column: str = "n") -> pd.DataFrame:
    """``frame`` with ``low``/``high``: the Fisher-transformation interval of each ``estimate`` from its ``n``
    (NaN when the coefficient has no Fisher interval, the estimate is undefined or n is too small)."""
    from metaeval_core.stats.coefficients import CORRELATIONS
    from metaeval_core.stats.resampling import fisher_interval

    low, high = [], []
    for estimate, n in zip(frame["estimate"], frame[n_column]):
        r, count = _number(estimate), _number(n)
        # |r| = 1 gives Fisher's degenerate [r, r]: a zero-width whisker would look like certainty, so none.
        if coefficient not in CORRELATIONS or r is None or count is None or abs(r) >= 1:
            low.append(math.nan)
            high.append(math.nan)
            continue
        lo, hi = fisher_interval(r, int(count), coefficient=coefficient, confidence_level=confidence_level)
        low.append(lo)
        high.append(hi)
    return frame.assign(low=low, high=high)


def _correlation_hover(metric, human, estimate, low, high, n, undefined, interval_label) -> str:
    line = f"<b>{esc(metric)}</b> vs {esc(human)}<br>estimate = {fmt(estimate)}"
    if np.isfinite(low) and np.isfinite(high):
        line += f"<br>{esc(interval_label)}: [{fmt(low)}, {fmt(high)}]"
    skipped = int(undefined) if pd.notna(undefined) else 0
    return line + f"<br>n = {int(n) if pd.notna(n) else 0} points" + (
        f", {skipped} undefined per-input correlations left out" if skipped else "")


def correlation_bar(frame: pd.DataFrame, *, title: str = "", interval_label: str = "95% interval",
                    columns: int = 4) -> go.Figure:
    """Each metric's correlation with the human measure, in the metric's colour, with its interval.

    One human measure: bars per metric, the value written above each bar's whisker. Several: small multiples, one
    panel per human measure (dots with whiskers, one row per metric), so eight dimensions never become a thicket
    of hatched bars. ``frame`` columns: metric, human, estimate, n, n_undefined, optionally low/high. Undefined
    correlations (NaN) get no bar/dot but an 'undefined' label, never a silent 0.
    """
    if frame is None or frame.empty:
        return empty_figure("No correlations to show")
    humans = list(dict.fromkeys(frame["human"]))
    metrics = list(dict.fromkeys(frame["metric"]))
    has_ci = {"low", "high"} <= set(frame.columns) and frame[["low", "high"]].notna().any().any()
    colours = [measure_colour(m) for m in metrics]
    y_title = "correlation" + (f" ({esc(interval_label)})" if has_ci else "")

    def arrays(human):
        part = frame[frame["human"] == human].set_index("metric").reindex(metrics)
        estimate = part["estimate"].astype(float).to_numpy()
        nan = np.full(len(metrics), np.nan)
        low = part["low"].astype(float).to_numpy() if has_ci else nan
        high = part["high"].astype(float).to_numpy() if has_ci else nan
        hover = [_correlation_hover(m, human, e, lo, hi, n, u, interval_label) for m, e, lo, hi, n, u in
                 zip(metrics, estimate, low, high, part["n"], part["n_undefined"])]
        return estimate, low, high, hover

    def whiskers(estimate, low, high) -> dict:
        return {"type": "data", "symmetric": False, "thickness": 1.5, "width": 5, "color": "#333",
                "array": np.nan_to_num(high - estimate, nan=0.0).tolist(),
                "arrayminus": np.nan_to_num(estimate - low, nan=0.0).tolist()}

    if len(humans) == 1:
        estimate, low, high, hover = arrays(humans[0])
        defined = np.isfinite(estimate)
        bar = dict(x=[esc(m) for m in metrics], y=np.where(defined, estimate, 0.0), name=esc(humans[0]),
                   marker={"color": colours, "opacity": [1.0 if d else 0.0 for d in defined]},
                   hovertext=hover, hoverinfo="text")
        if has_ci:
            bar["error_y"] = whiskers(estimate, low, high)
        fig = go.Figure(go.Bar(**bar))
        top = np.where(np.isfinite(high), high, np.where(defined, estimate, 0.0)) + 0.02
        bottom = np.where(np.isfinite(low), low, np.where(defined, estimate, 0.0)) - 0.02
        above = np.where(defined, estimate, 0.0) >= 0
        fig.add_scatter(
            x=[esc(m) for m in metrics], y=np.where(above, top, bottom).tolist(), mode="text",
            text=[fmt(e) if d else "undefined" for e, d in zip(estimate, defined)],
            textposition=["top center" if a else "bottom center" for a in above], hoverinfo="skip",
            showlegend=False, cliponaxis=False, textfont={"size": 12})
        fig.update_layout(
            title=esc(title) if title else None, showlegend=False, height=440, margin={"t": 60 if title else 20},
            yaxis={"title": y_title, "range": [-1.05, 1.15], "zeroline": True},
            xaxis={"title": "metric", "tickangle": -30 if len(metrics) > 6 else 0})
        return fig

    cols = min(columns, len(humans))
    rows = math.ceil(len(humans) / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[esc(h) for h in humans], shared_yaxes=True,
                        shared_xaxes=True, horizontal_spacing=0.02, vertical_spacing=min(0.12, 0.6 / rows))
    ys = list(range(len(metrics) - 1, -1, -1))  # the first metric at the top
    for k, human in enumerate(humans):
        estimate, low, high, hover = arrays(human)
        dots = dict(x=np.where(np.isfinite(estimate), estimate, np.nan).tolist(), y=ys, mode="markers",
                    marker={"color": colours, "size": 9}, hovertext=hover, hoverinfo="text", showlegend=False,
                    name=esc(human), customdata=[[m, human] for m in metrics])  # a click names both
        if has_ci:
            dots["error_x"] = whiskers(estimate, low, high)
        fig.add_trace(go.Scatter(**dots), row=k // cols + 1, col=k % cols + 1)
    fig.update_xaxes(range=[-1.05, 1.05], zeroline=True, zerolinecolor="#999", tickvals=[-0.5, 0, 0.5])  # no "1 -1"
    fig.update_yaxes(tickvals=ys, ticktext=[esc(m) for m in metrics], range=[-0.6, len(metrics) - 0.4],
                     showgrid=False, zeroline=False)
    for c in range(1, cols + 1):
        fig.update_xaxes(title_text=y_title if c == 1 else None, row=rows, col=c)
    fig.update_annotations(font_size=12)
    fig.update_layout(title=esc(title) if title else None, showlegend=False,
                      height=80 + rows * (70 + 26 * len(metrics)), margin={"t": 80 if title else 40})
    return fig
