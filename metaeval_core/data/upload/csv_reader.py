"""CSV/TSV: the file as a frame of text cells with each row's line number."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd

from metaeval_core.data.upload.limits import _Context


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
