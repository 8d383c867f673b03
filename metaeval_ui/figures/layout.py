"""What every figure shares: the palette of things that are not measures, HTML-escaped labels, number
formatting for hover text, the empty figure and dodging of overlapping curves.
"""

from __future__ import annotations

import html
import math
from typing import Sequence

import numpy as np
import plotly.graph_objects as go


# Colours of things that are not measures (CI methods, clusters, levels, groups): greys and dark tones, so no
# hue of a measure is reused for something else.
PALETTE = ("#4d4d4d", "#8a8a8a", "#1b3a57", "#6b4e2e", "#5e3c74", "#2f5d50", "#a0a0a0", "#000000")


METHOD_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "hexagon")


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


def fmt_p(p: object, alpha: float | None = None) -> str:
    """A p-value whose shown digits agree with the decision at ``alpha`` (:func:`metaeval_ui.text.format_pvalue`)."""
    from metaeval_ui.text import format_pvalue

    return format_pvalue(p, alpha)


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


def dodge(curves: Sequence[tuple[Sequence[float], Sequence[float]]], *, share: float = 0.012,
          log: bool = False) -> list[list[float]]:
    """x positions for line series that may coincide: unchanged unless two series share a point (same x and y),
    then each series is shifted sideways by ``share`` of the x span (series k of n by (k - (n-1)/2) * share), so
    equal curves (several tests all at power 0) are drawn side by side instead of one hiding the others.

    ``curves``: (x, y) per series. ``log``: the axis is logarithmic (the shift is then a factor). Hover texts
    should quote the true x.
    """
    xs = [np.asarray(x, dtype=float) for x, _ in curves]
    points = [{(float(a), round(float(b), 9)) for a, b in zip(x, y) if b is not None and math.isfinite(float(b))}
              for x, y in curves]
    shared = any(points[i] & points[j] for i in range(len(points)) for j in range(i + 1, len(points)))
    if not shared:
        return [x.tolist() for x in xs]
    every = np.concatenate(xs) if xs else np.array([])
    every = every[np.isfinite(every) & ((every > 0) if log else True)]
    if every.size == 0:
        return [x.tolist() for x in xs]
    low, high = (np.log10(every.min()), np.log10(every.max())) if log else (every.min(), every.max())
    step = share * ((high - low) or 1.0)
    centre = (len(curves) - 1) / 2
    out = []
    for k, x in enumerate(xs):
        shift = (k - centre) * step
        out.append((x * 10 ** shift if log else x + shift).tolist())
    return out
