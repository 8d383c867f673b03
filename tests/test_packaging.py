"""The package as a user installs it: a wheel built from the checkout, installed into a fresh virtual environment
outside the checkout, runs ``metaeval datasets``, ``metaeval correlate ... --json`` on the demo and starts
``metaeval app`` until Streamlit's health endpoint answers.

The environment takes the pinned versions of requirements.txt as constraints, so pip reuses what the project's own
environment downloaded instead of resolving newer releases.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _run(args, cwd, env=None, timeout=600):
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q", "-w", str(out),
          str(REPO)], cwd=REPO)
    (built,) = out.glob("metaeval-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, Path, dict]:
    """(bin directory of a fresh venv with the wheel installed, a working directory outside the checkout, env)."""
    home = tmp_path_factory.mktemp("user")
    venv = home / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=home)
    bin_dir = venv / "bin"
    _run([str(bin_dir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q", str(wheel),
          "-c", str(REPO / "requirements.txt")], cwd=home, timeout=1200)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METAEVAL_", "PYTHON", "VIRTUAL_ENV"))}
    # Nothing from the checkout: downloads and saved datasets go to the user's folders.
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), XDG_DATA_HOME=str(home / "share"),
               PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    work = home / "work"
    work.mkdir()
    return bin_dir, work, env


def test_wheel_carries_the_dashboard_and_the_registry(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "metaeval_core/data/registry.json" in names
    assert "metaeval_ui/dashboard/app.py" in names
    assert "metaeval_ui/dashboard/.streamlit/config.toml" in names
    pages = {p.name for p in (REPO / "pages").glob("*.py")}
    assert {f"metaeval_ui/dashboard/pages/{p}" for p in pages} <= names
    assert not any(name.startswith(("tests/", "benchmarks/", "data/")) for name in names)


def test_installed_package_runs_outside_the_checkout(installed):
    bin_dir, work, env = installed
    where = _run([str(bin_dir / "python"), "-c", "import metaeval_core, metaeval_ui; "
                  "print(metaeval_core.__file__); print(metaeval_ui.__file__)"], cwd=work, env=env).stdout
    assert str(REPO) not in where and str(bin_dir.parent) in where

    listing = _run([str(bin_dir / "metaeval"), "datasets", "--json"], cwd=work, env=env).stdout
    ids = {row["id"] for row in json.loads(listing)}
    assert {"demo", "summeval"} <= ids

    out = _run([str(bin_dir / "metaeval"), "correlate", "--dataset", "demo", "--metrics", "metric.strong",
                "--human", "human.quality", "--level", "system", "--ci", "boot-both", "--n-resamples", "200",
                "--seed", "0", "--json"], cwd=work, env=env).stdout
    (row,) = json.loads(out)
    assert row["metric"] == "metric.strong" and -1 <= row["estimate"] <= 1
    assert row["low"] <= row["estimate"] <= row["high"]

    # `python -m metaeval_core` keeps working beside the command.
    again = _run([str(bin_dir / "python"), "-m", "metaeval_core", "datasets", "--json"], cwd=work, env=env).stdout
    assert json.loads(again) == json.loads(listing)


def test_installed_metaeval_app_answers_its_health_endpoint(installed):
    bin_dir, work, env = installed
    port = _free_port()
    server = subprocess.Popen([str(bin_dir / "metaeval"), "app", "--server.port", str(port),
                               "--server.address", "127.0.0.1", "--server.headless", "true"],
                              cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        answer = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                    answer = response.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert answer == "ok", f"no health answer; server exit {server.poll()}"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert response.status == 200
    finally:
        server.terminate()
        try:
            output, _ = server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            output, _ = server.communicate()
    assert "Traceback" not in output, output
