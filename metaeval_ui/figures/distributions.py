"""Score distributions: histogram and box-plot grids, one panel per measure.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from metaeval_ui.figures.colours import measure_colour
from metaeval_ui.figures.layout import empty_figure, esc


def _grid(n: int, max_cols: int = 3) -> tuple[int, int]:
    cols = min(max_cols, max(n, 1))
    return math.ceil(max(n, 1) / cols), cols


def histogram_grid(hist: pd.DataFrame, *, normalise: bool = False) -> go.Figure:
    """One small histogram per measure (own x scale: ROUGE 0-100 and Likert 1-5 do not share an axis).

    ``hist`` columns: measure, kind, left, right, count, share (as from ``metaeval_ui.tables.histograms``).
    """
    if hist is None or hist.empty:
        return empty_figure("No scores to show")
    measures = list(dict.fromkeys(hist["measure"]))
    rows, cols = _grid(len(measures))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[esc(m) for m in measures],
                        horizontal_spacing=0.08, vertical_spacing=0.5 / rows if rows > 1 else 0.1)
    for k, name in enumerate(measures):
        part = hist[hist["measure"] == name]
        colour = measure_colour(name, human=part["kind"].iloc[0] == "human")
        y = part["share"] if normalise else part["count"]
        fig.add_bar(
            x=(part["left"] + part["right"]) / 2, y=y, width=part["right"] - part["left"],
            marker={"color": colour}, name=esc(name), showlegend=False,
            customdata=np.stack([part["left"], part["right"], part["count"]], axis=-1),
            hovertemplate=f"{esc(name)}<br>[%{{customdata[0]:.3g}}, %{{customdata[1]:.3g}}]: "
                          "%{customdata[2]} cells<extra></extra>",
            row=k // cols + 1, col=k % cols + 1,
        )
    fig.update_layout(height=260 * rows, margin={"t": 40, "b": 20}, bargap=0.05)
    return fig


def box_grid(stats: pd.DataFrame) -> go.Figure:
    """One box per measure from precomputed quartiles and fences (own scale per subplot)."""
    if stats is None or stats.empty:
        return empty_figure("No scores to show")
    rows, cols = _grid(len(stats), max_cols=4)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[esc(m) for m in stats["measure"]])
    for k, row in enumerate(stats.itertuples(index=False)):
        colour = measure_colour(row.measure, human=row.kind == "human")
        fig.add_trace(
            go.Box(
                x=[esc(row.measure)], q1=[row.q1], median=[row.median], q3=[row.q3], mean=[row.mean],
                lowerfence=[row.lowerfence], upperfence=[row.upperfence], name=esc(row.measure),
                marker={"color": colour}, showlegend=False, boxpoints=False,
            ),
            row=k // cols + 1, col=k % cols + 1,
        )
    fig.update_xaxes(showticklabels=False)
    fig.update_layout(height=280 * rows, margin={"t": 40, "b": 20})
    return fig
