"""Many people at once: 8 browser contexts on one dashboard server, each on its own dataset and settings.

Checks that no session shows an error, that no session's choices (dataset, metric, level, coefficient, uploads)
leak into another's when the others change theirs, and that the server's memory stays bounded. The RSS figures
are printed and written to artifacts/browser-sessions.json.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

import pytest

from tests.browser import harness as h
from tests.conftest import mirror_dir

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RSS_LIMIT_MB = 2048  # generous: a warm server on the whole mirror holds a few hundred MB
GOOD = h.REPO / "tests" / "data" / "good_uploads"
TIMEOUT = 300.0


@dataclass
class Spec:
    dataset: str | None  # None: an upload (the file below)
    metric: str | None = None
    level: str = "system"
    coef: str = "kendall"
    upload: str | None = None
    change: dict = field(default_factory=dict)  # round 2: {"coef": ..., "level": ..., "dataset": ...}


MIRROR = [
    Spec("summeval", "rouge-2.f1", "input", "pearson", change={"coef": "kendall", "dataset": "realsumm"}),
    Spec("realsumm", "rouge-1.f1", "system", "kendall"),
    Spec("summeval-naacl2022", "ROUGE-L", "global", "spearman", change={"coef": "pearson", "level": "system"}),
    Spec("realsumm-naacl2022", "BERTScore", "system", "pearson"),
    Spec("frank-cnndm", "Rouge 1", "input", "kendall", change={"dataset": "frank-xsum"}),
    Spec("frank-xsum", "Bleu", "system", "spearman"),
    Spec("xsum-hallucination", "R2", "global", "pearson", change={"level": "input"}),
    Spec(None, upload="wide.tsv"),
]
DEMO = [
    Spec("demo", "metric.strong", "input", "pearson", change={"coef": "kendall"}),
    Spec("demo", "metric.good", "system", "kendall"),
    Spec("demo", "metric.fair", "global", "spearman", change={"level": "system", "coef": "pearson"}),
    Spec(None, upload="wide.tsv"),
    Spec("demo", "metric.weak", "system", "pearson", change={"level": "input"}),
    Spec(None, upload="sacrerouge.jsonl"),
    Spec(None, upload="long_with_annotators.csv", change={"dataset": "demo"}),
    Spec("demo", "metric.noise", "input", "spearman"),
]


class Sampler(threading.Thread):
    """Samples the server's RSS every 0.2 s until stopped; keeps the peak."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.peak, self.samples, self._stop_event = server, 0.0, 0, threading.Event()

    def run(self):
        while not self._stop_event.is_set():
            try:
                self.peak = max(self.peak, self.server.rss_mb())
                self.samples += 1
            except Exception:  # noqa: BLE001 - the process may be gone at the very end
                pass
            self._stop_event.wait(0.2)

    def stop(self) -> float:
        self._stop_event.set()
        self.join(5)
        return self.peak


@pytest.fixture(scope="module")
def own_server(tmp_path_factory, playwright_browser):
    """A server of its own, so the memory figures start from a fresh process."""
    srv = h.start_server(data_dir=mirror_dir(), work_dir=tmp_path_factory.mktemp("sessions"))
    yield srv
    srv.stop()


def state(page) -> dict:
    return {
        "dataset": h.selectbox_value(h.sidebar_selectbox(page, "Dataset")),
        "metrics": h.multiselect_values(h.sidebar_widget(page, "stMultiSelect", "Metrics")),
        "level": h.radio_value(page, "Level"),
        "coef": h.radio_value(page, "Coefficient"),
        "query": {k: v for k, v in h.query(page).items() if k in ("dataset", "metric", "level", "coef")},
        "figure": (h.plotly_state(page) or [""])[0][:400],
    }


def dataset_options(page) -> list[str]:
    texts = h.open_listbox(page, h.sidebar_selectbox(page, "Dataset")).all_inner_texts()
    page.keyboard.press("Escape")
    return texts


def click_radio(page, label: str, option: str) -> None:
    page.locator(f'[data-testid="stSidebar"] [role="radiogroup"][aria-label="{label}"] label').filter(
        has_text=option).first.click()


def test_eight_sessions_keep_their_own_views_and_memory_stays_bounded(playwright_browser, own_server):
    server = own_server
    specs = DEMO if server.demo else MIRROR
    n = len(specs)
    assert n >= 8
    figures = {"sessions": n, "mode": "demo" if server.demo else "mirror", "limit_mb": RSS_LIMIT_MB}
    figures["rss_start_mb"] = round(server.rss_mb(), 1)
    sampler = Sampler(server)
    sampler.start()
    contexts = [h.new_context(playwright_browser) for _ in specs]
    pages = [c.new_page() for c in contexts]
    started = time.monotonic()
    try:
        # -- round 1: everybody opens their own view at once (URL), uploads go through the uploader ---------
        for page, spec in zip(pages, specs):
            query = {"dataset": spec.dataset, "metric": spec.metric, "level": spec.level, "coef": spec.coef} \
                if spec.dataset else {}
            page.goto(f"{server.url}/correlations" + (f"?{urlencode(query)}" if query else ""), wait_until="commit")
        for page in pages:
            h.wait_idle(page, timeout=TIMEOUT)
        before = [h.runs(p) for p in pages]
        for page, spec in zip(pages, specs):
            if spec.upload:
                page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
                    str(GOOD / spec.upload))
        for page, spec, since in zip(pages, specs, before):
            if spec.upload:
                h.wait_idle(page, since=since, timeout=TIMEOUT)
        figures["round1_s"] = round(time.monotonic() - started, 1)
        figures["rss_round1_mb"] = round(server.rss_mb(), 1)
        first = []
        for i, (page, spec) in enumerate(zip(pages, specs)):
            assert not h.problems(page), (i, h.problems(page))
            assert not h.error_alerts(page), (i, h.error_alerts(page))
            shown = state(page)
            if spec.dataset:
                # "Title [id]", or the id alone when it leaves no room for a title (widgets._label)
                assert shown["dataset"].endswith(f"[{spec.dataset}]") or shown["dataset"] == spec.dataset, (i, shown)
                assert shown["metrics"] == [spec.metric], (i, shown)
                assert (shown["level"], shown["coef"]) == (spec.level, spec.coef), (i, shown)
                assert f"{spec.coef} correlation, {spec.level} level" in shown["figure"], (i, shown)
            else:
                assert shown["dataset"].startswith("Uploaded"), (i, shown)
            first.append(shown)
        uploads = {s["dataset"] for s, spec in zip(first, specs) if not spec.dataset}
        assert len(uploads) == len([s for s in specs if s.upload]), f"distinct uploads, distinct datasets: {uploads}"

        # -- round 2: some sessions change their view at the same time; the others must not notice ----------
        started2 = time.monotonic()
        before = [h.runs(p) for p in pages]
        expected_changes = {}
        for i, (page, spec) in enumerate(zip(pages, specs)):
            change = spec.change
            if not change:
                continue
            if "dataset" in change:
                h.choose(page, h.sidebar_selectbox(page, "Dataset"), f"[{change['dataset']}]")
                h.wait_idle(page, since=before[i], timeout=TIMEOUT)  # the widgets below are re-created
                before[i] = h.runs(page)
            if "level" in change:
                click_radio(page, "Level", change["level"])
                h.wait_idle(page, since=before[i], timeout=TIMEOUT)
                before[i] = h.runs(page)
            if "coef" in change:
                click_radio(page, "Coefficient", change["coef"])
            expected_changes[i] = change
        for i, page in enumerate(pages):
            if i in expected_changes:
                h.wait_idle(page, since=before[i], timeout=TIMEOUT)
        # the unchanged sessions rerun too (a level click and back), so their server-side state is read again
        before = [h.runs(p) for p in pages]
        for i, (page, spec) in enumerate(zip(pages, specs)):
            if i not in expected_changes:
                other = "global" if first[i]["level"] != "global" else "system"
                click_radio(page, "Level", other)
        for i, page in enumerate(pages):
            if i not in expected_changes:
                h.wait_idle(page, since=before[i], timeout=TIMEOUT)
                before[i] = h.runs(page)
                click_radio(page, "Level", first[i]["level"])
        for i, page in enumerate(pages):
            if i not in expected_changes:
                h.wait_idle(page, since=before[i], timeout=TIMEOUT)
        figures["round2_s"] = round(time.monotonic() - started2, 1)
        figures["rss_round2_mb"] = round(server.rss_mb(), 1)

        failures = []
        for i, (page, spec) in enumerate(zip(pages, specs)):
            failures += [f"session {i}: {p}" for p in h.problems(page) + h.error_alerts(page)]
            shown = state(page)
            change = expected_changes.get(i)
            if change is None:
                for key in ("dataset", "metrics", "level", "coef", "query", "figure"):
                    if shown[key] != first[i][key]:
                        failures.append(f"session {i} ({first[i]['dataset']}): {key} changed from {first[i][key]!r} "
                                        f"to {shown[key]!r} although only other sessions acted")
                continue
            want = {"dataset": f"[{change['dataset']}]" if "dataset" in change else first[i]["dataset"],
                    "level": change.get("level", first[i]["level"]), "coef": change.get("coef", first[i]["coef"])}
            if want["dataset"] not in shown["dataset"]:
                failures.append(f"session {i}: dataset {shown['dataset']!r}, expected {want['dataset']!r}")
            if (shown["level"], shown["coef"]) != (want["level"], want["coef"]):
                failures.append(f"session {i}: level/coef {shown['level']}/{shown['coef']}, expected {want}")
            if f"{want['coef']} correlation, {want['level']} level" not in shown["figure"]:
                failures.append(f"session {i}: figure {shown['figure'][:120]!r} does not show {want}")
            if "dataset" not in change and shown["metrics"] != first[i]["metrics"]:
                failures.append(f"session {i}: metrics {shown['metrics']} changed from {first[i]['metrics']}")
        # an upload is visible only in the session that made it
        for i, page in enumerate(pages):
            own = {first[i]["dataset"]} if not specs[i].dataset else set()
            foreign = [o for o in dataset_options(page) if o.startswith("Uploaded") and o not in own]
            if foreign:
                failures.append(f"session {i} lists another session's upload: {foreign}")
        assert not failures, "\n".join(failures)
    finally:
        for context in contexts:
            context.close()
        figures["rss_peak_mb"] = round(sampler.stop(), 1)
        figures["rss_samples"] = sampler.samples
        time.sleep(5)  # Streamlit drops a session's state once its websocket is gone
        figures["rss_after_close_mb"] = round(server.rss_mb(), 1)
        print("\nmany-sessions figures: " + json.dumps(figures))
        out = h.REPO / "artifacts" / "browser-sessions.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(figures, indent=2) + "\n")
    assert figures["rss_peak_mb"] < RSS_LIMIT_MB, figures
    assert figures["rss_after_close_mb"] < RSS_LIMIT_MB, figures
