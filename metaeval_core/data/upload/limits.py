"""Upload errors, resource limits and the message context shared by every reader."""

from __future__ import annotations

import math
import os
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping


from metaeval_core.data.dataset import DatasetError


Format = Literal["csv", "jsonl", "parquet"]
Layout = Literal["long", "wide"]

#: Every ``UploadError.kind`` this module raises (a stable, machine-readable class).
UPLOAD_ERROR_KINDS: tuple[str, ...] = (
    "not-found",  # a path that does not exist or cannot be read
    "too-large",  # over UploadLimits.max_bytes (on disk, after gunzip, a Parquet file's decoded pages), or a column's
    # distinct names over UploadLimits.max_name_bytes
    "too-many-rows",  # over UploadLimits.max_rows data rows / lines
    "too-many-measures",  # over UploadLimits.max_measures measures (columns of a wide file, names in a long one)
    "too-many-systems",  # over UploadLimits.max_systems systems (pages build systems x systems pair tables)
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
    "bad-name",  # a name with a control (or line-separator) or invisible (zero-width, bidi, BOM) character, or a JSON id that is not a string/integer
    "name-too-long",  # a name longer than UploadLimits.max_name_length
    "non-numeric",  # a score that is not a number
    "non-finite",  # a score that is inf or -inf
    "out-of-range",  # a score beyond +-MAX_MAGNITUDE, whose sums and squares would overflow
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

_NA_TOKENS = ("", "na", "n/a", "nan", "null", "none")
# C0/C1 controls and the Unicode line/paragraph separators (U+0085, U+2028, U+2029 end a line like '\n')
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Characters that do not show: zero-width, bidi controls, the BOM, soft hyphen, invisible operators. Two names that
# differ only by one of them look the same on every page, so they are refused rather than kept as two names.
_ALWAYS_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b\u200e\u200f"
                               "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")
# The zero-width non-joiner and joiner (U+200C, U+200D) are spelling inside words of several scripts (Persian
# "می‌خواهم", Devanagari conjuncts after a virama; Unicode UAX #31): between two non-ASCII letters or marks they are
# kept. Anywhere else ("ro<ZWJ>uge") they are as invisible as the others.
_JOINERS = re.compile("[\u200c\u200d]")


def _inside_a_word(name: str, k: int) -> bool:
    def letter(c: str) -> bool:
        return bool(c) and not c.isascii() and unicodedata.category(c)[0] in "LM"

    return k > 0 and letter(name[k - 1]) and letter(name[k + 1:k + 2])


class _InvisibleCharacters:
    """``search(name)``: the first invisible character a name may not hold (a ``re.Match``), else None."""

    def search(self, name: str):
        first = _ALWAYS_INVISIBLE.search(name)
        for joiner in _JOINERS.finditer(name):
            if first is not None and joiner.start() > first.start():
                break
            if not _inside_a_word(name, joiner.start()):
                return joiner
        return first


_INVISIBLE = _InvisibleCharacters()


def without_joiners(name: str) -> str:
    """A name with U+200C/U+200D removed: two names equal this way look the same."""
    return _JOINERS.sub("", name)
#: Largest accepted score magnitude. The statistics sum and square scores (means over up to max_rows cells,
#: sums of squared deviations, products in covariances): with |x| <= 1e150, a squared deviation is at most
#: 4e300 and even 4e7 of them (the cell limit) sum to 1.6e308 < 1.8e308, the float64 maximum; near 1e308 the
#: first sum overflows to inf and a correlation comes out wrong rather than undefined.
MAX_MAGNITUDE = 1e150

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
    max_measures : int
        Most measures (human and metric) in one file.
    max_systems : int
        Most systems in one file: the pages build tables over every pair of systems
        (systems x systems), so this bounds their cost.
    max_name_bytes : int
        Largest total size, in UTF-8 bytes, of the distinct names in one column (systems,
        inputs, measures, annotators, attribute values): what they cost in memory, which a
        Parquet file's dictionary compression hides from ``max_bytes``.
    """

    max_bytes: int = 50 * 2**20
    max_rows: int = 2_000_000
    max_name_length: int = 200
    max_cells: int = 40_000_000
    max_measures: int = 2_000
    max_systems: int = 2_000
    max_name_bytes: int = 64 * 2**20

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_rows", "max_name_length", "max_cells", "max_measures", "max_systems",
                     "max_name_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"UploadLimits.{name} must be a positive integer; got {value!r}")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> "UploadLimits":
        """Limits configured by a deployment: ``METAEVAL_MAX_UPLOAD_MB``, ``METAEVAL_MAX_UPLOAD_ROWS``,
        ``METAEVAL_MAX_NAME_LENGTH``, ``METAEVAL_MAX_UPLOAD_CELLS``, ``METAEVAL_MAX_UPLOAD_MEASURES`` and
        ``METAEVAL_MAX_UPLOAD_SYSTEMS`` and ``METAEVAL_MAX_NAME_MB`` (unset or empty: the defaults).

        Raises
        ------
        ValueError
            Naming the variable, when a value is not a finite positive number (a configuration error).
        """
        environ = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for variable, field_name, scale in _LIMIT_VARIABLES:
            raw = environ.get(variable, "").strip()
            if not raw:
                continue
            try:
                number = float(raw)
            except ValueError:
                number = float("nan")
            # inf, nan and 0 would disable the limit or refuse every file: a configuration error, said as such.
            if not math.isfinite(number) or number <= 0 or not math.isfinite(number * scale):
                raise ValueError(f"configuration error: {variable} must be a number, finite and positive; got {raw!r}")
            values[field_name] = max(1, int(number * scale))
        return cls(**values)


_LIMIT_VARIABLES = (
    ("METAEVAL_MAX_UPLOAD_MB", "max_bytes", 2**20),
    ("METAEVAL_MAX_UPLOAD_ROWS", "max_rows", 1),
    ("METAEVAL_MAX_NAME_LENGTH", "max_name_length", 1),
    ("METAEVAL_MAX_UPLOAD_CELLS", "max_cells", 1),
    ("METAEVAL_MAX_UPLOAD_MEASURES", "max_measures", 1),
    ("METAEVAL_MAX_UPLOAD_SYSTEMS", "max_systems", 1),
    ("METAEVAL_MAX_NAME_MB", "max_name_bytes", 2**20),
)


@dataclass
class _Context:
    """What every message needs: the file's display name, the limits, how rows are named."""

    file: str
    limits: UploadLimits
    fmt: str = "csv"
    row_word: str = "line"  # "line" (CSV, JSONL) or "row" (Parquet)
    partial: bool = False  # a file to merge into another dataset: one system is enough
    notes: list[str] = field(default_factory=list)
    normalised: dict[str, str] = field(default_factory=dict)  # a name as written -> its NFC form, when they differ

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
