"""How much do the raters agree with each other? A rater x rater matrix (Cohen's kappa, raw agreement,
Krippendorff's alpha) of people and judges, and each judge's macro precision, recall and F1 against the reference.

Every pair of raters is compared on the items both rated (in one presentation order; people see the original
one), so the matrix mixes people and judges: a judge that agrees with each annotator as the annotators agree with
each other reads off the same table.

References: docs/methods.md sec. 18.12; Cohen (1960); Krippendorff (2011); Wang et al. (2024), PandaLM
(annotator kappas; precision, recall and F1 of judges).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np

from metaeval_core._checks import check_choice
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges.agreement import resolve_reference
from metaeval_core.judges.model import A, B, INVALID, MISSING, NO_MAJORITY, ORDERS, TIE, NoMajority, PairwiseData

PairInvalid = Literal["drop", "wrong", "tie", "as-verdict"]
PAIR_INVALID: tuple[str, ...] = get_args(PairInvalid)
_CATEGORIES = 5  # A, B, tie, invalid of the row rater, invalid of the column rater ('wrong': they never match)


@dataclass(frozen=True)
class RaterAgreement(ToFrame):
    """Agreement of every two raters on the items both rated.

    Attributes
    ----------
    raters, kinds : tuple of str
        The raters (people first, then gold labels, then judges) and their kinds.
    kappa, accuracy, alpha : numpy.ndarray
        ``(R, R)`` symmetric: Cohen's kappa, the share of common items with the same verdict, and Krippendorff's
        alpha (nominal, the two raters as coders); NaN where undefined (no common item, one category only). The
        diagonal is 1 where the rater has any counted verdict.
    n_common : numpy.ndarray
        ``(R, R)`` items both raters rated under the ``invalid`` convention.
    order : str
        The presentation order read (``'original'``: A shown first).
    invalid : str
        ``'drop'``: an item where either verdict is invalid is left out; ``'wrong'``: an invalid verdict
        agrees with nothing (not even another invalid one); ``'tie'``: read as a tie; ``'as-verdict'``: a
        category like another (two invalid verdicts agree: LLMBar's convention).
    """

    raters: tuple[str, ...]
    kinds: tuple[str, ...]
    kappa: np.ndarray
    accuracy: np.ndarray
    alpha: np.ndarray
    n_common: np.ndarray
    order: str
    invalid: str

    def to_records(self) -> list[dict]:
        out = []
        for i, a in enumerate(self.raters):
            for j, b in enumerate(self.raters):
                out.append({"rater": a, "kind": self.kinds[i], "other": b, "other_kind": self.kinds[j],
                            "kappa": kern.num(self.kappa[i, j]), "accuracy": kern.num(self.accuracy[i, j]),
                            "alpha": kern.num(self.alpha[i, j]), "n_common": int(self.n_common[i, j]),
                            "order": self.order, "invalid": self.invalid})
        return out

    def matrix(self, statistic: Literal["kappa", "accuracy", "alpha"] = "kappa") -> np.ndarray:
        check_choice(statistic, "statistic", ("kappa", "accuracy", "alpha"))
        return getattr(self, statistic)


def _codes(v: np.ndarray, invalid: str, *, column: bool) -> np.ndarray:
    """Category codes 0..4 or -1 (not counted) under the invalid convention."""
    out = v.astype(np.int64)
    if invalid == "tie":
        out = np.where(out == INVALID, TIE, out)
    elif invalid == "drop":
        out = np.where(out == INVALID, MISSING, out)
    elif invalid == "wrong" and column:
        out = np.where(out == INVALID, INVALID + 1, out)  # a category of its own on each side: never matches
    return out


def _pair_confusion(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    keep = (x != MISSING) & (y != MISSING)
    return np.bincount(x[keep] * _CATEGORIES + y[keep], minlength=_CATEGORIES ** 2).astype(np.float64)


def rater_agreement(
    data: PairwiseData,
    *,
    raters: Sequence[str] | None = None,
    order: Literal["original", "swapped"] = "original",
    invalid: PairInvalid = "drop",
) -> RaterAgreement:
    """Cohen's kappa, raw agreement and Krippendorff's alpha between every two raters, on the items both rated.

    Parameters
    ----------
    data : PairwiseData
    raters : sequence of str, optional
        Default: every person, gold label and judge with a verdict on these items.
    order : {'original', 'swapped'}
        The presentation order read (people and gold labels have the original one only).
    invalid : {'drop', 'wrong', 'tie', 'as-verdict'}
        See :class:`RaterAgreement`.

    Returns
    -------
    RaterAgreement

    References
    ----------
    docs/methods.md sec. 18.12; Cohen (1960); Krippendorff (2011).
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    check_choice(order, "order", ORDERS)
    check_choice(invalid, "invalid", PAIR_INVALID)
    if raters is None:
        rank = {"human": 0, "gold": 1, "judge": 2}
        names = [r.id for r in sorted(data.raters, key=lambda r: rank[r.kind]) if data.covered(r.id).any()]
    elif isinstance(raters, str) or not all(isinstance(r, str) for r in raters):
        raise TypeError("raters must be a sequence of rater ids (a list of strings) or None")
    else:
        names = list(raters)
    if len(names) < 2:
        raise ValueError(f"raters: an agreement matrix needs at least two raters; got {len(names)}")
    slot = ORDERS.index(order)
    verdicts = data.verdicts[:, [data.rater_index(r) for r in names], slot]
    rows = [_codes(verdicts[:, k], invalid, column=False) for k in range(len(names))]
    cols = [_codes(verdicts[:, k], invalid, column=True) for k in range(len(names))]
    size = len(names)
    confusion = np.zeros((size, size, _CATEGORIES ** 2))
    for i in range(size):
        for j in range(size):
            confusion[i, j] = _pair_confusion(rows[i], cols[j])
    c = confusion.reshape(size, size, _CATEGORIES, _CATEGORIES)
    n_common = c.sum(axis=(2, 3))
    diagonal = np.trace(c, axis1=2, axis2=3)
    accuracy = np.full((size, size), np.nan)
    np.divide(diagonal, n_common, out=accuracy, where=n_common > 0)
    kappa = kern.kappa_from_confusion(confusion)
    coincidences = (c + np.swapaxes(c, 2, 3)).reshape(size, size, -1)
    alpha = kern.alpha_from_coincidences(coincidences, _CATEGORIES)
    for k in range(size):  # a rater with itself: perfect where it has verdicts (kappa undefined on one category)
        if n_common[k, k] > 0:
            kappa[k, k] = alpha[k, k] = accuracy[k, k] = 1.0
    return RaterAgreement(raters=tuple(names), kinds=tuple(data.rater(r).kind for r in names), kappa=kappa,
                          accuracy=accuracy, alpha=alpha, n_common=n_common.astype(np.int64), order=order,
                          invalid=invalid)


@dataclass(frozen=True)
class ClassificationScores(ToFrame):
    """A judge's verdicts read as a classifier of the reference: macro precision, recall and F1.

    ``labels`` are the classes averaged over (the union of the reference's and the judge's classes among A, B,
    tie and, under ``invalid='wrong'``, invalid), ``precision``/``recall``/``f1`` per class (0 where a class
    is never predicted or never true, as sklearn's ``zero_division=0``), and ``macro_*`` their unweighted means;
    ``accuracy`` the share of counted items that match, ``n_items`` those items.
    """

    judge: str
    reference: str
    order: str
    invalid: str
    labels: tuple[str, ...]
    precision: tuple[float, ...]
    recall: tuple[float, ...]
    f1: tuple[float, ...]
    macro_precision: float
    macro_recall: float
    macro_f1: float
    accuracy: float
    n_items: int

    def to_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference, "order": self.order, "invalid": self.invalid,
                "labels": list(self.labels), "precision": [kern.num(v) for v in self.precision],
                "recall": [kern.num(v) for v in self.recall], "f1": [kern.num(v) for v in self.f1],
                "macro_precision": kern.num(self.macro_precision), "macro_recall": kern.num(self.macro_recall),
                "macro_f1": kern.num(self.macro_f1), "accuracy": kern.num(self.accuracy), "n_items": self.n_items}


_LABELS = {A: "A", B: "B", TIE: "tie", INVALID: "invalid"}


def classification_scores(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    reference: str = "auto",
    order: Literal["original", "swapped"] = "original",
    invalid: Literal["wrong", "drop", "tie"] = "wrong",
    no_majority: NoMajority = "tie",
) -> tuple[ClassificationScores, ...]:
    """Macro precision, recall and F1 of each judge's verdicts against the reference (as PandaLM reports them).

    The classes are A, B and tie (and invalid, under ``invalid='wrong'``, when the judge gave any: a class the
    reference never has, so its recall is 0 and it lowers the macro means as sklearn's ``average='macro'``
    does); ``'drop'`` leaves items with an invalid verdict out, ``'tie'`` reads them as ties.

    References
    ----------
    docs/methods.md sec. 18.12; Wang et al. (2024), PandaLM.
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    check_choice(order, "order", ORDERS)
    check_choice(invalid, "invalid", ("wrong", "drop", "tie"))
    check_choice(no_majority, "no_majority", NO_MAJORITY)
    names = list(data.judges_of()) if judges is None else list(judges)
    if not names:
        raise DatasetError(f"dataset {data.id!r} has no judge to score")
    ref, what = resolve_reference(data, reference, no_majority=no_majority)
    out = []
    for name in names:
        v = data.verdicts[:, data.rater_index(name), ORDERS.index(order)].astype(np.int64)
        if invalid == "tie":
            v = np.where(v == INVALID, TIE, v)
        keep = (v != MISSING) & (ref != MISSING) & ((v != INVALID) if invalid == "drop" else True)
        x, y = v[keep], ref[keep].astype(np.int64)
        classes = sorted(set(np.unique(x).tolist()) | set(np.unique(y).tolist()))
        precision, recall, f1 = [], [], []
        for c in classes:
            tp = float(np.sum((x == c) & (y == c)))
            predicted, true = float(np.sum(x == c)), float(np.sum(y == c))
            p = tp / predicted if predicted else 0.0
            r = tp / true if true else 0.0
            precision.append(p)
            recall.append(r)
            f1.append(2 * p * r / (p + r) if p + r else 0.0)
        nan = float("nan")
        out.append(ClassificationScores(
            judge=name, reference=what, order=order, invalid=invalid, labels=tuple(_LABELS[c] for c in classes),
            precision=tuple(precision), recall=tuple(recall), f1=tuple(f1),
            macro_precision=float(np.mean(precision)) if classes else nan,
            macro_recall=float(np.mean(recall)) if classes else nan,
            macro_f1=float(np.mean(f1)) if classes else nan,
            accuracy=float(np.mean(x == y)) if x.size else nan, n_items=int(x.size)))
    return tuple(out)


__all__ = ["ClassificationScores", "PAIR_INVALID", "RaterAgreement", "classification_scores", "rater_agreement"]
