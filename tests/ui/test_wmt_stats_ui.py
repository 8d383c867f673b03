"""WMT's statistics on the built-in WMT22 zh-en dataset: WMT's system-level test by default on the Significance page
and the Overview leaderboard, WMT's rescaled average on the Overall average page, each named on the page
(docs/methods.md sec. 3.6 and 13.3)."""

from __future__ import annotations

import pytest

from tests.ui.test_wmt22_ui import _captions, open_wmt
from tests.ui.ui_helpers import assert_clean

pytestmark = pytest.mark.realdata
METRICS = {"metric": "COMET-22-refA,BLEU-refA,COMETKiwi-src"}


def _markdown(at) -> str:
    return " ".join(m.value.replace("\\", "") for m in at.markdown)


def test_significance_defaults_to_wmts_test_and_says_so(real_env):
    at = open_wmt("pages/significance.py", {"level": "system", "coef": "pearson", **METRICS})
    box = at.selectbox(key="w:sig_method")
    assert box.value == "default" and "WMT-PERM-SYS" in box.options
    assert box.options[0].startswith("Default: WMT-PERM-SYS")
    assert "WMT-PERM-SYS" in _markdown(at) and "PermutationSigDiff" in _markdown(at)
    # By name, the TACL test is still there; back to the default follows the data.
    box.set_value("perm-both").run()
    assert_clean(at)
    assert "PERM-BOTH" in _markdown(at) and at.query_params["test"] in ("perm-both", ["perm-both"])
    at.selectbox(key="w:sig_method").set_value("default").run()
    at.sidebar.radio(key="w:level").set_value("input").run()
    assert_clean(at)
    options = at.selectbox(key="w:sig_method").options
    assert options[0] == "Default: PERM-BOTH" and not any("WMT" in o for o in options)  # system level only
    assert "PERM-BOTH" in _markdown(at)


def test_overview_and_average_name_wmts_statistics(real_env):
    at = open_wmt("pages/home.py", {"level": "system", "coef": "pearson", **METRICS})
    assert "WMT-PERM-SYS" in _captions(at)
    at = open_wmt("pages/average.py", {"avg_lv": ["system"], "coef": "pearson", "avg_k": "100", **METRICS})
    assert at.selectbox(key="w:avg_rule").value == "default"
    captions = _captions(at)
    assert "rescaled to [0, 1]" in captions and "WMT-PERM-SYS" in captions
