"""One colour per measure on every page, one convention for human measures and one for correlation heatmaps.

* :func:`measure_colour` maps a measure id to a colour, a pure function of the id: a stable hash (CRC-32) of the
  id picks its palette colour (:func:`base_colour`), the same on every page, in every session, whatever else is
  selected and in whatever order. Collisions are handled within a view only: the sidebar (``widgets.sidebar``)
  declares the chosen metrics with :func:`use_measures`; when two of them hash to the same colour, the one with
  the smaller hash (then id) keeps it and the other takes the next free palette colour, so the chosen metrics
  never share a colour while there are at most ``len(METRIC_PALETTE)`` of them. A metric that collides with no
  other chosen metric always has its base colour. The declaration is per thread: Streamlit runs each session's
  script in its own thread, so two users never see each other's colours.
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
# Tableau 20's light companions of the palette (same order): taken, in hash order, only by the chosen metrics beyond
# the palette's ten, so 21 WMT metrics shown together no longer share colours (20 distinct, then repeats).
EXTRA_PALETTE = ("#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
                 "#6b6ecf", "#bd9e39")
HUMAN_COLOUR = "#222222"
HUMAN_DASH = "dash"
HUMAN_SYMBOL = "diamond"
MUTED = "#c7c7c7"
HIGHLIGHT_LINE = dict(color="#111111", width=2.5)

# Plotly's RdBu runs red (low) -> white -> blue (high): positive correlations blue, on every heatmap.
CORRELATION_SCALE = "RdBu"
COEFFICIENT_LABELS = {"pearson": "Pearson r", "spearman": "Spearman ρ", "kendall": "Kendall τ",
                      "kendall-b": "Kendall τ-b", "kendall-c": "Kendall τ-c",
                      "pdp": "PDP (pairwise difference Pearson)"}

_LOCAL = threading.local()


def base_colour(name: str) -> str:
    """A measure's own colour: a stable hash of its id into :data:`METRIC_PALETTE` (nothing else enters)."""
    return METRIC_PALETTE[zlib.crc32(str(name).encode("utf-8")) % len(METRIC_PALETTE)]


def resolve_collisions(chosen: Iterable[str]) -> dict[str, str]:
    """The colours of metrics shown together: each its :func:`base_colour`, except that when several hash to the
    same colour the one with the smaller hash (then id) keeps it and the others take the next palette colours that no
    shown metric owns (linear probing), so a metric without a collision always keeps its own colour. Beyond
    ``len(METRIC_PALETTE)`` metrics the rest take :data:`EXTRA_PALETTE`'s colours (light companions), and only
    beyond both do colours repeat. Depends on the set, never on its order."""
    names = sorted({str(m) for m in chosen}, key=lambda n: (zlib.crc32(n.encode("utf-8")), n))
    size = len(METRIC_PALETTE)
    slots = {name: zlib.crc32(name.encode("utf-8")) % size for name in names}
    winners: dict[int, str] = {}
    for name in names:  # first every colour's own metric (the smallest hash), so no loser displaces a winner
        winners.setdefault(slots[name], name)
    used = set(winners)
    out = {name: METRIC_PALETTE[slot] for slot, name in winners.items()}
    extra = iter(EXTRA_PALETTE)
    for name in names:
        if name in out:
            continue
        start = slots[name]
        slot = next((k % size for k in range(start + 1, start + size) if k % size not in used), None)
        if slot is not None:
            used.add(slot)
            out[name] = METRIC_PALETTE[slot]
        else:  # the palette is full: a light companion, then (beyond 20 metrics) the base colour again
            out[name] = next(extra, METRIC_PALETTE[start])
    return out


def use_measures(metrics: Iterable[str], humans: Iterable[str] = (), *, chosen: Iterable[str] = ()) -> None:
    """Declare this view's measures: the dataset's metrics, its human measures and the chosen metrics (shown
    together, so their hash collisions are resolved: :func:`resolve_collisions`). Called by the sidebar on every
    run."""
    humans = frozenset(str(h) for h in humans)
    _LOCAL.assigned = resolve_collisions(m for m in chosen if str(m) not in humans)
    _LOCAL.humans = humans


def reset_measures() -> None:
    """Forget the declaration (every colour is then its base colour)."""
    _LOCAL.assigned = {}
    _LOCAL.humans = frozenset()


def is_human(name: str, humans: Iterable[str] = ()) -> bool:
    """Whether ``name`` is a human measure (given in ``humans`` or declared by :func:`use_measures`)."""
    return str(name) in set(map(str, humans)) or str(name) in getattr(_LOCAL, "humans", frozenset())


def measure_colour(name: str, *, human: bool | None = None) -> str:
    """The colour of a measure, the same on every figure of the view (human measures: :data:`HUMAN_COLOUR`)."""
    name = str(name)
    if human or (human is None and is_human(name)):
        return HUMAN_COLOUR
    return getattr(_LOCAL, "assigned", {}).get(name) or base_colour(name)


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
