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

from metaeval_core.data.store import DatasetStore, StoreError, slugify, store_key
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
    assert entry.key == store_key("My <b>run</b> #1") and entry.key.startswith("my-b-run-b-1-")
    assert entry.name == "My <b>run</b> #1"
    assert_same(store.load(entry.key), small)
    with pytest.raises(StoreError, match="exists already"):
        store.save(small, "My <b>run</b> #1")
    renamed = store.rename(entry.key, "Second")
    assert [e.key for e in store.list()] == [store_key("Second")]
    assert_same(store.load(renamed.key), small)
    store.delete(renamed.key)
    assert store.list() == []
    with pytest.raises(StoreError, match="no stored dataset"):
        store.load(renamed.key)
    with pytest.raises(StoreError, match="slug"):
        store.load("../etc/passwd")


def test_slugify():
    assert slugify("  SummEval + my judgments ") == "summeval-my-judgments"
    assert slugify("///") == "dataset"


def test_corrupt_file_is_skipped_by_list_and_named_on_load(tmp_path, small):
    store = DatasetStore(tmp_path)
    good = store.save(small, "good")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    assert [e.key for e in store.list()] == [good.key]
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
        assert [e.key for e in entries] == [store_key("entry")]
        assert store.load(store_key("entry")).n_inputs == 3100
    # Temporary files of killed writers may remain, but are never listed as datasets.
    assert all(p.suffix == ".npz" for p in tmp_path.glob("*.npz"))
    store.remove_stale_temporaries(max_age_seconds=0)
    assert not list(tmp_path.glob(".*.tmp"))


# -- damaged entries ----------------------------------------------------------------------------------------
def _npz_with_meta(meta_bytes: bytes) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez_compressed(buffer, meta=np.frombuffer(meta_bytes, dtype=np.uint8), systems=np.array(["a"]),
                        inputs=np.array(["i"]))
    return buffer.getvalue()


def _bad_compressed(good: bytes) -> bytes:
    """The same zip with the compressed bytes of its members overwritten (headers intact)."""
    data = bytearray(good)
    for start in range(200, len(data) - 200, 97):
        data[start] ^= 0x5A
    return bytes(data)


DAMAGE = {
    "empty": lambda good: b"",
    "not-a-zip": lambda good: b"not a zip at all",
    "truncated": lambda good: good[: len(good) // 2],
    "bad-compressed-data": _bad_compressed,
    "meta-is-a-list": lambda good: _npz_with_meta(b"[1, 2, 3]"),
    "meta-is-a-string": lambda good: _npz_with_meta(b'"format"'),
    "meta-not-json": lambda good: _npz_with_meta(b"{not json"),
    "meta-not-utf8": lambda good: _npz_with_meta(b"\xff\xfe{}"),
    "meta-without-measures": lambda good: _npz_with_meta(b'{"format": 1}'),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_entry_is_listed_as_damaged_and_hides_nothing(tmp_path, small, damage):
    store = DatasetStore(tmp_path)
    first = store.save(small, "first")
    second = store.save(small, "second")
    (tmp_path / "broken.npz").write_bytes(DAMAGE[damage](first.path.read_bytes()))
    entries, damaged = store.scan()
    assert sorted(e.key for e in entries) == sorted([first.key, second.key])
    assert [d.key for d in damaged] == ["broken"]
    assert "broken.npz cannot be read" in damaged[0].reason and "\n" not in damaged[0].reason
    assert store.list() == entries and store.damaged() == damaged
    with pytest.raises(StoreError, match="broken.npz cannot be read"):
        store.load("broken")
    with pytest.raises(StoreError, match="broken.npz cannot be read"):
        store.rename("broken", "fixed")
    store.delete("broken")
    assert store.damaged() == [] and len(store.list()) == 2


# -- names and keys -----------------------------------------------------------------------------------------
def test_names_that_differ_never_share_a_key(tmp_path, small):
    store = DatasetStore(tmp_path)
    names = ["数据", "данные", ".", "..", "dataset", "Dataset", "a b", "a-b", "a_b", "A B", "-", "数据 "]
    saved = {}
    for name in names[:-1]:
        entry = store.save(small, name)
        saved[entry.key] = name
    assert len(saved) == len(names) - 1
    assert sorted(e.name for e in store.list()) == sorted(names[:-1])
    with pytest.raises(StoreError, match="exists already"):  # blanks around a name are not part of it
        store.save(small, names[-1])


def test_nfc_and_nfd_forms_are_one_name(tmp_path, small):
    import unicodedata

    store = DatasetStore(tmp_path)
    entry = store.save(small, unicodedata.normalize("NFD", "Résumé"))
    assert entry.name == unicodedata.normalize("NFC", "Résumé")
    with pytest.raises(StoreError, match="exists already"):
        store.save(small, unicodedata.normalize("NFC", "Résumé"))


def test_entries_saved_under_plain_slug_keys_are_still_read(tmp_path, small):
    from metaeval_core.data.store import _atomic_write, _serialise

    store = DatasetStore(tmp_path)
    _atomic_write(tmp_path / "old-run.npz", _serialise(small, "Old run"))
    assert [e.key for e in store.list()] == ["old-run"]
    assert_same(store.load("old-run"), small)
    with pytest.raises(StoreError, match="exists already"):  # the same name still finds the old entry
        store.save(small, "Old run")
    assert store.save(small, "Old run", overwrite=True).key == "old-run"
    renamed = store.rename("old-run", "New run")
    assert [e.key for e in store.list()] == [renamed.key] and renamed.key == store_key("New run")


# -- concurrent writers -------------------------------------------------------------------------------------
def _save_once(root: str, name: str, barrier, results) -> None:
    from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

    ds = synthetic_dataset(SyntheticSpec(n_systems=4, n_judged=40, n_unjudged=3, seed=os.getpid() % 1000))
    store = DatasetStore(root)
    barrier.wait()
    try:
        store.save(ds, name)
        results.put(("saved", os.getpid()))
    except StoreError:
        results.put(("refused", os.getpid()))


def _rename_once(root: str, key: str, new_name: str, barrier, results) -> None:
    store = DatasetStore(root)
    barrier.wait()
    try:
        store.rename(key, new_name)
        results.put(("renamed", new_name))
    except StoreError:
        results.put(("refused", new_name))


def _race(target, args_list):
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    barrier, results = ctx.Barrier(len(args_list)), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, barrier, results)) for args in args_list]
    for p in procs:
        p.start()
    out = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    return [o[0] for o in out]


def test_two_processes_saving_one_name_are_not_both_told_saved(tmp_path):
    lost = 0
    for trial in range(20):
        root = tmp_path / f"t{trial}"
        outcomes = _race(_save_once, [(str(root), "same name"), (str(root), "same name")])
        assert sorted(outcomes) == ["refused", "saved"], outcomes
        entries = DatasetStore(root).list()
        lost += len(entries) != 1
    assert lost == 0


def test_concurrent_renames_never_duplicate_an_entry(tmp_path, small):
    for trial in range(20):
        root = tmp_path / f"t{trial}"
        entry = DatasetStore(root).save(small, "original")
        outcomes = _race(_rename_once, [(str(root), entry.key, "left"), (str(root), entry.key, "right")])
        entries = DatasetStore(root).list()
        assert outcomes.count("renamed") == 1, outcomes
        assert len(entries) == 1 and entries[0].name in ("left", "right"), [e.name for e in entries]
        assert not [p for p in root.iterdir() if p.suffix != ".npz" and p.name not in (".lock", ".aliases.json")]


def test_a_rename_that_died_after_claiming_leaves_a_file_cleanup_removes(tmp_path, small):
    store = DatasetStore(tmp_path)
    entry = store.save(small, "renamed")
    leftover = tmp_path / ".old-key.renaming-123-456"
    leftover.write_bytes(b"the old entry, whose renamed copy was published before the claim")
    assert [e.key for e in store.list()] == [entry.key] and store.damaged() == []
    assert store.remove_stale_temporaries() == 1
    assert not leftover.exists() and [e.key for e in store.list()] == [entry.key]


# -- hostile entries and races (issue 23) --------------------------------------------------------------------
def _inflating_entry(good: Path, target: Path, gib: int = 2) -> None:
    """``good`` with its first score array replaced by one of ``gib`` GiB of zeros (deflated to a few MB)."""
    import zipfile

    n = int((gib * 2**30 // 8) ** 0.5)
    header = io_bytes_header((n, n))
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        for info in source.infolist():
            if info.filename != "scores_0.npy":
                out.writestr(info.filename, source.read(info))
                continue
            with out.open("scores_0.npy", "w", force_zip64=True) as member:
                member.write(header)
                zeros = bytes(1 << 24)
                left = n * n * 8
                while left > 0:
                    member.write(zeros[:min(left, len(zeros))])
                    left -= len(zeros)


def io_bytes_header(shape: tuple[int, ...]) -> bytes:
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buffer.getvalue()


LIST_IN_CHILD = """
from metaeval_core.data.store import DatasetStore
start = time.perf_counter()
entries, damaged = DatasetStore({root!r}).scan()
result = {{"entries": [e.name for e in entries], "damaged": {{d.key: d.reason for d in damaged}},
           "scan_seconds": time.perf_counter() - start}}
"""


def test_an_entry_inflating_to_2_gib_is_listed_as_damaged_from_its_headers(tmp_path, small):
    from tests.core.capped import run_capped

    store = DatasetStore(tmp_path)
    good = store.save(small, "good")
    _inflating_entry(good.path, tmp_path / "bomb.npz")
    assert (tmp_path / "bomb.npz").stat().st_size < 20 * 2**20
    out = run_capped(LIST_IN_CHILD.format(root=str(tmp_path)), timeout=60)
    assert out["entries"] == ["good"]
    assert "bomb.npz" in out["damaged"]["bomb"] and "GiB" in out["damaged"]["bomb"]
    assert out["peak_mb"] < 500  # (and no timeout: the old scan inflated the 2 GiB)
    with pytest.raises(StoreError, match="bomb.npz cannot be read.*inflate"):
        store.load("bomb")


def test_a_fifo_named_like_an_entry_does_not_hang_the_scan(tmp_path, small):
    from tests.core.capped import run_capped

    store = DatasetStore(tmp_path)
    store.save(small, "good")
    os.mkfifo(tmp_path / "x.npz")
    (tmp_path / "link.npz").symlink_to(tmp_path / "x.npz")
    out = run_capped(LIST_IN_CHILD.format(root=str(tmp_path)), timeout=30)
    assert out["entries"] == ["good"] and set(out["damaged"]) == {"x", "link"}
    assert "not a regular file" in out["damaged"]["x"]
    with pytest.raises(StoreError, match="x.npz"):
        store.load("x")
    store.delete("x")
    store.delete("link")
    assert store.damaged() == []


def test_a_memory_error_reading_one_entry_hides_no_other(tmp_path, small, monkeypatch):
    import metaeval_core.data.store as module

    store = DatasetStore(tmp_path)
    store.save(small, "first")
    bad = store.save(small, "second")
    inspect = module._inspect

    def failing(path, handle, *, verify):
        if path == bad.path:
            raise MemoryError()
        return inspect(path, handle, verify=verify)

    monkeypatch.setattr(module, "_inspect", failing)
    entries, damaged = store.scan()
    assert [e.name for e in entries] == ["first"]
    assert [d.key for d in damaged] == [bad.key] and "not enough memory" in damaged[0].reason


def test_a_rename_racing_an_overwriting_save_loses_nothing(tmp_path, small):
    import threading

    newer = synthetic_dataset(SyntheticSpec(n_systems=5, n_judged=7, n_unjudged=2, seed=9), id="newer")
    for trial in range(20):
        root = tmp_path / f"t{trial}"
        store = DatasetStore(root)
        entry = store.save(small, "X")
        barrier, errors = threading.Barrier(2), []

        def run(action):
            barrier.wait(timeout=10)
            try:
                action()
            except BaseException as error:  # any failure, bare FileNotFoundError included, fails the test
                errors.append(error)

        threads = [threading.Thread(target=run, args=(lambda: store.rename(entry.key, "Y"),)),
                   threading.Thread(target=run, args=(lambda: store.save(newer, "X", overwrite=True),))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not errors, errors
        found = {e.name: store.load(e.key) for e in store.list()}
        assert "Y" in found and any(d.n_systems == 5 for d in found.values()), sorted(found)


def test_a_renamed_entry_keeps_its_old_keys_as_aliases(tmp_path):
    """Links written with an entry's key keep working after renames (issue 24); a deleted entry has none."""
    from metaeval_core.data.store import DatasetStore
    from metaeval_core.data.synthetic import synthetic_dataset

    shop = DatasetStore(tmp_path)
    first = shop.save(synthetic_dataset(), "first name")
    second = shop.rename(first.key, "second name")
    third = shop.rename(second.key, "third name")
    assert shop.current_key(first.key) == shop.current_key(second.key) == shop.current_key(third.key) == third.key
    assert shop.load(shop.current_key(first.key)).n_systems == 16
    assert shop.current_key("never-stored") is None and shop.current_key("../escape") is None
    shop.delete(third.key)
    assert shop.current_key(first.key) is None
    assert [e.key for e in shop.list()] == []  # the alias file is not an entry
