"""The Alternative Annotator Test (alt-test): may a judge replace the human annotators?

For each annotator ``j`` left out in turn, on the items ``j`` rated that the judge rated and at least one other
annotator rated: the judge's and ``j``'s alignment with the remaining annotators (accuracy for verdicts and
labels: the share of the others giving the same answer; negative RMSE or negative mean absolute error for
scores), the winning indicators ``W_judge = [S_judge >= S_j]`` and ``W_j = [S_j >= S_judge]`` (a tie in
alignment counts for both), and a one-sided one-sample t-test of ``d = W_j - W_judge`` against ``epsilon``
(``H0: mean(d) >= epsilon``, ``H1: mean(d) < epsilon``). The p-values over annotators are corrected with
Benjamini-Yekutieli at ``q``; the *winning rate* is the share of annotators whose null is rejected, the judge
*passes* at a winning rate of at least 0.5, and the *advantage probability* is the mean over annotators of
``mean(W_judge)``.

``epsilon`` is the cost-benefit allowance given to the judge: the paper's rule of thumb is 0.2 against experts,
0.15 against skilled annotators, 0.1 against crowd workers. The t-test assumes roughly normal means: annotators
with fewer than ``min_items`` (the paper: 30) items are left out and named, with the paper's advice.

References: docs/methods.md sec. 18.13; Calderon, Reichart & Dror (ACL 2025), The Alternative Annotator Test for
LLM-as-a-Judge.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, Sequence, get_args

import numpy as np
from scipy import stats

from metaeval_core._checks import check_choice, check_int, check_probability
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges.model import INVALID, MISSING, ORDERS, PairwiseData
from metaeval_core.stats.significance import correct_pvalues

Alignment = Literal["accuracy", "neg-rmse", "neg-abs"]
ALIGNMENTS: tuple[str, ...] = get_args(Alignment)
#: The paper's rule of thumb for epsilon, by who the annotators are.
EPSILONS = {"experts": 0.2, "skilled": 0.15, "crowd": 0.1}
MIN_ITEMS = 30
SMALL_ADVICE = ("the alt-test's t-test needs about 30 items per annotator for its normal approximation; the paper "
                "advises annotating more items (50-100 suffice in most cases), or a non-parametric test such as "
                "Wilcoxon's signed-rank test below 30")


@dataclass(frozen=True)
class AnnotatorTest:
    """The alt-test against one left-out annotator.

    ``judge_alignment``/``annotator_alignment`` are the mean alignments with the remaining annotators,
    ``judge_wins``/``annotator_wins`` the means of the winning indicators (``judge_wins`` is this annotator's
    advantage probability), ``difference`` the mean of ``W_annotator - W_judge``, ``statistic`` and ``pvalue``
    the one-sided t-test against ``epsilon``, ``pvalue_corrected`` its Benjamini-Yekutieli value over the
    annotators tested and ``rejected`` whether the judge wins against this annotator (corrected p <= q).
    """

    annotator: str
    n_items: int
    judge_alignment: float
    annotator_alignment: float
    judge_wins: float
    annotator_wins: float
    difference: float
    statistic: float
    pvalue: float
    pvalue_corrected: float
    rejected: bool

    def to_dict(self) -> dict:
        return {"annotator": self.annotator, "n_items": self.n_items,
                "judge_alignment": kern.num(self.judge_alignment),
                "annotator_alignment": kern.num(self.annotator_alignment), "judge_wins": kern.num(self.judge_wins),
                "annotator_wins": kern.num(self.annotator_wins), "difference": kern.num(self.difference),
                "statistic": kern.num(self.statistic), "pvalue": kern.num(self.pvalue),
                "pvalue_corrected": kern.num(self.pvalue_corrected), "rejected": bool(self.rejected)}


@dataclass(frozen=True)
class AltTest(ToFrame):
    """The alt-test of one judge: per-annotator tests, winning rate, pass, advantage probability.

    ``skipped`` names the annotators left out for having fewer than ``min_items`` items (with their counts);
    ``notes`` say what a reader must know (two annotators only, annotators skipped).
    """

    judge: str
    alignment: str
    epsilon: float
    q: float
    min_items: int
    annotators: tuple[AnnotatorTest, ...]
    skipped: tuple[tuple[str, int], ...]
    advantage_probability: float
    winning_rate: float
    passes: bool
    notes: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"judge": self.judge, "alignment": self.alignment, "epsilon": self.epsilon, "q": self.q,
                "min_items": self.min_items, "advantage_probability": kern.num(self.advantage_probability),
                "winning_rate": kern.num(self.winning_rate), "passes": bool(self.passes),
                "annotators": [a.to_dict() for a in self.annotators],
                "skipped": [{"annotator": a, "n_items": n} for a, n in self.skipped], "notes": list(self.notes)}

    def to_records(self) -> list[dict]:
        return [{"judge": self.judge, **a.to_dict(), "epsilon": self.epsilon, "alignment": self.alignment}
                for a in self.annotators]


def benjamini_yekutieli(pvalues: np.ndarray) -> np.ndarray:
    """Benjamini-Yekutieli adjusted p-values: Benjamini-Hochberg's times ``H_m = 1 + 1/2 + ... + 1/m``, capped
    at 1 (``scipy.stats.false_discovery_control(method='by')``)."""
    p = np.asarray(pvalues, dtype=float)
    m = int(np.sum(~np.isnan(p)))
    if m == 0:
        return p.copy()
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    return np.minimum(1.0, correct_pvalues(p, method="bh") * harmonic)


def _alignment(values: np.ndarray, others: np.ndarray, alignment: str) -> np.ndarray:
    """(n,) answers against (n, A) remaining annotators' answers (NaN: none) -> (n,) alignment."""
    present = ~np.isnan(others)
    count = present.sum(axis=1)
    if alignment == "accuracy":
        same = present & (others == values[:, None])
        return same.sum(axis=1) / count
    gap = np.where(present, others - values[:, None], 0.0)
    if alignment == "neg-rmse":
        return -np.sqrt((gap ** 2).sum(axis=1) / count)
    return -np.abs(gap).sum(axis=1) / count


def _ttest_less(d: np.ndarray, epsilon: float) -> tuple[float, float]:
    """One-sided one-sample t-test of mean(d) < epsilon; a constant sample has no variance, so its p-value is
    the limit: 0 when its mean is below epsilon, else 1."""
    if d.size < 2:
        return float("nan"), float("nan")
    if np.all(d == d[0]):
        return (float("-inf"), 0.0) if d[0] < epsilon else (float("inf"), 1.0)
    result = stats.ttest_1samp(d, epsilon, alternative="less")
    return float(result.statistic), float(result.pvalue)


def _check(epsilon, q, alignment, min_items) -> tuple[float, float, str, int]:
    check_choice(alignment, "alignment", ALIGNMENTS)
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 <= float(epsilon) < 1.0:
        raise ValueError(f"epsilon must be a number in [0, 1) (the paper: 0.2 experts, 0.15 skilled, 0.1 crowd); "
                         f"got {epsilon!r}")
    q = check_probability(q, "q")
    min_items = check_int(min_items, "min_items", minimum=2)
    return float(epsilon), q, alignment, min_items


def alt_test_arrays(judge: np.ndarray, annotators: np.ndarray, *, names: Sequence[str], judge_name: str = "judge",
                    alignment: Alignment = "accuracy", epsilon: float = 0.2, q: float = 0.05,
                    min_items: int = MIN_ITEMS) -> AltTest:
    """The alt-test of one judge from arrays: ``judge`` (n,) answers and ``annotators`` (A, n), NaN where none.

    Categorical answers are compared for equality (``alignment='accuracy'``); numbers by negative RMSE or
    negative mean absolute error. Items with fewer than two annotators' answers, or without the judge's, are
    not used.

    Raises
    ------
    ValueError
        Fewer than two annotators, or no annotator with ``min_items`` usable items (with the paper's advice).

    References
    ----------
    docs/methods.md sec. 18.13; Calderon, Reichart & Dror (ACL 2025).
    """
    epsilon, q, alignment, min_items = _check(epsilon, q, alignment, min_items)
    judge = np.asarray(judge, dtype=float)
    annotators = np.asarray(annotators, dtype=float)
    if annotators.ndim != 2 or annotators.shape[1] != judge.shape[0]:
        raise ValueError(f"annotators must be (annotators, items) with {judge.shape[0]} items; got {annotators.shape}")
    names = [str(n) for n in names]
    if len(names) != annotators.shape[0]:
        raise ValueError(f"names: one per annotator ({annotators.shape[0]}); got {len(names)}")
    if len(names) < 2:
        raise ValueError(f"the alt-test needs at least two annotators (each is left out and compared with the "
                         f"others); got {len(names)}")
    present = ~np.isnan(annotators)
    usable = (present.sum(axis=0) >= 2) & ~np.isnan(judge)
    tests, skipped, notes = [], [], []
    for a, name in enumerate(names):
        rows = usable & present[a]
        n = int(rows.sum())
        if n < min_items:
            skipped.append((name, n))
            continue
        others = np.delete(annotators, a, axis=0)[:, rows].T
        s_judge = _alignment(judge[rows], others, alignment)
        s_human = _alignment(annotators[a, rows], others, alignment)
        w_judge = (s_judge >= s_human).astype(float)
        w_human = (s_human >= s_judge).astype(float)
        statistic, pvalue = _ttest_less(w_human - w_judge, epsilon)
        tests.append([name, n, float(s_judge.mean()), float(s_human.mean()), float(w_judge.mean()),
                      float(w_human.mean()), float((w_human - w_judge).mean()), statistic, pvalue])
    if not tests:
        shown = ", ".join(f"{a} ({n})" for a, n in skipped)
        raise ValueError(f"{judge_name}: no annotator has {min_items} usable items (items: {shown}): {SMALL_ADVICE}")
    corrected = benjamini_yekutieli(np.array([t[-1] for t in tests]))
    rows = tuple(AnnotatorTest(*t, pvalue_corrected=float(c), rejected=bool(c <= q)) for t, c in zip(tests, corrected))
    if len(names) == 2:
        notes.append("Two annotators only: each left-out annotator is compared with the other alone, without a "
                     "consensus; the paper recommends at least three.")
    if skipped:
        notes.append("Left out (fewer than {0} items): {1}; {2}.".format(
            min_items, ", ".join(f"{a} ({n})" for a, n in skipped), SMALL_ADVICE))
    winning = float(np.mean([r.rejected for r in rows]))
    return AltTest(judge=judge_name, alignment=alignment, epsilon=epsilon, q=q, min_items=min_items, annotators=rows,
                   skipped=tuple(skipped), advantage_probability=float(np.mean([r.judge_wins for r in rows])),
                   winning_rate=winning, passes=winning >= 0.5, notes=tuple(notes))


def alt_test(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    epsilon: float = 0.2,
    q: float = 0.05,
    order: Literal["original", "swapped"] = "original",
    min_items: int = MIN_ITEMS,
) -> tuple[AltTest, ...]:
    """The alt-test of each judge against the human annotators of pairwise verdicts (alignment: accuracy).

    Annotators' invalid verdicts are no answer; a judge's invalid verdict is an answer that matches no one.
    The judges' verdicts in ``order`` (people see the original one).

    Raises
    ------
    DatasetError
        Fewer than two human annotators (a gold label is not a person to leave out).

    References
    ----------
    docs/methods.md sec. 18.13; Calderon, Reichart & Dror (ACL 2025).
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    check_choice(order, "order", ORDERS)
    if len(data.humans) < 2:
        raise DatasetError(f"dataset {data.id!r} has {len(data.humans)} human annotator(s): the alt-test leaves out "
                           "one annotator at a time and compares the judge with the others, so it needs at least "
                           "two identified annotators (three or more recommended); a gold label is not one")
    names = list(data.judges_of()) if judges is None else list(judges)
    if not names:
        raise DatasetError(f"dataset {data.id!r} has no judge to test")
    humans = data.verdicts[:, [data.rater_index(h) for h in data.humans], 0].T.astype(float)
    humans[(humans == MISSING) | (humans == INVALID)] = np.nan
    out = []
    for name in names:
        v = data.verdicts[:, data.rater_index(name), ORDERS.index(order)].astype(float)
        v[v == MISSING] = np.nan  # an invalid verdict (3) stays an answer nobody gives
        out.append(alt_test_arrays(v, humans, names=data.humans, judge_name=name, alignment="accuracy",
                                   epsilon=epsilon, q=q, min_items=min_items))
    return tuple(out)


def alt_test_scores(
    dataset,
    *,
    human: str,
    judges: Sequence[str],
    alignment: Literal["neg-rmse", "neg-abs"] = "neg-rmse",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_items: int = MIN_ITEMS,
    annotators: Literal["as-declared", "persons"] = "as-declared",
) -> tuple[AltTest, ...]:
    """The alt-test on score data: each judge (a measure on the annotators' scale: RMSE and absolute error compare
    numbers, so a metric on another scale always loses) against the annotators of the human measure ``human``,
    each (system, input) cell one item.

    Refused when the annotators are not identified persons: leaving out "annotator 2" means nothing when slot 2
    was filled by different people (HANNA's crowd slots, declared ``'positions'``). An uploaded file does not say
    (``'unknown'``): ``annotators='persons'`` states that each annotator column is one person throughout (an
    upload's ``annotator`` ids), and a note in every result says it was stated, not read; a dataset that declares
    positions is refused whatever is stated.

    References
    ----------
    docs/methods.md sec. 18.13; Calderon, Reichart & Dror (ACL 2025).
    """
    measure = dataset.measure(human)
    if measure.annotators is None:
        raise DatasetError(f"measure {human!r} of {dataset.id!r} keeps no per-annotator scores: the alt-test leaves "
                           "out one annotator at a time")
    check_choice(annotators, "annotators", ("as-declared", "persons"))
    identity = dataset.annotators_are(human)
    stated = annotators == "persons" and identity == "unknown"
    if identity != "persons" and not stated:
        what = ("positions filled by different people" if identity == "positions"
                else "not known to be the same people throughout")
        raise DatasetError(f"the annotators of {human!r} in {dataset.id!r} are {what}: the alt-test leaves out one "
                           "person at a time and compares the judge with the others, so it needs annotators known "
                           "to be the same people throughout"
                           + ("; if each annotator of this file is one person, say so (annotators='persons', "
                              "--annotators-are persons)" if identity == "unknown" else ""))
    check_choice(alignment, "alignment", ("neg-rmse", "neg-abs"))
    per_annotator = measure.annotators.reshape(measure.annotators.shape[0], -1)
    names = [f"annotator {k + 1}" for k in range(per_annotator.shape[0])]
    results = tuple(alt_test_arrays(dataset.measure(j).scores.ravel(), per_annotator, names=names, judge_name=j,
                                    alignment=alignment, epsilon=epsilon, q=q, min_items=min_items) for j in judges)
    if stated:
        note = (f"The annotators of {human!r} were stated to be the same people throughout (the data does not "
                "say so).")
        results = tuple(replace(r, notes=r.notes + (note,)) for r in results)
    return results


__all__ = ["ALIGNMENTS", "AltTest", "AnnotatorTest", "EPSILONS", "MIN_ITEMS", "alt_test", "alt_test_arrays",
           "alt_test_scores", "benjamini_yekutieli"]
