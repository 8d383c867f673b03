"""Column roles, layouts, which measures are human, and the checks every name passes."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from metaeval_core.data.upload.limits import (_ALWAYS_INVISIBLE, _CONTROL, _INVISIBLE, _JOINERS, Layout, _Context, _show,
                                              without_joiners)


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
# A column named like an id role that another column already took (doc_id beside input) is not a measure.
_SECOND_ID: dict[str, str] = {alias: role for role in ("system", "input", "annotator") for alias in _ROLE_ALIASES[role]}
_TYPE_COLUMNS = ("system_type", "summarizer_type")
# Columns a written DataFrame adds for its index: pandas' Parquet '__index_level_0__', a CSV's 'Unnamed: 0'.
_INDEX_COLUMN = re.compile(r"__index_level_\d+__|unnamed: ?\d+|index|level_0")
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
    ignored: dict[str, str] = field(default_factory=dict)  # column -> why it is not read (said in a note)


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
        elif key in _SECOND_ID:
            role = _SECOND_ID[key]
            roles.ignored[column] = f"a second {role} id column (the {role} names come from {getattr(roles, role)!r})"
        elif _INDEX_COLUMN.fullmatch(key):
            roles.ignored[column] = "the row index a DataFrame wrote with the table, not a measure"
        else:
            roles.others.append(column)
    if roles.measure is None and roles.score is not None:
        # wide layout: 'score'/'value' is an ordinary measure column there, in its place among the others
        position = {c: p for p, c in enumerate(columns)}
        roles.others = sorted([*roles.others, roles.score], key=position.__getitem__)
        roles.score = None
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

# -- shared conversions ------------------------------------------------------------
def _check_duplicate_columns(columns: Sequence[str], ctx: _Context) -> None:
    seen: dict[str, str] = {}
    for column in columns:
        key = str(column).strip().lower()
        if key in seen:
            ctx.fail("duplicate-column", f"columns {seen[key]!r} and {column!r} have the same name; rename one",
                     where="line 1" if ctx.row_word == "line" else None, column=str(column))
        seen[key] = str(column)


def _invisible_name(what: str, name: str) -> str:
    found = _INVISIBLE.search(name)
    code = ord(found.group())
    label = unicodedata.name(found.group(), "format character")
    return (f"the {what} name {_show(name)} contains the invisible character U+{code:04X} ({label}), so it would look "
            f"the same as another name; delete it")


def _nfc(name: str, ctx: _Context) -> str:
    """The NFC form of a name (composed accents), remembered when it differs from what the file wrote."""
    if name.isascii():
        return name
    normal = unicodedata.normalize("NFC", name)
    if normal != name:
        ctx.normalised.setdefault(name, normal)
    return normal


def _names(series: pd.Series, column: str, what: str, rows: np.ndarray, ctx: _Context, *,
           allow_empty: bool = False) -> pd.Series:
    """Stripped NFC names; empty, too long, control- or invisible-character names are refused with their row.

    The content checks run once per distinct name (a long file repeats each name on many rows)."""
    per_row, categories = name_codes(series, column, what, rows, ctx, allow_empty=allow_empty)
    if not isinstance(series.dtype, pd.CategoricalDtype):  # text (CSV, JSONL): text per row, NaN where missing
        shown = np.asarray(list(categories) + [np.nan], dtype=object)
        return pd.Series(shown[per_row], index=series.index, dtype="str")
    return pd.Series(pd.Categorical.from_codes(per_row, categories=pd.Index(categories, dtype=object)),
                     index=series.index)


def name_codes(series: pd.Series, column: str, what: str, rows: np.ndarray, ctx: _Context, *,
               allow_empty: bool = False) -> tuple[np.ndarray, tuple[str, ...]]:
    """:func:`_names` as integer codes per row and the distinct names in order of first appearance.

    A text column gives code ``len(names)`` where the name is missing (a categorical column: the code of ``''``).
    The verdict reader takes these directly: a million rows of names rebuilt as text and hashed again took seconds.
    """
    # distinct values first: every check and conversion below runs once per distinct name, and the result per row
    # is one shared string object each (8 bytes a row, never a copy of every row's text)
    if isinstance(series.dtype, pd.CategoricalDtype):  # a Parquet dictionary column: its codes, no hashing per row
        raw_codes, raw_uniques = series.cat.codes.to_numpy(), series.cat.categories
    else:
        raw_codes, raw_uniques = pd.factorize(series, use_na_sentinel=True)
    raw = np.asarray(raw_uniques, dtype=object).tolist()
    stripped = list(map(str.strip, map(str, raw)))
    if stripped == raw:  # nothing to strip (the usual file): the distinct names stay distinct, no second hashing
        label_of_raw, uniques = np.arange(len(raw), dtype=np.intp), stripped
    else:
        label_of_raw, uniques = pd.factorize(pd.Series(stripped, dtype=object))
    codes = np.where(raw_codes >= 0, label_of_raw[np.maximum(raw_codes, 0)] if len(label_of_raw) else -1, -1)
    labels = pd.Series(uniques, dtype="str")
    _check_name_bytes(labels, what, column, ctx)
    empty_label = (labels == "").to_numpy()
    missing = codes < 0
    if empty_label.any():
        missing |= codes == int(np.argmax(empty_label))
    if missing.any() and not allow_empty:
        k = int(np.argmax(missing))
        ctx.fail("missing-value", f"the {what} name is empty", where=ctx.at(rows[k]), column=column)
    shown = np.asarray(uniques, dtype=object)

    def name_at(k: int) -> str:  # the stripped name on row k, for messages
        return shown[codes[k]] if codes[k] >= 0 else ""

    def first_row(bad: np.ndarray) -> int:
        return int(np.argmax(codes == int(np.argmax(bad))))

    lengths = labels.str.len().to_numpy(dtype=float, na_value=0.0)
    too_long = lengths > ctx.limits.max_name_length
    if too_long.any():
        k = first_row(too_long)
        ctx.fail(
            "name-too-long",
            f"the {what} name {_show(name_at(k))} has {int(lengths[codes[k]]):,} characters; "
            f"the limit is {ctx.limits.max_name_length}",
            where=ctx.at(rows[k]), column=column,
        )
    control = labels.str.contains(_CONTROL, regex=True, na=False).to_numpy()
    if control.any():
        k = first_row(control)
        ctx.fail("bad-name", f"the {what} name {_show(name_at(k))} contains a control character or a line "
                 f"separator", where=ctx.at(rows[k]), column=column)
    invisible = labels.str.contains(_ALWAYS_INVISIBLE, regex=True, na=False).to_numpy(dtype=bool, copy=True)
    joined = labels.str.contains(_JOINERS, regex=True, na=False).to_numpy()
    if joined.any():  # a joiner is spelling only inside a word of a script that uses it
        invisible |= np.array([bool(j) and _INVISIBLE.search(v) is not None for v, j in zip(labels, joined)])
    if invisible.any():
        k = first_row(invisible)
        ctx.fail("bad-name", _invisible_name(what, name_at(k)), where=ctx.at(rows[k]), column=column)
    if joined.any():
        seen: dict[str, int] = {}
        for u, label in enumerate(labels):
            bare = unicodedata.normalize("NFC", without_joiners(label))
            other = seen.setdefault(bare, u)
            if other != u and unicodedata.normalize("NFC", labels[other]) != unicodedata.normalize("NFC", label):
                k = int(np.argmax(codes == u))
                ctx.fail("bad-name", f"the {what} names {_show(labels[other])} and {_show(label)} differ only by a "
                         "zero-width joiner or non-joiner (U+200C/U+200D), so they look the same; make them differ "
                         "visibly", where=ctx.at(rows[k]), column=column)
    ascii_only = labels.str.isascii().to_numpy(dtype=bool, na_value=True)
    normal = [u if a else _nfc(u, ctx) for u, a in zip(labels.tolist(), ascii_only)] + [""]
    if not ascii_only.all():
        _check_lookalikes(normal[:-1], ascii_only, what, codes, rows, column, ctx)
    # one category per distinct normal form ('' for a missing name): the rows stay integer codes
    if not isinstance(series.dtype, pd.CategoricalDtype):
        # text: the labels already follow the rows' first appearance (factorised twice in that order); missing last
        if ascii_only.all():  # NFC changed nothing: the labels are the categories
            final_of_label, categories = np.arange(len(normal) - 1), normal[:-1]
        else:
            final_of_label, categories = pd.factorize(pd.Series(normal[:-1], dtype=object))
        lookup = np.append(final_of_label, len(categories)).astype(np.int64)
        return lookup[np.where(codes < 0, len(final_of_label), codes)], tuple(map(str, categories))
    final_of_label, categories = pd.factorize(pd.Series(normal, dtype=object))
    per_row = final_of_label[np.where(codes < 0, len(normal) - 1, codes)]
    return per_row, tuple(str(c) for c in categories)


# Dashes that look like an ASCII hyphen-minus (U+2010 hyphen .. U+2015 bar, minus sign, small and fullwidth
# hyphen-minus); NFKC folds fullwidth letters and digits, ligatures and other compatibility forms.
_DASHES = re.compile("[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]")


def lookalike_key(name: str) -> str:
    """The form two names that look alike share: NFKC (fullwidth letters, compatibility forms) with every dash
    read as ``-``. Two different names with one key are refused by the readers (``bad-name``)."""
    return _DASHES.sub("-", unicodedata.normalize("NFKC", name))


def _check_lookalikes(normal: list[str], ascii_only: np.ndarray, what: str, codes: np.ndarray, rows: np.ndarray,
                      column: str, ctx: _Context) -> None:
    """Refuse two distinct (NFC) names that differ only by compatibility forms or dash variants: they would split
    one system or rater in two silently (``'m1'`` and fullwidth ``'ｍ1'``, ``'gpt-4'`` and ``'gpt‐4'``)."""
    keys: dict[str, int] = {lookalike_key(name): u for u, (name, a) in enumerate(zip(normal, ascii_only)) if a}
    for u, (name, a) in enumerate(zip(normal, ascii_only)):
        if a:
            continue
        other = keys.setdefault(lookalike_key(name), u)
        if other != u and normal[other] != name:
            k = int(np.argmax(codes == u))
            ctx.fail("bad-name", f"the {what} names {_show(normal[other])} and {_show(name)} differ only by "
                     "fullwidth or compatibility characters or a dash variant (U+2010 hyphen, minus sign ...), so "
                     "they look the same; write them the same way", where=ctx.at(rows[k]), column=column)


def _check_name_bytes(labels: pd.Series, what: str, column: str, ctx: _Context) -> None:
    """The distinct names of one column, in UTF-8 bytes, against ``max_name_bytes`` (what they cost in memory)."""
    if len(labels) * 4 * ctx.limits.max_name_length <= ctx.limits.max_name_bytes:
        return  # cannot exceed: no need to measure
    total = int(labels.str.len().sum())  # characters: a lower bound of the bytes, enough to refuse early
    if total <= ctx.limits.max_name_bytes // 4:
        return
    total = sum(len(label.encode("utf-8", "surrogatepass")) for label in labels.tolist())
    if total > ctx.limits.max_name_bytes:
        ctx.fail("too-large", f"the {len(labels):,} distinct {what} names hold {total:,} bytes; the limit is "
                 f"{ctx.limits.max_name_bytes:,} bytes of names per column (a deployment can change it with "
                 f"METAEVAL_MAX_NAME_MB)", column=column)


def name_problem(name: str, what: str, max_length: int) -> tuple[str, str] | None:
    """Why the upload's rules refuse a (stripped) name, as ``(UploadError kind, sentence)``, or None when it passes:
    empty, longer than ``max_length`` characters, a control or line-separator character, an invisible character.
    Every reader (files, zips, mt-metrics-eval folders) checks names with it."""
    if not name:
        return "missing-value", f"a {what} name is empty"
    if len(name) > max_length:
        return "name-too-long", f"the {what} name {_show(name)} has {len(name):,} characters; the limit is {max_length}"
    if _CONTROL.search(name):
        return "bad-name", f"the {what} name {_show(name)} contains a control character or a line separator"
    if _INVISIBLE.search(name):
        return "bad-name", _invisible_name(what, name)
    return None


def _check_measure_name(name: str, ctx: _Context, *, where: str | None = None, column: str | None = None) -> str:
    name = str(name).strip()
    problem = name_problem(name, "measure", ctx.limits.max_name_length)
    if problem is not None:
        ctx.fail(*problem, where=where, column=column)
    return _nfc(name, ctx)
