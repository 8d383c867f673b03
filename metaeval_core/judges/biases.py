"""Biases of pairwise judges: position (consistency across orders, preference for the first output) and length.

Every quantity is a ratio of sums over items (``sum(hits) / sum(counted)``), so its interval is the same
percentile bootstrap over items as agreement (:mod:`metaeval_core.judges._kernel`), the same resamples for
every judge.

References: docs/methods.md sec. 18.5-18.6; Zheng et al. (2023), MT-Bench (position bias: consistency when
the order is swapped); Zeng et al. (2024), LLMBar (positional agreement); Dubois et al. (2024),
Length-Controlled AlpacaEval (the length preference of judges).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np

from metaeval_core._checks import check_choice
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges.agreement import _judges, resolve_reference
from metaeval_core.judges.model import A, B, INVALID, MISSING, NO_MAJORITY, TIE, NoMajority, PairwiseData

ConsistencyInvalid = kern.Invalid
CONSISTENCY_INVALID: tuple[str, ...] = kern.INVALID_CONVENTIONS
PositionBasis = Literal["scores", "verdicts"]
POSITION_BASES: tuple[str, ...] = get_args(PositionBasis)
LengthUnit = Literal["words", "characters"]
LENGTH_UNITS: tuple[str, ...] = get_args(LengthUnit)
LengthOrder = Literal["original", "swapped", "average"]
LENGTH_ORDERS: tuple[str, ...] = get_args(LengthOrder)


@dataclass(frozen=True)
class Estimate:
    """A share with its percentile-bootstrap interval: ``estimate = hits / n`` over ``n`` counted units."""

    estimate: float
    low: float
    high: float
    n: int
    n_defined: int

    def to_dict(self, prefix: str = "") -> dict:
        """``estimate, low, high, n``; with a prefix ``p``: ``p, p_low, p_high, p_n``."""
        keys = ("estimate", "low", "high", "n") if not prefix else (prefix, f"{prefix}_low", f"{prefix}_high",
                                                                     f"{prefix}_n")
        return dict(zip(keys, (kern.num(self.estimate), kern.num(self.low), kern.num(self.high), self.n)))


def _ratios(columns: np.ndarray, *, confidence_level: float, n_resamples: int, rng, batch) -> list[list[Estimate]]:
    """(n, J, Q, 2) per-item (counted, hits) -> Estimate per judge and quantity (common resamples)."""
    boot = kern.bootstrap(columns, kern.accuracy_from_sums, n_resamples=n_resamples, rng=rng, batch=batch,
                          confidence_level=confidence_level)
    estimate, low, high, defined = boot.estimate, boot.low, boot.high, boot.defined
    counted = columns[..., 0].sum(axis=0)
    return [[Estimate(float(estimate[j, q]), float(low[j, q]), float(high[j, q]), int(counted[j, q]),
                      int(defined[j, q])) for q in range(columns.shape[2])] for j in range(columns.shape[1])]


@dataclass(frozen=True)
class PositionalBias(ToFrame):
    """One judge's position bias on items judged in both orders.

    Attributes
    ----------
    judge : str
    consistency : Estimate
        Share of items with the same verdict in both orders (a tie in both is consistent; with
        ``invalid='wrong'`` an invalid verdict in either order is inconsistent, with ``'drop'`` such items are
        left out, with ``'tie'`` it reads as a tie, with ``'as-verdict'`` an invalid verdict is a verdict like another, so invalid in both orders
        is consistent: LLMBar's 'equal'). Its ``n`` is the items counted.
    first_position : Estimate
        Share of the verdicts naming a winner (A or B, both orders pooled) that name the output shown first;
        0.5 is no preference. Its ``n`` counts verdicts, not items.
    n_items : int
        Items with verdicts in both orders.
    n_invalid : int
        The judge's invalid verdicts on the items, in any order (the consistency's ``invalid`` convention
        applies to those on items judged in both orders).
    invalid : str
    basis : str
        ``'scores'`` when the judge scores each output and its verdicts were read from its scores (A when its
        score for A is higher, a tie when the two scores are equal, invalid when a score is missing);
        ``'verdicts'`` otherwise.
    n_equal_scores : int
        Items (judged in both orders) on which the judge gave both outputs equal scores.
    n_tie_broken : int
        Of those, the items where its given verdicts named a winner in some order: a tie broken by a rule
        (LLMBar's Rating strategy names the output shown second), which makes the verdict-level consistency
        and first-position share describe the rule, not the judge.
    """

    judge: str
    consistency: Estimate
    first_position: Estimate
    n_items: int
    n_invalid: int
    invalid: str
    confidence_level: float
    n_resamples: int
    basis: str = "verdicts"
    n_equal_scores: int = 0
    n_tie_broken: int = 0

    def to_dict(self) -> dict:
        return {"judge": self.judge, **self.consistency.to_dict("consistency"),
                **self.first_position.to_dict("first_position"), "n_items": self.n_items,
                "n_invalid": self.n_invalid, "invalid": self.invalid, "basis": self.basis,
                "n_equal_scores": self.n_equal_scores, "n_tie_broken": self.n_tie_broken,
                "confidence_level": self.confidence_level, "n_resamples": self.n_resamples}


def position_verdicts(data: PairwiseData, names: Sequence[str], *, basis: str = "scores") -> tuple:
    """The codes positional consistency reads, (n, J, 2): a scoring judge's verdicts from its scores with
    ``basis='scores'``; with which items were judged in both orders, each judge's basis, and its equal-score and
    tie-broken counts.

    References
    ----------
    docs/methods.md sec. 18.5.
    """
    v = data.verdicts[:, [data.rater_index(j) for j in names], :].copy()  # (n, J, 2)
    both = (v != MISSING).all(axis=2)
    bases = ["verdicts"] * len(names)
    n_equal = np.zeros(len(names), dtype=int)
    n_broken = np.zeros(len(names), dtype=int)
    if data.scores is not None:
        from metaeval_core.judges.scores import verdicts_from_scores

        for j, name in enumerate(names):
            scores = data.scores[:, data.rater_index(name)]
            if not np.isfinite(scores).any():
                continue
            derived = verdicts_from_scores(scores[:, 0], scores[:, 1])
            equal = both[:, j] & (derived == TIE)
            n_equal[j] = int(equal.sum())
            n_broken[j] = int((equal & ((v[:, j] == A) | (v[:, j] == B)).any(axis=1)).sum())
            if basis == "scores":
                derived = np.where(derived == MISSING, INVALID, derived)
                v[:, j] = np.where(v[:, j] != MISSING, derived[:, None], MISSING)
                bases[j] = "scores"
    return v, both, bases, n_equal, n_broken


def consistency_masks(v: np.ndarray, both: np.ndarray, invalid: str) -> tuple[np.ndarray, np.ndarray]:
    """(counted, same) per item and judge: the items positional consistency counts, and those with the same
    verdict in both orders under the ``invalid`` convention (see :class:`PositionalBias`).

    References
    ----------
    docs/methods.md sec. 18.5.
    """
    any_invalid = (v == INVALID).any(axis=2)
    counted = both & ~any_invalid if invalid == "drop" else both
    read = kern.read_invalid(v, invalid)  # 'tie': an invalid verdict reads as a tie
    same = counted & (read[..., 0] == read[..., 1])
    if invalid in ("wrong", "drop"):
        same &= ~any_invalid
    return counted, same


def positional_bias(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    invalid: ConsistencyInvalid = "wrong",
    basis: PositionBasis = "scores",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> tuple[PositionalBias, ...]:
    """Positional consistency and first-position preference of each judge, with bootstrap intervals.

    Only items a judge judged in both presentation orders count (a judge with one order gets undefined
    values and ``n_items = 0``). With ``basis='scores'`` (default) a judge that scores each output is
    measured on its scores, equal scores being ties (its given verdicts may break them by a rule); with
    ``'verdicts'`` on its verdicts as given. See :class:`PositionalBias` for the definitions and conventions.

    References
    ----------
    docs/methods.md sec. 18.5; Zheng et al. (2023), MT-Bench sec. 3.3 (consistency under swapped
    positions); Zeng et al. (2024), LLMBar (positional agreement rate).
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    check_choice(invalid, "invalid", CONSISTENCY_INVALID)
    check_choice(basis, "basis", POSITION_BASES)
    level, k, batch = kern.check_resampling(confidence_level, n_resamples, batch)
    names = _judges(data, judges)
    v, both, bases, n_equal, n_broken = position_verdicts(data, names, basis=basis)
    counted, same = consistency_masks(v, both, invalid)
    # first position: A in the original order, B in the swapped order
    named = (v == A) | (v == B)
    named &= both[..., None]
    first = np.stack([(v[..., 0] == A), (v[..., 1] == B)], axis=-1) & named
    columns = np.stack([np.stack([counted, same], axis=-1).astype(float),
                        np.stack([named.sum(axis=2), first.sum(axis=2)], axis=-1).astype(float)], axis=2)
    estimates = _ratios(columns, confidence_level=level, n_resamples=k, rng=kern.seed_of(rng), batch=batch)
    n_invalid = (v == INVALID).sum(axis=(0, 2))
    return tuple(PositionalBias(judge=name, consistency=estimates[j][0], first_position=estimates[j][1],
                                n_items=int(both[:, j].sum()), n_invalid=int(n_invalid[j]), invalid=invalid,
                                confidence_level=level, n_resamples=k, basis=bases[j],
                                n_equal_scores=int(n_equal[j]), n_tie_broken=int(n_broken[j]))
                 for j, name in enumerate(names))


@dataclass(frozen=True)
class LengthPreference(ToFrame):
    """How often a judge, and the reference, prefer the longer output, and the difference.

    ``judge_longer`` is the share of the judge's verdicts naming a winner (A or B) on items whose outputs
    differ in length that name the longer one (pooled over the orders read); ``reference_longer`` the same
    for the reference on the same items; ``difference`` is ``judge_longer - reference_longer`` with a paired
    bootstrap interval (the same resampled items): above 0, the judge favours length more than people.
    """

    judge: str
    reference: str
    order: str
    unit: str
    judge_longer: Estimate
    reference_longer: Estimate
    difference: Estimate
    n_items: int
    confidence_level: float
    n_resamples: int

    def to_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference, "order": self.order, "unit": self.unit,
                **self.judge_longer.to_dict("judge_longer"), **self.reference_longer.to_dict("reference_longer"),
                **self.difference.to_dict("difference"), "n_items": self.n_items,
                "confidence_level": self.confidence_level, "n_resamples": self.n_resamples}


def output_lengths(data: PairwiseData, *, unit: LengthUnit = "words") -> tuple[np.ndarray, np.ndarray]:
    """Lengths of outputs A and B per item, in whitespace-separated words or characters.

    References
    ----------
    docs/methods.md sec. 18.6.
    """
    check_choice(unit, "unit", LENGTH_UNITS)
    if not data.has_texts:
        raise DatasetError(f"dataset {data.id!r} does not carry the outputs' texts: length preference needs them")
    size = (lambda t: len(t.split())) if unit == "words" else len
    return (np.array([size(t) for t in data.output_a], dtype=float),
            np.array([size(t) for t in data.output_b], dtype=float))


def length_masks(data: PairwiseData, names: Sequence[str], ref: np.ndarray, *, order: str,
                 unit: str) -> tuple[np.ndarray, ...]:
    """What the length preference counts: (judge_named, judge_long) per item, judge and order read (n, J, O), the
    verdicts naming a winner on items whose outputs differ in length and those naming the longer one;
    (ref_named, ref_long) per item for the reference codes ``ref``; and ``scope`` (n, J), the items counted for
    each judge (it names a winner in an order read and the reference names one).

    References
    ----------
    docs/methods.md sec. 18.6.
    """
    length_a, length_b = output_lengths(data, unit=unit)
    longer = np.where(length_a > length_b, A, np.where(length_b > length_a, B, MISSING))  # (n,)
    differs = longer != MISSING
    v = data.verdicts[:, [data.rater_index(j) for j in names], :][:, :, list(kern.order_slots(order))]
    judge_named = ((v == A) | (v == B)) & differs[:, None, None]
    judge_long = judge_named & (v == longer[:, None, None])
    ref_named = ((ref == A) | (ref == B)) & differs
    ref_long = ref_named & (ref == longer)
    # The reference's share on the items each judge was counted on (so the two shares compare like with like).
    scope = judge_named.any(axis=2) & ref_named[:, None]
    return judge_named, judge_long, ref_named, ref_long, scope


def length_preference(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    reference: str = "auto",
    order: LengthOrder = "average",
    unit: LengthUnit = "words",
    no_majority: NoMajority = "tie",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> tuple[LengthPreference, ...]:
    """Share of verdicts choosing the longer output, for each judge and for the reference, and the gap.

    Items whose two outputs have the same length are left out; ties and invalid verdicts name no winner and
    are not counted. ``order='average'`` pools the judge's verdicts in both orders (each item then counts
    twice for the judge). The difference's interval resamples items once for both shares.

    References
    ----------
    docs/methods.md sec. 18.6; Dubois et al. (2024), Length-Controlled AlpacaEval; Zheng et al. (2023),
    MT-Bench (verbosity bias).
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    check_choice(order, "order", LENGTH_ORDERS)
    check_choice(no_majority, "no_majority", NO_MAJORITY)
    level, k, batch = kern.check_resampling(confidence_level, n_resamples, batch)
    names = _judges(data, judges)
    ref, what = resolve_reference(data, reference, no_majority=no_majority)
    judge_named, judge_long, ref_named, ref_long, scope = length_masks(data, names, ref, order=order, unit=unit)
    jn = np.where(scope[..., None], judge_named, False).sum(axis=2).astype(float)
    jl = np.where(scope[..., None], judge_long, False).sum(axis=2).astype(float)
    rn = (scope & ref_named[:, None]).astype(float)
    rl = (scope & ref_long[:, None]).astype(float)
    columns = np.stack([np.stack([jn, jl], -1), np.stack([rn, rl], -1)], axis=2)  # (n, J, 2, 2)
    boot = kern.bootstrap(columns, kern.accuracy_from_sums, n_resamples=k, rng=kern.seed_of(rng), batch=batch,
                          confidence_level=level)
    estimate, low, high, defined = boot.estimate, boot.low, boot.high, boot.defined
    diff = boot.resampled[..., 0] - boot.resampled[..., 1]  # (k, J): the same resampled items for both shares
    dlow, dhigh, ddefined = kern.percentile_bounds(diff, level)
    out = []
    for j, name in enumerate(names):
        n_items = int(scope[:, j].sum())
        shares = [Estimate(float(estimate[j, q]), float(low[j, q]), float(high[j, q]),
                           int(columns[:, j, q, 0].sum()), int(defined[j, q])) for q in range(2)]
        gap = Estimate(float(estimate[j, 0] - estimate[j, 1]), float(dlow[j]), float(dhigh[j]), n_items,
                       int(ddefined[j]))
        out.append(LengthPreference(judge=name, reference=what, order=order, unit=unit, judge_longer=shares[0],
                                    reference_longer=shares[1], difference=gap, n_items=n_items,
                                    confidence_level=level, n_resamples=k))
    return tuple(out)


__all__ = ["Estimate", "LengthPreference", "PositionalBias", "length_preference", "output_lengths",
           "positional_bias"]
