"""The items behind a judge's agreement: the ones it gets wrong, and the ones whose verdict flips with the order.

A judge's accuracy is a share of counted items (:func:`metaeval_core.judges.agreement.judge_agreement`); this
module lists the items in the complement, under the same reference and conventions, with the instruction, both
responses and every rater's verdict, so a reader can see what the judge got wrong. ``view='flips'`` lists the
items judged in both presentation orders whose verdict differs between them (positional inconsistency, as
:func:`metaeval_core.judges.biases.positional_bias` counts it), ``view='longer'`` the items where the judge names
the longer output (:func:`metaeval_core.judges.biases.length_preference`).

References: docs/methods.md sec. 19.5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from metaeval_core._checks import check_choice
from metaeval_core._frames import ToFrame
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges.agreement import resolve_reference
from metaeval_core.judges.biases import (LENGTH_ORDERS, POSITION_BASES, consistency_masks, length_masks,
                                         position_verdicts)
from metaeval_core.judges.model import MISSING, NO_MAJORITY, ORDERS, VERDICTS, PairwiseData

ExampleView = Literal["wrong", "flips", "longer"]
EXAMPLE_VIEWS: tuple[str, ...] = get_args(ExampleView)
ORDER_MODES: tuple[str, ...] = ("original", "swapped", "average", "both")


def verdict_name(code: int) -> str | None:
    """'A', 'B', 'tie', 'invalid', or None for no verdict."""
    return None if code == MISSING else VERDICTS[int(code)]


@dataclass(frozen=True, eq=False)
class JudgeExamples(ToFrame):
    """Items of one judge: those it gets wrong against the reference (``view='wrong'``), or those whose verdict
    differs between the two presentation orders (``view='flips'``).

    ``items`` indexes the dataset's items, in its order. ``n_counted`` is the number of items the statistic
    counts under the conventions (for ``'wrong'``: ``1 - n_items / n_counted`` is the judge's accuracy in orders
    ``'original'``, ``'swapped'`` and ``'both'``; for ``'flips'``: ``1 - n_items / n_counted`` is its positional
    consistency). For ``'longer'``, ``n_counted`` is the items the length preference counts and ``n_hits`` of
    the ``n_verdicts`` verdicts read name the longer output (their ratio is ``judge_longer``; with
    ``order='average'`` an item counts once per order, and it is listed when either verdict names the longer).

    References: docs/methods.md sec. 19.5.
    """

    dataset: str
    judge: str
    view: str
    reference: str
    order: str
    ties: str
    invalid: str
    items: np.ndarray
    n_counted: int
    data: PairwiseData
    n_verdicts: int | None = None
    n_hits: int | None = None

    @property
    def n_items(self) -> int:
        return int(self.items.size)

    def to_records(self, top: int | None = None) -> list[dict]:
        data = self.data
        j = data.rater_index(self.judge)
        ref, _ = resolve_reference(data, self.reference)
        out = []
        chosen = self.items if top is None else self.items[:top]
        for i in chosen:
            i = int(i)
            record = {
                "item": data.items[i],
                "pair_set": data.pair_sets[int(data.pair_set[i])],
                "system_a": data.system_a[i] or None, "system_b": data.system_b[i] or None,
                "judge_original": verdict_name(data.verdicts[i, j, 0]),
                "judge_swapped": verdict_name(data.verdicts[i, j, 1]),
                "reference": verdict_name(ref[i]),
                "instruction": data.inputs[i] or None,
                "output_a": data.output_a[i] or None, "output_b": data.output_b[i] or None,
                "raters": {r.id: {o: verdict_name(data.verdicts[i, k, n]) for n, o in enumerate(ORDERS)
                                  if data.verdicts[i, k, n] != MISSING}
                           for k, r in enumerate(data.raters)
                           if (data.verdicts[i, k] != MISSING).any()},
            }
            out.append(record)
        return out

    def summary(self) -> dict:
        return {"dataset": self.dataset, "judge": self.judge, "view": self.view, "reference": self.reference,
                "order": self.order, "ties": self.ties, "invalid": self.invalid, "n_items": self.n_items,
                "n_counted": self.n_counted,
                **({} if self.n_verdicts is None else {"n_verdicts": self.n_verdicts, "n_hits": self.n_hits})}


def judge_examples(
    data: PairwiseData,
    judge: str,
    *,
    view: ExampleView = "wrong",
    reference: str = "auto",
    order: str = "original",
    ties: str = "three-class",
    invalid: str = "wrong",
    no_majority: str = "tie",
    basis: str = "scores",
    unit: str = "words",
) -> JudgeExamples:
    """The items a judge gets wrong against the reference, whose verdict flips with the order, or where it
    prefers the longer output.

    Parameters
    ----------
    data : PairwiseData
    judge : str
        A rater id.
    view : {'wrong', 'flips', 'longer'}
    reference, order, ties, invalid, no_majority
        As in :func:`metaeval_core.judges.agreement.judge_agreement`: the listed ``'wrong'`` items are exactly
        the counted items the accuracy does not credit (``order='average'`` lists the items wrong in at least
        one order). ``'flips'`` ignores ``reference``, ``order`` and ``ties`` and reads ``invalid`` and
        ``basis`` as :func:`metaeval_core.judges.biases.positional_bias` (the listed items are the ones its
        consistency does not credit). ``'longer'`` reads ``reference``, ``order`` (``'original'``,
        ``'swapped'`` or ``'average'``) and ``unit`` as :func:`metaeval_core.judges.biases.length_preference`.
    basis : {'scores', 'verdicts'}
        ``'flips'`` only: a scoring judge's verdicts from its scores (as the positional bias reads them).
    unit : {'words', 'characters'}
        ``'longer'`` only: how output length is measured.

    References
    ----------
    docs/methods.md sec. 19.5.
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be PairwiseData; got {type(data).__name__}")
    check_choice(view, "view", EXAMPLE_VIEWS)
    check_choice(order, "order", ORDER_MODES)
    check_choice(no_majority, "no_majority", NO_MAJORITY)
    conv = kern.VerdictCounting(ties=ties, invalid=invalid)
    j = data.rater_index(judge)
    if view == "flips":
        check_choice(basis, "basis", POSITION_BASES)
        v, both, *_ = position_verdicts(data, [judge], basis=basis)
        counted, same = consistency_masks(v, both, conv.invalid)
        flips = counted[:, 0] & ~same[:, 0]
        return JudgeExamples(data.id, judge, view, reference, order, ties, invalid, np.flatnonzero(flips),
                             int(counted.sum()), data)
    ref, _ = resolve_reference(data, reference, no_majority=no_majority)
    if view == "longer":
        check_choice(order, "order", LENGTH_ORDERS)
        named, longer, _, _, scope = length_masks(data, [judge], ref, order=order, unit=unit)
        named, longer = named & scope[..., None], longer & scope[..., None]
        return JudgeExamples(data.id, judge, view, reference, order, ties, invalid,
                             np.flatnonzero(longer[:, 0].any(axis=1)), int(scope.sum()), data,
                             n_verdicts=int(named.sum()), n_hits=int(longer.sum()))
    verdicts = kern.read_invalid(data.verdicts[:, j, :], conv.invalid)
    keep = kern.count_mask(verdicts, ref[:, None], conv)
    hit = keep & (verdicts == ref[:, None])
    slots = kern.order_slots(order)
    if len(slots) == 1:
        counted, wrong = keep[:, slots[0]], keep[:, slots[0]] & ~hit[:, slots[0]]
    else:
        counted = keep[:, 0] & keep[:, 1]
        wrong = counted & ~(hit[:, 0] & hit[:, 1])
    return JudgeExamples(data.id, judge, view, reference, order, ties, invalid, np.flatnonzero(wrong),
                         int(counted.sum()), data)


@dataclass(frozen=True, eq=False)
class RankingPairs(ToFrame):
    """The system pairs behind a judge's ranking agreement: each pair of systems with both systems' scores from the
    judge's verdicts and from the reference's, and whether the judge orders the pair as the reference does
    (``concordant``), the other way (``discordant``), or one of them ties it (``tied``). Discordant pairs first.

    With Kendall's tau-b, ``(n_concordant - n_discordant) / sqrt(n_judge_untied * n_reference_untied)`` is the
    agreement the Systems-from-verdicts page shows (the same scores, from all items).

    References: docs/methods.md sec. 19.5.
    """

    dataset: str
    judge: str
    reference: str
    method: str
    order: str
    records: tuple[dict, ...]

    def _count(self, kind: str) -> int:
        return sum(r["agreement"] == kind for r in self.records)

    @property
    def n_pairs(self) -> int:
        return len(self.records)

    @property
    def n_discordant(self) -> int:
        return self._count("discordant")

    @property
    def n_concordant(self) -> int:
        return self._count("concordant")

    @property
    def kendall(self) -> float:
        """Kendall's tau-b from the listed pairs (NaN when either side ties every pair)."""
        judge = sum(r["judge_difference"] != 0 for r in self.records if np.isfinite(r["judge_difference"]))
        ref = sum(r["reference_difference"] != 0 for r in self.records if np.isfinite(r["reference_difference"]))
        if not judge or not ref:
            return float("nan")
        return (self.n_concordant - self.n_discordant) / float(np.sqrt(judge * ref))

    def to_records(self, top: int | None = None) -> list[dict]:
        return [dict(r) for r in (self.records if top is None else self.records[:top])]

    def summary(self) -> dict:
        return {"dataset": self.dataset, "judge": self.judge, "reference": self.reference, "method": self.method,
                "order": self.order, "n_pairs": self.n_pairs, "n_discordant": self.n_discordant,
                "n_concordant": self.n_concordant}


def ranking_pairs(
    data: PairwiseData,
    judge: str,
    *,
    reference: str = "auto",
    method: str = "win-rate",
    order: str = "original",
    no_majority: str = "tie",
) -> RankingPairs:
    """The system pairs a judge's ranking agreement is made of, the ones it orders unlike the reference first.

    The systems are scored as :func:`metaeval_core.judges.systems.ranking_agreement` scores them on all items (win
    rate or Davidson strength, ``order`` for the judge's verdicts); a pair is discordant when the judge's and the
    reference's score differences have opposite signs, tied when either is zero (or undefined).

    References
    ----------
    docs/methods.md sec. 19.5.
    """
    from metaeval_core.judges import systems as sy

    sy._check_system_args(data, method, order, no_majority)
    names, pairs = sy._systems(data)
    data.rater_index(judge)
    kern.judges_in_order(data, [judge], order, every_slot=False)
    ref, what = sy._rater_verdicts(data, reference, order, no_majority)
    own, _ = sy._rater_verdicts(data, judge, order, no_majority)
    columns = pairs.columns([pairs.outcomes(ref), pairs.outcomes(own)])
    scores, _ = sy._scorer(pairs, method, sy._full_sums(columns, (2, pairs.n_pairs, 3)))
    records = []
    for u in range(len(names)):
        for v in range(u + 1, len(names)):
            dr, dj = scores[0, u] - scores[0, v], scores[1, u] - scores[1, v]
            with np.errstate(invalid="ignore"):
                sign = np.sign(dr) * np.sign(dj)
            kind = "discordant" if sign < 0 else "concordant" if sign > 0 else "tied"
            records.append({"system_a": names[u], "system_b": names[v], "agreement": kind,
                            "judge_a": float(scores[1, u]), "judge_b": float(scores[1, v]),
                            "judge_difference": float(dj), "reference_a": float(scores[0, u]),
                            "reference_b": float(scores[0, v]), "reference_difference": float(dr)})
    rank = {"discordant": 0, "tied": 1, "concordant": 2}
    records.sort(key=lambda r: (rank[r["agreement"]], -abs(np.nan_to_num(r["reference_difference"]))))
    return RankingPairs(data.id, judge, what, method, order, tuple(records))
