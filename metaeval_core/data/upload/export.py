"""The way back: a dataset as a long table that read_user_file reads back the same."""

from __future__ import annotations


import re
import unicodedata

import numpy as np
import pandas as pd

from metaeval_core._checks import check_bool
from metaeval_core.data.checks import check_dataset
from metaeval_core.data.dataset import Dataset, Measure
from metaeval_core.data.upload.limits import _CONTROL, _INVISIBLE, _show
from metaeval_core.data.upload.names import _KIND_COLUMN


# -- the way back: a dataset as a long table ---------------------------------------------
_EXPORT_ANNOTATOR = "annotator-{}"  # annotator a (0-based) is written as annotator-<a+1>


def _unreadable(name: str, *, allow_empty: bool = False) -> str | None:
    """Why the upload would not read ``name`` back unchanged (None when it would)."""
    if not name:
        return None if allow_empty else "is empty"
    if name != name.strip():
        return "has surrounding whitespace, which the upload strips"
    if _CONTROL.search(name):
        return "contains a control character, which the upload refuses"
    if _INVISIBLE.search(name):
        return "contains an invisible character, which the upload refuses"
    if unicodedata.normalize("NFC", name) != name:
        return "is not in the composed Unicode form (NFC) the upload reads names in"
    return None


def _attribute_column(attribute: str) -> str:
    return "system_type" if attribute == "type" else f"attr.{attribute}"


def _check_long_export(dataset: object, include_missing: object, caller: str) -> Dataset:
    """Validate the arguments of the export functions; refuse a dataset the upload could not read back."""
    dataset = check_dataset(dataset)
    check_bool(include_missing, "include_missing")
    if not dataset.systems or not dataset.inputs or not dataset.measures:
        raise ValueError(f"{caller}: dataset {dataset.id!r} has {dataset.n_systems} system(s), {dataset.n_inputs} "
                         f"input(s) and {len(dataset.measures)} measure(s); a long table needs at least one of each")
    groups = (("system", dataset.systems), ("input", dataset.inputs), ("measure", tuple(dataset.measures)),
              ("system attribute", tuple(dataset.system_attributes)))
    for what, names in groups:
        for name in names:
            problem = _unreadable(name)
            if problem:
                raise ValueError(f"{caller}: the {what} name {_show(name)} {problem}; the file would not read back "
                                 f"to the same dataset (rename it first)")
    columns: dict[str, str] = {}
    for attribute, values in dataset.system_attributes.items():
        column = _attribute_column(attribute)
        if column.lower() in columns:
            raise ValueError(f"{caller}: the system attributes {columns[column.lower()]!r} and {attribute!r} would "
                             f"share the column {column!r} (names are case-insensitive in a file); rename one")
        columns[column.lower()] = attribute
        for system, value in zip(dataset.systems, values):
            problem = _unreadable(value, allow_empty=True)
            if problem:
                raise ValueError(f"{caller}: the value {_show(value)} of the system attribute {attribute!r} "
                                 f"(system {system!r}) {problem}; the file would not read back the same value")
    return dataset


def _annotator_tensor(measure: Measure) -> np.ndarray | None:
    """The per-annotator scores to write, when the upload would rebuild exactly ``measure.scores`` from them."""
    if measure.annotators is None:
        return None
    rebuilt = Measure.from_annotators(measure.name, measure.kind, measure.annotators).scores
    return measure.annotators if np.array_equal(rebuilt, measure.scores, equal_nan=True) else None


def _first_seen_in_order(codes: np.ndarray, n: int) -> bool:
    """Whether codes 0..n-1 all occur and first occur in that order."""
    seen = pd.unique(codes)
    return len(seen) == n and bool((seen == np.arange(n)).all())


def dataset_to_long_frame(dataset: Dataset, *, include_missing: bool = False) -> pd.DataFrame:
    """Write a dataset as a long table that :func:`read_user_file` reads back to the same dataset.

    Parameters
    ----------
    dataset : Dataset
        Any dataset (built-in, uploaded, modified on the what-if page).
    include_missing : bool, default False
        Also write a row, with an empty score, for every missing cell (a dense table of
        ``systems x inputs x measures`` rows). By default only scored cells are written,
        plus, when needed, a few rows with an empty score so that every system, input and
        measure appears, in the dataset's order.

    Returns
    -------
    pandas.DataFrame
        One row per score, in the long layout: ``system``, ``input``, ``measure`` (str) and
        ``score`` (float64, NaN where missing); an ``annotator`` column (``annotator-1``,
        ``annotator-2`` ...; empty for plain measures) when some measure keeps per-annotator
        scores, which are then written one row per annotator for every scored cell, empty
        where that annotator gave no score; always a ``kind`` column (``human`` or ``metric``,
        the measure's kind); a ``system_type`` column for the system attribute
        ``type`` and an ``attr.<name>`` column for every other attribute. Rows are in
        (system, input, measure, annotator) order, after the order-keeping rows if any.
        Write it with ``to_csv(index=False)`` or ``to_parquet(index=False)``.

    Raises
    ------
    TypeError
        When ``dataset`` is not a :class:`Dataset` or ``include_missing`` is not a bool.
    ValueError
        When the dataset has no system, input or measure, or holds a name the upload would
        not read back unchanged: empty, with surrounding whitespace or a control character
        (systems, inputs, measures, attribute names and values), or two attributes whose
        columns differ only by case.

    Notes
    -----
    Read back with :func:`read_user_file` (as CSV, TSV or Parquet), the table gives the same
    systems, inputs and measures in the same order, every score (NaN where missing; CSV
    floats are written with round-trip precision), the same per-annotator scores and system
    attributes. The judged inputs (those with a human score) and the unjudged pool follow
    from the scores. Human and metric measures come back from the ``kind`` column, whatever
    their names: nothing needs declaring (``human_measures=``). The dataset's texts (an upload's
    text columns) come back from the ``text``, ``source`` and ``reference`` columns (a text on
    the first row of its cell or input; a spreadsheet formula lead is quoted, as every cell).

    Not carried: the dataset's id, title, version label, citation, licence, description and
    notes (the upload names the dataset after the file), the texts of cells without a score,
    annotator names (annotators are numbered), and per-annotator scores whose NaN-ignoring
    mean is not exactly the measure's matrix (e.g. after an edit; the matrix is written).
    The upload's own rules still apply: at least 2 systems and 2 judged inputs, a human and
    a metric measure, no measure without any score, names within
    ``UploadLimits.max_name_length``, scores within +-``MAX_MAGNITUDE`` (1e150).
    """
    dataset = _check_long_export(dataset, include_missing, "dataset_to_long_frame")
    n, m, k = dataset.n_systems, dataset.n_inputs, len(dataset.measures)
    parts: dict[str, list[np.ndarray]] = {"s": [], "i": [], "k": [], "a": [], "v": [], "scored": []}
    for code, measure in enumerate(dataset.measures.values()):
        tensor = _annotator_tensor(measure)
        values = measure.scores[None] if tensor is None else tensor
        a, i, j = (axis.ravel() for axis in np.indices(values.shape))
        parts["s"].append(i)
        parts["i"].append(j)
        parts["k"].append(np.full(a.size, code))
        parts["a"].append(a if tensor is not None else np.full(a.size, -1))
        parts["v"].append(values.ravel())
        parts["scored"].append(~np.isnan(measure.scores)[i, j])  # an annotated cell: all its annotators
    s_codes, i_codes, k_codes, a_codes, values, scored = (np.concatenate(parts[key]) for key in parts)
    keep = np.ones(values.size, dtype=bool) if include_missing else scored
    order = np.lexsort((a_codes, k_codes, i_codes, s_codes))
    kept = order[keep[order]]
    in_order = [_first_seen_in_order(codes[kept], size) for codes, size in ((s_codes, n), (i_codes, m),
                                                                              (k_codes, k))]
    if not all(in_order):
        # The upload orders systems, inputs and measures by first appearance: lead with the cell (0, 0, 0) and,
        # for each axis out of order, the line of cells through it along that axis (written even when empty).
        lead = [np.zeros((1, 3), dtype=np.int64)]
        for axis, (fine, size) in enumerate(zip(in_order, (n, m, k))):
            if not fine and size > 1:
                line = np.zeros((size - 1, 3), dtype=np.int64)
                line[:, axis] = np.arange(1, size)
                lead.append(line)
        lead_cells = np.concatenate(lead)  # each line varies one axis, the others stay at 0
        lead_ids = (lead_cells[:, 0] * m + lead_cells[:, 1]) * k + lead_cells[:, 2]
        cells = (s_codes * m + i_codes) * k + k_codes
        by_id = np.argsort(lead_ids)
        position = np.clip(np.searchsorted(lead_ids[by_id], cells), 0, len(lead_ids) - 1)
        leading = lead_ids[by_id][position] == cells
        rank = np.where(leading, by_id[position] - len(lead_ids), 0)
        keep = keep | leading
        order = np.lexsort((a_codes, k_codes, i_codes, s_codes, rank))
        kept = order[keep[order]]
    s_kept, a_kept = s_codes[kept], a_codes[kept]
    frame = pd.DataFrame({
        "system": np.asarray(dataset.systems, dtype=object)[s_kept],
        "input": np.asarray(dataset.inputs, dtype=object)[i_codes[kept]],
        "measure": np.asarray(list(dataset.measures), dtype=object)[k_codes[kept]],
        "score": values[kept].astype(np.float64),
    })
    if (a_kept >= 0).any():
        labels = np.asarray([""] + [_EXPORT_ANNOTATOR.format(a + 1) for a in range(int(a_kept.max()) + 1)],
                            dtype=object)
        frame["annotator"] = labels[a_kept + 1]
    frame[_KIND_COLUMN] = np.asarray([x.kind for x in dataset.measures.values()], dtype=object)[k_codes[kept]]
    for attribute, attribute_values in dataset.system_attributes.items():
        frame[_attribute_column(attribute)] = np.asarray(attribute_values, dtype=object)[s_kept]
    if getattr(dataset, "texts", None) is not None:
        _add_texts(frame, dataset.texts)
    return frame


def _add_texts(frame: pd.DataFrame, texts) -> None:
    """The dataset's texts in the long layout's ``text``, ``source`` and ``reference`` columns: a cell's output on
    its first row, an input's source and reference on its first row, the other rows empty (the reader takes one
    text per cell or input). Columns without any text are left out."""
    row = {s: i for i, s in enumerate(texts.systems)}
    col = {j: k for k, j in enumerate(texts.inputs)}
    systems, inputs = frame["system"].to_numpy(), frame["input"].to_numpy()
    first_of_cell = ~pd.DataFrame({"s": systems, "i": inputs}).duplicated().to_numpy()
    first_of_input = ~pd.Series(inputs).duplicated().to_numpy()
    outputs = [texts.output(row[s], col[j]) if first and s in row and j in col else None
               for s, j, first in zip(systems, inputs, first_of_cell)]
    if any(outputs):
        frame["text"] = pd.Series(outputs, dtype=object, index=frame.index)
    for name, values in (("source", texts.sources), ("reference", texts.references)):
        column = [(values[col[j]] or None) if first and j in col else None for j, first in zip(inputs, first_of_input)]
        if any(column):
            frame[name] = pd.Series(column, dtype=object, index=frame.index)


def check_long_export(dataset: Dataset) -> Dataset:
    """Check, from the names only (no table is built), that :func:`dataset_to_long_frame` accepts ``dataset``.

    For offering an export before building it (a whole dataset can be large).

    Parameters
    ----------
    dataset : Dataset
        The dataset to be exported.

    Returns
    -------
    Dataset
        ``dataset``.

    Raises
    ------
    TypeError, ValueError
        As :func:`dataset_to_long_frame`.
    """
    return _check_long_export(dataset, False, "check_long_export")


# -- CSV downloads: no cell a spreadsheet would run as a formula ---------------------------------------------
# OWASP, "CSV Injection": a cell starting with = + - @ (or a tab or carriage return, which some spreadsheets
# skip before reading the rest as a formula) is prefixed with a single quote. A plain number ('-0.5', '+3e2')
# cannot run anything and stays a number.
_FORMULA_LEAD = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan)", re.IGNORECASE)


def neutralise_cell(value: object) -> object:
    """``value`` with a single quote before it when it is text a spreadsheet would read as a formula.

    Non-text values (numbers, booleans, missing) and text that is a plain number are returned unchanged.

    >>> neutralise_cell("=cmd|' /C calc'!A0"), neutralise_cell("-0.5"), neutralise_cell(-3), neutralise_cell("@x")
    ("'=cmd|' /C calc'!A0", '-0.5', -3, "'@x")

    References: docs/methods.md sec. 17 (uploads and downloads); OWASP, CSV Injection.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_LEAD) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def neutralised_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells, column names and index labels are :func:`neutralise_cell`-ed;
    numeric columns are untouched (numbers stay numbers)."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
    columns = []
    for k in range(frame.shape[1]):
        column = frame.iloc[:, k]
        if column.dtype == object or isinstance(column.dtype, (pd.StringDtype, pd.CategoricalDtype)):
            column = column.astype(object).map(neutralise_cell)
        columns.append(column.reset_index(drop=True))
    out = pd.concat(columns, axis=1, ignore_index=True) if columns else pd.DataFrame(index=range(len(frame)))
    out.index = frame.index
    out.columns = _neutral_index(frame.columns)
    out.index = _neutral_index(out.index)
    return out


def _neutral_index(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(neutralise_cell(v) for v in t) for t in index], names=index.names)
    if index.dtype == object or isinstance(index.dtype, pd.StringDtype):
        return pd.Index([neutralise_cell(v) for v in index], name=neutralise_cell(index.name), dtype=object)
    return index


def safe_csv(frame: pd.DataFrame, *, index: bool = False) -> str:
    """``frame.to_csv(index=index)`` with every formula-leading text cell neutralised (:func:`neutralise_cell`):
    every CSV download goes through it.

    References: docs/methods.md sec. 17; OWASP, CSV Injection.
    """
    # RFC 4180 line ends: the csv writer then quotes every cell holding a CR or LF (with '\n' alone, a bare CR in a
    # name is written unquoted and splits the row in a spreadsheet)
    return neutralised_frame(frame).to_csv(index=index, lineterminator="\r\n")
