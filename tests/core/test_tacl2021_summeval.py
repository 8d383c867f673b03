"""TACL 2021 findings on SummEval (Deutsch, Dror & Roth, sec. 6), reproduced qualitatively on the real data.

Reference values from the paper: ROUGE-2's system-level Kendall BOOT-BOTH interval on Fabbri et al. (2021)
is [-.09, .84]; at the system level only QAEval and BERTScore are significantly better than other metrics
(PERM-BOTH, Bonferroni per row metric, alpha 0.05; Pearson in Fig. 5, "largely consistent" with Kendall);
at the summary level BERTScore is significantly better than the ROUGE variants.
"""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.data.registry import load_dataset
from metaeval_core.stats.resampling import dataset_confidence_interval
from metaeval_core.stats.significance import compare_all_pairs

pytestmark = [pytest.mark.realdata, pytest.mark.slow]
HUMAN = "expert.relevance"
METRICS = ["rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.recall", "qa-eval.f1", "MoverScore", "METEOR",
           "s3.pyr"]
ROUGE = ["rouge-1.f1", "rouge-2.f1", "rouge-l.f1"]


@pytest.fixture(scope="module")
def summeval(data_dir):
    return load_dataset("summeval", data_dir=data_dir)


def test_system_level_intervals_are_wide_and_summary_level_narrower(summeval):
    rouge2 = dataset_confidence_interval(summeval, "rouge-2.f1", HUMAN, level="system", coefficient="kendall",
                                         method="boot-both", n_resamples=1000, rng=0)
    assert rouge2.low < 0.05 and rouge2.high > 0.7  # paper: [-.09, .84]
    for metric in ("rouge-2.f1", "qa-eval.f1", "bertscore.recall"):
        system = dataset_confidence_interval(summeval, metric, HUMAN, level="system", coefficient="kendall",
                                             method="boot-both", n_resamples=1000, rng=0)
        summary = dataset_confidence_interval(summeval, metric, HUMAN, level="input", coefficient="kendall",
                                              method="boot-both", n_resamples=1000, rng=0)
        assert summary.high - summary.low < 0.5 * (system.high - system.low), metric


def significant_wins(summeval, level, coefficient):
    table = compare_all_pairs(summeval, METRICS, HUMAN, level=level, coefficient=coefficient, method="perm-both",
                              alternative="greater", correction="bonferroni", family="row", alpha=0.05,
                              n_resamples=1000, rng=0)
    wins = np.asarray(table.significant_corrected, dtype=bool)
    return {x: {METRICS[j] for j in np.flatnonzero(wins[i])} for i, x in enumerate(METRICS)}


@pytest.mark.parametrize("coefficient", ["pearson", "kendall"])
def test_only_qaeval_and_bertscore_are_superior_at_the_system_level(summeval, coefficient):
    wins = significant_wins(summeval, "system", coefficient)
    assert {m for m, beaten in wins.items() if beaten} == {"qa-eval.f1", "bertscore.recall"}
    for metric in ("qa-eval.f1", "bertscore.recall"):
        assert set(ROUGE) <= wins[metric]


def test_bertscore_beats_rouge_at_the_summary_level(summeval):
    wins = significant_wins(summeval, "input", "pearson")
    assert set(ROUGE) <= wins["bertscore.recall"]
    assert not any("bertscore.recall" in beaten for beaten in wins.values())
