"""Shared machinery of the judges statistics: conventions, per-item columns, statistics from sums, resampling.

Every statistic here is a function of *sums over items* of per-item columns: an accuracy is
``sum(correct) / sum(counted)``, a kappa or an alpha a function of the confusion counts (the sum of one-hot
per-item cells). So a bootstrap over items is one product ``W @ columns`` with ``W[b, i]`` the multiplicity
of item ``i`` in resample ``b`` (all indices drawn up front, evaluated in batches: the result does not
depend on ``batch``), and a paired permutation between two judges is linear in the swap bits.

References: docs/methods.md sec. 18.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union, get_args

import numpy as np

from metaeval_core._checks import (
    as_generator, check_choice, check_confidence_level, check_int, check_interval_resamples,
)
from metaeval_core.judges.model import INVALID, MISSING, ORDERS, TIE
from metaeval_core.stats.resampling import _auto_batch, _counts

Statistic = Literal["accuracy", "kappa", "alpha"]
STATISTICS: tuple[str, ...] = get_args(Statistic)
OrderMode = Literal["original", "swapped", "average", "both"]
ORDER_MODES: tuple[str, ...] = get_args(OrderMode)
Ties = Literal["three-class", "drop-reference-ties", "drop-any-tie"]
TIE_CONVENTIONS: tuple[str, ...] = get_args(Ties)
Invalid = Literal["wrong", "drop", "tie"]
INVALID_CONVENTIONS: tuple[str, ...] = get_args(Invalid)

K = 4  # verdict categories in a confusion table: A, B, tie, invalid
# One-hot confusion columns (items x judges x orders x 16) up to this many elements are built once (8M: 64 MB);
# larger uploads count one category at a time, so memory stays that of the int8 codes.
_DENSE_ONE_HOT = 8_000_000


@dataclass(frozen=True)
class Conventions:
    """How ties and invalid verdicts count; see :func:`count_mask`."""

    ties: str = "three-class"
    invalid: str = "wrong"

    def __post_init__(self) -> None:
        check_choice(self.ties, "ties", TIE_CONVENTIONS)
        check_choice(self.invalid, "invalid", INVALID_CONVENTIONS)


def read_invalid(judge: np.ndarray, invalid: str) -> np.ndarray:
    """The judge's codes with ``invalid='tie'`` applied (an invalid verdict read as a tie)."""
    return np.where(judge == INVALID, TIE, judge) if invalid == "tie" else judge


def count_mask(judge: np.ndarray, reference: np.ndarray, conv: Conventions) -> np.ndarray:
    """Which (item, order) cells count: both verdicts present, and the conventions keep the cell.

    * ``ties='three-class'``: a tie is a third class; every cell counts.
    * ``'drop-reference-ties'``: cells whose reference is a tie are left out (a judge's tie elsewhere is wrong).
    * ``'drop-any-tie'``: cells where the reference or the judge says tie are left out (MT-Bench's "w/o tie").
    * ``invalid='wrong'``: an invalid verdict counts and never agrees; ``'drop'``: left out; ``'tie'``: read
      as a tie (apply :func:`read_invalid` to ``judge`` first).
    """
    keep = (judge != MISSING) & (reference != MISSING)
    if conv.invalid == "drop":
        keep &= judge != INVALID
    if conv.ties in ("drop-reference-ties", "drop-any-tie"):
        keep &= reference != TIE
    if conv.ties == "drop-any-tie":
        keep &= judge != TIE
    return keep


def order_slots(mode: str) -> tuple[int, ...]:
    """The order indices a mode reads: one for 'original'/'swapped', both for 'average'/'both'."""
    return (ORDERS.index(mode),) if mode in ORDERS else (0, 1)


def accuracy_columns(judge: np.ndarray, reference: np.ndarray, mode: str, conv: Conventions) -> np.ndarray:
    """Per-item (counted, correct) for accuracy; ``judge`` (..., n, J, 2) codes, ``reference`` (n, J).

    Returns (..., n, J, 2) floats. ``'average'`` and ``'both'`` count an item only when both orders count;
    ``'average'`` credits the share of the two orders that agree, ``'both'`` only agreement in both.
    """
    judge = read_invalid(judge, conv.invalid)
    ref = reference[..., None]
    keep = count_mask(judge, ref, conv)
    hit = keep & (judge == ref)
    slots = order_slots(mode)
    if len(slots) == 1:
        counted, correct = keep[..., slots[0]], hit[..., slots[0]]
        return np.stack([counted, correct], axis=-1).astype(np.float64)
    counted = keep[..., 0] & keep[..., 1]
    if mode == "both":
        correct = (counted & hit[..., 0] & hit[..., 1]).astype(np.float64)
    else:
        correct = np.where(counted, 0.5 * (hit[..., 0].astype(np.float64) + hit[..., 1]), 0.0)
    return np.stack([counted.astype(np.float64), correct], axis=-1)


class CategoryColumns:
    """One-hot per-item columns held as category codes: ``cells`` (..., n, J, O) in ``0..m-1`` or -1 (counts
    nowhere). The one-hot array (16 floats per item, judge and order) is never built for all judges at once:
    sums count each category, resampled sums are one product per category, so memory stays that of the codes.
    Sums come flattened as (..., J, O * m), order-major.
    """

    def __init__(self, cells: np.ndarray, m: int = K * K) -> None:
        self.cells = cells
        self.m = m
        self._dense: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.cells.shape[-3]

    def sum(self, axis: int = 0) -> np.ndarray:
        """Counts over the item axis (``axis``): (..., J, O * m)."""
        counts = np.stack([(self.cells == c).sum(axis=axis) for c in range(self.m)], axis=-1)
        return counts.reshape(counts.shape[:-2] + (-1,)).astype(np.float64)

    def weighted(self, weights: np.ndarray) -> np.ndarray:
        """(b, n) item weights -> (b, J, O * m) weighted counts."""
        flat = self.cells.reshape(self.n, -1)
        if flat.size * self.m <= _DENSE_ONE_HOT:
            # Small enough to hold the one-hot columns: one product (faster than one per category).
            if self._dense is None:
                self._dense = (flat[..., None] == np.arange(self.m)).reshape(self.n, -1).astype(np.float64)
            out = weights @ self._dense
        else:
            out = np.empty((weights.shape[0], flat.shape[1], self.m))
            for c in range(self.m):
                out[..., c] = weights @ (flat == c).astype(np.float64)
        return out.reshape((weights.shape[0],) + self.cells.shape[1:-1] + (-1,))

    def one_hot(self, j: int) -> np.ndarray:
        """Judge ``j``'s dense columns (n, O * m)."""
        cell = self.cells[:, j]
        return (cell[..., None] == np.arange(self.m)).reshape(cell.shape[0], -1).astype(np.float64)


def confusion_cells(judge: np.ndarray, reference: np.ndarray, mode: str, conv: Conventions) -> np.ndarray:
    """Per item, judge and order read: the confusion cell ``judge * 4 + reference`` (judge x reference over A, B,
    tie, invalid), or -1 where the cell does not count. Returns (..., n, J, O) int8 (O = 1 or 2).

    ``'average'`` reads both orders and requires both to count, as for accuracy; ``'both'`` is refused by the
    caller (agreement in both orders is an accuracy).
    """
    judge = read_invalid(judge, conv.invalid)
    ref = reference[..., None]
    keep = count_mask(judge, ref, conv)
    slots = order_slots(mode)
    if len(slots) == 2:
        keep = keep & (keep[..., 0] & keep[..., 1])[..., None]
    cell = np.where(keep, judge.astype(np.int16) * K + np.clip(ref, 0, None), -1)[..., list(slots)]
    return cell.astype(np.int8)


def accuracy_from_sums(sums: np.ndarray) -> np.ndarray:
    """(..., 2) (counted, correct) sums -> accuracy (NaN when nothing counted)."""
    out = np.full(sums.shape[:-1], np.nan)
    np.divide(sums[..., 1], sums[..., 0], out=out, where=sums[..., 0] > 0)
    return out


def kappa_from_confusion(conf: np.ndarray) -> np.ndarray:
    """Cohen's kappa from (..., 16) confusion counts (judge-major); NaN when undefined (chance agreement 1).

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the diagonal share and ``p_e = sum_k r_k c_k / N^2``.
    """
    c = conf.reshape(conf.shape[:-1] + (K, K))
    total = c.sum(axis=(-2, -1))
    diag = np.trace(c, axis1=-2, axis2=-1)
    expected = (c.sum(axis=-1) * c.sum(axis=-2)).sum(axis=-1)  # N^2 p_e
    num = total * diag - expected
    den = total * total - expected
    out = np.full(total.shape, np.nan)
    np.divide(num, den, out=out, where=(den > 0) & (total > 0))
    return out


def alpha_from_coincidences(o: np.ndarray, n_categories: int = K) -> np.ndarray:
    """Krippendorff's alpha (nominal) from (..., K * K) coincidence counts; NaN when undefined.

    ``alpha = 1 - (n - 1) sum_{c != k} o_ck / sum_{c != k} n_c n_k`` with ``n_c`` the coincidence row sums and
    ``n`` their total (Krippendorff 2011).
    """
    o = o.reshape(o.shape[:-1] + (n_categories, n_categories))
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    disagree = o.sum(axis=(-2, -1)) - np.trace(o, axis1=-2, axis2=-1)
    expected = n * n - (n_c * n_c).sum(axis=-1)  # sum_{c != k} n_c n_k
    out = np.full(n.shape, np.nan)
    np.divide((n - 1) * disagree, expected, out=out, where=expected > 0)
    return 1.0 - out


def alpha_from_confusion(conf: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (nominal) of two coders from (..., 16) confusion counts: the coincidence matrix is
    ``o = C + C^T`` (each item two pairable values)."""
    c = conf.reshape(conf.shape[:-1] + (K, K))
    o = c + np.swapaxes(c, -1, -2)
    return alpha_from_coincidences(o.reshape(conf.shape), K)


Columns = Union[np.ndarray, CategoryColumns]


def columns_for(statistic: str, judge: np.ndarray, reference: np.ndarray, mode: str, conv: Conventions) -> Columns:
    """Per-item columns of ``statistic``: (..., n, J, 2) floats for accuracy, :class:`CategoryColumns` of the
    confusion cells for kappa and alpha."""
    if statistic == "accuracy":
        return accuracy_columns(judge, reference, mode, conv)
    return CategoryColumns(confusion_cells(judge, reference, mode, conv))


def judge_columns(columns: Columns, j: int) -> np.ndarray:
    """Judge ``j``'s dense per-item columns (n, C)."""
    return columns.one_hot(j) if isinstance(columns, CategoryColumns) else columns[:, j]


def statistic_from_sums(statistic: str, sums: np.ndarray) -> np.ndarray:
    """(..., J, C) sums -> (..., J) statistic; kappa and alpha average over the orders read."""
    if statistic == "accuracy":
        return accuracy_from_sums(sums)
    conf = sums.reshape(sums.shape[:-1] + (-1, K * K))
    per_order = kappa_from_confusion(conf) if statistic == "kappa" else alpha_from_confusion(conf)
    return per_order.mean(axis=-1)


# ---------------------------------------------------------------------------------------------------------
# Resampling
# ---------------------------------------------------------------------------------------------------------
def check_resampling(confidence_level: object, n_resamples: object, batch: object) -> tuple[float, int, int | None]:
    level = check_confidence_level(confidence_level)
    k = check_interval_resamples(n_resamples, level)
    return level, k, check_int(batch, "batch", allow_none=True)


def seed_of(rng: object) -> int:
    """One integer seed for several computations that must each start from the same draws: an int seed as
    is, a Generator's next 63-bit integer (it advances), fresh entropy for None."""
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        as_generator(rng)  # validates (non-negative)
        return int(rng)
    return int(as_generator(rng).integers(0, 2**63 - 1))


# Resamples are drawn in fixed blocks of BLOCK, block b from its own stream (``SeedSequence(seed).spawn``),
# so a resample's draws never depend on ``batch`` and only the blocks being evaluated are held in memory
# (1,000 resamples of 100,000 items drawn up front would be 800 MB of indices).
BLOCK = 64


def _draw(kind: str, gen: np.random.Generator, rows: int, n: int) -> np.ndarray:
    if kind == "items":
        return gen.integers(0, n, size=(rows, n))
    if kind == "swaps":
        return (gen.random((rows, n)) < 0.5).astype(np.float64)
    return gen.permuted(np.tile(np.arange(n), (rows, 1)), axis=1)


def draw_chunks(kind: str, rng: object, n_resamples: int, n: int, per_resample: int, batch: int | None):
    """Yield (slice, draws) chunks of ``n_resamples`` resamples of ``n`` items, about ``batch`` resamples at a
    time (default: a memory budget of ``per_resample`` numbers per resample):

    * ``'items'``: bootstrap indices, (b, n) ``integers(0, n)``;
    * ``'swaps'``: swap bits, (b, n) floats, 1 where ``random() < 1/2``;
    * ``'permutations'``: (b, n) permutations of ``range(n)`` (``permuted`` along each row).

    Draws come in blocks of BLOCK resamples, block ``g`` from child stream ``g`` of ``SeedSequence(seed)``
    (``seed`` the int given, or the next integer of the Generator given), so they do not depend on ``batch``;
    a chunk is several whole blocks, or a part of one when a resample is large.
    """
    streams = np.random.SeedSequence(seed_of(rng)).spawn(-(-n_resamples // BLOCK))
    rows = [min(BLOCK, n_resamples - g * BLOCK) for g in range(len(streams))]
    b = _auto_batch(batch, per_resample, n_resamples)
    if b >= BLOCK:
        per_step = b // BLOCK
        for first in range(0, len(streams), per_step):
            group = range(first, min(first + per_step, len(streams)))
            draws = np.concatenate([_draw(kind, np.random.default_rng(streams[g]), rows[g], n) for g in group])
            yield slice(first * BLOCK, first * BLOCK + len(draws)), draws
        return
    for g, stream in enumerate(streams):
        draws = _draw(kind, np.random.default_rng(stream), rows[g], n)
        for start in range(0, rows[g], b):
            part = draws[start:start + b]
            yield slice(g * BLOCK + start, g * BLOCK + start + len(part)), part


def draw_items(rng: object, n_resamples: int, n: int) -> np.ndarray:
    """All bootstrap indices (k, n) at once, as :func:`draw_chunks` draws them (for tests and small data)."""
    return np.concatenate([d for _, d in draw_chunks("items", rng, n_resamples, n, n, None)], axis=0)


def bootstrap_sums(columns: Columns, rng: object, n_resamples: int, batch: int | None) -> np.ndarray:
    """(n, ...) per-item columns -> (k, ...) sums over ``n_resamples`` bootstrap resamples of the items
    (``W @ columns`` with ``W`` the resamples' item multiplicities), block by block."""
    if isinstance(columns, CategoryColumns):
        n = columns.n
        width = columns.cells[0].size * columns.m
        parts = [columns.weighted(_counts(idx, n))
                 for _, idx in draw_chunks("items", rng, n_resamples, n, n + width, batch)]
        return np.concatenate(parts, axis=0)
    n = columns.shape[0]
    flat = columns.reshape(n, -1)
    out = np.empty((n_resamples, flat.shape[1]))
    for sl, idx in draw_chunks("items", rng, n_resamples, n, n + flat.shape[1], batch):
        out[sl] = _counts(idx, n) @ flat
    return out.reshape((n_resamples,) + columns.shape[1:])


@dataclass(frozen=True)
class Bootstrapped:
    """A statistic on all items, its resampled values (k, ...) and their percentile interval."""

    estimate: np.ndarray
    resampled: np.ndarray
    low: np.ndarray
    high: np.ndarray
    defined: np.ndarray


def bootstrap(columns: Columns, statistic, *, n_resamples: int, rng, batch: int | None,
              confidence_level: float) -> Bootstrapped:
    """``statistic`` (a function of summed columns) on all items and on ``n_resamples`` bootstrap resamples."""
    estimate = statistic(columns.sum(axis=0))
    resampled = statistic(bootstrap_sums(columns, rng, n_resamples, batch))
    low, high, defined = percentile_bounds(resampled, confidence_level)
    return Bootstrapped(estimate, resampled, low, high, defined)


def percentile_bounds(values: np.ndarray, confidence_level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile interval over axis 0 of the defined (non-NaN) values; NaN bounds where none is defined."""
    alpha = 1.0 - confidence_level
    defined = (~np.isnan(values)).sum(axis=0)
    low = np.full(values.shape[1:], np.nan)
    high = np.full(values.shape[1:], np.nan)
    some = defined > 0
    if some.any():
        with np.errstate(all="ignore"):
            q = np.nanpercentile(values[:, some], [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)], axis=0)
        low[some], high[some] = q[0], q[1]
    return low, high, defined


def num(value: float) -> float | None:
    """A float for JSON: None when not finite."""
    value = float(value)
    return value if np.isfinite(value) else None
