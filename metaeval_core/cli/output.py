"""How every command prints: a table fitted to the terminal, or JSON with ``--json``, and paragraphs
wrapped to the terminal's width."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from metaeval_core.cli.options import terminal_width


def to_jsonable(value: Any) -> Any:
    """Plain JSON types; NaN and infinities become null (JSON has no NaN): :func:`metaeval_core.wording.plain`."""
    from metaeval_core.wording import plain

    return plain(value)


def say(*paragraphs: str, stream=None, indent: str = "") -> None:
    """Notes and footnotes wrapped at the terminal's width (COLUMNS honoured); a paragraph's own line breaks kept."""
    import textwrap

    width = max(40, terminal_width() - 1)
    for paragraph in paragraphs:
        for line in str(paragraph).splitlines() or [""]:
            print(textwrap.fill(line, width=width, subsequent_indent=indent + "  ", initial_indent=indent,
                                break_on_hyphens=False, break_long_words=False) if line else "", file=stream)


def _elide(cells: list[list[str]], columns: list[str], width: int, narrowest: int = 8) -> None:
    """Fit each line within ``width``: first shorten headers wider than their values ('significant_corrected'
    over True/False), then the widest text columns' cells, with '…'; numbers are never cut. The full names are
    in --json."""
    def numeric(text: str) -> bool:
        return text.replace(".", "", 1).replace("-", "", 1).replace("e", "", 1).replace("+", "", 1).isdigit() \
            or text in ("-", "nan")

    def excess() -> int:
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
        return sum(widths) + 2 * (len(columns) - 1) - width

    values = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    for k in sorted(range(len(columns)), key=lambda k: values[k] - len(columns[k])):
        over = excess()
        if over <= 0:
            return
        if len(columns[k]) > max(values[k], 6):
            keep = max(values[k], 6, len(columns[k]) - over)
            columns[k] = columns[k][:keep - 1] + "…"
    while (over := excess()) > 0:
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
        text_columns = [i for i in range(len(columns)) if widths[i] > max(narrowest, len(columns[i]))
                        and not all(numeric(row[i]) for row in cells)]
        if not text_columns:
            return
        i = max(text_columns, key=lambda k: widths[k])
        keep = max(narrowest, len(columns[i]), widths[i] - over)
        for row in cells:
            if len(row[i]) > keep:
                row[i] = row[i][:keep - 1].rstrip() + "…"


def print_table(rows: list[dict], columns: Sequence[str] | None = None, stream=None,
                width: int | None = None) -> None:
    """A plain aligned text table (the default, human-readable output), its text cells elided with '…' to fit
    the terminal (``width``, default the terminal's)."""
    stream = stream or sys.stdout
    if not rows:
        print("(no rows)", file=stream)
        return
    columns = list(columns or rows[0].keys())
    from metaeval_core.wording import number  # here, not at the top: `metaeval --help` must not import numpy

    def fmt(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):  # never "-0.0000" (metaeval_core.wording.number)
            return number(v, 4, missing="nan")
        if isinstance(v, (list, tuple)):
            return ",".join(fmt(x) for x in v)
        return str(v)

    cells = [[fmt(r.get(c)) for c in columns] for r in rows]
    columns = [str(c) for c in columns]  # headers may be elided too: the rows were read by the full names
    width = width or terminal_width()
    if len(cells) == 1 and sum(max(len(c), len(v)) + 2 for c, v in zip(columns, cells[0])) - 2 > width:
        # One record wider than the terminal: one 'name  value' line each, nothing cut, long values wrapped.
        import textwrap

        pad = max(map(len, columns))
        room = max(20, width - pad - 2)
        for column, value in zip(columns, cells[0]):
            lines = textwrap.wrap(value, room, break_on_hyphens=False, break_long_words=False) or [""]
            print(f"{column.ljust(pad)}  {lines[0]}".rstrip(), file=stream)
            for line in lines[1:]:
                print(" " * (pad + 2) + line, file=stream)
        return
    _elide(cells, columns, width)
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(), file=stream)
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip(), file=stream)


def emit(args: argparse.Namespace, payload: Any, rows: list[dict] | None = None, columns=None) -> None:
    if args.json:
        json.dump(to_jsonable(payload), sys.stdout, indent=None if isinstance(payload, list) else 2)
        sys.stdout.write("\n")
    else:
        print_table(to_jsonable(rows if rows is not None else payload), columns)
    sys.stdout.flush()
    print_conventions(args)


def print_conventions(args: argparse.Namespace) -> None:
    """The conventions and system set of the tables just printed, on stderr (stdout stays the table or JSON)."""
    caption = getattr(args, "conventions_caption", "")
    if caption and not getattr(args, "conventions_printed", False):
        args.conventions_printed = True
        say(caption, stream=sys.stderr)


def fit_to_terminal(rows: list[dict], columns: Sequence[str], *, shrink: Sequence[str],
                    width: int | None = None, narrowest: int = 8) -> tuple[list[dict], list[str]]:
    """Shorten the ``shrink`` columns' text (with '…') so the table's lines fit the terminal; a column that would
    be narrower than ``narrowest`` is left out. Returns the rows and the columns kept."""
    width = width or terminal_width()
    rows = [dict(row) for row in rows]
    columns = list(columns)

    def text(v: Any) -> str:
        return "-" if v is None else str(v)

    for column in shrink:
        current = {c: max(len(c), *(len(text(r.get(c))) for r in rows)) for c in columns}
        excess = sum(current.values()) + 2 * (len(columns) - 1) - width
        if excess <= 0:
            break
        keep = current[column] - excess
        if keep < max(narrowest, len(column)):
            columns.remove(column)
            continue
        for row in rows:
            value = text(row.get(column))
            if len(value) > keep:
                row[column] = value[:keep - 1].rstrip() + "…"
    return rows, columns
