"""Multiple comparisons: Bonferroni, Holm and Benjamini-Hochberg over one family or a metric x metric table.

References: docs/methods.md sec. 3; Holm (1979); Benjamini & Hochberg (1995).
"""

from __future__ import annotations

import numpy as np

from metaeval_core._checks import check_choice
from metaeval_core.stats.significance._common import CORRECTIONS, FAMILIES, Correction, Family

def _correct_pvalues_iv(pvalues, method):
    method = check_choice(method, "method", CORRECTIONS)
    try:
        p = np.array(pvalues, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("pvalues must be numeric") from None
    finite = p[~np.isnan(p)]
    if ((finite < 0) | (finite > 1)).any():
        raise ValueError("pvalues must lie in [0, 1] (NaN allowed)")
    return p, method


def correct_pvalues(pvalues: np.ndarray, *, method: Correction) -> np.ndarray:
    """Adjusted p-values for one family of tests (any shape; NaN entries are not tests).

    * ``'bonferroni'``: ``min(1, m p)``.
    * ``'holm'``: step-down, ``max_{j <= i} min(1, (m - j + 1) p_(j))`` in ascending order.
    * ``'bh'``: Benjamini-Hochberg step-up, ``min_{j >= i} min(1, m p_(j) / j)``
      (equal to ``scipy.stats.false_discovery_control``).
    * ``'none'``: unchanged.

    ``m`` is the number of non-NaN p-values; a test is significant after correction at
    level ``alpha`` when its adjusted p-value is below ``alpha``.

    References
    ----------
    docs/methods.md sec. 3; TACL 2021 sec. 6.2 and App. B (Bonferroni); Holm (1979);
    Benjamini & Hochberg (1995).
    """
    p, method = _correct_pvalues_iv(pvalues, method)
    flat = p.ravel()
    out = flat.copy()
    idx = np.flatnonzero(~np.isnan(flat))
    m = idx.size
    if method == "none" or m == 0:
        return out.reshape(p.shape)
    values = flat[idx]
    if method == "bonferroni":
        adjusted = np.minimum(1.0, m * values)
    else:
        order = np.argsort(values, kind="stable")
        ranked = values[order]
        rank = np.arange(1, m + 1)
        if method == "holm":
            stepped = np.maximum.accumulate((m - rank + 1) * ranked)
        else:
            stepped = np.minimum.accumulate((m * ranked / rank)[::-1])[::-1]
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1.0, stepped)
    out[idx] = adjusted
    return out.reshape(p.shape)


def correct_table(pvalue: np.ndarray, *, correction: Correction, family: Family) -> np.ndarray:
    """Adjust a metric x metric p-value table within each family of tests.

    ``family``: ``'row'`` (each row metric's ``k - 1`` tests, TACL Fig. 5), ``'table'``
    (all ``k (k - 1)`` off-diagonal tests, TACL App. B) or ``'none'`` (unadjusted, as is
    ``correction='none'``). Each family is adjusted with :func:`correct_pvalues`; the
    diagonal stays NaN.

    References
    ----------
    docs/methods.md sec. 3; TACL 2021 sec. 6.2, Fig. 5 and App. B.
    """
    correction = check_choice(correction, "correction", CORRECTIONS)
    family = check_choice(family, "family", FAMILIES)
    p = np.asarray(pvalue, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"pvalue must be a square metric x metric table; got shape {p.shape}")
    if correction == "none" or family == "none":
        return p.copy()
    k = p.shape[0]
    off = ~np.eye(k, dtype=bool)
    out = np.full_like(p, np.nan)
    if family == "table":
        out[off] = correct_pvalues(p[off], method=correction)
    else:
        for i in range(k):
            out[i, off[i]] = correct_pvalues(p[i, off[i]], method=correction)
    return out
