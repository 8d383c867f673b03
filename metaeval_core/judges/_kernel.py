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
    check_choice, check_confidence_level, check_int, check_interval_resamples,
)
from metaeval_core.judges.model import INVALID, MISSING, ORDERS, TIE
from metaeval_core.stats.montecarlo import BLOCK, block_draws, finite_or_none, percentile_bounds, seed_of  # noqa: F401
from metaeval_core.stats.montecarlo import multiplicities as _counts

Statistic = Literal["accuracy", "kappa", "alpha"]
STATISTICS: tuple[str, ...] = get_args(Statistic)
OrderMode = Literal["original", "swapped", "average", "both"]
ORDER_MODES: tuple[str, ...] = get_args(OrderMode)
Ties = Literal["three-class", "drop-reference-ties", "drop-any-tie"]
TIE_CONVENTIONS: tuple[str, ...] = get_args(Ties)
# 'as-verdict' (LLMBar's convention): an invalid verdict is an answer like another. Against a reference (never
# invalid) it is therefore wrong, as under 'wrong'; it differs where two raters' verdicts are compared with each
# other (positional consistency, rater x rater agreement): two invalid verdicts agree.
Invalid = Literal["wrong", "drop", "tie", "as-verdict"]
INVALID_CONVENTIONS: tuple[str, ...] = get_args(Invalid)

K = 4  # verdict categories in a confusion table: A, B, tie, invalid
# One-hot confusion columns (items x judges x orders x 16) up to this many elements are built once (8M: 64 MB);
# larger uploads count one category at a time, so memory stays that of the int8 codes.
_DENSE_ONE_HOT = 8_000_000


@dataclass(frozen=True)
class VerdictCounting:
    """How ties and invalid verdicts count; see :func:`count_mask`."""

    ties: str = "three-class"
    invalid: str = "wrong"

    def __post_init__(self) -> None:
        check_choice(self.ties, "ties", TIE_CONVENTIONS)
        check_choice(self.invalid, "invalid", INVALID_CONVENTIONS)


def read_invalid(judge: np.ndarray, invalid: str) -> np.ndarray:
    """The judge's codes with ``invalid='tie'`` applied (an invalid verdict read as a tie)."""
    return np.where(judge == INVALID, TIE, judge) if invalid == "tie" else judge


def count_mask(judge: np.ndarray, reference: np.ndarray, conv: VerdictCounting) -> np.ndarray:
    """Which (item, order) cells count: both verdicts present, and the conventions keep the cell.

    * ``ties='three-class'``: a tie is a third class; every cell counts.
    * ``'drop-reference-ties'``: cells whose reference is a tie are left out (a judge's tie elsewhere is wrong).
    * ``'drop-any-tie'``: cells where the reference or the judge says tie are left out (MT-Bench's "w/o tie").
    * ``invalid='wrong'``: an invalid verdict counts and never agrees; ``'drop'``: left out; ``'tie'``: read
      as a tie (apply :func:`read_invalid` to ``judge`` first); ``'as-verdict'``: a category of its own, so
      against a reference (never invalid) the same as ``'wrong'``.
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


def judges_in_order(data, judges, mode: str, *, every_slot: bool = True) -> list[str]:
    """The judges with verdicts in the orders ``mode`` reads (in each of them, or in one when ``every_slot`` is
    False); a ValueError naming the orders the judges (or the one judge asked) were run in when none has."""
    slots = order_slots(mode)
    seen = all if every_slot else any
    found = [j for j in judges if seen((data.verdicts[:, data.rater_index(j), s] != MISSING).any() for s in slots)]
    if judges and not found:
        given = sorted({o for j in judges for o in data.orders_of(j)}, key=ORDERS.index)
        needed = (" and " if every_slot else " or ").join(ORDERS[s] for s in slots)
        who = f"judge {judges[0]!r}" if len(judges) == 1 else f"the judges of {data.id!r}"
        raise ValueError(f"order={mode!r} needs verdicts in {needed} order; {who} gave verdicts "
                         f"in the {' and '.join(given)} order only")
    return found


def accuracy_columns(judge: np.ndarray, reference: np.ndarray, mode: str, conv: VerdictCounting) -> np.ndarray:
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


def confusion_cells(judge: np.ndarray, reference: np.ndarray, mode: str, conv: VerdictCounting) -> np.ndarray:
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
    """Cohen's kappa from (..., m * m) confusion counts (judge-major; m = 4 here, 5 for rater pairs); NaN when
    undefined (chance agreement 1).

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the diagonal share and ``p_e = sum_k r_k c_k / N^2``.
    """
    m = int(round(np.sqrt(conf.shape[-1])))
    c = conf.reshape(conf.shape[:-1] + (m, m))
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


def columns_for(statistic: str, judge: np.ndarray, reference: np.ndarray, mode: str, conv: VerdictCounting) -> Columns:
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


# Resamples are drawn in fixed blocks, block b from its own stream (metaeval_core.stats.montecarlo.block_draws),
# so a resample's draws never depend on ``batch`` and only the blocks being evaluated are held in memory
# (1,000 resamples of 100,000 items drawn up front would be 800 MB of indices).
# Operations per drawn number (measured on the 2-core machine with the sums that follow each draw: a bootstrap of
# a million items x 1,000 resamples ran 54 s, its chance permutations 190 s, plus a margin for the sums): the
# cost model of check_cost.
DRAW_COST = {"items": 6, "swaps": 3, "permutations": 25}


def price_draws(kind: str, n_resamples: int, n: int, per_resample: int) -> None:
    """Refuse (:func:`check_cost`) ``n_resamples`` resamples of ``kind`` over ``n`` items whose draws and sums would
    exceed the budget, naming the resamples that fit. An analysis of several resamplings prices its dearest first,
    so that the resamples it names fit every part."""
    per = n * DRAW_COST.get(kind, 6) + per_resample
    fits = int(MAX_OPERATIONS // max(per, 1))
    word = {"items": "bootstrap resamples", "swaps": "permutations", "permutations": "permutations"}.get(kind, kind)
    check_cost(f"{n_resamples:,} {word} of {n:,} items", n_resamples * per,
               "lighter: " + (f"n_resamples={fits:,}, or " if fits >= 40 else "") + "one pair set or a subset of "
               "the items")


def draw_chunks(kind: str, rng: object, n_resamples: int, n: int, per_resample: int, batch: int | None):
    """:func:`metaeval_core.stats.montecarlo.block_draws`, priced first (:func:`price_draws`): every judges
    resampling (bootstrap, chance permutations, swaps) is refused before it runs when its draws and sums would
    exceed the budget."""
    price_draws(kind, n_resamples, n, per_resample)
    return block_draws(kind, rng, n_resamples, n, per_resample, batch)


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


num = finite_or_none  # a float for JSON: None when not finite


# ---------------------------------------------------------------------------------------------------------
# Cost: every analysis priced before it runs
# ---------------------------------------------------------------------------------------------------------
# Elementary array operations an analysis may cost before it is refused with its cost and a lighter setting
# (about 1e8 a second on the 2-core machine for this code's mix of products, draws and Python per pair:
# benchmarks/bench_hostile_uploads.py), i.e. about 20 s.
MAX_OPERATIONS = 2_000_000_000
OPERATIONS_PER_SECOND = 1e8


def check_cost(what: str, operations: float, lighter: str) -> None:
    """Refuse, before it runs, an analysis over :data:`MAX_OPERATIONS`: one line with its cost and ``lighter``."""
    if operations > MAX_OPERATIONS:
        raise ValueError(f"{what} would take about {operations / OPERATIONS_PER_SECOND:,.0f} s here (more than "
                         f"{MAX_OPERATIONS / OPERATIONS_PER_SECOND:,.0f} s is refused); {lighter}")
