"""Forest plots of confidence intervals, with the chance range and the human-ceiling rows as references.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from metaeval_ui.figures.colours import measure_colour
from metaeval_ui.figures.layout import METHOD_SYMBOLS, _number, empty_figure, esc, fmt


SORTS = ("estimate", "name", "width")


def order_metrics(frame: pd.DataFrame, sort: str = "estimate") -> list[str]:
    """Metric order for a forest plot: by the (first method's) estimate, by name, or by interval width.

    The top of the plot is the first item: highest estimate, first name, narrowest interval. Undefined
    values go last.
    """
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}; got {sort!r}")
    metrics = list(dict.fromkeys(frame["metric"]))
    if sort == "name":
        return sorted(metrics, key=str.lower)
    first = frame.drop_duplicates("metric").set_index("metric")
    if sort == "estimate":
        key = -first["estimate"].astype(float)
    else:
        widths = (frame["high"].astype(float) - frame["low"].astype(float)).groupby(frame["metric"]).mean()
        key = widths
    key = key.reindex(metrics)
    return sorted(metrics, key=lambda m: (not np.isfinite(key[m]), key[m] if np.isfinite(key[m]) else 0.0))


CHANCE_NAME = "chance (permuted scores)"


HUMAN_CEILING_COLOUR = "#8c8c8c"  # grey: a reference row, never one of the measures' colours


_CHANCE_LINE = {"color": "#444", "width": 1.5, "dash": "dash"}


_CHANCE_BAND = "rgba(120,120,120,0.16)"


def add_chance_reference(fig: go.Figure, chance: pd.DataFrame | None, positions: dict[str, float], *,
                         half: float = 0.5) -> None:
    """Draw chance baselines (docs/methods.md sec. 12) on a chart with metrics on the y axis and values on x.

    ``chance``: :func:`metaeval_ui.tables.chance_groups`'s frame (metrics, label, estimate, low, high). One row
    covering every metric is one dashed vertical line with a grey band across the chart; otherwise each metric's
    row gets its own short line and band. The line is one trace named :data:`CHANCE_NAME` (with a legend entry).
    """
    if chance is None or len(chance) == 0 or not positions:
        return
    xs: list = []
    ys: list = []
    hover: list = []
    shapes: list = []
    everyone = len(chance) == 1 and set(chance.iloc[0]["metrics"]) >= set(positions)
    bottom, top = min(positions.values()) - half, max(positions.values()) + half
    for row in chance.to_dict("records"):
        est, low, high = (_number(row[c]) for c in ("estimate", "low", "high"))
        if est is None:
            continue
        text = f"<b>chance</b>: {fmt(est)}<br>range [{fmt(low)}, {fmt(high)}]<br>{esc(row['label'])}"
        spans = [(bottom, top)] if everyone else [(positions[m] - half, positions[m] + half)
                                                  for m in row["metrics"] if m in positions]
        for y0, y1 in spans:
            if low is not None and high is not None:
                shapes.append(dict(type="rect", xref="x", yref="y", x0=low, x1=high, y0=y0, y1=y1,
                                   fillcolor=_CHANCE_BAND, line={"width": 0}, layer="below"))
            xs += [est, est, None]
            ys += [y0, y1, None]
            hover += [text, text, None]
    if shapes:  # all at once: add_shape one by one re-validated every shape so far (2 s for LLMBar's 26 judges)
        fig.update_layout(shapes=[*fig.layout.shapes, *shapes])
    fig.add_scatter(x=xs, y=ys, mode="lines", name=CHANCE_NAME, line=_CHANCE_LINE, hovertext=hover,
                    hoverinfo="text", showlegend=True)


def forest_plot(frame: pd.DataFrame, *, sort: str = "estimate", title: str = "",
                chance: pd.DataFrame | None = None) -> go.Figure:
    """Correlation estimates with confidence intervals, one row per metric, one marker per CI method.

    ``frame`` columns: metric, method, estimate, low, high, and optionally n_defined, n_resamples, n,
    confidence_level. Markers and whiskers take the metric's colour; methods differ by marker symbol and sit
    one under the other inside the metric's row, so the figure grows with metrics x methods and never overlaps.
    ``chance`` (optional, :func:`metaeval_ui.tables.chance_groups`) adds the chance baseline as a dashed line and
    band (:func:`add_chance_reference`).
    """
    if frame is None or frame.empty:
        return empty_figure("No intervals to show")
    # Human-ceiling rows (kind 'human ceiling') are references, not contenders: never sorted in, always last.
    ceiling = set(frame.loc[frame["kind"] == "human ceiling", "metric"]) if "kind" in frame else set()
    contenders = frame[~frame["metric"].isin(ceiling)]
    order = (order_metrics(contenders, sort) if not contenders.empty else []) + [
        m for m in dict.fromkeys(frame["metric"]) if m in ceiling]
    methods = list(dict.fromkeys(frame["method"]))
    n_methods = len(methods)
    row_px = max(44, 20 * n_methods + 16)  # a row holds every method's whisker with room to spare
    position = {m: len(order) - 1 - k for k, m in enumerate(order)}  # first at the top
    span = 0.0 if n_methods == 1 else min(0.7, 0.18 * (n_methods - 1))
    offsets = {m: (0.0 if n_methods == 1 else span / 2 - k * span / (n_methods - 1)) for k, m in enumerate(methods)}
    fig = go.Figure()
    for k, method in enumerate(methods):
        symbol = METHOD_SYMBOLS[k % len(METHOD_SYMBOLS)]
        fig.add_scatter(x=[None], y=[None], mode="markers", name=esc(method), legendgroup=esc(method),
                        marker={"color": "#555", "size": 9, "symbol": symbol})
        for metric, part in frame[frame["method"] == method].groupby("metric", sort=False):
            est = part["estimate"].astype(float).to_numpy()
            low = part["low"].astype(float).to_numpy()
            high = part["high"].astype(float).to_numpy()
            hover = []
            for row in part.to_dict("records"):
                lines = [f"<b>{esc(row['metric'])}</b> — {esc(method)}",
                         f"estimate = {fmt(row['estimate'], 4)}",
                         f"interval = [{fmt(row['low'], 4)}, {fmt(row['high'], 4)}]"]
                level = _number(row.get("confidence_level"))
                if level is not None:
                    lines[-1] += f" ({100 * level:g}%)"
                n_res, defined, n = (_number(row.get(c)) for c in ("n_resamples", "n_defined", "n"))
                if n_res:
                    lines.append(f"defined resamples: {int(defined or 0)} of {int(n_res)}")
                if n is not None:
                    lines.append(f"n = {int(n)}")
                hover.append("<br>".join(lines))
            colour = HUMAN_CEILING_COLOUR if metric in ceiling else measure_colour(metric)
            fig.add_scatter(
                x=np.where(np.isfinite(est), est, np.nan), y=[position[metric] + offsets[method]] * len(part),
                mode="markers", name=esc(method), legendgroup=esc(method), showlegend=False,
                marker={"color": colour, "size": 9, "symbol": symbol, "line": {"color": "white", "width": 0.5}},
                error_x={"type": "data", "symmetric": False, "array": np.nan_to_num(high - est, nan=0.0),
                         "arrayminus": np.nan_to_num(est - low, nan=0.0), "thickness": 2, "width": 4,
                         "color": colour},
                hovertext=hover, hoverinfo="text", customdata=[metric] * len(part),  # a click names the metric
            )
    shapes = [dict(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=position[m] - 0.5, y1=position[m] + 0.5,
                   fillcolor="rgba(0,0,0,0.035)", line={"width": 0}, layer="below")
              for k, m in enumerate(order) if k % 2 == 0]
    fig.update_layout(
        title=esc(title) if title else None,
        xaxis={"title": "correlation", "zeroline": True, "zerolinecolor": "#999"},
        yaxis={"tickvals": [position[m] for m in order], "ticktext": [esc(m) for m in order],
               "range": [-0.5, len(order) - 0.5], "showgrid": False, "zeroline": False},
        legend={"title": "CI method", "orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 1, "xanchor": "right"},
        height=max(260, 110 + row_px * len(order)),
        margin={"t": 80 if title else 50},
        shapes=shapes,
    )
    add_chance_reference(fig, chance, {m: y for m, y in position.items() if m not in ceiling})
    return fig
