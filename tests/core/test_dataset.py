"""The data model and the synthetic generator."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.stats.correlation import correlate
from metaeval_core.data.dataset import Dataset, DatasetError, Measure, parse_system_selection
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
    assert parse_system_selection("type=abs, size = big") == {"type": "abs", "size": "big"}
    with pytest.raises(DatasetError, match="ATTR=VALUE"):
        parse_system_selection("abs")
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
