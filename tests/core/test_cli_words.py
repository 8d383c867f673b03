"""CLI output reads true (issue 32): no "-0" cell, and `metaeval reproduce` fits 80 and 100 columns."""

from __future__ import annotations

import io

import pytest

from metaeval_core.cli.main import main
from metaeval_core.cli.output import print_table


def test_a_cell_that_rounds_to_zero_has_no_sign():
    out = io.StringIO()
    print_table([{"metric": "a", "delta": -0.00001, "p": float("nan")}], stream=out, width=80)
    assert "-0" not in out.getvalue() and "0.0000" in out.getvalue()


def test_one_record_wider_than_the_terminal_is_wrapped_not_overflowing():
    out = io.StringIO()
    print_table([{"what": "word " * 40, "value": "x"}], stream=out, width=60)
    lines = out.getvalue().splitlines()
    assert max(map(len, lines)) <= 60 and " ".join(" ".join(lines).split()).count("word") == 40


@pytest.mark.parametrize("columns", [80, 100])
def test_reproduce_fits_the_terminal(columns, capsys, monkeypatch, data_dir):
    monkeypatch.setenv("COLUMNS", str(columns))
    main(["reproduce", "--data-dir", str(data_dir), "--datasets", "summeval"])
    out = capsys.readouterr().out
    assert "Fig. 5" in out and max(map(len, out.splitlines())) <= columns
