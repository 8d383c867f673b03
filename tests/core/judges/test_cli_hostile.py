"""The command line on hostile verdict inputs: a FIFO, a semicolon file, ESC in arguments (issue 28)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from metaeval_core.cli.main import main
from tests.core.judges.test_verdict_hostile import generate

REPO = Path(__file__).resolve().parents[3]


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def test_describe_reads_a_semicolon_separated_verdict_file(capsys, tmp_path):
    path = tmp_path / "verdicts.csv"
    header = "item;system_a;system_b;rater;verdict;order"
    path.write_text("\n".join([header] + [";".join(row) for row in generate()]) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "describe", "--dataset", str(path))
    assert code == 0, err
    assert "judge-1" in out and "human-1" in out


def test_describe_on_a_fifo_does_not_hang(tmp_path):
    fifo = tmp_path / "verdicts.csv"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "metaeval_core", "describe", "--dataset", str(fifo)],
                          capture_output=True, text=True, timeout=60, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2 and done.stderr.startswith("error:") and len(done.stderr.splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_unrecognized_arguments_escape_esc(capsys):
    code, _, err = run(capsys, "describe", "--dataset", "demo", "\x1b[31mred\x1b[0m")
    assert code == 2 and "\x1b" not in err and "\\x1b[31mred" in err and len(err.splitlines()) == 1
