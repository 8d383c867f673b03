"""The command line on every broken file of tests/data/bad_uploads: one ``error: ...`` line, exit 2, no traceback.

The message must be the core's own (metaeval_core.data.upload.UploadError), so a user sees the same reason in the
CLI and on the dashboard.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from metaeval_core.cli.main import main
from metaeval_core.data.upload import UploadError, read_user_file

REPO = Path(__file__).resolve().parents[2]
BAD = REPO / "tests" / "data" / "bad_uploads"
FILES = sorted(p.name for p in BAD.iterdir() if p.is_file())
# A sample run as real processes in the default suite (one per format and failure family); all of them: slow.
SAMPLE = ["decimal_comma.csv", "garbage.parquet", "corrupt.csv.gz", "broken_line.jsonl", "scores.xlsx",
          "empty.csv", "one_system.csv", "control_char_name.csv"]


def core_message(name: str) -> tuple[str, str]:
    """(kind, first line of the message) the core gives for this file."""
    with pytest.raises(UploadError) as info:
        read_user_file(BAD / name)
    return info.value.kind, str(info.value).strip().splitlines()[0]


def check(name: str, code: int, out: str, err: str) -> list[str]:
    kind, message = core_message(name)
    problems = []
    if code != 2:
        problems.append(f"exit code {code}, expected 2")
    if "Traceback" in out + err:
        problems.append("traceback printed")
    lines = err.strip().splitlines()
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines on stderr, expected 1: {err!r}")
    elif lines[0] != f"error: {message}":
        problems.append(f"stderr {lines[0]!r} is not 'error: ' + the core's message {message!r} ({kind})")
    if out.strip():
        problems.append(f"unexpected stdout {out[:200]!r}")
    return [f"{name}: {p}" for p in problems]


def test_the_corpus_is_there():
    assert len(FILES) >= 40, FILES
    assert set(SAMPLE) <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_describe_a_bad_file_in_process(name, capsys, monkeypatch):
    monkeypatch.delenv("METAEVAL_DEBUG", raising=False)
    code = main(["describe", "--dataset", str(BAD / name)])
    captured = capsys.readouterr()
    assert not check(name, code, captured.out, captured.err)


def run_cli(name: str) -> tuple[str, int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "METAEVAL_DEBUG"}
    done = subprocess.run([sys.executable, "-m", "metaeval_core", "describe", "--dataset", str(BAD / name)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    return name, done.returncode, done.stdout, done.stderr


def run_all(names) -> list[str]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run_cli, names))
    return [p for name, code, out, err in results for p in check(name, code, out, err)]


def test_describe_bad_files_as_a_process():
    problems = run_all(SAMPLE)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_describe_every_bad_file_as_a_process():
    problems = run_all([n for n in FILES if n not in SAMPLE])
    assert not problems, "\n".join(problems)
