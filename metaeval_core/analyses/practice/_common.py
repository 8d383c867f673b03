"""Helpers shared by the practitioner tools."""

from __future__ import annotations

from metaeval_core.stats.montecarlo import finite_or_none  # noqa: F401 - the one NaN-to-None helper
