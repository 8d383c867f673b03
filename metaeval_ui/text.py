"""Text helpers shared by pages, figures and reports: p-values that agree with their decision, and jargon.

No streamlit import (figures use these too).
"""

from __future__ import annotations

import math
from typing import Iterable

MAX_DECIMALS = 8


def _finite(p: object) -> float | None:
    try:
        value = float(p)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def pvalue_decimals(pvalues: Iterable[object], alpha: float | None = None, *, decimals: int = 3) -> int:
    """Fewest decimals (at least ``decimals``) at which every rounded p sits on the same side of ``alpha``
    as the p itself, so that a shown "0.050" is never marked significant at alpha = 0.05.

    Capped at ``MAX_DECIMALS``; :func:`format_pvalue` writes "< alpha" for a p even closer than that.
    """
    values = [v for v in (_finite(p) for p in pvalues) if v is not None]
    if alpha is None or not values:
        return decimals
    for d in range(decimals, MAX_DECIMALS + 1):
        if all((round(v, d) < alpha) == (v < alpha) for v in values):
            return d
    return MAX_DECIMALS


def format_pvalue(p: object, alpha: float | None = None, *, decimals: int = 3) -> str:
    """A p-value for display: ``decimals`` decimals (two significant digits below 0.001), with more where
    rounding would put the shown number on the other side of ``alpha`` than the p itself.

    >>> format_pvalue(0.04995, 0.05)
    '0.04995'
    >>> format_pvalue(0.0502, 0.05)
    '0.0502'
    >>> format_pvalue(0.2)
    '0.200'
    """
    value = _finite(p)
    if value is None:
        return "undefined"
    if alpha is not None and alpha <= 0.001 and value < 0.001:
        decimals = max(decimals, -int(math.floor(math.log10(alpha))) + 1)
    elif value < 0.001:
        text = f"{value:.2g}"
        if alpha is None or (float(text) < alpha) == (value < alpha):
            return text
    d = pvalue_decimals([value], alpha, decimals=decimals)
    text = f"{value:.{d}f}"
    if alpha is not None and (float(text) < alpha) != (value < alpha):
        return f"< {alpha:g}" if value < alpha else f"≥ {alpha:g}"
    # "0.0500" when p is exactly alpha is honest (not significant); strip nothing else.
    return text


# -- jargon: one plain-words definition per term, used as help tooltips -----------------------------------------
GLOSSARY = {
    "M_jud": "The number of judged inputs: inputs (documents) that have human scores. Metrics may also score "
             "unjudged inputs.",
    "undefined pieces skipped": "A correlation is undefined when one side is constant (every system tied). Such "
                                "inputs (input level) or resamples are left out of the average and counted.",
    "Pooled reduction": "1 − (mean over systems of the variance with all inputs) / (mean over systems of the "
                        "variance with judged inputs only): the share of per-system score variance removed by "
                        "scoring systems on every input. NAACL 2022 quotes ~99% on real test sets.",
    "Average variance reduction": "The mean over systems of 1 − var(all) / var(judged), where var is the variance of "
                                  "the system's bootstrapped mean score.",
    "rSYS": "System-level Kendall τ: how often the metric orders a pair of systems as the humans do (all pairs).",
    "rSYS-Δ": "rSYS restricted to system pairs whose metric scores differ by at most u (and at least l): the close "
              "pairs a new paper actually has to tell apart (NAACL 2022).",
}


def glossary(term: str) -> str:
    """The plain-words definition of ``term`` (KeyError for an unknown term: a typo should fail a test)."""
    return GLOSSARY[term]
