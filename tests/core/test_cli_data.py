"""The command line's data side: `datasets` fits a terminal, `fetch` fails in one line and leaves nothing,
'not available' names the command-line remedies, a missing package is one line with exit 2."""

from __future__ import annotations

import json
import socket

import pytest

from metaeval_core.cli import main as cli
from metaeval_core.cli.main import fit_to_terminal, main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def closed_port():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def no_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def test_fetch_without_a_server_is_one_line_and_leaves_no_folder(capsys, tmp_path, closed_port, no_proxy):
    target = tmp_path / "cache"
    code, out, err = run_cli(capsys, "fetch", "--dataset", "rose", "--data-dir", str(target),
                             "--base-url", f"http://127.0.0.1:{closed_port}")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: download of rose/")
    assert err.rstrip().endswith("failed: connection refused") and len(err) < 250
    assert not target.exists()


def test_fetch_refuses_a_file_url_saying_so(capsys, tmp_path):
    code, _, err = run_cli(capsys, "fetch", "--dataset", "rose", "--data-dir", str(tmp_path / "c"),
                           "--base-url", f"file://{tmp_path}")
    assert code == 2 and len(err.splitlines()) == 1
    assert "is a file:// URL, which is not downloaded: point METAEVAL_DATA_DIR at that folder" in err
    assert "does not match" not in err


@pytest.mark.parametrize("command", [["describe"], ["correlate", "--metrics", "a", "--human", "b"]])
def test_not_available_names_the_command_line_remedies(capsys, tmp_path, command):
    code, out, err = run_cli(capsys, command[0], "--dataset", "rose", "--data-dir", str(tmp_path), *command[1:])
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("error: dataset 'rose' is not available: 1 of 1 required file(s) missing from "
                          f"{tmp_path} (rose/docs/_data/protocol-comparison.json)")
    for remedy in ("`metaeval fetch --dataset rose`", "--download", "METAEVAL_DATA_DIR", "--data-dir"):
        assert remedy in err
    assert "fetch_dataset" not in err and "load_dataset" not in err and "()" not in err


def test_datasets_fits_the_terminal_and_json_keeps_the_full_reason(capsys, tmp_path, monkeypatch):
    for columns in (80, 100, 160):
        monkeypatch.setenv("COLUMNS", str(columns))
        code, out, _ = run_cli(capsys, "datasets", "--data-dir", str(tmp_path))
        assert code == 0
        assert max(len(line) for line in out.splitlines()) <= columns, (columns, out)
        assert "rose                missing 1/1 files" in out
        assert "metaeval fetch --dataset ID" in out and f"data directory: {tmp_path}" in out
    assert "licence" in out.splitlines()[0] and "BSD-3-Clause" in out  # wide enough: the licence is back
    code, out, _ = run_cli(capsys, "datasets", "--data-dir", str(tmp_path), "--json")
    rose = {row["id"]: row for row in json.loads(out)}["rose"]
    assert not rose["available"] and "rose/docs/_data/protocol-comparison.json" in rose["reason"]
    assert "metaeval fetch --dataset rose" in rose["reason"] and "METAEVAL_DATA_DIR" in rose["reason"]


def test_fit_to_terminal_shortens_then_drops():
    rows = [{"a": "x" * 10, "b": "y" * 30}]
    fitted, columns = fit_to_terminal(rows, ["a", "b"], shrink=("b",), width=30)
    assert columns == ["a", "b"] and fitted[0]["b"] == "y" * 17 + "…" and rows[0]["b"] == "y" * 30
    fitted, columns = fit_to_terminal(rows, ["a", "b"], shrink=("b",), width=15)
    assert columns == ["a"]
    assert fit_to_terminal(rows, ["a", "b"], shrink=("b",), width=200) == (rows, ["a", "b"])


def test_a_missing_package_is_one_line_with_exit_2(capsys, monkeypatch):
    def broken(args):
        raise ModuleNotFoundError("No module named 'pandas'", name="pandas")

    from metaeval_core.cli import data_commands

    monkeypatch.setattr(data_commands, "cmd_datasets", broken)
    monkeypatch.delenv("METAEVAL_DEBUG", raising=False)
    code, out, err = run_cli(capsys, "datasets")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "a required package is missing ('pandas'" in err and "bash run.sh cli" in err
    assert "internal error" not in err


@pytest.mark.parametrize("how", [["-m", "metaeval_core"], ["-c", "from metaeval_core.cli.main import entry; entry()"]])
def test_a_missing_package_outside_the_environment_is_one_line_with_exit_2(tmp_path, how):
    """`python -m metaeval_core` (or the `metaeval` command) with an interpreter that has no pandas."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    (tmp_path / "pandas").mkdir()
    (tmp_path / "pandas" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'pandas'\", "
                                                     "name='pandas')\n")
    env = {k: v for k, v in os.environ.items() if k != "METAEVAL_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(repo)])
    argv = [sys.executable, *how, "datasets"]
    if how[0] == "-c":  # as the console script, whose sys.argv[0] is its path
        argv = [sys.executable, "-c", "import sys; sys.argv[:] = ['/venv/bin/metaeval', 'datasets']; " + how[1]]
    run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 2, run.stderr
    assert run.stdout == "" and len(run.stderr.splitlines()) == 1, run.stderr
    assert run.stderr.startswith("error: a required package is missing ('pandas' cannot be imported")
    # From Python: the usual error, when a re-export is first used (the package itself imports lazily).
    blocked = subprocess.run([sys.executable, "-c", "import metaeval_core; metaeval_core.correlate"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120, env=env)
    assert blocked.returncode == 1 and "ModuleNotFoundError" in blocked.stderr
