"""Drive the real dashboard in headless Chromium (Playwright): start the server, wait for Streamlit, read the page.

Plain functions without pytest, shared by the browser tests (tests/browser/) and the UI latency benchmark
(benchmarks/bench_ui.py). The browser is Debian's ``chromium`` (never ``playwright install``: the download is
blocked); its path is ``$METAEVAL_CHROMIUM`` or the first of :data:`CHROMIUM_CANDIDATES` that exists.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium",
                       "/usr/bin/google-chrome")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
VIEWPORT = {"width": 1400, "height": 1000}

# Streamlit marks the app root with the script state ('initial' | 'running' | 'notRunning' | ...). This script
# counts the transitions, so a caller can tell "a rerun started and finished since I acted" from "nothing yet".
_OBSERVER = """
(() => {
  if (window.__st) return;
  window.__st = {runs: 0, done: 0, state: null};
  const look = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    const s = app ? app.getAttribute('data-test-script-state') : null;
    if (s !== window.__st.state) {
      if (s === 'running') window.__st.runs += 1;
      if (s === 'notRunning' && window.__st.state === 'running') window.__st.done += 1;
      window.__st.state = s;
    }
  };
  const start = () => {
    new MutationObserver(look).observe(document.documentElement,
      {subtree: true, childList: true, attributes: true, attributeFilter: ['data-test-script-state']});
    look();
  };
  if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
})();
"""


class BrowserUnavailable(RuntimeError):
    """Playwright or Chromium is missing: browser tests skip with this reason."""


def chromium_path() -> str:
    """The Chromium executable, or BrowserUnavailable with the reason."""
    configured = os.environ.get("METAEVAL_CHROMIUM")
    candidates = [configured] if configured else [*CHROMIUM_CANDIDATES, shutil.which("chromium") or ""]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise BrowserUnavailable(
        "Chromium not found (looked for " + ", ".join(c for c in candidates if c) + "); install Debian's package "
        "with `apt-get install -y chromium` (.ci/run does) or set METAEVAL_CHROMIUM")


def require_playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise BrowserUnavailable(f"the playwright package is not installed ({error}); "
                                 "`pip install -r requirements-dev.txt`") from error
    return sync_playwright


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """A running dashboard (``python -m metaeval_ui.serve``, i.e. ``streamlit run app.py``) on localhost."""

    process: subprocess.Popen
    port: int
    log_path: Path
    data_dir: str | None
    store_dir: Path
    demo: bool
    _log: object = field(repr=False, default=None)

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def rss_mb(self) -> float:
        """Resident memory of the server process (and any children), in MB."""
        return rss_mb(self.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)  # its own process group (start_new_session)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()


def rss_mb(pid: int) -> float:
    try:
        import psutil

        proc = psutil.Process(pid)
        total = proc.memory_info().rss
        for child in proc.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass
        return total / 2**20
    except ImportError:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")


def start_server(*, data_dir: str | os.PathLike | None, work_dir: Path | None = None,
                 timeout: float = 90.0, extra_args: list[str] | None = None, script: Path | None = None) -> Server:
    """Start the dashboard on a free port; ``data_dir=None`` runs on the demo (an empty data directory).

    ``extra_args``: more ``streamlit run`` options (e.g. ``["--runner.postScriptGC", "false"]``).
    ``script``: another Streamlit script, run with a plain ``streamlit run`` in the repository (its settings),
    e.g. the benchmark's reference app. Waits for ``/_stcore/health``; raises RuntimeError with the server log
    when it does not come up.
    """
    work = Path(work_dir or tempfile.mkdtemp(prefix="metaeval-browser-"))
    work.mkdir(parents=True, exist_ok=True)
    store = work / "store"
    store.mkdir(exist_ok=True)
    env = dict(os.environ)
    if data_dir is None:  # the demo: an empty data directory, so no registered dataset is available
        empty = work / "empty-data"
        empty.mkdir(exist_ok=True)
        env["METAEVAL_DATA_DIR"] = str(empty)
    else:
        env["METAEVAL_DATA_DIR"] = str(data_dir)
    env["METAEVAL_STORE_DIR"] = str(store)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("METAEVAL_DEBUG", None)
    port = free_port()
    log_path = work / "server.log"
    log = open(log_path, "wb")
    # The README's `bash run.sh app` runs `python -m metaeval_ui.serve` (streamlit run app.py after a warm-up).
    launcher = ["metaeval_ui.serve"] if script is None else ["streamlit", "run", str(script)]
    cmd = [sys.executable, "-m", *launcher, "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none", "--server.runOnSave", "false", *(extra_args or [])]
    process = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    server = Server(process, port, log_path, None if data_dir is None else str(data_dir), store, data_dir is None,
                    log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            server.stop()
            raise RuntimeError(f"the dashboard exited with code {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return server
        except OSError:
            pass
        time.sleep(0.25)
    server.stop()
    raise RuntimeError(f"the dashboard did not answer /_stcore/health within {timeout:.0f} s:\n{server.log_tail()}")


def launch_browser(playwright):
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)


def new_context(browser):
    """A browser context (its own cookies and cache) that tracks Streamlit's script runs in every page."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(_OBSERVER)
    context.set_default_timeout(60_000)
    return context


def new_page(browser_or_context):
    """A new tab (one Streamlit session); a Browser gets a fresh context of its own."""
    if hasattr(browser_or_context, "new_context"):
        return new_context(browser_or_context).new_page()
    return browser_or_context.new_page()


# -- reading Streamlit's state -------------------------------------------------------------------------------


def runs(page) -> dict:
    """{'runs', 'done', 'state'}: how many script runs started / finished since the page loaded."""
    return page.evaluate("() => window.__st ? {...window.__st} : {runs: 0, done: 0, state: null}")


def wait_idle(page, *, since: dict | None = None, timeout: float = 120.0, start_grace: float = 3.0,
              settle: float = 0.3) -> None:
    """Wait until Streamlit has finished running and drawn the page.

    ``since``: a :func:`runs` snapshot taken before an action; then first wait (up to ``start_grace`` s) for a
    rerun to start, so an action whose rerun has not begun yet is not mistaken for "done".
    Finally: no status widget, no skeleton, the main block has content, every plotly chart drawn.
    """
    deadline = time.monotonic() + timeout
    if since is not None:
        grace = min(deadline, time.monotonic() + start_grace)
        while time.monotonic() < grace and runs(page)["runs"] <= since["runs"]:
            page.wait_for_timeout(50)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=max(1.0, deadline - time.monotonic()) * 1000)
    ok = "() => { const r = window.__st; return r && r.state === 'notRunning' && r.done >= r.runs; }"
    page.wait_for_function(ok, timeout=max(1.0, deadline - time.monotonic()) * 1000)
    drawn = """() => {
      if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
      if (document.querySelector('[data-testid="stMain"] [data-testid="stSkeleton"]')) return false;
      const main = document.querySelector('[data-testid="stMainBlockContainer"]');
      if (!main || !main.querySelector('[data-testid="stElementContainer"]')) return false;
      const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]').length;
      return document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot').length >= charts;
    }"""
    page.wait_for_function(drawn, timeout=max(1.0, deadline - time.monotonic()) * 1000, polling=100)
    if settle:
        page.wait_for_timeout(settle * 1000)


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def problems(page) -> list[str]:
    """Exceptions and tracebacks shown on the page (empty when clean)."""
    found = []
    for text in page.locator('[data-testid="stException"]').all_inner_texts():
        found.append("exception: " + text[:500])
    body = page.locator("body").inner_text()
    if "Traceback (most recent call last)" in body or "Traceback" in main_text(page):
        found.append("traceback text on the page")
    return found


def error_alerts(page) -> list[str]:
    """Texts of st.error boxes (the app's readable error messages)."""
    return page.locator('[data-testid="stAlertContentError"]').all_inner_texts()


def nav_links(page) -> list[tuple[str, str]]:
    """(title, href) of every page in the sidebar navigation (expanding 'View more' first)."""
    more = page.locator('[data-testid="stSidebarNavViewButton"]')
    if more.count() and "more" in more.inner_text().lower():
        more.click()
        page.wait_for_timeout(200)
    out = []
    links = page.locator('[data-testid="stSidebarNavLink"]')
    for i in range(links.count()):
        link = links.nth(i)
        title = link.locator('[data-testid="stMarkdownContainer"]').inner_text().strip()
        out.append((title, link.get_attribute("href")))
    return out


def url_path(href: str) -> str:
    from urllib.parse import urlparse

    return urlparse(href).path.strip("/") or "overview"


def plotly_state(page) -> list[str]:
    """A fingerprint of every drawn plotly figure: its title and trace data (changes when the figure does)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => {
      const layout = el.layout || {}; const title = layout.title && (layout.title.text || layout.title);
      const data = (el.data || []).map(t => JSON.stringify([t.name, t.x, t.y, t.z, t.text]));
      return JSON.stringify([title || '', data]).slice(0, 200000);
    })""")


def metrics(page) -> dict[str, str]:
    """st.metric label -> value on the page."""
    out = {}
    for el in page.locator('[data-testid="stMetric"]').all():
        label = el.locator('[data-testid="stMetricLabel"]').inner_text().strip()
        out[label] = el.locator('[data-testid="stMetricValue"]').inner_text().strip()
    return out


def sidebar_selectbox(page, label: str):
    return page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=label)).first


def selectbox_value(box) -> str:
    """The shown value of a selectbox (a combobox input in Streamlit >= 1.5x; baseweb's select before)."""
    combo = box.locator('input[role="combobox"]')
    if combo.count():
        return combo.first.input_value().strip()
    return box.locator('[data-baseweb="select"]').inner_text().strip()


def open_listbox(page, box, *, attempts: int = 4):
    """Open a selectbox's list of options and return the option locator (retrying: a click that lands while
    the widget is re-rendered, or on an input that already has focus, can be lost)."""
    options = page.locator('[role="listbox"] [role="option"]')
    for attempt in range(attempts):
        box.scroll_into_view_if_needed()
        opener = box.locator('button[aria-haspopup="listbox"]')
        combo = box.locator('input[role="combobox"], [data-baseweb="select"]').first
        if attempt % 2 == 0 and opener.count():
            opener.first.click()
        elif attempt == 1:
            combo.click()
        else:
            combo.focus()
            page.keyboard.press("ArrowDown")
        try:
            options.first.wait_for(state="visible", timeout=4_000)
            return options
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            page.keyboard.press("Escape")
            page.wait_for_timeout(200)
    raise AssertionError(f"the selectbox {box.inner_text()[:60]!r} did not open after {attempts} attempts")


def find_option(page, box, option_text: str):
    """Open a selectbox and return its (visible) option containing ``option_text``; long lists are virtualised,
    so the text is typed into the combobox to filter them first when the option is not rendered."""
    option = open_listbox(page, box).filter(has_text=option_text).first
    # A virtualised list can keep an off-screen option in the DOM without showing it: filter unless visible.
    if not (option.count() and option.is_visible()):
        return _type_filter(page, box, option_text)
    return option


def _type_filter(page, box, option_text: str):
    """Type ``option_text`` into the open selectbox's search field; the first visible matching option."""
    box.locator('input[role="combobox"]').first.fill(option_text)
    option = page.locator('[role="listbox"] [role="option"]').filter(has_text=option_text).first
    option.wait_for(state="visible", timeout=10_000)
    return option


def filter_options(page, box, option_text: str):
    """Open a selectbox and type ``option_text`` into its search field, as a user looking for an option in a
    long list does; returns the (visible) matching option. Pressing Enter then picks the first match."""
    open_listbox(page, box)
    return _type_filter(page, box, option_text)


def choose(page, box, option_text: str) -> None:
    """Open a selectbox and click the option whose text contains ``option_text``."""
    find_option(page, box, option_text).click()


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def sidebar_widget(page, testid: str, label: str):
    return page.locator(f'[data-testid="stSidebar"] [data-testid="{testid}"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=label)).first


def radio_value(page, label: str) -> str | None:
    """The checked option of the sidebar radio group labelled ``label``."""
    return page.evaluate("""(label) => {
      for (const group of document.querySelectorAll('[data-testid="stSidebar"] [role="radiogroup"]')) {
        if (group.getAttribute('aria-label') !== label) continue;
        const checked = group.querySelector('input[type="radio"]:checked');
        return checked ? checked.closest('label').innerText.trim() : null;
      }
      return null;
    }""", label)


def multiselect_values(box) -> list[str]:
    return [t.get_attribute("title") for t in box.locator('[data-tag] span[title]').all()]


def query(page) -> dict[str, list[str]]:
    from urllib.parse import parse_qs, urlparse

    return parse_qs(urlparse(page.url).query, keep_blank_values=True)
