"""Provenance records and self-contained HTML reports (no streamlit, no plotly).

:func:`provenance` gathers what is needed to reproduce a result: the dataset (id, version, fingerprint,
title, citation, licence), every parameter, the seeds among them, package versions, the time and the git
commit. :func:`render_html_report` assembles a standalone HTML page from sections and that record.

Figures are produced by the caller (the dashboard) as HTML fragments, e.g. plotly's
``fig.to_html(full_html=False, include_plotlyjs=False)``, and plotly.js is passed once as ``plotlyjs``
(the script text) so the page works offline with the library inlined a single time. Everything that can
come from a user (title, headings, table cells, provenance values, names) is HTML-escaped; only fragments
given as ``str``/:class:`Html` are trusted markup (the caller's own).
"""

from __future__ import annotations

import datetime as _dt
import functools
import html
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from metaeval_core.data.dataset import Dataset

__all__ = ["Html", "Text", "PACKAGES", "git_commit", "package_versions", "provenance", "render_html_report"]

PACKAGES: tuple[str, ...] = ("numpy", "scipy", "pandas", "streamlit", "plotly")
_REPO = Path(__file__).resolve().parents[1]  # a git checkout, when the package runs from one


class Html(str):
    """A trusted HTML fragment (the caller's own markup, e.g. a plotly div): inserted as is."""


class Text(str):
    """Plain text: escaped, blank lines separate paragraphs."""


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed versions (None when a package is missing), plus Python's."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


@functools.lru_cache(maxsize=4)
def git_commit(repo: str | None = None) -> str | None:
    """The checked-out commit of ``repo`` (default: this package's repository), or None."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo or _REPO, capture_output=True, text=True,
                              timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    if done.returncode != 0 or not commit:
        return None
    try:
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo or _REPO,
                               capture_output=True, text=True, timeout=5, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        dirty = ""
    return commit + ("+modified" if dirty else "")


def _plain(value: Any) -> Any:
    """A JSON-safe copy (:func:`metaeval_core.wording.plain`)."""
    from metaeval_core.wording import plain

    return plain(value)


def _dataset_facts(dataset: Any) -> dict:
    """The identity and shape of a score dataset, or of a pairwise-verdict dataset (``PairwiseData``)."""
    common = {"id": dataset.id, "version": dataset.version}
    if not isinstance(dataset, Dataset):  # pairwise verdicts (metaeval_core.judges.PairwiseData)
        return {**common, "title": dataset.title, "citation": dataset.citation, "licence": dataset.licence,
                "items": dataset.n_items, "pair sets": list(dataset.pair_sets), "humans": list(dataset.humans),
                "gold": list(dataset.golds), "judges": list(dataset.judges), "notes": list(dataset.notes)}
    return {**common, "fingerprint": dataset.fingerprint(), "title": dataset.title, "citation": dataset.citation,
            "licence": dataset.licence, "systems": dataset.n_systems, "inputs": dataset.n_inputs,
            "judged inputs": dataset.n_judged, "human measures": list(dataset.human_measures),
            "metric measures": list(dataset.metric_measures), "notes": list(dataset.notes)}


def provenance(dataset: Dataset, params: Mapping[str, Any], *, url: str | None = None, page: str | None = None,
               now: _dt.datetime | None = None) -> dict:
    """Everything needed to reproduce a view: dataset identity, parameters, seeds, versions, time, commit.

    Parameters
    ----------
    dataset : Dataset
    params : mapping
        Every parameter of the view (names -> values); those whose name contains ``seed`` are also listed
        under ``seeds``.
    url : str, optional
        The shareable address of the view (with its query parameters).
    page : str, optional
        The dashboard page.
    """
    when = (now or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc)
    parameters = _plain(dict(params))
    return {
        "generated": when.isoformat(timespec="seconds"),
        "page": page,
        "url": url,
        "dataset": _dataset_facts(dataset),
        "parameters": parameters,
        "seeds": {k: v for k, v in parameters.items() if "seed" in k.lower()},
        "packages": package_versions(),
        "git_commit": git_commit(),
    }


# -- rendering -------------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:1100px;
padding:0 1rem;color:#1f2328;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de;
padding-bottom:.2rem}table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:right}th{background:#f6f8fa}
td:first-child,th:first-child{text-align:left}.meta{color:#59636e;font-size:.85rem}
dl.prov{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;font-size:.85rem}
dl.prov dt{font-weight:600}dl.prov dd{margin:0;word-break:break-all}pre{white-space:pre-wrap;font-size:.8rem}
"""


def _text(value: Any) -> str:
    paragraphs = [p for p in str(value).split("\n\n") if p.strip()]
    return "".join(f"<p>{html.escape(p).replace(chr(10), '<br>')}</p>" for p in paragraphs)


def _content(item: Any) -> str:
    if item is None:
        return ""
    if isinstance(item, Text):
        return _text(item)
    if isinstance(item, str):  # Html or a plain str: trusted markup
        return str(item)
    if hasattr(item, "to_html") and hasattr(item, "columns"):  # a pandas DataFrame
        frame = item
        index = not _default_index(frame)
        return frame.to_html(escape=True, index=index, na_rep="", border=0, classes="table",
                             float_format=_float)
    if isinstance(item, (list, tuple)):
        return "".join(_content(part) for part in item)
    return _text(item)


def _float(value: float) -> str:
    return f"{value:.6g}"


def _default_index(frame) -> bool:
    index = frame.index
    try:
        return index.name is None and list(index) == list(range(len(index)))
    except TypeError:
        return False


def _value(value: Any) -> str:
    if value is None:
        return "<em>n/a</em>"
    if isinstance(value, Mapping):
        if not value:
            return "<em>none</em>"
        return "; ".join(f"{html.escape(str(k))} = {html.escape(_scalar(v))}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return html.escape(", ".join(_scalar(v) for v in value)) or "<em>none</em>"
    return html.escape(_scalar(value))


def _scalar(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return "" if value is None else str(value)


def _link(url: str) -> str:
    safe = html.escape(url, quote=True)
    if url.startswith(("http://", "https://", "?", "/")):
        return f'<a href="{safe}">{safe}</a>'
    return safe


def _provenance_html(prov: Mapping[str, Any]) -> str:
    rows: list[tuple[str, str]] = []
    if prov.get("url"):
        rows.append(("View (shareable URL)", _link(str(prov["url"]))))
    for key in ("page", "generated", "git_commit"):
        if key in prov:
            rows.append((key.replace("_", " "), _value(prov[key])))
    dataset = prov.get("dataset") or {}
    for key, value in dataset.items():
        if key == "citation" and value:
            rows.append(("dataset citation", f"<pre>{html.escape(str(value))}</pre>"))
        else:
            rows.append((f"dataset {key}", _value(value)))
    for key, value in (prov.get("parameters") or {}).items():
        rows.append((f"parameter {key}", _value(value)))
    rows.append(("seeds", _value(prov.get("seeds") or {})))
    rows.append(("packages", _value(prov.get("packages") or {})))
    known = {"url", "page", "generated", "git_commit", "dataset", "parameters", "seeds", "packages"}
    for key, value in prov.items():
        if key not in known:
            rows.append((str(key), _value(value)))
    body = "".join(f"<dt>{html.escape(k)}</dt><dd>{v}</dd>" for k, v in rows)
    record = json.dumps(_plain(prov), indent=1, sort_keys=False)
    # JSON inside <script>: '<', '>' and '&' as \u escapes, so no value can close the element.
    record = record.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (f'<dl class="prov">{body}</dl>'
            f'<script type="application/json" id="provenance">{record}</script>')


def render_html_report(title: str, sections: Sequence[tuple[str, Any]], provenance: Mapping[str, Any], *,
                       plotlyjs: str | None = None, subtitle: str | None = None) -> str:
    """A self-contained HTML page: the title, each section, then the provenance record.

    Parameters
    ----------
    title : str
        Escaped.
    sections : sequence of (heading, content)
        ``heading`` is escaped. ``content`` is a trusted HTML fragment (``str`` or :class:`Html`, e.g. a
        plotly div made with ``include_plotlyjs=False``), a pandas DataFrame (rendered with
        ``to_html(escape=True)``), :class:`Text` (escaped), or a list of those.
    provenance : mapping
        From :func:`provenance`; every value is escaped.
    plotlyjs : str, optional
        The plotly.js source, inlined once in the head (pass it when some fragment is a plotly figure;
        it is left out when no fragment calls Plotly).
    subtitle : str, optional
        A line under the title (escaped).
    """
    parts = []
    for heading, content in sections:
        parts.append(f"<section><h2>{html.escape(str(heading))}</h2>{_content(content)}</section>")
    body = "".join(parts)
    script = ""
    if plotlyjs and "Plotly." in body:
        script = f'<script type="text/javascript">{plotlyjs}</script>'
    generated = provenance.get("generated", "")
    sub = f'<p class="meta">{html.escape(subtitle)}</p>' if subtitle else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{html.escape(str(title))}</title><style>{_CSS}</style>{script}</head><body>"
        f"<h1>{html.escape(str(title))}</h1>{sub}"
        f'<p class="meta">Generated {html.escape(str(generated))} by metaeval.</p>'
        f"{body}<section><h2>Provenance</h2>{_provenance_html(provenance)}</section>"
        "</body></html>\n"
    )
