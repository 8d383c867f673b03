"""The mt-metrics-eval reader has the uploads' guards (issue 23): inflated bytes and members of a zip, duplicate
members, the system/measure/cell limits, non-finite and huge scores, look-alike names. Inputs are generated."""

from __future__ import annotations

import io
import unicodedata
import warnings
import zipfile

import pytest

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.mtme import read_mtme, read_mtme_zip
from tests.core.capped import run_capped
from tests.mtme_replica import TEST_SET, write_replica, zip_replica


@pytest.fixture
def replica(tmp_path):
    return write_replica(tmp_path)


def _human_seg(replica):
    return replica.test_set / "human-scores" / "en-de.mqm.seg.score"


BOMB = """
import io, zipfile
from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.mtme import read_mtme_zip
buffer = io.BytesIO()
with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
    with archive.open("wmt99/human-scores/en-de.mqm.seg.score", "w", force_zip64=True) as member:
        block = b"sysA 1.0\\n" * (1 << 20)
        for _ in range({blocks}):
            member.write(block)
data = buffer.getvalue()
try:
    read_mtme_zip(data, name="bomb.zip")
    result = {{"refused": ""}}
except DatasetError as error:
    result = {{"refused": str(error)}}
result["zip_bytes"] = len(data)
"""


def test_a_zip_inflating_to_gigabytes_is_refused_from_its_directory():
    out = run_capped(BOMB.format(blocks=120), timeout=300)  # 1.1 GB of score lines in a few MB
    assert out["zip_bytes"] < 8 * 2**20
    assert "bomb.zip: more than 256 MB once uncompressed" in out["refused"]
    assert out["peak_mb"] < 400


def test_a_zip_just_under_the_limit_with_a_huge_score_file_is_refused_by_file_size(monkeypatch):
    monkeypatch.setenv("METAEVAL_MAX_UPLOAD_MB", "1")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("wmt99/human-scores/en-de.mqm.seg.score", b"sysA 1.0\n" * 300_000)
    with pytest.raises(DatasetError, match=r"en-de.mqm.seg.score: 2,700,000 bytes; a file read here may have at most"):
        read_mtme_zip(buffer.getvalue(), name="big.zip")


def test_zip_members_are_counted_and_duplicates_refused(replica, tmp_path):
    many = io.BytesIO()
    with zipfile.ZipFile(many, "w") as archive:
        for k in range(10_001):
            archive.writestr(f"wmt99/system-outputs/en-de/s{k}.txt", b"")
    with pytest.raises(DatasetError, match="10,001 members; the limit is 10,000"):
        read_mtme_zip(many.getvalue(), name="many.zip")
    data = zip_replica(replica, tmp_path / "set.zip").read_bytes()
    twice = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(twice, "w") as archive:
        for info in source.infolist():
            archive.writestr(info, source.read(info))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns about the duplicate it writes
            archive.writestr(f"{TEST_SET}/human-scores/en-de.mqm.seg.score", b"sysA 0\n" * 7)
    with pytest.raises(DatasetError, match=r"member 'wmt99/human-scores/en-de.mqm.seg.score' appears twice"):
        read_mtme_zip(twice.getvalue(), name="twice.zip")


@pytest.mark.parametrize("text, why", [("inf", "is not finite"), ("-Infinity", "is not finite"),
                                       ("1e308", "is larger in magnitude than 1e\\+150")])
def test_non_finite_and_huge_scores_are_refused_with_file_and_line(replica, text, why):
    path = _human_seg(replica)
    lines = path.read_text().splitlines()
    system = lines[2].split()[0]
    lines[2] = f"{system}\t{text}"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=rf"en-de.mqm.seg.score, line 3: the score '{text}' {why}"):
        read_mtme(replica.test_set, lp="en-de")
    path.write_text("\n".join(lines) + "\n\n")  # a blank line: the line-by-line path says the same
    with pytest.raises(DatasetError, match=rf"line 3: the score '{text}' {why}"):
        read_mtme(replica.test_set, lp="en-de")


def _rename_system(replica, old: str, new_in_outputs: str, new_in_scores: str) -> None:
    outputs = replica.test_set / "system-outputs" / "en-de"
    (outputs / f"{old}.txt").rename(outputs / f"{new_in_outputs}.txt")
    for path in replica.test_set.rglob("*.score"):
        if "en-de" in str(path):
            path.write_text(path.read_text().replace(f"{old}\t", f"{new_in_scores}\t"))


def test_nfc_and_nfd_spellings_of_one_system_are_one_system(replica):
    nfc = unicodedata.normalize("NFC", "sysé")
    _rename_system(replica, "sysA", nfc, unicodedata.normalize("NFD", nfc))
    ds = read_mtme(replica.test_set, lp="en-de")
    assert nfc in ds.systems and ds.n_systems == 4


def test_a_zero_width_character_in_a_system_name_is_refused(replica):
    _rename_system(replica, "sysA", "sysA", "sysA\u200b")
    with pytest.raises(DatasetError, match=r"en-de.mqm.seg.score: the system name .* invisible character U\+200B"):
        read_mtme(replica.test_set, lp="en-de")


def test_a_terminal_escape_in_a_system_name_is_refused(replica):
    _rename_system(replica, "sysA", "sysA\x1b[2J", "sysA\x1b[2J")
    with pytest.raises(DatasetError, match="control character"):
        read_mtme(replica.test_set, lp="en-de")


def test_the_system_limit_applies_before_any_score_file_is_read(replica, monkeypatch):
    outputs = replica.test_set / "system-outputs" / "en-de"
    for k in range(3_000):
        (outputs / f"extra{k}.txt").write_text("")
    with pytest.raises(DatasetError, match="3,004 systems; the limit is 2,000"):
        read_mtme(replica.test_set, lp="en-de")
    monkeypatch.setenv("METAEVAL_MAX_UPLOAD_SYSTEMS", "2")
    with pytest.raises(DatasetError, match="3 systems; the limit is 2"):
        read_mtme(replica.test_set, lp="zh-en")  # no system-outputs: counted from the score files


def test_the_cell_limit_applies(replica, monkeypatch):
    monkeypatch.setenv("METAEVAL_MAX_UPLOAD_CELLS", "100")
    with pytest.raises(DatasetError, match=r"4 systems x 7 segments x 7 measures make 196 score cells; the limit is 100"):
        read_mtme(replica.test_set, lp="en-de")


WITHIN = """
import io, zipfile
from metaeval_core.data.mtme import read_mtme_zip
buffer = io.BytesIO()
with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
    body = b"".join(b"sys%d\\t0.5\\n" % s * 1_250_000 for s in range(4))  # 45 MB, under the 50 MB file limit
    archive.writestr("wmt99/human-scores/en-de.mqm.seg.score", body)
    archive.writestr("wmt99/metric-scores/en-de/BLEU-refA.seg.score", body)
    del body
data = buffer.getvalue()
ds = read_mtme_zip(data, name="within.zip")
result = {"systems": ds.n_systems, "inputs": ds.n_inputs}
"""


def test_score_files_at_the_file_limit_are_read_under_1gb():
    out = run_capped(WITHIN, timeout=300)  # the token-per-string parser took 1.1 GB here
    assert out["systems"] == 4 and out["inputs"] == 1_250_000
    assert out["peak_mb"] < 700
