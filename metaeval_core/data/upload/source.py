"""Reading the bytes: argument checks, size limits, gzip, format detection and UTF-8 decoding."""

from __future__ import annotations

import gzip
import io
import os
import zlib
from pathlib import Path


from metaeval_core.data.upload.limits import UploadError, UploadLimits, _Context


_EXTENSIONS: dict[str, str] = {
    ".csv": "csv", ".tsv": "csv", ".tab": "csv", ".txt": "sniff",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".jsonlines": "jsonl",
    ".parquet": "parquet", ".pq": "parquet", ".parq": "parquet",
}

# -- reading bytes -------------------------------------------------------------
def _check_request(
    source, name, format, human_measures, limits, dataset_id
) -> tuple[str, str | None, list[str] | None]:
    """Validate :func:`read_user_file`'s arguments; return (display name, format, human measures)."""
    if not isinstance(limits, UploadLimits):
        raise TypeError(f"read_user_file: limits must be an UploadLimits; got {type(limits).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"read_user_file: name must be a str or None; got {type(name).__name__}")
    if dataset_id is not None and (not isinstance(dataset_id, str) or not dataset_id.strip()):
        raise TypeError(f"read_user_file: dataset_id must be a non-empty str or None; got {dataset_id!r}")
    if isinstance(human_measures, (str, bytes)):
        raise TypeError(
            f"read_user_file: human_measures must be a sequence of measure names, not a single string "
            f"({human_measures!r}); write [{human_measures!r}]"
        )
    if human_measures is not None:
        human_measures = [str(h).strip() for h in human_measures] or None
    if isinstance(source, (str, os.PathLike)):
        display = name or os.path.basename(os.fspath(source)) or os.fspath(source)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        display = name or "<upload>"
    elif hasattr(source, "read"):
        display = name or os.path.basename(str(getattr(source, "name", "") or "")) or "<upload>"
    else:
        raise TypeError(
            f"read_user_file: source must be a path, bytes or a binary file-like object; got {type(source).__name__}"
        )
    if format is not None:
        fmt = str(format).strip().lower()
        if fmt == "tsv":
            fmt = "csv"
        if fmt not in ("csv", "jsonl", "parquet"):
            raise UploadError(
                f"file {display!r}: format must be one of 'csv', 'jsonl', 'parquet'; got {format!r}",
                kind="unknown-format", file=display,
            )
        format = fmt
    return display, format, human_measures


def _read_bytes(source, ctx: _Context) -> bytes:
    """All the bytes of ``source``, refusing anything over ``max_bytes`` before reading it."""
    limit = ctx.limits.max_bytes

    def too_large(size: int | None) -> None:
        shown = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
        mib = f" ({limit / 2**20:.1f} MiB)" if limit >= 2**20 else ""
        ctx.fail("too-large", f"the file has {shown}; the limit is {limit:,} bytes{mib}")

    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            size = path.stat().st_size
        except OSError as error:
            ctx.fail("not-found", f"cannot read {str(path)!r}: {error.strerror or error}")
        if not path.is_file():
            ctx.fail("not-found", f"{str(path)!r} is not a regular file")
        if size > limit:
            too_large(size)
        try:
            with path.open("rb") as handle:
                raw = handle.read(limit + 1)
        except OSError as error:
            ctx.fail("not-found", f"cannot read {str(path)!r}: {error.strerror or error}")
    elif isinstance(source, (bytes, bytearray, memoryview)):
        if len(source) > limit:
            too_large(len(source))
        raw = bytes(source)
    else:
        size = getattr(source, "size", None)
        if isinstance(size, int) and size > limit:
            too_large(size)
        remaining = None
        try:
            if source.seekable():
                start = source.tell()
                remaining = source.seek(0, io.SEEK_END) - start
                source.seek(start)
        except (AttributeError, OSError, ValueError):
            remaining = None
        if remaining is not None and remaining > limit:
            too_large(remaining)
        raw = source.read(limit + 1)
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        raw = bytes(raw or b"")
    if len(raw) > limit:
        too_large(None)
    return raw


def _gunzip(raw: bytes, ctx: _Context) -> bytes:
    """Decompress gzip bytes, never producing more than ``max_bytes`` (gzip bombs)."""
    limit = ctx.limits.max_bytes
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as handle:
            out = handle.read(limit + 1)
    except (OSError, EOFError, zlib.error) as error:
        ctx.fail("bad-gzip", f"the gzip data cannot be decompressed ({error}); re-compress or upload it uncompressed")
    if len(out) > limit:
        ctx.fail("too-large", f"the file decompresses to more than {limit:,} bytes, the limit")
    return out


def _resolve_format(raw: bytes, requested: str | None, ctx: _Context) -> str:
    """The format: ``format=`` if given, else the extension, else a look at the bytes."""
    name = ctx.file.lower().strip()
    for suffix in (".gz", ".gzip"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    ext = os.path.splitext(name)[1]
    if requested is not None:
        fmt = requested
    elif ext in _EXTENSIONS:
        fmt = _EXTENSIONS[ext]
    elif ext and ctx.file != "<upload>" and not ext[1:].isdigit():
        hint = " (export the sheet as CSV)" if ext in (".xls", ".xlsx", ".ods") else ""
        ctx.fail(
            "unknown-format",
            f"unknown extension {ext!r}{hint}; use .csv, .tsv, .jsonl (or .json with one object per line), "
            f".parquet, optionally gzipped (.csv.gz, .jsonl.gz)",
        )
    else:
        fmt = "sniff"
    if fmt == "sniff":
        if raw[:4] == b"PAR1":
            return "parquet"
        head = raw[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
        return "jsonl" if head[:1] == b"{" else "csv"
    if fmt != "parquet" and raw[:4] == b"PAR1":
        ctx.fail("mixed-format", f"the content is a Parquet file but the name or format says {fmt}; rename it .parquet")
    if raw[:4] == b"PK\x03\x04":
        ctx.fail("mixed-format", "the content is a ZIP archive (an Excel workbook?); export the sheet as CSV")
    return fmt


def _decode(raw: bytes, ctx: _Context) -> str:
    """UTF-8 text (an optional BOM is dropped); any other encoding is refused with the place."""
    if raw[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        ctx.fail("encoding", "the file is UTF-32 encoded (byte-order mark at offset 0); save it as UTF-8")
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        ctx.fail("encoding", "the file is UTF-16 encoded (byte-order mark at offset 0); save it as UTF-8")
    bom = 3 if raw[:3] == b"\xef\xbb\xbf" else 0
    try:
        text = raw[bom:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = bom + error.start
        line = raw.count(b"\n", 0, offset) + 1
        column = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
        ctx.fail(
            "encoding",
            f"byte 0x{raw[offset]:02x} at offset {offset} (line {line}, character {column}) is not valid UTF-8; "
            f"the file is probably Latin-1/Windows-1252: save it as UTF-8",
            where=f"line {line}",
        )
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        ctx.fail("encoding", f"NUL character at offset {nul} (line {line}): this is a binary file, not text",
                 where=f"line {line}")
    return text


def _read_content(source, requested: str | None, ctx: _Context) -> bytes:
    """The file's bytes, gunzipped when they are gzip, refused when empty; sets ``ctx.fmt`` from ``requested``,
    the extension or the content (shared by the score and the verdict readers)."""
    raw = _read_bytes(source, ctx)
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(raw, ctx)
    if not raw.strip(b" \t\r\n\x0b\x0c") or raw.strip(b" \t\r\n") == b"\xef\xbb\xbf":
        ctx.fail("empty-file", "the file is empty")
    ctx.fmt = _resolve_format(raw, requested, ctx)
    return raw
