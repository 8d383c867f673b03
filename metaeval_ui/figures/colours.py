"""One colour per measure on every page, one convention for human measures and one for correlation heatmaps.

* :func:`measure_colour` maps a measure name to a colour. The mapping is deterministic: within a view, the
  sidebar (``widgets.sidebar``) declares the dataset's metrics and the chosen ones with :func:`use_measures`,
  and the chosen metrics take the palette's colours in the dataset's order (so reordering the selection does
  not recolour anything, and the chosen metrics never share a colour while there are at most
  ``len(METRIC_PALETTE)`` of them); other metrics follow. Without a declaration (tests, the CLI's report) a
  name's colour comes from a stable hash of the name. The declaration is per thread: Streamlit runs each
  session's script in its own thread, so two users never see each other's colours.
* Human measures are never coloured like a metric: near-black, dashed lines, diamond markers, bold labels
  (:data:`HUMAN_COLOUR`, :func:`measure_style`).
* "The best" or "the selected" metric is highlighted by keeping its own colour while the others turn
  :data:`MUTED` grey, and by a thick outline (:data:`HIGHLIGHT_LINE`); never by red.
* Every correlation heatmap uses :data:`CORRELATION_SCALE` (blue = positive, red = negative, white = 0,
  from -1 to 1) with the colour bar titled by the coefficient (:func:`correlation_colorbar`).

No streamlit import (figure builders stay pure).
"""

from __future__ import annotations

import threading
import zlib
from typing import Iterable

# Tableau 10 without red (kept for "discordant"/"flagged") and grey (kept for "muted"/ties), plus two dark hues.
METRIC_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
                  "#393b79", "#8c6d31")
HUMAN_COLOUR = "#222222"
HUMAN_DASH = "dash"
HUMAN_SYMBOL = "diamond"
MUTED = "#c7c7c7"
HIGHLIGHT_LINE = dict(color="#111111", width=2.5)

# Plotly's RdBu runs red (low) -> white -> blue (high): positive correlations blue, on every heatmap.
CORRELATION_SCALE = "RdBu"
COEFFICIENT_LABELS = {"pearson": "Pearson r", "spearman": "Spearman ρ", "kendall": "Kendall τ",
                      "kendall-b": "Kendall τ-b", "kendall-c": "Kendall τ-c"}

_LOCAL = threading.local()


def use_measures(metrics: Iterable[str], humans: Iterable[str] = (), *, chosen: Iterable[str] = ()) -> None:
    """Declare this view's measures: the dataset's metrics (in the dataset's order), its human measures and the
    chosen metrics (coloured first). Called by the sidebar on every run."""
    metrics = [str(m) for m in metrics]
    picked = {str(m) for m in chosen}
    order = [m for m in metrics if m in picked] + [m for m in metrics if m not in picked]
    order += [str(m) for m in chosen if str(m) not in set(metrics)]
    _LOCAL.order = {name: k for k, name in enumerate(order)}
    _LOCAL.humans = frozenset(str(h) for h in humans)


def reset_measures() -> None:
    """Forget the declaration (colours fall back to the name's hash)."""
    _LOCAL.order = {}
    _LOCAL.humans = frozenset()


def _hash_colour(name: str) -> str:
    return METRIC_PALETTE[zlib.crc32(name.encode("utf-8")) % len(METRIC_PALETTE)]


def is_human(name: str, humans: Iterable[str] = ()) -> bool:
    """Whether ``name`` is a human measure (given in ``humans`` or declared by :func:`use_measures`)."""
    return str(name) in set(map(str, humans)) or str(name) in getattr(_LOCAL, "humans", frozenset())


def measure_colour(name: str, *, human: bool | None = None) -> str:
    """The colour of a measure, the same on every figure of the view (human measures: :data:`HUMAN_COLOUR`)."""
    name = str(name)
    if human or (human is None and is_human(name)):
        return HUMAN_COLOUR
    order = getattr(_LOCAL, "order", {})
    k = order.get(name)
    if k is None or k >= len(METRIC_PALETTE):
        return _hash_colour(name)
    return METRIC_PALETTE[k]


def measure_style(name: str, *, human: bool | None = None) -> dict:
    """Colour, line dash and marker symbol of a measure's line/markers (humans: near-black, dashed, diamonds)."""
    human = is_human(name) if human is None else human
    return {"color": measure_colour(name, human=human), "dash": HUMAN_DASH if human else "solid",
            "symbol": HUMAN_SYMBOL if human else "circle"}


def coefficient_label(coefficient: str) -> str:
    """'Kendall τ', 'Pearson r', 'Spearman ρ' (another name as it is)."""
    return COEFFICIENT_LABELS.get(str(coefficient).lower(), str(coefficient))


def correlation_colorbar(coefficient: str) -> dict:
    """The colour bar of every correlation heatmap: titled by the coefficient, ticks at -1, -0.5, 0, 0.5, 1."""
    return dict(title=dict(text=coefficient_label(coefficient), side="right"), tickvals=[-1, -0.5, 0, 0.5, 1],
                len=0.9)
