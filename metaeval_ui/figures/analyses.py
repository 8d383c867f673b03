"""Pure plotly builders of the paper-analysis pages (docs/methods.md sec. 7-9): plain data / DataFrames in,
``go.Figure`` out.

No streamlit import; unit-tested in tests/ui/test_figures_analyses.py. User-provided names (measures,
systems, groups) are HTML-escaped with :func:`metaeval_ui.figures.esc` before they reach labels and hover text;
undefined values (NaN) are drawn as gaps or 'undefined' labels, never as 0.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from metaeval_ui.figures import (CORRELATION_SCALE, HIGHLIGHT_LINE, HUMAN_COLOUR, MUTED, PALETTE,
                                 correlation_colorbar, dodge, empty_figure, esc, fmt, measure_colour, measure_style)

CORR_AXIS = dict(range=[-1.05, 1.05], zeroline=True, zerolinecolor="#bbb")
# Two conditions that are not measures (all summaries vs the high-scoring range, a pooled line, a nominal level):
# grey and near-black, never a measure's hue and never red.
ALL_COLOUR = "#8a8a8a"
TOP_COLOUR = "#1b3a57"


def _colour(k: int) -> str:
    return PALETTE[k % len(PALETTE)]


def _none_for_nan(values) -> list:
    return [None if v is None or not np.isfinite(float(v)) else float(v) for v in values]


# -- top-k ----------------------------------------------------------------------------------------------------


def topk_figure(frame: pd.DataFrame, *, coefficient: str = "", human: str = "") -> go.Figure:
    """One line per metric (in the metric's colour): the system-level correlation among the top-k systems, k from N
    (left) down to 3, with each point's interval as a whisker when ``frame`` has ``low``/``high``.

    ``frame`` columns: metric, k, estimate (NaN = undefined: a gap), n, optionally low/high. The metrics' whiskers
    are spread a little along x so they do not hide each other.
    """
    if frame is None or frame.empty:
        return empty_figure("No top-k correlations to show")
    fig = go.Figure()
    groups = list(frame.groupby("metric", sort=False))
    has_ci = {"low", "high"} <= set(frame.columns) and frame[["low", "high"]].notna().any().any()
    spread = 0.3 if len(groups) > 1 else 0.0
    for q, (metric, part) in enumerate(groups):
        part = part.sort_values("k", ascending=False)
        shift = 0.0 if len(groups) == 1 else spread * (q / (len(groups) - 1) - 0.5)
        est = part["estimate"].to_numpy(float)
        low = part["low"].to_numpy(float) if has_ci else np.full(len(part), np.nan)
        high = part["high"].to_numpy(float) if has_ci else np.full(len(part), np.nan)
        hover = [f"{esc(metric)}<br>top {k}: {fmt(e)}" + (f" [{fmt(lo)}, {fmt(hi)}]" if np.isfinite(lo) else "")
                 + f" (n = {n})" for k, e, lo, hi, n in zip(part["k"], est, low, high, part["n"])]
        style = measure_style(metric)
        trace = dict(x=(part["k"].to_numpy(float) + shift).tolist(), y=_none_for_nan(est), mode="lines+markers",
                     name=esc(metric), line=dict(color=style["color"], dash=style["dash"], width=2),
                     marker=dict(size=6, symbol=style["symbol"]), hovertext=hover, hoverinfo="text",
                     connectgaps=False)
        if has_ci:
            trace["error_y"] = dict(type="data", symmetric=False, array=np.nan_to_num(high - est, nan=0.0).tolist(),
                                    arrayminus=np.nan_to_num(est - low, nan=0.0).tolist(), thickness=1, width=2,
                                    color=style["color"])
        fig.add_trace(go.Scatter(**trace))
    kmax, kmin = int(frame["k"].max()), int(frame["k"].min())
    fig.update_layout(
        xaxis=dict(title="k (top systems by mean human score)", range=[kmax + 0.6, kmin - 0.6],  # N on the left
                   dtick=1 if kmax <= 30 else None),
        yaxis=dict(title=(f"{esc(coefficient)} with {esc(human)}" if coefficient else "correlation")
                   + ("<br>(whiskers: 95% Fisher interval)" if has_ci else ""), **CORR_AXIS),
        legend=dict(orientation="h", y=-0.22, yanchor="top"), margin=dict(t=30, b=110), height=500)
    return fig


# -- pairwise F1 ----------------------------------------------------------------------------------------------


def f1_bar(frame: pd.DataFrame, *, selected: str | None = None) -> go.Figure:
    """Horizontal bars of each metric's weighted F1 (best at the top); ``selected`` is outlined.

    ``frame`` columns: metric, f1 (NaN = undefined: no bar, an 'undefined' label).
    """
    if frame is None or frame.empty:
        return empty_figure("No F1 scores to show")
    ordered = frame.assign(_key=frame["f1"].fillna(-1.0)).sort_values("_key", ascending=True, kind="stable")
    values = _none_for_nan(ordered["f1"])
    names = [esc(m) for m in ordered["metric"]]
    # The selected metric keeps its own colour (and an outline); the others are muted: no "best" red.
    colours = [measure_colour(m) if m == selected or selected is None else MUTED for m in ordered["metric"]]
    widths = [HIGHLIGHT_LINE["width"] if m == selected else 0 for m in ordered["metric"]]
    fig = go.Figure(go.Bar(x=[v if v is not None else 0 for v in values], y=names, orientation="h",
                           marker=dict(color=colours, opacity=[1.0 if v is not None else 0.0 for v in values],
                                       line=dict(color=HIGHLIGHT_LINE["color"], width=widths)),
                           text=[fmt(v) for v in values], textposition="outside", hoverinfo="text",
                           hovertext=[f"{n}: weighted F1 = {fmt(v)}" for n, v in zip(names, values)]))
    fig.update_layout(xaxis=dict(title="weighted F1 vs the human pair labels", range=[0, 1.1]),
                      yaxis=dict(title=None, type="category"), margin=dict(t=20, b=50, l=10),
                      height=max(220, 26 * len(ordered) + 90), showlegend=False)
    return fig


# -- correlation matrix ---------------------------------------------------------------------------------------


def matrix_heatmap(measures: Sequence[str], matrix, *, n=None, humans: Sequence[str] = (), title: str = "",
                   annotate: bool | None = None, coefficient: str = "") -> go.Figure:
    """A symmetric correlation heatmap (the app's diverging scale: blue positive, red negative, centred on 0; the
    colour bar titled by ``coefficient``); human measures' labels in bold.

    Undefined cells stay blank with 'undefined' in the hover. Cell values are printed when there are at most
    20 measures (or when ``annotate`` says so).
    """
    values = np.asarray(matrix, dtype=float)
    if len(measures) == 0 or values.size == 0:
        return empty_figure("No measures to correlate")
    labels = [f"<b>{esc(m)}</b>" if m in set(humans) else esc(m) for m in measures]
    counts = np.zeros_like(values, dtype=int) if n is None else np.asarray(n, dtype=int)
    hover = [[f"{esc(a)} × {esc(b)}<br>{fmt(values[i, j])} (n = {counts[i, j]})"
              for j, b in enumerate(measures)] for i, a in enumerate(measures)]
    z = [[None if not np.isfinite(v) else float(v) for v in row] for row in values]
    show_text = len(measures) <= 20 if annotate is None else annotate
    text = [["" if v is None else f"{v:.2f}" for v in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=labels, zmin=-1, zmax=1, zmid=0, colorscale=CORRELATION_SCALE,
        text=text if show_text else None, texttemplate="%{text}" if show_text else None,
        textfont=dict(size=11), hovertext=hover, hoverinfo="text", colorbar=correlation_colorbar(coefficient)))
    size = max(380, min(1100, 24 * len(measures) + 220))
    fig.update_layout(title=esc(title) if title else None, height=size, margin=dict(t=50 if title else 20, l=10),
                      yaxis=dict(autorange="reversed", type="category"),
                      xaxis=dict(type="category", tickangle=-45))
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        axis.tickfont = dict(size=11)
    if humans:
        fig.add_annotation(text="<b>bold</b>: human measures", showarrow=False, xref="paper", yref="paper",
                           x=0.0, y=1.0, xanchor="left", yanchor="bottom", yshift=4,
                           font=dict(color=HUMAN_COLOUR, size=11))
    return fig


# -- annotators -----------------------------------------------------------------------------------------------


def alpha_bar(alphas: pd.DataFrame) -> go.Figure:
    """Grouped bars: Krippendorff's alpha per dimension (x, 'all' last), one bar colour per annotator group."""
    if alphas is None or alphas.empty:
        return empty_figure("No per-annotator scores: no agreement to show")
    dims = list(dict.fromkeys(d for d in alphas["dimension"] if d != "all"))
    dims += ["all"] if (alphas["dimension"] == "all").any() else []
    fig = go.Figure()
    for g, (group, part) in enumerate(alphas.groupby("group", sort=False)):
        part = part.set_index("dimension").reindex(dims)
        values = _none_for_nan(part["alpha"])
        fig.add_trace(go.Bar(
            x=[esc(d) for d in dims], y=values, name=esc(group), marker_color=_colour(g),
            text=[fmt(v, 2) for v in values], textposition="outside", textangle=0, cliponaxis=False,
            hoverinfo="text",
            hovertext=[f"{esc(group)} · {esc(d)}: α = {fmt(v)}<br>{fmt(u, 0)} units" for d, v, u in
                       zip(dims, values, part["n_units"])]))
    finite = alphas["alpha"].to_numpy(dtype=float)
    finite = finite[np.isfinite(finite)]
    low = min(0.0, float(finite.min()) if finite.size else 0.0) - 0.05
    fig.update_layout(barmode="group", yaxis=dict(title="Krippendorff's α (interval)", range=[low, 1.12]),
                      xaxis=dict(title="dimension"), legend=dict(orientation="h", y=1.02, yanchor="bottom"),
                      margin=dict(t=50, b=50), height=420, bargroupgap=0.12,
                      uniformtext=dict(minsize=11, mode="hide"))
    return fig


def group_correlation_bar(frame: pd.DataFrame, *, coefficient: str) -> go.Figure:
    """Grouped bars: correlation of two groups' mean scores per dimension (x), one bar colour per level."""
    part = frame[frame["coefficient"] == coefficient] if frame is not None and not frame.empty else frame
    if part is None or part.empty:
        return empty_figure("No dimension is scored by two annotator groups")
    fig = go.Figure()
    for k, (level, rows) in enumerate(part.groupby("level", sort=False)):
        labels = [f"{esc(d)}<br>{esc(a)} vs {esc(b)}" for d, a, b in zip(rows["dimension"], rows["group_a"],
                                                                          rows["group_b"])]
        values = _none_for_nan(rows["estimate"])
        fig.add_trace(go.Bar(x=labels, y=values, name=esc(level), marker_color=_colour(k),
                             text=[fmt(v, 2) for v in values], textposition="outside", textangle=0,
                             cliponaxis=False, hoverinfo="text",
                             hovertext=[f"{lab}<br>{esc(level)}: {fmt(v)} (n = {n})"
                                        for lab, v, n in zip(labels, values, rows["n"])]))
    fig.update_layout(barmode="group", yaxis=dict(title=f"{esc(coefficient)} of the group means", **CORR_AXIS),
                      legend=dict(orientation="h", y=1.02, yanchor="bottom", title="level"), margin=dict(t=50, b=60),
                      height=420, bargroupgap=0.12, uniformtext=dict(minsize=11, mode="hide"))
    return fig


# -- high-scoring range ---------------------------------------------------------------------------------------


def dumbbell(taus: pd.DataFrame, *, outputs: str = "outputs") -> go.Figure:
    """Metric-pair Kendall tau on all outputs (``outputs``: the dataset's word, e.g. summaries) vs on the
    high-scoring range, one row per pair, joined by a line."""
    if taus is None or taus.empty:
        return empty_figure("Pick at least two metrics")
    labels = [f"{esc(a)} · {esc(b)}" for a, b in zip(taus["metric_a"], taus["metric_b"])]
    xs, ys = [], []
    for label, a, t in zip(labels, _none_for_nan(taus["tau_all"]), _none_for_nan(taus["tau_top"])):
        if a is not None and t is not None:
            xs += [a, t, None]
            ys += [label, label, None]
    fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#bbb", width=3), hoverinfo="skip",
                               showlegend=False))
    for column, name, colour, n in (("tau_all", f"all {outputs}", ALL_COLOUR, "n_inputs_all"),
                                    ("tau_top", "high-scoring range", TOP_COLOUR, "n_inputs_top")):
        values = _none_for_nan(taus[column])
        fig.add_trace(go.Scatter(
            x=values, y=labels, mode="markers", name=name, marker=dict(color=colour, size=11),
            hoverinfo="text", hovertext=[f"{lab}<br>{name}: τ = {fmt(v)} (mean over {c} inputs)"
                                         for lab, v, c in zip(labels, values, taus[n])]))
    fig.update_layout(xaxis=dict(title="Kendall τ between the two metrics (mean over inputs)", **CORR_AXIS),
                      yaxis=dict(type="category", autorange="reversed", title=None),
                      legend=dict(orientation="h", y=1.08), margin=dict(t=40, b=50, l=10),
                      height=max(260, 30 * len(taus) + 120))
    return fig


def disagreement_figure(curve: pd.DataFrame, *, output: str = "output") -> go.Figure:
    """Disagreement (share of ``output`` pairs the two metrics order differently) vs normalised mean score:
    one thin line per metric pair and the pair-weighted mean in bold."""
    if curve is None or curve.empty:
        return empty_figure("No disagreement curve to show")
    mids = (curve["bin_low"] + curve["bin_high"]) / 2.0
    curve = curve.assign(mid=mids)
    # The thin lines as plain dicts, validated once by the Figure: a go.Scatter per line, validated again by
    # add_trace, took ~0.4 s for WMT23's 500 pairs of measures (the same figure).
    fig = go.Figure(data=[dict(
        type="scatter", x=part["mid"].tolist(), y=_none_for_nan(part["disagreement"]), mode="lines",
        name=f"{esc(a)} · {esc(b)}", line=dict(width=1, color="rgba(100,100,100,0.35)"), showlegend=False,
        hoverinfo="text",
        hovertext=[f"{esc(a)} · {esc(b)}<br>score {lo:.2f}–{hi:.2f}: {fmt(d)} of {n} pairs"
                   for lo, hi, d, n in zip(part["bin_low"], part["bin_high"], part["disagreement"], part["n_pairs"])])
        for (a, b), part in curve.groupby(["metric_a", "metric_b"], sort=False)])
    weighted = curve.assign(w=curve["disagreement"].fillna(0) * curve["n_pairs"])
    pooled = weighted.groupby("mid", sort=True).agg(w=("w", "sum"), n=("n_pairs", "sum")).reset_index()
    share = np.where(pooled["n"] > 0, pooled["w"] / pooled["n"].where(pooled["n"] > 0, 1), np.nan)
    fig.add_trace(go.Scatter(x=pooled["mid"].tolist(), y=_none_for_nan(share), mode="lines+markers",
                             name="all metric pairs", line=dict(color=TOP_COLOUR, width=3),
                             hoverinfo="text", hovertext=[f"all pairs, score ≈ {m:.2f}: {fmt(s)} of {int(n)} pairs"
                                                          for m, s, n in zip(pooled["mid"], share, pooled["n"])]))
    fig.update_layout(xaxis=dict(title=f"normalised mean score of the {output} pair", range=[0, 1]),
                      yaxis=dict(title="share of pairs ordered differently", range=[0, None], rangemode="tozero"),
                      legend=dict(orientation="h", y=1.08), margin=dict(t=40, b=50), height=400)
    return fig


# -- normality ------------------------------------------------------------------------------------------------


def normality_bar(frame: pd.DataFrame, *, alpha: float = 0.05) -> go.Figure:
    """Share of inputs rejecting normality per measure (bars in the measure's colour, humans near-black); the
    nominal alpha as a line."""
    if frame is None or frame.empty:
        return empty_figure("No measures to test")
    values = _none_for_nan(frame["input_share"])
    colours = [measure_colour(m, human=k == "human") for m, k in zip(frame["measure"], frame["kind"])]
    names = [esc(m) for m in frame["measure"]]
    fig = go.Figure(go.Bar(x=names, y=[v if v is not None else 0 for v in values], marker_color=colours,
                           marker_opacity=[1.0 if v is not None else 0.0 for v in values],
                           hoverinfo="text", hovertext=[f"{n}: {fmt(v)} of {t} inputs" for n, v, t in
                                                        zip(names, values, frame["input_tested"])]))
    fig.add_hline(y=alpha, line=dict(dash="dot", color="#555"))
    fig.update_layout(yaxis=dict(title=f"share of inputs with p < {alpha:g}<br>(dotted: {alpha:g}, expected if normal)",
                                 range=[0, 1.05]),
                      xaxis=dict(type="category", tickangle=-45), margin=dict(t=30, b=60), height=380,
                      showlegend=False)
    return fig


# -- simulations ----------------------------------------------------------------------------------------------


def _mc_error(frame: pd.DataFrame, value: str) -> tuple[np.ndarray, np.ndarray]:
    """± 1.96 Monte Carlo standard errors of a share (column ``se``), clipped to [0, 1]: (up, down)."""
    v = frame[value].to_numpy(float)
    se = frame["se"].to_numpy(float) if "se" in frame else np.full(len(frame), np.nan)
    half = np.nan_to_num(1.96 * se, nan=0.0)
    return np.clip(v + half, 0, 1) - v, v - np.clip(v - half, 0, 1)


def coverage_figure(frame: pd.DataFrame, *, target: float = 0.95) -> go.Figure:
    """Coverage per CI method (bars) with its Monte Carlo error (whiskers: ± 1.96 standard errors of the share,
    from the column ``se`` when present) against the nominal level (a dashed line). Columns: method, coverage."""
    if frame is None or frame.empty:
        return empty_figure("No coverage results yet")
    values = _none_for_nan(frame["coverage"])
    names = [esc(m) for m in frame["method"]]
    up, down = _mc_error(frame, "coverage")
    se = frame["se"] if "se" in frame else [None] * len(frame)
    fig = go.Figure(go.Bar(
        x=names, y=[v if v is not None else 0 for v in values], marker_color=PALETTE[0],
        error_y=dict(type="data", symmetric=False, array=up.tolist(), arrayminus=down.tolist(), thickness=1.5,
                     width=6, color="#111"),
        text=[fmt(v) for v in values], textposition="inside", insidetextanchor="start", textangle=0,
        textfont=dict(color="white"), hoverinfo="text",
        hovertext=[f"{n}: coverage {fmt(v)} ± {fmt(e)} (Monte Carlo se)" for n, v, e in zip(names, values, se)]))
    fig.add_hline(y=target, line=dict(dash="dash", color=TOP_COLOUR), annotation_text=f"nominal {target:g}",
                  annotation_position="top left")
    fig.update_layout(yaxis=dict(title="coverage (whiskers: ± 1.96 Monte Carlo se)", range=[0, 1.12]),
                      xaxis=dict(type="category"), margin=dict(t=30, b=40), height=360, showlegend=False)
    return fig


def power_figure(frame: pd.DataFrame, *, degrade: str = "", output: str = "output") -> go.Figure:
    """Power curves: one line per test, power (share of trials rejecting H0) against the degradation k, with a
    band of ± 1.96 Monte Carlo standard errors (column ``se``, when present).

    Columns: test, k, power (and optionally se). ``degrade`` names the x axis.
    """
    if frame is None or frame.empty:
        return empty_figure("No power results yet")
    fig = go.Figure()
    groups = [(test, part.sort_values("k")) for test, part in frame.groupby("test", sort=False)]
    # Tests with the same power at the same k (all 0 for a weak degradation) are drawn side by side, not on top of
    # each other; the hover text keeps the true k.
    positions = dodge([(part["k"], _none_for_nan(part["power"])) for _, part in groups])
    for t, ((test, part), x) in enumerate(zip(groups, positions)):
        colour = _colour(t)
        symbol = ("circle", "square", "diamond", "triangle-up", "x")[t % 5]
        se = part["se"] if "se" in part else [None] * len(part)
        up, down = _mc_error(part, "power")
        power = part["power"].to_numpy(float)
        if "se" in part and np.isfinite(part["se"].to_numpy(float)).any():
            k = x
            fig.add_trace(go.Scatter(x=k + k[::-1], y=_none_for_nan(np.concatenate([power + up, (power - down)[::-1]])),
                                     fill="toself", fillcolor=colour, opacity=0.12, line=dict(width=0),
                                     hoverinfo="skip", showlegend=False, legendgroup=esc(test)))
        fig.add_trace(go.Scatter(x=x, y=_none_for_nan(power), mode="lines+markers",
                                 name=esc(test), legendgroup=esc(test), line=dict(color=colour),
                                 marker=dict(symbol=symbol, size=8), hoverinfo="text",
                                 hovertext=[f"{esc(test)}, k = {k:g}: power {fmt(p)} ± {fmt(e)} (Monte Carlo se)"
                                            for k, p, e in zip(part["k"], part["power"], se)]))
    title = {"tokens": f"k: % of each {output}'s tokens kept (100 = X itself)",
             "noise": "k: noise sd in units of X's sd (0 = X itself)"}.get(degrade, "k (degradation of the worse metric)")
    fig.update_layout(xaxis=dict(title=title),
                      # below 0, so a curve at power 0 is drawn above the x axis line, not hidden in it
                      yaxis=dict(title="power (share of trials rejecting H0)<br>band: ± 1.96 Monte Carlo se",
                                 range=[-0.05, 1.05], zeroline=False),
                      legend=dict(orientation="h", y=1.02, yanchor="bottom"), margin=dict(t=50, b=50), height=400)
    return fig
