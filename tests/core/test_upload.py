"""Tests of metaeval_core.data.upload: round trips, the bad-file corpus, edge cases and fuzzing."""

from __future__ import annotations

import gzip
import io
import json
import math
import pickle
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaeval_core.data.dataset import Dataset, DatasetError
from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset
from metaeval_core.data.upload import (
    UPLOAD_ERROR_KINDS,
    UploadError,
    UploadLimits,
    detect_layout,
    looks_human,
    read_user_file,
)

DATA = Path(__file__).resolve().parents[1] / "data"
BAD = DATA / "bad_uploads"
GOOD = DATA / "good_uploads"


# -- writers: a Dataset as each supported file --------------------------------------------
@pytest.fixture(scope="module")
def small() -> Dataset:
    return synthetic_dataset(SyntheticSpec(n_systems=5, n_judged=8, n_unjudged=6, n_annotators=3), id="small")


def long_frame(ds: Dataset, *, annotators: bool = True, attributes: bool = True) -> pd.DataFrame:
    """One row per score (per annotator for annotated measures); missing metric cells as empty scores."""
    rows = []
    for name, m in ds.measures.items():
        for i, s in enumerate(ds.systems):
            for j, d in enumerate(ds.inputs):
                if annotators and m.annotators is not None:
                    for a in range(m.annotators.shape[0]):
                        if not np.isnan(m.annotators[a, i, j]):
                            rows.append((s, d, name, m.annotators[a, i, j], f"ann{a}"))
                elif m.kind == "metric" or not np.isnan(m.scores[i, j]):
                    rows.append((s, d, name, m.scores[i, j], ""))
    frame = pd.DataFrame(rows, columns=["system", "input", "measure", "score", "annotator"])
    if not annotators:
        frame = frame.drop(columns="annotator")
    if attributes:
        types = dict(zip(ds.systems, ds.system_attributes["type"]))
        frame["system_type"] = frame["system"].map(types)
    return frame


def wide_frame(ds: Dataset) -> pd.DataFrame:
    grid_s, grid_i = np.meshgrid(np.arange(ds.n_systems), np.arange(ds.n_inputs), indexing="ij")
    frame = pd.DataFrame({
        "system": np.asarray(ds.systems)[grid_s.ravel()],
        "input": np.asarray(ds.inputs)[grid_i.ravel()],
        "system_type": np.asarray(ds.system_attributes["type"])[grid_s.ravel()],
    })
    for name, m in ds.measures.items():
        frame[name] = m.scores.ravel()
    return frame


def sacrerouge_bytes(ds: Dataset) -> bytes:
    """SacreROUGE JSONL: nested metric dicts (``a.b`` -> {"a": {"b": ...}}), annotator lists, reference lines."""
    lines = []
    for j, d in enumerate(ds.inputs):
        lines.append(json.dumps({"instance_id": d, "summarizer_id": "reference-0", "summarizer_type": "reference",
                                 "metrics": {"metric": {"strong": 100.0}}}))
        for i, s in enumerate(ds.systems):
            metrics: dict = {}
            for name, m in ds.measures.items():
                group, leaf = name.split(".", 1)
                if m.annotators is not None:
                    column = m.annotators[:, i, j]
                    value = [] if np.isnan(column).all() else [None if np.isnan(v) else float(v) for v in column]
                else:
                    value = None if np.isnan(m.scores[i, j]) else float(m.scores[i, j])
                metrics.setdefault(group, {})[leaf] = value
            lines.append(json.dumps({"instance_id": d, "summarizer_id": s, "summarizer_type": "peer",
                                     "metrics": metrics}))
    return ("\n".join(lines) + "\n").encode()


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, engine="pyarrow")
    return buffer.getvalue()


def csv_bytes(frame: pd.DataFrame, sep: str = ",") -> bytes:
    return frame.to_csv(index=False, sep=sep).encode()


def assert_same(original: Dataset, back: Dataset, *, annotators: bool = True, attributes: bool = True) -> None:
    assert back.systems == original.systems
    assert back.inputs == original.inputs
    assert list(back.measures) == list(original.measures)
    for name, m in original.measures.items():
        got = back.measures[name]
        assert got.kind == m.kind, name
        np.testing.assert_array_equal(got.scores, m.scores, err_msg=name)  # NaN-aware, exact
        if annotators and m.annotators is not None:
            assert got.annotators is not None
            np.testing.assert_array_equal(got.annotators, m.annotators, err_msg=name)
    np.testing.assert_array_equal(back.judged, original.judged)
    assert back.human_measures == original.human_measures
    assert back.metric_measures == original.metric_measures
    if attributes:
        assert dict(back.system_attributes) == dict(original.system_attributes)
        if annotators:
            assert back.fingerprint() == original.fingerprint()


# -- round trips ----------------------------------------------------------------------------
def test_long_csv_with_annotators_round_trip(small):
    back = read_user_file(csv_bytes(long_frame(small)), name="long.csv")
    assert_same(small, back)
    assert back.n_judged == 8 and back.n_unjudged == 6 and back.has_unjudged_pool
    assert back.measures["human.quality"].annotators.shape == (3, 5, 14)


def test_long_csv_without_annotators_round_trip(small):
    back = read_user_file(csv_bytes(long_frame(small, annotators=False)), name="long.csv")
    assert_same(small, back, annotators=False)
    assert back.measures["human.quality"].annotators is None


def test_wide_csv_round_trip(small):
    back = read_user_file(csv_bytes(wide_frame(small)), name="wide.csv")
    assert_same(small, back, annotators=False)


def test_wide_tsv_round_trip(small):
    back = read_user_file(csv_bytes(wide_frame(small), sep="\t"), name="wide.tsv")
    assert_same(small, back, annotators=False)


def test_sacrerouge_jsonl_round_trip(small):
    back = read_user_file(sacrerouge_bytes(small), name="metrics.jsonl")
    assert_same(small, back, attributes=False)
    assert any("reference" in note for note in back.notes)
    assert "reference-0" not in back.systems


@pytest.mark.parametrize("layout", ["long", "wide"])
def test_parquet_round_trip(small, layout):
    frame = long_frame(small) if layout == "long" else wide_frame(small)
    back = read_user_file(parquet_bytes(frame), name=f"{layout}.parquet")
    assert_same(small, back, annotators=layout == "long")


@pytest.mark.parametrize("which", ["csv", "jsonl"])
def test_gzip_round_trip(small, which, tmp_path):
    raw = csv_bytes(long_frame(small)) if which == "csv" else sacrerouge_bytes(small)
    path = tmp_path / f"scores.{which}.gz"
    path.write_bytes(gzip.compress(raw))
    back = read_user_file(path)
    assert_same(small, back, attributes=which == "csv")


def test_gzip_recognised_by_magic_bytes_without_gz_name(small):
    back = read_user_file(gzip.compress(csv_bytes(wide_frame(small))), name="wide.csv")
    assert_same(small, back, annotators=False)


def test_format_argument_overrides_the_extension(small):
    back = read_user_file(sacrerouge_bytes(small), name="export.dat", format="jsonl")
    assert_same(small, back, attributes=False)


def test_content_sniffed_without_a_name(small):
    assert read_user_file(sacrerouge_bytes(small)).n_systems == 5
    assert read_user_file(parquet_bytes(wide_frame(small))).n_systems == 5
    assert read_user_file(csv_bytes(wide_frame(small))).n_systems == 5


def test_streamlit_like_uploaded_file(small):
    class UploadedFile(io.BytesIO):
        name = "from_browser.csv"
        size = 0

    upload = UploadedFile(csv_bytes(long_frame(small)))
    upload.size = len(upload.getvalue())
    back = read_user_file(upload)
    assert_same(small, back)
    assert back.id == "upload-from_browser" and back.title == "from_browser.csv"


def test_path_source_and_dataset_id(small, tmp_path):
    path = tmp_path / "my scores (v2).csv"
    path.write_bytes(csv_bytes(wide_frame(small)))
    assert read_user_file(path).id == "upload-my-scores-v2"
    assert read_user_file(str(path), dataset_id="mine").id == "mine"


def test_200k_row_long_csv_round_trips():
    # Speed is measured in benchmarks/bench_upload.py, not asserted here.
    big = synthetic_dataset(SyntheticSpec(n_systems=16, n_judged=100, n_unjudged=1900))
    grid_s, grid_i = np.meshgrid(np.arange(16), np.arange(2000), indexing="ij")
    parts = [
        pd.DataFrame({"system": np.asarray(big.systems)[grid_s.ravel()],
                      "input": np.asarray(big.inputs)[grid_i.ravel()], "measure": name, "score": m.scores.ravel()})
        for name, m in big.measures.items()
    ]
    raw = csv_bytes(pd.concat(parts))
    assert raw.count(b"\n") > 190_000
    back = read_user_file(raw, name="big.csv")
    for name, m in big.measures.items():
        np.testing.assert_array_equal(back.measures[name].scores, m.scores)
    assert back.n_judged == 100 and back.n_inputs == 2000


# -- the good-file corpus -----------------------------------------------------------------------
def test_good_long_with_annotators():
    ds = read_user_file(GOOD / "long_with_annotators.csv")
    assert ds.systems == ("A", "B", "C") and ds.inputs == ("d1", "d2", "d3")
    rel = ds.measures["relevance"]
    assert rel.kind == "human" and rel.annotators.shape == (2, 3, 3)
    assert np.isnan(rel.annotators[1, 2, 0]) and rel.scores[2, 0] == 5.0 and rel.scores[0, 0] == 3.5
    np.testing.assert_array_equal(ds.judged, [True, True, False])
    assert ds.measures["rouge-1"].kind == "metric" and np.isnan(ds.measures["rouge-1"].scores[2, 2])


def test_good_wide_tsv_with_attribute_and_case_insensitive_headers():
    ds = read_user_file(GOOD / "wide.tsv")
    assert ds.human_measures == ("human.overall",) and ds.metric_measures == ("rouge-2", "bertscore")
    assert ds.system_attributes == {"size": ("small", "large")}
    np.testing.assert_array_equal(ds.judged, [True, True, False])


def test_good_sacrerouge_jsonl():
    ds = read_user_file(GOOD / "sacrerouge.jsonl")
    assert set(ds.measures) == {"expert.relevance", "rouge-2.f1", "rouge-2.recall", "ground-truth"}
    assert ds.systems == ("M1", "M2")
    assert ds.human_measures == ("expert.relevance", "ground-truth")
    assert ds.measures["expert.relevance"].annotators.shape == (3, 2, 3)
    assert ds.measures["expert.relevance"].scores[0, 1] == 4.5  # [5, 4, null]
    assert np.isnan(ds.measures["rouge-2.recall"].scores[0, 2])  # NaN token
    np.testing.assert_array_equal(ds.judged, [True, True, False])
    assert any("reference" in n for n in ds.notes)


def test_good_realsumm_style_long_with_aliases():
    ds = read_user_file(GOOD / "realsumm_style_long.csv")
    assert ds.inputs == ("0", "1") and ds.systems == ("bart_out", "lead3")
    assert ds.system_attributes == {"type": ("abs", "ext")}
    assert ds.human_measures == ("litepyramid_recall",)
    assert any("scale" in n for n in ds.notes) is False  # both within [0, 1]


def test_good_bom_semicolon_crlf():
    ds = read_user_file(GOOD / "bom_semicolon_crlf.csv")
    assert ds.systems == ("A", "B") and ds.inputs == ("d1", "d2")
    assert ds.measures["rouge"].scores[1, 1] == 0.6


def test_html_and_formula_names_are_kept_verbatim():
    ds = read_user_file(GOOD / "html_and_formula_names.csv")
    assert ds.systems == ("<script>alert(1)</script>", '=HYPERLINK("http://x")')
    assert ds.inputs == ("=cmd|' /C calc'!A0", "@SUM(A1:A9)")
    assert any("verbatim" in n for n in ds.notes)


def test_formula_names_in_jsonl_and_parquet_are_verbatim():
    frame = pd.DataFrame({"system": ["=1+1", "<img src=x onerror=alert(1)>"] * 2,
                          "input": ["@x", "@x", "+y", "+y"], "human.q": [1.0, 2, 3, 4], "m": [0.1, 0.2, 0.3, 0.5]})
    ds = read_user_file(parquet_bytes(frame), name="f.parquet")
    assert ds.systems == ("=1+1", "<img src=x onerror=alert(1)>") and ds.inputs == ("@x", "+y")


def test_mixed_scales_are_a_note_not_an_error():
    raw = b"system,input,human.q,rouge,bert\nA,d1,3,41.5,0.8\nB,d1,4,30.2,0.9\nA,d2,2,22.1,0.7\nB,d2,5,35,0.85\n"
    ds = read_user_file(raw, name="scales.csv")
    assert any("different scales" in n for n in ds.notes)


def test_unjudged_inputs_and_ties_and_missing_tokens():
    raw = (b"system,input,human.q,rouge\n"
           b"A,d1,3,0.5\nB,d1,3,0.5\nA,d2,N/A,0.5\nB,d2,null,0.5\nA,d3,2, 0.5 \nB,d3,None,\n")
    ds = read_user_file(raw, name="ties.csv")
    np.testing.assert_array_equal(ds.judged, [True, False, True])
    assert ds.n_unjudged == 1 and np.isnan(ds.measures["rouge"].scores[1, 2])


def test_human_measures_argument_overrides_the_naming_rule():
    ds = read_user_file(BAD / "no_human_measure.csv", human_measures=["bertscore"])
    assert ds.human_measures == ("bertscore",) and ds.metric_measures == ("rouge-1",)
    # an empty selection means "automatic", which finds none here
    with pytest.raises(UploadError) as info:
        read_user_file(BAD / "no_human_measure.csv", human_measures=[])
    assert info.value.kind == "no-human-measure"


def test_human_measures_can_demote_a_conventional_name():
    raw = b"system,input,relevance,coherence\nA,d1,3,4\nB,d1,4,5\nA,d2,2,3\nB,d2,5,4\n"
    ds = read_user_file(raw, name="x.csv", human_measures=["relevance"])
    assert ds.metric_measures == ("coherence",)


# -- the long layout's 'kind' column ------------------------------------------------------------
_KIND_FILE = (
    "System,Input,Measure,Score,Kind\n"
    "A,d1,RelE,1, Human \nA,d1,relevance,0.3,metric\nA,d1,rouge,0.2,METRIC\n"
    "B,d1,RelE,0,human\nB,d1,relevance,0.5,Metric\nB,d1,rouge,0.4,metric\n"
    "A,d2,RelE,1,HUMAN\nA,d2,relevance,0.4,metric\nA,d2,rouge,0.1,metric\n"
    "B,d2,RelE,0,human\nB,d2,relevance,0.6,metric\nB,d2,rouge,0.3,metric\n"
)


def test_kind_column_decides_whatever_the_names():
    """'RelE' does not look human and 'relevance' does: the column says otherwise (any case, padded)."""
    assert not looks_human("RelE") and looks_human("relevance")
    ds = read_user_file(_KIND_FILE.encode(), name="k.csv")
    assert ds.human_measures == ("RelE",) and ds.metric_measures == ("relevance", "rouge")
    assert any("'kind' column" in note for note in ds.notes)
    as_parquet = pd.read_csv(io.StringIO(_KIND_FILE), dtype=str)
    back = read_user_file(parquet_bytes(as_parquet.astype({"Score": float})), name="k.parquet")
    assert back.human_measures == ("RelE",) and back.metric_measures == ("relevance", "rouge")


def test_human_measures_argument_overrides_the_kind_column_with_a_note():
    ds = read_user_file(_KIND_FILE.encode(), name="k.csv", human_measures=["relevance"])
    assert ds.human_measures == ("relevance",) and ds.metric_measures == ("RelE", "rouge")
    note = next(n for n in ds.notes if "override" in n)
    assert "'kind' column" in note and "'RelE' (file: human)" in note and "'relevance' (file: metric)" in note
    agreeing = read_user_file(_KIND_FILE.encode(), name="k.csv", human_measures=["RelE"])
    assert agreeing.human_measures == ("RelE",) and not any("override" in n for n in agreeing.notes)


def test_an_all_empty_kind_column_is_absent():
    raw = b"system,input,measure,score,kind\n" + b"".join(
        f"{s},{d},{m},{v},{pad}\n".encode() for s, d, m, v, pad in [
            ("A", "d1", "human.q", 1, ""), ("A", "d1", "RelE", 0.3, " "), ("B", "d1", "human.q", 2, ""),
            ("B", "d1", "RelE", 0.1, ""), ("A", "d2", "human.q", 3, ""), ("A", "d2", "RelE", 0.2, ""),
            ("B", "d2", "human.q", 1, ""), ("B", "d2", "RelE", 0.5, "")])
    ds = read_user_file(raw, name="e.csv")  # detection: 'human.q' by name, 'RelE' a metric
    assert ds.human_measures == ("human.q",) and ds.metric_measures == ("RelE",)
    assert any("'kind'" in note and "ignored" in note for note in ds.notes)
    nulls = _LONG4.assign(measure=["human.q", "rouge"] * 2, kind=pd.Series([None] * 4, dtype=object))
    assert read_user_file(parquet_bytes(nulls), name="n.parquet", partial=True).human_measures == ("human.q",)


def test_kind_column_keeps_a_metric_with_annotators_a_metric():
    raw = (b"system,input,measure,score,annotator,kind\n"
           b"A,d1,q,1,x,human\nA,d1,m,0.1,x,metric\nA,d1,m,0.3,y,metric\nB,d1,q,2,,human\nB,d1,m,0.2,x,metric\n"
           b"A,d2,q,3,,human\nA,d2,m,0.4,x,metric\nB,d2,q,1,,human\nB,d2,m,0.5,y,metric\n")
    with pytest.raises(UploadError) as info:  # 'q' mixes annotated and plain rows: the annotator rule still holds
        read_user_file(raw, name="a.csv")
    assert info.value.kind == "missing-value"
    ds = read_user_file(raw.replace(b",,human", b",x,human"), name="a.csv")
    assert ds.human_measures == ("q",) and ds.metric_measures == ("m",)
    assert ds.measures["m"].annotators is not None and ds.measures["m"].scores[0, 0] == pytest.approx(0.2)


def test_a_kind_column_in_the_wide_layout_is_still_a_measure():
    raw = b"system,input,human.q,kind\nA,d1,1,0.1\nB,d1,2,0.2\nA,d2,3,0.3\nB,d2,1,0.4\n"
    assert read_user_file(raw, name="w.csv").metric_measures == ("kind",)


@pytest.mark.parametrize("name, human", [
    ("human.relevance", True), ("Human:overall", True), ("expert.coherence", True), ("turker.fluency", True),
    ("ground-truth", True), ("litepyramid.recall", True), ("Factuality", True), ("score_human", True),
    ("relevance", True), ("consistency", True), ("rouge-2.f1", False), ("bertscore", False),
    ("humanity_score", False), ("QAEval", False),
])
def test_looks_human(name, human):
    assert looks_human(name) is human


@pytest.mark.parametrize("columns, layout", [
    (["system", "input", "measure", "score"], "long"),
    (["System", "Doc_ID", "Metric", "Value", "system_type"], "long"),
    (["system", "input", "score"], "wide"),  # a lone 'score' is a measure
    (["system", "input", "rouge", "human.q"], "wide"),
])
def test_detect_layout(columns, layout):
    assert detect_layout(pd.DataFrame(columns=columns)) == layout
    assert detect_layout(columns) == layout


def test_detect_layout_rejects_non_frames():
    with pytest.raises(TypeError, match="frame"):
        detect_layout(42)


def test_argument_type_errors_name_the_parameter():
    with pytest.raises(TypeError, match="source"):
        read_user_file(12345)
    with pytest.raises(TypeError, match="human_measures"):
        read_user_file(b"x", human_measures="relevance")
    with pytest.raises(TypeError, match="limits"):
        read_user_file(b"x", limits={"max_bytes": 3})
    with pytest.raises(ValueError, match="max_rows"):
        UploadLimits(max_rows=0)


def test_upload_error_contract():
    with pytest.raises(UploadError) as info:
        read_user_file(BAD / "one_system.csv")
    error = info.value
    assert isinstance(error, DatasetError) and isinstance(error, ValueError)
    assert error.kind == "too-few-systems" and error.file == "one_system.csv"
    copy = pickle.loads(pickle.dumps(error))
    assert copy.kind == error.kind and str(copy) == str(error)


def test_nothing_is_executed_or_unpickled(tmp_path):
    # a real pickle named .pkl is refused by extension, and pickle bytes named .csv are just bad text
    payload = pickle.dumps({"a": 1})
    with pytest.raises(UploadError) as info:
        read_user_file(payload, name="x.pkl")
    assert info.value.kind == "unknown-format"
    with pytest.raises(UploadError):
        read_user_file(payload, name="x.csv")


# -- the bad-file corpus ----------------------------------------------------------------------
def _good_wide(n_rows: int = 4) -> bytes:
    rows = [f"{'AB'[r % 2]},d{r // 2},{r % 5 + 1},{0.1 * r:.1f}" for r in range(n_rows)]
    return ("system,input,human.q,rouge\n" + "\n".join(rows) + "\n").encode()


def _parquet(frame: pd.DataFrame) -> bytes:
    return parquet_bytes(frame)


_LONG4 = pd.DataFrame({"system": ["A", "B", "A", "B"], "input": ["d1", "d1", "d2", "d2"],
                       "measure": ["human.q"] * 4, "score": [1.0, 2.0, 3.0, 4.0]})

# (id, source: file name in bad_uploads or a callable giving (bytes, name), kind, needles, read_user_file kwargs)
CASES = [
    # empty
    ("empty", "empty.csv", "empty-file", ["empty.csv", "empty"], {}),
    ("whitespace-only", "whitespace_only.csv", "empty-file", ["whitespace_only.csv"], {}),
    ("header-only", "header_only.csv", "empty-file", ["no data rows"], {}),
    ("empty-bytes", lambda: (b"", "x.jsonl"), "empty-file", ["x.jsonl"], {}),
    ("bom-only", lambda: (b"\xef\xbb\xbf\n", "x.csv"), "empty-file", ["x.csv"], {}),
    ("jsonl-only-references", "only_references.jsonl", "empty-file", ["reference"], {}),
    # encoding
    ("latin1", lambda: (b"system,input,human.q,rouge\nA,d1,3,0.4\nB,caf\xe9,4,0.5\n", "latin.csv"), "encoding",
     ["latin.csv", "line 3", "offset 43", "0xe9"], {}),
    ("utf16", lambda: ("system,input,human.q,rouge\nA,d1,3,0.4\n".encode("utf-16"), "u16.csv"), "encoding",
     ["UTF-16"], {}),
    ("nul-bytes", lambda: (b"system,input,human.q\nA,d\x001,3\n", "nul.csv"), "encoding", ["NUL", "line 2"], {}),
    ("latin1-jsonl", lambda: (b'{"instance_id": "caf\xe9"}\n', "l.jsonl"), "encoding", ["line 1"], {}),
    # structure
    ("missing-input-column", "missing_input_column.csv", "missing-column",
     ["missing input", "found 'system', 'measure', 'score'", "doc_id"], {}),
    ("wide-no-measures", "wide_no_measure_columns.csv", "missing-column", ["no measure columns"], {}),
    ("duplicate-columns", "duplicate_columns.csv", "duplicate-column", ["'rouge'", "'ROUGE '"], {}),
    ("unnamed-column-with-values", "unnamed_column_with_values.csv", "bad-header", ["column 4", "line 1"], {}),
    ("unclosed-quote", "unclosed_quote.csv", "broken-csv", ["unclosed_quote.csv", "EOF", "line 3"], {}),
    ("too-many-fields", "too_many_fields.csv", "broken-csv", ["line 3"], {}),
    ("long-with-extra-columns", "long_with_extra_columns.csv", "mixed-format", ["'bleu'", "long"], {}),
    ("annotator-in-wide", "annotator_in_wide.csv", "mixed-format", ["'annotator'"], {}),
    ("jsonl-in-csv", "jsonl_in_csv.csv", "mixed-format", ["line 1", ".jsonl"], {}),
    ("csv-in-jsonl", "csv_in_jsonl.jsonl", "mixed-format", ["line 1", "CSV"], {}),
    ("json-array", "json_array.json", "mixed-format", ["array"], {}),
    ("parquet-bytes-in-csv", lambda: (_parquet(_LONG4), "looks.csv"), "mixed-format", ["Parquet"], {}),
    ("zip-in-csv", lambda: (b"PK\x03\x04" + b"\x00" * 40, "book.csv"), "mixed-format", ["ZIP"], {}),
    # values
    ("non-numeric-long", "non_numeric_long.csv", "non-numeric", ["line 5", "'score'", "'abc'"], {}),
    ("non-numeric-wide-html", "non_numeric_wide.csv", "non-numeric", ["line 4", "'rouge'", "'<b>high</b>'"], {}),
    ("decimal-comma", "decimal_comma.csv", "non-numeric", ["line 2", "'0,4'", "decimal separator"], {}),
    ("long-bad-value-truncated", lambda: (b"system,input,measure,score\nA,d1,q,x" + b"y" * 500 + b"\n", "t.csv"),
     "non-numeric", ["line 2", "..."], {}),
    ("inf-long", "inf_long.csv", "non-finite", ["line 3", "'score'", "'inf'"], {}),
    ("neg-inf-wide", "neg_inf_wide.csv", "non-finite", ["line 3", "'rouge'", "'-Infinity'"], {}),
    ("jsonl-string-score", "string_score.jsonl", "non-numeric", ["line 2", "'rouge'", "'n.a.=1'"], {}),
    ("jsonl-bool-score", "bool_score.jsonl", "non-numeric", ["line 1", "'faithful'", "true"], {}),
    ("jsonl-nested-list", "nested_list_score.jsonl", "non-numeric", ["line 1", "'ground-truth'"], {}),
    ("jsonl-infinity", "infinity_score.jsonl", "non-finite", ["line 2", "'rouge'"], {}),
    ("jsonl-huge-int", lambda: (b'{"instance_id": "d", "summarizer_id": "A", "metrics": {"r": 1' + b"0" * 400
                                + b"}}\n", "big.jsonl"), "non-finite", ["line 1", "'r'"], {}),
    # cells
    ("duplicate-cell-long", "duplicate_cell_long.csv", "duplicate-cell", ["line 2 and line 6", "'human.q'"], {}),
    ("duplicate-cell-wide", "duplicate_cell_wide.csv", "duplicate-cell", ["line 3 and line 5", "'B'", "'d1'"], {}),
    ("duplicate-annotator", "duplicate_annotator.csv", "duplicate-cell", ["line 4 and line 5", "same annotator"], {}),
    ("duplicate-jsonl-line", "duplicate_line.jsonl", "duplicate-cell", ["line 1 and line 4"], {}),
    ("duplicate-cell-parquet", lambda: (_parquet(pd.concat([_LONG4, _LONG4.iloc[[2]]])), "dup.parquet"),
     "duplicate-cell", ["row 3 and row 5"], {}),
    ("inconsistent-attribute", "inconsistent_system_type.csv", "inconsistent-attribute",
     ["'B'", "'ext'", "'abs'", "line 3", "line 5"], {}),
    # the long layout's 'kind' column
    ("unknown-kind", "unknown_kind.csv", "unknown-kind", ["line 5", "'kind'", "'humann'", "'human' nor 'metric'"],
     {}),
    ("kind-empty-on-some-rows", "kind_empty_on_some_rows.csv", "missing-value",
     ["line 4", "'kind'", "line 2 gives one", "every row"], {}),
    ("inconsistent-kind", "inconsistent_kind.csv", "inconsistent-kind",
     ["line 6", "'kind'", "'RelE'", "'human' at line 2", "'metric' at line 6", "same on every row"], {}),
    ("unknown-kind-parquet", lambda: (_parquet(_LONG4.assign(kind=["human", "human", "rating", "human"])),
                                      "k.parquet"), "unknown-kind", ["row 3", "'kind'", "'rating'"], {}),
    # names
    ("empty-system-name", "empty_system_name.csv", "missing-value", ["line 4", "'system'"], {}),
    ("annotator-missing", "annotator_missing_on_human_row.csv", "missing-value", ["line 4", "'quality'"], {}),
    ("control-char-name", "control_char_name.csv", "bad-name", ["line 3", "'input'", "\\x01"], {}),
    ("jsonl-float-id", "float_instance_id.jsonl", "bad-name", ["line 1", "'instance_id'"], {}),
    ("long-system-name", lambda: (_good_wide().replace(b"\nB,d0,", b"\n" + b"S" * 300 + b",d0,"), "n.csv"),
     "name-too-long", ["line 3", "'system'", "300 characters", "limit is 200"], {}),
    ("long-measure-header", lambda: (b"system,input," + b"m" * 250 + b",human.q\nA,d,1,2\nB,d,2,3\n", "h.csv"),
     "name-too-long", ["250 characters"], {}),
    ("long-jsonl-key", lambda: (b'{"instance_id": "d", "summarizer_id": "A", "metrics": {"' + b"k" * 30 + b'": 1}}\n',
                                "k.jsonl"), "name-too-long", ["line 1", "30 characters"],
     {"limits": UploadLimits(max_name_length=20)}),
    ("missing-summarizer-id", "missing_summarizer_id.jsonl", "missing-column", ["line 2", "'summarizer_id'"], {}),
    ("missing-metrics", "missing_metrics.jsonl", "missing-column", ["line 1", "'metrics'", "'scores'"], {}),
    # JSONL lines
    ("broken-jsonl-line", "broken_line.jsonl", "broken-jsonl", ["broken_line.jsonl", "line 3"], {}),
    ("jsonl-line-not-object", "line_not_object.jsonl", "broken-jsonl", ["line 3", "list"], {}),
    ("jsonl-metrics-not-object", "metrics_not_object.jsonl", "broken-jsonl", ["line 2", "'metrics'"], {}),
    # parquet
    ("garbage-parquet", "garbage.parquet", "bad-parquet", ["garbage.parquet"], {}),
    ("not-parquet-bytes", lambda: (b"system,input\nA,d\n", "x.parquet"), "bad-parquet", ["PAR1"], {}),
    ("truncated-parquet", lambda: (_parquet(_LONG4)[:-30] + b"PAR1", "cut.parquet"), "bad-parquet", ["cut.parquet"],
     {}),
    ("parquet-string-scores", lambda: (_parquet(_LONG4.astype({"score": str})), "s.parquet"), "bad-parquet",
     ["'score'", "string"], {}),
    ("parquet-bool-measure", lambda: (_parquet(pd.DataFrame({"system": ["A", "B"], "input": ["d", "d"],
                                                              "human.q": [1.0, 2.0], "flag": [True, False]})),
                                      "b.parquet"), "bad-parquet", ["'flag'", "bool"], {}),
    ("parquet-float-system-names", lambda: (_parquet(_LONG4.assign(system=[1.5, 2.5, 1.5, 2.5])), "f.parquet"),
     "bad-parquet", ["'system'", "double"], {}),
    ("parquet-inf", lambda: (_parquet(_LONG4.assign(score=[1.0, np.inf, 2.0, 3.0])), "i.parquet"), "non-finite",
     ["row 2", "'score'"], {}),
    # formats
    ("xlsx", "scores.xlsx", "unknown-format", ["'.xlsx'", "CSV"], {}),
    ("pickle", "scores.pkl", "unknown-format", ["'.pkl'"], {}),
    ("format-argument", lambda: (_good_wide(), "x.csv"), "unknown-format", ["'xml'"], {"format": "xml"}),
    ("corrupt-gzip", "corrupt.csv.gz", "bad-gzip", ["corrupt.csv.gz"], {}),
    # limits
    ("too-large-bytes", lambda: (_good_wide(), "big.csv"), "too-large", ["big.csv", "limit is 50 bytes"],
     {"limits": UploadLimits(max_bytes=50)}),
    ("too-large-gzip-bomb", lambda: (gzip.compress(b"system,input\n" + b"0" * 200_000), "bomb.csv.gz"),
     "too-large", ["decompresses"], {"limits": UploadLimits(max_bytes=10_000)}),
    ("too-many-rows-csv", lambda: (_good_wide(8), "rows.csv"), "too-many-rows", ["5"],
     {"limits": UploadLimits(max_rows=5)}),
    ("too-many-rows-jsonl", lambda: (GOOD.joinpath("sacrerouge.jsonl").read_bytes(), "r.jsonl"), "too-many-rows",
     ["line 1", "scores"], {"limits": UploadLimits(max_rows=2)}),  # a JSONL's rows are its scores
    ("too-many-rows-parquet", lambda: (_parquet(_LONG4), "r.parquet"), "too-many-rows", ["4 rows"],
     {"limits": UploadLimits(max_rows=3)}),
    ("too-many-cells", lambda: (_good_wide(8), "cells.csv"), "too-many-cells", ["16 score cells"],
     {"limits": UploadLimits(max_cells=10)}),
    # dataset rules
    ("one-system", "one_system.csv", "too-few-systems", ["only 1 system", "'A'"], {}),
    ("one-judged-input", "one_judged_input.csv", "too-few-inputs", ["only 1 input"], {}),
    ("no-human-measure", "no_human_measure.csv", "no-human-measure", ["'rouge-1'", "human.", "human_measures"], {}),
    ("no-metric-measure", "no_metric_measure.csv", "no-metric-measure", ["'relevance'", "'coherence'"], {}),
    ("all-nan-metric", "all_nan_metric.csv", "all-nan-measure", ["'bleu'"], {}),
    ("human-without-scores", "human_without_scores.csv", "no-judged-inputs", ["'human.q'"], {}),
    ("unknown-human-measure", lambda: (_good_wide(), "u.csv"), "unknown-measure", ["'nope'", "'rouge'"],
     {"human_measures": ["nope"]}),
    # look-alike names (issue 13): invisible characters are refused, line separators are control characters
    ("zero-width-space-system", "lookalike_names.csv", "bad-name", ["line 4", "U+200B", "ZERO WIDTH SPACE"], {}),
    ("bom-inside-name", "bom_inside_name.csv", "bad-name", ["line 3", "U+FEFF"], {}),
    ("bidi-override-input", "bidi_override_name.csv", "bad-name", ["line 4", "'input'", "U+202E"], {}),
    ("u2028-in-name", "u2028_in_name.csv", "bad-name", ["line 2", "line separator"], {}),
    ("u0085-in-measure", "nel_in_measure_name.csv", "bad-name", ["line 3", "'measure'"], {}),
    ("invisible-header", "invisible_header.csv", "bad-name", ["line 1", "U+200D"], {}),
    ("nfd-duplicate-header", "nfd_duplicate_header.csv", "duplicate-column", ["'Modél'"], {}),
    ("zero-width-jsonl-metric", lambda: (b'{"instance_id": "d", "summarizer_id": "A", "metrics": {"r\xe2\x80\x8bq": 1}}\n',
                                         "z.jsonl"), "bad-name", ["line 1", "U+200B"], {}),
    # duplicate keys in a JSON object (issue 13)
    ("json-duplicate-metric-key", "json_duplicate_key.jsonl", "duplicate-column", ["line 1", "'rouge'", "twice"], {}),
    ("json-duplicate-nested-key", "json_duplicate_nested_key.jsonl", "duplicate-column", ["line 1", "'f1'"], {}),
    ("json-duplicate-id-key", "json_duplicate_id_key.jsonl", "duplicate-column", ["line 1", "'summarizer_id'"], {}),
    ("jsonl-inconsistent-summarizer-type", "jsonl_inconsistent_summarizer_type.jsonl", "inconsistent-attribute",
     ["line 3", "'A'", "'peer'", "'extractive'"], {}),
    # magnitudes the statistics cannot sum and square (issue 13)
    ("huge-scores-wide", "huge_scores.csv", "out-of-range", ["line 2", "'rouge'", "1e308", "1e+150"], {}),
    ("huge-score-long", "huge_long.csv", "out-of-range", ["line 2", "'human.q'", "1e151"], {}),
    ("huge-score-jsonl", "huge_score.jsonl", "out-of-range", ["line 1", "'rouge'"], {}),
    ("huge-score-parquet", lambda: (_parquet(_LONG4.assign(score=[1.0, 2.0, -1e300, 3.0])), "h.parquet"),
     "out-of-range", ["row 3", "'human.q'"], {}),
    # measure and system limits (issue 13)
    ("too-many-measure-columns", lambda: (_good_wide(), "m.csv"), "too-many-measures", ["2 measure columns",
     "METAEVAL_MAX_UPLOAD_MEASURES"], {"limits": UploadLimits(max_measures=1)}),
    ("too-wide-header", lambda: (b"system,input," + b",".join(b"m%d" % j for j in range(40)) + b"\nA,d" + b",1" * 40
                                 + b"\n", "w.csv"), "too-many-measures", ["42 columns", "line 1"],
     {"limits": UploadLimits(max_measures=5)}),
    ("too-many-measures-long", lambda: (_parquet(_LONG4.assign(measure=["a", "b", "c", "human.q"])), "l.parquet"),
     "too-many-measures", ["4 measures"], {"limits": UploadLimits(max_measures=3)}),
    ("too-many-measures-parquet-wide", lambda: (_parquet(pd.DataFrame({"system": ["A"], "input": ["d"], "x": [1.0],
                                                                         "y": [2.0], "human.q": [3.0]})), "p.parquet"),
     "too-many-measures", ["3 measure columns"], {"limits": UploadLimits(max_measures=2)}),
    ("too-many-systems-wide", lambda: (_good_wide(), "s.csv"), "too-many-systems", ["2 systems",
     "METAEVAL_MAX_UPLOAD_SYSTEMS"], {"limits": UploadLimits(max_systems=1)}),
    ("too-many-systems-long", lambda: (_parquet(_LONG4), "s.parquet"), "too-many-systems", ["2 systems"],
     {"limits": UploadLimits(max_systems=1)}),
]

# Files that used to lose or split data silently and are now read, with a note naming what was not read (issue 13;
# the files are in bad_uploads/read_with_notes/, apart from the corpus of rejected files):
# (id, source, systems, measures, a needle every note list must hold, read_user_file kwargs)
ACCEPTED = [
    ("wide-metric-named-score", "read_with_notes/wide_metric_named_score.csv", ["A", "B", "C"], ["human.q", "score"], None, {}),
    ("wide-metric-named-value", "read_with_notes/wide_metric_named_value.csv", ["A", "B", "C"], ["human.q", "value"], None, {}),
    ("wide-doc-id-beside-input", "read_with_notes/wide_doc_id_next_to_input.csv", ["A", "B"], ["human.q", "rouge"],
     "'doc_id' is not read: a second input id column", {}),
    ("long-doc-id-beside-input", "read_with_notes/long_doc_id_next_to_input.csv", ["A", "B"], ["human.q", "rouge"],
     "'doc_id' is not read", {}),
    ("csv-saved-index", "read_with_notes/csv_with_saved_index.csv", ["A", "B"], ["human.q", "rouge"],
     "'Unnamed: 0' is not read: the row index", {}),
    ("parquet-filtered-frame-index", lambda: (_parquet_with_index(_FRAME8[_FRAME8["human.q"] != 3]), "f.parquet"),
     ["A", "B", "C", "D"], ["human.q", "rouge"], "'__index_level_0__' are not read", {}),
    ("parquet-named-index", lambda: (_parquet_with_index(_FRAME8.set_index("rouge2")), "n.parquet"),
     ["A", "B", "C", "D"], ["human.q", "rouge"], "'rouge2' are not read: the row index pandas saved", {}),
    ("jsonl-extra-keys", "read_with_notes/jsonl_extra_keys.jsonl", ["A", "B"], ["human.q", "rouge"], "'summary' are not read", {}),
    ("nfd-and-nfc-are-one-system", "read_with_notes/nfd_and_nfc_system.csv", ["Modél", "B"], ["human.q", "rouge"], "NFC", {}),
]

_FRAME8 = pd.DataFrame({"system": list("AABBCCDD"), "input": ["d1", "d2"] * 4, "human.q": [1, 2, 3, 4, 5, 6, 7, 8.0],
                        "rouge": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9], "rouge2": [9, 1, 7, 3, 5, 4, 8, 2]})


def _parquet_with_index(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.drop(columns=[c for c in ("rouge2",) if c in frame.columns]).to_parquet(buffer)  # index kept on purpose
    return buffer.getvalue()


@pytest.mark.parametrize("case_id, spec, systems, measures, needle, kwargs", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_accepted_upload_keeps_every_column_or_names_it(case_id, spec, systems, measures, needle, kwargs):
    source, extra, _ = _source(spec)
    ds = read_user_file(source, **extra, **kwargs)
    assert list(ds.systems) == systems
    assert list(ds.measures) == measures
    if needle is not None:
        assert any(needle in note for note in ds.notes), ds.notes


def _source(spec):
    if callable(spec):
        raw, name = spec()
        return raw, {"name": name}, name
    return BAD / spec, {}, spec


@pytest.mark.parametrize("case_id, spec, kind, needles, kwargs", CASES, ids=[c[0] for c in CASES])
def test_bad_upload(case_id, spec, kind, needles, kwargs):
    source, extra, file_name = _source(spec)
    with pytest.raises(UploadError) as info:
        read_user_file(source, **extra, **kwargs)
    error = info.value
    message = str(error)
    assert error.kind == kind, message
    assert error.kind in UPLOAD_ERROR_KINDS
    assert file_name in message, message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"


def test_corpus_is_large_and_covers_the_kinds():
    assert len(CASES) >= 40
    covered = {c[2] for c in CASES}
    # every kind except the safety net and 'not-found' (tested separately) has a corpus case
    assert set(UPLOAD_ERROR_KINDS) - covered == {"not-found", "invalid-dataset"}


def test_every_bad_file_on_disk_is_in_the_corpus():
    listed = {c[1] for c in [*CASES, *ACCEPTED] if isinstance(c[1], str)}
    on_disk = {p.name for p in BAD.iterdir() if p.is_file()}
    assert on_disk <= listed | {"no_human_measure.csv"}, on_disk - listed


def test_not_found(tmp_path):
    with pytest.raises(UploadError) as info:
        read_user_file(tmp_path / "nope.csv")
    assert info.value.kind == "not-found" and "nope.csv" in str(info.value)


def test_size_is_checked_before_reading(tmp_path):
    class Unreadable(io.BytesIO):
        name = "huge.csv"

        def read(self, *args):  # pragma: no cover - must not be called
            raise AssertionError("read before the size check")

    with pytest.raises(UploadError) as info:
        read_user_file(Unreadable(b"x" * 1000), limits=UploadLimits(max_bytes=100))
    assert info.value.kind == "too-large" and "1,000 bytes" in str(info.value)
    path = tmp_path / "huge.csv"
    path.write_bytes(b"x" * 1000)
    with pytest.raises(UploadError) as info:
        read_user_file(path, limits=UploadLimits(max_bytes=100))
    assert info.value.kind == "too-large"


def test_bom_prefixed_utf8_is_accepted_in_csv_and_jsonl(small):
    assert read_user_file(b"\xef\xbb\xbf" + csv_bytes(wide_frame(small)), name="b.csv").n_systems == 5
    assert read_user_file(b"\xef\xbb\xbf" + sacrerouge_bytes(small), name="b.jsonl").n_systems == 5


# -- property-based fuzzing ----------------------------------------------------------------------
_RESERVED = {a for aliases in (
    ("system", "system_id", "summarizer_id", "summarizer", "model", "model_id"),
    ("input", "input_id", "doc", "doc_id", "document", "document_id", "instance_id", "example_id", "item", "item_id"),
    ("measure", "metric", "measure_name", "metric_name"), ("score", "value"),
    ("annotator", "annotator_id", "rater", "rater_id", "judge", "worker", "worker_id"),
    ("system_type", "summarizer_type"),
) for a in aliases}

_SPECIAL_NAMES = ["A", "B", "d1", " A ", "nan", "NA", "None", "<script>x</script>", "=1+1", "@SUM(A1)", "a,b", 'q"t',
                  "a;b", "tab\tname", "é", "\u202e", "x" * 201, "", "line\nbreak"]
_clean_names = st.one_of(
    st.text(st.characters(categories=("L", "N", "P", "S", "Zs")), min_size=1, max_size=6).filter(str.strip),
    st.sampled_from(_SPECIAL_NAMES[:12]),
)
_messy_names = st.one_of(st.sampled_from(_SPECIAL_NAMES),
                         st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6))
_finite = st.one_of(st.sampled_from([0.0, 1.0, 3.0, -2.5]), st.floats(allow_nan=False, allow_infinity=False))


def _is_reserved(name: str) -> bool:
    key = name.strip().lower()
    return key in _RESERVED or key.startswith(("attr.", "attr:"))


@st.composite
def _tables(draw):
    """A long or wide table; mostly valid (unique clean names, finite values), sometimes messy."""
    messy = draw(st.integers(0, 3)) == 0
    names = _messy_names if messy else _clean_names
    values = st.one_of(_finite, st.just(math.nan), *([st.just(math.inf)] if messy else []))
    unique = {} if messy else {"unique_by": lambda n: n.strip()}
    systems = draw(st.lists(names, min_size=1 if messy else 2, max_size=4, **unique))
    inputs = draw(st.lists(names, min_size=1 if messy else 2, max_size=4, **unique))
    metric_names = names.filter(lambda n: not _is_reserved(n) and (messy or not looks_human(n)))
    extra = draw(st.lists(metric_names, min_size=0 if messy else 1, max_size=3,
                          unique_by=lambda n: n.strip().lower()))
    measures = ["human.h"] + [m for m in extra if m.strip().lower() != "human.h"]
    layout = draw(st.sampled_from(["long", "wide"]))
    rows = []
    for s in systems:
        for i in inputs:
            if messy and not draw(st.booleans()):
                continue
            rows.append((s, i, [draw(values) for _ in measures]))
    return layout, measures, rows


def _expected_cells(layout, measures, rows):
    cells = {}
    for s, i, values in rows:
        for m, v in zip(measures, values):
            if not math.isnan(v):
                cells[tuple(unicodedata.normalize("NFC", name.strip()) for name in (s, i, m))] = v
    return cells


def _to_frame(layout, measures, rows):
    if layout == "wide":
        data = [[s, i, *values] for s, i, values in rows]
        return pd.DataFrame(data, columns=["system", "input", *measures])
    data = [(s, i, m, v) for s, i, values in rows for m, v in zip(measures, values)]
    return pd.DataFrame(data, columns=["system", "input", "measure", "score"])


def _check_against(ds: Dataset, cells):
    got = {}
    for name, m in ds.measures.items():
        for a, s in enumerate(ds.systems):
            for b, i in enumerate(ds.inputs):
                if not np.isnan(m.scores[a, b]):
                    got[(s, i, name)] = m.scores[a, b]
    assert got == cells
    assert ds.n_systems >= 2 and ds.n_judged >= 2 and ds.human_measures


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tables(), st.sampled_from(["csv", "tsv", "parquet"]))
def test_fuzz_tables_round_trip_or_upload_error(table, fmt):
    layout, measures, rows = table
    frame = _to_frame(layout, measures, rows)
    if fmt == "parquet":
        try:
            raw = parquet_bytes(frame)
        except Exception:  # pyarrow cannot write some frames (e.g. duplicate column names); not our concern
            return
    else:
        raw = csv_bytes(frame, sep="\t" if fmt == "tsv" else ",")
    try:
        ds = read_user_file(raw, name=f"fuzz.{fmt}")
    except UploadError as error:
        assert error.kind in UPLOAD_ERROR_KINDS and "fuzz." in str(error)
        return
    _check_against(ds, _expected_cells(layout, measures, rows))


_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5))
_json = st.recursive(_json_leaf, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                        st.dictionaries(st.text(max_size=4), kids, max_size=3)),
                     max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.fixed_dictionaries(
    {"instance_id": st.one_of(st.sampled_from(["d1", "d2"]), st.integers(0, 2), _json_leaf),
     "summarizer_id": st.one_of(st.sampled_from(["A", "B"]), _json_leaf),
     "metrics": st.one_of(st.fixed_dictionaries({"ground-truth": _json, "rouge": _json}), _json)},
    optional={"summarizer_type": st.sampled_from(["peer", "reference"])}), min_size=1, max_size=6))
def test_fuzz_jsonl_records(records):
    raw = "\n".join(json.dumps(r) for r in records).encode()
    try:
        ds = read_user_file(raw, name="fuzz.jsonl")
    except UploadError as error:
        assert error.kind in UPLOAD_ERROR_KINDS
        return
    assert ds.n_systems >= 2 and ds.n_judged >= 2


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fuzz_corrupted_bytes(data):
    base = data.draw(st.sampled_from([
        _good_wide(6), (GOOD / "sacrerouge.jsonl").read_bytes(), (GOOD / "long_with_annotators.csv").read_bytes(),
        _parquet(_LONG4), gzip.compress(_good_wide(6)),
    ]))
    raw = bytearray(base)
    for _ in range(data.draw(st.integers(0, 4))):
        if not raw:
            break
        position = data.draw(st.integers(0, len(raw) - 1))
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip":
            raw[position] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del raw[position:]
        else:
            raw[position:position] = data.draw(st.binary(min_size=1, max_size=4))
    name = data.draw(st.sampled_from(["f.csv", "f.jsonl", "f.parquet", "f.tsv", "f.csv.gz", None]))
    try:
        read_user_file(bytes(raw), name=name)
    except UploadError as error:
        assert error.kind in UPLOAD_ERROR_KINDS


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200), st.sampled_from(["f.csv", "f.jsonl", "f.parquet", None]))
def test_fuzz_random_bytes(raw, name):
    try:
        read_user_file(raw, name=name)
    except UploadError as error:
        assert error.kind in UPLOAD_ERROR_KINDS


@pytest.mark.realdata
def test_real_sacrerouge_file_reads_as_an_upload(data_dir):
    path = data_dir / "summeval" / "deutsch2022_reexamining" / "judged" / "metrics.jsonl.gz"
    if not path.is_file():
        pytest.skip(f"{path} is not in the mirror")
    ds = read_user_file(path)
    assert (ds.n_systems, ds.n_inputs, ds.n_judged) == (16, 100, 100)
    assert ds.human_measures == ("ground-truth",)
    assert ds.measures["ground-truth"].annotators.shape[0] == 3


def test_limits_are_configurable_from_the_environment():
    limits = UploadLimits.from_environment({"METAEVAL_MAX_UPLOAD_MB": "0.5", "METAEVAL_MAX_UPLOAD_ROWS": "10"})
    assert limits.max_bytes == 2**19 and limits.max_rows == 10
    assert UploadLimits.from_environment({}) == UploadLimits()
    with pytest.raises(ValueError, match="METAEVAL_MAX_UPLOAD_ROWS must be a number"):
        UploadLimits.from_environment({"METAEVAL_MAX_UPLOAD_ROWS": "many"})
    for bad in ("inf", "nan", "-3", "0", "1e400", "many"):
        with pytest.raises(ValueError, match="configuration error: METAEVAL_MAX_UPLOAD_MEASURES must be a number"):
            UploadLimits.from_environment({"METAEVAL_MAX_UPLOAD_MEASURES": bad})
    limits = UploadLimits.from_environment({"METAEVAL_MAX_UPLOAD_MEASURES": "7", "METAEVAL_MAX_UPLOAD_SYSTEMS": "9"})
    assert (limits.max_measures, limits.max_systems) == (7, 9)
    with pytest.raises(UploadError) as caught:
        read_user_file(b"system,input,human.q,m\na,1,1,2\nb,1,2,3\na,2,3,1\nb,2,1,1\n" * 5, name="rows.csv",
                       limits=UploadLimits.from_environment({"METAEVAL_MAX_UPLOAD_ROWS": "10"}))
    assert caught.value.kind == "too-many-rows"


# -- the upload report (issue 13) ----------------------------------------------------------------------------
def _report_dataset(**overrides) -> Dataset:
    from metaeval_core.data.dataset import Measure

    rng = np.random.default_rng(3)
    human = rng.normal(size=(4, 6))
    measures = {"human.q": Measure("human.q", "human", overrides.pop("human", human)),
                "rouge": Measure("rouge", "metric", rng.normal(size=(4, 6))),
                **{name: Measure(name, "metric", scores) for name, scores in overrides.items()}}
    return Dataset(id="r", systems=["A", "B", "C", "D"], inputs=[f"d{j}" for j in range(6)], measures=measures)


def test_report_of_a_clean_dataset_has_no_warnings():
    from metaeval_core.data.upload import validation_report

    report = validation_report(_report_dataset())
    assert report.warnings == () and report.judged_per_system == (6, 6, 6, 6)
    assert report.human_reasons == (("human.q", "its name marks a human judgment"),)
    assert "no warnings" in report.lines()


def test_report_names_constant_flat_and_duplicated_measures_and_thin_systems():
    from metaeval_core.data.upload import validation_report

    human = np.arange(24, dtype=float).reshape(4, 6)
    human[3, 1:] = np.nan  # system D: 1 judged input where the others have 6
    flat = np.tile(np.arange(6.0), (4, 1))  # every system the same score on each input
    ds = _report_dataset(human=human, constant=np.full((4, 6), 2.0), flat=flat, copy=human.copy())
    report = validation_report(ds)
    kinds = {w.kind: w for w in report.warnings}
    assert kinds["few-judged-inputs"].names == ("D",) and "as few as 1" in kinds["few-judged-inputs"].message
    assert kinds["constant-measure"].names == ("constant",)
    assert kinds["no-system-differences"].names == ("flat",)
    assert kinds["duplicate-measures"].names == ("human.q", "copy")
    assert report.judged_per_system == (6, 6, 6, 1)


def test_report_explains_a_constant_human_measure():
    from metaeval_core.data.upload import validation_report

    report = validation_report(_report_dataset(human=np.full((4, 6), 3.0)))
    (warning,) = [w for w in report.warnings if w.kind == "constant-measure"]
    assert warning.names == ("human.q",) and "no verdict on the metrics" in warning.message


def test_report_needs_a_dataset():
    from metaeval_core.data.upload import validation_report

    with pytest.raises(TypeError, match="dataset"):
        validation_report("x.csv")


def test_describe_prints_the_report(capsys):
    from metaeval_core.cli.main import main

    assert main(["describe", "--dataset", str(BAD / "read_with_notes" / "wide_doc_id_next_to_input.csv")]) == 0
    out = capsys.readouterr().out
    assert "judged inputs per system: 2 for every system" in out
    assert "note: the column 'doc_id' is not read" in out and "human measure 'human.q'" in out


def test_jsonl_summarizer_type_is_the_system_attribute_type():
    ds = read_user_file(GOOD / "sacrerouge.jsonl")
    assert ds.system_attributes == {"type": ("peer", "peer")}


def test_describe_json_carries_the_report(capsys):
    from metaeval_core.cli.main import main

    path = BAD / "read_with_notes" / "nfd_and_nfc_system.csv"
    assert main(["describe", "--dataset", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["report"]
    assert report["judged_per_system"] == {"Modél": 2, "B": 2} and report["warnings"] == []


# Zero-width joiners (U+200D) and non-joiners (U+200C) are spelling inside words of several scripts (Persian,
# Devanagari conjuncts); anywhere else, or when they are all that tells two names apart, they are refused.
PERSIAN = "مدل\u200cها"  # "models", with the non-joiner Persian spelling requires
DEVANAGARI = "क्\u200dष"


def _joiner_file(a: str, b: str) -> bytes:
    rows = ["system,input,human.q,rouge"]
    rows += [f"{s},d{j},{k + j},{0.1 * (k + j) + 0.05 * j}" for k, s in enumerate((a, b)) for j in range(3)]
    return ("\n".join(rows) + "\n").encode()


@pytest.mark.parametrize("name", [PERSIAN, DEVANAGARI])
def test_a_joiner_inside_a_word_of_its_script_is_kept(name):
    back = read_user_file(_joiner_file(name, "B"), name="j.csv")
    assert name in back.systems and len(back.systems) == 2


@pytest.mark.parametrize("a, b, message", [
    ("sys\u200dA", "B", r"U\+200D"),  # between ASCII letters: invisible, as before
    ("👨\u200d👩", "B", r"U\+200D"),  # emoji sequences are not names
    (PERSIAN, "مدلها", "differ only by a zero-width joiner or non-joiner"),
])
def test_a_joiner_outside_a_word_or_telling_names_apart_is_refused(a, b, message):
    with pytest.raises(UploadError, match=message) as info:
        read_user_file(_joiner_file(a, b), name="j.csv")
    assert info.value.kind == "bad-name"
