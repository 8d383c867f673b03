"""Read a user's pairwise-verdict file (long CSV/TSV or JSON Lines, optionally gzipped) into :class:`PairwiseData`.

One row (or JSON object) per verdict, columns matched case-insensitively with surrounding whitespace ignored:

* required: ``item`` (aliases ``item_id``, ``pair_id``, ``id``), ``system_a`` and ``system_b`` (the systems that
  wrote outputs A and B; may be empty when unknown), ``rater`` (``rater_id``, ``judge``, ``annotator``,
  ``annotator_id``) and ``verdict`` (``winner``, ``label``, ``preference``);
* optional: ``order`` (``original``/``swapped``; also ``ab``/``ba``, ``a-first``/``b-first``, ``0``/``1``,
  ``false``/``true`` as in "swapped?"; empty: original), ``score_a`` and ``score_b`` (a rater's scores of the
  two outputs), ``kind`` (the rater's: ``human``, ``gold`` or ``judge``), ``pair_set``, the texts ``input``,
  ``output_a``, ``output_b``, and item attributes ``attr.<name>`` (or ``attr:<name>``).

A **verdict** is in the item's own numbering whatever the order it was given in: ``A``, ``B`` or ``tie``
(case-insensitive; ``a>b``/``b>a``, ``draw`` and ``equal`` are accepted too). Anything else (an empty cell,
``invalid``, ``garbage``, an unparsed reply) is kept as an **invalid** verdict, counted, and named in a note with
the values found: never dropped. Without a ``kind`` column, a rater named ``gold``, ``label`` or ``reference`` is
the gold label, one whose name starts with ``human``, ``annotator``, ``worker``, ``expert`` or ``crowd`` a human,
any other a judge; a note lists how each rater was classified. An item's systems, pair set, texts and attributes
must be the same on all its rows; a (item, rater, order) given twice is an error, as are scores that differ
between a rater's two orders.

Validation, messages and limits are those of score uploads (:mod:`metaeval_core.data.upload`): the same bytes,
gzip, encoding and name checks (NFC, control and invisible characters, length), ``max_rows``, ``max_bytes``,
``max_systems``; raters count against ``max_measures`` and items x raters x 2 against ``max_cells``. Every
problem is an :class:`~metaeval_core.data.upload.UploadError` naming the file, the line and the column.

References: docs/methods.md sec. 18.10 and sec. 17 (upload validation).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from metaeval_core.data.upload.csv_reader import _ID_COLUMNS, _parse_csv
from metaeval_core.data.upload.jsonl_reader import _DuplicateKey, _fail_broken_line, _line_budget, _no_duplicate_keys
from metaeval_core.data.upload.limits import UploadLimits, _Context, _list_names, _show
from metaeval_core.data.upload.names import name_codes
from metaeval_core.data.upload.reader import _dataset_id
from metaeval_core.data.upload.source import _check_request, _decode, _read_content
from metaeval_core.data.upload.tables import _check_cells, _check_count, _scores
from metaeval_core.judges.model import A, B, INVALID, MISSING, ORDERS, TIE, VERDICTS, PairwiseData, Rater

_ROLES: dict[str, tuple[str, ...]] = {
    "item": ("item", "item_id", "pair_id", "id"),
    "system_a": ("system_a", "model_a"),
    "system_b": ("system_b", "model_b"),
    "rater": ("rater", "rater_id", "judge", "annotator", "annotator_id"),
    "verdict": ("verdict", "winner", "label", "preference"),
    "order": ("order", "presentation_order", "swap", "swapped"),
    "score_a": ("score_a",),
    "score_b": ("score_b",),
    "kind": ("kind", "rater_kind"),
    "pair_set": ("pair_set", "subset", "split"),
    "input": ("input", "instruction", "prompt"),
    "output_a": ("output_a", "response_a"),
    "output_b": ("output_b", "response_b"),
}
_REQUIRED = ("item", "system_a", "system_b", "rater", "verdict")
_VERDICT_WORDS: dict[str, int] = {"a": A, "b": B, "tie": TIE, "a>b": A, "b>a": B, "draw": TIE, "equal": TIE}
_ORDER_WORDS: dict[str, int] = {"": 0, "original": 0, "ab": 0, "a-first": 0, "0": 0, "false": 0,
                                "swapped": 1, "ba": 1, "b-first": 1, "1": 1, "true": 1}
_GOLD_NAMES = ("gold", "label", "reference")
_HUMAN_PREFIXES = ("human", "annotator", "worker", "expert", "crowd")
_ATTR_PREFIXES = ("attr.", "attr:")
_DEFAULT_PAIR_SET = "all"


def _parse_jsonl_table(text: str, ctx: _Context) -> tuple[pd.DataFrame, np.ndarray]:
    """JSON Lines of flat objects -> a frame of text cells ('' for null or absent) and each row's line number.

    The score reader's bounds, checked before anything is built: the lines counted before parsing, each line's
    values and keys counted before ``json.loads`` (:func:`~metaeval_core.data.upload.jsonl_reader._line_budget`),
    the distinct keys bounded like a CSV header's columns, and the cells (lines x keys) like a CSV's (each costs
    a CSV at least one byte). Cells are stored per column, one shared string object per distinct value."""
    if text.count("\n") >= ctx.limits.max_rows:  # cheap upper bound first; blank lines do not count
        lines_given = sum(1 for line in text.split("\n") if line.strip())
        if lines_given > ctx.limits.max_rows:
            ctx.fail("too-many-rows", f"{lines_given:,} lines; the limit is {ctx.limits.max_rows:,} (a deployment "
                     "can change it with METAEVAL_MAX_UPLOAD_ROWS)")
    max_keys = ctx.limits.max_measures + _ID_COLUMNS
    columns: dict[str, list] = {}
    shared: dict[str, str] = {}
    lines: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            continue
        _line_budget(line, number, len(lines), ctx)
        try:
            record = json.loads(line, object_pairs_hook=_no_duplicate_keys)
        except _DuplicateKey as error:
            ctx.fail("duplicate-column", f"the key {error.key!r} appears twice in one object; give each key once",
                     where=f"line {number}", column=error.key)
        except (ValueError, RecursionError) as error:
            _fail_broken_line(line, number, not lines, error, ctx)
        if not isinstance(record, dict):
            ctx.fail("broken-jsonl", f"each line must be a JSON object; got {type(record).__name__}",
                     where=f"line {number}")
        k = len(lines)
        for key, value in record.items():
            if isinstance(value, (dict, list)):
                ctx.fail("broken-jsonl", f"the value of {key!r} must be a string or a number; got "
                         f"{_show(json.dumps(value))}", where=f"line {number}", column=key)
            column = columns.get(key)
            if column is None:
                if len(columns) >= max_keys:
                    ctx.fail("too-many-measures", f"more than {max_keys:,} distinct keys, the limit (as a CSV "
                             "header's columns)", where=f"line {number}", column=key)
                if (k + 1) * (len(columns) + 1) > ctx.limits.max_bytes:
                    ctx.fail("too-many-cells", f"{k + 1:,} lines x {len(columns) + 1:,} distinct keys; the limit "
                             f"is {ctx.limits.max_bytes:,} cells (as a CSV of the same shape)", where=f"line {number}",
                             column=key)
                column = columns[key] = [""] * k
            text_value = "" if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
            column.append(shared.setdefault(text_value, text_value))
        lines.append(number)
        if len(record) < len(columns):
            for column in columns.values():
                if len(column) == k:
                    column.append("")
        if len(lines) * len(columns) > ctx.limits.max_bytes:
            ctx.fail("too-many-cells", f"{len(lines):,} lines x {len(columns):,} distinct keys; the limit is "
                     f"{ctx.limits.max_bytes:,} cells (as a CSV of the same shape)", where=f"line {number}")
    if not lines:
        ctx.fail("empty-file", "the file holds no JSON object")
    frame = pd.DataFrame({key: pd.Series(values, dtype=object) for key, values in columns.items()})
    return frame, np.asarray(lines)


def _roles(columns: Sequence[str], ctx: _Context) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """role -> column, attribute -> column, and the columns not read."""
    seen: dict[str, str] = {}
    for column in columns:
        key = str(column).strip().lower()
        if key in seen:
            ctx.fail("duplicate-column", f"the columns {seen[key]!r} and {column!r} have the same name",
                     where="line 1", column=str(column))
        seen[key] = column
    roles: dict[str, str] = {}
    for role, aliases in _ROLES.items():
        for alias in aliases:
            if alias in seen and role not in roles and seen[alias] not in roles.values():
                roles[role] = seen[alias]
    attributes = {seen[k][len(p):].strip(): seen[k] for k in seen for p in _ATTR_PREFIXES if k.startswith(p)}
    missing = [r for r in _REQUIRED if r not in roles]
    if missing:
        role = missing[0]
        ctx.fail("missing-column", f"no {role!r} column (also accepted: {', '.join(_ROLES[role][1:]) or 'none'}); "
                 f"a verdict file needs the columns item, system_a, system_b, rater, verdict; columns found: "
                 f"{_list_names(columns)}", column=role)
    used = set(roles.values()) | set(attributes.values())
    return roles, attributes, [c for c in columns if c not in used]


def _constant(values: pd.Series, codes: np.ndarray, n: int, what: str, column: str, rows: np.ndarray,
              ctx: _Context) -> tuple[str, ...]:
    """One value per item (its first non-empty), refusing an item whose rows disagree."""
    frame = pd.DataFrame({"k": codes, "v": values.to_numpy(), "r": rows})
    frame = frame[frame["v"] != ""].drop_duplicates(["k", "v"])
    clash = frame["k"].duplicated(keep="first").to_numpy()
    if clash.any():
        second = frame.iloc[int(np.argmax(clash))]
        first = frame[frame["k"] == second["k"]].iloc[0]
        ctx.fail("inconsistent-attribute", f"the {what} of an item differs between its rows: {_show(first['v'])} "
                 f"on line {first['r']} and {_show(second['v'])} here", where=ctx.at(second["r"]), column=column)
    out = [""] * n
    for k, v in zip(frame["k"].tolist(), frame["v"].tolist()):
        out[k] = v
    return tuple(out)


def _constant_names(values: pd.Series, item_codes: np.ndarray, n: int, what: str, column: str, rows: np.ndarray,
                    ctx: _Context) -> tuple[str, ...]:
    """:func:`_constant` for a name column (a system), checked as names; compared by code, one string per item."""
    codes, names = name_codes(values, column, what.split()[0], rows, ctx, allow_empty=True)
    shown = np.asarray(list(names) + [""], dtype=object)
    empty = codes == len(names)
    if "" in names:
        empty |= codes == names.index("")
    pairs = pd.DataFrame({"k": item_codes[~empty], "v": codes[~empty], "r": rows[~empty]}).drop_duplicates(["k", "v"])
    clash = pairs["k"].duplicated(keep="first").to_numpy()
    if clash.any():
        second = pairs.iloc[int(np.argmax(clash))]
        first = pairs[pairs["k"] == second["k"]].iloc[0]
        ctx.fail("inconsistent-attribute", f"the {what} of an item differs between its rows: "
                 f"{_show(shown[first['v']])} on line {first['r']} and {_show(shown[second['v']])} here",
                 where=ctx.at(second["r"]), column=column)
    per_item = np.full(n, len(names), dtype=np.int64)
    per_item[pairs["k"].to_numpy()] = pairs["v"].to_numpy()
    return tuple(shown[per_item].tolist())


def _rater_kinds(raters: tuple[str, ...], kind_values: pd.Series | None, rater_codes: np.ndarray,
                 rows: np.ndarray, column: str | None, ctx: _Context) -> list[str]:
    if kind_values is not None:
        text = kind_values.astype(str).str.strip().str.lower()
        bad = ~text.isin(["human", "gold", "judge", ""])
        if bad.any():
            k = int(np.argmax(bad.to_numpy()))
            ctx.fail("unknown-kind", f"the rater kind {_show(kind_values.iloc[k])} is not human, gold or judge",
                     where=ctx.at(rows[k]), column=column)
        declared = _constant(text, rater_codes, len(raters), "kind of a rater", column, rows, ctx)
        if all(declared):
            return list(declared)
        k = declared.index("")
        ctx.fail("missing-value", f"the rater {raters[k]!r} has no kind on any row; give human, gold or judge",
                 column=column)
    kinds = []
    for name in raters:
        low = name.lower()
        kinds.append("gold" if low in _GOLD_NAMES else "human" if low.startswith(_HUMAN_PREFIXES) else "judge")
    return kinds


# The reference keywords of every judges statistic (``reference=``, ``rater=``): a rater of that name would be
# shadowed by the keyword (``'gold'`` may name the gold rater itself, which is what the keyword resolves to).
_REFERENCE_KEYWORDS = ("auto", "majority", "gold")


def _check_rater_names(raters: tuple[str, ...], kinds: list[str], rater_codes: np.ndarray, rows: np.ndarray,
                       column: str, kind_column: str | None, ctx: _Context) -> None:
    """Refuse a rater named like a reference keyword, and several gold raters (which one is *the* gold?)."""
    for k, (name, kind) in enumerate(zip(raters, kinds)):
        if name.lower() in _REFERENCE_KEYWORDS and not (name.lower() == "gold" and kind == "gold"):
            ctx.fail("bad-name", f"the rater name {name!r} is a reference keyword ({', '.join(_REFERENCE_KEYWORDS)}: "
                     "the gold label or the human majority), so it could not be chosen by name; rename the rater",
                     where=ctx.at(rows[int(np.argmax(rater_codes == k))]), column=column)
    golds = [name for name, kind in zip(raters, kinds) if kind == "gold"]
    if len(golds) > 1:
        ctx.fail("inconsistent-kind", f"{len(golds)} raters are gold labels ({_list_names(golds, 6)}): a dataset has "
                 "one gold label, the reference of every statistic; keep one as gold and give the others the kind "
                 "human (a 'kind' column) so they count in the human majority", column=kind_column or column)


def _people_in_one_slot(verdicts: np.ndarray, raters: tuple[str, ...], kinds: list[str]) -> list[str]:
    """A person's (human or gold) verdict counts in whichever order it was shown: one given only in the swapped
    order moves to the original slot, which the references (majority, gold, ceiling) read. In place."""
    notes, both = [], []
    for r, kind in enumerate(kinds):
        if kind == "judge":
            continue
        v = verdicts[:, r, :]
        moved = (v[:, 0] == MISSING) & (v[:, 1] != MISSING)
        v[moved, 0] = v[moved, 1]
        v[moved, 1] = MISSING
        if (v[:, 1] != MISSING).any():
            both.append(raters[r])
    if both:
        notes.append(f"people with verdicts in both orders on some items: {_list_names(both, 6)}; their verdict in "
                     "the original order is the one the references (majority, gold, ceiling) count.")
    return notes


def read_verdict_file(
    source: str | os.PathLike | bytes | Any,
    *,
    name: str | None = None,
    format: str | None = None,
    limits: UploadLimits | None = None,
    dataset_id: str | None = None,
) -> PairwiseData:
    """Read a long file of pairwise verdicts (see the module docstring for the columns and rules).

    Parameters
    ----------
    source : path, bytes or binary file-like
        As :func:`metaeval_core.data.upload.read_user_file` (a ``str`` is a path).
    name : str, optional
        The display name (messages, format from the extension).
    format : {'csv', 'jsonl'}, optional
        Overrides the extension (Parquet is refused: export it as CSV).
    limits : UploadLimits, optional
        Default: ``UploadLimits()``.
    dataset_id : str, optional
        Default ``upload-<file stem>``.

    Returns
    -------
    PairwiseData
        Items, systems and raters in order of first appearance; one pair set per ``pair_set`` value (or
        ``'all'``); ``version`` a hash of the file's bytes; ``notes`` on rater kinds, invalid verdicts and
        columns not read.

    Raises
    ------
    UploadError
        With a ``kind`` from :data:`metaeval_core.data.upload.UPLOAD_ERROR_KINDS`, naming file, line and column.

    References
    ----------
    docs/methods.md sec. 18.10 and sec. 17.
    """
    limits = UploadLimits() if limits is None else limits
    display, fmt, _ = _check_request(source, name, format, None, limits, dataset_id)
    ctx = _Context(file=display, limits=limits)
    raw = _read_content(source, fmt, ctx)
    digest = hashlib.sha256(raw).hexdigest()[:16]
    if ctx.fmt == "parquet":
        ctx.fail("unknown-format", "a verdict file is CSV/TSV or JSON Lines (one verdict per row); export the "
                 "Parquet table as CSV")
    text = _decode(raw, ctx)
    if not text.strip():
        ctx.fail("empty-file", "the file holds only whitespace")
    frame, rows = _parse_jsonl_table(text, ctx) if ctx.fmt == "jsonl" else _parse_csv(text, ctx, cells=object)
    if len(frame) > limits.max_rows:
        ctx.fail("too-many-rows", f"more than {limits.max_rows:,} data rows, the limit")
    roles, attr_columns, unread = _roles(list(frame.columns), ctx)
    col = roles.get
    # names as codes per row (never a million rows of text rebuilt and hashed again); no name is missing here
    item_codes, items = name_codes(frame[col("item")], col("item"), "item", rows, ctx)
    rater_codes, raters = name_codes(frame[col("rater")], col("rater"), "rater", rows, ctx)
    n, r = len(items), len(raters)
    _check_count(r, limits.max_measures, "too-many-measures", "raters", ctx, "METAEVAL_MAX_UPLOAD_MEASURES")
    _check_cells(n * r * 2, ctx, f"{n:,} items x {r:,} raters x 2 orders")
    system_a = _constant_names(frame[col("system_a")], item_codes, n, "system A", col("system_a"), rows, ctx)
    system_b = _constant_names(frame[col("system_b")], item_codes, n, "system B", col("system_b"), rows, ctx)
    same = [k for k in range(n) if system_a[k] and system_a[k] == system_b[k]]
    if same:
        k = same[0]
        line = rows[int(np.argmax(item_codes == k))]
        ctx.fail("inconsistent-attribute", f"item {items[k]!r} compares system {system_a[k]!r} with itself "
                 f"({len(same):,} such item(s)): a verdict between two outputs of one system says nothing about "
                 "systems; leave system_a/system_b empty for such items or drop them", where=ctx.at(line),
                 column=col("system_b"))
    systems = {s for s in system_a + system_b if s}
    _check_count(len(systems), limits.max_systems, "too-many-systems", "systems", ctx, "METAEVAL_MAX_UPLOAD_SYSTEMS")
    # orders
    if col("order"):
        order_text = frame[col("order")].astype(str).str.strip().str.lower()
        unknown = ~order_text.isin(list(_ORDER_WORDS))
        if unknown.any():
            k = int(np.argmax(unknown.to_numpy()))
            ctx.fail("unknown-kind", f"the order {_show(frame[col('order')].iloc[k])} is not original or swapped "
                     "(also ab/ba, a-first/b-first, 0/1, false/true)", where=ctx.at(rows[k]), column=col("order"))
        order_codes = order_text.map(_ORDER_WORDS).to_numpy(dtype=np.int64)
    else:
        order_codes = np.zeros(len(frame), dtype=np.int64)
    # duplicates
    key = (item_codes.astype(np.int64) * r + rater_codes) * 2 + order_codes
    dup = pd.Series(key).duplicated(keep="first").to_numpy()
    if dup.any():
        k = int(np.argmax(dup))
        first = int(np.argmax(key == key[k]))
        ctx.fail("duplicate-cell", f"a second verdict of rater {raters[rater_codes[k]]!r} on item "
                 f"{items[item_codes[k]]!r} in the {ORDERS[order_codes[k]]} order (the first is on line "
                 f"{rows[first]})", where=ctx.at(rows[k]))
    # verdicts: unrecognised values are invalid verdicts, kept and named
    # each distinct written verdict read once (a million rows hold a handful of values)
    written_codes, written_values = pd.factorize(frame[col("verdict")], use_na_sentinel=False)
    shown = [str(v).strip() for v in np.asarray(written_values, dtype=object).tolist()]
    code_of = np.array([_VERDICT_WORDS.get(v.lower(), -1) for v in shown] + [-1], dtype=np.int64)
    codes = pd.Series(code_of[written_codes]).replace(-1, np.nan)
    written = pd.Series(np.asarray(shown + [""], dtype=object)[written_codes])
    invalid = codes.isna().to_numpy()
    verdicts = np.full((n, r, 2), MISSING, dtype=np.int8)
    verdicts[item_codes, rater_codes, order_codes] = np.where(invalid, INVALID, codes.fillna(0).to_numpy()).astype(
        np.int8)
    notes: list[str] = []
    if invalid.any():
        values = pd.Series(written[invalid]).value_counts()
        shown = ", ".join(f"{_show(v if v else '(empty)')} x {c}" for v, c in list(values.items())[:6])
        notes.append(f"{int(invalid.sum())} verdict(s) are neither A, B nor tie and are kept as invalid "
                     f"({shown}{' ...' if len(values) > 6 else ''}); each statistic says how it counts them.")
    # scores
    scores = None
    if col("score_a") or col("score_b"):
        if not (col("score_a") and col("score_b")):
            ctx.fail("missing-column", "score_a and score_b come together: give both or neither",
                     column=col("score_a") or col("score_b"))
        values_a = _scores(frame[col("score_a")], col("score_a"), rows, ctx)
        values_b = _scores(frame[col("score_b")], col("score_b"), rows, ctx)
        scores = np.full((n, r, 2), np.nan)
        cell = item_codes.astype(np.int64) * r + rater_codes
        for side, values in ((0, values_a), (1, values_b)):
            has = ~np.isnan(values)
            distinct = pd.DataFrame({"c": cell[has], "v": values[has], "r": rows[has]}).drop_duplicates(["c", "v"])
            clash = distinct["c"].duplicated(keep="first").to_numpy()
            if clash.any():
                second = distinct.iloc[int(np.argmax(clash))]
                first = distinct[distinct["c"] == second["c"]].iloc[0]
                rater, item = raters[int(second["c"]) % r], items[int(second["c"]) // r]
                column = col("score_a" if side == 0 else "score_b")
                ctx.fail("duplicate-cell", f"rater {rater!r} scores output {'AB'[side]} of item {item!r} "
                         f"{first['v']:g} on line {int(first['r'])} and {second['v']:g} here: give a rater's scores "
                         "once (or the same in both orders)", where=ctx.at(int(second["r"])), column=column)
            scores[item_codes[has], rater_codes[has], side] = values[has]
        if np.isnan(scores).all():
            scores = None
    # raters' kinds
    kinds = _rater_kinds(raters, frame[col("kind")] if col("kind") else None, rater_codes, rows, col("kind"), ctx)
    _check_rater_names(raters, kinds, rater_codes, rows, col("rater"), col("kind"), ctx)
    notes.extend(_people_in_one_slot(verdicts, raters, kinds))
    if not any(k in ("human", "gold") for k in kinds):
        ctx.fail("no-human-measure", f"no rater is a person or a gold label (raters: {_list_names(raters)}); name "
                 "them (e.g. human-1, gold) or add a 'kind' column with human, gold or judge")
    if "judge" not in kinds:
        ctx.fail("no-metric-measure", f"every rater is a person or a gold label (raters: {_list_names(raters)}): "
                 "there is no judge to evaluate; add a 'kind' column with judge for the judges")
    if n < 2:
        ctx.fail("too-few-inputs", f"only {n} item; at least 2 are needed")
    if not col("kind"):
        by_kind = {k: [name for name, kk in zip(raters, kinds) if kk == k] for k in ("gold", "human", "judge")}
        notes.append("no 'kind' column: rater kinds read from their names: " + "; ".join(
            f"{k}: {_list_names(v, 6)}" for k, v in by_kind.items() if v) + ".")
    # items' other facts
    pair_set_values = (_constant(frame[col("pair_set")].astype(str).str.strip(), item_codes, n, "pair set",
                                 col("pair_set"), rows, ctx) if col("pair_set") else ("",) * n)
    pair_set_values = tuple(p or _DEFAULT_PAIR_SET for p in pair_set_values)
    set_codes, pair_sets = pd.factorize(pd.Series(pair_set_values))
    texts = {role: _constant(frame[col(role)].astype(str), item_codes, n, role.replace("_", " "), col(role), rows, ctx)
             if col(role) else () for role in ("input", "output_a", "output_b")}
    attributes = {name: _constant(frame[c].astype(str).str.strip(), item_codes, n, f"attribute {name!r}", c, rows, ctx)
                  for name, c in attr_columns.items()}
    if unread:
        notes.append(f"column(s) not read: {_list_names(unread)}.")
    counts = np.bincount(verdicts[verdicts != MISSING].ravel().astype(np.int64), minlength=4)
    description = (f"Uploaded file {display!r} ({ctx.fmt}): {n} items, {len(systems)} systems, {r} raters "
                   f"({kinds.count('human')} human, {kinds.count('gold')} gold, {kinds.count('judge')} judges); "
                   + ", ".join(f"{int(c)} {name}" for c, name in zip(counts, VERDICTS)) + ".")
    return PairwiseData(
        id=_dataset_id(ctx, dataset_id), items=items, pair_sets=tuple(str(p) for p in pair_sets),
        pair_set=set_codes, raters=tuple(Rater(name, kind) for name, kind in zip(raters, kinds)), verdicts=verdicts,
        scores=scores, inputs=texts["input"], output_a=texts["output_a"], output_b=texts["output_b"],
        system_a=system_a, system_b=system_b, attributes=attributes, title=display, description=description,
        version=digest, notes=tuple(notes + ctx.notes),
    )


def pairwise_to_long_frame(data: PairwiseData, *, texts: bool = True) -> pd.DataFrame:
    """The way back: one row per given verdict, in the columns :func:`read_verdict_file` reads.

    ``item, system_a, system_b, rater, kind, verdict, order`` (+ ``score_a, score_b`` when the dataset has
    scores, ``pair_set``, ``input, output_a, output_b`` with ``texts``, ``attr.<name>``); reading it back gives
    the same items, raters, verdicts (invalid ones as ``invalid``) and scores.

    References
    ----------
    docs/methods.md sec. 18.10.
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData; got {type(data).__name__}")
    item, rater, order = np.nonzero(data.verdicts != MISSING)
    frame = pd.DataFrame({
        "item": np.asarray(data.items, dtype=object)[item],
        "system_a": np.asarray(data.system_a, dtype=object)[item],
        "system_b": np.asarray(data.system_b, dtype=object)[item],
        "rater": np.asarray(data.rater_ids, dtype=object)[rater],
        "kind": np.asarray([r.kind for r in data.raters], dtype=object)[rater],
        "verdict": np.asarray(VERDICTS, dtype=object)[data.verdicts[item, rater, order]],
        "order": np.asarray(ORDERS, dtype=object)[order],
        "pair_set": np.asarray(data.pair_sets, dtype=object)[data.pair_set[item]],
    })
    if data.scores is not None:
        frame["score_a"] = data.scores[item, rater, 0]
        frame["score_b"] = data.scores[item, rater, 1]
    if texts and data.has_texts:
        for name, values in (("input", data.inputs), ("output_a", data.output_a), ("output_b", data.output_b)):
            frame[name] = np.asarray(values, dtype=object)[item]
    for name, values in data.attributes.items():
        frame[f"attr.{name}"] = np.asarray(values, dtype=object)[item]
    return frame


@dataclass(frozen=True)
class VerdictReport:
    """What a pairwise dataset holds and what looks wrong, before any analysis (the upload report's analogue).

    ``rows`` are one dict per rater (kind, orders, items covered, A/B/tie/invalid counts); ``warnings`` name
    raters with many invalid verdicts, judges seen in one order only, items without a reference, raters that
    cover few items.
    """

    dataset_id: str
    n_items: int
    pair_sets: tuple[tuple[str, int], ...]
    rows: tuple[dict, ...]
    notes: tuple[str, ...]
    warnings: tuple[str, ...]

    def lines(self) -> list[str]:
        out = [f"{self.n_items} items in {len(self.pair_sets)} pair set(s): "
               + ", ".join(f"{name} ({count})" for name, count in self.pair_sets)]
        for row in self.rows:
            out.append(f"{row['kind']} {row['rater']!r}: {row['items']} items, orders {'+'.join(row['orders'])}; "
                       f"A {row['A']}, B {row['B']}, tie {row['tie']}, invalid {row['invalid']}")
        out.extend(f"note: {note}" for note in self.notes)
        out.extend(f"warning: {w}" for w in self.warnings)
        if not self.warnings:
            out.append("no warnings")
        return out


def verdict_report(data: PairwiseData, *, invalid_share: float = 0.1, coverage_share: float = 0.5) -> VerdictReport:
    """Check a pairwise dataset: per-rater counts, invalid verdicts, one-order judges, items with no reference.

    References
    ----------
    docs/methods.md sec. 18.10.
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData; got {type(data).__name__}")
    rows, warnings = [], []
    for rater in data.raters:
        v = data.verdicts[:, data.rater_index(rater.id), :]
        given = v != MISSING
        row = {"rater": rater.id, "kind": rater.kind, "orders": list(data.orders_of(rater.id)),
               "items": int(given.any(axis=1).sum()),
               **{name: int((v == code).sum()) for code, name in enumerate(VERDICTS)}}
        rows.append(row)
        total = int(given.sum())
        if total and row["invalid"] / total > invalid_share:
            warnings.append(f"{rater.id!r}: {row['invalid']} of its {total} verdicts are invalid "
                            f"({row['invalid'] / total:.0%})")
        if row["items"] < coverage_share * data.n_items:
            warnings.append(f"{rater.id!r} judged {row['items']} of the {data.n_items} items")
    one_order = [r.id for r in data.raters if r.kind == "judge" and len(data.orders_of(r.id)) == 1]
    if one_order and len(one_order) < len(data.judges):
        warnings.append(f"{len(one_order)} judge(s) have verdicts in one order only (positional consistency "
                        f"undefined for them): {_list_names(one_order, 6)}")
    people = [data.rater_index(h) for h in data.humans + data.golds]
    no_reference = int((data.verdicts[:, people, 0] == MISSING).all(axis=1).sum()) if people else data.n_items
    if no_reference:
        warnings.append(f"{no_reference} item(s) have no human or gold verdict: they count in no agreement")
    pair_sets = tuple((name, int((data.pair_set == k).sum())) for k, name in enumerate(data.pair_sets))
    return VerdictReport(dataset_id=data.id, n_items=data.n_items, pair_sets=pair_sets, rows=tuple(rows),
                         notes=data.notes, warnings=tuple(warnings))


def is_verdict_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a file whose header names every required verdict column (see the module docstring).

    Reads the first line only (gunzipped if gzipped): a CSV/TSV header, or the keys of a JSON Lines file's first
    object. Used to route a verdict file to the pairwise readers; any file that cannot be sniffed is ``False``.

    References: docs/methods.md sec. 18.10.
    """
    import csv
    import gzip
    import io
    import stat
    import zlib

    try:
        # O_NONBLOCK and a regular-file check first: a FIFO or a device is not waited on (the score reader then
        # names the problem)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return False
            head = handle.read(1 << 16)
            if head[:2] == b"\x1f\x8b":
                handle.seek(0)
                with gzip.GzipFile(fileobj=handle) as unzipped:
                    head = unzipped.read(1 << 16)
        line = io.BytesIO(head).readline().decode("utf-8-sig", errors="replace").strip()
    except (OSError, EOFError, zlib.error):  # a damaged gzip stream: the score reader names the problem
        return False
    if line.startswith("{"):
        try:
            record = json.loads(line)
        except ValueError:
            return False
        columns = list(record) if isinstance(record, dict) else []
    else:
        # the separator the CSV reader would choose: the most frequent of comma, tab and semicolon in the header
        counts = {sep: line.count(sep) for sep in (",", "\t", ";")}
        sep = max(counts, key=lambda k: (counts[k], k == ","))
        try:
            columns = next(csv.reader([line], delimiter=sep), [])
        except csv.Error:
            return False
    names = {str(c).strip().lower() for c in columns}
    return all(any(alias in names for alias in _ROLES[role]) for role in _REQUIRED)


__all__ = ["VerdictReport", "is_verdict_file", "pairwise_to_long_frame", "read_verdict_file", "verdict_report"]
