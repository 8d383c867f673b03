"""UI latency of the dashboard in a real browser (headless Chromium via Playwright), on SummEval.

Run:  .venv/bin/python benchmarks/bench_ui.py [--n 20] [--pages overview,pairs] [--skip-cold]
      (needs requirements-dev.txt and Debian's chromium; never `playwright install`)

Starts its own server (METAEVAL_DATA_DIR, else data/cache/; the synthetic demo when the mirror is absent,
said in every line as ``data``), then measures

* ``cold:<page>`` — the first render of every page of the navigation on a fresh server: the first page by opening
  its URL (JS bundles, dataset loading included), the others by clicking the sidebar link, each until Streamlit has
  finished and every chart is drawn (n = 1);
* ``cold-url:<page>`` — a shared link to a chart page (/pairs, /confidence) opened first in a fresh browser context
  (no cached bundles: plotly.js is fetched and evaluated too) before the navigation has visited it (n = 1), with
  ``reference_ms``: the same for ``benchmarks/floor_app.py``, Streamlit with one empty plotly chart, in the same
  run (``over_reference_ms`` is what the page itself adds);
* ``warm:<page>`` — the same navigation a second time (the caches are filled);
* ``pairs-slider-u``, ``pairs-slider-l`` — the band slider of /pairs moved by one step with the keyboard, until
  the plotly figures have changed (``median_ms``) and until the script run has finished (``idle_median_ms``);
* ``judges-set-selectbox`` — the Judges leaderboard's pair set changed on LLMBar (26 judges: agreement, chance,
  permutation tests, clusters; the first visit of each set computes, the later ones are warm);
* ``pairs-metric-selectbox``, ``corr-human-selectbox``, ``corr-dataset-selectbox`` — a selectbox changed (the
  option's name typed into its search field, then Enter: the clock starts at the key press) until the figures
  have changed.

Prints one JSON line per case: case, median_ms, p90_ms, n, and details; targets: median < 300 ms for the
controls, < 3,000 ms for a cold first render (``meets_target``). A first line (``case: "_meta"``) gives the data,
the machine's load average and the server's pid, so a slow run on a busy machine can be recognised.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser import harness as h  # noqa: E402
from metaeval_core.data.registry import DEFAULT_DATA_DIR  # noqa: E402

CONTROL_TARGET_MS = 300.0
COLD_TARGET_MS = 3000.0

# A cheap fingerprint of every drawn figure (titles, shapes, annotations, the traces' data); compared before and
# after an action, polled every animation frame.
_FINGERPRINT = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => {
  const l = el.layout || {};
  return JSON.stringify([l.title, l.shapes, l.annotations,
    (el.data || []).map(t => [t.name, t.x, t.y, t.z, t.text, t.marker && t.marker.color])]);
}).join('|')"""
_CHANGED = "(before) => (" + _FINGERPRINT + ")() !== before"


def mirror() -> str | None:
    configured = os.environ.get("METAEVAL_DATA_DIR")
    candidate = Path(configured) if configured else DEFAULT_DATA_DIR
    return str(candidate) if (candidate / "MANIFEST.json").is_file() else None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def emit(case: str, values_ms: list[float], data: str, target: float, **extra) -> dict:
    line = {"case": case, "median_ms": round(statistics.median(values_ms), 1) if values_ms else None,
            "p90_ms": round(percentile(values_ms, 0.9), 1) if values_ms else None, "n": len(values_ms),
            "target_ms": target, "meets_target": bool(values_ms) and statistics.median(values_ms) < target,
            "data": data, **extra}
    print(json.dumps(line), flush=True)
    return line


def fingerprint(page) -> str:
    return page.evaluate(_FINGERPRINT)


_CHANGED_OR_DONE = ("([before, runs]) => { const r = window.__st || {}; "
                    "if ((" + _FINGERPRINT + ")() !== before) return 'changed'; "
                    "return (r.runs > runs && r.state === 'notRunning' && r.done >= r.runs) ? 'done' : false; }")


def timed(page, action, *, timeout: float = 120.0) -> tuple[float | None, float]:
    """(ms until the figures changed or None if they did not, ms until the script run finished) after
    ``action``."""
    before_fp, before_runs = fingerprint(page), h.runs(page)
    start = time.perf_counter()
    action()
    outcome = page.wait_for_function(_CHANGED_OR_DONE, arg=[before_fp, before_runs["runs"]], polling="raf",
                                     timeout=timeout * 1000).json_value()
    chart = (time.perf_counter() - start) * 1000 if outcome == "changed" else None
    h.wait_idle(page, since=before_runs, timeout=timeout, settle=0)
    idle = (time.perf_counter() - start) * 1000
    if chart is None and fingerprint(page) != before_fp:  # drawn after the run's end was seen
        chart = idle
    return chart, idle


def open_cold(browser, url: str) -> tuple[float, list[str]]:
    """(ms, problems): ``url`` opened in a new browser context (empty cache: every script bundle is fetched and
    evaluated again) until Streamlit has finished and every chart is drawn."""
    context = h.new_context(browser)
    try:
        page = context.new_page()
        start = time.perf_counter()
        page.goto(url)
        h.wait_idle(page, timeout=300, settle=0)
        return (time.perf_counter() - start) * 1000, h.problems(page)
    finally:
        context.close()


def reference_deep_link(browser) -> float:
    """ms to open ``benchmarks/floor_app.py`` (one empty plotly chart) first in a fresh browser context: what a
    deep link to any Streamlit page with a chart costs on this machine before the page's own content."""
    reference = h.start_server(data_dir=None, script=REPO / "benchmarks" / "floor_app.py")
    try:
        ms, problems = open_cold(browser, reference.url + "/")
        if problems:
            raise RuntimeError(f"the reference app shows {problems}")
        return ms
    finally:
        reference.stop()


def bench_navigation(page, server, data: str, pages: list[str] | None, rounds=("cold", "warm"), *,
                     browser=None, deep_links: tuple[str, ...] = ()) -> list[dict]:
    out = []
    start = time.perf_counter()
    page.goto(server.url + "/")
    h.wait_idle(page, timeout=300, settle=0)
    first_ms = (time.perf_counter() - start) * 1000
    # A shared link to a chart page opened first, in a fresh browser, before anyone visited that page; and,
    # as the reference in the same run, the same for a Streamlit app holding nothing but one empty chart.
    if browser is not None and deep_links:
        reference_ms = reference_deep_link(browser)
        for link in deep_links:
            ms, problems = open_cold(browser, server.url + link)
            out.append(emit(f"cold-url:{h.url_path(link)}", [ms], data, COLD_TARGET_MS, url=link,
                            how="open the URL in a new browser context (bundles incl. plotly.js, page caches cold)",
                            reference_ms=round(reference_ms), over_reference_ms=round(ms - reference_ms),
                            **({"problems": problems} if problems else {})))
    links = h.nav_links(page)
    for label in rounds:
        for k, (title, href) in enumerate(links):
            path = h.url_path(href)
            if pages and path not in pages:
                continue
            if label == "cold" and k == 0:
                out.append(emit(f"cold:{path}", [first_ms], data, COLD_TARGET_MS, how="open the URL (bundles, "
                                "dataset loading included)"))
                continue
            link = page.locator(f'[data-testid="stSidebarNavLink"][href="{href}"]')
            if not link.is_visible():
                h.nav_links(page)
            before = h.runs(page)
            start = time.perf_counter()
            link.click()
            h.wait_idle(page, since=before, timeout=300, settle=0)
            ms = (time.perf_counter() - start) * 1000
            problems = h.problems(page)
            out.append(emit(f"{label}:{path}", [ms], data, COLD_TARGET_MS, how="click in the navigation",
                            **({"problems": problems} if problems else {})))
    return out


def bench_pairs_slider(page, server, data: str, n: int) -> list[dict]:
    page.goto(server.url + "/pairs")
    h.wait_idle(page, timeout=300)
    handles = page.locator('[data-testid="stSlider"] input[type="range"]')
    if handles.count() != 2:
        return [emit("pairs-slider", [], data, CONTROL_TARGET_MS, error="no two-thumb slider on /pairs")]
    out = []
    for which, name in ((1, "pairs-slider-u"), (0, "pairs-slider-l")):
        charts, idles = [], []
        for i in range(n):
            # u: ten steps up then back down (the way back revisits cached bands); l: up from 0 then back
            key = "ArrowRight" if i < max(1, n // 2) else "ArrowLeft"
            handles.nth(which).focus()
            chart, idle = timed(page, lambda: page.keyboard.press(key))
            if chart is not None:
                charts.append(chart)
            idles.append(idle)
        out.append(emit(name, charts, data, CONTROL_TARGET_MS, unchanged=n - len(charts),
                        idle_median_ms=round(statistics.median(idles), 1),
                        idle_p90_ms=round(percentile(idles, 0.9), 1), note="first half new bands, second half cached"))
    return out


def bench_selectbox(page, server, data: str, n: int, *, path: str, label: str, options: list[str], case: str,
                    sidebar: bool = True) -> dict:
    """One selectbox case; a harness failure (e.g. an option the virtualised list never rendered) becomes an
    ``error`` line instead of ending the whole benchmark."""
    try:
        return _bench_selectbox(page, server, data, n, path=path, label=label, options=options, case=case,
                                sidebar=sidebar)
    except Exception as error:  # noqa: BLE001 - report and go on with the other cases
        return emit(case, [], data, CONTROL_TARGET_MS, error=f"{type(error).__name__}: {str(error)[:200]}")


def _bench_selectbox(page, server, data: str, n: int, *, path: str, label: str, options: list[str], case: str,
                     sidebar: bool = True) -> dict:
    page.goto(server.url + path)
    h.wait_idle(page, timeout=300)
    box = h.sidebar_selectbox(page, label) if sidebar else page.locator('[data-testid="stSelectbox"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=label)).first
    charts, idles, unchanged = [], [], []
    current = h.selectbox_value(box)
    cycle = [o for o in options if o not in current] + [o for o in options if o in current]
    for i in range(n):
        target = cycle[i % len(cycle)]
        # Typed into the search field, then Enter (the clock starts at the key press): a click on an option of
        # the virtualised list is at the mercy of the list scrolling under the pointer.
        h.filter_options(page, box, target)
        chart, idle = timed(page, lambda: page.keyboard.press("Enter"))
        if target not in h.selectbox_value(box):
            chart = None
        if chart is None:
            unchanged.append(f"{target} (shown: {h.selectbox_value(box)})")
        else:
            charts.append(chart)
        idles.append(idle)
    return emit(case, charts, data, CONTROL_TARGET_MS, unchanged=unchanged,
                idle_median_ms=round(statistics.median(idles), 1),
                idle_p90_ms=round(percentile(idles, 0.9), 1), options=cycle)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20, help="interactions per control")
    parser.add_argument("--pages", help="comma-separated url paths for the navigation cases (default: all)")
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--only", help="comma-separated control cases: slider,pairs-metric,human,dataset,judges")
    parser.add_argument("--streamlit-option", action="append", default=[], metavar="NAME=VALUE",
                        help="extra `streamlit run --NAME VALUE` for an experiment, e.g. runner.postScriptGC=false")
    args = parser.parse_args(argv)
    data_dir = mirror()
    data = "summeval" if data_dir else "demo (mirror absent: METAEVAL_DATA_DIR / data/cache)"
    sync_playwright = h.require_playwright()
    extra = [part for option in args.streamlit_option for part in ("--" + option.split("=", 1)[0],
                                                                   option.split("=", 1)[1])]
    server = h.start_server(data_dir=data_dir, extra_args=extra)
    print(json.dumps({"case": "_meta", "data": data, "server_pid": server.pid, "loadavg": os.getloadavg(),
                      "streamlit_options": args.streamlit_option,
                      "cpus": os.cpu_count(), "chromium": h.chromium_path()}), flush=True)
    only = set(args.only.split(",")) if args.only else {"slider", "pairs-metric", "human", "dataset", "judges"}
    try:
        with sync_playwright() as p:
            browser = h.launch_browser(p)
            context = h.new_context(browser)
            page = context.new_page()
            if not args.skip_cold:
                deep = ("/pairs?dataset=summeval" if data_dir else "/pairs", "/confidence")
                bench_navigation(page, server, data, args.pages.split(",") if args.pages else None,
                                 browser=browser, deep_links=deep)
            if data_dir:
                if "slider" in only:
                    bench_pairs_slider(page, server, data, args.n)
                if "pairs-metric" in only:
                    bench_selectbox(page, server, data, args.n, path="/pairs?dataset=summeval", label="Metric",
                                    options=["rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.recall",
                                             "qa-eval.f1"], case="pairs-metric-selectbox")
                if "judges" in only:  # LLM judges leaderboard: LLMBar's 26 judges, one pair set after another
                    bench_selectbox(page, server, data, args.n, path="/judges?jdataset=llmbar", label="Pair set",
                                    options=["Natural (100)", "Neighbor (134)", "GPTInst (92)", "GPTOut (47)",
                                             "Manual (46)"], case="judges-set-selectbox")
                if "human" in only:
                    bench_selectbox(page, server, data, args.n, path="/correlations?dataset=summeval",
                                    label="Human dimension", options=["expert.relevance", "expert.coherence",
                                                                      "expert.consistency", "expert.fluency",
                                                                      "turker.relevance"],
                                    case="corr-human-selectbox")
                if "dataset" in only:
                    bench_selectbox(page, server, data, args.n, path="/correlations?dataset=summeval",
                                    label="Dataset", options=["[summeval]", "[realsumm]"],
                                    case="corr-dataset-selectbox")
            else:
                if "slider" in only:
                    bench_pairs_slider(page, server, data, args.n)
                if "pairs-metric" in only:
                    bench_selectbox(page, server, data, args.n, path="/pairs", label="Metric",
                                    options=["metric.strong", "metric.good", "metric.fair"],
                                    case="pairs-metric-selectbox")
            context.close()
            browser.close()
    finally:
        print(json.dumps({"case": "_meta_end", "server_rss_mb": round(server.rss_mb(), 1),
                          "loadavg": os.getloadavg()}), flush=True)
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
