"""The launcher's warm-up: every ui module imported and the default dataset loaded before the first visitor."""

from __future__ import annotations

import gc
import pkgutil
import sys

import metaeval_ui
from metaeval_ui import data, serve


def test_warm_up_imports_every_ui_module_and_loads_the_default_dataset(demo_env):
    try:
        serve.warm_up()
        # What it loaded is frozen out of the cyclic collector's full passes (they ran mid-rerun, 45-90 ms).
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    expected = {m.name for m in pkgutil.walk_packages(metaeval_ui.__path__, prefix="metaeval_ui.")}
    assert expected <= set(sys.modules)
    assert data.load_registered(data.DEMO_ID, data.data_dir_key()).id == data.DEMO_ID
    # Streamlit's first element (is_repl: inspect.stack()) finds every imported module's file already mapped.
    import inspect
    import os

    import numpy

    assert os.path.realpath(numpy.__file__) in {os.path.realpath(f) for f in inspect.modulesbyfile}


def test_warm_up_never_raises(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(data, "list_choices", broken)
    try:
        serve.warm_up()
    finally:
        gc.unfreeze()
    assert "warm-up skipped (OSError: disk on fire)" in capsys.readouterr().err
