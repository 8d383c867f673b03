"""score_accuracy scores each judge on its own items: items a judge never saw are not counted as wrong."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from metaeval_core.judges import MISSING, score_accuracy
from tests.core.judges.helpers import loaded, random_data


def _partial(seed: int = 71):
    """j3 scores every output; j2 scores the first 40 of 60 items only (no verdict, no score on the rest)."""
    data = random_data(seed, n=60, gold=True)
    rng = np.random.default_rng(0)
    scores = np.full((data.n_items, data.n_raters, 2), np.nan)
    verdicts = np.array(data.verdicts)
    for name in ("j2", "j3"):
        scores[:, data.rater_index(name)] = rng.integers(1, 6, size=(data.n_items, 2))
    j2 = data.rater_index("j2")
    verdicts[40:, j2] = MISSING
    scores[40:, j2] = np.nan
    return replace(data, scores=scores, verdicts=verdicts)


def _oracle(xa, xb, ref_a, ref_b) -> tuple[float, float]:
    """Slow loop: accuracy at every candidate epsilon (0 and each |dx|), the smallest maximiser; an item
    without both scores is wrong; the reference has no ties here (gold)."""
    best, best_eps = -1.0, 0.0
    for eps in sorted({0.0, *np.abs(xa - xb)[np.isfinite(xa - xb)]}):
        right = 0
        for a, b, ra, rb in zip(xa, xb, ref_a, ref_b):
            if not (np.isfinite(a) and np.isfinite(b)):
                continue
            verdict = "A" if a - b > eps else "B" if b - a > eps else "tie"
            truth = "A" if ra == 1 else "B" if rb == 1 else "tie"
            right += verdict == truth
        if right / len(xa) > best:
            best, best_eps = right / len(xa), eps
    return best, best_eps


def test_a_judge_that_missed_items_is_scored_on_its_own():
    data = _partial()
    both = score_accuracy(data, judges=["j2", "j3"], n_resamples=50, rng=0)
    j2, j3 = both
    alone, = score_accuracy(data.select_items(np.arange(40)), judges=["j2"], n_resamples=50, rng=0)
    assert (j2.n_items, j2.n_unjudged, j2.n_unscored) == (40, 20, 0)
    assert (j3.n_items, j3.n_unjudged) == (60, 0)
    # the same numbers as on the 40 items alone: estimate, interval and the resampled epsilons
    assert (j2.estimate, j2.low, j2.high, j2.epsilon, j2.epsilon_low, j2.epsilon_high) == (
        alone.estimate, alone.low, alone.high, alone.epsilon, alone.epsilon_low, alone.epsilon_high)
    assert j2.to_dict()["n_unjudged"] == 20
    # against a slow loop on the judge's 40 items
    r = data.rater_index("j2")
    gold = data.verdicts[:40, data.rater_index("gold"), 0]
    expected, eps = _oracle(data.scores[:40, r, 0], data.scores[:40, r, 1], (gold == 0) * 1, (gold == 1) * 1)
    assert j2.estimate == pytest.approx(expected) and j2.epsilon == pytest.approx(eps)
    # what counting the 20 unseen items wrong would give: 40/60 of it at most
    assert j2.estimate * 40 / 60 < j2.estimate


def test_an_item_judged_without_both_scores_is_still_in_scope():
    data = _partial()
    scores = np.array(data.scores)
    scores[:5, data.rater_index("j2"), 1] = np.nan  # judged (a verdict) but one score lost
    data = replace(data, scores=scores)
    wrong, = score_accuracy(data, judges=["j2"], n_resamples=50, rng=0)
    drop, = score_accuracy(data, judges=["j2"], n_resamples=50, rng=0, invalid="drop")
    assert (wrong.n_items, wrong.n_unscored, wrong.n_unjudged) == (40, 5, 20)
    assert (drop.n_items, drop.n_unscored, drop.n_unjudged) == (35, 5, 20)


@pytest.mark.realdata
def test_llmbar_rating_on_all_items_is_scored_on_its_419(data_dir):
    data = loaded(data_dir, "llmbar")
    gpt4, = score_accuracy(data, judges=["GPT-4/Rating"], n_resamples=50, rng=0)
    assert gpt4.n_items == 419 and gpt4.n_unjudged == 885 - 419
    assert gpt4.estimate == pytest.approx(317 / 419) and round(gpt4.estimate, 3) == 0.757
