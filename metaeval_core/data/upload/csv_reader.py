"""CSV/TSV: the file as a frame of text cells with each row's line number."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pandas as pd

from metaeval_core.data.upload.limits import _Context


# -- CSV -------------------------------------------------------------------------
_ID_COLUMNS = 16  # room for the id, kind, type and attribute columns beside the measures in the header check
# Above this many columns the file is read with the csv module into one block of strings: pandas' reader and frame
# operations cost ~0.1 ms per column, the csv module's cost is per cell.
_WIDE = 256


def _header_width(first_line: str, sep: str) -> int:
    if first_line.count(sep) < _WIDE:
        return first_line.count(sep) + 1  # exact enough: only decides the reader (a quoted separator adds one)
    try:
        return len(next(csv.reader([first_line], delimiter=sep), []))
    except csv.Error:
        return first_line.count(sep) + 1


def _read_tall(text: str, sep: str, ctx: _Context, cells: type = str) -> pd.DataFrame:
    """pandas' C reader: fast per row, for files with a usual number of columns."""
    try:
        return pd.read_csv(
            io.StringIO(text), sep=sep, header=None, dtype=cells, keep_default_na=False, na_filter=False,
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


def _read_wide(text: str, sep: str, width: int, ctx: _Context) -> pd.DataFrame:
    """The csv module into one object block (cost per cell): the same cells and errors as :func:`_read_tall`."""
    records: list[list[str]] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    try:
        for record in reader:
            if len(records) > ctx.limits.max_rows + 1:
                break
            if len(record) > width:
                ctx.fail("broken-csv", f"the CSV cannot be read: Expected {width} fields in line {reader.line_num}, "
                         f"saw {len(record)}", where=f"line {reader.line_num}")
            records.append(record + [""] * (width - len(record)) if len(record) < width else record)
    except csv.Error as error:
        ctx.fail("broken-csv", f"the CSV cannot be read: {error} (line {reader.line_num})",
                 where=f"line {reader.line_num}")
    grid = np.empty((len(records), width), dtype=object)
    grid[:] = records
    return pd.DataFrame(grid, dtype=object)  # one block: column selections stay cheap


def _parse_csv(text: str, ctx: _Context, *, cells: type = str) -> tuple[pd.DataFrame, np.ndarray]:
    """A frame of stripped-later strings (every cell text) and each row's line number.

    ``cells=object`` keeps the cells Python strings, as the JSON Lines reader gives them: the verdict reader codes
    its columns at once, and 2 million rows converted to Arrow strings first took 2 to 3 s more."""
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
    # the header alone first: a file with more columns than measures allowed is refused before the body is parsed
    width = _header_width(first_line, sep)
    if width > ctx.limits.max_measures + _ID_COLUMNS:
        ctx.fail("too-many-measures", f"the header has {width:,} columns; the limit is {ctx.limits.max_measures:,} "
                 f"measures (a deployment can change it with METAEVAL_MAX_UPLOAD_MEASURES)", where="line 1")
    grid = _read_wide(text, sep, width, ctx) if width > _WIDE else _read_tall(text, sep, ctx, cells)
    header = [str(h) for h in grid.iloc[0].tolist()]
    grid = grid.iloc[1:]
    if len(grid) > ctx.limits.max_rows:
        ctx.fail("too-many-rows", f"more than {ctx.limits.max_rows:,} data rows, the limit")
    lines = np.arange(2, len(grid) + 2)
    grid.columns = range(grid.shape[1])
    if cells is object and grid.shape[1]:  # column by column in numpy: a frame of objects compares per cell slowly
        blank = np.logical_and.reduce([grid[c].to_numpy() == "" for c in grid.columns])
    else:
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
