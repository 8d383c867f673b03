"""The browser benchmarks still run (their figures are read in the README, never asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.browser import harness


def test_bench_figures_prints_one_comparable_line_per_figure(playwright_browser):
    done = subprocess.run([sys.executable, str(harness.REPO / "benchmarks" / "bench_figures.py"), "--n", "1"],
                          capture_output=True, text=True, timeout=300, cwd=harness.REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [line["case"] for line in lines] == ["newPlot:delta_curve", "newPlot:pair_scatter",
                                                "newPlot:decile_heatmap"]
    assert all(line["median_ms"] > 0 and line["reference_median_ms"] > 0 and line["ratio"] > 0 for line in lines)


def test_the_deep_link_reference_app_draws_one_chart_cleanly(playwright_browser, tmp_path):
    """bench_ui.py's reference for a link opened first in a fresh browser: Streamlit with one empty chart."""
    reference = harness.start_server(data_dir=None, work_dir=tmp_path,
                                     script=harness.REPO / "benchmarks" / "floor_app.py")
    try:
        context = harness.new_context(playwright_browser)
        page = context.new_page()
        page.goto(reference.url + "/")
        harness.wait_idle(page, timeout=120, settle=0)
        assert page.locator(".js-plotly-plot").count() == 1 and not harness.problems(page)
        context.close()
    finally:
        reference.stop()
