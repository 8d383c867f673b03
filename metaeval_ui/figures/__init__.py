"""Pure plotly figure builders: plain data / DataFrames in, ``go.Figure`` out.

No streamlit import; every builder is unit-tested in tests/ui/test_figures.py. User-provided names
(measures, systems) are HTML-escaped before they reach plotly's pseudo-HTML labels and hover text.

This face only re-exports: shared pieces in :mod:`.layout` and :mod:`.colours`, the builders in the modules named
after what they draw (:mod:`.correlations`, :mod:`.distributions`, :mod:`.intervals`, :mod:`.significance`, and
each page's own).
"""

from __future__ import annotations

from metaeval_ui.figures.colours import (  # noqa: F401 - re-exported for the builders and pages
    CORRELATION_SCALE, HIGHLIGHT_LINE, HUMAN_COLOUR, METRIC_PALETTE, MUTED, coefficient_label, correlation_colorbar,
    is_human, measure_colour, measure_style, use_measures)

from metaeval_ui.figures.layout import PALETTE, METHOD_SYMBOLS, esc, fmt, fmt_p, empty_figure, dodge
from metaeval_ui.figures.correlations import fisher_bounds, correlation_bar
from metaeval_ui.figures.distributions import histogram_grid, box_grid
from metaeval_ui.figures.intervals import (
    SORTS, order_metrics, CHANCE_NAME, HUMAN_CEILING_COLOUR, _CHANCE_BAND, add_chance_reference, forest_plot
)
from metaeval_ui.figures.significance import (
    comparison_sentence, correction_label, corrects, outline_note, pvalue_heatmap
)
