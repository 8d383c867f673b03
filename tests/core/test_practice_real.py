"""docs/methods.md sec. 10 on the real-data mirror (skipped cleanly without it)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.analyses.practice import improvement_probability, system_influence


@pytest.fixture(scope="module")
def summeval(data_dir):
    from metaeval_core.data.registry import load_dataset

    return load_dataset("summeval", data_dir=data_dir)


def test_summeval_rouge1_relevance_improvement(summeval):
    """SummEval ROUGE-1 F1 vs expert relevance: below ~3 ROUGE-1 points humans agree barely above chance.

    The isotonic fit over the 120 system pairs has three blocks: 0.580 (40/69) for
    |dx| <= 2.81, 0.973 (36/37) up to 6.07 and 1.0 beyond; 0.5 and 2 points both fall in
    the first block.
    """
    small = improvement_probability(summeval, "rouge-1.f1", "expert.relevance", delta=0.5, rng=0)
    large = improvement_probability(summeval, "rouge-1.f1", "expert.relevance", delta=2.0, rng=0)
    for result in (small, large):
        assert result.total_pairs == 120 and result.n_defined == 1000
        assert result.probability == pytest.approx(40 / 69)
        assert result.n_pairs == 69
        assert result.low <= result.probability <= result.high
    assert small.low < 0.5  # a 0.5-point gain is not reliably a human-visible gain
    assert large.low > small.low and large.high >= small.high
    assert np.all(np.diff(small.curve) >= 0)
    big = improvement_probability(summeval, "rouge-1.f1", "expert.relevance", delta=8.0, n_resamples=300, rng=0)
    assert big.probability > 0.97


def test_summeval_influence(summeval):
    result = system_influence(summeval, "rouge-1.f1", "expert.relevance")
    assert len(result.systems) == 16 and result.most_influential is not None
    assert np.all(np.isfinite(result.without))
