"""The ``Examples`` sections of the public core modules' docstrings, run as doctests in CI.

Listed by module (not ``--doctest-modules`` over the package, which would import every module, the UI's
streamlit ones included); a module added here must import nothing from ``metaeval_ui``.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["metaeval_core.wording", "metaeval_core.data.selection", "metaeval_core.analyses.leaderboard",
           "metaeval_core.stats.montecarlo", "metaeval_core.stats.resampling", "metaeval_core.analyses.ceilings",
           "metaeval_core.data.upload.export"]


@pytest.mark.parametrize("name", MODULES)
def test_examples_in_docstrings_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0, f"{name} has no Examples to run"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (run pytest -s)"
