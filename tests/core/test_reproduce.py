"""The shared table of published values (metaeval_core.analyses.reproduce): its logic offline, and every
reproducible number on the real data (skipped cleanly without METAEVAL_DATA_DIR)."""

from __future__ import annotations

import json
import math

import pytest

from metaeval_core.analyses.reproduce import PUBLISHED, PublishedValue, reproduce, reproduction_records
from metaeval_core.cli.main import main


def test_table_is_frozen_and_every_row_is_described():
    assert isinstance(PUBLISHED, tuple) and len(PUBLISHED) >= 70
    with pytest.raises(AttributeError):
        PUBLISHED[0].published = 0.0  # type: ignore[misc]
    for item in PUBLISHED:
        assert item.paper and item.table and item.description and item.dataset
        assert isinstance(item.published, (float, str)) and item.tolerance >= 0
    # Krippendorff, TACL intervals and significance, REALSumm, and the NAACL rows are all there.
    text = " ".join(item.description for item in PUBLISHED)
    for needle in ("Krippendorff", "BOOT-BOTH 95% interval", "significantly better", "LitePyramid", "rSYS-Δ"):
        assert needle in text


def test_matches_numbers_strings_and_never_a_row_with_a_reason():
    item = PublishedValue("p", "t", "d", "x", 0.50, 0.005, lambda ds: 0.0)
    assert item.matches(0.504) and item.matches(0.495) and not item.matches(0.506) and not item.matches(math.nan)
    assert not item.matches("0.5")
    named = PublishedValue("p", "t", "d", "x", "a, b", 0.0, lambda ds: "")
    assert named.matches("a, b") and not named.matches("a")
    unreproducible = PublishedValue("p", "t", "d", "x", 0.5, 0.005, lambda ds: 0.5, reason="needs other data")
    assert not unreproducible.matches(0.5)


def test_missing_data_and_failing_rows_become_notes():
    def load(dataset_id):
        raise FileNotFoundError(f"dataset {dataset_id!r} is not available")

    rows = reproduce(load, datasets=["summeval"])
    assert rows and all(r.value is None and not r.reproduced for r in rows)
    assert all(r.note.startswith("data not available: dataset 'summeval'") for r in rows)
    broken = PublishedValue("p", "t", "d", "x", 1.0, 0.1, lambda ds: 1 / 0)
    (row,) = reproduce(lambda dataset_id: object(), values=[broken])
    assert row.value is None and not row.reproduced and "could not compute" in row.note
    assert reproduction_records([row])[0]["reproduced"] is False


@pytest.mark.realdata
def test_every_reproducible_number_reproduces(data_dir):
    from metaeval_core.data.registry import load_dataset

    rows = reproduce(lambda dataset_id: load_dataset(dataset_id, data_dir=data_dir))
    assert len(rows) == len(PUBLISHED)
    for item, row in zip(PUBLISHED, rows):
        assert row.value is not None, row.note
        if item.reason:
            assert not row.reproduced and row.note == item.reason
        else:
            assert row.reproduced, f"{row.description}: published {row.published}, metaeval {row.value}"
    assert sum(r.reproduced for r in rows) >= 70


@pytest.mark.realdata
def test_cli_reproduce(data_dir, capsys):
    assert main(["reproduce", "--data-dir", str(data_dir), "--datasets", "realsumm", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["reproduced"] for r in records] == [True]
    assert records[0]["published"] == 0.96 and abs(records[0]["metaeval"] - 0.96) <= 0.01


def test_verdicts_are_counted_separately():
    """Issue 24: 'Reproduced 71 of 71' hid 8 numbers the data cannot reproduce; each verdict is its own count."""
    from metaeval_core.analyses.reproduce import Reproduction, verdict_counts

    def row(value, reproduced, note=""):
        return Reproduction("p", "t", "d", "ds", 0.5, 0.005, value, reproduced, note)

    rows = [row(0.5, True), row(0.6, False), row(0.7, False, "needs the whole test set"),
            row(None, False, "data not available: x"), row(None, False, "could not compute: y")]
    assert [r.verdict for r in rows] == ["reproduced", "differs", "not reproducible", "not computed", "not computed"]
    assert verdict_counts(rows) == {"reproduced": 1, "differs": 1, "not reproducible": 1, "not computed": 2}
    assert reproduction_records(rows)[2]["verdict"] == "not reproducible"
