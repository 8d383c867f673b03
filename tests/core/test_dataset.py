"""The data model and the synthetic generator."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.stats.correlation import correlate
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.selection import parse_selection
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset


def test_demo_shape_and_contents(demo):
    assert demo.n_systems == 16
    assert demo.n_judged == 100 and demo.n_unjudged == 2000
    assert demo.has_unjudged_pool
    assert demo.human_measures == ("human.quality",)
    assert len(demo.metric_measures) == 5
    annotators = demo.measure("human.quality").annotators
    assert annotators.shape == (3, 16, 2100)
    judged = annotators[:, :, demo.judged]
    assert set(np.unique(judged)) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert np.isnan(annotators[:, :, ~demo.judged]).all()
    assert sorted(set(demo.system_attribute("type"))) == ["abs", "ext"]


def test_demo_is_seeded_and_metrics_run_strong_to_weak(demo):
    again = synthetic_dataset()
    assert again.version == demo.version
    for pool in ("judged", "all"):
        taus = [correlate(demo, m, "human.quality", pool=pool).estimate for m in demo.metric_measures]
        assert np.all(np.diff(taus) < 0), taus
    assert synthetic_dataset(SyntheticSpec(seed=1)).version != demo.version


def test_human_matrix_is_nan_ignoring_annotator_mean():
    a = np.array([[[1.0, np.nan]], [[3.0, np.nan]], [[np.nan, np.nan]]])
    m = Measure.from_annotators("h", "human", a)
    assert m.scores[0, 0] == 2.0 and np.isnan(m.scores[0, 1])


def test_matrix_pools(demo):
    assert demo.matrix("metric.good").shape == (16, 100)
    assert demo.matrix("metric.good", pool="all").shape == (16, 2100)
    assert demo.matrix("human.quality", pool="all").shape == (16, 100)
    with pytest.raises(DatasetError, match="pool must be one of"):
        demo.matrix("metric.good", pool="some")


def test_scores_are_read_only(demo):
    with pytest.raises(ValueError):
        demo.measure("metric.good").scores[0, 0] = 1.0


def test_subset_and_selection(demo):
    sub = demo.subset(systems=["S03", "S01"], inputs=list(demo.inputs[:5]))
    assert sub.systems == ("S03", "S01") and sub.n_inputs == 5
    np.testing.assert_array_equal(sub.measure("metric.good").scores[1], demo.measure("metric.good").scores[0, :5])
    assert demo.select_systems("type=ext").n_systems == 4
    assert parse_selection("type=abs, size = big").attribute_only == {"type": "abs", "size": "big"}
    assert parse_selection("abs").names == ("abs",)  # a system name (docs/methods.md sec. 0.3)
    with pytest.raises(DatasetError, match="ATTR=VALUE"):
        parse_selection("type=")
    with pytest.raises(DatasetError, match="unknown system"):
        demo.subset(systems=["nobody"])


def test_construction_errors_name_the_problem():
    ok = np.zeros((2, 3))
    with pytest.raises(DatasetError, match="unique"):
        Dataset(id="x", systems=["a", "a"], inputs=["1", "2", "3"], measures={})
    with pytest.raises(DatasetError, match="shape"):
        Dataset(id="x", systems=["a", "b"], inputs=["1", "2"], measures={"m": Measure("m", "metric", ok)})
    with pytest.raises(DatasetError, match="attribute 'type'"):
        Dataset(id="x", systems=["a", "b"], inputs=["1", "2", "3"], measures={}, system_attributes={"type": ["x"]})
    with pytest.raises(DatasetError, match="kind"):
        Measure("m", "judge", ok)


def test_spec_validation():
    with pytest.raises(ValueError, match="n_systems must be at least 1"):
        synthetic_dataset(SyntheticSpec(n_systems=0))
    with pytest.raises(ValueError, match="strength"):
        synthetic_dataset(SyntheticSpec(metrics=(("m", 1.5),)))


def test_resolve_ids_labels_upstream_names_and_short_errors():
    """Measures are named by id, upstream name, or case-insensitively by id or label when that is unambiguous;
    an unknown name gets up to three close names, not the list of every measure (issue 24)."""
    from metaeval_core.data.dataset import Dataset, DatasetError, Measure

    z = np.zeros((2, 3))
    measures = {"h": Measure("h", "human", z + 1),
                "BLEU": Measure("BLEU", "metric", z, attributes={"upstream": "BLEU Ξ§"}),
                "j RE 1": Measure("j RE 1", "metric", z, label="Judge · Relevance"),
                "x": Measure("x", "metric", z, label="Same"), "y": Measure("y", "metric", z, label="same")}
    measures.update({f"filler-{k}": Measure(f"filler-{k}", "metric", z) for k in range(12)})
    ds = Dataset("t", ("a", "b"), ("1", "2", "3"), measures)
    assert ds.resolve("BLEU") == ds.resolve("bleu") == ds.resolve("BLEU Ξ§") == ds.resolve(" Bleu ") == "BLEU"
    assert ds.resolve("judge ·  relevance") == "j RE 1" and ds.measure("JUDGE · RELEVANCE").name == "j RE 1"
    with pytest.raises(DatasetError, match=r"'same' is ambiguous.*x, y"):
        ds.resolve("same")
    with pytest.raises(DatasetError, match=r"unknown measure 'BLUE'.*did you mean 'BLEU'\?") as error:
        ds.measure("BLUE")
    assert len(str(error.value)) < 200 and "filler-11" not in str(error.value)
    with pytest.raises(DatasetError, match="no close name"):
        ds.resolve("qqqqqqqq")


def test_task_vocabulary_and_annotator_identity_survive_subsets_edits_and_the_store(tmp_path):
    """A dataset says what its outputs and inputs are called and whether annotator k is a person (issue 24); the
    subset, a what-if edit and the local store keep both."""
    from metaeval_core.data import store, whatif
    from metaeval_core.data.vocabulary import vocabulary

    base = synthetic_dataset()
    assert base.task == "" and base.vocabulary.count(1) == "1 output" and base.vocabulary.count(3, "input") == "3 inputs"
    assert base.annotators_are("human.quality") == "persons"
    ds = Dataset("t", ("a", "b"), ("1", "2"), {
        "h": Measure.from_annotators("h", "human", np.ones((2, 2, 2))),
        "crowd": Measure.from_annotators("crowd", "human", np.ones((2, 2, 2)), attributes={"annotators": "positions"}),
        "m": Measure("m", "metric", np.zeros((2, 2)))}, task="story-generation", annotator_identity="persons")
    assert ds.vocabulary.count(2) == "2 stories" and ds.vocabulary.count(1, "input") == "1 prompt"
    assert (ds.annotators_are("h"), ds.annotators_are("crowd")) == ("persons", "positions")
    assert vocabulary("translation").outputs == "translations"
    edited = whatif.edit_scores(ds, [("a", "1", "m", 5.0)])
    shop = store.DatasetStore(tmp_path)
    back = shop.load(shop.save(ds, "vocabulary test").key)
    for derived in (ds.subset(systems=["a"]), edited, back):
        assert (derived.task, derived.annotator_identity) == ("story-generation", "persons")
    with pytest.raises(DatasetError, match="task must be one of"):
        Dataset("t", ("a",), ("1",), {}, task="poetry")
    with pytest.raises(DatasetError, match="annotator_identity"):
        Dataset("t", ("a",), ("1",), {}, annotator_identity="people")


@pytest.mark.realdata
def test_summeval_says_summaries_and_which_annotators_are_persons(data_dir):
    from metaeval_core.data.registry import list_datasets, load_dataset

    if not any(i.id == "summeval" and i.available for i in list_datasets(data_dir=data_dir)):
        pytest.skip("summeval is not in the data mirror")
    ds = load_dataset("summeval", data_dir=data_dir)
    assert ds.task == "summarization" and ds.vocabulary.count(1600) == "1,600 summaries"
    assert ds.annotators_are("expert.relevance") == "persons" and ds.annotators_are("turker.relevance") == "positions"
    naacl = load_dataset("summeval-naacl2022", data_dir=data_dir)
    assert naacl.measure("ground-truth").annotators is not None and naacl.annotators_are("ground-truth") == "persons"


def test_scored_by_builds_each_subset_once_and_keeps_its_numbers():
    scores = np.arange(12, dtype=float).reshape(3, 4)
    human = scores.copy()
    human[2] = np.nan  # system c never rated
    ds = Dataset(id="t", systems=["a", "b", "c"], inputs=list("wxyz"),
                 measures={"h": Measure("h", "human", human), "m": Measure("m", "metric", scores)})
    first = ds.rated_by("h")
    assert first.systems == ("a", "b") and np.array_equal(first.matrix("m"), scores[:2])
    # Another request with the same kept systems (here via two measures) is the same object, not a rebuild.
    assert ds.scored_by(["m", "h"]) is first and ds.rated_by("h") is first
    assert ds.scored_by(["m"]) is ds  # every system scored: the dataset itself
