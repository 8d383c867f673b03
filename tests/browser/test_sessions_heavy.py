"""Eight people at once on the heavy real datasets (issue 33): 8 browser contexts on one server, each opening a WMT
test set (WMT23 zh-en, en-de and he-en, WMT22 zh-en) or a pairwise-verdict dataset on a judges page (LLMBar, PandaLM,
JudgeBench), and then a second page, all at the same time. No session may show an error, a traceback, a page that
never finishes, or another dataset than the one its URL asks for (a screenshot of each page goes to
``artifacts/screenshots/sessions-heavy/<session>-<step>.png``). Small resample counts: ~3 min on the 2-core
machine. Each session's finish time (seconds since the first page was asked for) is printed.

Skips when the mirror lacks one of these datasets; on the demo (no mirror) every session opens the demo on its
score pages instead (the judges pages need a pairwise dataset, which the demo has not).
"""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from metaeval_core.data.registry import list_datasets
from tests.browser import harness as h

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMEOUT = 240.0
# (dataset, first page, second page, query). Judges pages name their dataset with `jdataset`; WMT23's language
# pair is `lp`; every resampling page gets a small `*_k`.
MIRROR = [
    ("wmt23", "", "average", {"lp": "zh-en", "ov_k": "200", "avg_k": "100"}),
    ("wmt23", "", "significance", {"lp": "en-de", "ov_k": "200", "sig_k": "200"}),
    ("wmt23", "", "confidence", {"lp": "he-en", "ov_k": "200", "ci_k": "200"}),
    ("wmt22-zhen", "significance", "", {"sig_k": "100", "ov_k": "200"}),
    ("llmbar", "judges", "judges-bias", {"jk": "200"}),
    ("pandalm", "judges", "judges-systems", {"jk": "200"}),
    ("judgebench", "judges-bias", "judges", {"jk": "200"}),
    ("wmt23", "average", "", {"lp": "zh-en", "avg_k": "100", "ov_k": "200"}),  # session 0's pages the other way
]
JUDGES = {"judges": "significance", "judges-bias": "confidence", "judges-systems": "correlations"}
DEMO_QUERY = {"sig_k": "200", "ci_k": "200", "ov_k": "200", "avg_k": "100"}
# The sessions are waited for one after the other, so the time a wait returns is not when that session finished:
# each page keeps the wall-clock time its last script run ended.
_FINISHED = """
(() => {
  const mark = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (app && app.getAttribute('data-test-script-state') === 'notRunning') window.__finished = Date.now();
  };
  const start = () => new MutationObserver(mark).observe(document.documentElement,
    {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
  if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
})();
"""


def specs(server) -> list[tuple[str, str, str, dict]]:
    if server.demo:
        return [("demo", JUDGES.get(first, first), JUDGES.get(second, second), DEMO_QUERY)
                for _, first, second, _ in MIRROR]
    found = {info.id: info for info in list_datasets(data_dir=Path(server.data_dir))}
    missing = sorted({d for d, *_ in MIRROR if d not in found or not found[d].available})
    if missing:
        pytest.skip("the heavy-dataset sessions need " + ", ".join(missing) + " in METAEVAL_DATA_DIR ("
                    + "; ".join(f"{d}: {found[d].reason if d in found else 'not registered'}" for d in missing)
                    + ")")
    return MIRROR


def url(server, dataset: str, path: str, query: dict) -> str:
    judges = path.startswith("judges")
    keys = {"jdataset": dataset} if judges else {"dataset": dataset}
    return f"{server.url}/{path}?{urlencode({**keys, **query})}"


def shown(page, dataset: str, path: str, query: dict) -> list[str]:
    """What the sidebar shows when it is not the dataset (and language pair) the URL asked for."""
    out = []
    label = "Pairwise dataset" if path.startswith("judges") else "Dataset"
    box = h.sidebar_selectbox(page, label)
    if not box.count():
        out.append(f"no {label!r} picker in the sidebar")
    elif f"[{dataset}]" not in (value := h.selectbox_value(box)) and value != dataset:
        out.append(f"asked for {dataset}, the sidebar's {label!r} shows {value!r}")
    if "lp" in query and not path.startswith("judges"):
        pair = h.sidebar_selectbox(page, "Language pair")
        value = h.selectbox_value(pair) if pair.count() else None
        if value is None or query["lp"] not in value:
            out.append(f"asked for language pair {query['lp']}, the sidebar shows {value!r}")
    return out


def test_eight_sessions_on_heavy_datasets_show_no_error(playwright_browser, server):
    plan = specs(server)
    assert len(plan) == 8
    contexts = [h.new_context(playwright_browser) for _ in plan]
    for context in contexts:
        context.add_init_script(_FINISHED)
    pages = [c.new_page() for c in contexts]
    started, epoch = time.monotonic(), time.time()
    failures, times, asked = [], {}, {}
    try:
        for step in (1, 2):  # every session opens its page at once, waits, then its second page at once
            asked[step] = [round(time.monotonic() - started, 1)]
            for page, (dataset, first, second, query) in zip(pages, plan):
                page.goto(url(server, dataset, first if step == 1 else second, query), wait_until="commit")
            asked[step].append(round(time.monotonic() - started, 1))
            deadline = time.monotonic() + TIMEOUT  # the sessions run at once: one deadline for all of them
            for i, (page, (dataset, first, second, query)) in enumerate(zip(pages, plan)):
                path = first if step == 1 else second
                where = f"session {i} ({dataset}{' ' + query['lp'] if 'lp' in query else ''} /{path})"
                try:
                    h.wait_idle(page, timeout=max(1.0, deadline - time.monotonic()))
                except Exception as error:  # noqa: BLE001 - report every session
                    failures.append(f"{where}: did not finish: {str(error)[:200]}")
                    h.screenshot(page, f"sessions-heavy/{i}-{step}-FAILED")
                    continue
                finished = page.evaluate("() => window.__finished || null")
                times[where] = round((finished / 1000 - epoch) if finished else time.monotonic() - started, 1)
                h.screenshot(page, f"sessions-heavy/{i}-{step}")
                failures += [f"{where}: {p}" for p in h.problems(page)]
                failures += [f"{where}: error box: {e.strip()[:300]}" for e in h.error_alerts(page)]
                if not server.demo:
                    failures += [f"{where}: {p}" for p in shown(page, dataset, path, query)]
    finally:
        for context in contexts:
            context.close()
    total = round(time.monotonic() - started, 1)
    print(f"\n8 sessions on the heavy datasets: {total} s; pages asked for in {asked} s, each session's last script "
          "run ended at (s since start):")
    print("\n".join(f"  {seconds:6.1f}  {where}" for where, seconds in times.items()))
    if failures:
        print(f"server log:\n{server.log_tail(60)}")
    assert not failures, "\n".join(failures)
