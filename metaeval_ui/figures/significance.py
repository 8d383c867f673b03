"""Significance figures: the pairwise p-value heatmap and its labels and notes.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from metaeval_ui.figures.layout import empty_figure, esc, fmt, fmt_p


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
    head = f"H1: {claim}: delta = {fmt(delta)}, p = {fmt_p(pvalue, alpha)} ({detail})."
    if not significant:
        return f"{head} Not significant at alpha = {alpha:g}."
    if not corrects(correction, family):
        return f"{head} Significant at alpha = {alpha:g} (no correction)."
    fam = {"row": "the row family", "table": "the whole table", "all": "the whole table"}.get(family, family)
    after = "still significant" if significant_corrected else "not significant any more"
    return f"{head} Significant at alpha = {alpha:g}; {after} after {correction_label(correction)} over {fam}."


def correction_label(correction: str) -> str:
    return {"bonferroni": "Bonferroni", "holm": "Holm", "bh": "Benjamini-Hochberg", "fdr_bh": "Benjamini-Hochberg",
            "benjamini-hochberg": "Benjamini-Hochberg", "none": "no correction"}.get(str(correction).lower(),
                                                                                    str(correction))


def corrects(correction: str | None, family: str | None) -> bool:
    """Whether a multiple-comparison correction is applied (a method and a family other than 'none')."""
    return str(correction or "none").lower() != "none" and str(family or "none").lower() != "none"


def outline_note(alpha: float, correction: str, family: str) -> str:
    """What the outlined cells of the p-value heatmap mean (markdown), for the chosen correction and family.

    Without a correction there is nothing to survive: the filled cells are the significant ones, and saying
    "still below alpha after no correction" would promise a second test that was not run.
    """
    if not corrects(correction, family):
        return "**Outlined**: the same cells (no multiple-comparison correction chosen)."
    over = {"row": "each row", "table": "the whole table", "all": "the whole table"}.get(family, f"family '{family}'")
    return f"**Outlined**: still below {alpha:g} after {correction_label(correction)} over {over}."


def pvalue_heatmap(
    metrics: Sequence[str],
    pvalue: np.ndarray,
    significant: np.ndarray,
    significant_corrected: np.ndarray,
    *,
    hover: Sequence[Sequence[str]] | None = None,
    alpha: float = 0.05,
    title: str = "",
    row_axis: str = "row metric (X): is X better than Y?",
) -> go.Figure:
    """Metric x metric p-values (row better than column, or, two-sided, row and column differ: ``row_axis`` says which,
    from :func:`metaeval_ui.text.significance_wording`).

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
    # Beyond 12 metrics a cell is too narrow for "0.04995" at a legible 11 px: two decimals without the leading
    # zero (".05", "<.01"); the fill says which side of alpha p lies and the hover gives it in full.
    short = n > 12
    cell_p = ((lambda v: "" if not np.isfinite(v) else "<.01" if v < 0.01 else f"{v:.2f}".lstrip("0"))
              if short else (lambda v: fmt_p(v, alpha)))
    text = np.where(np.eye(n, dtype=bool), "", np.vectorize(cell_p, otypes=[object])(p)) if n else np.empty((0, 0))
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
    # One layout update with every outline: add_shape per cell re-validates all shapes so far (quadratic: 26 judges
    # took 54 s, now 0.1 s).
    outlines = [dict(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5, line={"color": "black", "width": 3},
                     fillcolor="rgba(0,0,0,0)", layer="above") for i in range(n) for j in range(n) if cor[i, j] and i != j]
    fig.update_layout(
        shapes=outlines,
        title=esc(title) if title else None,
        xaxis={"tickvals": list(range(n)), "ticktext": names, "title": "column metric (Y)", "side": "bottom",
               "showgrid": False, "zeroline": False, "range": [-0.5, n - 0.5]},
        yaxis={"tickvals": list(range(n)), "ticktext": names, "title": esc(row_axis),
               "autorange": "reversed", "showgrid": False, "zeroline": False},
        plot_bgcolor="#f4f4f4",
        height=max(320, 120 + 45 * n),
        margin={"t": 50 if title else 20},
    )
    return fig
