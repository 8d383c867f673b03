"""The user-dataset store: round trips, rename/delete, and no torn files after a crash mid-save."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from metaeval_core.data.store import DatasetStore, StoreError, slugify
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def small():
    return synthetic_dataset(SyntheticSpec(n_systems=4, n_judged=6, n_unjudged=3, seed=2), id="small")


def assert_same(a, b):
    assert a.systems == b.systems and a.inputs == b.inputs
    assert list(a.measures) == list(b.measures)
    for name in a.measures:
        np.testing.assert_array_equal(a.measure(name).scores, b.measure(name).scores)
        assert a.measure(name).kind == b.measure(name).kind
        if a.measure(name).annotators is not None:
            np.testing.assert_array_equal(a.measure(name).annotators, b.measure(name).annotators)
    assert dict(a.system_attributes) == dict(b.system_attributes)
    assert a.version == b.version


def test_round_trip_list_rename_delete(tmp_path, small):
    store = DatasetStore(tmp_path)
    entry = store.save(small, "My <b>run</b> #1")
    assert entry.key == "my-b-run-b-1" and entry.name == "My <b>run</b> #1"
    assert_same(store.load(entry.key), small)
    with pytest.raises(StoreError, match="exists already"):
        store.save(small, "My <b>run</b> #1")
    renamed = store.rename(entry.key, "Second")
    assert [e.key for e in store.list()] == ["second"]
    assert_same(store.load(renamed.key), small)
    store.delete("second")
    assert store.list() == []
    with pytest.raises(StoreError, match="no stored dataset"):
        store.load("second")
    with pytest.raises(StoreError, match="slug"):
        store.load("../etc/passwd")


def test_slugify():
    assert slugify("  SummEval + my judgments ") == "summeval-my-judgments"
    assert slugify("///") == "dataset"


def test_corrupt_file_is_skipped_by_list_and_named_on_load(tmp_path, small):
    store = DatasetStore(tmp_path)
    store.save(small, "good")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    assert [e.key for e in store.list()] == ["good"]
    with pytest.raises(StoreError, match="bad.npz cannot be read"):
        store.load("bad")


@pytest.mark.slow
def test_killed_mid_save_leaves_old_or_new_never_torn(tmp_path):
    """Kill a process that keeps overwriting an entry; the entry always loads afterwards."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from metaeval_core.data.store import DatasetStore
        from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset
        store = DatasetStore({str(tmp_path)!r})
        big = synthetic_dataset(SyntheticSpec(n_systems=16, n_judged=100, n_unjudged=3000, seed=5))
        store.save(big, "entry", overwrite=True)
        print("ready", flush=True)
        while True:
            store.save(big, "entry", overwrite=True)
        """
    )
    store = DatasetStore(tmp_path)
    for attempt in range(5):
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.05 + 0.07 * attempt)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        entries = store.list()
        assert [e.key for e in entries] == ["entry"]
        assert store.load("entry").n_inputs == 3100
    # Temporary files of killed writers may remain, but are never listed as datasets.
    assert all(p.suffix == ".npz" for p in tmp_path.glob("*.npz"))
    store.remove_stale_temporaries(max_age_seconds=0)
    assert not list(tmp_path.glob(".*.tmp"))
