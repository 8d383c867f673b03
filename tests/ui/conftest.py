"""Fixtures for the dashboard tests: AppTest on the demo (an empty data directory) or on the real mirror."""

from __future__ import annotations

from pathlib import Path

import pytest

@pytest.fixture
def demo_env(tmp_path, monkeypatch):
    """An empty data directory: the registry lists its datasets as unavailable and the default is the demo."""
    empty = tmp_path / "empty-data"
    empty.mkdir()
    monkeypatch.setenv("METAEVAL_DATA_DIR", str(empty))
    return empty


@pytest.fixture
def real_env(data_dir, monkeypatch):
    """The real-data mirror (skips when absent, via the root conftest's data_dir fixture)."""
    monkeypatch.setenv("METAEVAL_DATA_DIR", str(data_dir))
    return data_dir
