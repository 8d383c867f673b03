"""Helpers shared by the dashboard tests (AppTest construction, page list, clean-run assertion)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"
TIMEOUT = 120
LANDING = "pages/home.py"  # the Overview: light by design (no chart, table, code or download; test_app checks)


def page_files() -> list[str]:
    """The content pages with tables/figures and their exports. The landing page is not among them: see
    all_page_files()."""
    return ["pages/dataset.py", "pages/correlations.py", "pages/confidence.py", "pages/significance.py"]


def all_page_files() -> list[str]:
    """The landing page and the content pages."""
    return [LANDING, *page_files()]


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


def link_params(at) -> dict[str, dict]:
    """Every page link's label -> its query parameters (as AppTest.query_params takes them)."""
    from urllib.parse import parse_qs

    out = {}
    for p in at.get("page_link"):
        params = parse_qs(p.proto.query_string, keep_blank_values=True)
        out[p.proto.label] = {k: v[0] if len(v) == 1 else v for k, v in params.items()}
    return out


def open_link(at, params: dict):
    """Follow a link: Streamlit opens Correlations with the link's parameters, in this session."""
    at.query_params.clear()
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    assert any(m.value.startswith("#### Examples") for m in at.markdown)  # the panel is open
    return at
