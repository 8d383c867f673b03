"""A local store of user datasets that survives restarts and crashes.

Each dataset is one ``.npz`` file (no pickles: ``allow_pickle=False`` on read)
written atomically: the bytes go to a temporary file in the same folder, are
flushed to disk, and only then replace the target with ``os.replace``, so a
crash mid-save leaves either the old file or the new one, never a torn one.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from metaeval_core import _paths
from metaeval_core.data.dataset import Dataset, DatasetError, Measure

_FORMAT = 1
_SLUG = re.compile(r"[^a-z0-9_-]+")


class StoreError(DatasetError):
    """A stored dataset cannot be saved, read, renamed or deleted as asked."""


@dataclass(frozen=True)
class StoredDataset:
    """One entry of the store: its key (file name stem), display name and size."""

    key: str
    name: str
    saved_at: float
    n_systems: int
    n_inputs: int
    n_measures: int
    path: Path


def default_store_dir() -> Path:
    """``$METAEVAL_STORE_DIR``, else ``data/user`` in a checkout (git-ignored) or the user's data folder."""
    configured = os.environ.get("METAEVAL_STORE_DIR")
    if configured:
        return Path(configured)
    return _paths.default_store_dir()


def slugify(name: str) -> str:
    slug = _SLUG.sub("-", name.strip().lower()).strip("-")[:60]
    return slug or "dataset"


def _serialise(dataset: Dataset, name: str) -> bytes:
    arrays: dict[str, np.ndarray] = {
        "systems": np.array(dataset.systems, dtype=np.str_),
        "inputs": np.array(dataset.inputs, dtype=np.str_),
    }
    measures = []
    for k, (measure_name, m) in enumerate(dataset.measures.items()):
        arrays[f"scores_{k}"] = m.scores
        if m.annotators is not None:
            arrays[f"annotators_{k}"] = m.annotators
        spec = {"name": measure_name, "kind": m.kind, "annotators": m.annotators is not None}
        if m.label or m.attributes:
            spec.update(label=m.label, attributes=dict(m.attributes))
        measures.append(spec)
    attributes = []
    for k, (attr, values) in enumerate(dataset.system_attributes.items()):
        arrays[f"attribute_{k}"] = np.array(values, dtype=np.str_)
        attributes.append(attr)
    meta = {
        "format": _FORMAT,
        "name": name,
        "id": dataset.id,
        "title": dataset.title,
        "citation": dataset.citation,
        "licence": dataset.licence,
        "description": dataset.description,
        "notes": list(dataset.notes),
        "measures": measures,
        "attributes": attributes,
        "default_systems": dataset.default_systems,
        "input_attributes": {attr: list(values) for attr, values in dataset.input_attributes.items()},
        "saved_at": time.time(),
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def _deserialise(path: Path) -> tuple[dict, Dataset]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            meta = json.loads(bytes(archive["meta"]).decode("utf-8"))
            if meta.get("format") != _FORMAT:
                raise StoreError(f"{path.name}: unsupported store format {meta.get('format')!r}")
            measures = {}
            for k, spec in enumerate(meta["measures"]):
                annotators = archive[f"annotators_{k}"] if spec["annotators"] else None
                measures[spec["name"]] = Measure(spec["name"], spec["kind"], archive[f"scores_{k}"], annotators,
                                                 str(spec.get("label", "")), dict(spec.get("attributes", {})))
            attributes = {attr: archive[f"attribute_{k}"].tolist() for k, attr in enumerate(meta["attributes"])}
            dataset = Dataset(
                id=f"user:{path.stem}",
                systems=archive["systems"].tolist(),
                inputs=archive["inputs"].tolist(),
                measures=measures,
                system_attributes=attributes,
                title=meta.get("name") or meta.get("title", ""),
                citation=meta.get("citation", ""),
                licence=meta.get("licence", ""),
                description=meta.get("description", ""),
                notes=tuple(meta.get("notes", ())),
                default_systems=str(meta.get("default_systems", "")),
                input_attributes=dict(meta.get("input_attributes", {})),
            )
    except StoreError:
        raise
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as error:
        raise StoreError(f"stored dataset {path.name} cannot be read: {error}") from error
    return meta, dataset


def _atomic_write(path: Path, payload: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
        _fsync_dir(path.parent)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise


def _fsync_dir(folder: Path) -> None:
    # The rename itself is durable only once the directory entry is flushed.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class DatasetStore:
    """Save, list, load, rename and delete user datasets in a folder.

    Parameters
    ----------
    root : Path, optional
        The folder (default :func:`default_store_dir`).
    """

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_store_dir()

    def _path(self, key: str) -> Path:
        if not key or slugify(key) != key:
            raise StoreError(f"store key must be a slug of letters, digits, '-' or '_'; got {key!r}")
        return self.root / f"{key}.npz"

    def save(self, dataset: Dataset, name: str, *, key: str | None = None, overwrite: bool = False) -> StoredDataset:
        """Write ``dataset`` under ``name``; refuses to replace an existing entry unless ``overwrite``."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"dataset must be a Dataset; got {type(dataset).__name__}")
        if not name or not name.strip():
            raise StoreError("name must not be empty")
        key = key or slugify(name)
        path = self._path(key)
        if path.exists() and not overwrite:
            raise StoreError(f"a stored dataset called {key!r} exists already; choose another name or overwrite it")
        _atomic_write(path, _serialise(dataset, name.strip()))
        return self._entry(path)

    def load(self, key: str) -> Dataset:
        path = self._path(key)
        if not path.exists():
            raise StoreError(f"no stored dataset called {key!r}")
        return _deserialise(path)[1]

    def list(self) -> list[StoredDataset]:
        """Every readable entry, newest first (unreadable files are skipped, temporary files ignored)."""
        if not self.root.is_dir():
            return []
        entries = []
        for path in self.root.glob("*.npz"):
            try:
                entries.append(self._entry(path))
            except StoreError:
                continue
        return sorted(entries, key=lambda e: e.saved_at, reverse=True)

    def rename(self, key: str, new_name: str) -> StoredDataset:
        """Change the display name (and key) of an entry, atomically."""
        dataset = self.load(key)
        new_key = slugify(new_name)
        if new_key != key and self._path(new_key).exists():
            raise StoreError(f"a stored dataset called {new_key!r} exists already")
        entry = self.save(dataset, new_name, key=new_key, overwrite=True)
        if new_key != key:
            self._path(key).unlink()
        return entry

    def delete(self, key: str) -> None:
        path = self._path(key)
        if not path.exists():
            raise StoreError(f"no stored dataset called {key!r}")
        path.unlink()

    def remove_stale_temporaries(self, *, max_age_seconds: float = 3600.0) -> int:
        """Delete temporary files left by writers that died mid-save (older than ``max_age_seconds``)."""
        if not self.root.is_dir():
            return 0
        removed = 0
        now = time.time()
        for tmp in self.root.glob(".*.tmp"):
            try:
                if now - tmp.stat().st_mtime > max_age_seconds:
                    tmp.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        return removed

    def _entry(self, path: Path) -> StoredDataset:
        meta, dataset = _deserialise(path)
        return StoredDataset(
            key=path.stem,
            name=meta.get("name", path.stem),
            saved_at=float(meta.get("saved_at", path.stat().st_mtime)),
            n_systems=dataset.n_systems,
            n_inputs=dataset.n_inputs,
            n_measures=len(dataset.measures),
            path=path,
        )
