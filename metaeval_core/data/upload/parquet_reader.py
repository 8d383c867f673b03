"""Parquet: plain columns only (no pandas metadata, no pickles)."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd

from metaeval_core.data.upload.limits import UploadError, _Context, _list_names, _show
from metaeval_core.data.upload.csv_reader import _ID_COLUMNS
from metaeval_core.data.upload.names import _check_duplicate_columns, _roles


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
    n_columns = parquet.metadata.num_columns
    if n_columns > ctx.limits.max_measures + _ID_COLUMNS:  # from the footer, before any column is read
        ctx.fail("too-many-measures", f"{n_columns:,} columns; the limit is {ctx.limits.max_measures:,} measures (a "
                 f"deployment can change it with METAEVAL_MAX_UPLOAD_MEASURES)")
    decoded = _decoded_size(parquet)
    if decoded > _DECODED_FACTOR * ctx.limits.max_bytes:  # from the footer, before any page is decoded
        ctx.fail("too-large", f"the Parquet data decodes to {decoded:,} bytes (its footer says); the limit is "
                 f"{_DECODED_FACTOR * ctx.limits.max_bytes:,} ({_DECODED_FACTOR} x the file limit)")
    index = _pandas_index_columns(parquet)
    if index:
        ctx.notes.append(f"the column(s) {_list_names(index)} are not read: the row index pandas saved with the "
                         f"table (write it with index=False to leave it out)")
    names = [str(n) for n in parquet.schema_arrow.names if n not in index]
    _check_duplicate_columns(names, ctx)
    roles = _roles(names)
    if roles.measure is None and len(roles.others) > ctx.limits.max_measures:  # before decoding any column
        ctx.fail("too-many-measures", f"{len(roles.others):,} measure columns; the limit is "
                 f"{ctx.limits.max_measures:,} (a deployment can change it with METAEVAL_MAX_UPLOAD_MEASURES)")
    text_columns = {roles.system, roles.input, roles.measure, roles.annotator, roles.kind,
                    *roles.attributes, *roles.ignored} - {None}
    try:  # name columns as dictionaries: each distinct name decoded once, rows as integer codes
        parquet = pq.ParquetFile(io.BytesIO(raw), read_dictionary=[n for n in names if n in text_columns])
    except Exception as error:
        ctx.fail("bad-parquet", f"the Parquet file cannot be opened: {_show(error)}")
    # the system column first: a file with too many (or, for a whole dataset, too few) systems is refused before
    # the other columns are decoded
    order = sorted(names, key=lambda n: n != roles.system)
    data: dict[str, Any] = {}
    numbers: dict[str, np.ndarray] = {}
    try:
        for name in order:
            column = parquet.read(columns=[name], use_pandas_metadata=False).column(0)
            kind = column.type
            dictionary = pa.types.is_dictionary(kind)
            value_kind = kind.value_type if dictionary else kind
            textual = pa.types.is_string(value_kind) or pa.types.is_large_string(value_kind) or (
                hasattr(pa.types, "is_string_view") and pa.types.is_string_view(value_kind)
            )
            numeric = pa.types.is_integer(value_kind) or pa.types.is_floating(value_kind) or \
                pa.types.is_decimal(value_kind) or pa.types.is_null(value_kind)
            if name in text_columns:
                if not (textual or pa.types.is_integer(value_kind) or pa.types.is_null(value_kind)) and \
                        name not in roles.ignored:
                    ctx.fail("bad-parquet", f"has type {value_kind}; a name column must hold strings or integers",
                             column=name)
                try:
                    data[name] = _categorical(column, name, ctx)
                except pa.lib.ArrowException:
                    if name not in roles.ignored:
                        raise
                    data[name] = pd.Series(np.full(len(column), "", dtype=object))  # a column not read anyway
                if name == roles.system:
                    _early_system_count(data[name], ctx)
            else:
                if dictionary:
                    column = column.cast(value_kind)
                if not numeric:
                    ctx.fail("bad-parquet",
                             f"has type {value_kind}; a score column must hold numbers (float or integer, nulls "
                             f"allowed)", column=name)
                try:
                    values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
                except Exception as error:
                    ctx.fail("bad-parquet", f"cannot be read as float64: {_show(error)}", column=name)
                numbers[name] = np.asarray(values, dtype=np.float64)
    except UploadError:
        raise
    except Exception as error:  # a column whose pages are corrupt decodes only here (ArrowException, OSError, ...)
        ctx.fail("bad-parquet", f"the Parquet data cannot be decoded: {_show(error)}")
    n_rows = parquet.metadata.num_rows
    # the scores as one float block (a frame of thousands of separate columns costs ~0.1 ms per column)
    block = np.column_stack(list(numbers.values())) if numbers else np.empty((n_rows, 0))
    frame = pd.concat([pd.DataFrame(data, index=pd.RangeIndex(n_rows)),
                       pd.DataFrame(block, columns=list(numbers))], axis=1)[names]
    return frame, np.arange(1, len(frame) + 1)


# A Parquet file's pages may decode to this many times the file limit (the footer's uncompressed sizes): the
# dictionary-encoded name columns and float scores of a file at the row limit fit; gigabytes of text do not.
_DECODED_FACTOR = 4


def _decoded_size(parquet) -> int:
    """The bytes every column chunk decompresses to, as the footer records them (nothing decoded)."""
    metadata = parquet.metadata
    total = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for column in range(row_group.num_columns):
            total += max(0, int(row_group.column(column).total_uncompressed_size))
    return total


def _categorical(column, name: str, ctx: _Context) -> pd.Series:
    """A name column as a pandas Categorical: integer codes per row and each distinct name decoded once, after the
    dictionary's size is checked against ``max_name_bytes`` (never a string object per row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_dictionary(column.type):
        column = pc.cast(column, pa.string()).dictionary_encode()
    column = column.unify_dictionaries()  # one dictionary for every row group
    chunks = column.chunks
    dictionary = pc.cast(chunks[0].dictionary, pa.string()) if chunks else pa.array([], pa.string())
    size = int(pc.sum(pc.binary_length(dictionary)).as_py() or 0)
    if size > ctx.limits.max_name_bytes:
        ctx.fail("too-large", f"the distinct names hold {size:,} bytes; the limit is {ctx.limits.max_name_bytes:,} "
                 f"bytes of names per column (a deployment can change it with METAEVAL_MAX_NAME_MB)", column=name)
    codes = np.concatenate([chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
                            for chunk in chunks]) if chunks else np.empty(0, dtype=np.int64)
    categories = pd.Index(np.asarray(dictionary.to_pylist(), dtype=object), dtype=object)
    return pd.Series(pd.Categorical.from_codes(codes, categories=categories))


def _early_system_count(systems: pd.Series, ctx: _Context) -> None:
    """Too many systems (or, for a whole dataset, too few) refused from the system column alone."""
    used = systems.cat.remove_unused_categories().cat.categories
    distinct = {str(s).strip() for s in used} - {""}
    if len(distinct) > ctx.limits.max_systems:
        ctx.fail("too-many-systems", f"{len(distinct):,} systems; the limit is {ctx.limits.max_systems:,} (a "
                 f"deployment can change it with METAEVAL_MAX_UPLOAD_SYSTEMS)")
    if len(distinct) < 2 and not ctx.partial:
        ctx.fail("too-few-systems", f"only {len(distinct)} system ({_list_names(sorted(distinct))}); at least 2 are "
                 f"needed to correlate a metric with human judgments")


def _pandas_index_columns(parquet) -> list[str]:
    """The columns pandas wrote for a DataFrame's index (named in its JSON metadata; a RangeIndex is no column)."""
    try:
        metadata = parquet.schema_arrow.metadata or {}
        pandas_meta = json.loads(metadata.get(b"pandas", b"{}"))
        columns = pandas_meta.get("index_columns", []) if isinstance(pandas_meta, dict) else []
    except (ValueError, TypeError, AttributeError):
        return []
    return [c for c in columns if isinstance(c, str)]
