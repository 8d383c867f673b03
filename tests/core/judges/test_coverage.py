"""Each judge on its own items: items a judge never saw are not counted as wrong."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from metaeval_core.judges import MISSING, score_accuracy
from metaeval_core.judges.coverage import own_items, score_accuracy_on_own_items
from tests.core.judges.helpers import loaded, random_data


def test_unseen_items_are_out_of_scope():
    data = random_data(71, n=60, gold=True)
    rng = np.random.default_rng(0)
    scores = np.full((data.n_items, data.n_raters, 2), np.nan)
    j = data.rater_index("j3")
    scores[:, j] = rng.integers(1, 6, size=(data.n_items, 2))
    verdicts = np.array(data.verdicts)
    verdicts[40:, j] = MISSING  # j3 judged the first 40 items only
    scores[40:, j] = np.nan
    data = replace(data, scores=scores, verdicts=verdicts)
    mine, = score_accuracy_on_own_items(data, ["j3"], n_resamples=50, rng=0)
    alone, = score_accuracy(data.select_items(np.arange(40)), judges=["j3"], n_resamples=50, rng=0)
    every, = score_accuracy(data, judges=["j3"], n_resamples=50, rng=0)
    assert mine.n_items == 40 and every.n_items == 60  # the plain call counts the 20 unseen items wrong
    assert (mine.estimate, mine.low, mine.high) == (alone.estimate, alone.low, alone.high)
    assert mine.estimate > every.estimate
    assert own_items(data, "j1") is data


@pytest.mark.realdata
def test_llmbar_rating_on_all_items_is_scored_on_its_419(data_dir):
    data = loaded(data_dir, "llmbar")
    gpt4, = score_accuracy_on_own_items(data, ["GPT-4/Rating"], n_resamples=50, rng=0)
    assert gpt4.n_items == 419 and gpt4.estimate == pytest.approx(317 / 419)
