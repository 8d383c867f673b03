"""Helpers shared by the dashboard tests (AppTest construction, page list, clean-run assertion)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"
TIMEOUT = 120


def page_files() -> list[str]:
    """The page files app.py registers in this build (CI and significance pages need their core modules)."""
    from ui import data

    pages = ["pages/home.py", "pages/correlations.py"]
    if data.has_resampling() and (REPO / "pages/confidence.py").is_file():
        pages.append("pages/confidence.py")
    if data.has_significance() and (REPO / "pages/significance.py").is_file():
        pages.append("pages/significance.py")
    return pages


def new_app(query: dict | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at


def assert_clean(at) -> None:
    """No exception element and no error box."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def plotly_specs(at) -> dict:
    """The plotly figures on the page as dicts, by chart key (numeric arrays may be base64-encoded)."""
    import json

    out = {}
    for element in at.get("plotly_chart"):
        key = element.proto.id.rsplit("-", 1)[-1]
        out[key] = json.loads(element.proto.spec)
    return out
