"""Tests of metaeval_core.data.upload.dataset_to_long_frame: a dataset written as a long table reads back the same.

Every round trip goes through the public upload entry point (:func:`read_user_file`) from CSV bytes and, when
pyarrow is installed, Parquet bytes.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaeval_core.data.dataset import Dataset, Measure
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset
from metaeval_core.data.upload import (
    UploadError,
    check_long_export,
    dataset_to_long_frame,
    looks_human,
    read_user_file,
)
from metaeval_core.data.upload.export import _unreadable
from metaeval_core.data.upload.names import lookalike_key
from metaeval_core.data.whatif import edit_scores, include_exclude

from .test_upload import _clean_names, assert_same, csv_bytes, parquet_bytes

FORMATS = ["csv"] + (["parquet"] if importlib.util.find_spec("pyarrow") else [])


def write(frame: pd.DataFrame, fmt: str) -> bytes:
    return parquet_bytes(frame) if fmt == "parquet" else csv_bytes(frame)


def round_trip(ds: Dataset, fmt: str, *, include_missing: bool = False, **options) -> Dataset:
    """Export and read back, declaring nothing: the 'kind' column carries human vs metric."""
    frame = dataset_to_long_frame(ds, include_missing=include_missing)
    return read_user_file(write(frame, fmt), name=f"export.{fmt}", **options)


@pytest.fixture(scope="module")
def small() -> Dataset:
    return synthetic_dataset(SyntheticSpec(n_systems=5, n_judged=8, n_unjudged=6, n_annotators=3), id="small")


@pytest.fixture(scope="module")
def modified(demo) -> Dataset:
    """The demo as the what-if page leaves it: systems and inputs excluded, cells cleared and edited."""
    subset = include_exclude(demo, exclude_systems=demo.systems[:3:2], exclude_inputs=demo.inputs[:4])
    s, j = subset.systems, subset.inputs
    return edit_scores(subset, [(s[0], j[0], "metric.strong", math.nan), (s[0], j[0], "human.quality", math.nan),
                                (s[1], j[2], "metric.good", 1000.0), (s[2], j[-1], "metric.noise", math.nan)])


# -- round trips ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("include_missing", [False, True])
def test_demo_round_trip(demo, fmt, include_missing):
    back = round_trip(demo, fmt, include_missing=include_missing)
    assert_same(demo, back)  # systems, inputs, measures (order and kind), every score, annotators, attributes
    assert back.n_judged == demo.n_judged and back.has_unjudged_pool
    assert back.measures["human.quality"].annotators.shape == demo.measures["human.quality"].annotators.shape


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("include_missing", [False, True])
def test_modified_subset_with_nans_round_trip(modified, demo, fmt, include_missing):
    assert modified.n_systems == demo.n_systems - 2 and np.isnan(modified.measures["metric.strong"].scores[0, 0])
    back = round_trip(modified, fmt, include_missing=include_missing)
    assert_same(modified, back)
    assert back.measures["metric.good"].scores[1, 2] == 1000.0
    assert back.version == modified.version  # the content fingerprint: the same numbers everywhere


def test_small_with_annotators_round_trip_and_row_counts(small):
    n, m = small.n_systems, small.n_inputs
    dense = dataset_to_long_frame(small, include_missing=True)
    annotators = small.measures["human.quality"].annotators.shape[0]
    assert len(dense) == n * m * (len(small.measures) - 1 + annotators)
    assert list(dense.columns) == ["system", "input", "measure", "score", "annotator", "kind", "system_type"]
    sparse = dataset_to_long_frame(small)
    scored = sum(int((~np.isnan(x.scores)).sum()) * (1 if x.annotators is None else annotators)
                 for x in small.measures.values())
    assert len(sparse) == scored  # the first cell is complete: no order-keeping rows needed
    assert sparse["score"].dtype == np.float64
    assert set(sparse.loc[sparse["measure"] == "human.quality", "annotator"]) == {"annotator-1", "annotator-2",
                                                                                   "annotator-3"}
    assert set(sparse.loc[sparse["measure"] != "human.quality", "annotator"]) == {""}
    kinds = sparse.groupby("measure")["kind"].agg(set)
    assert {m: kinds[m] for m in small.measures} == {m: {x.kind} for m, x in small.measures.items()}
    assert_same(small, read_user_file(csv_bytes(sparse), name="small.csv"))


def test_order_is_kept_when_the_first_cells_are_missing():
    """Systems, inputs and measures come back in the dataset's order even when the first cells are empty."""
    scores = np.arange(12, dtype=float).reshape(3, 4)
    metric = scores.copy()
    metric[0, :] = np.nan  # the first system has no metric score
    human = scores.copy()
    human[:, 0] = np.nan  # the first input is unjudged ...
    human[1, 3] = np.nan
    metric[:, 0] = np.nan  # ... and has no score at all
    ds = Dataset(id="gaps", systems=["z", "y", "x"], inputs=["d9", "d1", "d5", "d0"],
                 measures={"metric.a": Measure("metric.a", "metric", metric),
                           "human.b": Measure("human.b", "human", human)},
                 system_attributes={"type": ["p", "q", "p"], "size": ["", "big", "small"]})
    frame = dataset_to_long_frame(ds)
    assert frame.iloc[0][["system", "input", "measure"]].tolist() == ["z", "d9", "metric.a"]
    for fmt in FORMATS:
        back = read_user_file(write(frame, fmt), name=f"gaps.{fmt}")
        assert_same(ds, back)
        assert back.inputs[0] == "d9" and not back.judged[0]


def test_special_names_round_trip_verbatim():
    names = ["a,b", 'q"t', "=1+1", "@SUM(A1)", "<script>x</script>", "nan", "NA", "None", "é", "semi;colon"]
    scores = np.arange(len(names) * 3, dtype=float).reshape(len(names), 3)
    ds = Dataset(id="odd", systems=names, inputs=["null", "1.50", "n/a"],
                 measures={"human.x": Measure("human.x", "human", scores),
                           "+metric": Measure("+metric", "metric", scores[::-1].copy())},
                 system_attributes={"Type": names})
    for fmt in FORMATS:
        assert_same(ds, round_trip(ds, fmt))


def test_the_kind_column_carries_kinds_that_names_do_not_tell(small):
    quality = small.measures["metric.strong"].scores
    ratings = small.measures["human.quality"].annotators
    odd = Dataset(id="odd", systems=small.systems, inputs=small.inputs,
                  measures={"quality": Measure("quality", "human", small.measures["human.quality"].scores),
                            "relevance": Measure("relevance", "metric", quality),
                            "rouge": Measure("rouge", "metric", quality + 1),
                            "raters": Measure.from_annotators("raters", "metric", ratings)})
    assert not looks_human("quality") and looks_human("relevance")
    assert check_long_export(odd) is odd and check_long_export(small) is small
    frame = dataset_to_long_frame(odd)
    for fmt in FORMATS:  # no declaration: 'quality' human, 'relevance' and the annotated 'raters' metrics
        assert_same(odd, read_user_file(write(frame, fmt), name=f"odd.{fmt}"))
    detected = read_user_file(csv_bytes(frame.drop(columns="kind")), name="odd.csv")  # without it: detection
    assert detected.human_measures == ("relevance", "raters")


def test_annotators_that_do_not_average_to_the_scores_are_left_out(small):
    human = small.measures["human.quality"]
    shifted = Measure("human.quality", "human", human.scores + 0.5, human.annotators)
    ds = Dataset(id="shifted", systems=small.systems, inputs=small.inputs,
                 measures={**small.measures, "human.quality": shifted})
    frame = dataset_to_long_frame(ds)
    assert "annotator" not in frame.columns
    back = read_user_file(csv_bytes(frame), name="shifted.csv")
    assert_same(ds, back, annotators=False)
    assert back.measures["human.quality"].annotators is None


def test_a_dataset_without_attributes_or_annotators_writes_five_columns(small):
    plain = Dataset(id="plain", systems=small.systems, inputs=small.inputs,
                    measures={n: Measure(n, x.kind, x.scores) for n, x in small.measures.items()})
    frame = dataset_to_long_frame(plain)
    assert list(frame.columns) == ["system", "input", "measure", "score", "kind"]
    assert_same(plain, read_user_file(csv_bytes(frame), name="plain.csv"))


def test_an_export_the_upload_refuses_says_so(small):
    """The upload's own rules still apply: a single system is refused with its reason."""
    one = small.subset(systems=small.systems[:1])
    with pytest.raises(UploadError) as info:
        read_user_file(csv_bytes(dataset_to_long_frame(one)), name="one.csv")
    assert info.value.kind == "too-few-systems"


# -- argument checks ------------------------------------------------------------------------------------
def test_bad_arguments_are_refused_clearly(small):
    with pytest.raises(TypeError, match="dataset must be a metaeval_core.data.dataset.Dataset"):
        dataset_to_long_frame(pd.DataFrame())
    with pytest.raises(TypeError, match="include_missing must be True or False"):
        dataset_to_long_frame(small, include_missing=1)
    with pytest.raises(TypeError, match="include_missing"):
        dataset_to_long_frame(small, include_missing=None)
    with pytest.raises(TypeError):
        dataset_to_long_frame(small, True)  # keyword-only
    with pytest.raises(TypeError, match="dataset must be"):
        check_long_export("summeval")


@pytest.mark.parametrize("where, name, problem", [
    ("systems", " padded", "surrounding whitespace"),
    ("inputs", "tab\there", "control character"),
    ("measures", "metric\n", "surrounding whitespace"),
    ("attribute", "", "is empty"),
    ("value", "x\x00", "control character"),
])
def test_names_the_upload_would_change_are_refused(small, where, name, problem):
    systems, inputs = list(small.systems), list(small.inputs)
    measures = dict(small.measures)
    attributes = dict(small.system_attributes)
    if where == "systems":
        systems[0] = name
    elif where == "inputs":
        inputs[1] = name
    elif where == "measures":
        scores = measures.pop("metric.weak").scores
        measures[name] = Measure(name, "metric", scores)
    elif where == "attribute":
        attributes[name] = ["a"] * len(systems)
    else:
        attributes["type"] = [name, *attributes["type"][1:]]
    ds = Dataset(id="bad", systems=systems, inputs=inputs, measures=measures, system_attributes=attributes)
    for function in (dataset_to_long_frame, check_long_export):
        with pytest.raises(ValueError, match=problem) as info:
            function(ds)
        assert function.__name__ in str(info.value) and "read back" in str(info.value)


def test_attribute_columns_that_clash_by_case_are_refused(small):
    ds = Dataset(id="clash", systems=small.systems, inputs=small.inputs, measures=small.measures,
                 system_attributes={"Size": ["a"] * 5, "size": ["b"] * 5})
    with pytest.raises(ValueError, match="share the column"):
        dataset_to_long_frame(ds)


def test_an_empty_dataset_is_refused():
    ds = Dataset(id="empty", systems=["a"], inputs=[], measures={})
    with pytest.raises(ValueError, match="at least one of each"):
        dataset_to_long_frame(ds)


# -- property-based -------------------------------------------------------------------------------------
_names = _clean_names.filter(lambda n: n == n.strip() and _unreadable(n) is None)  # names the upload keeps verbatim
_cell = st.one_of(st.just(math.nan), st.sampled_from([0.0, 1.0, -2.5, 3.0]),
                  st.floats(min_value=-1e150, max_value=1e150))  # the upload refuses larger magnitudes


@st.composite
def _datasets(draw):
    """A small valid dataset: 2-4 systems, 2-5 inputs (2 judged), a human measure (with annotators or not),
    1-3 metrics, NaNs anywhere else, and sometimes a system attribute."""
    # names unique by their look-alike form: the readers refuse '1' beside '¹' (docs/methods.md sec. 17.2)
    unique = {"unique_by": lookalike_key}
    systems = draw(st.lists(_names, min_size=2, max_size=4, **unique))
    inputs = draw(st.lists(_names, min_size=2, max_size=5, **unique))
    n, m = len(systems), len(inputs)
    metrics = draw(st.lists(st.one_of(_names, st.sampled_from(["relevance", "expert.coherence", "human.m"])),
                            min_size=1, max_size=3, **unique))  # names that look human, too
    human_name = draw(st.sampled_from(["human.h", "relevance", "quality", "RelE"]))  # the 'kind' column decides
    metrics = [x for x in metrics if lookalike_key(x) != lookalike_key(human_name)]
    if not metrics:
        metrics = ["metric.m"]

    def grid(shape):
        return np.array(draw(st.lists(_cell, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))),
                        dtype=float).reshape(shape)

    measures = {}
    judged = draw(st.lists(st.integers(0, m - 1), min_size=2, max_size=m, unique=True))
    if draw(st.booleans()):
        ratings = grid((draw(st.integers(1, 3)), n, m))
        ratings[0, 0, judged] = 1.0
        measures[human_name] = Measure.from_annotators(human_name, "human", ratings)
    else:
        scores = grid((n, m))
        scores[0, judged] = 2.0
        measures[human_name] = Measure(human_name, "human", scores)
    for name in metrics:
        scores = grid((n, m))
        scores[draw(st.integers(0, n - 1)), draw(st.integers(0, m - 1))] = 0.5  # never an empty metric
        measures[name] = Measure(name, "metric", scores)
    order = draw(st.permutations(list(measures)))
    attributes = {}
    if draw(st.booleans()):
        attributes[draw(st.sampled_from(["type", "size"]))] = draw(st.lists(st.sampled_from(["", "a", "b c"]),
                                                                            min_size=n, max_size=n))
    return Dataset(id="drawn", systems=systems, inputs=inputs, measures={k: measures[k] for k in order},
                   system_attributes=attributes)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_datasets(), st.sampled_from(FORMATS), st.booleans())
def test_fuzz_any_dataset_round_trips(ds, fmt, include_missing):
    assert_same(ds, round_trip(ds, fmt, include_missing=include_missing))


# -- real data ------------------------------------------------------------------------------------------
@pytest.mark.realdata
@pytest.mark.parametrize("dataset_id", ["summeval", "frank-cnndm", "frank-xsum", "rose"])
def test_real_dataset_round_trips_without_declaring(data_dir, dataset_id):
    """Export -> CSV -> upload with no human_measures: the same human/metric measures and scores."""
    from metaeval_core.data.registry import dataset_info, load_dataset

    info = dataset_info(dataset_id, data_dir=data_dir)
    if not info.available:
        pytest.skip(f"{dataset_id} is not in the mirror {data_dir}: {info.reason}")
    ds = load_dataset(dataset_id, data_dir=data_dir)
    if dataset_id != "summeval":  # FRANK's RelE, EntE ...; RoSE's prior, ref_free, ref_based: not human by name
        assert any(not looks_human(name) for name in ds.human_measures)
    raw = csv_bytes(dataset_to_long_frame(ds))
    partial = not ds.metric_measures
    if partial:  # RoSE compares human protocols only: a full upload refuses that, a what-if merge takes it
        with pytest.raises(UploadError) as info:
            read_user_file(raw, name=f"{dataset_id}.csv")
        assert info.value.kind == "no-metric-measure"
    back = read_user_file(raw, name=f"{dataset_id}.csv", partial=partial)
    assert_same(ds, back)
    assert (back.human_measures, back.metric_measures) == (ds.human_measures, ds.metric_measures)
    assert (back.n_systems, back.n_inputs, back.n_judged) == (ds.n_systems, ds.n_inputs, ds.n_judged)
