"""The launcher's warm-up: every ui module imported and the default dataset loaded before the first visitor."""

from __future__ import annotations

import pkgutil
import sys

import ui
from ui import data, serve


def test_warm_up_imports_every_ui_module_and_loads_the_default_dataset(demo_env):
    serve.warm_up()
    expected = {f"ui.{m.name}" for m in pkgutil.iter_modules(ui.__path__)}
    assert expected <= set(sys.modules)
    assert data.load_registered(data.DEMO_ID, data.data_dir_key()).id == data.DEMO_ID


def test_warm_up_never_raises(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(data, "list_choices", broken)
    serve.warm_up()
    assert "warm-up skipped (OSError: disk on fire)" in capsys.readouterr().err
