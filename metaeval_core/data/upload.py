"""Parse a user's score file (CSV/TSV, JSON Lines or Parquet) into a :class:`Dataset`.

Three layouts are understood (column names are matched case-insensitively and
with surrounding whitespace ignored):

* **long**: one row per score, columns ``system, input, measure, score`` and the
  optional ``annotator`` and ``kind`` (``human`` or ``metric``, see below). Aliases:
  ``system_id, summarizer_id, summarizer, model, model_id`` for *system*; ``input_id,
  doc, doc_id, document, document_id, instance_id, example_id, item, item_id`` for
  *input*; ``metric, measure_name, metric_name`` for *measure*; ``value`` for *score*;
  ``annotator_id, rater, rater_id, judge, worker, worker_id`` for *annotator*; none
  for *kind*.
* **wide**: one row per (system, input), columns ``system, input`` and one
  column per measure (every column that has no other role is a measure).
* **SacreROUGE JSON Lines**: one object per line,
  ``{"instance_id", "summarizer_id", "summarizer_type", "metrics": {...}}``;
  nested dicts flatten with ``.`` (``{"rouge-2": {"f1": 3}}`` is ``rouge-2.f1``);
  a list value holds per-annotator scores; lines whose ``summarizer_type`` is
  ``"reference"`` are skipped.

In the long and wide layouts, a ``system_type`` (or ``summarizer_type``) column
becomes the system attribute ``type`` and an ``attr.<name>`` (or ``attr:<name>``)
column the attribute ``<name>``; its non-empty values must be constant per system.

Which measures are human judgments (the others are automatic metrics), first rule that applies:

1. the ``human_measures=`` argument of :func:`read_user_file` (the dashboard's "Human measures"
   box, the CLI's ``--human-measures``); where it contradicts a ``kind`` column, the argument wins
   and a note says so;
2. the long layout's ``kind`` column: ``human`` or ``metric`` (case-insensitive, surrounding
   whitespace ignored), the same on every row of a measure and given on every row; a column
   that is empty on every row counts as absent, one empty on some rows only is an error;
3. detection: a measure with per-annotator scores (an ``annotator`` column, a JSON list) or a
   name :func:`looks_human` accepts (``human.*``, ``expert.*``, ``turker.*``, ``relevance`` ...).

The wide layout and SacreROUGE JSON Lines have no ``kind``: rules 1 and 3 apply.

The file is never executed or unpickled: CSV is read as text (``dtype=str``)
and converted by this module, JSON with :func:`json.loads`, Parquet with
pyarrow (plain columns only). Names (systems, inputs, measures, annotators)
are kept verbatim apart from surrounding whitespace, even when they look like
HTML or spreadsheet formulas: escaping them is the renderer's job.

The way back: :func:`dataset_to_long_frame` writes a :class:`Dataset` as a long table
that :func:`read_user_file` reads back to the same systems, inputs, measures (with their
``kind``), scores, per-annotator scores and system attributes, with nothing to declare.

References: docs/methods.md sec. 0 (the data model); datasets/README.md (the
SacreROUGE JSONL convention).
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval_core._checks import check_bool, check_dataset
from metaeval_core.data.dataset import Dataset, DatasetError, Measure

__all__ = [
    "HUMAN_NAMES",
    "HUMAN_PREFIXES",
    "HUMAN_SUFFIXES",
    "UPLOAD_ERROR_KINDS",
    "UploadError",
    "UploadLimits",
    "check_long_export",
    "dataset_to_long_frame",
    "detect_layout",
    "looks_human",
    "read_user_file",
]

Format = Literal["csv", "jsonl", "parquet"]
Layout = Literal["long", "wide"]

#: Every ``UploadError.kind`` this module raises (a stable, machine-readable class).
UPLOAD_ERROR_KINDS: tuple[str, ...] = (
    "not-found",  # a path that does not exist or cannot be read
    "too-large",  # over UploadLimits.max_bytes (on disk or after gunzip)
    "too-many-rows",  # over UploadLimits.max_rows data rows / lines
    "too-many-cells",  # the dense systems x inputs x measures arrays would exceed UploadLimits.max_cells
    "empty-file",  # no bytes, only whitespace, or a header without data rows
    "unknown-format",  # an extension (or format=) that is not CSV/TSV, JSONL or Parquet
    "mixed-format",  # content contradicts the format (Parquet bytes in .csv, JSON in .csv, long + wide columns)
    "bad-gzip",  # a .gz that does not decompress
    "encoding",  # not UTF-8 (byte offset and line given), UTF-16, or NUL bytes
    "broken-csv",  # the CSV tokenizer failed (wrong field count, unclosed quote)
    "broken-jsonl",  # a line that is not a JSON object, or whose 'metrics' is not an object
    "bad-parquet",  # unreadable Parquet bytes, or a column of the wrong type
    "bad-header",  # an empty column name with data under it
    "duplicate-column",  # two columns with the same (case-insensitive) name
    "missing-column",  # a required column/key is absent, or no measure column at all
    "missing-value",  # an empty system/input/measure name, a missing annotator, or a 'kind' empty on some rows only
    "bad-name",  # a name with a control character, or a JSON id that is not a string/integer
    "name-too-long",  # a name longer than UploadLimits.max_name_length
    "non-numeric",  # a score that is not a number
    "non-finite",  # a score that is inf or -inf
    "duplicate-cell",  # two scores for one (system, input, measure[, annotator])
    "inconsistent-attribute",  # a system attribute with two values for one system
    "unknown-kind",  # a 'kind' value other than 'human' or 'metric' (long layout)
    "inconsistent-kind",  # a measure whose 'kind' differs between two rows (long layout)
    "unknown-measure",  # human_measures names a measure the file does not have
    "too-few-systems",  # fewer than 2 systems
    "too-few-inputs",  # fewer than 2 judged inputs
    "no-human-measure",  # no measure is recognised as a human judgment
    "no-metric-measure",  # every measure is human
    "all-nan-measure",  # a metric without a single score
    "no-judged-inputs",  # a human measure without a single score
    "invalid-dataset",  # the Dataset constructor refused the result (a safety net; not expected)
)

# -- column roles ------------------------------------------------------------
_ROLE_ALIASES: dict[str, tuple[str, ...]] = {
    "system": ("system", "system_id", "summarizer_id", "summarizer", "model", "model_id"),
    "input": (
        "input", "input_id", "doc", "doc_id", "document", "document_id", "instance_id", "example_id", "item",
        "item_id",
    ),
    "measure": ("measure", "metric", "measure_name", "metric_name"),
    "score": ("score", "value"),
    "annotator": ("annotator", "annotator_id", "rater", "rater_id", "judge", "worker", "worker_id"),
}
_TYPE_COLUMNS = ("system_type", "summarizer_type")
_KIND_COLUMN = "kind"  # the long layout's human/metric column (no alias)
_KINDS = ("human", "metric")
_ATTR_PREFIXES = ("attr.", "attr:")
_JSONL_SYSTEM_KEYS = ("summarizer_id", "system", "system_id")
_JSONL_INPUT_KEYS = ("instance_id", "input", "input_id", "doc_id")

# -- which measures are human ------------------------------------------------
#: Name prefixes (case-insensitive) that mark a human measure.
HUMAN_PREFIXES: tuple[str, ...] = (
    "human.", "human:", "human_", "human-", "expert.", "expert:", "expert_", "experts.", "turker.", "turker:",
    "turker_", "turkers.", "crowd.", "crowd:", "crowd_", "annotator.", "annotators.", "annotation.", "judgment.",
    "judgement.", "manual.",
)
#: Name suffixes (case-insensitive) that mark a human measure.
HUMAN_SUFFIXES: tuple[str, ...] = ("_human", ".human", "-human", ":human", " (human)")
#: Whole names (case-insensitive) of common human judgments in summarisation/MT meta-evaluation.
HUMAN_NAMES: frozenset[str] = frozenset(
    {
        "human", "human_score", "score_human", "human-score", "ground-truth", "ground_truth", "groundtruth",
        "gold", "litepyramid", "litepyramid.recall", "litepyramid_recall", "lite3pyramid", "pyramid",
        "pyramid.score", "modified_pyramid", "responsiveness", "linguistic_quality", "factuality", "faithful",
        "faithfulness", "factual", "relevance", "coherence", "consistency", "fluency", "overall",
        "informativeness", "acu", "nacu", "normalized_acu", "likert", "adequacy", "direct_assessment", "mqm",
    }
)

_NA_TOKENS = ("", "na", "n/a", "nan", "null", "none")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_EXTENSIONS: dict[str, str] = {
    ".csv": "csv", ".tsv": "csv", ".tab": "csv", ".txt": "sniff",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".jsonlines": "jsonl",
    ".parquet": "parquet", ".pq": "parquet", ".parq": "parquet",
}
_SHOW = 60  # characters of a bad value shown in a message


class UploadError(DatasetError):
    """A user file cannot be turned into a dataset.

    Parameters
    ----------
    message : str
        Names the problem and where: the file, the line/row and the column.
    kind : str
        A stable machine-readable class (one of :data:`UPLOAD_ERROR_KINDS`).
    file, where, column : str, optional
        The file's display name, the place (``"line 7"``, ``"row 3"``) and the column
        or key, when they apply, for a UI that wants to highlight them.
    """

    def __init__(
        self, message: str, *, kind: str, file: str | None = None, where: str | None = None,
        column: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.file = file
        self.where = where
        self.column = column

    def __reduce__(self):  # keep kind etc. through pickling (multiprocessing, st.cache)
        return (_rebuild_error, (str(self), self.kind, self.file, self.where, self.column))


def _rebuild_error(message, kind, file, where, column) -> UploadError:
    return UploadError(message, kind=kind, file=file, where=where, column=column)


@dataclass(frozen=True)
class UploadLimits:
    """Resource limits for one upload, checked before (bytes) or while (rows) parsing.

    Parameters
    ----------
    max_bytes : int
        Largest accepted file, in bytes, both as given and after gunzip.
    max_rows : int
        Largest number of data rows (CSV/Parquet) or non-blank lines (JSONL).
    max_name_length : int
        Longest system, input, measure, annotator or attribute name, in characters.
    max_cells : int
        Largest total size of the dense score arrays (measures x systems x inputs,
        plus annotators x systems x inputs for annotated measures).
    """

    max_bytes: int = 50 * 2**20
    max_rows: int = 2_000_000
    max_name_length: int = 200
    max_cells: int = 40_000_000

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_rows", "max_name_length", "max_cells"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"UploadLimits.{name} must be a positive integer; got {value!r}")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> "UploadLimits":
        """Limits configured by a deployment: ``METAEVAL_MAX_UPLOAD_MB``, ``METAEVAL_MAX_UPLOAD_ROWS``,
        ``METAEVAL_MAX_NAME_LENGTH`` and ``METAEVAL_MAX_UPLOAD_CELLS`` (unset: the defaults)."""
        environ = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for variable, field_name, scale in _LIMIT_VARIABLES:
            raw = environ.get(variable, "").strip()
            if not raw:
                continue
            try:
                values[field_name] = int(float(raw) * scale)
            except ValueError:
                raise ValueError(f"{variable} must be a number; got {raw!r}") from None
        return cls(**values)


_LIMIT_VARIABLES = (
    ("METAEVAL_MAX_UPLOAD_MB", "max_bytes", 2**20),
    ("METAEVAL_MAX_UPLOAD_ROWS", "max_rows", 1),
    ("METAEVAL_MAX_NAME_LENGTH", "max_name_length", 1),
    ("METAEVAL_MAX_UPLOAD_CELLS", "max_cells", 1),
)


@dataclass
class _Context:
    """What every message needs: the file's display name, the limits, how rows are named."""

    file: str
    limits: UploadLimits
    fmt: str = "csv"
    row_word: str = "line"  # "line" (CSV, JSONL) or "row" (Parquet)
    notes: list[str] = field(default_factory=list)

    def fail(self, kind: str, problem: str, *, where: str | None = None, column: str | None = None):
        place = ", ".join(p for p in (where, None if column is None else f"column {column!r}") if p)
        prefix = f"file {self.file!r}" + (f", {place}" if place else "")
        raise UploadError(f"{prefix}: {problem}", kind=kind, file=self.file, where=where, column=column)

    def at(self, row_number: int) -> str:
        return f"{self.row_word} {int(row_number)}"


def _show(value: Any) -> str:
    """A bad value for a message: truncated and escaped with repr."""
    text = str(value)
    if len(text) > _SHOW:
        text = text[:_SHOW] + "..."
    return repr(text)


def _list_names(names: Iterable[str], limit: int = 12) -> str:
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "") if names else "none"


# -- which measures are human --------------------------------------------------
def looks_human(name: str) -> bool:
    """Whether a measure name follows the convention for human judgments.

    Parameters
    ----------
    name : str
        A measure name.

    Returns
    -------
    bool
        True when the lower-cased name starts with one of :data:`HUMAN_PREFIXES`
        (``human.``, ``human:``, ``expert.``, ``turker.`` ...), ends with one of
        :data:`HUMAN_SUFFIXES` or is one of :data:`HUMAN_NAMES` (``ground-truth``,
        ``litepyramid.recall``, ``Factuality``, ``relevance``, ``coherence``,
        ``consistency``, ``fluency``, ``overall``, ``score_human`` ...).
    """
    if not isinstance(name, str):
        raise TypeError(f"looks_human: name must be a str; got {type(name).__name__}")
    lowered = name.strip().lower()
    return lowered in HUMAN_NAMES or lowered.startswith(HUMAN_PREFIXES) or lowered.endswith(HUMAN_SUFFIXES)


# -- layouts -----------------------------------------------------------------
@dataclass
class _Roles:
    system: str | None = None
    input: str | None = None
    measure: str | None = None
    score: str | None = None
    annotator: str | None = None
    kind: str | None = None  # the long layout's 'kind' column (a wide file's 'kind' column is a measure)
    attributes: dict[str, str] = field(default_factory=dict)  # column -> attribute name
    others: list[str] = field(default_factory=list)


def _roles(columns: Sequence[str]) -> _Roles:
    """Give each column a role; the first alias (in priority order) wins a role."""
    roles = _Roles()
    keyed = {str(c).strip().lower(): c for c in columns}
    taken: set[str] = set()
    for role, aliases in _ROLE_ALIASES.items():
        for alias in aliases:
            if alias in keyed and keyed[alias] not in taken:
                setattr(roles, role, keyed[alias])
                taken.add(keyed[alias])
                break
    if roles.measure is not None and _KIND_COLUMN in keyed and keyed[_KIND_COLUMN] not in taken:
        roles.kind = keyed[_KIND_COLUMN]
        taken.add(roles.kind)
    for column in columns:
        if column in taken:
            continue
        key = str(column).strip().lower()
        if key in _TYPE_COLUMNS and "type" not in roles.attributes.values():
            roles.attributes[column] = "type"
        elif key.startswith(_ATTR_PREFIXES) and len(key) > 5:
            roles.attributes[column] = str(column).strip()[5:].strip()
        else:
            roles.others.append(column)
    return roles


def _check_frame(frame: Any) -> list[str]:
    """Validate :func:`detect_layout`'s argument and return its column names."""
    if isinstance(frame, pd.DataFrame):
        return [str(c) for c in frame.columns]
    columns = getattr(frame, "columns", None)
    if columns is None and isinstance(frame, Sequence) and not isinstance(frame, (str, bytes)):
        columns = frame
    if columns is None:
        raise TypeError(
            "detect_layout: frame must be a pandas DataFrame (or a sequence of column names); "
            f"got {type(frame).__name__}"
        )
    return [str(c) for c in columns]


def detect_layout(frame: Any) -> Layout:
    """Tell a long table from a wide one by its column names.

    Parameters
    ----------
    frame : pandas.DataFrame or sequence of str
        The table (only its column names are read).

    Returns
    -------
    {'long', 'wide'}
        ``'long'`` when a column is called ``measure`` (or ``metric``, ``measure_name``,
        ``metric_name``; case-insensitive): every row then holds one score, in
        ``score``/``value``. Otherwise ``'wide'``: every column without another role
        is a measure (a lone ``score`` column is then a measure called ``score``).
    """
    columns = _check_frame(frame)
    return "long" if _roles(columns).measure is not None else "wide"


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


# -- CSV -------------------------------------------------------------------------
def _parse_csv(text: str, ctx: _Context) -> tuple[pd.DataFrame, np.ndarray]:
    """A frame of stripped-later strings (every cell text) and each row's line number."""
    first_line = text.split("\n", 1)[0]
    if re.search(r"\.(tsv|tab)(\.gz|\.gzip)?$", ctx.file.lower().strip()):
        sep = "\t"
    else:
        counts = {s: first_line.count(s) for s in (",", "\t", ";")}
        sep = max(counts, key=lambda s: (counts[s], s == ","))
        if counts[sep] == 0:
            sep = ","
    if first_line.lstrip().startswith("{"):
        try:
            is_json_object = isinstance(json.loads(first_line), dict)
        except (ValueError, RecursionError):
            is_json_object = False
        if is_json_object:
            ctx.fail("mixed-format", "the header is a JSON object: this looks like JSON Lines; rename the file .jsonl",
                     where="line 1")
    try:
        grid = pd.read_csv(
            io.StringIO(text), sep=sep, header=None, dtype=str, keep_default_na=False, na_filter=False,
            skip_blank_lines=False, nrows=ctx.limits.max_rows + 2, engine="c",
        )
    except pd.errors.EmptyDataError:
        ctx.fail("empty-file", "the file holds no data (no header line)")
    except (pd.errors.ParserError, ValueError, OverflowError) as error:
        detail = str(error).replace("Error tokenizing data. C error: ", "").strip()
        # pandas counts 'rows' from 0 (the header is row 0) but 'lines' from 1
        detail = re.sub(r"starting at row (\d+)", lambda m: f"starting at line {int(m.group(1)) + 1}", detail)
        match = re.search(r"line (\d+)", detail)
        ctx.fail("broken-csv", f"the CSV cannot be read: {detail}", where=f"line {match.group(1)}" if match else None)
    header = [str(h) for h in grid.iloc[0].tolist()]
    grid = grid.iloc[1:]
    if len(grid) > ctx.limits.max_rows:
        ctx.fail("too-many-rows", f"more than {ctx.limits.max_rows:,} data rows, the limit")
    lines = np.arange(2, len(grid) + 2)
    grid.columns = range(grid.shape[1])
    blank = (grid == "").all(axis=1).to_numpy() if grid.shape[1] else np.ones(len(grid), bool)
    if blank.any():
        grid = grid.loc[~blank]
        lines = lines[~blank]
    if not any(h.strip() for h in header):
        ctx.fail("bad-header", "line 1 (the header) is empty; the first line must name the columns", where="line 1")
    keep = []
    for position, title in enumerate(header):
        if title.strip():
            keep.append(position)
        elif (grid[position].str.strip() != "").any():
            ctx.fail("bad-header", f"column {position + 1} has no name in the header but holds values",
                     where="line 1")
    frame = grid[keep]
    frame.columns = [header[p] for p in keep]
    if frame.empty:
        ctx.fail("empty-file", "the file has a header but no data rows")
    return frame.reset_index(drop=True), lines


# -- Parquet ------------------------------------------------------------------------
def _parse_parquet(raw: bytes, ctx: _Context) -> tuple[pd.DataFrame, np.ndarray]:
    """Plain columns of a Parquet file: names as strings, scores as float64 (no pandas metadata, no pickles)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if len(raw) < 12 or raw[:4] != b"PAR1" or raw[-4:] != b"PAR1":
        ctx.fail("bad-parquet", "not a Parquet file (the 'PAR1' magic bytes are missing at the start or end)")
    try:
        parquet = pq.ParquetFile(io.BytesIO(raw))
        n_rows = parquet.metadata.num_rows
    except Exception as error:  # pyarrow raises ArrowInvalid, OSError, ... on corrupt footers
        ctx.fail("bad-parquet", f"the Parquet file cannot be opened: {_show(error)}")
    if n_rows > ctx.limits.max_rows:
        ctx.fail("too-many-rows", f"{n_rows:,} rows; the limit is {ctx.limits.max_rows:,}")
    if n_rows == 0:
        ctx.fail("empty-file", "the Parquet file has no rows")
    try:
        table = parquet.read(use_pandas_metadata=False)
    except Exception as error:
        ctx.fail("bad-parquet", f"the Parquet data cannot be read: {_show(error)}")
    names = [str(n) for n in table.column_names]
    _check_duplicate_columns(names, ctx)
    roles = _roles(names)
    text_columns = {roles.system, roles.input, roles.measure, roles.annotator, roles.kind,
                    *roles.attributes} - {None}
    data: dict[str, Any] = {}
    try:
        for index, name in enumerate(names):
            column = table.column(index)
            kind = column.type
            if pa.types.is_dictionary(kind):
                column = column.cast(kind.value_type)
                kind = column.type
            textual = pa.types.is_string(kind) or pa.types.is_large_string(kind) or (
                hasattr(pa.types, "is_string_view") and pa.types.is_string_view(kind)
            )
            numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind) or \
                pa.types.is_null(kind)
            if name in text_columns:
                if not (textual or pa.types.is_integer(kind) or pa.types.is_null(kind)):
                    ctx.fail("bad-parquet", f"has type {kind}; a name column must hold strings or integers", column=name)
                values = pc.cast(column, pa.string()).to_numpy(zero_copy_only=False)
                data[name] = pd.Series(values, dtype="str")
            else:
                if not numeric:
                    ctx.fail("bad-parquet",
                             f"has type {kind}; a score column must hold numbers (float or integer, nulls allowed)",
                             column=name)
                try:
                    values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
                except Exception as error:
                    ctx.fail("bad-parquet", f"cannot be read as float64: {_show(error)}", column=name)
                data[name] = pd.Series(np.asarray(values, dtype=np.float64))
    except pa.lib.ArrowException as error:  # a column whose pages are corrupt decodes only here
        ctx.fail("bad-parquet", f"the Parquet data cannot be decoded: {_show(error)}")
    frame = pd.DataFrame(data)
    frame.columns = names
    return frame, np.arange(1, len(frame) + 1)


# -- shared conversions ------------------------------------------------------------
def _check_duplicate_columns(columns: Sequence[str], ctx: _Context) -> None:
    seen: dict[str, str] = {}
    for column in columns:
        key = str(column).strip().lower()
        if key in seen:
            ctx.fail("duplicate-column", f"columns {seen[key]!r} and {column!r} have the same name; rename one",
                     where="line 1" if ctx.row_word == "line" else None, column=str(column))
        seen[key] = str(column)


def _names(series: pd.Series, column: str, what: str, rows: np.ndarray, ctx: _Context, *,
           allow_empty: bool = False) -> pd.Series:
    """Stripped names; empty, too long or control-character names are refused with their row."""
    values = series.astype("str").str.strip()
    missing = values.isna().to_numpy() | (values == "").to_numpy()
    if missing.any() and not allow_empty:
        k = int(np.argmax(missing))
        ctx.fail("missing-value", f"the {what} name is empty", where=ctx.at(rows[k]), column=column)
    lengths = values.str.len().to_numpy(dtype=float, na_value=0.0)
    too_long = lengths > ctx.limits.max_name_length
    if too_long.any():
        k = int(np.argmax(too_long))
        ctx.fail(
            "name-too-long",
            f"the {what} name {_show(values.iloc[k])} has {int(lengths[k]):,} characters; "
            f"the limit is {ctx.limits.max_name_length}",
            where=ctx.at(rows[k]), column=column,
        )
    control = values.str.contains(_CONTROL, regex=True, na=False).to_numpy()
    if control.any():
        k = int(np.argmax(control))
        ctx.fail("bad-name", f"the {what} name {_show(values.iloc[k])} contains a control character",
                 where=ctx.at(rows[k]), column=column)
    return values


def _check_measure_name(name: str, ctx: _Context, *, where: str | None = None, column: str | None = None) -> str:
    name = str(name).strip()
    if not name:
        ctx.fail("missing-value", "a measure name is empty", where=where, column=column)
    if len(name) > ctx.limits.max_name_length:
        ctx.fail("name-too-long", f"the measure name {_show(name)} has {len(name):,} characters; the limit is "
                 f"{ctx.limits.max_name_length}", where=where, column=column)
    if _CONTROL.search(name):
        ctx.fail("bad-name", f"the measure name {_show(name)} contains a control character", where=where,
                 column=column)
    return name


def _scores(series: pd.Series, column: str, rows: np.ndarray, ctx: _Context) -> np.ndarray:
    """Float scores; empty/NA cells become NaN; text and +-inf are refused with their row."""
    text = None
    if pd.api.types.is_float_dtype(series.dtype) and not pd.api.types.is_extension_array_dtype(series.dtype):
        values = series.to_numpy(dtype=np.float64)
    else:
        text = series.astype("str").str.strip()
        missing = (text.isna() | text.str.lower().isin(_NA_TOKENS)).to_numpy()
        parsed = pd.to_numeric(text.where(~missing), errors="coerce")
        values = np.asarray(parsed.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
        bad = np.isnan(values) & ~missing
        if bad.any():
            k = int(np.argmax(bad))
            shown = text.iloc[k]
            hint = "; use '.' as the decimal separator" if re.fullmatch(r"[+-]?\d+,\d+", shown or "") else ""
            ctx.fail("non-numeric", f"the score {_show(shown)} is not a number{hint}", where=ctx.at(rows[k]),
                     column=column)
    infinite = np.isinf(values)
    if infinite.any():
        k = int(np.argmax(infinite))
        shown = _show(text.iloc[k]) if text is not None else repr(float(values[k]))
        ctx.fail("non-finite", f"the score {shown} is not finite; leave the cell empty for a missing score",
                 where=ctx.at(rows[k]), column=column)
    return values


def _constant_per_key(keys: np.ndarray, values: np.ndarray, rows: np.ndarray) -> tuple[pd.DataFrame, tuple | None]:
    """The distinct (key, value) pairs in order of first appearance with their first row (columns ``k, v, r``),
    and the first clash, ``(key, first value, its row, second value, its row)``, or None when every key has one
    value."""
    distinct = pd.DataFrame({"k": keys, "v": values, "r": rows}).drop_duplicates(["k", "v"])
    clash = distinct["k"].duplicated(keep="first").to_numpy()
    if not clash.any():
        return distinct, None
    second = distinct.iloc[int(np.argmax(clash))]
    first = distinct[distinct["k"] == second["k"]].iloc[0]
    return distinct, (second["k"], first["v"], first["r"], second["v"], second["r"])


def _measure_kinds(series: pd.Series, column: str, measures: pd.Series, rows: np.ndarray,
                   ctx: _Context) -> dict[str, str]:
    """The long layout's ``kind`` column: measure -> 'human'/'metric' ({} when the column is empty on every row)."""
    text = series.astype("str").str.strip()
    empty = (text.isna() | (text == "")).to_numpy()
    if empty.all():
        ctx.notes.append(f"the column {column!r} is empty on every row, so it is ignored (human measures are "
                         f"detected)")
        return {}
    if empty.any():
        k = int(np.argmax(empty))
        ctx.fail("missing-value", f"the kind is empty but {ctx.at(rows[int(np.argmax(~empty))])} gives one; give "
                 f"'human' or 'metric' on every row (or leave the column empty on every row to have the human "
                 f"measures detected)", where=ctx.at(rows[k]), column=column)
    lowered = text.str.lower()
    unknown = ~lowered.isin(_KINDS).to_numpy()
    if unknown.any():
        k = int(np.argmax(unknown))
        ctx.fail("unknown-kind", f"the kind {_show(text.iloc[k])} is neither 'human' nor 'metric' "
                 f"(case-insensitive)", where=ctx.at(rows[k]), column=column)
    distinct, clash = _constant_per_key(measures.to_numpy(), lowered.to_numpy(), rows)
    if clash is not None:
        measure, first_kind, first_row, second_kind, second_row = clash
        ctx.fail("inconsistent-kind", f"the measure {_show(measure)} is {first_kind!r} at {ctx.at(first_row)} but "
                 f"{second_kind!r} at {ctx.at(second_row)}; a measure's kind must be the same on every row",
                 where=ctx.at(second_row), column=column)
    return {str(m): str(v) for m, v in zip(distinct["k"], distinct["v"])}


def _attributes(frame: pd.DataFrame, roles: _Roles, system_codes: np.ndarray, systems: Sequence[str],
                rows: np.ndarray, ctx: _Context) -> dict[str, list[str]]:
    """System attributes: each column's non-empty values must be constant per system."""
    found: dict[str, list[str]] = {}
    for column, attribute in roles.attributes.items():
        attribute = _check_measure_name(attribute, ctx, column=column)
        if attribute in found:
            ctx.fail("duplicate-column", f"attribute {attribute!r} is given by two columns", column=column)
        values = _names(frame[column], column, "attribute", rows, ctx, allow_empty=True).fillna("")
        given = (values != "").to_numpy()
        distinct, clash = _constant_per_key(system_codes[given], values.to_numpy()[given], rows[given])
        if clash is not None:
            system, first_value, first_row, second_value, second_row = clash
            ctx.fail(
                "inconsistent-attribute",
                f"system {systems[int(system)]!r} has {attribute!r} = {_show(first_value)} at "
                f"{ctx.at(first_row)} but {_show(second_value)} at {ctx.at(second_row)}; a system attribute "
                f"must be constant per system",
                where=ctx.at(second_row), column=column,
            )
        result = np.full(len(systems), "", dtype=object)
        result[distinct["k"].to_numpy(dtype=int)] = distinct["v"].to_numpy()
        found[attribute] = [str(v) for v in result]
    return found


def _check_cells(n_cells: int, ctx: _Context, detail: str) -> None:
    if n_cells > ctx.limits.max_cells:
        ctx.fail("too-many-cells", f"{detail} make {n_cells:,} score cells; the limit is {ctx.limits.max_cells:,} "
                 f"(split the file or drop measures)")


@dataclass
class _Parsed:
    """The layout-independent result: labels, dense arrays and which measures have annotators."""

    layout: str
    systems: list[str]
    inputs: list[str]
    matrices: dict[str, np.ndarray]
    annotators: dict[str, np.ndarray]
    attributes: dict[str, list[str]]
    order: list[str] = field(default_factory=list)  # measures in order of first appearance
    kinds: dict[str, str] = field(default_factory=dict)  # measure -> 'human'/'metric' from a 'kind' column


def _from_cells(
    ctx: _Context, layout: str, systems: pd.Series, inputs: pd.Series, measures: pd.Series,
    annotator_codes: np.ndarray, values: np.ndarray, rows: np.ndarray, *, what: str,
) -> tuple[_Parsed, np.ndarray]:
    """Dense arrays from one-score-per-row cells (long CSV/Parquet and JSONL); returns system codes too."""
    s_codes, s_labels = pd.factorize(systems)
    i_codes, i_labels = pd.factorize(inputs)
    m_codes, m_labels = pd.factorize(measures)
    n, m, k = len(s_labels), len(i_labels), len(m_labels)
    keys = pd.DataFrame({"s": s_codes, "i": i_codes, "m": m_codes, "a": annotator_codes})
    repeated = keys.duplicated(keep="first").to_numpy()
    if repeated.any():
        second = int(np.argmax(repeated))
        same = (s_codes == s_codes[second]) & (i_codes == i_codes[second]) & (m_codes == m_codes[second]) & (
            annotator_codes == annotator_codes[second])
        first = int(np.argmax(same))
        ctx.fail(
            "duplicate-cell",
            f"{ctx.at(rows[first])} and {ctx.at(rows[second])} both give a score for system "
            f"{_show(s_labels[s_codes[second]])}, input {_show(i_labels[i_codes[second]])}, measure "
            f"{_show(m_labels[m_codes[second]])}{what}; keep one row per cell",
            where=ctx.at(rows[second]),
        )
    annotated_measures = np.unique(m_codes[annotator_codes >= 0])
    n_annotators = {}
    for code in annotated_measures:
        n_annotators[int(code)] = len(np.unique(annotator_codes[(m_codes == code) & (annotator_codes >= 0)]))
    _check_cells((k + sum(n_annotators.values())) * n * m, ctx,
                 f"{n:,} systems x {m:,} inputs x {k:,} measures (with annotators)")
    plain = ~np.isin(m_codes, annotated_measures)
    cube = np.full((k, n, m), np.nan)
    cube[m_codes[plain], s_codes[plain], i_codes[plain]] = values[plain]
    matrices: dict[str, np.ndarray] = {}
    annotators: dict[str, np.ndarray] = {}
    for code, label in enumerate(m_labels):
        label = str(label)
        if code in n_annotators:
            chosen = m_codes == code
            if (annotator_codes[chosen] < 0).any():
                bad = int(np.flatnonzero(chosen & (annotator_codes < 0))[0])
                ctx.fail("missing-value",
                         f"measure {label!r} has annotator names on other rows but none here; give every score of "
                         f"a per-annotator measure its annotator", where=ctx.at(rows[bad]))
            local = np.unique(annotator_codes[chosen], return_inverse=True)[1]
            tensor = np.full((n_annotators[code], n, m), np.nan)
            tensor[local, s_codes[chosen], i_codes[chosen]] = values[chosen]
            annotators[label] = tensor
        else:
            matrices[label] = cube[code]
    parsed = _Parsed(layout, [str(s) for s in s_labels], [str(i) for i in i_labels], matrices, annotators, {},
                     [str(label) for label in m_labels])
    return parsed, s_codes


def _from_long(frame: pd.DataFrame, rows: np.ndarray, roles: _Roles, ctx: _Context) -> _Parsed:
    needed = {"system": roles.system, "input": roles.input, "measure": roles.measure, "score": roles.score}
    _require(needed, list(frame.columns), ctx, "long")
    if roles.others:
        ctx.fail(
            "mixed-format",
            f"the file has long-layout columns (measure {roles.measure!r}, score {roles.score!r}) and also the "
            f"columns {_list_names(roles.others)}; a long file holds only system, input, measure, score, "
            f"optional annotator, kind, system_type and attr.* columns (drop the extra columns, or drop 'measure' and "
            f"'score' for the wide layout)",
            where="line 1" if ctx.row_word == "line" else None, column=str(roles.others[0]),
        )
    systems = _names(frame[roles.system], roles.system, "system", rows, ctx)
    inputs = _names(frame[roles.input], roles.input, "input", rows, ctx)
    measures = _names(frame[roles.measure], roles.measure, "measure", rows, ctx)
    values = _scores(frame[roles.score], roles.score, rows, ctx)
    if roles.annotator is not None:
        annotator_names = _names(frame[roles.annotator], roles.annotator, "annotator", rows, ctx, allow_empty=True)
        annotator_codes = pd.factorize(annotator_names.where(annotator_names != ""))[0]
        what = " (same annotator)"
    else:
        annotator_codes = np.full(len(frame), -1)
        what = ""
    kinds = {} if roles.kind is None else _measure_kinds(frame[roles.kind], roles.kind, measures, rows, ctx)
    parsed, s_codes = _from_cells(ctx, "long", systems, inputs, measures, annotator_codes, values, rows, what=what)
    parsed.attributes = _attributes(frame, roles, s_codes, parsed.systems, rows, ctx)
    parsed.kinds = kinds
    return parsed


def _from_wide(frame: pd.DataFrame, rows: np.ndarray, roles: _Roles, ctx: _Context) -> _Parsed:
    _require({"system": roles.system, "input": roles.input}, list(frame.columns), ctx, "wide")
    if roles.annotator is not None:
        ctx.fail(
            "mixed-format",
            "an annotator column needs the long layout (system, input, measure, score, annotator); in the wide "
            "layout each row is one (system, input) cell",
            column=str(roles.annotator),
        )
    if not roles.others:
        ctx.fail(
            "missing-column",
            f"no measure columns: found only {_list_names(frame.columns)}; the wide layout needs system, input "
            f"and one column per measure",
            where="line 1" if ctx.row_word == "line" else None,
        )
    systems = _names(frame[roles.system], roles.system, "system", rows, ctx)
    inputs = _names(frame[roles.input], roles.input, "input", rows, ctx)
    measure_names = [_check_measure_name(c, ctx, column=str(c)) for c in roles.others]
    s_codes, s_labels = pd.factorize(systems)
    i_codes, i_labels = pd.factorize(inputs)
    n, m = len(s_labels), len(i_labels)
    repeated = pd.DataFrame({"s": s_codes, "i": i_codes}).duplicated(keep="first").to_numpy()
    if repeated.any():
        second = int(np.argmax(repeated))
        first = int(np.argmax((s_codes == s_codes[second]) & (i_codes == i_codes[second])))
        ctx.fail(
            "duplicate-cell",
            f"{ctx.at(rows[first])} and {ctx.at(rows[second])} are both for system {_show(s_labels[s_codes[second]])}, "
            f"input {_show(i_labels[i_codes[second]])}; keep one row per (system, input)",
            where=ctx.at(rows[second]),
        )
    _check_cells(len(measure_names) * n * m, ctx, f"{n:,} systems x {m:,} inputs x {len(measure_names):,} measures")
    matrices = {}
    for column, measure in zip(roles.others, measure_names):
        matrix = np.full((n, m), np.nan)
        matrix[s_codes, i_codes] = _scores(frame[column], str(column), rows, ctx)
        matrices[measure] = matrix
    parsed = _Parsed("wide", [str(s) for s in s_labels], [str(i) for i in i_labels], matrices, {}, {},
                     list(measure_names))
    parsed.attributes = _attributes(frame, roles, s_codes, parsed.systems, rows, ctx)
    return parsed


def _require(needed: Mapping[str, str | None], found: Sequence[str], ctx: _Context, layout: str) -> None:
    missing = [role for role, column in needed.items() if column is None]
    if missing:
        aliases = "; ".join(f"{role}: {', '.join(_ROLE_ALIASES[role])}" for role in missing)
        ctx.fail(
            "missing-column",
            f"the {layout} layout needs the columns {', '.join(needed)}; missing {', '.join(missing)} "
            f"(accepted names, case-insensitive: {aliases}); found {_list_names(found)}",
            where="line 1" if ctx.row_word == "line" else None, column=missing[0],
        )


def _from_table(frame: pd.DataFrame, rows: np.ndarray, ctx: _Context) -> _Parsed:
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    _check_duplicate_columns(columns, ctx)
    roles = _roles(columns)
    if detect_layout(columns) == "long":
        return _from_long(frame, rows, roles, ctx)
    return _from_wide(frame, rows, roles, ctx)


# -- JSONL -------------------------------------------------------------------------
def _flatten(metrics: Mapping[str, Any], prefix: str, out: list[tuple[str, Any]]) -> None:
    """Nested dicts to ``a.b.c`` names, depth first in key order (iterative: no recursion limit)."""
    stack = [(prefix, iter(metrics.items()))]
    while stack:
        base, items = stack[-1]
        for key, value in items:
            name = f"{base}{key}"
            if isinstance(value, dict):
                stack.append((name + ".", iter(value.items())))
                break
            out.append((name, value))
        else:
            stack.pop()


def _json_number(value: Any, ctx: _Context, line: int, key: str) -> float:
    """One JSON score: a number, null/NaN (missing) or numeric text; never a bool, list or object."""
    if isinstance(value, bool) or isinstance(value, (list, dict)):
        ctx.fail("non-numeric", f"the score {_show(json.dumps(value))} is not a number", where=f"line {line}",
                 column=key)
    if value is None:
        return math.nan
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _NA_TOKENS:
            return math.nan
        try:
            if "_" in text:
                raise ValueError
            value = float(text)
        except ValueError:
            ctx.fail("non-numeric", f"the score {_show(value)} is not a number", where=f"line {line}", column=key)
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if math.isinf(number):
        ctx.fail("non-finite", f"the score {_show(value)} is not finite; use null for a missing score",
                 where=f"line {line}", column=key)
    return number


def _json_id(record: Mapping[str, Any], keys: Sequence[str], what: str, ctx: _Context, line: int) -> str:
    for key in keys:
        if key in record:
            value = record[key]
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                ctx.fail("bad-name", f"{key!r} must be a string or an integer; got {_show(json.dumps(value))}",
                         where=f"line {line}", column=key)
            return str(value)
    ctx.fail(
        "missing-column",
        f"the object has no {keys[0]!r} ({what} id; also accepted: {', '.join(keys[1:])}); keys found: "
        f"{_list_names(record)}",
        where=f"line {line}", column=keys[0],
    )


def _parse_jsonl(text: str, ctx: _Context) -> _Parsed:
    """SacreROUGE-style JSON Lines (one loop over lines; everything after is vectorised)."""
    systems: list[str] = []
    inputs: list[str] = []
    measures: list[str] = []
    annotators: list[int] = []
    values: list[float] = []
    rows: list[int] = []
    listed: set[str] = set()
    records = skipped = 0
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            continue
        records += 1
        if records > ctx.limits.max_rows:
            ctx.fail("too-many-rows", f"more than {ctx.limits.max_rows:,} lines, the limit", where=f"line {number}")
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as error:
            if records == 1 and not line.startswith(("{", "[")) and ("," in line or "\t" in line):
                ctx.fail("mixed-format", f"line 1 {_show(line)} looks like a CSV header, not JSON; rename the "
                         f"file .csv", where="line 1")
            detail = f" at character {error.colno}" if isinstance(error, json.JSONDecodeError) else ""
            ctx.fail("broken-jsonl", f"not valid JSON{detail}: {_show(line)}", where=f"line {number}")
        if not isinstance(record, dict):
            if records == 1 and isinstance(record, list):
                ctx.fail("mixed-format", "the file is one JSON array; write one JSON object per line (JSON Lines)",
                         where=f"line {number}")
            ctx.fail("broken-jsonl", f"each line must be a JSON object; got {type(record).__name__} "
                     f"{_show(line)}", where=f"line {number}")
        if str(record.get("summarizer_type", "")).lower() == "reference":
            skipped += 1
            continue
        system = _json_id(record, _JSONL_SYSTEM_KEYS, "system", ctx, number)
        item = _json_id(record, _JSONL_INPUT_KEYS, "input", ctx, number)
        if "metrics" not in record:
            ctx.fail("missing-column", f"the object has no 'metrics' object; keys found: {_list_names(record)}",
                     where=f"line {number}", column="metrics")
        metrics = record["metrics"]
        if not isinstance(metrics, dict):
            ctx.fail("broken-jsonl", f"'metrics' must be a JSON object; got {_show(json.dumps(metrics))}",
                     where=f"line {number}", column="metrics")
        flat: list[tuple[str, Any]] = []
        _flatten(metrics, "", flat)
        for name, value in flat:
            if isinstance(value, list):
                listed.add(name)
                for position, element in enumerate(value):
                    systems.append(system)
                    inputs.append(item)
                    measures.append(name)
                    annotators.append(position)
                    values.append(_json_number(element, ctx, number, name))
                    rows.append(number)
            else:
                systems.append(system)
                inputs.append(item)
                measures.append(name)
                annotators.append(-1)
                values.append(_json_number(value, ctx, number, name))
                rows.append(number)
    if records == 0:
        ctx.fail("empty-file", "the file has no JSON lines")
    if not rows:
        detail = f"all {skipped} lines are references" if skipped else "no line holds any metric"
        ctx.fail("empty-file", f"no scores: {detail}")
    if skipped:
        ctx.notes.append(f"skipped {skipped} line(s) with summarizer_type 'reference'")
    row_array = np.asarray(rows)
    system_series = _names(pd.Series(systems, dtype="str"), "summarizer_id", "system", row_array, ctx)
    input_series = _names(pd.Series(inputs, dtype="str"), "instance_id", "input", row_array, ctx)
    measure_series = _names(pd.Series(measures, dtype="str"), "metrics", "measure", row_array, ctx)
    annotator_codes = np.asarray(annotators)
    if listed:
        # a scalar for a measure that is a list elsewhere is that cell's only annotator
        scalar_of_listed = (annotator_codes < 0) & measure_series.isin(listed).to_numpy()
        annotator_codes = np.where(scalar_of_listed, 0, annotator_codes)
    parsed, _ = _from_cells(ctx, "jsonl", system_series, input_series, measure_series, annotator_codes,
                            np.asarray(values, dtype=np.float64), row_array, what=" (same list position)"
                            if listed else "")
    return parsed


# -- the dataset -----------------------------------------------------------------------
def _classify(parsed: _Parsed, human_measures: list[str] | None, ctx: _Context) -> dict[str, str]:
    """Each measure's kind: ``human_measures`` if given, else the 'kind' column, else annotated or conventionally
    named ones."""
    names = list(parsed.order)
    if human_measures is not None:
        unknown = [h for h in human_measures if h not in names]
        if unknown:
            ctx.fail("unknown-measure", f"human_measures names {_list_names(unknown)}, which the file does not have; "
                     f"its measures are {_list_names(names)}")
        chosen = set(human_measures)
        ctx.notes.append(f"human measures as requested: {', '.join(human_measures)}")
        overridden = [n for n in names if parsed.kinds and (parsed.kinds[n] == "human") != (n in chosen)]
        if overridden:
            ctx.notes.append(
                "the requested human measures override the file's 'kind' column for "
                + ", ".join(f"{n!r} (file: {parsed.kinds[n]})" for n in overridden)
            )
    elif parsed.kinds:
        chosen = {n for n in names if parsed.kinds[n] == "human"}
        ctx.notes.append("human measures as given by the 'kind' column: " + (", ".join(sorted(chosen)) or "none"))
    else:
        chosen = {n for n in names if n in parsed.annotators or looks_human(n)}
        if chosen:
            ctx.notes.append(
                "human measures recognised by per-annotator scores or by name: " + ", ".join(sorted(chosen))
            )
    return {n: ("human" if n in chosen else "metric") for n in names}


def _check_dataset(parsed: _Parsed, kinds: Mapping[str, str], measures: Mapping[str, Measure], ctx: _Context,
                   *, partial: bool = False) -> None:
    """The rules a usable dataset must meet, in a fixed order (``partial``: only that no measure is empty)."""
    if partial:
        for name, measure in measures.items():
            if np.isnan(measure.scores).all():
                ctx.fail("all-nan-measure", f"the measure {name!r} has no score at all (every cell is empty/NaN); "
                         f"fill it in or drop the column", column=name)
        return
    if len(parsed.systems) < 2:
        ctx.fail("too-few-systems", f"only {len(parsed.systems)} system ({_list_names(parsed.systems)}); at least 2 "
                 f"are needed to correlate a metric with human judgments")
    humans = [n for n, k in kinds.items() if k == "human"]
    metrics = [n for n, k in kinds.items() if k == "metric"]
    if not humans:
        ctx.fail(
            "no-human-measure",
            f"none of the measures ({_list_names(metrics)}) is recognised as a human judgment; name one with the "
            f"prefix 'human.' (e.g. 'human.relevance'), give per-annotator scores (an 'annotator' column in the long "
            f"layout, or a JSON list), mark it 'human' in a 'kind' column (long layout), or choose the human "
            f"measures explicitly (human_measures=[...])",
        )
    if not metrics:
        ctx.fail("no-metric-measure", f"every measure ({_list_names(humans)}) is a human judgment; add at least one "
                 f"automatic metric, or choose the human measures explicitly (human_measures=[...])")
    for name, measure in measures.items():
        if np.isnan(measure.scores).all():
            if measure.kind == "human":
                ctx.fail("no-judged-inputs", f"the human measure {name!r} has no score at all, so it judges no "
                         f"input; fill it in or drop it", column=name)
            ctx.fail("all-nan-measure", f"the metric {name!r} has no score at all (every cell is empty/NaN); fill it "
                     f"in or drop the column", column=name)


def _notes(dataset_measures: Mapping[str, Measure], parsed: _Parsed, ctx: _Context) -> None:
    tops = {}
    for name, measure in dataset_measures.items():
        tops[name] = float(np.nanmax(np.abs(measure.scores)))
    small = [n for n, t in tops.items() if t <= 1.0]
    large = [n for n, t in tops.items() if t > 10.0]
    if small and large:
        ctx.notes.append(
            f"measures use different scales (within [-1, 1]: {_list_names(small, 5)}; above 10: "
            f"{_list_names(large, 5)}); correlations do not depend on scale, thresholds do"
        )
    risky = [n for n in [*parsed.systems, *parsed.inputs, *dataset_measures] if n[:1] in ("=", "@", "+")
             or "<" in n]
    if risky:
        ctx.notes.append(
            f"{len(risky)} name(s) look like spreadsheet formulas or HTML (e.g. {_show(risky[0])}); they are kept "
            f"verbatim as text"
        )


def _dataset_id(ctx: _Context, dataset_id: str | None) -> str:
    if dataset_id:
        return dataset_id.strip()
    stem = ctx.file.split("/")[-1]
    for suffix in (".gz", ".gzip", ".csv", ".tsv", ".tab", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")[:60] or "file"
    return f"upload-{slug}"


def read_user_file(
    source: str | os.PathLike | bytes | Any,
    *,
    name: str | None = None,
    format: Format | None = None,
    human_measures: Sequence[str] | None = None,
    limits: UploadLimits = UploadLimits(),
    dataset_id: str | None = None,
    partial: bool = False,
) -> Dataset:
    """Read a user's score file into a :class:`Dataset`, or explain exactly what is wrong with it.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file-like
        A path (a ``str`` is always a path, never content), the bytes, or an object with
        ``read()`` (e.g. Streamlit's ``UploadedFile``; its ``.name`` is used when ``name``
        is not given).
    name : str, optional
        The display name used in messages and to infer the format from its extension:
        ``.csv``, ``.tsv``/``.tab`` (tab separated), ``.jsonl``/``.ndjson``/``.json``
        (JSON Lines), ``.parquet``/``.pq``, each optionally with ``.gz``; ``.txt`` or no
        extension means "look at the content". Gzip is also recognised by its magic bytes.
        A CSV's separator (``,``, tab or ``;``) is the most frequent of them in the header.
    format : {'csv', 'jsonl', 'parquet'}, optional
        Overrides the extension.
    human_measures : sequence of str, optional
        The measures that are human judgments; all others are metrics. It overrides a
        long file's ``kind`` column (a note names the measures where they differ). When
        ``None`` (or empty), the ``kind`` column decides when the file has one; otherwise
        a measure is human when it has per-annotator scores (an ``annotator``
        column, a JSON list) or when :func:`looks_human` accepts its name (prefix
        ``human.``/``human:``/``expert.``/``turker.`` ..., or a known name such as
        ``ground-truth``, ``litepyramid.recall``, ``Factuality``, ``relevance``,
        ``coherence``, ``consistency``, ``fluency``, ``overall``, ``score_human``).
    limits : UploadLimits
        Size limits; the byte limit is checked before anything is parsed.
    dataset_id : str, optional
        The dataset's id; default ``upload-<file stem>``.
    partial : bool
        Read a file meant to be merged into another dataset (the what-if page): it may hold a single
        system, only human or only metric measures, and fewer than 2 judged inputs. Empty measures are
        still rejected.

    Returns
    -------
    Dataset
        Systems and inputs in order of first appearance; missing cells are NaN; an input
        is judged when some human measure scores it (inputs with metric scores only are
        the unjudged pool). Per-annotator human scores are kept (``Measure.annotators``).
        ``notes`` say which measures were taken as human and why, and flag mixed scales,
        skipped reference lines and formula/HTML-looking names.

    Raises
    ------
    UploadError
        With a ``kind`` from :data:`UPLOAD_ERROR_KINDS` and a message naming the file and,
        where it applies, the line/row and column.
    TypeError
        When an argument has the wrong Python type (a programming error, not a file problem).

    Notes
    -----
    Layout rules are in the module docstring. Surrounding whitespace is stripped from
    names and scores; empty, ``NA``, ``N/A``, ``NaN``, ``null`` and ``None`` scores are
    missing; ``inf`` is an error. Names are never evaluated: ``=cmd|...`` or ``<script>``
    stay plain strings.
    """
    display, fmt, humans = _check_request(source, name, format, human_measures, limits, dataset_id)
    ctx = _Context(file=display, limits=limits)
    raw = _read_bytes(source, ctx)
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(raw, ctx)
    if not raw.strip(b" \t\r\n\x0b\x0c") or raw.strip(b" \t\r\n") == b"\xef\xbb\xbf":
        ctx.fail("empty-file", "the file is empty")
    ctx.fmt = _resolve_format(raw, fmt, ctx)
    if ctx.fmt == "parquet":
        ctx.row_word = "row"
        frame, rows = _parse_parquet(raw, ctx)
        parsed = _from_table(frame, rows, ctx)
    else:
        text = _decode(raw, ctx)
        if not text.strip():
            ctx.fail("empty-file", "the file holds only whitespace")
        if ctx.fmt == "jsonl":
            parsed = _parse_jsonl(text, ctx)
        else:
            frame, rows = _parse_csv(text, ctx)
            parsed = _from_table(frame, rows, ctx)
    kinds = _classify(parsed, humans, ctx)
    measures: dict[str, Measure] = {}
    for measure_name, kind in kinds.items():
        if measure_name in parsed.annotators:
            measures[measure_name] = Measure.from_annotators(measure_name, kind, parsed.annotators[measure_name])
        else:
            measures[measure_name] = Measure(measure_name, kind, parsed.matrices[measure_name])
    _check_dataset(parsed, kinds, measures, ctx, partial=partial)
    judged = np.zeros(len(parsed.inputs), dtype=bool)
    for measure in measures.values():
        if measure.kind == "human":
            judged |= ~np.isnan(measure.scores).all(axis=0)
    if judged.sum() < 2 and not partial:
        ctx.fail("too-few-inputs", f"only {int(judged.sum())} input(s) have human scores (judged) out of "
                 f"{len(parsed.inputs)}; at least 2 judged inputs are needed")
    _notes(measures, parsed, ctx)
    n_unjudged = int((~judged).sum())
    layout = "SacreROUGE JSON Lines" if parsed.layout == "jsonl" else f"{parsed.layout} layout"
    try:
        return Dataset(
            id=_dataset_id(ctx, dataset_id),
            systems=parsed.systems,
            inputs=parsed.inputs,
            measures=measures,
            system_attributes=parsed.attributes,
            title=display,
            description=(
                f"Uploaded file {display!r} ({ctx.fmt}, {layout}): {len(parsed.systems)} systems, "
                f"{len(parsed.inputs)} inputs ({int(judged.sum())} judged, {n_unjudged} unjudged), "
                f"{sum(1 for k in kinds.values() if k == 'human')} human and "
                f"{sum(1 for k in kinds.values() if k == 'metric')} metric measures."
            ),
            notes=tuple(ctx.notes),
        )
    except UploadError:
        raise
    except DatasetError as error:  # should not happen after the checks above; keep the contract anyway
        ctx.fail("invalid-dataset", str(error))


# -- the way back: a dataset as a long table ---------------------------------------------
_EXPORT_ANNOTATOR = "annotator-{}"  # annotator a (0-based) is written as annotator-<a+1>


def _unreadable(name: str, *, allow_empty: bool = False) -> str | None:
    """Why the upload would not read ``name`` back unchanged (None when it would)."""
    if not name:
        return None if allow_empty else "is empty"
    if name != name.strip():
        return "has surrounding whitespace, which the upload strips"
    if _CONTROL.search(name):
        return "contains a control character, which the upload refuses"
    return None


def _attribute_column(attribute: str) -> str:
    return "system_type" if attribute == "type" else f"attr.{attribute}"


def _check_long_export(dataset: object, include_missing: object, caller: str) -> Dataset:
    """Validate the arguments of the export functions; refuse a dataset the upload could not read back."""
    dataset = check_dataset(dataset)
    check_bool(include_missing, "include_missing")
    if not dataset.systems or not dataset.inputs or not dataset.measures:
        raise ValueError(f"{caller}: dataset {dataset.id!r} has {dataset.n_systems} system(s), {dataset.n_inputs} "
                         f"input(s) and {len(dataset.measures)} measure(s); a long table needs at least one of each")
    groups = (("system", dataset.systems), ("input", dataset.inputs), ("measure", tuple(dataset.measures)),
              ("system attribute", tuple(dataset.system_attributes)))
    for what, names in groups:
        for name in names:
            problem = _unreadable(name)
            if problem:
                raise ValueError(f"{caller}: the {what} name {_show(name)} {problem}; the file would not read back "
                                 f"to the same dataset (rename it first)")
    columns: dict[str, str] = {}
    for attribute, values in dataset.system_attributes.items():
        column = _attribute_column(attribute)
        if column.lower() in columns:
            raise ValueError(f"{caller}: the system attributes {columns[column.lower()]!r} and {attribute!r} would "
                             f"share the column {column!r} (names are case-insensitive in a file); rename one")
        columns[column.lower()] = attribute
        for system, value in zip(dataset.systems, values):
            problem = _unreadable(value, allow_empty=True)
            if problem:
                raise ValueError(f"{caller}: the value {_show(value)} of the system attribute {attribute!r} "
                                 f"(system {system!r}) {problem}; the file would not read back the same value")
    return dataset


def _annotator_tensor(measure: Measure) -> np.ndarray | None:
    """The per-annotator scores to write, when the upload would rebuild exactly ``measure.scores`` from them."""
    if measure.annotators is None:
        return None
    rebuilt = Measure.from_annotators(measure.name, measure.kind, measure.annotators).scores
    return measure.annotators if np.array_equal(rebuilt, measure.scores, equal_nan=True) else None


def _first_seen_in_order(codes: np.ndarray, n: int) -> bool:
    """Whether codes 0..n-1 all occur and first occur in that order."""
    seen = pd.unique(codes)
    return len(seen) == n and bool((seen == np.arange(n)).all())


def dataset_to_long_frame(dataset: Dataset, *, include_missing: bool = False) -> pd.DataFrame:
    """Write a dataset as a long table that :func:`read_user_file` reads back to the same dataset.

    Parameters
    ----------
    dataset : Dataset
        Any dataset (built-in, uploaded, modified on the what-if page).
    include_missing : bool, default False
        Also write a row, with an empty score, for every missing cell (a dense table of
        ``systems x inputs x measures`` rows). By default only scored cells are written,
        plus, when needed, a few rows with an empty score so that every system, input and
        measure appears, in the dataset's order.

    Returns
    -------
    pandas.DataFrame
        One row per score, in the long layout: ``system``, ``input``, ``measure`` (str) and
        ``score`` (float64, NaN where missing); an ``annotator`` column (``annotator-1``,
        ``annotator-2`` ...; empty for plain measures) when some measure keeps per-annotator
        scores, which are then written one row per annotator for every scored cell, empty
        where that annotator gave no score; always a ``kind`` column (``human`` or ``metric``,
        the measure's kind); a ``system_type`` column for the system attribute
        ``type`` and an ``attr.<name>`` column for every other attribute. Rows are in
        (system, input, measure, annotator) order, after the order-keeping rows if any.
        Write it with ``to_csv(index=False)`` or ``to_parquet(index=False)``.

    Raises
    ------
    TypeError
        When ``dataset`` is not a :class:`Dataset` or ``include_missing`` is not a bool.
    ValueError
        When the dataset has no system, input or measure, or holds a name the upload would
        not read back unchanged: empty, with surrounding whitespace or a control character
        (systems, inputs, measures, attribute names and values), or two attributes whose
        columns differ only by case.

    Notes
    -----
    Read back with :func:`read_user_file` (as CSV, TSV or Parquet), the table gives the same
    systems, inputs and measures in the same order, every score (NaN where missing; CSV
    floats are written with round-trip precision), the same per-annotator scores and system
    attributes. The judged inputs (those with a human score) and the unjudged pool follow
    from the scores. Human and metric measures come back from the ``kind`` column, whatever
    their names: nothing needs declaring (``human_measures=``).

    Not carried: the dataset's id, title, version label, citation, licence, description and
    notes (the upload names the dataset after the file), summary and reference texts,
    annotator names (annotators are numbered), and per-annotator scores whose NaN-ignoring
    mean is not exactly the measure's matrix (e.g. after an edit; the matrix is written).
    The upload's own rules still apply: at least 2 systems and 2 judged inputs, a human and
    a metric measure, no measure without any score, names within
    ``UploadLimits.max_name_length``.
    """
    dataset = _check_long_export(dataset, include_missing, "dataset_to_long_frame")
    n, m, k = dataset.n_systems, dataset.n_inputs, len(dataset.measures)
    parts: dict[str, list[np.ndarray]] = {"s": [], "i": [], "k": [], "a": [], "v": [], "scored": []}
    for code, measure in enumerate(dataset.measures.values()):
        tensor = _annotator_tensor(measure)
        values = measure.scores[None] if tensor is None else tensor
        a, i, j = (axis.ravel() for axis in np.indices(values.shape))
        parts["s"].append(i)
        parts["i"].append(j)
        parts["k"].append(np.full(a.size, code))
        parts["a"].append(a if tensor is not None else np.full(a.size, -1))
        parts["v"].append(values.ravel())
        parts["scored"].append(~np.isnan(measure.scores)[i, j])  # an annotated cell: all its annotators
    s_codes, i_codes, k_codes, a_codes, values, scored = (np.concatenate(parts[key]) for key in parts)
    keep = np.ones(values.size, dtype=bool) if include_missing else scored
    order = np.lexsort((a_codes, k_codes, i_codes, s_codes))
    kept = order[keep[order]]
    in_order = [_first_seen_in_order(codes[kept], size) for codes, size in ((s_codes, n), (i_codes, m),
                                                                              (k_codes, k))]
    if not all(in_order):
        # The upload orders systems, inputs and measures by first appearance: lead with the cell (0, 0, 0) and,
        # for each axis out of order, the line of cells through it along that axis (written even when empty).
        lead = [np.zeros((1, 3), dtype=np.int64)]
        for axis, (fine, size) in enumerate(zip(in_order, (n, m, k))):
            if not fine and size > 1:
                line = np.zeros((size - 1, 3), dtype=np.int64)
                line[:, axis] = np.arange(1, size)
                lead.append(line)
        lead_cells = np.concatenate(lead)  # each line varies one axis, the others stay at 0
        lead_ids = (lead_cells[:, 0] * m + lead_cells[:, 1]) * k + lead_cells[:, 2]
        cells = (s_codes * m + i_codes) * k + k_codes
        by_id = np.argsort(lead_ids)
        position = np.clip(np.searchsorted(lead_ids[by_id], cells), 0, len(lead_ids) - 1)
        leading = lead_ids[by_id][position] == cells
        rank = np.where(leading, by_id[position] - len(lead_ids), 0)
        keep = keep | leading
        order = np.lexsort((a_codes, k_codes, i_codes, s_codes, rank))
        kept = order[keep[order]]
    s_kept, a_kept = s_codes[kept], a_codes[kept]
    frame = pd.DataFrame({
        "system": np.asarray(dataset.systems, dtype=object)[s_kept],
        "input": np.asarray(dataset.inputs, dtype=object)[i_codes[kept]],
        "measure": np.asarray(list(dataset.measures), dtype=object)[k_codes[kept]],
        "score": values[kept].astype(np.float64),
    })
    if (a_kept >= 0).any():
        labels = np.asarray([""] + [_EXPORT_ANNOTATOR.format(a + 1) for a in range(int(a_kept.max()) + 1)],
                            dtype=object)
        frame["annotator"] = labels[a_kept + 1]
    frame[_KIND_COLUMN] = np.asarray([x.kind for x in dataset.measures.values()], dtype=object)[k_codes[kept]]
    for attribute, attribute_values in dataset.system_attributes.items():
        frame[_attribute_column(attribute)] = np.asarray(attribute_values, dtype=object)[s_kept]
    return frame


def check_long_export(dataset: Dataset) -> Dataset:
    """Check, from the names only (no table is built), that :func:`dataset_to_long_frame` accepts ``dataset``.

    For offering an export before building it (a whole dataset can be large).

    Parameters
    ----------
    dataset : Dataset
        The dataset to be exported.

    Returns
    -------
    Dataset
        ``dataset``.

    Raises
    ------
    TypeError, ValueError
        As :func:`dataset_to_long_frame`.
    """
    return _check_long_export(dataset, False, "check_long_export")
