"""What-if modifications: merging extra scores, editing cells, including/excluding systems and inputs."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from metaeval_core.stats.correlation import correlate
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.whatif import (
    MergeError,
    describe_merge,
    edit_scores,
    include_exclude,
    merge_datasets,
    with_identity,
)


def make(systems, inputs, measures, kinds=None, **kw) -> Dataset:
    kinds = kinds or {}
    return Dataset(
        id=kw.pop("id", "base"), systems=systems, inputs=inputs,
        measures={n: Measure(n, kinds.get(n, "human" if n.startswith("human") else "metric"), np.asarray(v, float))
                  for n, v in measures.items()},
        **kw,
    )


@pytest.fixture
def base():
    nan = np.nan
    return make(["a", "b", "c"], ["d1", "d2", "d3"], {
        "human": [[1, 2, nan], [2, 3, nan], [3, 1, nan]],  # d3 unjudged
        "rouge": [[0.1, 0.2, 0.3], [0.2, 0.3, 0.4], [0.3, 0.1, 0.5]],
    }, system_attributes={"type": ["abs", "ext", "abs"]}, title="Base", citation="Someone 2021", licence="MIT")


def test_new_human_judgments_for_unjudged_inputs_fill_cells(base):
    extra = make(["a", "b", "c"], ["d3"], {"human": [[5], [4], [3]]}, id="extra")
    report = describe_merge(base, extra)
    assert report.filled_cells == 3 and report.n_conflicts == 0 and report.newly_judged_inputs == 1
    assert report.new_inputs == () and report.new_measures == ()
    merged = merge_datasets(base, extra)
    assert merged.n_judged == 3 and merged.n_unjudged == 0
    assert merged.measures["human"].scores[:, 2].tolist() == [5, 4, 3]
    assert merged.version == merged.fingerprint() != base.version
    assert merged.title == "Base" and merged.citation == "Someone 2021" and merged.licence == "MIT"
    assert "merged with 'extra'" in merged.notes[-1]


def test_new_measure_new_system_and_new_input(base):
    extra = make(["c", "z"], ["d1", "d9"], {"bleu": [[1, 2], [3, 4]], "rouge": [[0.3, np.nan], [0.9, 0.8]]},
                 id="extra", system_attributes={"type": ["abs", "new"]})
    report = describe_merge(base, extra)
    assert report.new_systems == ("z",) and report.new_inputs == ("d9",) and report.new_measures == ("bleu",)
    assert report.same_cells == 1  # rouge (c, d1) = 0.3 in both
    merged = merge_datasets(base, extra)
    assert merged.systems == ("a", "b", "c", "z") and merged.inputs == ("d1", "d2", "d3", "d9")
    assert list(merged.measures) == ["human", "rouge", "bleu"]
    bleu = merged.measures["bleu"].scores
    assert np.isnan(bleu[0]).all() and bleu[2, 0] == 1 and bleu[3, 3] == 4
    assert merged.system_attributes["type"] == ("abs", "ext", "abs", "new")
    # The new system has no human scores: still a valid dataset, the new input is unjudged.
    assert merged.n_judged == 2 and merged.has_unjudged_pool


def test_conflicts_error_names_the_first_cell(base):
    extra = make(["b", "a"], ["d2"], {"rouge": [[0.99], [0.77]]}, id="extra")
    report = describe_merge(base, extra)
    assert report.n_conflicts == 2
    first = report.conflicts[0]
    assert (first.system, first.input, first.measure, first.base, first.extra) == ("a", "d2", "rouge", 0.2, 0.77)
    with pytest.raises(MergeError, match=r"system 'a', input 'd2', measure 'rouge'.*\(and 1 more\)"):
        merge_datasets(base, extra)
    kept = merge_datasets(base, extra, on_conflict="keep")
    assert kept.measures["rouge"].scores[:, 1].tolist() == [0.2, 0.3, 0.1]
    replaced = merge_datasets(base, extra, on_conflict="replace")
    assert replaced.measures["rouge"].scores[:, 1].tolist() == [0.77, 0.99, 0.1]
    with pytest.raises(ValueError, match="on_conflict"):
        merge_datasets(base, extra, on_conflict="overwrite")


def test_equal_values_and_one_sided_gaps_are_not_conflicts(base):
    extra = make(["a"], ["d1", "d2"], {"rouge": [[0.1, np.nan]]}, id="extra")
    assert describe_merge(base, extra).n_conflicts == 0
    assert merge_datasets(base, extra).fingerprint() == merge_datasets(base, extra, on_conflict="keep").fingerprint()


def test_kind_of_a_shared_measure_follows_the_base(base):
    extra = make(["a"], ["d3"], {"rouge": [[0.3]]}, kinds={"rouge": "human"}, id="extra")
    report = describe_merge(base, extra)
    assert report.kind_changes == ("rouge",) and "kept as metric" in report.notes[0]
    assert merge_datasets(base, extra).measures["rouge"].kind == "metric"


def test_attribute_conflicts_follow_the_policy(base):
    extra = make(["a"], ["d1"], {"rouge": [[0.1]]}, system_attributes={"type": ["ext"]}, id="extra")
    with pytest.raises(MergeError, match="attribute"):
        merge_datasets(base, extra)
    assert merge_datasets(base, extra, on_conflict="keep").system_attributes["type"][0] == "abs"
    assert merge_datasets(base, extra, on_conflict="replace").system_attributes["type"][0] == "ext"


def test_annotators_are_merged_cell_by_cell_or_dropped():
    ann = np.array([[[1.0, np.nan]], [[3.0, np.nan]]])  # 2 annotators, 1 system, 2 inputs
    base = Dataset("b", ["s"], ["x", "y"], {"human": Measure.from_annotators("human", "human", ann)})
    extra_ann = np.array([[[np.nan, 4.0]], [[np.nan, 2.0]]])
    extra = Dataset("e", ["s"], ["x", "y"], {"human": Measure.from_annotators("human", "human", extra_ann)})
    merged = merge_datasets(base, extra).measures["human"]
    assert merged.annotators.shape == (2, 1, 2)
    assert merged.scores.tolist() == [[2.0, 3.0]]
    np.testing.assert_array_equal(np.nanmean(merged.annotators, axis=0), merged.scores)
    three = Dataset("e", ["s"], ["y"], {"human": Measure.from_annotators("human", "human", np.ones((3, 1, 1)))})
    out = merge_datasets(base, three)
    assert out.measures["human"].annotators is None
    assert any("per-annotator scores of 'human' were dropped" in n for n in out.notes)


def test_merge_with_the_demo_changes_the_correlation(demo):
    human = demo.human_measures[0]
    judged = np.flatnonzero(demo.judged)
    first = demo.subset(inputs=[demo.inputs[j] for j in judged[:50]])
    rest = demo.subset(inputs=[demo.inputs[j] for j in judged[50:]], measures=[human])
    merged = merge_datasets(first, rest)
    assert merged.n_judged == 100
    full = correlate(demo.subset(inputs=[demo.inputs[j] for j in judged]), "metric.good", human,
                     level="input", coefficient="kendall")
    # The merged dataset has metric scores only on the first 50 judged inputs (the rest are human-only).
    assert correlate(merged, "metric.good", human, level="input", coefficient="kendall").n == 50
    assert math.isfinite(full.estimate)


def test_edit_scores_sets_cells_and_changes_the_version(base):
    edited = edit_scores(base, [("a", "d1", "rouge", 0.9), ("a", "d1", "rouge", 0.8), ("c", "d3", "human", 4)])
    assert edited.measures["rouge"].scores[0, 0] == 0.8  # last edit of a cell wins
    assert edited.measures["human"].scores[2, 2] == 4 and edited.n_judged == 3
    assert edited.version == edited.fingerprint() != base.version
    assert base.measures["rouge"].scores[0, 0] == 0.1  # the original is untouched
    cleared = edit_scores(base, [("a", "d1", "rouge", float("nan")), ("b", "d1", "rouge", None)])
    assert np.isnan(cleared.measures["rouge"].scores[:2, 0]).all()
    assert edit_scores(base, []) is base
    assert edit_scores(base, [], id="x").id == "x"


@pytest.mark.parametrize("edit, message", [
    (("zz", "d1", "rouge", 1.0), "unknown system 'zz'"),
    (("a", "nope", "rouge", 1.0), "unknown input 'nope'"),
    (("a", "d1", "bleu", 1.0), "unknown measure 'bleu'"),
    (("a", "d1", "rouge", float("inf")), "finite"),
    (("a", "d1", "rouge", -1e200), "larger in magnitude than 1e\\+150"),
    (("a", "d1", "rouge", "0.5"), "must be a number"),
    (("a", "d1", "rouge", True), "must be a number"),
    (("a", "d1", "rouge"), r"expected \(system, input, measure, value\)"),
])
def test_edit_scores_validation(base, edit, message):
    with pytest.raises(DatasetError, match=message):
        edit_scores(base, [("b", "d2", "rouge", 0.5), edit])


def test_edit_keeps_the_annotators_of_the_edited_measure():
    """Editing one human cell keeps the measure's per-annotator scores (and so its agreement and human-ceiling
    rows, issue 24): every annotator's rating of the edited cell becomes the new value."""
    ann = np.array([[[1.0, 2.0]], [[3.0, 2.0]]])
    ds = Dataset("b", ["s"], ["x", "y"], {"human": Measure.from_annotators("human", "human", ann)})
    same = edit_scores(ds, [("s", "x", "human", 2.0)])  # unchanged value: annotators untouched
    np.testing.assert_array_equal(same.measures["human"].annotators, ann)
    edited = edit_scores(ds, [("s", "x", "human", 5.0), ("s", "y", "human", None)])
    kept = edited.measures["human"].annotators
    assert kept is not None and kept.shape == ann.shape
    np.testing.assert_array_equal(kept[:, 0, 0], [5.0, 5.0])
    assert np.isnan(kept[:, 0, 1]).all()
    np.testing.assert_array_equal(Measure.from_annotators("h", "human", kept).scores, edited.measures["human"].scores)
    assert "per-annotator scores of 'human' kept" in edited.notes[-2] and "2 edited cell(s)" in edited.notes[-2]


def test_include_exclude(base):
    out = include_exclude(base, exclude_systems=["b"])
    assert out.systems == ("a", "c") and out.system_attributes["type"] == ("abs", "abs")
    assert out.version == out.fingerprint() and "excluded 1 system(s)" in out.notes[-1]
    only = include_exclude(base, systems=["c", "a"], inputs=["d2", "d1"], exclude_inputs=["d2"])
    assert only.systems == ("a", "c") and only.inputs == ("d1",)  # the dataset's order is kept
    assert include_exclude(base) is base
    with pytest.raises(DatasetError, match="unknown system"):
        include_exclude(base, exclude_systems=["q"])
    with pytest.raises(DatasetError, match="no system would be left"):
        include_exclude(base, exclude_systems=["a", "b", "c"])
    with pytest.raises(DatasetError, match="unknown input"):
        include_exclude(base, inputs=["x"])


def test_with_identity_keeps_content(base):
    renamed = with_identity(base, "whatif:base", title="Modified")
    assert renamed.id == "whatif:base" and renamed.title == "Modified"
    assert renamed.version == base.fingerprint() and renamed.n_judged == base.n_judged


def test_partial_files_for_merging_are_read(base):
    from metaeval_core.data.upload import UploadError, read_user_file

    human_only = b"system,input,human\na,d3,5\nb,d3,4\n"
    with pytest.raises(UploadError):
        read_user_file(human_only, name="extra.csv", human_measures=["human"])
    extra = read_user_file(human_only, name="extra.csv", human_measures=["human"], partial=True)
    assert extra.human_measures == ("human",) and not extra.metric_measures
    merged = merge_datasets(base, extra)
    assert merged.measures["human"].scores[:2, 2].tolist() == [5, 4] and merged.n_judged == 3
    one_system = read_user_file(b"system,input,rouge\nz,d1,0.7\n", name="new.csv", partial=True)
    assert merge_datasets(base, one_system).systems == ("a", "b", "c", "z")
    with pytest.raises(UploadError, match="no score at all"):
        read_user_file(b"system,input,rouge\nz,d1,\n", name="empty.csv", partial=True)


def test_merge_report_names_lookalike_names_and_measure_roles():
    """A typo'd system name (M2O for M20) would become a new system: the report says so; a new measure's role is
    stated with its reason (issue 24)."""
    from metaeval_core.data.upload import measure_role
    from metaeval_core.data.whatif import lookalike_names

    assert lookalike_names(["M2O", "M24", "m20", "expert.relevence", "S3"], ["M20", "M23", "expert.relevance",
                                                                              "S03"]) == {
        "M2O": "M20", "m20": "M20", "expert.relevence": "expert.relevance"}
    z = np.zeros((2, 2))
    base = Dataset("b", ["M20", "M23"], ["d1", "d2"], {"human.q": Measure("human.q", "human", z + 1),
                                                      "bleu": Measure("bleu", "metric", z)})
    extra = Dataset("e", ["M2O"], ["d1", "d2"], {"bleu": Measure("bleu", "metric", np.ones((1, 2))),
                                                 "quality": Measure("quality", "metric", np.ones((1, 2))),
                                                 "human.fluency": Measure("human.fluency", "human",
                                                                          np.ones((1, 2)))})
    report = describe_merge(base, extra)
    assert report.new_systems == ("M2O",)
    assert report.lookalikes == ("new system 'M2O' looks like the existing 'M20': a typo? Merged as is, it becomes "
                                 "a new system.",)
    assert measure_role(extra, "quality").startswith("'quality' is a metric: it is not named as a human measure")
    assert measure_role(extra, "human.fluency") == "'human.fluency' is a human measure: its name marks a human judgment"
    assert "named in the human measures" in measure_role(extra, "human.fluency", declared=["human.fluency"])


def test_a_sparse_merged_human_measure_is_judged_on_its_own_cells():
    """New judgments of 3 systems on 20 inputs merged into the demo: the system-level correlation compares each
    system's metric mean over those 20 inputs with its human mean over the same 20 (issue 24: the metric's means
    were over all 100 judged inputs), and the data check warns about the sparse measure."""
    from scipy import stats

    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_core.data.upload import validation_report
    from metaeval_core.stats.correlation import correlate

    demo = synthetic_dataset()
    systems, inputs = list(demo.systems[:3]), [demo.inputs[j] for j in np.flatnonzero(demo.judged)[:20]]
    rng = np.random.default_rng(5)
    new = rng.integers(1, 6, size=(3, 20)).astype(float)
    extra = Dataset("e", systems, inputs, {"human.new": Measure("human.new", "human", new)})
    merged = merge_datasets(demo, extra)
    rows = [demo.systems.index(s) for s in systems]
    cols = [demo.inputs.index(j) for j in inputs]
    for metric in demo.metric_measures:
        x = demo.measure(metric).scores[np.ix_(rows, cols)].mean(axis=1)
        expected = stats.kendalltau(x, new.mean(axis=1)).statistic
        assert correlate(merged, metric, "human.new", level="system").estimate == pytest.approx(expected, abs=1e-12)
    kinds = {w.kind for w in validation_report(merged).warnings}
    assert {"sparse-human-measure", "unrated-systems"} <= kinds

# -- limits on the merged result (issue 23) -------------------------------------------------------------------
MERGE_AT_THE_LIMITS = """
import numpy as np
from metaeval_core.data.dataset import Dataset, Measure
from metaeval_core.data.whatif import MergeError, describe_merge, merge_datasets

def legal(n_systems, n_inputs, tag):
    rng = np.random.default_rng(n_inputs)
    return Dataset(id=tag, systems=tuple(f"s{i}" for i in range(n_systems)),
                   inputs=tuple(f"{tag}{j}" for j in range(n_inputs)),
                   measures={"human": Measure("human", "human", rng.random((n_systems, n_inputs))),
                             "metric": Measure("metric", "metric", rng.random((n_systems, n_inputs)))})

many_systems, many_inputs = legal(2000, 2, "a"), legal(2, 200_000, "b")
result = {"refusals": []}
for attempt in (describe_merge, merge_datasets):
    try:
        attempt(many_systems, many_inputs)
    except MergeError as error:
        result["refusals"].append(str(error))
"""


def test_merging_two_legal_files_beyond_the_cell_limit_is_refused_before_allocating():
    """2,000 systems x 2 inputs and 2 systems x 200,000 inputs are each legal; their union is 2,000 x 200,002
    cells per measure (3.2 GB each): the preview allocated it and died with MemoryError at 3.8 GB."""
    from tests.core.capped import run_capped

    result = run_capped(MERGE_AT_THE_LIMITS, cap=int(1.5 * 2**30))
    refusals = result["refusals"]
    assert len(refusals) == 2, refusals
    assert "2,000 systems x 200,002 inputs x 2 measures = 800,008,000 score cells" in refusals[0]
    assert "the limit is 40,000,000 (METAEVAL_MAX_UPLOAD_CELLS)" in refusals[0]
    assert result["peak_mb"] < 500


def test_merge_limits_count_systems_measures_and_annotators():
    from metaeval_core.data.upload.limits import UploadLimits
    from metaeval_core.data.whatif import check_merge_size

    base = make(["a", "b"], ["i1", "i2"], {"h": [[1, 2], [3, 4]]}, kinds={"h": "human"})
    extra = make(["c", "d"], ["i3"], {"m": [[1], [2]]})
    check_merge_size(base, extra, limits=UploadLimits(max_systems=4, max_cells=4 * 3 * 2, max_measures=2))
    with pytest.raises(MergeError, match="4 systems; the limit is 3"):
        check_merge_size(base, extra, limits=UploadLimits(max_systems=3))
    with pytest.raises(MergeError, match="2 measures; the limit is 1"):
        check_merge_size(base, extra, limits=UploadLimits(max_measures=1))
    with pytest.raises(MergeError, match="4 systems x 3 inputs x 2 measures = 24 score cells"):
        check_merge_size(base, extra, limits=UploadLimits(max_cells=23))
    rated = dataclasses.replace(base, measures={"h": Measure.from_annotators(
        "h", "human", np.array([[[1.0, 2.0], [3.0, 4.0]]] * 3))})
    with pytest.raises(MergeError, match="= 60 score cells"):  # 4 x 3 x (the mean + 3 annotators + the metric)
        check_merge_size(rated, extra, limits=UploadLimits(max_cells=59))
