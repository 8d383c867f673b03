"""The dataset registry: entries vs MANIFEST.json, availability, loading, checksums and downloads."""

from __future__ import annotations

import json
import shutil
import sys
import types
from contextlib import contextmanager
from pathlib import Path

import pytest

from metaeval_core.data import registry
from metaeval_core.data.dataset import Dataset, DatasetError
from metaeval_core.data.registry import (
    DataFile,
    DatasetInfo,
    data_dir,
    dataset_info,
    fetch_dataset,
    list_datasets,
    load_dataset,
    verify_files,
)
from tests.localhttp import serve

IDS = (
    "demo",
    "summeval",
    "realsumm",
    "summeval-naacl2022",
    "realsumm-naacl2022",
    "frank-cnndm",
    "frank-xsum",
    "rose",
    "xsum-hallucination",
    "hanna",
    "pandalm",
    "llmbar",
    "judgebench",
    "wmt22-zhen",
    "wmt23",
)


def _raw_registry() -> dict:
    return json.loads(registry.REGISTRY_PATH.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# The registry file
# ---------------------------------------------------------------------------
def test_registry_lists_the_built_in_datasets_demo_first(tmp_path):
    assert registry.dataset_ids() == IDS
    infos = list_datasets(data_dir=tmp_path)
    assert [i.id for i in infos] == list(IDS)
    for info in infos:
        assert isinstance(info, DatasetInfo)
        assert info.title and info.citation and info.licence and info.description


def test_every_real_dataset_has_downloadable_pinned_files():
    for entry in _raw_registry()["datasets"]:
        if entry["id"] == "demo":
            assert entry["files"] == []
            continue
        assert entry["files"], entry["id"]
        for f in entry["files"]:
            assert len(f["sha256"]) == 64 and not f["path"].startswith("/")
            assert f["url"] is None or f["url"].startswith("https://raw.githubusercontent.com/")
        for f in entry["optional_files"]:
            assert f["sha256"] is None and f["url"] is None


@pytest.mark.realdata
def test_registry_files_match_the_manifest(data_dir):
    manifest = {f["path"]: f for f in json.loads((data_dir / "MANIFEST.json").read_text())["files"]}
    seen = 0
    for entry in _raw_registry()["datasets"]:
        for f in entry["files"]:
            assert f["path"] in manifest, f"{entry['id']}: {f['path']} not in MANIFEST.json"
            m = manifest[f["path"]]
            assert f["sha256"] == m["sha256"]
            assert f["bytes"] == m["bytes"]
            if m.get("derived"):
                assert f["url"] is None, f"{f['path']} is derived: it has no download URL"
            else:
                assert f["url"] == m["url"]
                assert (f["repo"], f["commit"], f["upstream_path"], f["licence"]) == (
                    m["repo"], m["commit"], m["upstream_path"], m["licence"]
                )
            seen += 1
        for f in entry["optional_files"]:
            assert f["path"] not in manifest  # optional files are not in the mirror
    assert seen >= 20


# ---------------------------------------------------------------------------
# Availability
# ---------------------------------------------------------------------------
def test_unavailable_datasets_report_a_reason_in_an_empty_dir(tmp_path):
    infos = {i.id: i for i in list_datasets(data_dir=tmp_path)}
    assert infos["demo"].available and infos["demo"].reason == ""
    for dataset_id in IDS[1:]:
        info = infos[dataset_id]
        assert not info.available
        assert str(tmp_path) in info.reason and "missing" in info.reason
        assert info.files[0].path in info.reason
        assert "fetch_dataset" in info.reason
        assert info.missing == tuple(f.path for f in info.files)
        assert info.downloadable
        assert all(isinstance(f, DataFile) for f in info.files)


def test_demo_is_always_available_and_loads_without_files(tmp_path):
    assert dataset_info("demo", data_dir=tmp_path).available
    ds = load_dataset("demo", data_dir=tmp_path)
    assert isinstance(ds, Dataset) and ds.id == "demo" and ds.has_unjudged_pool


def test_unknown_ids_name_the_known_ones(tmp_path):
    with pytest.raises(DatasetError, match="unknown dataset 'nope'.*summeval.*xsum-hallucination"):
        dataset_info("nope", data_dir=tmp_path)
    with pytest.raises(DatasetError, match="neither a built-in dataset nor an existing file.*known datasets: demo"):
        load_dataset("nope", data_dir=tmp_path)
    with pytest.raises(TypeError, match="dataset_id must be a string"):
        dataset_info(3)
    with pytest.raises(TypeError, match="download must be True or False"):
        load_dataset("demo", download="yes")


def test_missing_files_give_the_reason(tmp_path):
    with pytest.raises(DatasetError, match="dataset 'rose' is not available: 1 of 1 required file"):
        load_dataset("rose", data_dir=tmp_path)


def test_data_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("METAEVAL_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path
    assert not dataset_info("summeval").available
    monkeypatch.delenv("METAEVAL_DATA_DIR")
    assert data_dir() == Path(registry.__file__).resolve().parents[2] / "data" / "cache"


def test_optional_files_are_reported_when_present(tmp_path):
    optional = tmp_path / "summeval" / "deutsch2022_reexamining" / "all" / "metrics.jsonl.gz"
    optional.parent.mkdir(parents=True)
    optional.write_bytes(b"")
    info = dataset_info("summeval-naacl2022", data_dir=tmp_path)
    assert info.optional_present == ("summeval/deutsch2022_reexamining/all/metrics.jsonl.gz",)
    assert not info.available


def test_a_file_path_goes_to_the_upload_reader(monkeypatch, tmp_path):
    calls = []
    fake = types.ModuleType("metaeval_core.data.upload")

    def read_user_file(source, *, name=None, format=None, limits=None):
        calls.append(Path(source))
        return "parsed"

    fake.read_user_file = read_user_file
    fake.UploadLimits = types.SimpleNamespace(from_environment=lambda: None)  # the path honours METAEVAL_MAX_UPLOAD_*
    monkeypatch.setitem(sys.modules, "metaeval_core.data.upload", fake)
    user = tmp_path / "scores.csv"
    user.write_text("system,input,metric\n")
    assert load_dataset(str(user)) == "parsed"
    assert load_dataset(user) == "parsed"
    assert calls == [user, user]
    fake.read_user_file = lambda source, **options: options
    assert load_dataset(user, human_measures=["RelE"]) == {"human_measures": ["RelE"], "limits": None}
    with pytest.raises(DatasetError, match="built-in dataset"):
        load_dataset("demo", human_measures=["human.quality"])


# ---------------------------------------------------------------------------
# A registry with a derived (not downloadable) file
# ---------------------------------------------------------------------------
@contextmanager
def _custom_registry(monkeypatch, tmp_path, datasets):
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"datasets": datasets}))
    monkeypatch.setattr(registry, "REGISTRY_PATH", path)
    yield path


def test_derived_files_are_required_but_not_downloadable(monkeypatch, tmp_path):
    entry = {
        "id": "derived", "title": "t", "citation": "c", "licence": "l", "description": "d", "loader": "rose",
        "files": [{"path": "x/derived.csv", "url": None, "sha256": "0" * 64, "derived": True}],
        "optional_files": [],
    }
    with _custom_registry(monkeypatch, tmp_path, [entry]):
        info = dataset_info("derived", data_dir=tmp_path / "data")
        assert not info.available and not info.downloadable
        assert "cannot be downloaded" in info.reason
        with pytest.raises(DatasetError, match="has no download URL.*derived file"):
            fetch_dataset("derived", data_dir=tmp_path / "data")


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"loader": "nope"}, "unknown loader 'nope'"),
        ({"title": 3}, "field 'title' must be a string"),
        ({"files": [{"path": "../escape", "sha256": "0" * 64}]}, "must be relative"),
        ({"files": [{"path": "a.csv", "sha256": "short"}]}, "needs a 64-hex sha256"),
    ],
)
def test_malformed_registry_entries_are_reported(monkeypatch, tmp_path, bad, message):
    entry = {"id": "x", "title": "t", "citation": "c", "licence": "l", "description": "d", "loader": "rose",
             "files": [], "optional_files": []}
    entry.update(bad)
    with _custom_registry(monkeypatch, tmp_path, [entry]):
        with pytest.raises(DatasetError, match=message):
            dataset_info("x")


# ---------------------------------------------------------------------------
# Checksums on the real mirror
# ---------------------------------------------------------------------------
@pytest.mark.realdata
def test_verify_files_on_the_mirror(data_dir):
    # The full mirror holds every dataset; a folder filled by `metaeval fetch` the ones fetched.
    full = (data_dir / "MANIFEST.json").is_file()
    for dataset_id in [i for i in IDS[1:] if full or dataset_info(i, data_dir=data_dir).available]:
        checks = verify_files(dataset_id, data_dir=data_dir)
        assert checks and all(c.ok for c in checks), dataset_id


def _copy_files(dataset_id: str, source: Path, target: Path) -> None:
    for f in dataset_info(dataset_id).files:
        (target / f.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / f.path, target / f.path)


@pytest.mark.realdata
def test_a_locally_modified_file_is_detected_and_refused(data_dir, tmp_path):
    _copy_files("xsum-hallucination", data_dir, tmp_path)
    target = tmp_path / "xsum_hallucination" / "eval_scores_xsum_summaries.csv"
    target.write_text(target.read_text().replace("0.2,0.125", "0.9,0.125", 1))
    (check,) = verify_files("xsum-hallucination", data_dir=tmp_path)
    assert check.status == "mismatch" and check.actual != check.expected
    with pytest.raises(DatasetError, match="sha256 mismatch for dataset 'xsum-hallucination'"):
        load_dataset("xsum-hallucination", data_dir=tmp_path)


@pytest.mark.realdata
def test_version_is_stable_and_depends_on_the_dataset(data_dir, tmp_path):
    first = load_dataset("frank-cnndm", data_dir=data_dir)
    again = load_dataset("frank-cnndm", data_dir=data_dir)
    other = load_dataset("frank-xsum", data_dir=data_dir)
    assert first.version == again.version and len(first.version) == 16
    assert first.version != other.version
    _copy_files("frank-cnndm", data_dir, tmp_path)
    assert load_dataset("frank-cnndm", data_dir=tmp_path).version == first.version


# ---------------------------------------------------------------------------
# Downloads from a local HTTP server
# ---------------------------------------------------------------------------
@pytest.fixture
def no_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.mark.realdata
def test_fetch_downloads_and_verifies_into_an_empty_dir(data_dir, tmp_path, no_proxy):
    target = tmp_path / "cache"
    with serve(data_dir) as base:
        paths = fetch_dataset("realsumm", data_dir=target, base_url=base)
        info = dataset_info("realsumm", data_dir=target)
        assert info.available
        assert paths == [target / f.path for f in info.files]
        for f in info.files:
            assert (target / f.path).read_bytes() == (data_dir / f.path).read_bytes()
        assert all(c.ok for c in verify_files("realsumm", data_dir=target))
        # Files already present are verified, not downloaded again.
        mtimes = [p.stat().st_mtime_ns for p in paths]
        assert fetch_dataset("realsumm", data_dir=target, base_url=base + "/") == paths
        assert [p.stat().st_mtime_ns for p in paths] == mtimes
    loaded = load_dataset("realsumm", data_dir=target)
    assert loaded.version == load_dataset("realsumm", data_dir=data_dir).version


@pytest.mark.realdata
def test_load_with_download_uses_the_base_url_from_the_environment(data_dir, tmp_path, monkeypatch, no_proxy):
    target = tmp_path / "cache"
    with serve(data_dir) as base:
        monkeypatch.setenv("METAEVAL_DATA_BASE_URL", base)
        ds = load_dataset("rose", data_dir=target, download=True)
    assert ds.n_systems == 12 and dataset_info("rose", data_dir=target).available


@pytest.mark.realdata
def test_a_tampered_download_is_refused_and_not_left_in_place(data_dir, tmp_path, no_proxy):
    served = tmp_path / "served"
    _copy_files("xsum-hallucination", data_dir, served)
    bad = served / "xsum_hallucination" / "eval_scores_xsum_summaries.csv"
    bad.write_bytes(bad.read_bytes().replace(b"0.2,0.125", b"0.3,0.125", 1))
    target = tmp_path / "cache"
    with serve(served) as base:
        with pytest.raises(DatasetError, match="sha256 does not match the pinned") as info:
            fetch_dataset("xsum-hallucination", data_dir=target, base_url=base)
    assert "eval_scores_xsum_summaries.csv" in str(info.value)
    folder = target / "xsum_hallucination"
    assert not (folder / "eval_scores_xsum_summaries.csv").exists()
    assert not folder.exists() or list(folder.iterdir()) == []  # no temporary file left behind either
    assert not dataset_info("xsum-hallucination", data_dir=target).available


def test_a_failed_download_is_a_dataset_error(tmp_path, no_proxy):
    (tmp_path / "empty").mkdir()
    with serve(tmp_path / "empty") as base:  # serves nothing: 404
        with pytest.raises(DatasetError, match="download of rose/docs/_data/protocol-comparison.json from .* failed"):
            fetch_dataset("rose", data_dir=tmp_path / "cache", base_url=base)


def test_fetch_validates_base_url(tmp_path):
    with pytest.raises(ValueError, match="base_url must be an http"):
        fetch_dataset("rose", data_dir=tmp_path, base_url="ftp://example.org")


@pytest.mark.realdata
@pytest.mark.parametrize("dataset_id, folder, count, top", [
    ("summeval", "summeval/deutsch2021_stat_analysis/fabbri2020", "819 of the 1,600", "400.0"),
    ("realsumm", "realsumm/deutsch2021_stat_analysis/bhandari2020", "1,479 of the 2,400", "300.0"),
])
def test_bewte_precision_above_its_range_is_stated_where_the_measure_is_described(data_dir, dataset_id, folder,
                                                                                  count, top):
    rows = [json.loads(line) for line in (data_dir / folder / "bewte.jsonl").read_text().splitlines()]
    precision = [row["metrics"]["BEwTE"]["precision"] for row in rows]
    above = [p for p in precision if p > 100]
    assert f"{len(above):,} of the {len(rows):,}" == count and f"{max(above):.1f}" == top
    description = dataset_info(dataset_id).description
    assert f"BEwTE.precision is above 100 (the 0-100 scale) for {count} summaries, up to {top}" in description
