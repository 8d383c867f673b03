"""Exports on the pages: CSV and figure downloads, PNG camera config, and the one-click HTML report."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from metaeval_ui import data, exports
from ui_helpers import assert_clean, new_app, page_files

EVIL = "<script>alert(1)</script>"


def open_page(at, page: str):
    at.switch_page(page)
    return at.run()


def download_labels(at) -> list[str]:
    return [b.proto.label for b in at.get("download_button")]


@pytest.mark.parametrize("page", page_files())
def test_every_page_offers_csv_figure_and_report_downloads(demo_env, page):
    at = open_page(new_app({"metric": "metric.strong,metric.good"}).run(), page)
    assert_clean(at)
    labels = download_labels(at)
    assert "Download report (HTML)" in labels
    assert "Figure (HTML)" in labels
    assert "Download CSV" in labels
    for chart in at.get("plotly_chart"):
        config = json.loads(chart.proto.config)
        assert config["displaylogo"] is False
        assert config["toImageButtonOptions"]["format"] == "png" and config["toImageButtonOptions"]["scale"] == 2
        assert config["toImageButtonOptions"]["filename"]
    snap = at.session_state["_export_snapshot"]
    assert snap["items"] and snap["dataset"].id == "demo"
    assert "dataset=demo" in snap["url"]


class Parsed(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.script_text: list[str] = []
        self._script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._script = tag == "script"
        if self._script:
            self.script_text.append("")

    def handle_endtag(self, tag):
        self._script = False

    def handle_data(self, text):
        if self._script:
            self.script_text[-1] += text


def evil_csv() -> bytes:
    rng = np.random.default_rng(0)
    lines = [f"system,input,human.overall,rouge,{EVIL}"]
    for i in range(5):
        for j in range(8):
            q = i + rng.normal()
            lines.append(f"sys{i},doc{j},{q:.3f},{q + rng.normal():.3f},{rng.normal():.3f}")
    return ("\n".join(lines) + "\n").encode()


def test_report_holds_titles_numbers_provenance_and_is_escaped(demo_env):
    at = new_app().run()
    at.file_uploader(key="w:upload_file").upload("evil.csv", evil_csv(), "text/csv")
    at.run()
    at.switch_page("pages/correlations.py").run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert EVIL in set(table["metric"])
    snap = at.session_state["_export_snapshot"]
    titles = [item.title for item in snap["items"]]
    assert "kendall correlation, system level" in titles
    page = exports.report_html(snap)
    parsed = Parsed()
    parsed.feed(page)
    # The figure's title and every correlation (as the table prints them, 6 significant digits).
    assert "kendall correlation, system level" in page
    for value in table["estimate"].dropna():
        assert f"{value:.6g}" in page
    # Provenance: dataset, version, parameters, seeds, packages, the shareable URL.
    ds_id = snap["dataset"].id
    assert ds_id.startswith("upload:") and ds_id in page and snap["dataset"].version in page
    assert "parameter level" in page and "numpy" in page and "plotly" in page and "streamlit" in page
    assert f"dataset={ds_id}" in page and "level=system" in page
    record = json.loads(parsed.script_text[-1])
    assert record["dataset"]["id"] == ds_id and record["parameters"]["level"] == "system"
    assert record["packages"]["numpy"] == np.__version__
    # plotly.js inlined exactly once; nothing user-provided became markup.
    assert page.count("Plotly.newPlot") == 1
    assert sum(1 for text in parsed.script_text if "plotly.js" in text.lower()[:2000]) <= 1
    assert "<script>alert(1)</script>" not in page
    assert all("alert(1)</script>" not in text for text in parsed.script_text)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_figure_html_is_standalone(demo_env):
    go = pytest.importorskip("plotly.graph_objects")
    fig = go.Figure(go.Bar(x=["a"], y=[0.5]), layout={"title": {"text": "A title"}})
    page = exports.figure_html(fig, "my figure")
    assert page.lstrip().lower().startswith(("<!doctype html>", "<html")) and len(page) > 1_000_000
    assert not re.search(r"<script[^>]*\bsrc=", page)  # offline: plotly.js inlined, nothing fetched
    assert '"filename": "my-figure"' in page and "A title" in page
    assert exports.file_name("a:b/c", "d e") == "a-b-c_d-e"
