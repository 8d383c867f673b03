"""The shared sidebar: dataset picker (registry, demo, upload) and measure / correlation pickers.

Every view-defining widget goes through :mod:`metaeval_ui.state` (restored across pages and from the URL). This
face only re-exports: the dataset picker lives in :mod:`.datasets`, the measure pickers in :mod:`.measures`, the
correlation settings in :mod:`.correlation`, the page frame (``sidebar``, ``finish``) in :mod:`.page` and the
resampling controls in :mod:`.controls`; each page's own widgets in the modules named after it.
"""

from __future__ import annotations

from metaeval_core.stats.coefficients import (  # noqa: F401 - CORRELATIONS, POINT_COEFFICIENTS for pages
    COEFFICIENTS,
    CORRELATIONS,
    POINT_COEFFICIENTS,
    SYSTEM_ONLY_COEFFICIENTS,
)

from metaeval_ui.widgets.datasets import (
    DEFAULT_DATASET, UPLOAD_OPTION, upload_sentence, _label, _width, PICKER_CHARS, _short_title, dataset_picker,
    default_systems_toggle, MAX_INPUT_GROUPS, input_subset
)
from metaeval_ui.widgets.measures import (
    DEFAULT_HUMAN, WELL_KNOWN_METRICS, default_human, N_DEFAULT_METRICS, default_metrics, measure_pickers,
    MEASURE_FIELDS, canonical_choice, measure_label
)
from metaeval_ui.widgets.correlation import (
    LEVEL_HELP, POOL_HELP, conventions_caption, correlation_settings, CUSTOM_SYSTEMS, SYSTEMS_EXPRESSION_HELP,
    pool_picker, system_subset,
)
from metaeval_ui.widgets.page import Context, NO_METRICS, need_measures, sidebar, show_notes, finish
from metaeval_ui.widgets.controls import resamples_and_seed, upper
