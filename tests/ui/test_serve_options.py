"""What the dashboard tells a user to type works where it is shown (issue 22)."""

from __future__ import annotations

import pytest

from metaeval_core import _paths


def test_the_port_flag_the_quick_start_names_reaches_streamlit(monkeypatch):
    """`bash run.sh app --server.port 8600` / `metaeval app --server.port 8600`: serve.main hands the flag to
    Streamlit's own `run` command, which reads it as its server.port option."""
    from streamlit.web import cli

    from metaeval_ui import serve

    seen = {}
    monkeypatch.setattr(serve, "warm_up", lambda: None)
    monkeypatch.setattr(cli, "_main_run", lambda file, args=None, flag_options=None: seen.update(flag_options))
    with pytest.raises(SystemExit) as stop:
        serve.main(["--server.port", "8600"])
    assert stop.value.code in (0, None)
    assert seen["server_port"] == 8600


def test_metaeval_app_help_is_short(capsys):
    from metaeval_core.cli.main import main

    with pytest.raises(SystemExit):
        main(["app", "--help"])
    out = capsys.readouterr().out
    assert "--server.port 8600" in out and len(out.splitlines()) < 20


@pytest.mark.parametrize("installed, venv, arguments, expected", [
    (True, False, "fetch --dataset summeval", "metaeval fetch --dataset summeval"),
    (True, False, "app", "metaeval app"),
    (False, True, "fetch --dataset summeval", ".venv/bin/metaeval fetch --dataset summeval"),
    (False, False, "fetch --dataset summeval", "bash run.sh cli fetch --dataset summeval"),
    (False, True, "app", "bash run.sh app"),
])
def test_hints_name_the_command_of_this_installation(monkeypatch, tmp_path, installed, venv, arguments, expected):
    """A pip user is told `metaeval ...`, a checkout user `bash run.sh app` / `.venv/bin/metaeval ...`; never
    `python -m metaeval_core` (the system Python has no numpy)."""
    root = tmp_path / "repo"
    if venv:
        (root / ".venv" / "bin").mkdir(parents=True)
        (root / ".venv" / "bin" / "metaeval").write_text("")
    monkeypatch.setattr(_paths, "checkout_root", lambda: None if installed else root)
    assert _paths.shell_command(arguments) == expected
