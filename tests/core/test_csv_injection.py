"""CSV downloads never hold a cell a spreadsheet would run as a formula; numbers stay numbers (issue 28)."""

from __future__ import annotations

import csv
import io
import pathlib
import re

import numpy as np
import pandas as pd
import pytest

from metaeval_core.data.upload import dataset_to_long_frame, neutralise_cell, read_user_file, safe_csv

LEADS = ("=", "+", "-", "@", "\t", "\r")
ROOT = pathlib.Path(__file__).resolve().parents[2]


def hostile_text(rng: np.random.Generator) -> str:
    body = rng.choice(["cmd|' /C calc'!A0", "HYPERLINK(\"http://x\")", "1+1", "SUM(A1:A9)", "x", "2", "0.5"])
    return str(rng.choice(LEADS + ("", " ", "a"))) + str(body)


def hostile_frame(seed: int, rows: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        hostile_text(rng): [hostile_text(rng) for _ in range(rows)],
        "score": rng.normal(size=rows) * 10,
        "count": rng.integers(-5, 5, size=rows),
        "cat": pd.Categorical([hostile_text(rng) for _ in range(rows)]),
        "signed": [str(v) for v in rng.normal(size=rows)],
    })
    return frame.set_index(pd.Index([hostile_text(rng) for _ in range(rows)], name="=name"))


def dangerous(cell: str) -> bool:
    return cell.startswith(LEADS) and not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", cell)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("index", [False, True])
def test_no_cell_of_a_download_starts_a_formula_and_numbers_stay_numbers(seed, index):
    frame = hostile_frame(seed)
    text = safe_csv(frame, index=index)
    cells = [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
    assert not [c for c in cells if dangerous(c)]
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header, body = rows[0], rows[1:]
    column = lambda name: [row[header.index(name)] for row in body]  # noqa: E731
    assert len(body) == len(frame)
    np.testing.assert_allclose([float(v) for v in column("score")], frame["score"].to_numpy())
    np.testing.assert_array_equal([int(v) for v in column("count")], frame["count"].to_numpy())
    np.testing.assert_allclose([float(v) for v in column("signed")], frame["signed"].astype(float).to_numpy())
    assert frame.columns[0] == hostile_frame(seed).columns[0]  # the input frame is not changed


def test_a_formula_named_system_in_the_long_export_is_quoted():
    raw = ("system,input,human,=cmd|' /C calc'!A0\n" + "".join(
        f"{s},d{i},{(i * 7 + len(s)) % 5},{i * 0.1 - 0.3}\n" for s in ("@sys", "+b", "c") for i in range(4))).encode()
    ds = read_user_file(raw, name="x.csv", human_measures=["human"])
    text = safe_csv(dataset_to_long_frame(ds))
    cells = [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
    assert "'=cmd|' /C calc'!A0" in cells and "'@sys" in cells and not [c for c in cells if dangerous(c)]
    assert "-0.3" in cells or "-0.30000000000000004" in cells  # a negative score stays a number


def test_neutralise_cell_leaves_non_text_alone():
    assert neutralise_cell(-1.5) == -1.5 and neutralise_cell(None) is None and neutralise_cell("-inf") == "-inf"
    assert neutralise_cell("\tx") == "'\tx" and neutralise_cell("\r=1") == "'\r=1"


def test_every_csv_writer_goes_through_safe_csv():
    """A new download that calls ``to_csv`` itself would bypass the neutralisation."""
    offenders = []
    for folder in ("metaeval_core", "metaeval_ui", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                code = line.split("#", 1)[0]
                if ".to_csv(" in code and "``" not in code and path.name != "export.py":
                    offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert not offenders, f"write CSV downloads with metaeval_core.data.upload.safe_csv: {offenders}"
