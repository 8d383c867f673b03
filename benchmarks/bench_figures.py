"""Browser cost of drawing the figures of Realistic pairs, the page redrawn on every band and metric change.

Run:  .venv/bin/python benchmarks/bench_figures.py [--n 15]   (Debian's chromium, Playwright's Python package)

Streamlit keys a chart by a hash of its figure, so every changed figure is drawn from scratch: this times
``Plotly.newPlot`` into a fresh element until the next animation frame, in headless Chromium, with the
plotly.js that ships with the Python plotly package. Each figure is drawn as the dashboard builds it (the
``metaeval`` template) and, as the reference in the same run, with the margins of the template before
2026-11-22 (10 px left, right and bottom): plotly's automargin then had to grow them, which costs a second
full draw. Prints one JSON line per figure: median ms of each variant and their ratio. Data: SummEval from
METAEVAL_DATA_DIR (else data/cache/), the synthetic demo when the mirror is absent (said in ``data``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser import harness as h  # noqa: E402
from metaeval_core.data.registry import DEFAULT_DATA_DIR  # noqa: E402

_DRAW = """async ([spec, n]) => {
  const host = document.getElementById('host'), times = [];
  for (let i = 0; i < n; i++) {
    host.innerHTML = '';
    const gd = document.createElement('div'); host.appendChild(gd);
    const copy = JSON.parse(JSON.stringify(spec)), start = performance.now();
    await Plotly.newPlot(gd, copy.data, copy.layout);
    await new Promise(resolve => requestAnimationFrame(() => resolve()));
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(n / 2)];
}"""


def figures() -> tuple[str, dict]:
    """(data label, {name: {variant: figure spec}}) of the pairs page for its default band (closest 20%)."""
    import plotly.graph_objects as go

    from metaeval_core.data import registry
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_core.stats import pairs
    from metaeval_ui.data import pairs as dp
    from metaeval_ui import exports

    exports.install_template()  # as in the app, where every page imports metaeval_ui.exports
    configured = os.environ.get("METAEVAL_DATA_DIR")
    data_dir = Path(configured) if configured else DEFAULT_DATA_DIR
    if (data_dir / "MANIFEST.json").is_file():
        ds, metric, human, label = (registry.load_dataset("summeval", data_dir=data_dir), "rouge-1.f1",
                                    "expert.relevance", "summeval")
    else:
        ds, metric, human, label = synthetic_dataset(), "metric.strong", "human.quality", "demo (mirror absent)"
    args = (ds, (ds.id, "bench"), metric, human, "judged", "")
    table = dp.pair_table(*args)
    upper = pairs.closest_upper(table["abs_dx"], 0.2)
    curve, scatter = dp.band_figures(*args, 0.0, upper)
    heatmap, _ = dp.decile_figure(*args, 0.0, upper, 5)
    out = {}
    for name, fig in {"delta_curve": curve, "pair_scatter": scatter, "decile_heatmap": heatmap}.items():
        old = go.Figure(fig)
        margin = fig.layout.margin
        # The old template's 10 px wherever the figure itself does not set the margin.
        old.update_layout(margin={side: (getattr(margin, side) if getattr(margin, side) is not None else 10)
                                  for side in ("l", "r", "b")})
        out[name] = {"template": json.loads(fig.to_json()), "old-margins": json.loads(old.to_json())}
    return label, out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=15, help="draws per figure and variant (median reported)")
    args = parser.parse_args(argv)
    import plotly

    label, specs = figures()
    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "figures.html"
        page_file.write_text(f'<html><body><div id="host" style="width:680px"></div>'
                             f'<script src="file://{plotly_js}"></script></body></html>')
        with h.require_playwright()() as p:
            browser = h.launch_browser(p)
            page = browser.new_page(viewport=h.VIEWPORT)
            page.goto(page_file.as_uri())
            page.wait_for_function("() => window.Plotly")
            for name, variants in specs.items():
                page.evaluate(_DRAW, [variants["template"], 3])  # warm the JIT on this figure
                ms = {variant: page.evaluate(_DRAW, [spec, args.n]) for variant, spec in variants.items()}
                print(json.dumps({"case": f"newPlot:{name}", "median_ms": round(ms["template"], 1),
                                  "reference_median_ms": round(ms["old-margins"], 1),
                                  "ratio": round(ms["template"] / ms["old-margins"], 2), "n": args.n,
                                  "data": label, "plotly_js": plotly.__version__}), flush=True)
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
