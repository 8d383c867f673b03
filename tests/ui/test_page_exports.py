"""Every analysis page exports what it shows: each figure (PNG camera + HTML), each table (CSV) and a report.

All charts go through :func:`metaeval_ui.exports.chart` and all CSV downloads through :func:`metaeval_ui.exports.table_download`
(checked on the source), so no page can show a figure or table that the report leaves out.
"""

from __future__ import annotations

import json
import re

import pytest

from ui_helpers import REPO, assert_clean, new_app

PAGES = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "pages").glob("*.py"))
# The landing page is kept light on purpose (no chart or table bundle on the first visit); What if… edits data;
# Simulations shows results only after a run (its exports are checked in test_pages_analyses.py).
WITHOUT_EXPORTS = {"pages/home.py", "pages/overview.py", "pages/whatif.py", "pages/simulations.py"}
# Streamlit's Python-side plotly template uses these as placeholders that only its frontend replaces.
PLACEHOLDER = re.compile(r"#0000(0[1-9]|[1-3][0-9]|40)\b", re.IGNORECASE)


@pytest.mark.parametrize("page", PAGES)
def test_pages_draw_charts_and_csv_only_through_exports(page):
    source = (REPO / page).read_text()
    assert not re.search(r"\.plotly_chart\(", source), f"{page}: use exports.chart (HTML download + report)"
    assert "download_button(" not in source, f"{page}: use exports.table_download (CSV + report)"


def _labels(at) -> list[str]:
    return [b.proto.label for b in at.get("download_button")]


@pytest.mark.parametrize("page", [p for p in PAGES if p not in WITHOUT_EXPORTS])
def test_every_chart_and_table_is_exported_and_reported(demo_env, page):
    at = new_app({"metric": "metric.strong,metric.good"}).run()
    at.switch_page(page)
    at.run()
    assert_clean(at)
    charts, tables = at.get("plotly_chart"), list(at.dataframe)
    run = [b for b in at.button if b.label.startswith("Run")]
    if not charts and not tables and len(run) == 1:  # a page that computes on demand (How many judgments?)
        run[0].click()
        at.run(timeout=120)
        assert_clean(at)
        charts, tables = at.get("plotly_chart"), list(at.dataframe)
    if not charts and not tables:
        shown = " / ".join(i.value for i in at.info) or "nothing"
        pytest.skip(f"{page} shows no figure or table on the demo before a user action ({shown[:120]})")
    labels = _labels(at)
    assert "Download report (HTML)" in labels, labels
    assert labels.count("Figure (HTML)") == len(charts), labels
    for chart in charts:
        config = json.loads(chart.proto.config)
        assert config["toImageButtonOptions"]["format"] == "png" and config["toImageButtonOptions"]["filename"]
        assert chart.proto.theme == "", "exports.chart draws the figure's own template (theme=None)"
    if tables:
        assert any("CSV" in label for label in labels), labels
    snap = at.session_state["_export_snapshot"]
    kinds = {("fig" if item.fig is not None else "table" if item.table is not None else "text")
             for item in snap["items"]}
    assert ("fig" in kinds) == bool(charts)
    assert "table" in kinds or not tables
    # A Streamlit placeholder colour (#000001...) would be drawn near-black in the HTML download and the report.
    for chart in charts:
        assert not PLACEHOLDER.search(chart.proto.spec), PLACEHOLDER.search(chart.proto.spec).group()
    for item in snap["items"]:
        assert item.fig is None or not PLACEHOLDER.search(item.fig.to_json()), item.title
    for chart in charts:  # readable on a projector: no chart text below MIN_FONT_PX (was 9-10 px on heatmaps)
        small = small_fonts(json.loads(chart.proto.spec))
        assert not small, f"{page}: chart text below {MIN_FONT_PX} px: {small[:5]}"


MIN_FONT_PX = 11


def small_fonts(spec, path: str = "") -> list[str]:
    """Where a figure spec asks for text below MIN_FONT_PX: font sizes (font, textfont, tickfont, ...: one number
    or one per point) and plotly's uniformtext minsize (below which it shrinks bar labels)."""
    found = []
    if isinstance(spec, dict):
        for key, value in spec.items():
            where = f"{path}.{key}"
            if key.endswith("font") and isinstance(value, dict) and "size" in value:
                sizes = value["size"] if isinstance(value["size"], list) else [value["size"]]
                found += [f"{where}.size = {v}" for v in sizes if isinstance(v, (int, float)) and v < MIN_FONT_PX]
            elif key == "uniformtext" and isinstance(value, dict) and value.get("minsize", MIN_FONT_PX) < MIN_FONT_PX:
                found.append(f"{where}.minsize = {value['minsize']}")
            found += small_fonts(value, where)
    elif isinstance(spec, list):
        for k, value in enumerate(spec):
            found += small_fonts(value, f"{path}[{k}]")
    return found


def test_small_fonts_finds_the_9_px_labels():
    import plotly.graph_objects as go

    fig = go.Figure(go.Heatmap(z=[[1]], text=[["1"]], texttemplate="%{text}", textfont={"size": 10}))
    fig.update_layout(uniformtext={"minsize": 9, "mode": "hide"}, font={"size": 12})
    assert small_fonts(json.loads(fig.to_json())) == [".data[0].textfont.size = 10", ".layout.uniformtext.minsize = 9"]


def test_figures_carry_the_metaeval_template_on_screen_and_in_exports():
    import plotly.graph_objects as go

    from metaeval_ui import exports

    exports.install_template()
    exports.install_template()  # idempotent
    fig = go.Figure(go.Heatmap(z=[[1, 2]], y=["a very long metric name.f1"]))
    layout = fig.to_plotly_json()["layout"]["template"]["layout"]
    # theme=None draws exactly this: long tick labels (metric names) must push the margins, not be clipped.
    assert layout["xaxis"]["automargin"] is True and layout["yaxis"]["automargin"] is True
    assert list(layout["colorway"]) == list(exports.COLORWAY)
    # Margins that fit numeric tick labels and an axis title, so automargin rarely needs plotly's second draw.
    assert layout["margin"]["l"] >= 60 and layout["margin"]["b"] >= 60
    assert '"automargin":true' in exports.figure_html(fig, "x").replace(" ", "")
    assert not PLACEHOLDER.search(fig.to_json()), "no Streamlit placeholder colour reaches a download"

