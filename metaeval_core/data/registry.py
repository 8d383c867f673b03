"""The registry of built-in datasets: what exists, whether it is available, loading and downloading.

The registry is ``data/registry.json`` in the repository. Each entry names a
loader (:data:`metaeval_core.data.loaders.LOADERS`) and the files it needs, by path
relative to the data directory, with the upstream download URL and sha256
copied from the data mirror's ``MANIFEST.json``. A dataset is *available* when
all its required files are present in the data directory (however they got there:
a mirror, :func:`fetch_dataset`, a copy; no ``MANIFEST.json`` is needed); loading
verifies their sha256 first. Downloads stream over http(s) with a size cap (the
registry's byte count), a deadline and a sha256 check before a file is put in place.

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
from metaeval_core._text import printable, redact_url
from metaeval_core.data.dataset import Dataset, DatasetError

REGISTRY_PATH = _paths.registry_path()
DEFAULT_DATA_DIR = _paths.default_data_dir()
DATA_DIR_ENV = "METAEVAL_DATA_DIR"
BASE_URL_ENV = "METAEVAL_DATA_BASE_URL"
DEMO_ID = "demo"

FileStatus = Literal["ok", "missing", "mismatch", "unpinned"]
# What a dataset holds: 'scores' (systems x inputs score matrices, a Dataset) or 'pairwise' ("A or B?" verdicts
# of people and judges on pairs of outputs, metaeval_core.judges.PairwiseData). The score pages and commands
# list and load only 'scores'; `metaeval judges` and the judges pages only 'pairwise'.
DatasetKind = Literal["scores", "pairwise"]
DATASET_KINDS: tuple[str, ...] = ("scores", "pairwise")
# The loaders of kind 'pairwise' by name. They live a floor up (metaeval_core.judges.loaders.PAIRWISE_LOADERS, which
# loads through verified_files); the registry only checks the names (tests/test_architecture.py: the two agree).
PAIRWISE_LOADER_NAMES: tuple[str, ...] = ("pandalm", "llmbar", "judgebench")


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
    of the optional files found in the data directory. ``short_reason`` is a
    few words for a table (e.g. ``'missing 2/9 files'``); ``data_dir`` the
    directory that was looked at.

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
    short_reason: str = ""
    data_dir: Path | None = None
    kind: str = "scores"


class DatasetUnavailable(DatasetError):
    """A built-in dataset whose required files are not in the data directory; ``info`` says which."""

    def __init__(self, message: str, info: DatasetInfo) -> None:
        super().__init__(message)
        self.info = info


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
    kind: str = "scores"


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
    from metaeval_core.data.loaders.catalogue import LOADERS

    entries = []
    for k, item in enumerate(raw["datasets"]):
        where = f"{path}, dataset {k}"
        if not isinstance(item, dict):
            raise DatasetError(f"{where}: each dataset must be an object")
        for key in ("id", "title", "citation", "licence", "description", "loader"):
            if not isinstance(item.get(key), str):
                raise DatasetError(f"{where}: field {key!r} must be a string")
        kind = item.get("kind", "scores")
        if kind not in DATASET_KINDS:
            raise DatasetError(f"{where}: field 'kind' must be one of {', '.join(DATASET_KINDS)}; got {kind!r}")
        known = tuple(LOADERS) if kind == "scores" else PAIRWISE_LOADER_NAMES
        if item["loader"] not in known:
            raise DatasetError(f"{where}: unknown loader {item['loader']!r} for kind {kind!r}; known: "
                               f"{', '.join(known)}")
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
                kind=kind,
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


_SET_DIR = f"set {DATA_DIR_ENV} to a folder holding them"


def missing_files_text(files: Sequence[DataFile], missing: Sequence[str], directory: Path) -> str:
    """'k of n required file(s) missing from DIR (a, b, c and 2 more)': the what, without a remedy."""
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    return f"{len(missing)} of {len(files)} required file(s) missing from {directory} ({shown})"


def _resolve_dir(directory: object) -> Path:
    if directory is None:
        return data_dir()
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"data_dir must be a path or None; got {type(directory).__name__}")
    return Path(directory).expanduser()


def _pair_extras(entry: _Entry) -> set[str]:
    """A test set's per-pair files outside its folder (option ``lp_files``, e.g. WMT23 en-de's side-by-side MQM):
    fetched with the test set, but only that pair's extra measure needs them, so their absence makes nothing
    unavailable (:func:`_for_lp` makes them the pair's optional files)."""
    return {path for paths in dict(dict(entry.options).get("lp_files", {})).values() for path in paths}


def _info(entry: _Entry, directory: Path) -> DatasetInfo:
    extras = _pair_extras(entry)
    required = tuple(f for f in entry.files if f.path not in extras)
    optional = (*entry.optional_files, *(f for f in entry.files if f.path in extras))
    missing = tuple(f.path for f in required if not (directory / f.path).is_file())
    optional_present = tuple(f.path for f in optional if (directory / f.path).is_file())
    downloadable = all(f.downloadable for f in entry.files)
    if not missing:
        reason = short = ""
    else:
        can_fetch = all(f.downloadable for f in entry.files if f.path in missing)
        short = f"missing {len(missing)}/{len(required)} files" + ("" if can_fetch else ", no URL")
        fix = (
            f"download them (`metaeval fetch --dataset {entry.id}`; in Python fetch_dataset({entry.id!r}))"
            if can_fetch
            else "some cannot be downloaded and must come from a local mirror"
        )
        reason = f"{missing_files_text(required, missing, directory)}; {fix}, or {_SET_DIR}"
    return DatasetInfo(
        id=entry.id,
        title=entry.title,
        citation=entry.citation,
        licence=entry.licence,
        description=entry.description,
        available=not missing,
        reason=reason,
        files=required,
        optional_present=optional_present,
        optional_files=optional,
        loader=entry.loader,
        missing=missing,
        downloadable=downloadable,
        short_reason=short,
        data_dir=directory,
        kind=entry.kind,
    )


def list_datasets(*, data_dir: Path | None = None, kind: DatasetKind | None = None) -> list[DatasetInfo]:
    """Every built-in dataset (of one ``kind``) with its availability in ``data_dir``; ``demo`` first.

    Parameters
    ----------
    data_dir : path, optional
        The data directory (default: :func:`data_dir`).
    kind : {'scores', 'pairwise'}, optional
        Only the datasets of this kind (default: all): score matrices (:func:`load_dataset`) or pairwise
        verdicts (:func:`metaeval_core.judges.load_pairwise`). ``DatasetInfo.kind`` says which each is.

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
    if kind is not None and kind not in DATASET_KINDS:
        raise ValueError(f"kind must be one of {', '.join(DATASET_KINDS)} or None; got {kind!r}")
    infos = [_info(e, directory) for e in _entries() if kind is None or e.kind == kind]
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
    """The sha256 hex digest of a file, read in 1 MiB chunks; computed once per (path, size, modification time) in a
    process (every load of a dataset checks its files; a cold WMT23 language pair has 245)."""
    try:
        stat = os.stat(path)
    except OSError:
        return _sha256_of(path)
    return _sha256_once(str(path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=4096)
def _sha256_once(path: str, size: int, mtime_ns: int) -> str:
    return _sha256_of(Path(path))


def _sha256_of(path: Path) -> str:
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
        f"`metaeval fetch --dataset {dataset_id}` (in Python fetch_dataset({dataset_id!r})) to download the pinned copy"
    )


# ---------------------------------------------------------------------------
# Download
# ---------------------------------------------------------------------------
DOWNLOAD_DEADLINE = 600.0  # seconds for one fetch_dataset call, all files together
READ_TIMEOUT = 30.0  # seconds a connection may stay silent (connect or read)
UNSIZED_LIMIT = 200 * 1024 * 1024  # byte cap for a file whose size the registry does not record
_CHUNK = 1 << 16
_MAX_REDIRECTS = 5


class DownloadError(DatasetError):
    """A download that failed or was refused; ``str()`` is one line saying which file, from where and why."""


def _validate_fetch(dataset_id: object, directory: object, base_url: object,
                    deadline: object) -> tuple[_Entry, Path, str | None, float]:
    entry = _entry(dataset_id)
    path = _resolve_dir(directory)
    if base_url is None:
        base_url = os.environ.get(BASE_URL_ENV, "").strip() or None
    if base_url is not None:
        if isinstance(base_url, str) and base_url.lower().startswith("file:"):
            # A local folder needs no download: reading it in place is both simpler and verified on load.
            raise ValueError(f"base_url {redact_url(base_url)!r} is a file:// URL, which is not downloaded: point "
                             f"{DATA_DIR_ENV} at that folder instead (files are verified by sha256 when loaded)")
        if not isinstance(base_url, str) or not base_url.lower().startswith(("http://", "https://")):
            shown = redact_url(base_url) if isinstance(base_url, str) else repr(base_url)
            raise ValueError(f"base_url must be an http:// or https:// URL or None; got {shown!r}")
        base_url = base_url.rstrip("/")
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or not 0 < deadline < float("inf"):
        raise ValueError(f"deadline must be a positive finite number of seconds; got {deadline!r}")
    return entry, path, base_url, float(deadline)


def fetch_dataset(dataset_id: str, *, data_dir: Path | None = None, base_url: str | None = None,
                  deadline: float = DOWNLOAD_DEADLINE) -> list[Path]:
    """Download a dataset's missing required files and verify every file's sha256.

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
        set, else each file's upstream URL. Only http(s): a ``file://`` URL is refused
        with a message saying to point ``$METAEVAL_DATA_DIR`` at the folder instead.
    deadline : float
        Seconds for the whole call (default 600). Each file is also capped at the size the
        registry records for it, and a connection silent for 30 s is abandoned, so a server
        that streams forever or trickles bytes neither fills the disk nor hangs the caller.

    Returns
    -------
    list of Path
        The local paths of all required files, verified.

    Raises
    ------
    DatasetError
        A download fails (:class:`DownloadError`: one line saying why: no network, connection
        refused, timed out, HTTP status, too large, a redirect to something other than http(s),
        or a sha256 that does not match); a present file has the wrong sha256 and cannot be
        re-downloaded; a missing file has no download URL. A file is written to a temporary
        name and put in place only once its sha256 matches; nothing is left behind on failure
        (no partial file, no folder this call created). Optional files are never downloaded.
    ValueError
        ``base_url`` is not an http(s) URL; ``deadline`` is not a positive number.

    References
    ----------
    MANIFEST.json of the data mirror (the pinned sizes and sha256 values).
    """
    import time

    entry, directory, base, seconds = _validate_fetch(dataset_id, data_dir, base_url, deadline)
    until = time.monotonic() + seconds
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
        _download(url, file, target, until=until, seconds=seconds)
        paths.append(target)
    return paths


def _new_folders(folder: Path) -> list[Path]:
    """The folders ``folder.mkdir(parents=True)`` would create, deepest first."""
    created = []
    while not folder.exists() and folder != folder.parent:
        created.append(folder)
        folder = folder.parent
    return created


def _reason(error: BaseException) -> str:
    """Why a connection failed, in a few words (no library text)."""
    import socket
    import urllib.error

    cause = error.reason if isinstance(error, urllib.error.URLError) and not isinstance(
        error, urllib.error.HTTPError) else error
    if isinstance(cause, socket.gaierror):
        return "no network (the server's name could not be resolved)"
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, (TimeoutError, socket.timeout)):
        return "timed out"
    if isinstance(cause, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
        return "the connection was reset"
    if isinstance(cause, OSError) and cause.errno in (101, 113):  # ENETUNREACH, EHOSTUNREACH
        return "no network (the network is unreachable)"
    if isinstance(cause, (OSError, ValueError)) and str(cause).strip():
        return " ".join(str(cause).split())[:160]
    return type(cause).__name__


class _Deadline:
    """The overall deadline of one download, over every connection it opens (redirect hops included).

    Each connection's socket timeout is the time left (at most READ_TIMEOUT), and a timer shuts every socket down
    when the deadline passes: a server that trickles its status line or headers a byte at a time, or redirects
    slowly, is cut there too, not only in the body loop."""

    def __init__(self, until: float) -> None:
        import threading
        import time

        self.until = until
        self.expired = False
        self._sockets: list = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, until - time.monotonic()), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def timeout(self) -> float:
        import time

        return max(0.05, min(READ_TIMEOUT, self.until - time.monotonic()))

    def watch(self, sock) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            self._shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            self._shut(sock)

    @staticmethod
    def _shut(sock) -> None:
        import socket

        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def cancel(self) -> None:
        self._timer.cancel()


def _opener(deadline: _Deadline):
    import http.client
    import urllib.error
    import urllib.request

    def watched(base):
        class Connection(base):
            def connect(self):
                self.timeout = deadline.timeout()  # connecting waits at most until the deadline
                super().connect()
                self.sock.settimeout(deadline.timeout())
                deadline.watch(self.sock)

        return Connection

    plain, secure = watched(http.client.HTTPConnection), watched(http.client.HTTPSConnection)

    class Http(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(plain, req)

    class Https(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(secure, req, context=self._context)

    class OnlyHttp(urllib.request.HTTPRedirectHandler):
        max_redirections = _MAX_REDIRECTS

        def http_error_302(self, req, fp, code, msg, headers):
            from urllib.parse import urljoin, urlsplit

            newurl = headers.get("location") or headers.get("uri") or ""
            scheme = urlsplit(urljoin(req.full_url, newurl)).scheme.lower()
            if scheme not in ("http", "https"):
                raise DownloadError(f"the server redirected to {redact_url(newurl)!r}, a {printable(scheme)}: URL, "
                                    "which is not downloaded: only http(s) downloads are followed")
            return super().http_error_302(req, fp, code, msg, headers)

        http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

    return urllib.request.build_opener(Http, Https, OnlyHttp)


def _bound_wait(response: Any, deadline: _Deadline) -> None:
    """Let the next read wait at most until the deadline (and at most ``READ_TIMEOUT``)."""
    sock = getattr(getattr(getattr(response, "fp", None), "raw", None), "_sock", None)
    if sock is not None:
        sock.settimeout(deadline.timeout())


def _not_http(error: Exception) -> str:
    """What an http.client protocol error means, in a few words (never the library's text, which may quote the
    server's bytes)."""
    import http.client

    if isinstance(error, http.client.LineTooLong):
        return "the server's response is not valid HTTP (a status or header line is too long)"
    if isinstance(error, http.client.RemoteDisconnected):
        return "the server closed the connection without a response"
    if isinstance(error, http.client.BadStatusLine):
        return "the server's response is not valid HTTP (a malformed status line)"
    if isinstance(error, http.client.IncompleteRead):
        return "the server closed the connection before the end of the file"
    if "headers" in str(error):
        return "the server's response is not valid HTTP (too many header lines)"
    return "the server's response is not valid HTTP"


def _download(url: str, file: DataFile, target: Path, *, until: float, seconds: float) -> None:
    """Stream ``url`` to a temporary file beside ``target``, capped in size and time; rename once verified."""
    import http.client
    import tempfile
    import time
    import urllib.error
    import urllib.request

    limit = int(file.bytes) if isinstance(file.bytes, int) and file.bytes > 0 else UNSIZED_LIMIT
    where = f"download of {file.path} from {redact_url(url)}"
    created = _new_folders(target.parent)
    temporary: Path | None = None
    deadline: _Deadline | None = None

    def late(size: int | None = None) -> DownloadError:
        after = "" if size is None else f" after {size:,} bytes"
        return DownloadError(f"{where} failed: timed out (the overall deadline of {seconds:g} s passed{after})")

    try:
        remaining = until - time.monotonic()
        if remaining <= 0:
            raise DownloadError(f"{where} not started: the overall deadline of {seconds:g} s has passed")
        deadline = _Deadline(until)
        request = urllib.request.Request(url, headers={"User-Agent": "metaeval", "Accept-Encoding": "identity"})
        try:
            response = _opener(deadline).open(request, timeout=min(READ_TIMEOUT, remaining))
        except DownloadError as error:
            raise DownloadError(f"{where} refused: {error}") from None
        except urllib.error.HTTPError as error:
            raise DownloadError(f"{where} failed: HTTP {error.code} {printable(error.reason, keep_newlines=False)}"
                                [:400]) from None
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as error:
            if deadline.expired or time.monotonic() >= until - 0.05:
                raise late() from None
            if isinstance(error, http.client.HTTPException):
                raise DownloadError(f"{where} failed: {_not_http(error)}") from None
            raise DownloadError(f"{where} failed: {printable(_reason(error), keep_newlines=False)}") from None
        with response:
            announced = response.headers.get("Content-Length")
            if announced is not None and announced.strip().isdigit() and int(announced) > limit:
                raise DownloadError(f"{where} refused: the server announces {int(announced):,} bytes, more than "
                                    f"the {limit:,} the registry expects")
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
            temporary = Path(name)
            digest = hashlib.sha256()
            size = 0
            with os.fdopen(handle, "wb") as out:
                while True:
                    if time.monotonic() > until or deadline.expired:
                        raise late(size)
                    _bound_wait(response, deadline)
                    try:
                        chunk = response.read1(_CHUNK)  # returns what has arrived: a trickle cannot block long
                    except (OSError, ValueError, http.client.HTTPException) as error:
                        if deadline.expired or time.monotonic() >= until - 0.1:
                            raise late(size) from None
                        reason = _not_http(error) if isinstance(error, http.client.HTTPException) else _reason(error)
                        raise DownloadError(f"{where} failed after {size:,} bytes: "
                                            f"{printable(reason, keep_newlines=False)}") from None
                    if not chunk:
                        if deadline.expired:
                            raise late(size)
                        break
                    size += len(chunk)
                    if size > limit:
                        raise DownloadError(f"{where} refused: the server sent more than the {limit:,} bytes the "
                                            "registry expects")
                    digest.update(chunk)
                    out.write(chunk)
        actual = digest.hexdigest()
        if actual != file.sha256:
            raise DownloadError(
                f"{where} refused: its sha256 does not match the pinned {file.sha256} (got {actual} for {size:,} "
                f"bytes: the server sent a different or corrupted file; nothing was kept)"
            )
        os.replace(temporary, target)
        temporary = None
    except BaseException:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        for folder in created:  # deepest first; only the folders this download made, only when empty
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    finally:
        if deadline is not None:
            deadline.cancel()


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------
def _version(checks: list[FileCheck], entry: _Entry, loader_version: str | None = None) -> str:
    from metaeval_core.data.loaders._common import LOADER_VERSION

    loader_version = LOADER_VERSION if loader_version is None else loader_version
    digest = hashlib.sha256(f"{entry.id}\x1f{entry.loader}:{loader_version}\x1f{entry.options!r}".encode())
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
                 human_measures: Sequence[str] | None = None, lp: str | None = None,
                 mtme_level: str = "seg", mtme_measures: str = "all") -> Dataset:
    """Load a built-in dataset by id, a user file by path, or a local mt-metrics-eval test-set directory.

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
    lp, mtme_level : str, optional
        For a directory only: the language pair and ``'seg'`` or ``'sys'``, passed to
        :func:`metaeval_core.data.mtme.read_mtme`.
    mtme_measures : {'all', 'gold-and-primary'}
        For an mt-metrics-eval test set (built-in or a directory): ``'gold-and-primary'`` reads only the gold's and
        the primary metrics' files (what WMT's task suites use; :func:`metaeval_core.data.mtme.read_mtme`), a
        dataset of its own version.

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
        entry = _entry(key)
        if entry.kind != "scores":
            raise DatasetError(
                f"dataset {key!r} holds pairwise verdicts (A or B?), not score matrices: load it with "
                f"metaeval_core.judges.load_pairwise({key!r}) (on the command line: `metaeval judges --dataset {key}`)")
        return _load_registered(_for_lp(entry, lp, mtme_level, mtme_measures), directory, download)
    path = Path(key).expanduser()
    if path.is_dir():
        from metaeval_core.data.mtme import read_mtme

        if human_measures is not None:
            raise DatasetError(f"{key}: an mt-metrics-eval directory's human measures are its human-scores files; "
                               "human measures can be declared only for a file")
        return read_mtme(path, lp=lp, level=mtme_level, measures=mtme_measures)  # type: ignore[arg-type]
    if lp is not None or mtme_level != "seg" or mtme_measures != "all":
        raise DatasetError(f"{key!r} is not a directory: a language pair and a score level apply only to an "
                           "mt-metrics-eval test-set directory")
    if path.is_file():
        from metaeval_core.data.upload import UploadLimits, read_user_file  # imported only when needed

        # The deployment's METAEVAL_MAX_UPLOAD_* limits bind a file given by path (the CLI's --dataset) too.
        return read_user_file(path, limits=UploadLimits.from_environment(),
                              **({} if human_measures is None else {"human_measures": human_measures}))
    raise DatasetError(
        f"{key!r} is neither a built-in dataset nor an existing file or directory; known datasets: "
        f"{', '.join(dataset_ids())}"
    )


def language_pairs_of(dataset_id: str) -> tuple[str, ...]:
    """The language pairs a built-in dataset offers (its registry option ``lps``; ``()`` for a dataset with one).

    References: docs/methods.md sec. 0.5.
    """
    return tuple(dict(_entry(dataset_id).options).get("lps", ()))


def default_lp(dataset_id: str) -> str | None:
    """The language pair a built-in dataset with several loads by default (its option ``lp``), else None."""
    options = dict(_entry(dataset_id).options)
    return str(options["lp"]) if options.get("lps") else None


def _lp_file(path: str, lp: str) -> bool:
    # mt-metrics-eval names every per-pair file or folder after the pair: documents/<lp>.docs, metric-scores/<lp>/...
    return any(part == lp or part.startswith(lp + ".") for part in Path(path).parts)


def _for_lp(entry: _Entry, lp: str | None, level: str, measures: str = "all") -> _Entry:
    """A test set with several language pairs (option ``lps``) as the entry of one: its files for that pair only
    (checked and hashed), ``lp`` and the score ``level`` in its options (so in its version); ``measures`` other
    than ``'all'`` in its options too (a reading of fewer files is a dataset of its own version)."""
    from dataclasses import replace

    from metaeval_core.data.mtme import MTME_MEASURES

    if measures not in MTME_MEASURES:
        raise DatasetError(f"mtme_measures must be one of {', '.join(MTME_MEASURES)}; got {measures!r}")
    if measures != "all":
        if entry.loader != "mtme":
            raise DatasetError(f"dataset {entry.id!r} is not an mt-metrics-eval test set: mtme_measures applies "
                               "only to those (such as wmt23)")
        entry = replace(entry, options=tuple(sorted({**dict(entry.options), "measures": measures}.items())))
    options = dict(entry.options)
    pairs = tuple(options.get("lps", ()))
    if not pairs:
        if lp is not None and lp != options.get("lp"):
            raise DatasetError(f"dataset {entry.id!r} has one language pair ({options.get('lp') or 'none'}); "
                               f"--lp {lp} applies to a test set with several (such as wmt23)")
        if level != "seg":
            raise DatasetError(f"dataset {entry.id!r}: the score level (sys) applies to an mt-metrics-eval test set "
                               "with several language pairs (such as wmt23) or a directory")
        return entry
    chosen = options.get("lp") if lp is None else lp
    if chosen not in pairs:
        raise DatasetError(f"dataset {entry.id!r} has no language pair {chosen!r}; choose one of {', '.join(pairs)}")
    if level not in ("seg", "sys"):
        raise DatasetError(f"the score level must be seg or sys; got {level!r}")
    options.update(lp=chosen, level=level)
    extra = set(dict(options.get("lp_files", {})).get(chosen, ()))  # a pair's files outside the test set's folder
    return replace(entry, title=f"{entry.title.split(' (')[0].split(',')[0]}, {chosen}" + (
                       " (system scores)" if level == "sys" else ""),
                   files=tuple(f for f in entry.files if _lp_file(f.path, chosen) and f.path not in extra),
                   optional_files=(*(f for f in entry.optional_files if _lp_file(f.path, chosen)),
                                   *(f for f in entry.files if f.path in extra)),
                   options=tuple(sorted(options.items())))


@dataclass(frozen=True)
class VerifiedFiles:
    """A registry dataset's files, present and checked against their pinned sha256.

    ``files`` is what a loader reads; ``checks`` the sha256 checks (required files, then present optional ones);
    ``info`` the registry entry with its availability.
    """

    files: Any  # metaeval_core.data.loaders.LoaderFiles (imported lazily: the loaders import this module)
    checks: tuple[FileCheck, ...]
    info: DatasetInfo
    options: tuple[tuple[str, Any], ...] = ()

    def version(self, loader_version: str) -> str:
        """A stable hash of the files' sha256, the loader and its ``loader_version``."""
        entry = _entry(self.info.id)
        return _version(list(self.checks), entry, loader_version)


def verified_files(dataset_id: str, *, data_dir: Path | None = None, download: bool = False) -> VerifiedFiles:
    """The files of registry dataset ``dataset_id``, present (downloaded first with ``download``) and verified.

    Raises
    ------
    DatasetUnavailable
        Required files are missing and ``download`` is False (the message says what and how to get them).
    DatasetError
        Unknown id; a file whose sha256 differs from the pinned one.

    References
    ----------
    docs/methods.md sec. 0.
    """
    directory = _validate_load(dataset_id, data_dir, download)
    return _verified(_entry(dataset_id), directory, download)


def _verified(entry: _Entry, directory: Path, download: bool) -> VerifiedFiles:
    from metaeval_core.data.loaders._common import LoaderFiles

    info = _info(entry, directory)
    if not info.available:
        if not download:
            raise DatasetUnavailable(f"dataset {entry.id!r} is not available: {info.reason}", info)
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
    return VerifiedFiles(files=files, checks=tuple(checks), info=info, options=entry.options)


def _load_registered(entry: _Entry, directory: Path, download: bool) -> Dataset:
    from metaeval_core.data.loaders.catalogue import LOADERS

    verified = _verified(entry, directory, download)
    checks = list(verified.checks)
    loaded = LOADERS[entry.loader](verified.files)
    return loaded.to_dataset(
        entry.id,
        title=entry.title,
        citation=entry.citation,
        licence=entry.licence,
        description=entry.description,
        version=_version(checks, entry),
    )
