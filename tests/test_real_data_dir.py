"""The real-data directory of the tests (tests/conftest.py): a full mirror, or a folder filled by `fetch`."""

from __future__ import annotations

import pytest

from tests import conftest


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("METAEVAL_DATA_DIR", str(tmp_path))
    conftest._partial.cache_clear()
    yield tmp_path
    conftest._partial.cache_clear()


def _place(directory, dataset_id):
    from metaeval_core.data.registry import dataset_info

    for file in dataset_info(dataset_id).files:
        (directory / file.path).parent.mkdir(parents=True, exist_ok=True)
        (directory / file.path).write_bytes(b"")  # availability is presence; checksums are verified on load


def test_an_empty_folder_is_no_real_data(fresh):
    assert conftest.real_data_dir() is None and conftest.mirror_dir() is None and conftest._partial() is None


def test_a_folder_filled_by_fetch_is_accepted_without_a_manifest(fresh):
    _place(fresh, "rose")
    assert conftest.real_data_dir() == fresh
    assert conftest.mirror_dir() is None  # not a whole mirror: the browser tests run on the demo
    directory, available, missing = conftest._partial()
    assert directory == fresh and available == {"rose"} and "summeval" in missing and "demo" not in missing


def test_the_mirror_manifest_alone_marks_a_real_data_folder(fresh):
    (fresh / "MANIFEST.json").write_text("{}")
    assert conftest.real_data_dir() == fresh and conftest.mirror_dir() == fresh


def test_the_data_directory_the_user_set_is_the_only_candidate(monkeypatch, tmp_path):
    monkeypatch.setenv("METAEVAL_DATA_DIR", str(tmp_path))
    assert conftest._candidates() == [tmp_path]
    monkeypatch.delenv("METAEVAL_DATA_DIR")
    from metaeval_core.data.registry import DEFAULT_DATA_DIR

    assert conftest._candidates() == [DEFAULT_DATA_DIR]  # nothing outside the repository unless configured


def test_a_partial_folder_skips_a_test_that_names_a_dataset_it_lacks(fresh, request):
    _place(fresh, "rose")
    item = request.node
    assert conftest._named_ids(item, frozenset({"rose", "summeval"})) == {"rose", "summeval"}  # named here
    from metaeval_core.data.registry import DatasetUnavailable, dataset_info

    class Item:
        fixturenames = ("data_dir",)

    error = DatasetUnavailable("dataset 'summeval' is not available", dataset_info("summeval", data_dir=fresh))
    assert conftest._absent_data(Item(), error) == (
        f"needs summeval, not in the data directory {fresh}: `metaeval fetch --dataset summeval`")
    missing_file = FileNotFoundError(2, "No such file", str(fresh / "realsumm" / "x.pkl"))
    assert "not in the data directory" in conftest._absent_data(Item(), missing_file)
    assert conftest._absent_data(Item(), FileNotFoundError(2, "No such file", "/elsewhere/x")) is None
    assert conftest._absent_data(Item(), ValueError("a real failure")) is None


def test_every_dataset_fetched_is_a_whole_mirror(fresh):
    from metaeval_core.data.registry import dataset_ids

    for dataset_id in dataset_ids()[1:]:
        _place(fresh, dataset_id)
    assert conftest._partial() is None and conftest.mirror_dir() == fresh
