"""SacreROUGE-style JSON Lines."""

from __future__ import annotations

import json
import math
import re
from array import array
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval_core.data.upload.limits import _NA_TOKENS, _Context, _list_names, _show
from metaeval_core.data.upload.names import _JSONL_INPUT_KEYS, _JSONL_SYSTEM_KEYS, _names
from metaeval_core.data.upload.tables import (
    TEXT_COLUMNS, _Parsed, _check_magnitude, _constant_per_key, _from_cells, _texts)


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


def _fail_broken_line(line: str, number: int, first: bool, error: Exception, ctx: _Context) -> None:
    """A line that is not JSON. A first line opening an object or array that does not close on it is a JSON
    document written over several lines (a plain .json file): say that, not 'not valid JSON at character 2'."""
    if first and line.startswith(("{", "[")) and isinstance(error, json.JSONDecodeError) and error.pos >= len(line):
        ctx.fail("mixed-format", "expected one JSON object per line (JSON Lines); this looks like a single JSON "
                 "document over several lines: write each record as one object on its own line", where="line 1")
    detail = f" at character {error.colno}" if isinstance(error, json.JSONDecodeError) else ""
    ctx.fail("broken-jsonl", f"not valid JSON{detail}: {_show(line)}", where=f"line {number}")


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


def _json_numbers(elements: list, ctx: _Context, line: int, key: str) -> array:
    """A list of JSON scores as float64 in one step when every element is a plain number (the usual case: a list
    of ratings), else one by one with :func:`_json_number`'s checks."""
    if set(map(type, elements)) <= {float, int}:  # bool, None, text: the careful path
        try:
            numbers = array("d", elements)
        except OverflowError:  # an integer beyond float64
            pass
        else:
            if not np.isinf(np.frombuffer(numbers, dtype=np.float64)).any():
                return numbers
    return array("d", (_json_number(e, ctx, line, key) for e in elements))


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


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' object hook: a dict, refusing a key given twice (``json`` keeps the last one silently)."""
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return record


# A JSON string (with its escapes): removed before counting the commas and colons that separate values and keys.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
# Keys a line may hold beyond two per measure (a nested metric name has at most one key per level on its path
# that does not end in a score; the ids, summarizer_type and a few unread keys fit in the rest).
_SPARE_KEYS = 100


def _line_budget(line: str, number: int, scores: int, ctx: _Context) -> None:
    """Refuse a line whose values or keys would exceed the limits, before ``json.loads`` builds them.

    A line holds at most (commas outside strings + 1) scalar values and exactly (colons outside strings) keys;
    both are counted without building anything (``json.loads`` of a 48 MB list costs gigabytes)."""
    commas, colons = line.count(","), line.count(":")
    values_room = ctx.limits.max_rows - scores + _SPARE_KEYS
    keys_room = 2 * ctx.limits.max_measures + _SPARE_KEYS
    if commas + 1 <= values_room and colons <= keys_room:
        return  # the common case: no string needs removing to know the line is within the limits
    bare = _JSON_STRING.sub("", line)
    commas, colons = bare.count(","), bare.count(":")
    if commas + 1 > values_room:
        ctx.fail("too-many-rows", f"the line holds up to {commas + 1:,} values (list elements and keys), and the "
                 f"file {scores:,} scores before it; the limit is {ctx.limits.max_rows:,} scores in all (a "
                 f"deployment can change it with METAEVAL_MAX_UPLOAD_ROWS)", where=f"line {number}")
    if colons > keys_room:
        ctx.fail("too-many-measures", f"the line holds {colons:,} keys; the limit is {ctx.limits.max_measures:,} "
                 f"measures (a deployment can change it with METAEVAL_MAX_UPLOAD_MEASURES)", where=f"line {number}")


def _parse_jsonl(text: str, ctx: _Context) -> _Parsed:
    """SacreROUGE-style JSON Lines (one loop over lines; everything after is vectorised)."""
    systems: list[str] = []
    inputs: list[str] = []
    measures: list[str] = []
    # compact per-score columns (8 bytes a score, not a Python object each): 2M scores stay well under 1 GB
    annotators = array("q")
    values = array("d")
    rows = array("q")
    shared: dict[str, str] = {}  # one string object per distinct name (a name repeats on many lines)
    listed: set[str] = set()
    records = skipped = 0
    unread: set[str] = set()
    used = {"metrics", "summarizer_type"}
    typed: list[tuple[str, str, int]] = []  # (system, summarizer_type, line): the system attribute 'type'
    names_seen: set[str] = set()  # distinct measure names so far (the measure limit, checked line by line)
    texts: list[tuple[str, str, int, dict]] = []  # (system, input, line, {key: text}): the optional text keys
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            continue
        records += 1
        if records > ctx.limits.max_rows:
            ctx.fail("too-many-rows", f"more than {ctx.limits.max_rows:,} lines, the limit", where=f"line {number}")
        _line_budget(line, number, len(values), ctx)
        try:
            record = json.loads(line, object_pairs_hook=_no_duplicate_keys)
        except _DuplicateKey as error:
            ctx.fail("duplicate-column", f"the key {error.key!r} appears twice in one object; JSON readers keep "
                     f"only one of the two values silently, so give each key once", where=f"line {number}",
                     column=error.key)
        except (ValueError, RecursionError) as error:
            if records == 1 and not line.startswith(("{", "[")) and ("," in line or "\t" in line):
                ctx.fail("mixed-format", f"line 1 {_show(line)} looks like a CSV header, not JSON; rename the "
                         f"file .csv", where="line 1")
            _fail_broken_line(line, number, records == 1, error, ctx)
        if not isinstance(record, dict):
            if records == 1 and isinstance(record, list):
                ctx.fail("mixed-format", "the file is one JSON array; write one JSON object per line (JSON Lines)",
                         where=f"line {number}")
            ctx.fail("broken-jsonl", f"each line must be a JSON object; got {type(record).__name__} "
                     f"{_show(line)}", where=f"line {number}")
        if str(record.get("summarizer_type", "")).lower() == "reference":
            skipped += 1
            continue
        unread.update(record)
        used.update(next((k for k in keys if k in record), "") for keys in (_JSONL_SYSTEM_KEYS, _JSONL_INPUT_KEYS))
        system = _json_id(record, _JSONL_SYSTEM_KEYS, "system", ctx, number)
        system = shared.setdefault(system, system)
        kind_of_system = record.get("summarizer_type")
        if isinstance(kind_of_system, (str, int)) and not isinstance(kind_of_system, bool) and \
                str(kind_of_system).strip():
            typed.append((system, str(kind_of_system).strip(), number))
        item = _json_id(record, _JSONL_INPUT_KEYS, "input", ctx, number)
        item = shared.setdefault(item, item)
        given = {key: record[key] for key in TEXT_COLUMNS if key in record}
        if given:
            for key, value in given.items():
                if isinstance(value, (list, dict, bool)):
                    ctx.fail("non-numeric", f"the {key!r} text must be a string (or null); got "
                             f"{_show(json.dumps(value))}", where=f"line {number}", column=key)
            used.update(given)
            texts.append((system, item, number, given))
        if "metrics" not in record:
            ctx.fail("missing-column", f"the object has no 'metrics' object; keys found: {_list_names(record)}",
                     where=f"line {number}", column="metrics")
        metrics = record["metrics"]
        if not isinstance(metrics, dict):
            ctx.fail("broken-jsonl", f"'metrics' must be a JSON object; got {_show(json.dumps(metrics))}",
                     where=f"line {number}", column="metrics")
        flat: list[tuple[str, Any]] = []
        _flatten(metrics, "", flat)
        _cell_budget(flat, names_seen, len(values), number, ctx)
        for name, value in flat:
            name = shared.setdefault(name, name)
            if isinstance(value, list):
                listed.add(name)
                size = len(value)
                systems.extend([system] * size)
                inputs.extend([item] * size)
                measures.extend([name] * size)
                annotators.extend(range(size))
                rows.extend([number] * size)
                values.extend(_json_numbers(value, ctx, number, name))
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
    unread -= used
    if unread:  # keys outside 'metrics' that are not the ids read: named, not dropped silently
        ctx.notes.append(f"the key(s) {_list_names(sorted(unread))} are not read: only the system id "
                         f"({', '.join(_JSONL_SYSTEM_KEYS)}: the first present), the input id "
                         f"({', '.join(_JSONL_INPUT_KEYS)}: the first present), 'summarizer_type' and 'metrics' are")
    row_array = np.frombuffer(rows, dtype=np.int64)
    value_array = np.frombuffer(values, dtype=np.float64)
    _check_magnitude(value_array, lambda k: (f"line {row_array[k]}", measures[k]), ctx,
                     lambda k: repr(float(value_array[k])))
    system_series = _names(pd.Series(systems, dtype=object), "summarizer_id", "system", row_array, ctx)
    input_series = _names(pd.Series(inputs, dtype=object), "instance_id", "input", row_array, ctx)
    measure_series = _names(pd.Series(measures, dtype=object), "metrics", "measure", row_array, ctx)
    annotator_codes = np.frombuffer(annotators, dtype=np.int64)
    if listed:
        # a scalar for a measure that is a list elsewhere is that cell's only annotator
        scalar_of_listed = (annotator_codes < 0) & measure_series.isin(listed).to_numpy()
        annotator_codes = np.where(scalar_of_listed, 0, annotator_codes)
    parsed, s_codes = _from_cells(ctx, "jsonl", system_series, input_series, measure_series, annotator_codes,
                            value_array, row_array, what=" (same list position)"
                            if listed else "")
    if typed:
        parsed.attributes = {"type": _system_types(typed, parsed.systems, ctx)}
    if texts:
        parsed.texts = _jsonl_texts(texts, parsed, ctx)
    return parsed


def _jsonl_texts(texts: list[tuple[str, str, int, dict]], parsed: _Parsed, ctx: _Context):
    """The lines' ``text``, ``source`` and ``reference`` keys as the dataset's texts (the long layout's columns)."""
    rows = np.asarray([number for _, _, number, _ in texts], dtype=np.int64)
    systems = _names(pd.Series([s for s, _, _, _ in texts], dtype=object), "summarizer_id", "system", rows, ctx)
    inputs = _names(pd.Series([i for _, i, _, _ in texts], dtype=object), "instance_id", "input", rows, ctx)
    # a line whose 'metrics' is empty names no cell of the dataset: its texts have nowhere to go
    known = (systems.isin(parsed.systems) & inputs.isin(parsed.inputs)).to_numpy()
    keys = [key for key in TEXT_COLUMNS if any(key in given for _, _, _, given in texts)]
    frame = pd.DataFrame({key: pd.Series([given.get(key) for _, _, _, given in texts], dtype=object)
                          for key in keys})
    return _texts(frame[known].reset_index(drop=True), {key: key for key in keys},
                  systems[known].reset_index(drop=True), inputs[known].reset_index(drop=True), parsed, rows[known],
                  ctx)


def _cell_budget(flat: list[tuple[str, Any]], names_seen: set[str], scores: int, number: int,
                 ctx: _Context) -> None:
    """The exact counts, line by line: every score (a list element counts one) against ``max_rows``, every measure
    name against ``max_measures``, before the line's cells are stored."""
    names_seen.update(name for name, _ in flat)
    if len(names_seen) > ctx.limits.max_measures:
        ctx.fail("too-many-measures", f"{len(names_seen):,} measures so far; the limit is "
                 f"{ctx.limits.max_measures:,} (a deployment can change it with METAEVAL_MAX_UPLOAD_MEASURES)",
                 where=f"line {number}")
    total = scores + sum(len(v) if isinstance(v, list) else 1 for _, v in flat)
    if total > ctx.limits.max_rows:
        ctx.fail("too-many-rows", f"{total:,} scores up to this line (each list element is one); the limit is "
                 f"{ctx.limits.max_rows:,} (a deployment can change it with METAEVAL_MAX_UPLOAD_ROWS)",
                 where=f"line {number}")


def _system_types(typed: list[tuple[str, str, int]], systems: list[str], ctx: _Context) -> list[str]:
    """SacreROUGE's ``summarizer_type`` as the system attribute ``type`` (constant per system, like a CSV's
    ``system_type`` column)."""
    rows = np.asarray([line for _, _, line in typed])
    names = _names(pd.Series([s for s, _, _ in typed], dtype="str"), "summarizer_id", "system", rows, ctx)
    values = _names(pd.Series([t for _, t, _ in typed], dtype="str"), "summarizer_type", "type", rows, ctx)
    position = {name: k for k, name in enumerate(systems)}
    codes = np.asarray([position.get(n, -1) for n in names], dtype=int)
    known = codes >= 0  # a system whose lines hold no metric is not a system of the dataset
    distinct, clash = _constant_per_key(codes[known], values.to_numpy()[known], rows[known])
    if clash is not None:
        system, first_value, first_row, second_value, second_row = clash
        ctx.fail("inconsistent-attribute", f"system {systems[int(system)]!r} has summarizer_type {_show(first_value)} "
                 f"at line {first_row} but {_show(second_value)} at line {second_row}; it must be constant per "
                 f"system", where=f"line {second_row}", column="summarizer_type")
    result = np.full(len(systems), "", dtype=object)
    result[distinct["k"].to_numpy(dtype=int)] = distinct["v"].to_numpy()
    return [str(v) for v in result]
