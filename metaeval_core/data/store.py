"""A local store of user datasets that survives restarts and crashes.

Each dataset is one ``.npz`` file (no pickles: ``allow_pickle=False`` on read)
written atomically: the bytes go to a temporary file in the same folder, are
flushed to disk, and only then replace the target with ``os.replace``, so a
crash mid-save leaves either the old file or the new one, never a torn one.
A save that must not overwrite publishes the file with ``os.link``, which fails
if the name exists, so of two processes saving the same name only one is told
"saved". A file that cannot be read is listed as damaged (with the reason), never
hides the others. Keys are a readable slug plus a short hash of the exact (NFC)
name, so names that differ never share a file.

Listing reads only each entry's metadata and the headers of its arrays (their shapes), never the arrays, and
refuses an entry whose arrays would inflate past :data:`MAX_ENTRY_BYTES`; only regular files are opened (a FIFO or
a link named ``x.npz`` is listed as damaged, never waited on). Saves, renames and deletes hold an exclusive lock
on the store folder (``fcntl.flock`` on its ``.lock`` file), so a rename and a save of one entry never interleave.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
import tempfile
import time
import unicodedata
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

import numpy as np

from metaeval_core import _paths
from metaeval_core.data.dataset import Dataset, DatasetError, Measure

_FORMAT = 1
#: Largest entry, in bytes once its arrays are inflated (the dense arrays of an upload at its cell limit,
#: 40M cells x 8 bytes, with room for per-annotator scores); a larger entry is listed as damaged, never loaded.
MAX_ENTRY_BYTES = 1 << 30
_MAX_META_BYTES = 64 << 20  # the JSON metadata (names, notes, input attributes)
_MAX_MEMBERS = 20_000  # arrays in one entry (a few per measure; uploads have at most 2,000 measures)
_SIDECAR_MAX_BYTES = 16 * 2**20  # a sidecar (a draft's exclusions and steps) read at most this large
_LOCK_WAIT = 30.0  # seconds a save/rename/delete waits for another one to finish
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


@dataclass(frozen=True)
class DamagedEntry:
    """A store file that cannot be read: its key, path, size in bytes and the reason (it can be deleted)."""

    key: str
    path: Path
    reason: str
    size: int


def slugify(name: str) -> str:
    slug = _SLUG.sub("-", name.strip().lower()).strip("-")[:60]
    return slug or "dataset"


def normal_name(name: str) -> str:
    """A display name as the store compares it: NFC, surrounding blanks removed."""
    return unicodedata.normalize("NFC", name).strip()


def store_key(name: str) -> str:
    """The file stem of ``name``: its slug (readable) plus 8 hex digits of the sha256 of its NFC form.

    ``slugify`` alone maps ``数据``, ``данные`` and ``.`` all to ``dataset``; the hash keeps names that differ
    apart, while the same name in NFC or NFD form gets the same key. Entries saved before (plain slug keys)
    are still read, renamed and deleted under their old key.
    """
    digest = hashlib.sha256(normal_name(name).encode("utf-8")).hexdigest()[:8]
    return f"{slugify(normal_name(name))[:51]}-{digest}"


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
    texts = getattr(dataset, "texts", None)
    if texts is not None:
        arrays.update(_pack_texts(texts))
    meta = {
        "format": _FORMAT,
        "name": name,
        "texts": None if texts is None else {"files": str(getattr(texts, "files", ""))},
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
        "task": dataset.task,
        "annotator_identity": dataset.annotator_identity,
        "conventions": None if dataset.conventions is None else dataset.conventions.to_dict(),
        "saved_at": time.time(),
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def _pack(strings) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 byte array and their offsets (no pickled objects; None is stored as '')."""
    encoded = [b"" if text is None else str(text).encode("utf-8") for text in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def _unpack(blob: np.ndarray, offsets: np.ndarray, count: int, what: str) -> list[str]:
    if offsets.shape != (count + 1,) or offsets[0] != 0 or offsets[-1] != blob.size or (np.diff(offsets) < 0).any():
        raise ValueError(f"its {what} texts are inconsistent")
    data = blob.tobytes()
    return [data[a:b].decode("utf-8") for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]


def _pack_texts(texts) -> dict[str, np.ndarray]:
    """A dataset's texts (ExampleTexts: outputs, sources, references) as plain arrays: its own systems and inputs
    (a subset of the dataset keeps every text), outputs row-major with a missing output stored as ''."""
    arrays = {"text_systems": np.array(texts.systems, dtype=np.str_),
              "text_inputs": np.array(texts.inputs, dtype=np.str_)}
    for part, strings in (("outputs", texts.outputs.ravel()), ("sources", texts.sources),
                          ("references", texts.references)):
        arrays[f"text_{part}"], arrays[f"text_{part}_offsets"] = _pack(strings)
    return arrays


def _unpack_texts(archive, meta: dict, dataset_id: str):
    """The texts :func:`_pack_texts` stored, or None when the entry has none (entries saved before had none)."""
    if not isinstance(meta.get("texts"), dict):
        return None
    from metaeval_core.data.text_model import ExampleTexts

    systems, inputs = archive["text_systems"].tolist(), archive["text_inputs"].tolist()
    n, m = len(systems), len(inputs)
    parts = {part: _unpack(archive[f"text_{part}"], archive[f"text_{part}_offsets"], count, part)
             for part, count in (("outputs", n * m), ("sources", m), ("references", m))}
    outputs = np.array([text or None for text in parts["outputs"]], dtype=object).reshape(n, m)
    return ExampleTexts(dataset_id, tuple(systems), tuple(inputs), outputs, tuple(parts["sources"]),
                        tuple(parts["references"]), str(meta["texts"].get("files", "")))


# What a truncated, emptied or corrupted .npz (or its metadata) raises while it is read.
_UNREADABLE = (OSError, EOFError, ValueError, KeyError, IndexError, TypeError, AttributeError, zipfile.BadZipFile,
               zlib.error, UnicodeDecodeError, NotImplementedError)  # zipfile: "zip file version 11.9"


def _open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading only if it is a regular file: no waiting on a FIFO (O_NONBLOCK), no link
    followed (O_NOFOLLOW), no device read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(f"stored dataset {path.name} cannot be read: it is not a regular file (a FIFO, device "
                             "or folder); delete it")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _array_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype an ``.npy`` member declares, read from its first bytes (nothing else inflated)."""
    with archive.open(info) as handle:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(handle)
        else:
            raise ValueError(f"member {info.filename} has .npy format version {version}")
    if dtype.hasobject:
        raise ValueError(f"member {info.filename} holds Python objects")
    return shape, dtype


def _inspect(path: Path, handle: BinaryIO, *, verify: bool) -> tuple[dict, dict[str, tuple[int, ...]]]:
    """An entry's metadata and its arrays' shapes, from the zip directory and the array headers only.

    Refuses (StoreError) an entry whose arrays declare more than MAX_ENTRY_BYTES, or too many members, before
    anything is inflated; ``verify`` also streams every member through its CRC check in constant memory."""
    with zipfile.ZipFile(handle) as archive:
        infos = archive.infolist()
        if len(infos) > _MAX_MEMBERS:
            raise StoreError(f"stored dataset {path.name} cannot be read: it holds {len(infos):,} arrays, more than "
                             f"{_MAX_MEMBERS:,}")
        names = [info.filename for info in infos]
        if len(set(names)) != len(names):
            raise StoreError(f"stored dataset {path.name} cannot be read: two arrays have the same name")
        shapes: dict[str, tuple[int, ...]] = {}
        declared = sum(info.file_size for info in infos)
        for info in infos:
            shape, dtype = _array_header(archive, info)
            shapes[info.filename.removesuffix(".npy")] = shape
            declared += int(np.prod(shape, dtype=object)) * dtype.itemsize
            if declared > 2 * MAX_ENTRY_BYTES:
                break
        if declared > 2 * MAX_ENTRY_BYTES:  # each array counted twice: as the zip says and as its header says
            raise StoreError(f"stored dataset {path.name} cannot be read: its arrays inflate to more than "
                             f"{MAX_ENTRY_BYTES / 2**30:g} GiB, the store's limit per entry; delete it")
        meta_shape = shapes.get("meta")
        if meta_shape is None or len(meta_shape) != 1:
            raise KeyError("meta")
        if meta_shape[0] > _MAX_META_BYTES:
            raise StoreError(f"stored dataset {path.name} cannot be read: its metadata has {meta_shape[0]:,} bytes, "
                             f"more than {_MAX_META_BYTES:,}")
        meta = json.loads(np.load(io.BytesIO(archive.read("meta.npy")), allow_pickle=False).tobytes()
                          .decode("utf-8"))
        if verify:
            for info in infos:
                with archive.open(info) as member:  # zipfile checks the CRC at the end of the stream
                    while member.read(1 << 20):
                        pass
    if not isinstance(meta, dict):
        raise StoreError(f"stored dataset {path.name} cannot be read: its metadata is a {type(meta).__name__}, "
                         "not an object")
    if meta.get("format") != _FORMAT:
        raise StoreError(f"{path.name}: unsupported store format {meta.get('format')!r}")
    if not isinstance(meta.get("measures"), list) or "systems" not in shapes or "inputs" not in shapes:
        raise KeyError("measures")
    return meta, shapes


def _failure(path: Path, error: BaseException) -> StoreError:
    """A StoreError naming the entry, for any failure while it is read (one line)."""
    if isinstance(error, StoreError):
        return error
    if isinstance(error, MemoryError):
        reason = "not enough memory to read it"
    else:
        text = str(error).strip()
        reason = text.splitlines()[0] if text else type(error).__name__
    return StoreError(f"stored dataset {path.name} cannot be read: {reason}")


def _deserialise(path: Path) -> tuple[dict, Dataset]:
    try:
        with _open_regular(path) as handle:
            meta, _ = _inspect(path, handle, verify=False)
            handle.seek(0)
            with np.load(handle, allow_pickle=False) as archive:
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
                    task=str(meta.get("task", "")),
                    annotator_identity=str(meta.get("annotator_identity", "unknown")),
                    conventions=_conventions(meta.get("conventions")),
                    texts=_unpack_texts(archive, meta, f"user:{path.stem}"),
                )
    except StoreError:
        raise
    except (*_UNREADABLE, MemoryError) as error:
        raise _failure(path, error) from error
    except DatasetError as error:  # well-formed arrays that do not make a dataset
        raise StoreError(f"stored dataset {path.name} cannot be read: {error}") from error
    return meta, dataset


def _listing(path: Path) -> StoredDataset:
    """An entry as the store lists it, from its metadata and array headers (the arrays are not loaded)."""
    try:
        with _open_regular(path) as handle:
            meta, shapes = _inspect(path, handle, verify=True)
            mtime = os.fstat(handle.fileno()).st_mtime
        systems, inputs = shapes["systems"], shapes["inputs"]
        if len(systems) != 1 or len(inputs) != 1:
            raise ValueError("the systems and inputs arrays must be 1-D")
        for k, spec in enumerate(meta["measures"]):
            if shapes.get(f"scores_{k}") != (systems[0], inputs[0]):
                raise ValueError(f"the scores of measure {k} do not have the shape systems x inputs")
        return StoredDataset(key=path.stem, name=str(meta.get("name", path.stem)),
                             saved_at=float(meta.get("saved_at", mtime)), n_systems=int(systems[0]),
                             n_inputs=int(inputs[0]), n_measures=len(meta["measures"]), path=path)
    except FileNotFoundError:
        raise  # deleted meanwhile: not an entry any more
    except Exception as error:  # one entry's failure (MemoryError included) never hides the others
        raise _failure(path, error) from None


def _atomic_write(path: Path, payload: bytes, *, overwrite: bool = True) -> None:
    """Write ``payload`` to ``path`` whole or not at all. Without ``overwrite`` the file is published with
    ``os.link`` (atomic, fails if ``path`` exists): FileExistsError, and whoever linked first keeps the name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(tmp_name, path)
        else:
            os.link(tmp_name, path)
            os.unlink(tmp_name)
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

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the store's exclusive lock (``flock`` on ``<root>/.lock``; released when the file is closed, also
        when the process dies). Saves, renames and deletes take it, so they never interleave."""
        try:
            import fcntl
        except ImportError:  # no flock (Windows): single-user use only
            yield
            return
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            until = time.monotonic() + _LOCK_WAIT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > until:
                        raise StoreError(f"the store {self.root} is busy: another save, rename or delete has held its "
                                         f"lock for {_LOCK_WAIT:g} s; try again") from None
                    time.sleep(0.005)
            yield
        finally:
            os.close(fd)

    def _path(self, key: str) -> Path:
        if not key or slugify(key) != key:
            raise StoreError(f"store key must be a slug of letters, digits, '-' or '_'; got {key!r}")
        return self.root / f"{key}.npz"

    def save(self, dataset: Dataset, name: str, *, key: str | None = None, overwrite: bool = False) -> StoredDataset:
        """Write ``dataset`` under ``name``; refuses to replace an existing entry unless ``overwrite``.

        Without ``overwrite`` the check and the write are one atomic step, so of two processes saving the same
        name at once exactly one succeeds and the other gets a StoreError.
        """
        if not isinstance(dataset, Dataset):
            raise TypeError(f"dataset must be a Dataset; got {type(dataset).__name__}")
        if not isinstance(name, str) or not name.strip():
            raise StoreError("name must not be empty")
        with self._locked():
            return self._save(dataset, normal_name(name), key=key, overwrite=overwrite)

    def _save(self, dataset: Dataset, name: str, *, key: str | None, overwrite: bool) -> StoredDataset:
        key = key or self._existing_key(name) or store_key(name)
        path = self._path(key)
        try:
            _atomic_write(path, _serialise(dataset, name), overwrite=overwrite)
        except FileExistsError:
            raise StoreError(f"a stored dataset called {name!r} exists already; choose another name or overwrite "
                             "it") from None
        return _listing(path)

    def _existing_key(self, name: str) -> str | None:
        """The key of an entry saved before hashed keys (plain slug) under this very name, if any."""
        legacy = self.root / f"{slugify(name)}.npz"
        if not legacy.is_file():
            return None
        try:
            meta, _ = _deserialise(legacy)
        except StoreError:
            return None
        return legacy.stem if normal_name(str(meta.get("name", ""))) == name else None

    def load(self, key: str) -> Dataset:
        path = self._path(key)
        if not os.path.lexists(path):
            raise StoreError(f"no stored dataset called {key!r}")
        return _deserialise(path)[1]

    def scan(self) -> tuple[list[StoredDataset], list[DamagedEntry]]:
        """The readable entries (newest first) and the damaged ones (with the reason each cannot be read)."""
        if not self.root.is_dir():
            return [], []
        entries, damaged = [], []
        for path in sorted(self.root.glob("*.npz")):
            try:
                status = path.lstat()
            except OSError:
                continue  # deleted meanwhile
            if stat.S_ISDIR(status.st_mode):
                continue
            try:
                entries.append(_listing(path))
            except FileNotFoundError:
                continue
            except StoreError as error:
                damaged.append(DamagedEntry(path.stem, path, str(error), status.st_size))
        return sorted(entries, key=lambda e: e.saved_at, reverse=True), damaged

    def list(self) -> list[StoredDataset]:
        """Every readable entry, newest first (see :meth:`damaged` for the others; temporary files ignored)."""
        return self.scan()[0]

    def damaged(self) -> list[DamagedEntry]:
        """Every entry file that cannot be read (truncated, empty, corrupted), with the reason."""
        return self.scan()[1]

    def rename(self, key: str, new_name: str) -> StoredDataset:
        """Change the display name (and key) of an entry.

        The renamed copy is published first (never over an existing entry); then the old file is claimed by an
        atomic ``os.rename`` to a private name. Of two concurrent renames of one entry only one claims it; the
        other removes its copy and fails, so an entry is never duplicated (a crash in between leaves both names,
        never none).
        """
        if not isinstance(new_name, str) or not new_name.strip():
            raise StoreError("new name must not be empty")
        with self._locked():
            return self._rename(key, normal_name(new_name))

    def _rename(self, key: str, new_name: str) -> StoredDataset:
        dataset = self.load(key)
        new_key = store_key(new_name)
        if new_key == key:
            return self._save(dataset, new_name, key=key, overwrite=True)
        entry = self._save(dataset, new_name, key=new_key, overwrite=False)
        claimed = self.root / f".{key}.renaming-{os.getpid()}-{time.monotonic_ns()}"
        try:
            os.rename(self._path(key), claimed)
        except FileNotFoundError:
            entry.path.unlink(missing_ok=True)
            raise StoreError(f"stored dataset {key!r} was renamed or deleted meanwhile; nothing changed") from None
        claimed.unlink(missing_ok=True)
        _fsync_dir(self.root)
        self._record_alias(key, entry.key)
        return entry

    # -- aliases: links written with an entry's old key keep working after a rename -------------------------
    _ALIASES = ".aliases.json"  # hidden, like the lock: not an entry

    def _aliases(self) -> dict[str, str]:
        try:
            raw = json.loads((self.root / self._ALIASES).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}

    def _record_alias(self, old: str, new: str) -> None:
        """Remember that ``old`` was renamed to ``new`` (earlier keys of the entry follow it too)."""
        aliases = {k: (new if v == old else v) for k, v in self._aliases().items() if k != new}
        aliases[old] = new
        try:
            _atomic_write(self.root / self._ALIASES, json.dumps(aliases, sort_keys=True).encode("utf-8"))
        except OSError:
            pass  # an alias is a convenience: the rename itself has succeeded

    def current_key(self, key: str) -> str | None:
        """The key an entry has now: ``key`` when it exists, else the key it was renamed to (following later
        renames), else None (deleted, or never stored)."""
        seen = set()
        while key not in seen:
            seen.add(key)
            try:
                if os.path.lexists(self._path(key)):
                    return key
            except StoreError:
                return None
            key = self._aliases().get(key, "")
            if not key:
                return None
        return None

    def delete(self, key: str) -> None:
        path = self._path(key)
        with self._locked():
            if not os.path.lexists(path):
                raise StoreError(f"no stored dataset called {key!r}")
            path.unlink()

    # -- entries with a JSON sidecar (What-if drafts): two files published whole, under one hold of the lock -----
    def save_with_sidecar(self, dataset: Dataset, name: str, *, key: str, sidecar: dict) -> StoredDataset:
        """Write ``dataset`` as ``<key>.npz`` and ``sidecar`` as ``<key>.json``, each atomically, under one hold of
        the lock and never over an existing entry: a StoreError when ``key`` is taken (an entry written this way
        is never overwritten, so whoever holds its key sees what was written). The JSON is published last, so a
        reader that finds it finds the whole entry."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"dataset must be a Dataset; got {type(dataset).__name__}")
        payload = json.dumps(sidecar).encode("utf-8")
        with self._locked():
            sidecar_path = self._path(key).with_suffix(".json")
            if os.path.lexists(sidecar_path):
                raise StoreError(f"the entry {key!r} exists already")
            listing = self._save(dataset, normal_name(name), key=key, overwrite=False)
            try:
                _atomic_write(sidecar_path, payload, overwrite=False)
            except FileExistsError:
                raise StoreError(f"the entry {key!r} exists already") from None
        return listing

    def load_sidecar(self, key: str) -> dict:
        """The sidecar of an entry written by :meth:`save_with_sidecar` (StoreError when absent or unreadable)."""
        path = self._path(key).with_suffix(".json")
        try:
            with _open_regular(path) as handle:
                raw = handle.read(_SIDECAR_MAX_BYTES + 1)
            if len(raw) > _SIDECAR_MAX_BYTES:
                raise ValueError(f"larger than {_SIDECAR_MAX_BYTES:,} bytes")
            value = json.loads(raw.decode("utf-8"))
        except FileNotFoundError:
            raise StoreError(f"no stored entry {key!r}") from None
        except (OSError, ValueError) as error:
            raise StoreError(f"the entry {key!r} cannot be read: {error}") from None
        if not isinstance(value, dict):
            raise StoreError(f"the entry {key!r} cannot be read: its sidecar is not a JSON object")
        return value

    def delete_with_sidecar(self, key: str) -> None:
        """Delete ``<key>.json`` then ``<key>.npz`` under the lock (absent files are fine)."""
        path = self._path(key)
        with self._locked():
            for target in (path.with_suffix(".json"), path):
                try:
                    target.unlink()
                except FileNotFoundError:
                    pass

    def prune(self, prefix: str, *, max_age_seconds: float, keep_newest: int) -> int:
        """Under the lock, delete the entries (and sidecars) whose key starts with ``prefix`` and that are older
        than ``max_age_seconds`` or beyond the ``keep_newest`` most recent; returns how many were deleted."""
        with self._locked():
            entries = []
            for path in self.root.glob(f"{prefix}*.npz"):
                try:
                    entries.append((path.lstat().st_mtime, path))
                except FileNotFoundError:
                    continue
            entries.sort(reverse=True)
            now = time.time()
            removed = 0
            for rank, (mtime, path) in enumerate(entries):
                if rank >= keep_newest or now - mtime > max_age_seconds:
                    for target in (path.with_suffix(".json"), path):
                        try:
                            target.unlink()
                        except FileNotFoundError:
                            pass
                    removed += 1
            return removed

    def remove_stale_temporaries(self, *, max_age_seconds: float = 3600.0) -> int:
        """Delete temporary files left by writers that died mid-save (older than ``max_age_seconds``), and old
        files claimed by a rename that died before deleting them (their renamed copy exists already)."""
        if not self.root.is_dir():
            return 0
        removed = 0
        now = time.time()
        claimed = list(self.root.glob(".*.renaming-*"))
        for tmp in [*self.root.glob(".*.tmp"), *claimed]:
            try:
                if tmp in claimed or now - tmp.stat().st_mtime > max_age_seconds:
                    tmp.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        return removed


def _conventions(raw: object):
    """A stored dataset's WMT conventions record (None when it has none)."""
    from metaeval_core.data.conventions import WmtConventions

    return WmtConventions.from_dict(raw) if isinstance(raw, dict) else None
