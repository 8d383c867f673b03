"""Provenance records and the self-contained HTML report: fields, escaping, plotly.js inlined once."""

from __future__ import annotations

import datetime as dt
import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from metaeval_core.data.dataset import Dataset, Measure
from metaeval_core.report import Html, Text, package_versions, provenance, render_html_report

EVIL = "<script>alert('x')</script>"


@pytest.fixture
def evil():
    return Dataset(
        id="upload:evil", systems=[EVIL, "b"], inputs=["d1", "d2"],
        measures={"human.q": Measure("human.q", "human", np.array([[1.0, 2.0], [2.0, 3.0]])),
                  EVIL: Measure(EVIL, "metric", np.array([[0.5, 0.1], [0.2, 0.3]]))},
        title=f"My {EVIL} data", citation="A & B <2021>", licence="CC-BY",
    )


class Scripts(HTMLParser):
    """Collect every element and the text of every <script>."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def test_provenance_fields(evil):
    when = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
    prov = provenance(evil, {"level": "system", "ci_seed": 7, "sig_seed": np.int64(3), "metrics": ("a", "b"),
                             "alpha": float("nan")}, url="http://localhost:8501/confidence?ci_seed=7", page="CI",
                      now=when)
    assert prov["generated"] == "2024-05-01T12:00:00+00:00"
    assert prov["dataset"]["id"] == "upload:evil" and prov["dataset"]["version"] == evil.version
    assert prov["dataset"]["fingerprint"] == evil.fingerprint()
    assert prov["dataset"]["title"] == evil.title and prov["dataset"]["citation"] == "A & B <2021>"
    assert prov["dataset"]["licence"] == "CC-BY"
    assert prov["parameters"] == {"level": "system", "ci_seed": 7, "sig_seed": 3, "metrics": ["a", "b"],
                                  "alpha": None}
    assert prov["seeds"] == {"ci_seed": 7, "sig_seed": 3}
    assert set(prov["packages"]) >= {"python", "numpy", "scipy", "pandas", "streamlit", "plotly"}
    assert prov["packages"]["numpy"] == np.__version__
    assert prov["url"].endswith("?ci_seed=7") and prov["page"] == "CI"
    assert prov["git_commit"] is None or re.fullmatch(r"[0-9a-f]{40}(\+modified)?", prov["git_commit"])
    json.dumps(prov)  # JSON-safe


def test_missing_package_is_none():
    assert package_versions(["surely-not-installed-pkg"])["surely-not-installed-pkg"] is None


def test_report_escapes_every_user_text(evil):
    prov = provenance(evil, {"metrics": [EVIL], "note": "</script><b>x</b>"}, url="javascript:alert(1)")
    table = pd.DataFrame({"metric": [EVIL, "rouge"], "estimate": [0.123456789, -0.5]})
    page = render_html_report(
        f"Report {EVIL}", [(f"Heading {EVIL}", table), ("Note", Text(f"a < b & {EVIL}\n\nsecond"))], prov,
        subtitle=EVIL)
    parser = Scripts()
    parser.feed(page)
    # The only script is the JSON provenance record: nothing user-provided became markup.
    assert parser.tags.count("script") == 1 and "b" not in parser.tags
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    record = json.loads(parser.scripts[0])
    assert record["parameters"]["note"] == "</script><b>x</b>" and record["dataset"]["title"] == evil.title
    assert "0.123457" in page and "-0.5" in page  # the numbers
    assert 'href="javascript' not in page  # only http(s) / relative links are clickable
    assert page.count("<section>") == 3 and "second" in page
    assert "A &amp; B &lt;2021&gt;" in page  # the citation


def test_figures_are_trusted_fragments_and_plotly_js_is_inlined_once(evil):
    prov = provenance(evil, {})
    fig_div = Html('<div id="f1"></div><script>Plotly.newPlot("f1", [], {})</script>')
    js = "/* plotly.js */ window.Plotly = {};"
    page = render_html_report("t", [("Figure 1", fig_div), ("Figure 2", fig_div.replace("f1", "f2")),
                                    ("Both", [Text("caption"), pd.DataFrame({"x": [1]})])], prov, plotlyjs=js)
    assert page.count(js) == 1 and page.index(js) < page.index('id="f1"')
    assert 'Plotly.newPlot("f2"' in page
    assert js not in render_html_report("t", [("Table", pd.DataFrame({"x": [1]}))], prov, plotlyjs=js)


def test_real_plotly_figure_with_script_names_stays_inert(evil):
    go = pytest.importorskip("plotly.graph_objects")
    fig = go.Figure(go.Bar(x=[EVIL, "b"], y=[0.25, 0.75]), layout={"title": {"text": f"Title {EVIL}"}})
    div = fig.to_html(full_html=False, include_plotlyjs=False)
    page = render_html_report("t", [("Figure", div)], provenance(evil, {}), plotlyjs="/*js*/")
    parser = Scripts()
    parser.feed(page)
    assert all("alert('x')</script>" not in s for s in parser.scripts)
    assert "alert" in page and "0.25" in page and "0.75" in page
