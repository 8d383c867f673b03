"""Verdict files: the columns, the rules, every error named with its line and column, the way back."""

from __future__ import annotations

import gzip
import io
import json

import numpy as np
import pandas as pd
import pytest

from metaeval_core.data.upload import UploadError, UploadLimits
from metaeval_core.judges import (
    INVALID, MISSING, judge_agreement, load_pairwise, pairwise_to_long_frame, read_verdict_file, verdict_report,
)
from tests.core.judges.helpers import loaded, random_data

HEADER = "item,system_a,system_b,rater,verdict,order\n"


def _csv(body: str, header: str = HEADER) -> bytes:
    return (header + body).encode()


def test_round_trip_keeps_verdicts_scores_texts_and_kinds():
    data = random_data(51, n=30, gold=True, pair_sets=2)
    scores = np.full((data.n_items, data.n_raters, 2), np.nan)
    scores[:, 4, :] = np.random.default_rng(0).integers(0, 10, size=(data.n_items, 2))
    from dataclasses import replace
    data = replace(data, scores=scores, attributes={"task": tuple(f"t{k % 3}" for k in range(data.n_items))})
    frame = pairwise_to_long_frame(data)
    for fmt in ("csv", "jsonl"):
        raw = frame.to_csv(index=False).encode() if fmt == "csv" else frame.to_json(orient="records",
                                                                                     lines=True).encode()
        back = read_verdict_file(raw, name=f"x.{fmt}")
        assert back.items == data.items and back.rater_ids == data.rater_ids
        assert [r.kind for r in back.raters] == [r.kind for r in data.raters]
        np.testing.assert_array_equal(back.verdicts, data.verdicts)
        np.testing.assert_array_equal(back.scores, data.scores)
        assert back.output_a == data.output_a and back.system_b == data.system_b
        assert back.pair_sets == data.pair_sets and back.attributes == data.attributes


def test_parquet_is_refused_with_a_remedy():
    buffer = io.BytesIO()
    pairwise_to_long_frame(random_data(1)).to_parquet(buffer, index=False)
    with pytest.raises(UploadError, match="export the Parquet table as CSV") as info:
        read_verdict_file(buffer.getvalue(), name="v.parquet")
    assert info.value.kind == "unknown-format"


def test_invalid_verdicts_are_kept_and_named():
    data = read_verdict_file(_csv("i1,m1,m2,human-1,A,\ni1,m1,m2,j,garbage,\ni2,m1,m2,human-1,b,\n"
                                  "i2,m1,m2,j,,\ni1,m1,m2,j,Tie,swapped\n"), name="v.csv")
    j = data.rater_index("j")
    assert data.verdicts[:, j, 0].tolist() == [INVALID, INVALID] and data.verdicts[0, j, 1] == 2
    assert "'garbage' x 1" in data.notes[0] and "'(empty)' x 1" in data.notes[0]
    row = judge_agreement(data, n_resamples=40, rng=0).rows[0]
    assert row.n_invalid == 2 and row.n_items == 2


@pytest.mark.parametrize("body, header, kind, fragment", [
    ("i1,m1,m2,h\n", "item,system_a,system_b,rater\n", "missing-column", "no 'verdict' column"),
    ("i1,m1,m2,human,A,\ni1,m1,m2,human,B,\n", HEADER, "duplicate-cell", "line 2"),
    ("i1,m1,m2,human,A,\ni1,m1,m3,j,B,\n", HEADER, "inconsistent-attribute", "system B"),
    ("i1,m1,m2,human,A,sideways\n", HEADER, "unknown-kind", "not original or swapped"),
    ("i1,m1,m2,hu\x01man,A,\n", HEADER, "bad-name", "control character"),
    (",m1,m2,human,A,\n", HEADER, "missing-value", "item name is empty"),
    ("i1,m1,m2,j1,A,\ni2,m1,m2,j2,A,\n", HEADER, "no-human-measure", "no rater is a person"),
    ("i1,m1,m2,human-1,A,\ni2,m1,m2,human-2,A,\n", HEADER, "no-metric-measure", "no judge"),
    ("i1,m1,m2,human,A,\ni1,m1,m2,j,A,\n", HEADER, "too-few-inputs", "at least 2"),
])
def test_errors_name_the_problem_and_the_place(body, header, kind, fragment):
    with pytest.raises(UploadError) as info:
        read_verdict_file(_csv(body, header), name="v.csv")
    assert info.value.kind == kind and fragment in str(info.value) and "'v.csv'" in str(info.value)


def test_scores_must_agree_between_orders_and_kinds_can_be_declared():
    header = "item,system_a,system_b,rater,verdict,order,score_a,score_b,kind\n"
    with pytest.raises(UploadError, match="scores output A") as info:
        read_verdict_file(_csv("i1,m1,m2,x,A,original,3,1,judge\ni1,m1,m2,x,A,swapped,4,1,judge\n", header),
                          name="v.csv")
    assert info.value.kind == "duplicate-cell" and info.value.where == "line 3"
    with pytest.raises(UploadError, match="not a number"):
        read_verdict_file(_csv("i1,m1,m2,x,A,,three,1,judge\n", header), name="v.csv")
    data = read_verdict_file(_csv("i1,m1,m2,x,A,,3,1,judge\ni1,m1,m2,y,A,,,,human\n"
                                  "i2,m1,m2,x,B,,0,1,judge\ni2,m1,m2,y,B,,,,human\n", header), name="v.csv")
    assert data.judges == ("x",) and data.humans == ("y",) and data.scores[1, 0].tolist() == [0, 1]
    with pytest.raises(UploadError, match="not human, gold or judge"):
        read_verdict_file(_csv("i1,m1,m2,x,A,,3,1,robot\n", header), name="v.csv")


def test_limits_are_the_upload_limits():
    body = "".join(f"i{k},m1,m2,human,A,\ni{k},m1,m2,j,B,\n" for k in range(10))
    with pytest.raises(UploadError) as info:
        read_verdict_file(_csv(body), name="v.csv", limits=UploadLimits(max_rows=5))
    assert info.value.kind == "too-many-rows"
    with pytest.raises(UploadError) as info:
        read_verdict_file(_csv(body), name="v.csv", limits=UploadLimits(max_measures=1))
    assert info.value.kind == "too-many-measures" and "raters" in str(info.value)
    with pytest.raises(UploadError) as info:
        read_verdict_file(_csv(body), name="v.csv", limits=UploadLimits(max_bytes=50))
    assert info.value.kind == "too-large"
    with pytest.raises(UploadError) as info:
        read_verdict_file(_csv(body), name="v.csv", limits=UploadLimits(max_name_length=1))
    assert info.value.kind == "name-too-long"
    gz = read_verdict_file(gzip.compress(_csv(body)), name="v.csv.gz")
    assert gz.n_items == 10


def test_jsonl_rules():
    lines = [{"item": 1, "system_a": "m1", "system_b": "m2", "rater": "human", "verdict": "A"},
             {"item": 1, "system_a": "m1", "system_b": "m2", "rater": "j", "verdict": None},
             {"item": 2, "system_a": "m1", "system_b": "m2", "rater": "human", "verdict": "b"},
             {"item": 2, "system_a": "m1", "system_b": "m2", "rater": "j", "verdict": "b", "order": True}]
    data = read_verdict_file("\n".join(json.dumps(x) for x in lines).encode(), name="v.jsonl")
    assert data.items == ("1", "2") and data.verdicts[0, 1, 0] == INVALID and data.verdicts[1, 1, 1] == 1
    assert data.verdicts[1, 1, 0] == MISSING
    with pytest.raises(UploadError, match="appears twice"):
        read_verdict_file(b'{"item": 1, "item": 2}', name="v.jsonl")


def test_report_warns_about_invalid_verdicts_and_coverage():
    data = random_data(52, n=40, p_invalid=0.3)
    report = verdict_report(data)
    assert any("invalid" in w for w in report.warnings)
    assert report.rows[0]["rater"] == "h1" and report.lines()[0].startswith("40 items")


def test_load_pairwise_reads_a_file(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_bytes(_csv("i1,m1,m2,human,A,\ni1,m1,m2,j,B,\ni2,m1,m2,human,B,\ni2,m1,m2,j,B,\n"))
    data = load_pairwise(path)
    assert data.id == "upload-mine" and data.n_items == 2


@pytest.mark.realdata
def test_llmbar_round_trips_through_a_long_file(data_dir):
    data = loaded(data_dir, "llmbar")
    frame = pairwise_to_long_frame(data, texts=False)
    back = read_verdict_file(frame.to_csv(index=False).encode(), name="llmbar.csv")
    np.testing.assert_array_equal(back.verdicts, data.verdicts)
    np.testing.assert_array_equal(back.scores, data.scores)
    assert back.pair_sets == data.pair_sets
    assert pd.Series(frame["verdict"]).eq("invalid").sum() == 195
