"""Scores as verdicts: judges that score each output (LLMBar's Rating) read as pairwise verdicts.

A judge that gives output A the score ``x_A`` and output B ``x_B`` says "A" when ``x_A - x_B > eps``, "B" when
``x_B - x_A > eps`` and "tie" otherwise. With ``eps = 0`` only equal scores tie. **Tie-calibrated accuracy**
(Deutsch, Foster & Freitag 2023) chooses the ``eps`` that maximises agreement with the reference (the smallest
maximiser) and reports it with the accuracy; the bootstrap re-chooses ``eps`` in every resample, so the
interval includes the choice. The search is the project's tie-calibration kernel
(:mod:`metaeval_core.stats.tiecal`): items sorted once by ``|x_A - x_B|``, one cumulative sum per resample.

References: docs/methods.md sec. 18.9 and sec. 11.2; Deutsch, Foster & Freitag (2023) sec. 4.
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
from metaeval_core.judges.model import A, B, MISSING, NO_MAJORITY, TIE, NoMajority, PairwiseData
from metaeval_core.stats.resampling import _counts
from metaeval_core.stats.tiecal import _entry_tables, _search

ScoreInvalid = Literal["wrong", "drop"]
SCORE_INVALID: tuple[str, ...] = get_args(ScoreInvalid)


@dataclass(frozen=True)
class ScoreAccuracy(ToFrame):
    """A scoring judge's pairwise accuracy against the reference, with and without tie calibration.

    ``estimate`` (interval ``low``/``high``) is the tie-calibrated accuracy at ``epsilon`` (in the judge's
    score units; the smallest maximiser on all items); ``accuracy_at_zero`` the accuracy when only equal
    scores tie; ``n_items`` the items counted (the judge's own items: those it gave a verdict or a score on);
    ``n_unscored`` the items in scope without both scores (counted wrong, or left out, as ``invalid`` says);
    ``n_equal`` the items with equal scores; ``n_unjudged`` the items of the data the judge never saw (not in
    scope, never counted); ``epsilon_low``/``epsilon_high`` the central range of the resamples' epsilons.
    """

    judge: str
    reference: str
    estimate: float
    low: float
    high: float
    epsilon: float
    epsilon_low: float
    epsilon_high: float
    accuracy_at_zero: float
    n_items: int
    n_unscored: int
    n_equal: int
    invalid: str
    confidence_level: float
    n_resamples: int
    n_defined: int
    n_unjudged: int = 0

    def to_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference, "estimate": kern.num(self.estimate),
                "low": kern.num(self.low), "high": kern.num(self.high), "epsilon": kern.num(self.epsilon),
                "epsilon_low": kern.num(self.epsilon_low), "epsilon_high": kern.num(self.epsilon_high),
                "accuracy_at_zero": kern.num(self.accuracy_at_zero), "n_items": self.n_items,
                "n_unscored": self.n_unscored, "n_equal": self.n_equal, "invalid": self.invalid,
                "confidence_level": self.confidence_level, "n_resamples": self.n_resamples,
                "n_defined": self.n_defined, "n_unjudged": self.n_unjudged}


def scoring_judges(data: PairwiseData) -> tuple[str, ...]:
    """The raters that scored at least one output.

    References
    ----------
    docs/methods.md sec. 18.9.
    """
    if data.scores is None:
        return ()
    scored = np.isfinite(data.scores).any(axis=(0, 2))
    return tuple(r.id for r, s in zip(data.raters, scored) if s)


def _calibrate(weights: np.ndarray, order: np.ndarray, key: np.ndarray, valid, correct, gain, unscored):
    """Tie-calibrated accuracy and epsilon for (b, n) item weights (the items sorted by ``key`` = |dx|)."""
    gains = weights[:, order] * gain[order]
    base = weights @ correct
    total = weights @ (valid | unscored).astype(np.float64)
    return _search(key, gains, base, total, np.ones(weights.shape[0], dtype=bool))


def score_accuracy(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    reference: str = "auto",
    invalid: ScoreInvalid = "wrong",
    no_majority: NoMajority = "tie",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> tuple[ScoreAccuracy, ...]:
    """Tie-calibrated pairwise accuracy of the judges' scores against the reference (A, B or tie).

    Parameters
    ----------
    judges : sequence of str, optional
        Raters with scores (default: every rater that scored an output, :func:`scoring_judges`).
    reference, no_majority
        As :func:`~metaeval_core.judges.judge_agreement`.
    invalid : {'wrong', 'drop'}
        An item in scope without both scores counts as wrong, or is left out. In scope are the judge's own
        items (a verdict in some order or a score) with a reference: where judges cover different items
        (LLMBar's Rating strategies judged the LLMBar sets only) an item a judge never saw is not counted.
    confidence_level, n_resamples, rng, batch
        Percentile bootstrap over the judge's own items, epsilon re-chosen in every resample; every judge
        draws with the same seed (judges with the same items see the same resampled items).

    References
    ----------
    docs/methods.md sec. 18.9 and 11.2; Deutsch, Foster & Freitag (2023).
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    check_choice(invalid, "invalid", SCORE_INVALID)
    check_choice(no_majority, "no_majority", NO_MAJORITY)
    level, k, batch = kern.check_resampling(confidence_level, n_resamples, batch)
    names = list(scoring_judges(data)) if judges is None else _judges(data, judges)
    if not names:
        raise DatasetError(f"dataset {data.id!r} has no judge that scores outputs (scores as verdicts need "
                           "score_a and score_b)")
    ref, what = resolve_reference(data, reference, no_majority=no_majority)
    za = np.where(ref == A, 1.0, np.where(ref == MISSING, np.nan, 0.0))
    zb = np.where(ref == B, 1.0, np.where(ref == MISSING, np.nan, 0.0))
    seed = kern.seed_of(rng)
    out = []
    for name in names:
        r = data.rater_index(name)
        if data.scores is None or not np.isfinite(data.scores[:, r]).any():
            raise DatasetError(f"rater {name!r} gave no scores: scores as verdicts need score_a and score_b")
        own = data.covered(name) | np.isfinite(data.scores[:, r]).any(axis=1)
        n = int(own.sum())
        xa, xb = data.scores[own, r, 0], data.scores[own, r, 1]
        valid, correct, gain, dx = _entry_tables(xa, xb, za[own], zb[own])
        in_scope = ref[own] != MISSING
        unscored = in_scope & ~valid if invalid == "wrong" else np.zeros_like(valid)
        key_all = np.where(valid, dx, np.inf)
        order = np.argsort(key_all, kind="stable")
        key = key_all[order]
        correct_f, gain_f = correct.astype(np.float64), gain.astype(np.float64)
        ones = np.ones((1, n))
        accuracy, epsilon = _calibrate(ones, order, key, valid, correct_f, gain_f, unscored)
        zero_total = float((valid | unscored).sum())
        at_zero = float(correct.sum() / zero_total) if zero_total else float("nan")
        resampled = np.empty(k)
        epsilons = np.empty(k)
        for sl, idx in kern.draw_chunks("items", seed, k, n, 2 * n, batch):
            acc, eps = _calibrate(_counts(idx, n), order, key, valid, correct_f, gain_f, unscored)
            resampled[sl], epsilons[sl] = acc, eps
        low, high, defined = kern.percentile_bounds(resampled[:, None], level)
        elow, ehigh, _ = kern.percentile_bounds(epsilons[:, None], level)
        out.append(ScoreAccuracy(
            judge=name, reference=what, estimate=float(accuracy[0]), low=float(low[0]), high=float(high[0]),
            epsilon=float(epsilon[0]), epsilon_low=float(elow[0]), epsilon_high=float(ehigh[0]),
            accuracy_at_zero=at_zero, n_items=int(zero_total), n_unscored=int((in_scope & ~valid).sum()),
            n_equal=int((valid & (dx == 0)).sum()), invalid=invalid, confidence_level=level, n_resamples=k,
            n_defined=int(defined[0]), n_unjudged=data.n_items - n))
    return tuple(out)


def verdicts_from_scores(score_a: np.ndarray, score_b: np.ndarray, *, epsilon: float = 0.0) -> np.ndarray:
    """Verdict codes from two score arrays: A when ``a - b > epsilon``, B when ``b - a > epsilon``, else a tie;
    :data:`~metaeval_core.judges.model.MISSING` where a score is NaN.

    References
    ----------
    docs/methods.md sec. 18.9.
    """
    a, b = np.asarray(score_a, dtype=float), np.asarray(score_b, dtype=float)
    with np.errstate(invalid="ignore"):
        d = a - b
        out = np.where(d > epsilon, A, np.where(-d > epsilon, B, TIE))
    return np.where(np.isnan(d), MISSING, out).astype(np.int8)


__all__ = ["ScoreAccuracy", "score_accuracy", "scoring_judges", "verdicts_from_scores"]
