"""Result objects as pandas tables, the way a notebook user reads them.

A result with ``to_records()`` (a table of pairs or rows) becomes one row per record; a result with ``to_dict()``
(one estimate) becomes a one-row table, and :func:`to_frame` stacks several of those (e.g. one per metric).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import pandas as pd

_NAN = float("nan")


class ToFrame:
    """Mixin for frozen result dataclasses: ``to_frame()`` from their ``to_records()`` or ``to_dict()``."""

    def to_frame(self) -> pd.DataFrame:
        to_records = getattr(self, "to_records", None)
        records = to_records() if to_records is not None else [self.to_dict()]  # type: ignore[attr-defined]
        # The dicts say "undefined" as None (JSON's null); a table says it as NaN, so numeric columns stay numeric.
        return pd.DataFrame.from_records([{k: _NAN if v is None else v for k, v in r.items()} for r in records])


def to_frame(results: Any, *, index: Sequence[Any] | None = None) -> pd.DataFrame:
    """One table of one result or of several (each a row, or its rows).

    Parameters
    ----------
    results : a result object or an iterable of them
        Anything with ``to_frame()``, e.g. :class:`CorrelationResult`, :class:`ConfidenceInterval`,
        :class:`PairwiseTable`.
    index : sequence, optional
        Labels for the rows of the stacked table (one per result; e.g. the metric names), only when every result
        gives one row.
    """
    if hasattr(results, "to_frame"):
        return results.to_frame()
    items: list = list(results) if isinstance(results, Iterable) else []
    if not items and not isinstance(results, Iterable):
        raise TypeError(f"results must be a result object or an iterable of them, got {type(results).__name__}")
    missing = [type(r).__name__ for r in items if not hasattr(r, "to_frame")]
    if missing:
        raise TypeError(f"results: {missing[0]} has no to_frame()")
    frames = [r.to_frame() for r in items]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if index is not None:
        if len(index) != len(table):
            raise ValueError(f"index has {len(index)} labels for a table of {len(table)} rows")
        table.index = pd.Index(list(index))
    return table
