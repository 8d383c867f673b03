"""docs/methods.md sec. 7-8 analyses on the real data (skipped cleanly when the mirror is absent).

Findings checked against the papers:
* Bhandari et al. (2020) sec. 4.2: on CNNDM Mix, metrics de-correlate among the top-k systems; on
  CNNDM Abs, R-2 stays highly correlated for all k; on CNNDM Ext, R-1/R-2/R-L *improve* as k shrinks.
* Bhandari et al. sec. 4.3: R-2 has the best pairwise-comparison F1 of the ROUGE/JS-2/BERTScore/MoverScore family.
* Fabbri et al. (2021) sec. 5.1: Krippendorff's alpha 0.4920 (crowd) and 0.7187 (experts, second round);
  expert and crowd means are essentially uncorrelated.
* Peyrard (2019): metrics agree less in the high-scoring range (here: summaries beating Lead-3, M0).
"""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.analyses.papers import annotator_agreement, high_range, normality_table, pairwise_f1, topk_correlations

REALSUMM_METRICS = ["rouge-1.recall", "rouge-2.recall", "rouge-l.recall", "js-2", "MoverScore", "bertscore.recall",
                    "qa-eval.f1", "METEOR", "s3.pyr"]
PEYRARD_METRICS = ["rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.f1", "MoverScore", "qa-eval.f1", "METEOR",
                   "s3.pyr"]


@pytest.fixture(scope="module")
def realsumm(data_dir):
    from metaeval_core.data.registry import load_dataset

    return load_dataset("realsumm", data_dir=data_dir)


@pytest.fixture(scope="module")
def summeval(data_dir):
    from metaeval_core.data.registry import load_dataset

    return load_dataset("summeval", data_dir=data_dir)


def test_realsumm_topk_mix_decorrelates(realsumm):
    result = topk_correlations(realsumm, REALSUMM_METRICS, "litepyramid.recall", coefficient="pearson")
    assert result.ks[0] == 24 and result.ks[-1] == 3
    full = result.estimate[:, 0]
    few = result.estimate[:, result.ks <= 6].mean(axis=1)
    assert full[REALSUMM_METRICS.index("rouge-2.recall")] == pytest.approx(0.96, abs=0.01)
    assert np.all(few < full)  # every metric correlates less among the few best systems
    assert full.mean() - few.mean() > 0.25


def test_realsumm_topk_abs_and_ext(realsumm):
    abs_result = topk_correlations(realsumm, ["rouge-2.recall"], "litepyramid.recall", systems="type=abs")
    assert abs_result.ks[0] == 13 and np.all(abs_result.estimate[0] > 0.9)
    ext = topk_correlations(realsumm, ["rouge-1.recall", "rouge-2.recall", "rouge-l.recall"], "litepyramid.recall",
                            systems="type=ext")
    assert ext.ks[0] == 11
    assert np.all(ext.estimate[:, ext.ks <= 6].mean(axis=1) > ext.estimate[:, 0] + 0.1)


def test_realsumm_pairwise_f1(realsumm):
    metrics = list(realsumm.metric_measures)
    result = pairwise_f1(realsumm, metrics, "litepyramid.recall", n_resamples=1000, rng=0)
    f1 = dict(zip(metrics, result.f1))
    assert result.n_pairs == 276
    assert set(np.unique(result.human_labels)) == {0, 1, 2}
    assert all(0.0 <= v <= 1.0 for v in f1.values())
    assert f1["rouge-2.recall"] > 0.8
    for other in ["rouge-1.recall", "rouge-l.recall", "js-2", "MoverScore", "bertscore.recall", "bertscore.f1",
                  "rouge-1.f1", "rouge-2.f1", "rouge-l.f1"]:
        assert f1["rouge-2.recall"] > f1[other], other
    for n in ("1", "2", "l"):  # LitePyramid is recall-oriented: recall beats precision
        assert f1[f"rouge-{n}.recall"] > f1[f"rouge-{n}.precision"] + 0.2
    again = pairwise_f1(realsumm, ["rouge-2.recall"], "litepyramid.recall", n_resamples=1000, rng=1)
    assert again.f1[0] == pytest.approx(f1["rouge-2.recall"], abs=0.03)


def test_summeval_krippendorff_reproduces_the_paper(summeval):
    result = annotator_agreement(summeval)
    alpha = {(r.group, r.dimension): r.alpha for r in result.alphas}
    # SummEval (TACL 2021) sec. 3.3: crowd 0.4920, experts (second round) 0.7187; pooled over dimensions.
    assert alpha["turker", "all"] == pytest.approx(0.4920, abs=5e-5)
    assert alpha["expert", "all"] == pytest.approx(0.7187, abs=5e-5)
    for dimension in ("coherence", "consistency", "fluency", "relevance"):
        assert 0.3 < alpha["expert", dimension] < 0.95
        assert 0.4 < alpha["turker", dimension] < 0.55
    # "expert and crowd means are essentially uncorrelated" (Pearson close to 0, summary level)
    for row in result.correlations:
        assert row.group_a == "expert" and row.group_b == "turker"
        if row.level == "global":
            assert abs(row.estimate) < 0.1 and row.n == 1600


def test_summeval_high_range_peyrard_effect(summeval):
    result = high_range(summeval, PEYRARD_METRICS, baseline="M0")
    assert 8 < result.mean_kept < 16
    lower = result.tau_top < result.tau_all
    assert lower.mean() >= 0.9
    assert result.mean_tau_top < result.mean_tau_all - 0.03
    assert np.all(result.n_inputs_top >= 95)


def test_summeval_normality_runs(summeval):
    table = normality_table(summeval, ["expert.relevance", "expert.consistency", "rouge-2.f1"])
    rows = {r.measure: r for r in table.rows}
    # consistency piles up at 5: far from normal within most inputs
    assert rows["expert.consistency"].input_share > 0.9
    assert rows["expert.relevance"].input_tested == 100 and rows["expert.relevance"].system_n == 16
