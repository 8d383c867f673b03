"""The built-in pairwise datasets against the facts their sources publish (skipped without the mirror)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.registry import list_datasets, load_dataset
from metaeval_core.judges import INVALID, MISSING, human_ceiling, judge_agreement, load_pairwise, majority_verdict
from tests.core.judges.helpers import loaded

pytestmark = pytest.mark.realdata


def test_pandalm_matches_its_readme(data_dir):
    data = loaded(data_dir, "pandalm")
    assert data.n_items == 999 and data.humans == ("annotator1", "annotator2", "annotator3")
    assert data.judges == ("GPT-3.5-turbo", "PandaLM-7B") and len(data.systems) == 5
    assert len(set(data.attributes["system_pair"])) == 10
    majority = majority_verdict(data.verdicts[:, :3, 0])
    assert np.bincount(majority).tolist() == [422, 472, 105]  # A ('1'), B ('2'), tie: the README's counts
    kappas = [judge_agreement(data, judges=[a], reference=b, statistic="kappa", n_resamples=40, rng=0).rows[0]
              for a, b in (("annotator1", "annotator2"), ("annotator1", "annotator3"), ("annotator2", "annotator3"))]
    assert [round(k.estimate, 2) for k in kappas] == [0.85, 0.88, 0.86]  # the README's pairwise kappas
    assert data.verdict_counts("GPT-3.5-turbo")["invalid"] == 25  # 'garbage', kept
    assert (data.verdicts[:, :, 1] == MISSING).all()
    row = judge_agreement(data, judges=["GPT-3.5-turbo"], n_resamples=40, rng=0).rows[0]
    assert row.n_invalid == 25 and row.n_items == 999 and row.n_ties == 105
    ceiling = human_ceiling(data, n_resamples=40, rng=0)
    assert all(0.9 < r.estimate < 1.0 for r in ceiling.rows)


def test_llmbar_shapes_and_orders(data_dir):
    data = loaded(data_dir, "llmbar")
    sizes = {name: int((data.pair_set == k).sum()) for k, name in enumerate(data.pair_sets)}
    assert sizes == {"Natural": 100, "Neighbor": 134, "GPTInst": 92, "GPTOut": 47, "Manual": 46, "MT-Bench": 200,
                     "FairEval": 66, "LLMEval^2": 200}
    assert data.golds == ("label",) and len(data.judges) == 26
    assert data.judges_of("MT-Bench") == ("GPT-4/Vanilla_NoRules", "GPT-4/Metrics_Reference",
                                          "ChatGPT/Vanilla_NoRules", "ChatGPT/Metrics_Reference",
                                          "PaLM2/Vanilla_NoRules", "PaLM2/Metrics_Reference",
                                          "LLaMA2/Vanilla_NoRules", "LLaMA2/Metrics_Reference")
    assert all(len(data.judges_of(s)) == 26 for s in data.pair_sets[:5])
    judges = data.verdicts[:, 1:, :]
    assert int((judges == INVALID).sum()) == 195  # winners neither '1' nor '2' (SOURCE.md's caveat), kept
    assert data.rater("GPT-4/Rating").attributes == {"evaluator": "GPT-4", "strategy": "Rating"}
    rating = data.scores[:, data.rater_index("GPT-4/Rating")]
    assert np.isfinite(rating).all(axis=1).sum() >= 415 and np.isnan(data.scores[:, 1]).all()
    assert not (data.verdicts[:, 0, :] == 2).any()  # no ties in the labels


def test_pairwise_datasets_are_refused_by_the_score_loader(data_dir):
    loaded(data_dir, "pandalm")
    with pytest.raises(DatasetError, match="pairwise verdicts"):
        load_dataset("pandalm", data_dir=data_dir)
    assert {i.id for i in list_datasets(data_dir=data_dir, kind="pairwise")} == {"pandalm", "llmbar", "judgebench"}
    assert "pandalm" not in {i.id for i in list_datasets(data_dir=data_dir, kind="scores")}


# LLMBar's own figures (upstream Dataset/<set>/evaluators/<judge>/statistics.json, commit 900616b, written by
# LLMEvaluator/evaluate.py): correct_False, correct_True, correct_both, equal (counts of the set's pairs).
LLMBAR_PUBLISHED = [
    ("Natural", "GPT-4/Vanilla_NoRules", 100, (92, 95, 92, 97)),
    ("Natural", "ChatGPT/Rating", 100, (74, 63, 45, 53)),
    ("Natural", "PaLM2/Vanilla_NoRules", 100, (None, None, None, 84)),
    ("LLMEval^2", "PaLM2/Vanilla_NoRules", 200, (None, None, None, 162)),
]


@pytest.mark.parametrize("pair_set, judge, n, counts", LLMBAR_PUBLISHED)
def test_llmbar_reproduces_the_authors_statistics(data_dir, pair_set, judge, n, counts):
    from metaeval_core.judges import positional_bias

    part = loaded(data_dir, "llmbar").select_pair_set(pair_set)
    ours = [judge_agreement(part, judges=[judge], order=o, n_resamples=40, rng=0).rows[0].estimate
            for o in ("original", "swapped", "both")]
    # evaluate.py counts a pair whose two winners are both unparsed as 'equal': invalid='as-verdict'
    ours.append(positional_bias(part, judges=[judge], invalid="as-verdict", basis="verdicts", n_resamples=40, rng=0)[0]
                .consistency.estimate)
    for value, count in zip(ours, counts):
        if count is not None:
            assert value == pytest.approx(count / n)


def test_default_judges_are_those_with_verdicts_on_the_items(data_dir):
    part = loaded(data_dir, "llmbar").select_pair_set("MT-Bench")
    table = judge_agreement(part, n_resamples=40, rng=0)
    assert table.judges == part.judges_of() and len(table.judges) == 8
    assert all(np.isfinite(r.estimate) for r in table.rows)


@pytest.mark.parametrize("dataset_id", ["pandalm", "llmbar"])
def test_fetch_downloads_and_verifies_the_pairwise_files(data_dir, tmp_path, dataset_id):
    """The registry's paths (LLMBar's 'LLMEval^2' included) download through the ordinary machinery."""
    from metaeval_core.data.registry import fetch_dataset, verify_files
    from tests.localhttp import serve

    loaded(data_dir, dataset_id)
    with serve(data_dir) as base:
        fetch_dataset(dataset_id, data_dir=tmp_path, base_url=base)
    assert all(check.status == "ok" for check in verify_files(dataset_id, data_dir=tmp_path))
    again = load_pairwise(dataset_id, data_dir=tmp_path)
    assert again.version == load_pairwise(dataset_id, data_dir=data_dir).version


def test_rating_judges_consistency_on_verdicts_is_llmbars_tie_break_and_on_scores_complete(data_dir):
    from metaeval_core.judges import positional_bias, wording

    part = loaded(data_dir, "llmbar").select_pair_set("Natural")
    given, = positional_bias(part, judges=["ChatGPT/Rating"], basis="verdicts", n_resamples=40, rng=0)
    scored, = positional_bias(part, judges=["ChatGPT/Rating"], n_resamples=40, rng=0)
    # the figures: 47 equal scores, consistent 53 = 100 - 47 on the verdicts LLMBar derived from them
    assert given.n_equal_scores == given.n_tie_broken == 47 and given.consistency.estimate == pytest.approx(0.53)
    assert scored.basis == "scores" and scored.consistency.estimate == 1.0
    assert scored.first_position.estimate == pytest.approx(0.5)
    note = wording.tie_break(scored)
    assert "47 of 100" in note and "shown second" in note and "by construction" in note
    plain, = positional_bias(part, judges=["GPT-4/Vanilla"], n_resamples=40, rng=0)
    assert plain.basis == "verdicts" and wording.tie_break(plain) == ""
