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
from metaeval_core.cli.options import flag_message
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


FLAGS = {"human_measures": "--human-measures"}


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
    elif lines[0] != f"error: {flag_message(message, FLAGS)}":  # in the command line's words (--human-measures)
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


# -- work the user asks for, and the deployment's limits ------------------------------------------------------
def small_long_file(tmp_path, n_systems: int = 8, n_inputs: int = 5) -> Path:
    rng = __import__("numpy").random.default_rng(0)
    lines = ["system,input,measure,score"]
    for s in range(n_systems):
        for i in range(n_inputs):
            lines += [f"s{s},i{i},metric,{rng.random():.3f}", f"s{s},i{i},human,{rng.random():.3f}"]
    path = tmp_path / "small.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_main(argv, capsys, monkeypatch, **env) -> tuple[int, str, str]:
    monkeypatch.delenv("METAEVAL_DEBUG", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's usage errors
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


CORRELATE = ["correlate", "--human-measures", "human", "--metrics", "metric", "--human", "human"]


@pytest.mark.parametrize("k, message", [
    ("1", "must be between 10 and 10,000"),
    ("0", "must be between 10 and 10,000"),
    ("-3", "must be between 10 and 10,000"),
    ("1000000000", "must be between 10 and 10,000"),
    ("1e9", "must be a whole number"),
    ("20", "a 0.95 interval needs at least 40 resamples"),
])
def test_n_resamples_bounds_are_one_line_exit_2(tmp_path, capsys, monkeypatch, k, message):
    path = small_long_file(tmp_path)
    code, out, err = run_main([*CORRELATE, "--dataset", str(path), "--ci", "boot-systems", "--n-resamples", k],
                              capsys, monkeypatch)
    assert code == 2 and not out.strip()
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_n_resamples_cap_applies_to_every_resampling_command(capsys, monkeypatch):
    from metaeval_core.cli.main import build_parser

    checked = 0
    for name, sub in build_parser()._subparsers._group_actions[0].choices.items():
        action = next((a for a in sub._actions if "--n-resamples" in a.option_strings), None)
        if action is None:
            continue
        checked += 1
        with pytest.raises(Exception, match="must be between 10 and 10,000"):
            action.type("100000")
    assert checked >= 8


def test_enough_resamples_give_an_interval(tmp_path, capsys, monkeypatch):
    path = small_long_file(tmp_path)
    code, out, err = run_main([*CORRELATE, "--dataset", str(path), "--ci", "boot-systems", "--n-resamples", "40",
                               "--json"], capsys, monkeypatch)
    assert code == 0, err


def test_cli_honours_upload_limits_for_a_path(tmp_path, capsys, monkeypatch):
    path = small_long_file(tmp_path)
    code, out, err = run_main(["describe", "--dataset", str(path), "--human-measures", "human"], capsys, monkeypatch,
                              METAEVAL_MAX_UPLOAD_ROWS="10")
    assert code == 2 and "more than 10 data rows, the limit" in err, err


@pytest.mark.parametrize("raw", ["inf", "nan", "-1", "0", "lots"])
def test_a_limit_that_is_not_a_finite_positive_number_is_a_configuration_error(tmp_path, capsys, monkeypatch, raw):
    path = small_long_file(tmp_path)
    code, out, err = run_main(["describe", "--dataset", str(path), "--human-measures", "human"], capsys, monkeypatch,
                              METAEVAL_MAX_UPLOAD_MB=raw)
    assert code == 2
    assert err.strip() == f"error: configuration error: METAEVAL_MAX_UPLOAD_MB must be a number, finite and positive; " \
                          f"got {raw!r}"


def test_pair_analyses_beyond_the_system_limit_say_so(tmp_path, capsys, monkeypatch):
    path = small_long_file(tmp_path, n_systems=12, n_inputs=2)
    code, out, err = run_main(["delta", "--dataset", str(path), "--human-measures", "human", "--metric", "metric",
                               "--human", "human", "--grid", "deciles"], capsys, monkeypatch,
                              METAEVAL_MAX_PAIR_SYSTEMS="10")
    assert code == 2
    assert "12 systems make 66 system pairs" in err and "at most 10 systems (METAEVAL_MAX_PAIR_SYSTEMS)" in err
