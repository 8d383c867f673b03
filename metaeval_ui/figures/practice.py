"""Pure plotly builders of the practitioner's pages (docs/methods.md sec. 10): plain data / DataFrames in, ``go.Figure``
out.

No streamlit import; unit-tested in tests/ui/test_figures_practice.py. User-provided names (measures, systems)
are HTML-escaped with :func:`metaeval_ui.figures.esc`; undefined values (NaN) are gaps or 'undefined', never 0.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from metaeval_ui.figures import PALETTE, add_chance_reference, dodge, empty_figure, esc, fmt, measure_colour

# An ordered quantity (the number of systems) gets an ordered ramp, not the measures' hues.
RAMP = ("#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")

AGREE_COLOUR = "#2ca02c"
DISAGREE_COLOUR = "#d62728"
TIE_COLOUR = "#7f7f7f"
CURVE_COLOUR = "#1f77b4"
BAND_FILL = "rgba(31, 119, 180, 0.18)"
FLAG_COLOUR = "#d62728"
PLAIN_COLOUR = "#9bb7d4"


def _nan_to_none(values) -> list:
    return [None if v is None or not np.isfinite(float(v)) else float(v) for v in values]


# -- is my improvement real? ----------------------------------------------------------------------------------


def improvement_figure(grid, curve, curve_low, curve_high, pair_abs_dx, pair_agreement, *, delta: float,
                       probability: float, low: float, high: float, pair_labels: Sequence[str] | None = None,
                       metric: str = "", human: str = "", confidence_level: float = 0.95,
                       jitter_seed: int = 0) -> go.Figure:
    """Agreement against |dx|: the dataset's pairs (jittered at 0 / 0.5 / 1), the fitted monotone curve with its
    pointwise band, a coin-flip line at 0.5 and the user's ``|delta|`` marked with its band.

    Beyond the largest observed |dx| the curve is held constant (a dotted extension up to ``|delta|``).
    """
    grid = np.asarray(grid, dtype=float)
    adx = np.asarray(pair_abs_dx, dtype=float)
    agreement = np.asarray(pair_agreement, dtype=float)
    if grid.size == 0 or adx.size == 0:
        return empty_figure("No usable system pair (every pair is tied in the metric)")
    target = abs(float(delta))
    fig = go.Figure()
    fig.add_scatter(x=np.concatenate([grid, grid[::-1]]).tolist(),
                    y=_nan_to_none(np.concatenate([np.asarray(curve_high, float), np.asarray(curve_low, float)[::-1]])),
                    fill="toself", fillcolor=BAND_FILL, line=dict(width=0), hoverinfo="skip",
                    name=f"{100 * confidence_level:g}% bootstrap band")
    fig.add_scatter(x=grid.tolist(), y=_nan_to_none(curve), mode="lines", line=dict(color=CURVE_COLOUR, width=3),
                    name="fitted P(humans agree)",
                    hovertemplate="|dx| = %{x:.4g}<br>P(agree) = %{y:.3f}<extra></extra>")
    if target > grid[-1]:
        fig.add_scatter(x=[grid[-1], target], y=_nan_to_none([curve[-1], curve[-1]]), mode="lines",
                        line=dict(color=CURVE_COLOUR, width=2, dash="dot"), name="held constant (extrapolated)",
                        hoverinfo="skip")
    rng = np.random.default_rng(jitter_seed)
    jitter = rng.uniform(-0.035, 0.035, adx.size)
    labels = list(pair_labels) if pair_labels is not None else [""] * adx.size
    for value, name, colour in ((1.0, "pair: humans agree", AGREE_COLOUR), (0.5, "pair: humans tied", TIE_COLOUR),
                                (0.0, "pair: humans disagree", DISAGREE_COLOUR)):
        part = np.flatnonzero(agreement == value)
        if part.size == 0:
            continue
        fig.add_scatter(x=adx[part].tolist(), y=(agreement[part] + jitter[part]).tolist(), mode="markers", name=name,
                        marker=dict(color=colour, size=6, opacity=0.55),
                        hovertext=[f"{esc(labels[i])}<br>|dx| = {adx[i]:.4g}" for i in part], hoverinfo="text")
    fig.add_vline(x=target, line=dict(color="#444", dash="dash", width=1))
    if np.isfinite(probability):
        up = high - probability if np.isfinite(high) else 0.0
        down = probability - low if np.isfinite(low) else 0.0
        fig.add_scatter(x=[target], y=[float(probability)], mode="markers", name=f"your d = {target:g}",
                        marker=dict(color="#000", size=13, symbol="diamond"),
                        error_y=dict(type="data", symmetric=False, array=[max(up, 0.0)], arrayminus=[max(down, 0.0)],
                                     thickness=2, width=8, color="#000"),
                        hovertext=[f"d = {target:g}: P(agree) = {fmt(probability)} [{fmt(low)}, {fmt(high)}]"],
                        hoverinfo="text")
    fig.add_hline(y=0.5, line=dict(color="#999", dash="dot", width=1),
                  annotation_text="coin flip", annotation_position="bottom right")
    fig.update_layout(
        xaxis=dict(title=f"|metric difference| between two systems ({esc(metric)})" if metric else "|dx|",
                   rangemode="tozero"),
        yaxis=dict(title=f"P({esc(human) or 'humans'} order them the same way)", range=[-0.1, 1.1]),
        legend=dict(orientation="h", y=-0.2, yanchor="top"), height=500, margin=dict(t=30, b=110))
    return fig


# -- how many judgments? --------------------------------------------------------------------------------------


def plan_figure(table: pd.DataFrame, *, target_width: float | None = None, target_power: float | None = None,
                recommended: tuple[int, int] | None = None, confidence_level: float = 0.95) -> go.Figure:
    """Two panels against the number of judged inputs, one line per number of systems: the mean rSYS interval
    width (with +-1 sd over trials) and the PERM-BOTH power (+-1.96 Monte Carlo se); targets as dashed lines, the
    recommended design starred.

    ``table`` columns: n_inputs, n_systems, width_mean, width_sd, power (None/NaN without a power analysis).
    """
    if table is None or table.empty:
        return empty_figure("No design to show")
    has_power = "power" in table and pd.to_numeric(table["power"], errors="coerce").notna().any()
    fig = make_subplots(rows=1, cols=2 if has_power else 1, horizontal_spacing=0.1,
                        subplot_titles=[f"{100 * confidence_level:g}% interval width (lower is better)"]
                        + (["power (higher is better)"] if has_power else []))
    groups = [(n_sys, part.sort_values("n_inputs")) for n_sys, part in table.groupby("n_systems", sort=True)]
    sizes = sorted({int(m) for m in table["n_inputs"]})
    log = sizes[-1] / max(sizes[0], 1) > 8
    # Designs with the same power at the same size (all 0 with few systems) are drawn side by side, not hidden
    # behind each other; the hover text keeps the true number of inputs.
    power_x = dodge([(part["n_inputs"], _nan_to_none(pd.to_numeric(part["power"], errors="coerce")))
                     for _, part in groups], log=log) if has_power else []
    for k, (n_sys, part) in enumerate(groups):
        n_groups = table["n_systems"].nunique()
        colour = RAMP[round(k * (len(RAMP) - 1) / max(n_groups - 1, 1))] if n_groups <= len(RAMP) else PALETTE[k % 8]
        width = pd.to_numeric(part["width_mean"], errors="coerce")
        sd = pd.to_numeric(part["width_sd"], errors="coerce").fillna(0.0)
        fig.add_scatter(x=part["n_inputs"].tolist(), y=_nan_to_none(width), mode="lines+markers",
                        name=f"{n_sys} systems", legendgroup=str(n_sys), line=dict(color=colour),
                        error_y=dict(type="data", array=sd.tolist(), thickness=1, width=3),
                        hovertemplate=f"{n_sys} systems, %{{x}} inputs<br>mean width %{{y:.3f}}<extra></extra>",
                        row=1, col=1)
        if has_power:
            power = pd.to_numeric(part["power"], errors="coerce").to_numpy(dtype=float)
            up, down = power_error(power, part["n_trials"] if "n_trials" in part else None)
            fig.add_scatter(x=power_x[k], y=_nan_to_none(power), customdata=part["n_inputs"].tolist(),
                            mode="lines+markers", name=f"{n_sys} systems", legendgroup=str(n_sys), showlegend=False,
                            line=dict(color=colour),
                            error_y=dict(type="data", symmetric=False, array=up.tolist(), arrayminus=down.tolist(),
                                         thickness=1, width=3),
                            hovertemplate=f"{n_sys} systems, %{{customdata}} inputs<br>power %{{y:.2f}}<extra></extra>",
                            row=1, col=2)
    if target_width is not None:
        fig.add_hline(y=target_width, line=dict(color="#444", dash="dash", width=1), row=1, col=1,
                      annotation_text=f"target {target_width:g}", annotation_position="top right")
    if target_power is not None and has_power:
        fig.add_hline(y=target_power, line=dict(color="#444", dash="dash", width=1), row=1, col=2,
                      annotation_text=f"target {target_power:g}", annotation_position="bottom right")
    if recommended is not None:
        hit = table[(table["n_inputs"] == recommended[0]) & (table["n_systems"] == recommended[1])]
        if not hit.empty:
            row = hit.iloc[0]
            star = dict(color="#000", size=16, symbol="star")
            fig.add_scatter(x=[int(row["n_inputs"])], y=_nan_to_none([row["width_mean"]]), mode="markers",
                            marker=star, name="recommended", legendgroup="rec", row=1, col=1,
                            hovertext=[f"recommended: {recommended[0]} inputs x {recommended[1]} systems"],
                            hoverinfo="text")
            if has_power:
                fig.add_scatter(x=[int(row["n_inputs"])], y=_nan_to_none([row["power"]]), mode="markers",
                                marker=star, showlegend=False, legendgroup="rec", row=1, col=2, hoverinfo="skip")
    fig.update_xaxes(title_text="judged inputs", type="log" if log else "linear", tickmode="array", tickvals=sizes,
                     ticktext=[str(m) for m in sizes])
    fig.update_yaxes(title_text="mean width", rangemode="tozero", row=1, col=1)
    if has_power:
        fig.update_yaxes(title_text="share of trials rejecting H0", range=[-0.03, 1.03], row=1, col=2)
    fig.update_layout(height=450, legend=dict(orientation="h", y=-0.22, yanchor="top"), margin=dict(t=70, b=110))
    return fig


def power_error(power, n_trials) -> tuple[np.ndarray, np.ndarray]:
    """± 1.96 Monte Carlo standard errors of a power estimated from ``n_trials`` trials (binomial), clipped to
    [0, 1]: (up, down); zero when the number of trials is unknown."""
    p = np.asarray(power, dtype=float)
    if n_trials is None:
        return np.zeros_like(p), np.zeros_like(p)
    n = np.asarray(pd.to_numeric(pd.Series(n_trials), errors="coerce"), dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = np.nan_to_num(1.96 * np.sqrt(p * (1 - p) / n), nan=0.0)
    return np.clip(p + half, 0, 1) - np.nan_to_num(p), np.nan_to_num(p) - np.clip(p - half, 0, 1)


# -- leave one system out -------------------------------------------------------------------------------------


def influence_figure(frame: pd.DataFrame, *, estimate: float, threshold: float, low: float = float("nan"),
                     high: float = float("nan"), intervals: bool = False, coefficient: str = "",
                     level: str = "system") -> go.Figure:
    """Horizontal bars: the change in correlation when each system is left out (flagged systems in red),
    +-threshold dashed; with ``intervals`` each leave-one-out interval (shifted by the full estimate) and the full
    data's interval as a shaded band.

    ``frame`` columns: system, without, change, low_without, high_without, flagged, reason (largest |change| first).
    """
    if frame is None or frame.empty:
        return empty_figure("No system to leave out")
    order = frame.iloc[::-1]  # the largest change at the top
    change = pd.to_numeric(order["change"], errors="coerce").to_numpy(dtype=float)
    defined = np.isfinite(change)
    flagged = order["flagged"].astype(bool).to_numpy()
    hover = [f"<b>without {esc(s)}</b><br>{esc(coefficient)} = {fmt(w)} (all systems: {fmt(estimate)})"
             f"<br>change = {fmt(c)}" + (f"<br>interval [{fmt(lo)}, {fmt(hi)}]" if intervals else "")
             + (f"<br>flagged: {esc(r)}" if f else "")
             for s, w, c, lo, hi, f, r in zip(order["system"], order["without"], change, order["low_without"],
                                              order["high_without"], flagged, order["reason"])]
    bars = dict(x=np.where(defined, change, 0.0).tolist(), y=[esc(s) for s in order["system"]], orientation="h",
                marker=dict(color=[FLAG_COLOUR if f else PLAIN_COLOUR for f in flagged],
                            opacity=[1.0 if d else 0.0 for d in defined]),
                text=[("" if intervals else fmt(c)) if d else "undefined" for c, d in zip(change, defined)],
                textposition="outside",
                hovertext=hover, hoverinfo="text", name="change")
    if intervals:
        lo = pd.to_numeric(order["low_without"], errors="coerce").to_numpy(dtype=float) - estimate
        hi = pd.to_numeric(order["high_without"], errors="coerce").to_numpy(dtype=float) - estimate
        bars["error_x"] = dict(type="data", symmetric=False, array=np.nan_to_num(hi - change, nan=0.0).tolist(),
                               arrayminus=np.nan_to_num(change - lo, nan=0.0).tolist(), thickness=1.5, width=4,
                               color="#555")
    fig = go.Figure(go.Bar(**bars))
    if intervals and np.isfinite(low) and np.isfinite(high):
        fig.add_vrect(x0=low - estimate, x1=high - estimate, fillcolor="rgba(120,120,120,0.12)", line_width=0,
                      annotation_text="full interval", annotation_position="top left")
    for x in (-threshold, threshold):
        fig.add_vline(x=x, line=dict(color="#d62728", dash="dash", width=1))
    fig.add_vline(x=0, line=dict(color="#444", width=1))
    span = np.nanmax(np.abs(np.concatenate([change[defined], [threshold * 1.2, 0.05]])))
    if intervals:
        ends = np.concatenate([lo, hi, [low - estimate, high - estimate]])
        if np.isfinite(ends).any():
            span = max(span, float(np.nanmax(np.abs(ends))))
    fig.update_layout(
        xaxis=dict(title=f"change in {esc(coefficient)} ({esc(level)} level) when the system is left out",
                   range=[-1.25 * span, 1.25 * span]),
        yaxis=dict(title=None, automargin=True), showlegend=False,
        height=max(300, 90 + 24 * len(frame)), margin=dict(t=30, b=50))
    return fig


# -- significance clusters ------------------------------------------------------------------------------------


def clusters_figure(frame: pd.DataFrame, *, coefficient: str = "", human: str = "",
                    chance: pd.DataFrame | None = None) -> go.Figure:
    """Each metric's correlation, best at the top, coloured (and boxed) by significance cluster.

    ``frame`` columns: cluster (1 = best), metric, estimate (sorted best first). ``chance`` (optional,
    :func:`metaeval_ui.tables.chance_groups`) adds the chance level as a dashed line and band.
    """
    if frame is None or frame.empty:
        return empty_figure("No clusters to show")
    frame = frame.reset_index(drop=True)
    n = len(frame)
    y = list(range(n - 1, -1, -1))
    fig = go.Figure()
    for c, part in frame.groupby("cluster", sort=True):
        rows = part.index.to_numpy()
        est = pd.to_numeric(part["estimate"], errors="coerce").to_numpy(dtype=float)
        # Markers in each metric's own colour; clusters are the alternating grey boxes with their number.
        fig.add_scatter(x=_nan_to_none(est), y=[y[i] for i in rows], mode="markers+text", name=f"cluster {int(c)}",
                        marker=dict(color=[measure_colour(m) for m in part["metric"]], size=12,
                                    line=dict(color="white", width=1)),
                        text=[fmt(e) for e in est], textposition="middle right", showlegend=False,
                        hovertext=[f"<b>{esc(m)}</b><br>cluster {int(c)}<br>{esc(coefficient)} = {fmt(e)}"
                                   for m, e in zip(part["metric"], est)], hoverinfo="text")
        top = max(y[i] for i in rows) + 0.45
        fig.add_hrect(y0=min(y[i] for i in rows) - 0.45, y1=top, fillcolor="#000000",
                      opacity=0.09 if int(c) % 2 else 0.03, line_width=0)
        fig.add_annotation(xref="paper", x=1.01, y=top - 0.05, yanchor="top", xanchor="left", showarrow=False,
                           text=f"cluster {int(c)}", font=dict(size=11, color="#555"))
    add_chance_reference(fig, chance, {m: y[i] for i, m in enumerate(frame["metric"])}, half=0.45)
    values = [frame["estimate"]] + ([] if chance is None or chance.empty else [chance["low"], chance["high"]])
    finite = pd.to_numeric(pd.concat(values, ignore_index=True), errors="coerce").dropna()
    low, high = (float(finite.min()), float(finite.max())) if not finite.empty else (-1.0, 1.0)
    pad = max(high - low, 0.1)
    fig.update_layout(
        xaxis=dict(title=f"{esc(coefficient)} with {esc(human)}" if coefficient else "correlation",
                   range=[low - 0.08 * pad, high + 0.2 * pad]),
        yaxis=dict(tickvals=y, ticktext=[esc(m) for m in frame["metric"]], range=[-0.7, n - 0.3], automargin=True,
                   zeroline=False),
        showlegend=False, height=max(260, 90 + 32 * n), margin=dict(t=20, b=70, r=80))
    return fig
