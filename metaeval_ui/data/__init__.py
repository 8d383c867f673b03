"""Cached access to datasets and core computations, keyed on small keys only.

* Datasets from the registry are ``st.cache_resource`` objects keyed on (dataset id, data directory);
  uploaded datasets live in the session's own state, keyed by the sha256 of their content (never global).
* Computations are ``st.cache_data`` functions taking the dataset as ``_dataset`` (leading underscore:
  never hashed) plus its small :data:`DatasetKey` ``(id, version)`` and frozen option tuples, with
  bounded ``max_entries``.

This face only re-exports: datasets in :mod:`.datasets`, descriptive tables in :mod:`.summaries`, intervals and
significance tables in :mod:`.resampled`, the Overview's leaderboard in :mod:`.ranking`; each page's own cached
calls in the modules named after it. Modules inside this package import those modules, never this face.
"""

from __future__ import annotations

from metaeval_core.stats import significance as _significance  # noqa: F401 - benchmarks/bench_wmt.py reads it

from metaeval_ui.data.datasets import (
    DatasetKey, DEMO_ID, UPLOAD_PREFIX, MAX_UPLOADS_PER_SESSION, MAX_UPLOAD_MB, VERDICTS_PREFIX, DatasetChoice,
    data_dir_key, list_choices, pairwise_choices, is_pairwise, load_registered, fetch, content_sha256, parse_upload,
    dataset_key, reproduction, reproduction_papers, REPRODUCE_ALL, language_pairs, default_lp
)
from metaeval_ui.data.summaries import (
    correlation_table, unscored_systems, system_means, distribution_stats, box_stats, missing_summary,
    finite_or_none
)
from metaeval_ui.data.resampled import (
    MAX_RESAMPLES, confidence_interval, confidence_intervals, check_interval_size, _ResultStore, _store,
    pairwise_is_cached, pairwise_key, MAX_TABLE_SECONDS, check_table_size, pairwise_uncorrected, pairwise_decision,
    intervals_deadline
)
from metaeval_ui.data.ranking import (
    LEADERBOARD_TEST, leaderboard, leaderboard_decision, metrics_board, chance_baseline, chance_groups, ceiling_intervals, ceiling_result,
    human_ceiling
)
