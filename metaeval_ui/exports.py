"""Exports on every page: CSV tables, figures (PNG from the modebar, standalone HTML) and a one-click report.

Use in a page::

    from metaeval_ui import exports
    exports.chart(fig, key="forest", name="intervals_summeval")      # instead of st.plotly_chart(...)
    exports.table_download(frame, "intervals_summeval")               # CSV download button (+ in the report)
    exports.collect("Per-system means", table=means)                  # a shown table, report only

* :func:`chart` draws the figure with a camera button saving a PNG or an SVG (the sidebar's "Figure downloads";
  ``toImageButtonOptions`` at a slide's width and the figure's height, rendered by plotly.js in the browser, so
  no kaleido is needed; no plotly logo), offers a standalone HTML download (plotly.js inlined, works offline; generated
  only when clicked) and registers the figure for the report.
* :func:`table_download` offers a CSV download (``on_click="ignore"``: no rerun) and registers the table.
* :func:`deferred_download` offers a file built only when clicked (no rerun, not in the report): for
  large files such as a whole dataset.
* :func:`collect` registers anything else (a table, a figure, a caption) for the report.
* :func:`report_button` (called by ``widgets.finish()``) offers "Download report (HTML)": everything the
  page registered in this run, the shareable URL of the view and the provenance (dataset id/version/
  citation/licence, every parameter, seeds, package versions, git commit, time). The report is built
  only when the button is clicked.

Registrations are per page run: ``widgets.sidebar()`` calls :func:`begin`; items are keyed, so a fragment
rerun replaces its own items instead of adding duplicates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from metaeval_core.data.dataset import Dataset
from metaeval_core.report import Html, Text, provenance, render_html_report

from metaeval_ui import data, state

_COLLECTOR = "_export_collector"
_SNAPSHOT = "_export_snapshot"  # the last report's inputs (for tests and debugging)
_FILE_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
TEMPLATE = "metaeval"


# The colours the chart element shows for theme=None. Streamlit's Python-side plotly template holds
# placeholder colours (#000001, #000011, ...) that only its frontend swaps for real ones, so a template built
# on it drew near-black lines in the HTML downloads and the report. These are the frontend's swaps for
# theme=None, written out: the screen, the downloads and the report now agree.
COLORWAY = ("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880", "#FF97FF",
            "#FECB52")
_SEQUENTIAL = ("#0d0887", "#46039f", "#7201a8", "#9c179e", "#bd3786", "#d8576b", "#ed7953", "#fb9f3a", "#fdca26",
               "#f0f921")
_DIVERGING = ("#8e0152", "#c51b7d", "#de77ae", "#f1b6da", "#fde0ef", "#e6f5d0", "#b8e186", "#7fbc41", "#4d9221",
              "#276419")


def _scale(colours: Sequence[str]) -> list[list]:
    return [[k / (len(colours) - 1), c] for k, c in enumerate(colours)]


def install_template() -> None:
    """Make every figure built from now on carry the ``metaeval`` plotly template: explicit colours (those
    Streamlit's chart element shows for ``theme=None``) and axes that grow their margins to fit long tick
    labels (metric names), in the app's font. Charts are drawn with ``theme=None`` (see :func:`chart`), so
    this template is the whole look, on screen and in the HTML exports alike."""
    import plotly.graph_objects as go
    import plotly.io as pio

    if pio.templates.default == TEMPLATE:
        return
    sequential, diverging = _scale(_SEQUENTIAL), _scale(_DIVERGING)
    template = go.layout.Template(
        layout=dict(
            colorway=list(COLORWAY),
            colorscale=dict(sequential=sequential, sequentialminus=sequential, diverging=diverging),
            coloraxis=dict(colorscale=sequential),
            font=dict(family='"Source Sans", "Source Sans Pro", sans-serif'),  # the app's font
            xaxis=dict(automargin=True), yaxis=dict(automargin=True),
            # Room for numeric tick labels and an axis title. Automargin only grows a margin that is too
            # small, and growing one costs plotly a second full draw (a chart of Realistic pairs: 40-50 ms
            # instead of 20-27 ms per render, benchmarks/bench_figures.py), so the default fits the common case.
            margin=dict(l=60, r=24, t=60, b=60)),
        data=dict(heatmap=[go.Heatmap(colorscale=sequential)], contour=[go.Contour(colorscale=sequential)],
                  histogram2d=[go.Histogram2d(colorscale=sequential)]))
    pio.templates[TEMPLATE] = template
    pio.templates.default = TEMPLATE


install_template()


@dataclass
class Item:
    """One thing shown on the page, for the report."""

    title: str
    fig: Any = None  # a plotly Figure
    table: pd.DataFrame | None = None
    text: str | None = None


@dataclass
class _Collector:
    dataset: Dataset | None = None
    items: dict[str, Item] = field(default_factory=dict)


def file_name(*parts: object, suffix: str = "") -> str:
    """A safe file name from parts (``:`` and ``/`` in dataset ids become ``-``)."""
    stem = "_".join(_FILE_SAFE.sub("-", str(p)).strip("-") for p in parts if str(p))
    return (stem or "export")[:120] + suffix


def _collector() -> _Collector:
    found = st.session_state.get(_COLLECTOR)
    if not isinstance(found, _Collector):
        found = _Collector()
        st.session_state[_COLLECTOR] = found
    return found


def begin(dataset: Dataset | None = None) -> None:
    """Start a page run: forget the previous run's items (called by ``widgets.sidebar()``)."""
    st.session_state[_COLLECTOR] = _Collector(dataset=dataset)


def set_dataset(dataset: Dataset) -> None:
    _collector().dataset = dataset


def collect(title: str, *, fig: Any = None, table: pd.DataFrame | None = None, text: str | None = None,
            key: str | None = None) -> None:
    """Register a figure, table and/or text under ``title`` for this page's report."""
    _collector().items[key or title] = Item(str(title), fig, table, text)


def items() -> list[Item]:
    return list(_collector().items.values())


# -- figures ------------------------------------------------------------------------------------------------


IMAGE_FORMATS = ("png", "svg")
FORMAT_KEY = "w:figure_format"  # a session preference, not part of the view (not in the URL)
SLIDE_WIDTH = 1280  # px: a 16:9 slide's width; PNGs are drawn at scale 2 (2560 px wide), SVGs are vectors


def image_format() -> str:
    """The camera button's format in this session: 'png' (default) or 'svg' (sidebar: "Figure downloads")."""
    try:
        chosen = st.session_state.get(FORMAT_KEY, "png")
    except Exception:  # noqa: BLE001 - outside a Streamlit run
        chosen = "png"
    return chosen if chosen in IMAGE_FORMATS else "png"


def figure_height(fig: Any, default: int = 500) -> int:
    try:
        height = fig.layout.height
    except AttributeError:
        height = None
    return int(height) if height else default


def chart_config(name: str, *, fig: Any = None, image_format: str = "png") -> dict:
    """The plotly config of every chart: the camera button saves a PNG (scale 2) or an SVG at presentation size
    (a slide's width, the figure's own height) with a meaningful file name; no plotly logo. Static export happens
    in the browser (plotly.js), so it needs neither kaleido nor a server-side Chromium."""
    if image_format not in IMAGE_FORMATS:
        raise ValueError(f"image_format must be one of {', '.join(IMAGE_FORMATS)}; got {image_format!r}")
    options = {"format": image_format, "filename": file_name(name), "scale": 2 if image_format == "png" else 1,
               "width": SLIDE_WIDTH, "height": figure_height(fig) if fig is not None else None}
    return {"toImageButtonOptions": options, "displaylogo": False}


def format_picker(container: Any = None) -> str:
    """The sidebar's "Figure downloads" choice (PNG or SVG) for every camera button of the session."""
    box = container or st.sidebar
    return box.segmented_control(
        "Figure downloads (camera button)", IMAGE_FORMATS, key=FORMAT_KEY, default="png",
        format_func=str.upper, selection_mode="single",
        help=f"PNG: a picture at {2 * SLIDE_WIDTH} px wide. SVG: vector graphics that stay sharp at any size on a "
             "slide. Both at a 16:9 slide's width and the figure's own height.") or "png"


def figure_title(fig: Any, default: str = "") -> str:
    try:
        text = fig.layout.title.text
    except AttributeError:
        text = None
    return str(text) if text else default


# Two buttons above the figure of a standalone HTML download: PNG and SVG at presentation size, drawn by plotly.js
# in the browser (offline). ``{plot_id}`` is filled in by plotly.
_EXPORT_BUTTONS = """
(function () {
  var gd = document.getElementById('{plot_id}');
  var bar = document.createElement('div');
  bar.style.cssText = 'font-family: sans-serif; margin: 6px 0;';
  ['png', 'svg'].forEach(function (format) {
    var button = document.createElement('button');
    button.textContent = 'Download ' + format.toUpperCase();
    button.style.marginRight = '8px';
    button.onclick = function () {
      Plotly.downloadImage(gd, {format: format, filename: %(name)s, width: %(width)d, height: %(height)d,
                                scale: format === 'png' ? 2 : 1});
    };
    bar.appendChild(button);
  });
  gd.parentNode.insertBefore(bar, gd);
})();
"""


def figure_html(fig: Any, name: str) -> str:
    """A standalone HTML page of the figure, plotly.js inlined (opens offline), with PNG and SVG buttons."""
    import json

    script = _EXPORT_BUTTONS % {"name": json.dumps(file_name(name)), "width": SLIDE_WIDTH,
                                "height": figure_height(fig)}
    return fig.to_html(include_plotlyjs=True, full_html=True, config=chart_config(name, fig=fig),
                       post_script=script)


def chart(fig: Any, *, key: str, name: str, title: str | None = None, collect_it: bool = True,
          html_download: bool = True, container: Any = None, **kwargs: Any):
    """``st.plotly_chart`` with the export config, an HTML download and registration for the report.

    ``key`` is the chart's widget key; ``name`` the download file stem (e.g. ``forest_summeval_system``);
    ``title`` the report heading (default: the figure's title, else ``name``). Extra keyword arguments go
    to ``st.plotly_chart`` (``width`` defaults to "stretch", ``theme`` to None: the figure's own template).
    """
    box = container or st
    kwargs.setdefault("width", "stretch")
    # The figure keeps its own (metaeval) template, the same look as the HTML download and the report;
    # theme="streamlit" would restyle it again in the browser, which cost ~35 ms per chart on every rerun
    # (benchmarks/bench_ui.py: 327 -> 213 ms median for the three charts of Realistic pairs).
    kwargs.setdefault("theme", None)
    config = {**chart_config(name, fig=fig, image_format=image_format()), **kwargs.pop("config", {})}
    out = box.plotly_chart(fig, key=key, config=config, **kwargs)
    if html_download:
        deferred_download(
            "Figure (HTML)", lambda: figure_html(fig, name), name, key=f"{key}__html", suffix=".html",
            mime="text/html", type="tertiary", container=box,
            help="A standalone interactive page (plotly.js inlined, opens offline) with PNG and SVG buttons. "
                 "The camera button above the figure saves a PNG or an SVG (sidebar: Figure downloads).")
    if collect_it:
        collect(title or figure_title(fig, name), fig=fig, key=f"chart:{key}")
    return out


def _deferred(build: Callable[[], str]) -> Callable[[], bytes]:
    def run() -> bytes:
        return build().encode("utf-8")
    return run


# -- tables -------------------------------------------------------------------------------------------------


def table_download(frame: pd.DataFrame, name: str, *, label: str = "Download CSV", key: str | None = None,
                   title: str | None = None, index: bool = False, collect_it: bool = True, container: Any = None):
    """A CSV download of ``frame`` (no rerun on click) and, unless ``collect_it=False``, a report table."""
    box = container or st
    from metaeval_core.data.upload import safe_csv

    data = safe_csv(frame, index=index).encode("utf-8")  # no cell a spreadsheet runs as a formula
    clicked = box.download_button(label, data, file_name=file_name(name, suffix=".csv"), mime="text/csv",
                                  icon=":material/download:", on_click="ignore", key=key or f"csv:{name}")
    if collect_it:
        collect(title or name, table=frame if not index else frame.reset_index(), key=f"table:{key or name}")
    return clicked


def deferred_download(label: str, build: Callable[[], str], name: str, *, key: str, suffix: str = ".csv",
                      mime: str = "text/csv", help: str | None = None, type: str = "secondary",
                      container: Any = None):
    """A download whose text ``build()`` makes only when clicked (UTF-8; no rerun; never in the report)."""
    box = container or st
    return box.download_button(label, data=_deferred(build), file_name=file_name(name, suffix=suffix), mime=mime,
                               on_click="ignore", key=key, icon=":material/download:", help=help, type=type)


# -- the report -----------------------------------------------------------------------------------------------


def page_name() -> str:
    """The current page's title in the navigation (empty if unknown)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        info = ctx.pages_manager.get_pages().get(ctx.page_script_hash, {})
        return str(info.get("page_name") or "")
    except Exception:  # noqa: BLE001 - only a nicety
        return ""


def view_url() -> str:
    """The shareable URL of the view: the page address (when known) plus every choice as query parameters."""
    try:
        base = st.context.url or ""
    except Exception:  # noqa: BLE001 - older runtimes / tests
        base = ""
    query = urlencode(state.url_params(), doseq=True, safe=":,")
    return f"{base}?{query}" if query else base


def snapshot() -> dict:
    """What the report of this run would hold (page, dataset, items, parameters, URL)."""
    collector = _collector()
    return {"page": page_name(), "dataset": collector.dataset, "items": list(collector.items.values()),
            "params": state.current(), "url": view_url()}


def _plotlyjs() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def report_html(snap: dict) -> str:
    """Render a :func:`snapshot` as a self-contained HTML report (plotly.js inlined once)."""
    dataset: Dataset | None = snap["dataset"]
    sections = []
    has_figure = False
    for number, item in enumerate(snap["items"], start=1):
        parts: list[Any] = []
        if item.fig is not None:
            has_figure = True
            parts.append(Html(item.fig.to_html(full_html=False, include_plotlyjs=False,
                                               div_id=f"figure-{number}",
                                               config=chart_config(item.title, fig=item.fig))))
        if item.table is not None:
            parts.append(item.table)
        if item.text:
            parts.append(Text(item.text))
        sections.append((item.title, parts))
    page = snap.get("page") or "view"
    title = f"metaeval — {page}" + (f" — {dataset.title or dataset.id}" if dataset is not None else "")
    prov = provenance(dataset, snap["params"], url=snap["url"], page=page) if dataset is not None else {
        "page": page, "url": snap["url"], "parameters": snap["params"]}
    return render_html_report(title, sections, prov, plotlyjs=_plotlyjs() if has_figure else None,
                              subtitle=reproduce_note(dataset.id if dataset is not None else ""))


def reproduce_note(dataset_id: str) -> str:
    """What the report's URL reproduces, for the kind of dataset it names: a built-in dataset anywhere; a modified,
    stored or uploaded one only where its data are (the URL holds the choices, not the scores)."""
    if dataset_id.startswith("whatif:"):
        return ("This view is of a MODIFIED dataset (What if…). The URL below reopens it only on the machine that "
                "autosaved it, while its draft exists; anywhere else it opens the original dataset's numbers. To "
                "share it, download the modified dataset (What if…, section 4) and send the file with this report.")
    if dataset_id.startswith("user:"):
        return ("This view is of a dataset in the local store of the machine that made this report: the URL below "
                "reproduces it only there (or where the same stored file is placed).")
    if dataset_id.startswith(data.UPLOAD_PREFIX):
        return ("This view is of an uploaded file: the URL below reproduces it only after the same file (same "
                "content, see the version below) is uploaded again.")
    return "Open the URL below to reproduce this view in the dashboard."


def report_button(container: Any = None) -> None:
    """A "Download report (HTML)" button for what this page registered (nothing when it registered nothing)."""
    snap = snapshot()
    st.session_state[_SNAPSHOT] = snap
    if not snap["items"] or snap["dataset"] is None:
        return
    box = container or st.sidebar
    if any(item.fig is not None for item in snap["items"]):
        format_picker(box)
    dataset = snap["dataset"]
    box.download_button(
        "Download report (HTML)", data=_deferred(lambda: report_html(snap)),
        file_name=file_name("metaeval-report", snap["page"] or "view", dataset.id, suffix=".html"),
        mime="text/html", on_click="ignore", key="export_report", icon=":material/summarize:",
        help=f"One self-contained page with the {len(snap['items'])} figure(s)/table(s) of this view, the "
             "shareable URL and the provenance (dataset version, parameters, seeds, package versions).")
