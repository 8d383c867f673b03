"""Parquet: plain columns only (no pandas metadata, no pickles)."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd

from metaeval_core.data.upload.limits import _Context, _list_names, _show
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
    try:
        table = parquet.read(use_pandas_metadata=False)
    except Exception as error:
        ctx.fail("bad-parquet", f"the Parquet data cannot be read: {_show(error)}")
    index = _pandas_index_columns(parquet)
    if index:
        ctx.notes.append(f"the column(s) {_list_names(index)} are not read: the row index pandas saved with the "
                         f"table (write it with index=False to leave it out)")
        table = table.drop_columns([n for n in table.column_names if n in index])
    names = [str(n) for n in table.column_names]
    _check_duplicate_columns(names, ctx)
    roles = _roles(names)
    if roles.measure is None and len(roles.others) > ctx.limits.max_measures:  # before decoding any column
        ctx.fail("too-many-measures", f"{len(roles.others):,} measure columns; the limit is "
                 f"{ctx.limits.max_measures:,} (a deployment can change it with METAEVAL_MAX_UPLOAD_MEASURES)")
    text_columns = {roles.system, roles.input, roles.measure, roles.annotator, roles.kind,
                    *roles.attributes, *roles.ignored} - {None}
    data: dict[str, Any] = {}
    numbers: dict[str, np.ndarray] = {}
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
                if not (textual or pa.types.is_integer(kind) or pa.types.is_null(kind)) and name not in roles.ignored:
                    ctx.fail("bad-parquet", f"has type {kind}; a name column must hold strings or integers", column=name)
                try:
                    values = pc.cast(column, pa.string()).to_numpy(zero_copy_only=False)
                except pa.lib.ArrowException:
                    if name not in roles.ignored:
                        raise
                    values = np.full(len(column), "", dtype=object)  # a column that is not read anyway
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
                numbers[name] = np.asarray(values, dtype=np.float64)
    except pa.lib.ArrowException as error:  # a column whose pages are corrupt decodes only here
        ctx.fail("bad-parquet", f"the Parquet data cannot be decoded: {_show(error)}")
    # the scores as one float block (a frame of thousands of separate columns costs ~0.1 ms per column)
    block = np.column_stack(list(numbers.values())) if numbers else np.empty((table.num_rows, 0))
    frame = pd.concat([pd.DataFrame(data, index=pd.RangeIndex(table.num_rows)),
                       pd.DataFrame(block, columns=list(numbers))], axis=1)[names]
    return frame, np.arange(1, len(frame) + 1)


def _pandas_index_columns(parquet) -> list[str]:
    """The columns pandas wrote for a DataFrame's index (named in its JSON metadata; a RangeIndex is no column)."""
    try:
        metadata = parquet.schema_arrow.metadata or {}
        pandas_meta = json.loads(metadata.get(b"pandas", b"{}"))
        columns = pandas_meta.get("index_columns", []) if isinstance(pandas_meta, dict) else []
    except (ValueError, TypeError, AttributeError):
        return []
    return [c for c in columns if isinstance(c, str)]
