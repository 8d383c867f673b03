"""run.sh and .ci/run, run from copies in a temporary folder with stand-ins for what they call."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _env(**changes: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METAEVAL_", "PYTHON"))}
    env.update({k: v for k, v in changes.items() if v is not None})
    return env


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return path


@pytest.fixture
def ci_copy(tmp_path):
    """.ci/run in a copy whose run.sh only reports the data directory, with chromium 'present'."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci" / "run", repo / ".ci" / "run")
    _script(repo / "run.sh", 'echo "DATA=${METAEVAL_DATA_DIR:-<unset>}"\n')
    chromium = _script(tmp_path / "chromium", "echo Chromium 1.0\n")
    return repo, chromium


def test_ci_keeps_the_data_directory_the_user_set(ci_copy, tmp_path):
    repo, chromium = ci_copy
    mine = tmp_path / "my-data"
    (tmp_path / "shared" / "datasets").mkdir(parents=True)  # a mirror beside it must not win
    run = subprocess.run(["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, timeout=60,
                         env=_env(METAEVAL_DATA_DIR=str(mine), METAEVAL_CHROMIUM=str(chromium)))
    assert run.returncode == 0, run.stderr
    assert f"DATA={mine}" in run.stdout


def test_ci_falls_back_to_the_mirror_beside_the_repository_only_when_unset(ci_copy, tmp_path):
    repo, chromium = ci_copy
    run = subprocess.run(["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, timeout=60,
                         env=_env(METAEVAL_CHROMIUM=str(chromium)))
    assert "DATA=<unset>" in run.stdout  # no mirror beside it: run.sh and the tests use data/cache/
    (tmp_path / "shared" / "datasets").mkdir(parents=True)
    run = subprocess.run(["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, timeout=60,
                         env=_env(METAEVAL_CHROMIUM=str(chromium)))
    assert f"DATA={tmp_path / 'shared' / 'datasets'}" in run.stdout


@pytest.fixture
def run_copy(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(REPO / "run.sh", repo / "run.sh")
    return repo


@pytest.mark.parametrize("command", ["app", "test", "cli"])
def test_run_sh_refuses_an_old_python_with_a_clear_message(run_copy, tmp_path, command):
    old = _script(tmp_path / "python3.9", "echo 3.9.18; exit 3\n")
    run = subprocess.run(["bash", str(run_copy / "run.sh"), command], capture_output=True, text=True, timeout=60,
                         env=_env(PYTHON=str(old)))
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == (f"run.sh: PYTHON '{old}' is Python 3.9.18; metaeval needs Python 3.11 or newer: "
                                  "point PYTHON at one (e.g. PYTHON=python3.12 bash run.sh app)")
    assert not (run_copy / ".venv").exists()


def test_run_sh_names_a_missing_python(run_copy):
    run = subprocess.run(["bash", str(run_copy / "run.sh"), "cli"], capture_output=True, text=True, timeout=60,
                         env=_env(PYTHON="python3.99-nowhere"))
    assert run.returncode == 2 and len(run.stderr.splitlines()) == 1
    assert "PYTHON 'python3.99-nowhere' not found; metaeval needs Python 3.11 or newer" in run.stderr


def test_run_sh_documents_its_settings():
    head = (REPO / "run.sh").read_text().split("set -euo pipefail")[0]
    for setting in ("PYTHON=", "METAEVAL_VENV=", "METAEVAL_DATA_DIR="):
        assert setting in head
    readme = (REPO / "README.md").read_text()
    assert "PYTHON=" in readme and "METAEVAL_VENV" in readme


def test_run_sh_app_help_is_ours_and_short(run_copy):
    """`bash run.sh app --help` prints a page of our own (Streamlit's is 5,000+ lines), without building .venv,
    and names how to change the port (the README's Quick start says the same; tests/ui/test_serve_options.py
    checks that Streamlit takes that flag)."""
    run = subprocess.run(["bash", str(run_copy / "run.sh"), "app", "--help"], capture_output=True, text=True,
                         timeout=60, env=_env(PYTHON="python3.99-nowhere"))
    assert run.returncode == 0 and run.stderr == ""
    assert len(run.stdout.splitlines()) < 20 and "--server.port 8600" in run.stdout
    assert max(map(len, run.stdout.splitlines())) <= 100
    assert not (run_copy / ".venv").exists()
    readme = (REPO / "README.md").read_text()
    assert "bash run.sh app --server.port 8600" in readme
