"""Shared fixtures: the synthetic demo and the real-data mirror (skipped cleanly when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEFAULT_MIRROR = REPO.parent / "shared" / "datasets"


def mirror_dir() -> Path | None:
    """The real-data directory: METAEVAL_DATA_DIR, else ../shared/datasets beside the repo."""
    configured = os.environ.get("METAEVAL_DATA_DIR")
    candidate = Path(configured) if configured else DEFAULT_MIRROR
    return candidate if (candidate / "MANIFEST.json").is_file() else None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The human-judgment mirror; tests that need it skip with a clear reason when it is absent."""
    found = mirror_dir()
    if found is None:
        pytest.skip(
            "real-data mirror not found: set METAEVAL_DATA_DIR to a folder holding MANIFEST.json "
            "(CI uses ../shared/datasets)"
        )
    return found


@pytest.fixture(scope="session")
def demo():
    from metaeval_core.data.synthetic import synthetic_dataset

    return synthetic_dataset()
