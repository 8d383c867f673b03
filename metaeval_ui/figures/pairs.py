"""Pure plotly builders of the NAACL 2022 pages: plain data / DataFrames in, ``go.Figure`` out.

No streamlit import; unit-tested in tests/ui/test_figures_pairs.py. User-provided names (measures,
systems) are HTML-escaped with :func:`metaeval_ui.figures.esc` before they reach labels and hover text.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import math

from plotly.subplots import make_subplots

from metaeval_ui.text import pairs_count
from metaeval_ui.figures import (CORRELATION_SCALE, HUMAN_COLOUR, MUTED, PALETTE,  # noqa: F401 (re-exported)
                                 correlation_colorbar, empty_figure, esc, fmt, measure_style)

CONCORDANT = "#2ca02c"
DISCORDANT = "#d62728"
TIE = "#7f7f7f"
BAND = "rgba(255, 193, 7, 0.18)"
# The two input pools are conditions, not measures: grey and dark blue, never a measure's hue.
JUDGED_COLOUR = "#8a8a8a"
ALL_COLOUR = "#1b3a57"
TITLE_FONT = dict(size=14)
TAU_AXIS = dict(range=[-1.05, 1.05], zeroline=True, zerolinecolor="#bbb")


def fmt_percent(value: object, digits: int = 0, *, signed: bool = False) -> str:
    """A fraction as a percentage ('undefined' for NaN/None)."""
    text = fmt(value, 6)
    return text if text == "undefined" else f"{100 * float(value):{'+' if signed else ''}.{digits}f}%"


def delta_curve_figure(curve: pd.DataFrame, *, upper: float | None = None, full: float | None = None,
                       metric: str = "", colour: str | None = None) -> go.Figure:
    """rSYS-Delta(0, u) against the share of pairs with ``|dx| <= u`` (NAACL 2022 Fig. 6), with the chosen
    ``u`` marked and the full rSYS as a dotted reference line; the curve in the metric's ``colour``."""
    if curve is None or curve.empty:
        return empty_figure("No system pairs: nothing to plot")
    share = 100 * curve["share"].to_numpy(dtype=float)
    hover = [f"u = {fmt(u, 4)}<br>{n} pairs ({s:.0f}%)<br>τ = {fmt(t)}"
             for u, n, s, t in zip(curve["upper"], curve["n_pairs"], share, curve["tau"])]
    # Shapes and annotations go straight into the layout: plotly's add_hline/add_vline re-validate the
    # whole figure per call, which costs tens of milliseconds on every slider move.
    shapes, annotations = [], []
    if full is not None and np.isfinite(full):
        shapes.append(dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=full, y1=full,
                           line=dict(dash="dot", color="#555")))
        annotations.append(dict(xref="paper", x=0, yref="y", y=full, text=f"all pairs: {fmt(full)}",
                                showarrow=False, xanchor="left", yanchor="bottom"))
    if upper is not None:
        within = curve["upper"].to_numpy(float) <= upper + 1e-12 * max(1.0, abs(upper))
        selected = float(share[within].max()) if within.any() else 0.0
        shapes.append(dict(type="line", xref="x", x0=selected, x1=selected, yref="paper", y0=0, y1=1,
                           line=dict(dash="dash", color="#444")))
        annotations.append(dict(xref="x", x=selected, yref="paper", y=0, showarrow=False, xanchor="left",
                                yanchor="bottom", text=f"u = {upper:.4g} ({selected:.0f}% of pairs)"))
    trace = go.Scatter(x=share, y=curve["tau"], mode="lines+markers", name="rSYS-Δ(0, u)",
                       line=dict(color=colour or JUDGED_COLOUR, shape="hv"), marker=dict(size=5),
                       hovertext=hover, hoverinfo="text")
    fig = go.Figure(trace, layout=dict(
        title=dict(text=f"rSYS-Δ(0, u) of {esc(metric)} as u grows" if metric else None, font=TITLE_FONT),
        xaxis=dict(title="share of system pairs with |Δ metric| ≤ u (%)", range=[0, 102]),
        yaxis=dict(title="Kendall τ on those pairs", **TAU_AXIS), showlegend=False,
        margin=dict(t=60, b=50), height=430, shapes=shapes, annotations=annotations))
    return fig


def decile_labels(grid) -> tuple[list[str], list[str]]:
    """Column labels ``u = t1 (0.012)<br>5 pairs`` (the pairs with ``|dx| <= u``, ties included) and row labels
    ``l = 0``, ``l = t1 (0.012): skips 4`` (the pairs with ``|dx| < l``: bounds are inclusive, so row k keeps the
    pair at t_k); unique even with tied thresholds. ``grid`` is a :class:`metaeval_core.stats.pairs.DecileGrid`."""
    held = np.rint(np.asarray(grid.column_share, dtype=float) * grid.total_pairs).astype(int)
    upper = _distinct_texts(grid.upper)
    lower = _distinct_texts(grid.lower)
    columns = [f"u = t{c + 1} ({upper[c]})<br>{pairs_count(int(n))}" for c, n in enumerate(held)]
    rows = ["l = 0"] + [f"l = t{r} ({lower[r]}): skips {int(grid.skipped[r])}" for r in range(1, len(lower))]
    return columns, rows


def _distinct_texts(values) -> list[str]:
    """The values with 3 decimals, or more (up to 8) until different values read differently: on WMT22
    zh-en thresholds 0.00104 and 0.00134 both read '0.001' at three decimals."""
    values = [float(v) for v in values]
    for digits in range(3, 9):
        texts = [fmt(v, digits) for v in values]
        if all(texts[a] != texts[b] for a in range(len(values)) for b in range(a) if values[a] != values[b]):
            return texts
    return texts


def decile_heatmap(grid, *, metric: str = "", selected: tuple[int, int] | None = None) -> go.Figure:
    """The 10 x 10 rSYS-Delta(l, u) grid (NAACL 2022 Fig. 10): tau coloured, tau and pair count written in
    every existing cell, non-existing cells blank; ``selected`` (row, column) is outlined. ``grid`` is a
    :class:`metaeval_core.stats.pairs.DecileGrid`."""
    exists = np.asarray(grid.exists, dtype=bool)
    if grid.total_pairs == 0 or not exists.any():
        return empty_figure(f"No cell holds at least {grid.min_pairs} pairs ({grid.total_pairs} pairs in all)")
    tau = np.asarray(grid.tau, dtype=float)
    z = np.where(exists, tau, np.nan)
    z_list = [[None if not np.isfinite(v) else float(v) for v in row] for row in z]
    text = [[(f"{fmt(tau[r, c], 2)}<br>n={int(grid.n_pairs[r, c])}" if exists[r, c] else "")
             for c in range(exists.shape[1])] for r in range(exists.shape[0])]
    columns, rows = decile_labels(grid)
    fig = go.Figure(go.Heatmap(
        z=z_list, x=columns, y=rows, text=text, texttemplate="%{text}", textfont=dict(size=11),
        colorscale=CORRELATION_SCALE, zmin=-1, zmax=1, zmid=0, hoverongaps=False, xgap=2, ygap=2,
        colorbar=correlation_colorbar("kendall"), hovertemplate="%{y}, %{x}<br>%{text}<extra></extra>"))
    if selected is not None:
        r, c = selected
        fig.add_shape(type="rect", x0=c - 0.5, x1=c + 0.5, y0=r - 0.5, y1=r + 0.5, xref="x", yref="y",
                          line=dict(color="black", width=3))
    # Margins sized from the labels instead of plotly's automargin, which redraws the heatmap a second time
    # (~25 ms per render; this figure is redrawn on every band and metric change).
    left = 7 * max(len(r) for r in rows) + 40
    b = grid.bucket_size
    fig.update_layout(title=f"rSYS-Δ(l, u) of {esc(metric)}: column k holds the k·{b} closest pairs "
                            f"(b = ⌈10% of {grid.total_pairs}⌉)" if metric else None,
                      xaxis=dict(side="top", type="category", automargin=False),
                      yaxis=dict(title="l (skips the pairs closer than l)", autorange="reversed", type="category",
                                 automargin=False),
                      margin=dict(t=100, b=30, l=left, r=10), height=520, title_y=0.98)
    fig.update_layout(title_font=TITLE_FONT)
    return fig


def pair_scatter(table: pd.DataFrame, *, lower: float, upper: float, metric: str = "",
                 human: str = "") -> go.Figure:
    """Every system pair: |Δ metric| (x) vs Δ human signed so the metric's winner is on the right (y > 0:
    humans agree). Concordant / discordant / tied pairs coloured; pairs outside the band [l, u] faded."""
    if table is None or table.empty:
        return empty_figure("No system pairs: nothing to plot")
    inside = (table["abs_dx"] >= lower) & (table["abs_dx"] <= upper)
    traces = []
    for label, colour in (("concordant", CONCORDANT), ("discordant", DISCORDANT), ("tie", TIE)):
        part = table[table["agreement"] == label]
        if part.empty:
            continue
        within = inside[part.index].to_numpy()
        hover = [f"{esc(w)} > {esc(l)} by {fmt(d, 4)}<br>humans: {fmt(h, 3)} ({label})"
                 for w, l, d, h in zip(part["winner"], part["loser"], part["abs_dx"], part["dz"])]
        traces.append(go.Scatter(
            x=part["abs_dx"], y=part["dz"], mode="markers", name=f"{label} ({int(within.sum())} in band)",
            marker=dict(color=colour, size=np.where(within, 10, 6).tolist(),
                        opacity=np.where(within, 0.95, 0.3).tolist(), line=dict(width=0.5, color="white")),
            hovertext=hover, hoverinfo="text"))
    # The band and the zero line as plain layout shapes (see delta_curve_figure for why).
    shapes = [dict(type="rect", xref="x", x0=lower, x1=upper, yref="paper", y0=0, y1=1, fillcolor=BAND,
                   line=dict(width=0), layer="below"),
              dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=0, y1=0, line=dict(color="#999", width=1))]
    annotations = [dict(xref="x", x=lower, yref="paper", y=1, text=f"[l, u]: {pairs_count(int(inside.sum()))}",
                        showarrow=False, xanchor="left", yanchor="top")]
    return go.Figure(traces, layout=dict(
        title=dict(text="System pairs, metric's winner on the right", font=TITLE_FONT),
        xaxis=dict(title=f"|Δ {esc(metric)}| (metric units)", rangemode="tozero"),
        yaxis=dict(title=f"Δ {esc(human)} (metric's winner − loser)"),
        legend=dict(orientation="h", y=-0.24, yanchor="top"), margin=dict(t=60, b=100), height=430, shapes=shapes,
        annotations=annotations))


def log_ticks(low: float, high: float) -> tuple[list[float], list[str]]:
    """Readable ticks of a log axis from ``low`` to ``high``: 1-2-5 steps written in full ('10', '20', '50',
    '100', '1,000'), never plotly's '10 2 5 100 2 5'."""
    if not (np.isfinite(low) and np.isfinite(high)) or low <= 0 or high < low:
        return [], []
    values = []
    for power in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for step in (1, 2, 5):
            v = step * 10.0 ** power
            if low * 0.999 <= v <= high * 1.001:
                values.append(v)
    if len(values) > 8:  # a long range: powers of ten only
        values = [v for v in values if f"{v:g}".lstrip("0.").startswith("1")]
    return values, [f"{v:,.0f}" if v >= 1 else f"{v:g}" for v in values]


def stability_figure(frame: pd.DataFrame, *, log_x: bool = False, title: str = "",
                     human: str | None = None, columns: int = 3) -> go.Figure:
    """Mean ± 1 std of the split-sample Kendall tau against the sample size m (NAACL 2022 Fig. 3) as small
    multiples: one panel per measure, its band and mean line in the measure's colour (the human's near-black and
    dashed), the other measures' means as thin grey lines for comparison; readable ticks on a log axis.
    ``frame``: measure, m, mean, std."""
    if frame is None or frame.empty:
        return empty_figure("No stability curve to show")
    measures = list(dict.fromkeys(frame["measure"]))
    cols = min(columns, len(measures))
    rows = math.ceil(len(measures) / cols)
    names = [esc(m) + (" (human)" if m == human else "") for m in measures]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names, shared_xaxes="all", shared_yaxes="all",
                        horizontal_spacing=0.04, vertical_spacing=min(0.12, 0.5 / rows) if rows > 1 else 0.1)
    parts = {m: part.sort_values("m") for m, part in frame.groupby("measure", sort=False)}
    # Each measure's mean line with a gap after it (NaN breaks a plotly line), for the grey context below.
    gapped = {m: (np.append(part["m"].to_numpy(float), np.nan), np.append(part["mean"].to_numpy(float), np.nan))
              for m, part in parts.items()}
    for k, measure in enumerate(measures):
        row, col = k // cols + 1, k % cols + 1
        others = [gapped[other] for other in measures if other != measure]
        if others:  # context: everyone else's mean, thin and grey, as one trace (one per line was M^2 traces)
            fig.add_trace(go.Scatter(x=np.concatenate([x for x, _ in others])[:-1],
                                     y=np.concatenate([y for _, y in others])[:-1], mode="lines",
                                     line=dict(color=MUTED, width=1), connectgaps=False, hoverinfo="skip",
                                     showlegend=False), row=row, col=col)
        part = parts[measure]
        style = measure_style(measure, human=measure == human)
        m, mean, std = part["m"].to_numpy(), part["mean"].to_numpy(float), part["std"].to_numpy(float)
        fig.add_trace(go.Scatter(x=np.concatenate([m, m[::-1]]), y=np.concatenate([mean + std, (mean - std)[::-1]]),
                                 fill="toself", fillcolor=style["color"], opacity=0.2, line=dict(width=0),
                                 hoverinfo="skip", showlegend=False), row=row, col=col)
        fig.add_trace(go.Scatter(x=m, y=mean, mode="lines+markers", name=names[k], showlegend=False,
                                 line=dict(color=style["color"], dash=style["dash"], width=2),
                                 marker=dict(size=4, symbol=style["symbol"]),
                                 hovertext=[f"{names[k]}<br>m = {mm}<br>τ = {fmt(a)} ± {fmt(s)}"
                                            for mm, a, s in zip(m, mean, std)], hoverinfo="text"), row=row, col=col)
    xaxis = dict(type="log" if log_x else "linear", showgrid=True)
    if log_x:
        ms = frame["m"].to_numpy(float)
        ticks, text = log_ticks(float(np.nanmin(ms)), float(np.nanmax(ms)))
        xaxis.update(tickmode="array", tickvals=ticks, ticktext=text)
    fig.update_xaxes(**xaxis)
    fig.update_yaxes(range=[-0.05, 1.05], dtick=0.25)
    for c in range(1, cols + 1):
        fig.update_xaxes(title_text="inputs per sample (m)" + (", log scale" if log_x else ""), row=rows, col=c)
    fig.update_yaxes(title_text="τ between two samples", col=1)
    fig.update_layout(title=dict(text=esc(title), font=TITLE_FONT) if title else None, showlegend=False,
                      height=90 + 230 * rows, margin=dict(t=80 if title else 40, b=60))
    fig.update_annotations(font_size=12)
    return fig


def score_interval_figure(frame: pd.DataFrame, *, metric: str = "", pool_names: dict | None = None) -> go.Figure:
    """Per-system mean with its 95% bootstrap interval, judged vs all side by side (NAACL 2022 Fig. 2).
    ``frame``: system, pool, mean, low, high; systems ordered by their judged-pool mean."""
    if frame is None or frame.empty:
        return empty_figure("No system scores to show")
    names = pool_names or {}
    judged = frame[frame["pool"] == "judged"].sort_values("mean")
    order = list(judged["system"]) or list(dict.fromkeys(frame["system"]))
    fig = go.Figure()
    for pool, colour in (("judged", JUDGED_COLOUR), ("all", ALL_COLOUR)):
        part = frame[frame["pool"] == pool].set_index("system").reindex(order)
        if part["mean"].isna().all():
            continue
        fig.add_trace(go.Scatter(
            x=[esc(s) for s in order], y=part["mean"], mode="markers", name=names.get(pool, pool),
            offsetgroup=pool, marker=dict(color=colour, size=8),
            error_y=dict(type="data", symmetric=False, array=(part["high"] - part["mean"]).tolist(),
                         arrayminus=(part["mean"] - part["low"]).tolist(), thickness=1.5, width=3),
            hovertext=[f"{esc(s)} ({pool})<br>mean {fmt(m, 4)} [{fmt(lo, 4)}, {fmt(hi, 4)}]"
                       for s, m, lo, hi in zip(order, part["mean"], part["low"], part["high"])],
            hoverinfo="text"))
    low, high = np.nanmin(frame[["low", "mean"]].to_numpy(float)), np.nanmax(frame[["high", "mean"]].to_numpy(float))
    pad = 0.05 * (high - low) if high > low else 0.05 * max(abs(high), 1.0)
    fig.update_layout(scattermode="group", yaxis_range=[low - pad, high + pad],
                      title=f"{esc(metric)}: each system's score, 95% bootstrap intervals",
                      xaxis=dict(title="system (ordered by the judged-pool mean)", tickangle=-45),
                      yaxis_title=f"mean {esc(metric)}", legend=dict(orientation="h", y=1.08),
                      height=460, margin=dict(t=80, b=120))
    fig.update_layout(title_font=TITLE_FONT)
    return fig


def width_change_words(reduction_percent: float) -> str:
    """The one wording of a width change with all inputs, from the core's ``reduction_percent`` (positive:
    narrower): "20% wider", "4% narrower", "no change (< 0.5%)" or "undefined". The card, the chart and the table
    of Judged vs all all use it, so one quantity never appears in two sign conventions."""
    value = float(reduction_percent) if reduction_percent is not None else math.nan
    if not math.isfinite(value):
        return "undefined"
    shown = round(value)
    if shown == 0:
        return "no change (< 0.5%)"
    return f"{shown:.0f}% narrower" if shown > 0 else f"{-shown:.0f}% wider"


def width_figure(frame: pd.DataFrame, *, pool_names: dict | None = None) -> go.Figure:
    """rSYS interval width per bootstrap method, judged vs all, with the % reduction written above
    (NAACL 2022 Fig. 4). ``frame``: method, width_judged, width_all, reduction_percent."""
    if frame is None or frame.empty:
        return empty_figure("No interval widths to show")
    names = pool_names or {}
    methods = [str(m).upper() for m in frame["method"]]
    fig = go.Figure()
    for pool, colour in (("judged", JUDGED_COLOUR), ("all", ALL_COLOUR)):
        widths = frame[f"width_{pool}"].astype(float)
        fig.add_trace(go.Bar(x=methods, y=widths, name=names.get(pool, pool), marker_color=colour,
                             text=[fmt(w, 2) for w in widths], textposition="outside"))
    top = float(np.nanmax(frame[["width_judged", "width_all"]].to_numpy(float), initial=0.0))
    for method, reduction in zip(methods, frame["reduction_percent"].astype(float)):
        label = width_change_words(reduction)
        fig.add_annotation(x=method, y=top * 1.18 + 0.05, text=label, showarrow=False, font=dict(size=13))
    fig.update_layout(barmode="group", title="Width of the 95% interval of rSYS (Kendall τ)",
                      yaxis=dict(title="interval width (τ units)", range=[0, top * 1.3 + 0.1]),
                      legend=dict(orientation="h", y=-0.12, yanchor="top"), height=400, margin=dict(t=60))
    fig.update_layout(title_font=TITLE_FONT)
    return fig
