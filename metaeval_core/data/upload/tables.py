"""Long and wide tables (CSV, Parquet) to dense score arrays."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval_core.data.upload.limits import _INVISIBLE, _NA_TOKENS, MAX_MAGNITUDE, _Context, _list_names, _show
from metaeval_core.data.upload.names import (
    _KINDS, _ROLE_ALIASES, _Roles, _check_duplicate_columns, _check_measure_name, _invisible_name, _names, _roles,
    detect_layout,
)


def _scores(series: pd.Series, column: str | Sequence[str], rows: np.ndarray, ctx: _Context, *,
            measures: pd.Series | None = None) -> np.ndarray:
    """Float scores; empty/NA cells become NaN; text, +-inf and magnitudes over MAX_MAGNITUDE are refused with
    their row.

    ``column`` is one column's name, or (a wide block flattened column by column, ``len(rows)`` cells each) the
    names of the columns in that order, so a whole block is converted in one vectorised pass. ``measures``: each
    row's measure, when that is not the column (the long layout)."""
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
            ctx.fail("non-numeric", f"the score {_show(shown)} is not a number{hint}", where=_row_of(k, rows, ctx),
                     column=_column_of(k, column, rows))
    infinite = np.isinf(values)
    if infinite.any():
        k = int(np.argmax(infinite))
        shown = _show(text.iloc[k]) if text is not None else repr(float(values[k]))
        ctx.fail("non-finite", f"the score {shown} is not finite; leave the cell empty for a missing score",
                 where=_row_of(k, rows, ctx), column=_column_of(k, column, rows))
    _check_magnitude(values, lambda k: (_row_of(k, rows, ctx), _column_of(k, column, rows)), ctx,
                     lambda k: _show(text.iloc[k]) if text is not None else repr(float(values[k])),
                     None if measures is None else lambda k: str(measures.iloc[k]))
    return values


def _row_of(k: int, rows: np.ndarray, ctx: _Context) -> str:
    return ctx.at(rows[k % len(rows)])


def _column_of(k: int, column: str | Sequence[str], rows: np.ndarray) -> str:
    return column if isinstance(column, str) else str(column[k // len(rows)])


def _check_magnitude(values: np.ndarray, place, ctx: _Context, shown, measure=None) -> None:
    """Refuse scores whose sums and squares would overflow float64 in the statistics (see MAX_MAGNITUDE).

    ``place(k)`` gives cell k's (row, column), ``shown(k)`` its value as written, ``measure(k)`` its measure (default:
    the column)."""
    with np.errstate(invalid="ignore"):
        huge = np.abs(values) > MAX_MAGNITUDE
    if huge.any():
        k = int(np.argmax(huge))
        where, column = place(k)
        name = column if measure is None else measure(k)
        ctx.fail("out-of-range", f"the score {shown(k)} of the measure {name!r} is larger in magnitude than "
                 f"{MAX_MAGNITUDE:.0e}: means, variances and correlations of such scores overflow and would be "
                 f"wrong; rescale the measure (e.g. divide it by a power of ten)", where=where, column=column)


def _check_count(count: int, limit: int, kind: str, what: str, ctx: _Context, variable: str) -> None:
    if count > limit:
        ctx.fail(kind, f"{count:,} {what}; the limit is {limit:,} (a deployment can change it with {variable})")


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
    texts: Any = None  # ExampleTexts from the optional text, source and reference columns (or JSONL keys)


def _from_cells(
    ctx: _Context, layout: str, systems: pd.Series, inputs: pd.Series, measures: pd.Series,
    annotator_codes: np.ndarray, values: np.ndarray, rows: np.ndarray, *, what: str,
) -> tuple[_Parsed, np.ndarray]:
    """Dense arrays from one-score-per-row cells (long CSV/Parquet and JSONL); returns system codes too."""
    s_codes, s_labels = pd.factorize(systems)
    i_codes, i_labels = pd.factorize(inputs)
    m_codes, m_labels = pd.factorize(measures)
    n, m, k = len(s_labels), len(i_labels), len(m_labels)
    _check_count(k, ctx.limits.max_measures, "too-many-measures", "measures", ctx, "METAEVAL_MAX_UPLOAD_MEASURES")
    _check_count(n, ctx.limits.max_systems, "too-many-systems", "systems", ctx, "METAEVAL_MAX_UPLOAD_SYSTEMS")
    annotated_measures = np.unique(m_codes[annotator_codes >= 0])
    n_annotators = {}
    for code in annotated_measures:
        n_annotators[int(code)] = int(np.count_nonzero(
            np.bincount(annotator_codes[(m_codes == code) & (annotator_codes >= 0)])))
    # the size first: a file over the cell limit is refused before anything per cell is built
    _check_cells((k + sum(n_annotators.values())) * n * m, ctx,
                 f"{n:,} systems x {m:,} inputs x {k:,} measures (with annotators)")
    second = _first_repeat(s_codes, i_codes, m_codes, annotator_codes, n, m)
    if second is not None:
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
            local = _dense_ranks(annotator_codes[chosen])
            tensor = np.full((n_annotators[code], n, m), np.nan)
            tensor[local, s_codes[chosen], i_codes[chosen]] = values[chosen]
            annotators[label] = tensor
        else:
            matrices[label] = cube[code]
    parsed = _Parsed(layout, [str(s) for s in s_labels], [str(i) for i in i_labels], matrices, annotators, {},
                     [str(label) for label in m_labels])
    return parsed, s_codes


def _dense_ranks(codes: np.ndarray) -> np.ndarray:
    """Each non-negative code's rank among the distinct codes (``np.unique(codes, return_inverse=True)[1]``, by
    counting: codes are list positions or factorize codes, below the number of cells)."""
    present = np.bincount(codes) > 0
    return (np.cumsum(present) - 1)[codes]


def _first_repeat(s_codes: np.ndarray, i_codes: np.ndarray, m_codes: np.ndarray, annotator_codes: np.ndarray,
                  n: int, m: int) -> int | None:
    """The position of the first cell that repeats an earlier one (same system, input, measure, annotator), or None.

    One int64 key per cell, sorted: 8 bytes a cell rather than a frame and a hash table (after the cell limit, the
    key range is at most measures x 2 x max_cells, far below 2**63)."""
    if len(s_codes) < 2:
        return None
    width = int(annotator_codes.max(initial=-1)) + 2
    key = ((m_codes.astype(np.int64) * n + s_codes) * m + i_codes) * width + (annotator_codes + 1)
    order = np.argsort(key, kind="stable")
    repeated = key[order[1:]] == key[order[:-1]]
    if not repeated.any():
        return None
    return int(order[1:][repeated].min())


def _from_long(frame: pd.DataFrame, rows: np.ndarray, roles: _Roles, ctx: _Context) -> _Parsed:
    needed = {"system": roles.system, "input": roles.input, "measure": roles.measure, "score": roles.score}
    _require(needed, list(frame.columns), ctx, "long")
    text_columns = {c.strip().lower(): c for c in roles.others if c.strip().lower() in TEXT_COLUMNS}
    roles.others = [c for c in roles.others if c not in text_columns.values()]
    if roles.others:
        ctx.fail(
            "mixed-format",
            f"the file has long-layout columns (measure {roles.measure!r}, score {roles.score!r}) and also the "
            f"columns {_list_names(roles.others)}; a long file holds only system, input, measure, score, "
            f"optional annotator, kind, system_type, attr.*, text, source and reference columns (drop the extra "
            f"columns, or drop 'measure' and "
            f"'score' for the wide layout)",
            where="line 1" if ctx.row_word == "line" else None, column=str(roles.others[0]),
        )
    systems = _names(frame[roles.system], roles.system, "system", rows, ctx)
    inputs = _names(frame[roles.input], roles.input, "input", rows, ctx)
    measures = _names(frame[roles.measure], roles.measure, "measure", rows, ctx)
    values = _scores(frame[roles.score], roles.score, rows, ctx, measures=measures)
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
    if text_columns:
        parsed.texts = _texts(frame, text_columns, systems, inputs, parsed, rows, ctx)
    return parsed


# The optional text columns of the long and wide layouts (and keys of a JSONL line; docs/methods.md sec. 19.6):
# 'text' is the system's output on the input (the same on every row of the cell), 'source' and 'reference' belong
# to the input (the same on all its rows).
TEXT_COLUMNS = ("text", "source", "reference")


# One text longer than this is refused: texts are shown in the examples panel, never scored.
MAX_TEXT_CHARS = 100_000


def _text_values(series: pd.Series, column: str, rows: np.ndarray, ctx: _Context) -> np.ndarray:
    raw = series.to_numpy(dtype=object)
    empty = pd.isna(series).to_numpy() | np.array([isinstance(v, str) and not v.strip() for v in raw], dtype=bool)
    values = np.array([None if empty[k] else str(v) for k, v in enumerate(raw)], dtype=object)
    longest = max((len(v) for k, v in enumerate(values) if not empty[k]), default=0)
    if longest > MAX_TEXT_CHARS:
        k = next(k for k, v in enumerate(values) if not empty[k] and len(v) == longest)
        ctx.fail("too-large", f"a {column!r} value holds {longest:,} characters; at most {MAX_TEXT_CHARS:,} "
                 "are read (texts are shown, never scored)", where=ctx.at(rows[k]), column=column)
    return np.where(empty, None, values)


def _one_per_key(keys: np.ndarray, values: np.ndarray, rows: np.ndarray, column: str, what: str,
                 ctx: _Context) -> dict:
    """Each key's text; a key given two different texts is refused (which row and which text)."""
    out: dict = {}
    for k, (key, value) in enumerate(zip(keys, values)):
        if value is None:
            continue
        seen = out.setdefault(key, value)
        if seen != value:
            ctx.fail("inconsistent-attribute", f"two different {column!r} texts for the same {what}; give one text per "
                     f"{what} (or leave the other rows empty)", where=ctx.at(rows[k]), column=column)
    return out


def _texts(frame: pd.DataFrame, columns: Mapping[str, str], systems: pd.Series, inputs: pd.Series, parsed: _Parsed,
           rows: np.ndarray, ctx: _Context):
    from metaeval_core.data.text_model import ExampleTexts

    s_index = {s: i for i, s in enumerate(parsed.systems)}
    i_index = {j: k for k, j in enumerate(parsed.inputs)}
    s_codes = np.array([s_index[str(s)] for s in systems], dtype=np.int64)
    i_codes = np.array([i_index[str(j)] for j in inputs], dtype=np.int64)
    outputs = np.full((len(parsed.systems), len(parsed.inputs)), None, dtype=object)
    per_input = {}
    for role in ("source", "reference"):
        per_input[role] = [""] * len(parsed.inputs)
        if role in columns:
            found = _one_per_key(i_codes, _text_values(frame[columns[role]], columns[role], rows, ctx), rows,
                                 columns[role], "input", ctx)
            for k, text in found.items():
                per_input[role][int(k)] = text
    if "text" in columns:
        cells = s_codes * len(parsed.inputs) + i_codes
        found = _one_per_key(cells, _text_values(frame[columns["text"]], columns["text"], rows, ctx), rows,
                             columns["text"], "system and input", ctx)
        for cell, text in found.items():
            outputs[int(cell) // len(parsed.inputs), int(cell) % len(parsed.inputs)] = text
    ctx.notes.append(f"texts read from the column(s) {', '.join(repr(c) for c in columns.values())}: shown beside "
                     "the numbers (examples), never scored")
    return ExampleTexts("", tuple(parsed.systems), tuple(parsed.inputs), outputs, tuple(per_input["source"]),
                        tuple(per_input["reference"]), ctx.file)


def _from_wide(frame: pd.DataFrame, rows: np.ndarray, roles: _Roles, ctx: _Context) -> _Parsed:
    _require({"system": roles.system, "input": roles.input}, list(frame.columns), ctx, "wide")
    if roles.annotator is not None:
        ctx.fail(
            "mixed-format",
            "an annotator column needs the long layout (system, input, measure, score, annotator); in the wide "
            "layout each row is one (system, input) cell",
            column=str(roles.annotator),
        )
    # The long layout's text columns (same names) hold texts here too: the cell's output, the input's source and
    # reference; they are never measures.
    text_columns = {c.strip().lower(): c for c in roles.others if c.strip().lower() in TEXT_COLUMNS}
    roles.others = [c for c in roles.others if c not in text_columns.values()]
    if not roles.others:
        ctx.fail(
            "missing-column",
            f"no measure columns: found only {_list_names(frame.columns)}; the wide layout needs system, input "
            f"and one column per measure",
            where="line 1" if ctx.row_word == "line" else None,
        )
    k = len(roles.others)
    _check_count(k, ctx.limits.max_measures, "too-many-measures", "measure columns", ctx,
                 "METAEVAL_MAX_UPLOAD_MEASURES")
    systems = _names(frame[roles.system], roles.system, "system", rows, ctx)
    inputs = _names(frame[roles.input], roles.input, "input", rows, ctx)
    measure_names = [_check_measure_name(c, ctx, column=str(c)) for c in roles.others]
    s_codes, s_labels = pd.factorize(systems)
    i_codes, i_labels = pd.factorize(inputs)
    n, m = len(s_labels), len(i_labels)
    _check_count(n, ctx.limits.max_systems, "too-many-systems", "systems", ctx, "METAEVAL_MAX_UPLOAD_SYSTEMS")
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
    _check_cells(k * n * m, ctx, f"{n:,} systems x {m:,} inputs x {k:,} measures")
    # one vectorised conversion of the whole block, column after column (the cost is per cell, not per column)
    block = frame[roles.others]
    if all(pd.api.types.is_float_dtype(d) and not pd.api.types.is_extension_array_dtype(d) for d in block.dtypes):
        flat = pd.Series(block.to_numpy(dtype=np.float64).ravel(order="F"))
    else:
        flat = pd.Series(block.to_numpy(dtype=object).ravel(order="F"))
    values = _scores(flat, [str(c) for c in roles.others], rows, ctx).reshape(k, len(rows))
    cube = np.full((k, n, m), np.nan)
    cube[:, s_codes, i_codes] = values
    matrices = {}
    for code, measure in enumerate(measure_names):
        if measure in matrices:  # two headers with one NFC form
            ctx.fail("duplicate-column", f"columns {roles.others[measure_names.index(measure)]!r} and "
                     f"{roles.others[code]!r} are the same name in different Unicode forms; rename one",
                     column=str(roles.others[code]))
        matrices[measure] = cube[code]
    parsed = _Parsed("wide", [str(s) for s in s_labels], [str(i) for i in i_labels], matrices, {}, {},
                     list(measure_names))
    parsed.attributes = _attributes(frame, roles, s_codes, parsed.systems, rows, ctx)
    if text_columns:
        parsed.texts = _texts(frame, text_columns, systems, inputs, parsed, rows, ctx)
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
    for column in columns:
        if _INVISIBLE.search(column):
            ctx.fail("bad-name", _invisible_name("column", column),
                     where="line 1" if ctx.row_word == "line" else None, column=column)
    columns = [unicodedata.normalize("NFC", c) for c in columns]
    frame.columns = columns
    _check_duplicate_columns(columns, ctx)
    roles = _roles(columns)
    for column, why in roles.ignored.items():
        ctx.notes.append(f"the column {column!r} is not read: {why}")
    if detect_layout(columns) == "long":
        return _from_long(frame, rows, roles, ctx)
    return _from_wide(frame, rows, roles, ctx)
