"""Scores as verdicts: tie-calibrated accuracy against a brute-force search over every epsilon."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from metaeval_core.judges import A, B, TIE, majority_verdict, score_accuracy, scoring_judges, verdicts_from_scores
from tests.core.judges.helpers import block_draws, loaded, random_data


def _with_scores(seed, n=60):
    data = random_data(seed, n=n)
    rng = np.random.default_rng(seed)
    scores = np.full((data.n_items, data.n_raters, 2), np.nan)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    signal = np.where(ref == A, 1.0, np.where(ref == B, -1.0, 0.0))
    scores[:, 3, 0] = np.round(5 + 2 * signal + rng.normal(0, 1.5, n))
    scores[:, 3, 1] = 5.0
    scores[rng.random(n) < 0.05, 3, 0] = np.nan
    return replace(data, scores=scores), ref


def _brute(xa, xb, ref, invalid="wrong"):
    d = xa - xb
    scored = ~np.isnan(d)
    total = scored.sum() + ((~scored).sum() if invalid == "wrong" else 0)
    best, best_eps = -1.0, None
    for eps in sorted({0.0, *np.abs(d[scored]).tolist()}):
        pred = np.where(d > eps, A, np.where(-d > eps, B, TIE))
        acc = np.sum((pred == ref) & scored) / total
        if acc > best + 1e-12:
            best, best_eps = acc, eps
    return best, best_eps


def test_tie_calibrated_accuracy_matches_brute_force_and_the_bootstrap_a_loop():
    data, ref = _with_scores(41)
    assert scoring_judges(data) == ("j1",)
    for invalid in ("wrong", "drop"):
        row = score_accuracy(data, n_resamples=50, rng=3, invalid=invalid)[0]
        xa, xb = data.scores[:, 3, 0], data.scores[:, 3, 1]
        acc, eps = _brute(xa, xb, ref, invalid)
        assert row.estimate == pytest.approx(acc) and row.epsilon == eps
        assert row.n_unscored == int(np.isnan(xa).sum())
    row = score_accuracy(data, n_resamples=50, rng=3)[0]
    idx = block_draws("items", 3, 50, data.n_items)
    loop = [_brute(xa[i], xb[i], ref[i])[0] for i in idx]
    assert (row.low, row.high) == pytest.approx(tuple(np.percentile(loop, [2.5, 97.5])))
    again = score_accuracy(data, n_resamples=50, rng=3, batch=4)[0]
    assert (again.low, again.high) == (row.low, row.high)


def test_verdicts_from_scores():
    got = verdicts_from_scores([3, 1, 2, np.nan], [1, 3, 2, 1], epsilon=0.5)
    assert got.tolist() == [A, B, TIE, -1]


def test_no_scores_is_a_clear_error():
    with pytest.raises(Exception, match="no judge that scores"):
        score_accuracy(random_data(1))


@pytest.mark.realdata
def test_llmbar_rating_judges(data_dir):
    data = loaded(data_dir, "llmbar")
    assert scoring_judges(data) == ("GPT-4/Rating", "ChatGPT/Rating")
    natural = data.select_pair_set("Natural")
    rows = score_accuracy(natural, n_resamples=100, rng=0)
    assert rows[0].epsilon == 0.0  # no reference ties: a tie is never right
    assert rows[0].estimate > rows[1].estimate
