"""Entries with a sidecar (What-if drafts): written whole, under the lock, never overwritten (issue 28)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from metaeval_core.data.store import DatasetStore, StoreError
from metaeval_core.data.synthetic import synthetic_dataset


def test_a_sidecar_entry_is_written_once_and_read_back(tmp_path):
    store = DatasetStore(tmp_path)
    ds = synthetic_dataset()
    store.save_with_sidecar(ds, "draft a", key="draft-a", sidecar={"steps": ["x"]})
    assert store.load_sidecar("draft-a") == {"steps": ["x"]}
    assert store.load("draft-a").systems == ds.systems
    with pytest.raises(StoreError, match="exists already"):
        store.save_with_sidecar(ds, "draft a", key="draft-a", sidecar={"steps": ["y"]})
    assert store.load_sidecar("draft-a") == {"steps": ["x"]}
    store.delete_with_sidecar("draft-a")
    with pytest.raises(StoreError):
        store.load_sidecar("draft-a")
    assert not list(tmp_path.glob("draft-a*"))


def test_concurrent_writers_of_one_key_one_wins_whole(tmp_path):
    """Generated race: threads write the same key at once; exactly one succeeds and its two files agree."""
    store = DatasetStore(tmp_path)
    ds = synthetic_dataset()
    outcomes: list[object] = []

    def write(k: int) -> None:
        try:
            store.save_with_sidecar(ds, f"w{k}", key="draft-race", sidecar={"writer": k})
            outcomes.append(k)
        except StoreError as error:
            outcomes.append(error)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if isinstance(o, int)]
    assert len(winners) == 1 and store.load_sidecar("draft-race") == {"writer": winners[0]}
    assert not list(tmp_path.glob(".*.tmp"))


def test_prune_keeps_the_newest_and_drops_the_old(tmp_path):
    store = DatasetStore(tmp_path)
    ds = synthetic_dataset()
    for k in range(5):
        store.save_with_sidecar(ds, f"d{k}", key=f"draft-{k}", sidecar={})
        old = time.time() - 1000 + k
        os.utime(tmp_path / f"draft-{k}.npz", (old, old))
    assert store.prune("draft-", max_age_seconds=1e9, keep_newest=3) == 2
    assert sorted(p.stem for p in tmp_path.glob("draft-*.npz")) == ["draft-2", "draft-3", "draft-4"]
    assert not (tmp_path / "draft-0.json").exists()
    assert store.prune("draft-", max_age_seconds=10, keep_newest=10) == 3


def test_a_sidecar_that_is_a_fifo_does_not_hang(tmp_path):
    store = DatasetStore(tmp_path)
    os.mkfifo(tmp_path / "draft-f.json")
    with pytest.raises(StoreError):
        store.load_sidecar("draft-f")
