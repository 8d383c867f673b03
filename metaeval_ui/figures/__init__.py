"""Pure plotly figure builders: plain data / DataFrames in, ``go.Figure`` out.

No streamlit import; every builder is unit-tested in tests/ui/test_figures.py. User-provided names
(measures, systems) are HTML-escaped before they reach plotly's pseudo-HTML labels and hover text.
"""

from __future__ import annotations

import html
import math
from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
HUMAN_COLOUR = "#d62728"
METRIC_COLOUR = "#1f77b4"


def esc(text: object) -> str:
    """HTML-escape user text for plotly labels/hover (plotly renders a subset of HTML tags)."""
    return html.escape(str(text), quote=False)


def fmt(value: object, digits: int = 3) -> str:
    """A number for display; 'undefined' for NaN/None."""
    if value is None:
        return "undefined"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return "undefined"
    return f"{number:.{digits}f}"


def fmt_p(p: object) -> str:
    if p is None or not np.isfinite(float(p)):
        return "undefined"
    p = float(p)
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def _number(value: object) -> float | None:
    """A finite float, or None for missing/NaN/non-numeric values."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def empty_figure(message: str) -> go.Figure:
    """A blank figure holding one centred message (an explicit empty state)."""
    fig = go.Figure()
    fig.add_annotation(text=esc(message), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                       font={"size": 14})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=200, margin={"l": 10, "r": 10, "t": 10, "b": 10})
    return fig


# -- correlations ------------------------------------------------------------------------------------------


def correlation_bar(frame: pd.DataFrame, *, title: str = "") -> go.Figure:
    """Bars of ``estimate`` per metric (grouped by human measure when there are several).

    ``frame`` columns: metric, human, estimate, n, n_undefined (and optionally level, coefficient).
    Undefined correlations (NaN) get no bar but an 'undefined' label, never a silent 0.
    """
    if frame is None or frame.empty:
        return empty_figure("No correlations to show")
    fig = go.Figure()
    humans = list(dict.fromkeys(frame["human"]))
    metrics = list(dict.fromkeys(frame["metric"]))
    for k, human in enumerate(humans):
        part = frame[frame["human"] == human].set_index("metric").reindex(metrics)
        estimate = part["estimate"].astype(float).to_numpy()
        defined = np.isfinite(estimate)
        hover = [
            f"<b>{esc(m)}</b> vs {esc(human)}<br>estimate = {fmt(e)}<br>n = {int(n) if pd.notna(n) else 0}"
            f" points, {int(u) if pd.notna(u) else 0} undefined pieces skipped"
            for m, e, n, u in zip(metrics, estimate, part["n"], part["n_undefined"])
        ]
        fig.add_bar(
            x=[esc(m) for m in metrics],
            y=np.where(defined, estimate, 0.0),
            name=esc(human),
            marker={"color": PALETTE[k % len(PALETTE)], "opacity": [1.0 if d else 0.0 for d in defined]},
            text=[fmt(e) if d else "undefined" for e, d in zip(estimate, defined)],
            textposition="outside",
            hovertext=hover,
            hoverinfo="text",
        )
    fig.update_layout(
        barmode="group",
        title=esc(title) if title else None,
        yaxis={"title": "correlation", "range": [-1.05, 1.15], "zeroline": True},
        xaxis={"title": "metric"},
        legend={"title": "human measure"},
        showlegend=len(humans) > 1,
        height=420,
        margin={"t": 50 if title else 20},
    )
    return fig


# -- distributions -----------------------------------------------------------------------------------------


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
        colour = HUMAN_COLOUR if part["kind"].iloc[0] == "human" else METRIC_COLOUR
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
        colour = HUMAN_COLOUR if row.kind == "human" else METRIC_COLOUR
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


# -- confidence intervals ----------------------------------------------------------------------------------

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


def forest_plot(frame: pd.DataFrame, *, sort: str = "estimate", title: str = "") -> go.Figure:
    """Correlation estimates with confidence intervals, one row per metric, one marker per CI method.

    ``frame`` columns: metric, method, estimate, low, high, and optionally n_defined, n_resamples, n,
    confidence_level. Several methods are drawn side by side with small vertical offsets.
    """
    if frame is None or frame.empty:
        return empty_figure("No intervals to show")
    order = order_metrics(frame, sort)
    position = {m: len(order) - 1 - k for k, m in enumerate(order)}  # first at the top
    methods = list(dict.fromkeys(frame["method"]))
    span = 0.6
    offsets = {m: (0.0 if len(methods) == 1 else span / 2 - k * span / (len(methods) - 1))
               for k, m in enumerate(methods)}
    fig = go.Figure()
    for k, method in enumerate(methods):
        part = frame[frame["method"] == method]
        est = part["estimate"].astype(float).to_numpy()
        low = part["low"].astype(float).to_numpy()
        high = part["high"].astype(float).to_numpy()
        y = [position[m] + offsets[method] for m in part["metric"]]
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
        fig.add_scatter(
            x=np.where(np.isfinite(est), est, np.nan), y=y, mode="markers", name=esc(method),
            marker={"color": PALETTE[k % len(PALETTE)], "size": 9, "symbol": ("circle", "square", "diamond",
                                                                            "triangle-up", "x")[k % 5]},
            error_x={"type": "data", "symmetric": False, "array": np.nan_to_num(high - est, nan=0.0),
                     "arrayminus": np.nan_to_num(est - low, nan=0.0), "thickness": 2, "width": 4},
            hovertext=hover, hoverinfo="text",
        )
    fig.update_layout(
        title=esc(title) if title else None,
        xaxis={"title": "correlation", "zeroline": True},
        yaxis={"tickvals": [position[m] for m in order], "ticktext": [esc(m) for m in order],
               "range": [-0.7, len(order) - 0.3]},
        legend={"title": "CI method"},
        height=max(260, 60 + 40 * len(order)),
        margin={"t": 50 if title else 20},
    )
    return fig


# -- significance ------------------------------------------------------------------------------------------


def comparison_sentence(
    better: str, worse: str, human: str, *, delta: float, pvalue: float, method: str, n_resamples: int | None,
    significant: bool, significant_corrected: bool, alpha: float, correction: str, family: str,
    alternative: str = "greater",
) -> str:
    """One comparison in words (plain text; escape before rendering as HTML)."""
    if alternative == "two-sided":
        claim = f"{better} and {worse} correlate differently with {human}"
    else:
        claim = f"{better} correlates better with {human} than {worse}"
    detail = f"{method}" + (f", {n_resamples} resamples" if n_resamples else "")
    head = f"H1: {claim}: delta = {fmt(delta)}, p = {fmt_p(pvalue)} ({detail})."
    if not significant:
        return f"{head} Not significant at alpha = {alpha:g}."
    if correction in ("none", "", None):
        return f"{head} Significant at alpha = {alpha:g} (no correction)."
    fam = {"row": "the row family", "table": "the whole table", "all": "the whole table"}.get(family, family)
    after = "still significant" if significant_corrected else "not significant any more"
    return f"{head} Significant at alpha = {alpha:g}; {after} after {correction_label(correction)} over {fam}."


def correction_label(correction: str) -> str:
    return {"bonferroni": "Bonferroni", "holm": "Holm", "bh": "Benjamini-Hochberg", "fdr_bh": "Benjamini-Hochberg",
            "benjamini-hochberg": "Benjamini-Hochberg", "none": "no correction"}.get(str(correction).lower(),
                                                                                    str(correction))


def pvalue_heatmap(
    metrics: Sequence[str],
    pvalue: np.ndarray,
    significant: np.ndarray,
    significant_corrected: np.ndarray,
    *,
    hover: Sequence[Sequence[str]] | None = None,
    alpha: float = 0.05,
    title: str = "",
) -> go.Figure:
    """Metric x metric p-values (row better than column).

    A cell is **filled** (coloured by p) when p < alpha and **outlined** (a black rectangle shape) when it
    is still significant after the multiple-comparison correction. Non-significant cells stay blank with
    their p written in grey; the diagonal is empty.
    """
    n = len(metrics)
    if n == 0:
        return empty_figure("No comparisons to show")
    p = np.asarray(pvalue, dtype=float).reshape(n, n)
    sig = np.asarray(significant, dtype=bool).reshape(n, n)
    cor = np.asarray(significant_corrected, dtype=bool).reshape(n, n)
    names = [esc(m) for m in metrics]
    z = np.where(sig & np.isfinite(p), p, np.nan)
    text = np.where(np.eye(n, dtype=bool), "", np.vectorize(fmt_p)(p)) if n else np.empty((0, 0))
    custom = np.array([[esc(hover[i][j]) if hover is not None else "" for j in range(n)] for i in range(n)],
                      dtype=object)
    fig = go.Figure(
        go.Heatmap(
            z=z, x=list(range(n)), y=list(range(n)), zmin=0.0, zmax=alpha,
            colorscale=[[0.0, "#08306b"], [0.5, "#4292c6"], [1.0, "#c6dbef"]],
            colorbar={"title": "p (filled: p < alpha)"}, xgap=2, ygap=2, hoverongaps=True,
            customdata=custom,
            hovertemplate=("%{customdata}<extra></extra>" if hover is not None else "p = %{z}<extra></extra>"),
        )
    )
    text_colour = [["white" if sig[i, j] and p[i, j] < alpha / 2 else "#444" for j in range(n)] for i in range(n)]
    fig.add_scatter(
        x=[j for i in range(n) for j in range(n)], y=[i for i in range(n) for _ in range(n)],
        text=[text[i, j] for i in range(n) for j in range(n)], mode="text", hoverinfo="skip", showlegend=False,
        textfont={"color": [text_colour[i][j] for i in range(n) for j in range(n)], "size": 11},
    )
    for i in range(n):
        for j in range(n):
            if cor[i, j] and i != j:
                fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5,
                              line={"color": "black", "width": 3}, fillcolor="rgba(0,0,0,0)", layer="above")
    fig.update_layout(
        title=esc(title) if title else None,
        xaxis={"tickvals": list(range(n)), "ticktext": names, "title": "column metric (Y)", "side": "bottom",
               "showgrid": False, "zeroline": False, "range": [-0.5, n - 0.5]},
        yaxis={"tickvals": list(range(n)), "ticktext": names, "title": "row metric (X): is X better than Y?",
               "autorange": "reversed", "showgrid": False, "zeroline": False},
        plot_bgcolor="#f4f4f4",
        height=max(320, 120 + 45 * n),
        margin={"t": 50 if title else 20},
    )
    return fig
