"""The registry of built-in datasets: what exists, whether it is available, loading and downloading.

The registry is ``data/registry.json`` in the repository. Each entry names a
loader (:data:`metaeval_core.data.loaders.LOADERS`) and the files it needs, by path
relative to the data directory, with the upstream download URL and sha256
copied from the data mirror's ``MANIFEST.json``. A dataset is *available* when
all its required files are present in the data directory; loading verifies
their sha256 first. Downloads use pooch and verify sha256 before a file is put
in place.

The data directory is ``$METAEVAL_DATA_DIR`` when set, else
``<repo>/data/cache`` (git-ignored). Nothing is cached in memory except the
parsed registry file: the UI caches datasets on ``(id, version)``.

References: docs/methods.md sec. 0; the data mirror's README.md and MANIFEST.json.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Sequence

from metaeval_core import _paths
from metaeval_core.data.dataset import Dataset, DatasetError

REGISTRY_PATH = _paths.registry_path()
DEFAULT_DATA_DIR = _paths.default_data_dir()
DATA_DIR_ENV = "METAEVAL_DATA_DIR"
BASE_URL_ENV = "METAEVAL_DATA_BASE_URL"
DEMO_ID = "demo"

FileStatus = Literal["ok", "missing", "mismatch", "unpinned"]


# ---------------------------------------------------------------------------
# Data classes
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class DataFile:
    """One file a dataset needs (or may use), as listed in the registry.

    ``path`` is relative to the data directory. ``url`` is ``None`` when the file
    cannot be downloaded (a derived file, or an optional file without a pinned
    checksum); ``sha256`` is ``None`` only for optional files.
    """

    path: str
    url: str | None
    sha256: str | None
    bytes: int | None = None
    required: bool = True
    upstream: str = ""

    @property
    def downloadable(self) -> bool:
        return self.url is not None and self.sha256 is not None


@dataclass(frozen=True)
class DatasetInfo:
    """A registry entry and its availability in one data directory.

    ``available`` is True when every required file is present (``reason`` is
    then ``''``); otherwise ``reason`` says what is missing and how to get it.
    ``files`` are the required files; ``optional_present`` the relative paths
    of the optional files found in the data directory.

    References: docs/methods.md sec. 0.
    """

    id: str
    title: str
    citation: str
    licence: str
    description: str
    available: bool
    reason: str
    files: tuple[DataFile, ...]
    optional_present: tuple[str, ...]
    optional_files: tuple[DataFile, ...] = ()
    loader: str = ""
    missing: tuple[str, ...] = ()
    downloadable: bool = False


@dataclass(frozen=True)
class FileCheck:
    """The sha256 check of one file: ``status`` is ok, missing, mismatch or unpinned (no checksum known)."""

    path: str
    status: FileStatus
    expected: str | None
    actual: str | None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


# ---------------------------------------------------------------------------
# The registry file
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Entry:
    id: str
    title: str
    citation: str
    licence: str
    description: str
    loader: str
    files: tuple[DataFile, ...]
    optional_files: tuple[DataFile, ...]
    options: tuple[tuple[str, Any], ...]


def _parse_file(raw: object, where: str, *, required: bool) -> DataFile:
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str) or not raw["path"]:
        raise DatasetError(f"{where}: each file needs a non-empty 'path'")
    path = raw["path"]
    if path.startswith(("/", "\\")) or ".." in Path(path).parts:
        raise DatasetError(f"{where}: file path {path!r} must be relative and stay inside the data directory")
    sha = raw.get("sha256")
    if required and not (isinstance(sha, str) and len(sha) == 64):
        raise DatasetError(f"{where}: required file {path!r} needs a 64-hex sha256")
    return DataFile(
        path=path,
        url=raw.get("url"),
        sha256=sha,
        bytes=raw.get("bytes"),
        required=required,
        upstream=str(raw.get("upstream", "")),
    )


@lru_cache(maxsize=4)
def _read_registry(path: str) -> tuple[_Entry, ...]:
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
    except (OSError, json.JSONDecodeError) as error:
        raise DatasetError(f"cannot read the dataset registry {path}: {error}") from error
    if not isinstance(raw, dict) or not isinstance(raw.get("datasets"), list):
        raise DatasetError(f"{path}: the registry must be an object with a 'datasets' list")
    from metaeval_core.data.loaders import LOADERS

    entries = []
    for k, item in enumerate(raw["datasets"]):
        where = f"{path}, dataset {k}"
        if not isinstance(item, dict):
            raise DatasetError(f"{where}: each dataset must be an object")
        for key in ("id", "title", "citation", "licence", "description", "loader"):
            if not isinstance(item.get(key), str):
                raise DatasetError(f"{where}: field {key!r} must be a string")
        if item["loader"] not in LOADERS:
            raise DatasetError(f"{where}: unknown loader {item['loader']!r}; known: {', '.join(LOADERS)}")
        entries.append(
            _Entry(
                id=item["id"],
                title=item["title"],
                citation=item["citation"],
                licence=item["licence"],
                description=item["description"],
                loader=item["loader"],
                files=tuple(_parse_file(f, f"{where} ({item['id']})", required=True) for f in item.get("files", [])),
                optional_files=tuple(
                    _parse_file(f, f"{where} ({item['id']})", required=False) for f in item.get("optional_files", [])
                ),
                options=tuple(sorted(dict(item.get("options", {})).items())),
            )
        )
    ids = [e.id for e in entries]
    if len(set(ids)) != len(ids):
        raise DatasetError(f"{path}: dataset ids must be unique")
    return tuple(entries)


def _entries() -> tuple[_Entry, ...]:
    return _read_registry(str(REGISTRY_PATH))


def dataset_ids() -> tuple[str, ...]:
    """The ids of the built-in datasets, in registry order (``demo`` first)."""
    return tuple(e.id for e in _entries())


def _entry(dataset_id: object) -> _Entry:
    if not isinstance(dataset_id, str):
        raise TypeError(f"dataset_id must be a string; got {type(dataset_id).__name__}")
    for entry in _entries():
        if entry.id == dataset_id:
            return entry
    raise DatasetError(f"unknown dataset {dataset_id!r}; known datasets: {', '.join(dataset_ids())}")


# ---------------------------------------------------------------------------
# Data directory and availability
# ---------------------------------------------------------------------------
def data_dir() -> Path:
    """The data directory: ``$METAEVAL_DATA_DIR`` when set, else ``<repo>/data/cache``.

    References: README of the data mirror.
    """
    configured = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(configured).expanduser() if configured else DEFAULT_DATA_DIR


def _resolve_dir(directory: object) -> Path:
    if directory is None:
        return data_dir()
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"data_dir must be a path or None; got {type(directory).__name__}")
    return Path(directory).expanduser()


def _info(entry: _Entry, directory: Path) -> DatasetInfo:
    missing = tuple(f.path for f in entry.files if not (directory / f.path).is_file())
    optional_present = tuple(f.path for f in entry.optional_files if (directory / f.path).is_file())
    downloadable = all(f.downloadable for f in entry.files)
    if not missing:
        reason = ""
    else:
        fix = (
            "download them with fetch_dataset() or load_dataset(..., download=True)"
            if all(f.downloadable for f in entry.files if f.path in missing)
            else "some cannot be downloaded and must come from a local mirror"
        )
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        reason = (
            f"{len(missing)} of {len(entry.files)} required file(s) missing from {directory} ({shown}); {fix}, "
            f"or set {DATA_DIR_ENV} to a folder holding them"
        )
    return DatasetInfo(
        id=entry.id,
        title=entry.title,
        citation=entry.citation,
        licence=entry.licence,
        description=entry.description,
        available=not missing,
        reason=reason,
        files=entry.files,
        optional_present=optional_present,
        optional_files=entry.optional_files,
        loader=entry.loader,
        missing=missing,
        downloadable=downloadable,
    )


def list_datasets(*, data_dir: Path | None = None) -> list[DatasetInfo]:
    """Every built-in dataset with its availability in ``data_dir``; ``demo`` first.

    Parameters
    ----------
    data_dir : path, optional
        The data directory (default: :func:`data_dir`).

    Returns
    -------
    list of DatasetInfo
        ``demo`` is always available; a real dataset is available iff all its
        required files are present (checksums are verified when it is loaded).

    References
    ----------
    docs/methods.md sec. 0.
    """
    directory = _resolve_dir(data_dir)
    infos = [_info(e, directory) for e in _entries()]
    return sorted(infos, key=lambda info: info.id != DEMO_ID)


def dataset_info(dataset_id: str, *, data_dir: Path | None = None) -> DatasetInfo:
    """The registry entry ``dataset_id`` and its availability in ``data_dir``.

    Raises
    ------
    DatasetError
        Unknown id (the message lists the known ids).

    References
    ----------
    docs/methods.md sec. 0.
    """
    entry = _entry(dataset_id)
    return _info(entry, _resolve_dir(data_dir))


# ---------------------------------------------------------------------------
# Checksums
# ---------------------------------------------------------------------------
def file_sha256(path: Path) -> str:
    """The sha256 hex digest of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _check(file: DataFile, directory: Path) -> FileCheck:
    path = directory / file.path
    if not path.is_file():
        return FileCheck(file.path, "missing", file.sha256, None)
    actual = file_sha256(path)
    if file.sha256 is None:
        return FileCheck(file.path, "unpinned", None, actual)
    return FileCheck(file.path, "ok" if actual == file.sha256 else "mismatch", file.sha256, actual)


def verify_files(dataset_id: str, *, data_dir: Path | None = None) -> list[FileCheck]:
    """Check the sha256 of a dataset's files in ``data_dir``.

    Returns one :class:`FileCheck` per required file (status ``ok``,
    ``mismatch`` or ``missing``) and one per *present* optional file (status
    ``unpinned`` when the registry pins no checksum).

    References
    ----------
    MANIFEST.json of the data mirror (the pinned sha256 values).
    """
    entry = _entry(dataset_id)
    directory = _resolve_dir(data_dir)
    checks = [_check(f, directory) for f in entry.files]
    checks += [_check(f, directory) for f in entry.optional_files if (directory / f.path).is_file()]
    return checks


def _mismatch_message(check: FileCheck, directory: Path, dataset_id: str) -> str:
    return (
        f"{directory / check.path}: sha256 mismatch for dataset {dataset_id!r} (expected {check.expected}, "
        f"got {check.actual}); the file is corrupt or a different version. Delete it and run "
        f"fetch_dataset({dataset_id!r}) to download the pinned copy"
    )


# ---------------------------------------------------------------------------
# Download
# ---------------------------------------------------------------------------
def _validate_fetch(dataset_id: object, directory: object, base_url: object) -> tuple[_Entry, Path, str | None]:
    entry = _entry(dataset_id)
    path = _resolve_dir(directory)
    if base_url is None:
        base_url = os.environ.get(BASE_URL_ENV, "").strip() or None
    if base_url is not None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://", "file://")):
            raise ValueError(f"base_url must be an http(s):// or file:// URL or None; got {base_url!r}")
        base_url = base_url.rstrip("/")
    return entry, path, base_url


def fetch_dataset(dataset_id: str, *, data_dir: Path | None = None, base_url: str | None = None) -> list[Path]:
    """Download a dataset's missing required files with pooch and verify every file's sha256.

    Parameters
    ----------
    dataset_id : str
        A registry id.
    data_dir : path, optional
        Where the files go, keeping their relative paths (default: :func:`data_dir`).
    base_url : str, optional
        Replaces the upstream URL: a file is then fetched from
        ``base_url + '/' + path`` (its path relative to the data directory), e.g.
        a local mirror served over HTTP. Default: ``$METAEVAL_DATA_BASE_URL`` when
        set, else each file's upstream URL.

    Returns
    -------
    list of Path
        The local paths of all required files, verified.

    Raises
    ------
    DatasetError
        A download fails or its sha256 does not match (pooch downloads to a
        temporary file and removes it, so the bad file is never put in place);
        a present file has the wrong sha256 and cannot be re-downloaded; a
        missing file has no download URL. Optional files are never downloaded.

    References
    ----------
    pooch documentation, ``pooch.retrieve``; MANIFEST.json of the data mirror.
    """
    entry, directory, base = _validate_fetch(dataset_id, data_dir, base_url)
    paths = []
    for file in entry.files:
        target = directory / file.path
        check = _check(file, directory)
        if check.status == "ok":
            paths.append(target)
            continue
        if not file.downloadable:
            if check.status == "missing":
                raise DatasetError(
                    f"{file.path} (dataset {entry.id!r}) has no download URL: it is a derived file that must be "
                    f"present in the data directory {directory}"
                )
            raise DatasetError(_mismatch_message(check, directory, entry.id))
        url = f"{base}/{file.path}" if base else str(file.url)
        _download(url, file, target)
        after = _check(file, directory)
        if after.status != "ok":  # pooch verified already; never keep a file that fails our check
            target.unlink(missing_ok=True)
            raise DatasetError(_mismatch_message(after, directory, entry.id))
        paths.append(target)
    return paths


def _download(url: str, file: DataFile, target: Path) -> None:
    import pooch  # lazily: only downloads need it
    import requests

    try:
        pooch.retrieve(
            url,
            known_hash=f"sha256:{file.sha256}",
            fname=target.name,
            path=target.parent,
            progressbar=False,
        )
    except ValueError as error:
        # pooch raises ValueError on a hash mismatch after deleting its temporary file.
        raise DatasetError(
            f"download of {file.path} from {url} refused: its sha256 does not match the pinned {file.sha256} "
            f"(the server sent a different or corrupted file; nothing was written to {target.parent}). "
            f"pooch said: {error}"
        ) from error
    except (requests.exceptions.RequestException, OSError) as error:
        raise DatasetError(f"download of {file.path} from {url} failed: {error}") from error


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------
def _version(checks: list[FileCheck], entry: _Entry) -> str:
    from metaeval_core.data.loaders import LOADER_VERSION

    digest = hashlib.sha256(f"{entry.id}\x1f{entry.loader}:{LOADER_VERSION}\x1f{entry.options!r}".encode())
    for check in sorted(checks, key=lambda c: c.path):
        digest.update(f"\x1e{check.path}\x1f{check.actual}".encode())
    return digest.hexdigest()[:16]


def _validate_load(id_or_path: object, directory: object, download: object) -> Path:
    if not isinstance(id_or_path, (str, os.PathLike)):
        raise TypeError(f"id_or_path must be a dataset id or a file path; got {type(id_or_path).__name__}")
    if not isinstance(download, bool):
        raise TypeError(f"download must be True or False; got {download!r}")
    return _resolve_dir(directory)


def load_dataset(id_or_path: str, *, data_dir: Path | None = None, download: bool = False,
                 human_measures: Sequence[str] | None = None) -> Dataset:
    """Load a built-in dataset by id, or a user file by path.

    Parameters
    ----------
    id_or_path : str or path
        ``'demo'`` (the synthetic dataset), a registry id, or the path of an
        existing file, read by :func:`metaeval_core.data.upload.read_user_file`.
        A registry id takes precedence over a file of the same name.
    data_dir : path, optional
        The data directory (default: :func:`data_dir`).
    download : bool
        When required files are missing, download them first (:func:`fetch_dataset`,
        from ``$METAEVAL_DATA_BASE_URL`` when set, else the upstream URLs).
    human_measures : sequence of str, optional
        For a file only: its human measures, passed to ``read_user_file`` (they override the
        file's ``kind`` column and detection by name). A built-in dataset's kinds are fixed.

    Returns
    -------
    Dataset
        With title, citation, licence and description from the registry,
        ``version`` a stable hash of the files' sha256 (and the loader version),
        and ``notes`` listing caveats.

    Raises
    ------
    DatasetError
        Unknown id and no such file (the message lists the known ids); ``human_measures``
        for a built-in dataset; missing
        files (the message gives the reason); a file whose sha256 differs from
        the pinned one; a malformed file (the message names file and line).

    References
    ----------
    docs/methods.md sec. 0.
    """
    directory = _validate_load(id_or_path, data_dir, download)
    key = os.fspath(id_or_path)
    if human_measures is not None and key in dataset_ids():  # the demo included
        raise DatasetError(f"{key!r} is a built-in dataset, whose human and metric measures are fixed; human "
                           f"measures can be declared only for a file")
    if key == DEMO_ID:
        from metaeval_core.data.synthetic import synthetic_dataset

        return synthetic_dataset()
    if key in dataset_ids():
        return _load_registered(_entry(key), directory, download)
    path = Path(key).expanduser()
    if path.is_file():
        from metaeval_core.data.upload import read_user_file  # written separately; imported only when needed

        return read_user_file(path, **({} if human_measures is None else {"human_measures": human_measures}))
    raise DatasetError(
        f"{key!r} is neither a built-in dataset nor an existing file; known datasets: {', '.join(dataset_ids())}"
    )


def _load_registered(entry: _Entry, directory: Path, download: bool) -> Dataset:
    from metaeval_core.data.loaders import LOADERS, LoaderFiles

    info = _info(entry, directory)
    if not info.available:
        if not download:
            raise DatasetError(f"dataset {entry.id!r} is not available: {info.reason}")
        fetch_dataset(entry.id, data_dir=directory)
    checks = [_check(f, directory) for f in entry.files]
    for check in checks:
        if check.status != "ok":
            raise DatasetError(_mismatch_message(check, directory, entry.id))
    optional = {f.path: directory / f.path for f in entry.optional_files if (directory / f.path).is_file()}
    checks += [_check(f, directory) for f in entry.optional_files if f.path in optional]
    files = LoaderFiles(
        required={f.path: directory / f.path for f in entry.files},
        optional=optional,
        options=dict(entry.options),
    )
    loaded = LOADERS[entry.loader](files)
    return loaded.to_dataset(
        entry.id,
        title=entry.title,
        citation=entry.citation,
        licence=entry.licence,
        description=entry.description,
        version=_version(checks, entry),
    )
