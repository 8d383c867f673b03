"""The mt-metrics-eval reader's fast paths (pyarrow's tab reader, one JSON decode per rater file, sha256 once per
file) give what the slow, readable paths give, and still name the line of a malformed file."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from metaeval_core.data import mtme
from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.mtme import read_mtme
from metaeval_core.data.registry import _sha256_of, file_sha256
from tests.mtme_replica import EN_DE_SYSTEMS, write_replica


def _parse(path):
    stat = path.stat()
    return mtme._parsed.__wrapped__(str(path), stat.st_size, stat.st_mtime_ns)


def _same(a, b):
    assert list(a[0]) == list(b[0]) and a[1] == b[1]
    for name in a[0]:
        np.testing.assert_array_equal(a[0][name], b[0][name])


def test_tab_reader_equals_the_line_reader_across_blocks_and_interleaved_systems(tmp_path):
    rng = np.random.default_rng(0)
    systems = [f"sys-{k}" for k in range(7)]
    lines = []
    for s in systems:  # > 1 MB: pyarrow reads it in several blocks, each with its own dictionary of names
        for k in range(6000):
            lines.append(f"{s}\t{'None' if k % 97 == 0 else repr(float(rng.normal()))}")
    path = tmp_path / "M-refA.seg.score"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 1 << 20
    assert mtme._columns_by_tab(path.read_bytes()) is not None
    fast = _parse(path)
    _same(fast, mtme._parsed_by_line(path))
    assert fast[1] == sum(k % 97 == 0 for k in range(6000)) * 7
    shuffled = tmp_path / "N-refA.seg.score"
    shuffled.write_text("\n".join(lines[k] for k in rng.permutation(len(lines))) + "\n")
    _same(_parse(shuffled), mtme._parsed_by_line(shuffled))


def test_space_separated_blank_lines_and_crlf_read_as_tab_separated(tmp_path):
    text = "sysA\t0.5\nsysA\tNone\n\nsysB\t-1e3\nsysB\t2\n"
    for name, variant in (("tab", text), ("space", text.replace("\t", "   ")), ("crlf", text.replace("\n", "\r\n"))):
        path = tmp_path / f"{name}.seg.score"
        path.write_text(variant, newline="")
        scores, missing = _parse(path)
        assert missing == 1 and list(scores) == ["sysA", "sysB"]
        np.testing.assert_array_equal(scores["sysA"], [0.5, math.nan])
        np.testing.assert_array_equal(scores["sysB"], [-1000.0, 2.0])


@pytest.mark.parametrize("line, message", [
    ("sys A\t0.5", "line 2: expected 'SYSTEM SCORE'"),  # a space in a name: the whitespace reader's three fields
    ("sysA\t0.5\t1", "line 2: expected 'SYSTEM SCORE'"),
    ("sysA", "line 2: expected 'SYSTEM SCORE'"),
    ("sysA\tabc", "line 2: score 'abc' is neither a number nor None"),
    ("sysA\tinf", "line 2: the score 'inf' is not finite"),
    ("sysA\tnan", None),  # nan written as a number: the line reader's NaN, counted as missing
])
def test_a_malformed_line_is_named(tmp_path, line, message):
    path = tmp_path / "M-refA.seg.score"
    path.write_text(f"sysA\t1.0\n{line}\nsysB\t2.0\n")
    if message is None:
        scores, missing = _parse(path)
        assert missing == 1 and np.isnan(scores["sysA"][1])
        return
    with pytest.raises(DatasetError, match=message):
        _parse(path)


def _with_raters(tmp_path, lines_by_rater):
    replica = write_replica(tmp_path)
    folder = replica.test_set / "human-scores"
    for k, lines in enumerate(lines_by_rater, start=1):
        (folder / f"en-de.mqm.rater{k}.seg.rating").write_text("\n".join(lines) + "\n")
    return replica


def _rating(*weights):
    return json.dumps({"errors": [{"score": w, "severity": "minor"} for w in weights]})


def test_rater_files_read_in_one_json_decode_match_a_line_by_line_reading(tmp_path):
    n = 7
    rng = np.random.default_rng(1)
    expected = np.full((2, len(EN_DE_SYSTEMS), n), np.nan)
    raters = []
    for a in range(2):
        lines = []
        for j in range(n):  # systems interleaved, as the WMT files are: a system's k-th line is its segment k
            for i, system in enumerate(EN_DE_SYSTEMS):
                if rng.random() < 0.3:
                    lines.append(f"{system}\tNone")
                    continue
                weights = [float(w) for w in rng.choice([0.1, 1.0, 5.0, 25.0], size=int(rng.integers(0, 4)))]
                lines.append(f"{system}\t{_rating(*weights)}")
                expected[a, i, j] = -sum(weights) + 0.0
        raters.append(lines)
    replica = _with_raters(tmp_path, raters)
    dataset = read_mtme(replica.test_set, lp="en-de")
    measure = dataset.measure("mqm.raters")
    order = [dataset.systems.index(s) for s in EN_DE_SYSTEMS]
    np.testing.assert_array_equal(measure.annotators[:, order, :], expected)


@pytest.mark.parametrize("bad, message", [
    ("sysA\t{not json", r"en-de.mqm.rater2.seg.rating, line 2: not a rating \(JSONDecodeError\)"),
    ("sysA\t" + json.dumps({"no errors": []}), r"rater2.seg.rating, line 2: not a rating \(KeyError\)"),
    ("sysA\t1, 2", r"rater2.seg.rating, line 2: not a rating"),  # valid JSON only when the lines are joined
    ("sysX\tNone", r"rater2.seg.rating, line 2: system 'sysX' not in system-outputs"),
    ("sysA", r"rater2.seg.rating, line 2: not a rating"),  # no tab: the line-by-line reading
    ("", r"rater2.seg.rating, line 2: not a rating"),  # an empty line
    ("sysA\t{}\t{}", r"rater2.seg.rating, line 2: not a rating"),
])
def test_a_malformed_rater_line_is_named(tmp_path, bad, message):
    good = [f"sysA\t{_rating(1.0)}"]
    replica = _with_raters(tmp_path, [good, [good[0], bad]])
    with pytest.raises(DatasetError, match=message):
        read_mtme(replica.test_set, lp="en-de")


def test_the_wmt23_rater_files_take_the_fast_path(wmt23_dir=None):
    import os
    from pathlib import Path

    folder = Path(os.environ.get("METAEVAL_DATA_DIR", "")) / "wmt23" / "wmt23" / "human-scores"
    paths = sorted(folder.glob("zh-en.mqm.rater*.seg.rating")) if os.environ.get("METAEVAL_DATA_DIR") else []
    if not paths:
        pytest.skip("WMT23 per-rater MQM files not in METAEVAL_DATA_DIR")
    labels, codes, rated, texts = mtme._rating_columns(str(paths[0]))
    assert len(labels) == 17 and len(codes) == 17 * 1976 and len(rated) == len(texts) > 0


def test_too_many_rater_lines_for_a_system_are_named(tmp_path):
    lines = [f"sysA\t{_rating(1.0)}"] * 8  # the replica has 7 segments
    replica = _with_raters(tmp_path, [lines[:1], lines])
    with pytest.raises(DatasetError, match=r"rater2.seg.rating, line 8: more than 7 segments for 'sysA'"):
        read_mtme(replica.test_set, lp="en-de")


def test_sha256_is_recomputed_when_the_file_changes(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("one")
    first = file_sha256(path)
    assert first == _sha256_of(path) == file_sha256(path)
    path.write_text("two, longer")
    assert file_sha256(path) == _sha256_of(path) != first
    with pytest.raises(OSError):
        file_sha256(tmp_path / "missing")
